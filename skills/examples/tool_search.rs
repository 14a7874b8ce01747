//! The search explorer on a kitchen skill: CEM over tool plans from scratch, per iteration
//! successes and failure kinds (broken, timed out), over a seed.
//!
//! `cargo run --release -p coevolve-skills --example tool_search -- SKILL SEED [ITERATIONS]
//! [POPULATION]` (defaults: 20 iterations of 64). `SKILL` is `scoop` or `flip` (a scoop
//! search, then twice as many iterations, or `FLIP_ITERATIONS`, of flip from its distribution);
//! `run DIR` instead of a seed runs a loop run's saved mean plan on 64 variants;
//! `hand` instead of a seed runs one hand-written tool plan (a scoop) on 64 variants, a check
//! that tool plans can express what the scripted reference does. `TRACE=i` prints the i-th
//! success found, every 10th step: TCP, approach axis, pancake position, up axis, contacts.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout)]

use std::sync::Arc;

use skills::explorer::{cem_search, cem_search_from, run_plans, CemConfig};
use skills::SkillTree;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let skill_name = args.first().map_or("scoop", String::as_str);
    let tree = SkillTree::default_tree().unwrap();
    let skill = tree.get(skill_name).expect("skill in the default tree");
    let robot = Arc::new(robots::load_manipulator("ur5e", None).unwrap());
    let sim = Arc::new(sim::SimConfig::default());
    if args.get(1).map(String::as_str) == Some("hand") {
        // Tip offsets along the base-to-pancake direction: beside the pancake, down to the
        // floor, slide to 14 mm short of the pan's far wall (the second half is anchored 5 cm
        // above the pan's base centre), level and rise.
        let plan = vec![
            -0.06, 0.0, 0.08, 0.06, 2.0, //
            -0.06, 0.0, -0.007, 0.06, 1.0, //
            0.126, 0.0, -0.045, 0.06, 3.6, //
            0.126, 0.0, 0.025, 0.0, 1.5, //
            0.0,
        ];
        let plans = vec![plan; 64];
        let tasks = |_: usize, rng: &mut rand_chacha::ChaCha8Rng| skill.sample_task(rng);
        let runs = run_plans(&plans, &tasks, &robot, &sim, 1.6, 7, Some(2)).unwrap();
        summarise("hand plan", &runs);
        return;
    }
    if args.get(1).map(String::as_str) == Some("run") {
        // A run's saved search distribution: its mean plan on 64 variants of the family.
        let dir = skills::evolve::run_dir::RunDir::new(&args[2]);
        let state = dir.read_state().unwrap();
        let dist = state.skills[skill_name].search.clone().expect("a search");
        let plans = vec![dist.mean.clone(); 64];
        let tasks = |_: usize, rng: &mut rand_chacha::ChaCha8Rng| skill.sample_task(rng);
        let runs = run_plans(&plans, &tasks, &robot, &sim, 1.6, 7, Some(2)).unwrap();
        summarise(&format!("{} mean plan", args[2]), &runs);
        return;
    }
    let seed: u64 = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(0);
    let iterations = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(20);
    let population = args.get(3).and_then(|s| s.parse().ok()).unwrap_or(64);
    let cfg = CemConfig {
        seed,
        iterations,
        population,
        elites: population / 8,
        threads: Some(2),
        ..CemConfig::default()
    };
    let start = std::time::Instant::now();
    let progress = |name: &'static str| {
        move |it: &skills::explorer::CemIteration| {
            println!(
                "{name} seed {seed} iteration {:2}: {:2}/{} successes, {:2} broken, mean score {:8.1}, elite {:8.1} ({:.0} s)",
                it.iteration,
                it.successes,
                it.candidates,
                it.broken,
                it.mean_score,
                it.elite_score,
                start.elapsed().as_secs_f64()
            );
        }
    };
    let scoop = tree.get("scoop").unwrap();
    let mut result = cem_search(scoop, &robot, &sim, &cfg, &mut progress("scoop")).unwrap();
    if skill_name == "flip" {
        // The flip's search starts from the scoop's, as the loop starts a skill's search from
        // its prerequisite's.
        let tasks = |_: usize, rng: &mut rand_chacha::ChaCha8Rng| skill.sample_task(rng);
        let flip_cfg = CemConfig {
            seed: seed + 1,
            iterations: std::env::var("FLIP_ITERATIONS")
                .ok()
                .and_then(|v| v.parse().ok())
                .unwrap_or(2 * iterations),
            ..cfg.clone()
        };
        result = cem_search_from(
            result.distribution,
            &tasks,
            &robot,
            &sim,
            &flip_cfg,
            &mut progress("flip"),
        )
        .unwrap();
    }
    if let Some(e) = std::env::var("TRACE")
        .ok()
        .and_then(|v| v.parse::<usize>().ok())
        .and_then(|i| result.successes.get(i))
    {
        trace(e);
    }
    println!(
        "{skill_name} seed {seed}: {} successes in {} episodes; mean plan {:.3?}",
        result.successes.len(),
        result.episodes_run,
        result.distribution.mean
    );
}

fn summarise(label: &str, runs: &[sim::Episode]) {
    let ok = runs.iter().filter(|e| e.outcome.success).count();
    let broken = runs.iter().filter(|e| e.outcome.failure.is_some()).count();
    println!("{label}: {ok}/{} successes, {broken} broken", runs.len());
}

fn trace(e: &sim::Episode) {
    let disc = e.task.object_index("pancake").unwrap();
    println!("pan {:?}", e.task.objects[0].pose.xyz_m);
    for (k, s) in e.steps.iter().enumerate().step_by(10) {
        let st = &s.state;
        let ee = sim::state::iso_from_pose7(&st.world_from_ee);
        let z = ee.rotation * nalgebra::Vector3::z();
        let o = &st.objects[disc];
        println!(
            "{k:3} ee {:.3?} z {:+.2?} disc {:.3?} up {:+.2} tool {} pan {} force {:5.1}",
            ee.translation.vector.as_slice(),
            z.as_slice(),
            o.position_m().as_slice(),
            o.up_axis().z,
            st.contacts.tool_touch[disc],
            st.contacts.object_touch[disc][0],
            st.contacts.object_peak_force_n[disc],
        );
    }
}
