//! Diagnostic: the refiner on a run's own successes. Runs the checkpoint of generation GEN on
//! SKILL's held-out variants (sampled at the loop's temperature), refines the successes with
//! the run's refine settings and prints the refiner's figures: RMS jerk and duration before and
//! after, re-validation, how many kept replays are the re-timed plan and how many the trimmed
//! path. DWELL=s: another gripper dwell; BEFORE=1: the dwell at the key before each gripper
//! change (`RefineConfig::dwell_before_change`); OUT=dir: the raw successes and the banked golden
//! episodes written to dir/raw, dir/refined and dir/golden (for `sim`'s `grasp_timing` example).
//!
//! `cargo run --release -p coevolve-skills --example refine_loop -- RUN GEN SKILL`
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;

use skills::evolve::config::EvolveConfig;
use skills::evolve::evaluate::heldout_variants;
use skills::evolve::learner::{run_policy, Runs};
use skills::evolve::run_dir::RunDir;
use skills::tree::SkillTree;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let run = RunDir::new(&args[0]);
    let generation: usize = args[1].parse().unwrap();
    let tree = SkillTree::default_tree().unwrap();
    let skill = tree.get(&args[2]).unwrap();
    tch::set_num_threads(2);
    let mut cfg: EvolveConfig = serde_json::from_str(
        &std::fs::read_to_string(std::path::Path::new(&args[0]).join("config.json")).unwrap(),
    )
    .unwrap();
    if let Some(s) = std::env::var("DWELL").ok().and_then(|v| v.parse().ok()) {
        cfg.refine_config.gripper_dwell_s = s;
    }
    cfg.refine_config.dwell_before_change |= std::env::var("BEFORE").is_ok();
    let policy = policy::checkpoint::load(&run.checkpoint(generation), tch::Device::Cpu).unwrap();
    let robot = Arc::new(robots::load_manipulator("ur5e", None).unwrap());
    let (tasks, seeds) = heldout_variants(skill);
    let runs = run_policy(
        &policy,
        &robot,
        &tasks,
        &seeds,
        Some(cfg.temperature),
        None,
        Runs {
            threads: 2,
            executor: None,
        },
    )
    .unwrap();
    let raw: Vec<sim::Episode> = runs
        .into_iter()
        .map(|r| r.episode)
        .filter(|e| e.outcome.success)
        .collect();
    let sim = Arc::new(policy.meta.sim.clone());
    // The least RMS jerk any motion with each success's start, end and duration can have (one
    // rest-to-rest minimum-jerk move: RMS jerk sqrt(720)·D/T³ per joint), against its own.
    let dt = sim.control_dt_s();
    let (mut bound, mut own) = (0.0, 0.0);
    for e in &raw {
        let t_s = sim::refine::metrics::duration_s(e, dt);
        let q0 = &e.initial_state.q_rad;
        let q1 = &e.steps.last().unwrap().state.q_rad;
        let d2: f64 =
            q0.iter().zip(q1).map(|(a, b)| (b - a).powi(2)).sum::<f64>() / q0.len() as f64;
        bound += 720f64.sqrt() * d2.sqrt() / t_s.powi(3);
        own += sim::refine::metrics::rms_jerk(e, dt);
    }
    let n = raw.len().max(1) as f64;
    println!(
        "raw RMS jerk {:.1}, minimum-jerk bound for their displacement and duration {:.1}",
        own / n,
        bound / n
    );
    let refined = sim::refine::refine(&robot, &sim, &cfg.refine_config, &raw, &[]).unwrap();
    let r = &refined.report;
    // JERKS=n: where the jerk of the first n raw successes and of their replays comes from.
    let shown = std::env::var("JERKS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    let kept = r
        .decisions
        .iter()
        .zip(&raw)
        .filter(|(d, _)| d.verdict == "kept");
    for ((_, e), g) in kept.zip(&refined.golden).take(shown) {
        println!("raw    {}", jerk_profile(e, dt));
        println!("replay {}", jerk_profile(g, dt));
    }
    let dwell_steps = skills::evolve::bank::replay_dwell_steps(&cfg.refine_config, dt);
    let merged = skills::evolve::bank::golden_of(&raw, &refined, dwell_steps);
    if let Ok(out) = std::env::var("OUT") {
        for (name, episodes) in [
            ("raw", &raw),
            ("refined", &refined.golden),
            ("golden", &merged.golden),
        ] {
            let dir = std::path::Path::new(&out).join(name);
            let mut writer = sim::EpisodeWriter::new(dir, "refine_loop", &sim).unwrap();
            writer.write_batch(episodes).unwrap();
        }
    }
    println!(
        "{}: {} raw successes, kept {} ({} trimmed), revalidation {:.2}, raw shorter {}, \
         unrefined {}; RMS jerk {:.1} -> {:.1} ({:.1}x), duration {:.2} -> {:.2} s",
        skill.name(),
        r.episodes_in,
        r.kept,
        r.kept_trimmed,
        r.revalidation_rate,
        merged.raw_was_shorter,
        merged.raw_unrefined,
        r.rms_jerk_before,
        r.rms_jerk_after,
        r.rms_jerk_before / r.rms_jerk_after.max(1e-9),
        r.duration_before_s,
        r.duration_after_s
    );
}

/// Per-step RMS joint jerk (rad/s³) of an episode, with the gripper opening, as a short line:
/// the five largest and where they are.
fn jerk_profile(e: &sim::Episode, dt: f64) -> String {
    let q: Vec<&[f64]> = sim::refine::metrics::joint_samples(e);
    let mut steps: Vec<(f64, usize)> = q
        .windows(4)
        .enumerate()
        .map(|(i, w)| {
            let j2: f64 = (0..w[0].len())
                .map(|k| ((w[3][k] - 3.0 * w[2][k] + 3.0 * w[1][k] - w[0][k]) / dt.powi(3)).powi(2))
                .sum::<f64>()
                / w[0].len() as f64;
            (j2.sqrt(), i + 3)
        })
        .collect();
    let n = steps.len();
    steps.sort_by(|a, b| b.0.total_cmp(&a.0));
    let top: Vec<String> = steps
        .iter()
        .take(5)
        .map(|(j, i)| {
            format!(
                "{j:.0}@{i}(open {:.2})",
                e.steps[i - 1].state.gripper_opening
            )
        })
        .collect();
    format!("{} steps: {}", n + 3, top.join(" "))
}
