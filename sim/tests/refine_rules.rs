//! Each refiner rule on real rollouts, and the acceptance figures on noisy demonstrations.
#![allow(clippy::unwrap_used)] // test helpers

use std::sync::Arc;

use rand_chacha::ChaCha8Rng;
use sim::library::{sample_task, TaskRanges};
use sim::refine::{refine, RefineConfig, Refined};
use sim::scripted::{ScriptNoise, ScriptedPickPlace};
use sim::{
    BatchConfig, Controller, Episode, EpisodeBatch, EpisodeInfo, SimConfig, SkillKind, TaskSpec,
};

struct Setup {
    robot: Arc<robots::Manipulator>,
    config: Arc<SimConfig>,
}

fn setup() -> Setup {
    Setup {
        robot: Arc::new(robots::load_builtin("ur5e").unwrap()),
        config: Arc::new(SimConfig::default()),
    }
}

fn record(s: &Setup, skill: SkillKind, episodes: usize, noisy: bool, seed: u64) -> Vec<Episode> {
    let scale = s.config.action_scale.clone();
    let tasks = move |_: usize, rng: &mut ChaCha8Rng| -> TaskSpec {
        sample_task(skill, &TaskRanges::default(), rng)
    };
    let factory = move |info: &EpisodeInfo<'_>| -> Box<dyn Controller> {
        if noisy {
            Box::new(ScriptedPickPlace::noisy(
                info,
                scale.clone(),
                ScriptNoise::default(),
            ))
        } else {
            Box::new(ScriptedPickPlace::new(info, scale.clone()))
        }
    };
    let cfg = BatchConfig {
        episodes,
        seed,
        threads: Some(2),
        record_images: false,
    };
    EpisodeBatch::run(
        s.robot.clone(),
        s.config.clone(),
        &cfg,
        &tasks,
        &factory,
        &|| {},
    )
    .unwrap()
    .episodes
}

fn run(s: &Setup, raw: &[Episode], held: &[Episode], cfg: &RefineConfig) -> Refined {
    refine(&s.robot, &s.config, cfg, raw, held).unwrap()
}

fn verdicts(r: &Refined) -> Vec<&str> {
    r.report
        .decisions
        .iter()
        .map(|d| d.verdict.as_str())
        .collect()
}

#[test]
fn rule1_failures_and_unhealthy_episodes_are_dropped() {
    let s = setup();
    let mut raw = record(&s, SkillKind::Lift, 3, false, 1);
    assert!(raw.iter().all(|e| e.outcome.success));
    raw[0].outcome.success = false;
    raw[1].outcome.invalid = Some("body 3: non-finite pose".into());
    let r = run(&s, &raw, &[], &RefineConfig::default());
    assert_eq!(verdicts(&r), vec!["not_success", "unhealthy", "kept"]);
    assert_eq!(r.report.dropped_not_success, 1);
    assert_eq!(r.report.dropped_unhealthy, 1);
}

#[test]
fn rule2_much_longer_successes_of_the_same_variant_are_dropped() {
    let s = setup();
    let raw = record(&s, SkillKind::Lift, 1, false, 2);
    // The same variant again, padded with 3× its length of idle steps: same task name.
    let mut slow = raw[0].clone();
    let last = slow.steps.last().unwrap().clone();
    let pad = 3 * slow.steps.len();
    slow.steps.extend(std::iter::repeat_n(last, pad));
    slow.index = 1;
    let r = run(&s, &[raw[0].clone(), slow], &[], &RefineConfig::default());
    assert_eq!(verdicts(&r), vec!["kept", "inefficient"]);
}

#[test]
fn rules3_to_6_prune_retries_trim_idle_smooth_and_revalidate() {
    let s = setup();
    let mut raw = record(&s, SkillKind::Lift, 4, true, 3);
    // A deliberate 10-step hesitation in the middle of every episode: the arm stands still.
    for e in &mut raw {
        let k = e.steps.len() - 5;
        let mut pause = e.steps[k].clone();
        pause.state.qd_rad_s.iter_mut().for_each(|v| *v = 0.0);
        e.steps.splice(k..k, std::iter::repeat_n(pause, 10));
    }
    let clean = record(&s, SkillKind::Lift, 2, false, 3);
    let r = run(&s, &raw, &[], &RefineConfig::default());
    let kept: Vec<_> = r
        .report
        .decisions
        .iter()
        .filter(|d| d.verdict == "kept")
        .collect();
    assert!(!kept.is_empty());
    for d in &r.report.decisions {
        if d.verdict == "kept" {
            assert_eq!(
                d.retries_pruned, 1,
                "the forced failed first grasp is cut: {d:?}"
            );
            // The first paused sample is the move to the held target; the other 9 are idle.
            assert!(d.idle_steps_trimmed >= 9, "hesitations are trimmed: {d:?}");
            assert!(d.keyframes >= 3 && d.keyframes < 30, "{d:?}");
        }
    }
    // Golden episodes are real re-validated rollouts that succeed.
    assert!(r
        .golden
        .iter()
        .all(|e| e.outcome.success && e.outcome.invalid.is_none()));
    // A clean scripted demonstration has no retry to prune.
    let c = run(&s, &clean, &[], &RefineConfig::default());
    assert!(
        c.report.decisions.iter().all(|d| d.retries_pruned == 0),
        "{:?}",
        c.report.decisions
    );
}

#[test]
fn rule6_a_plan_that_no_longer_works_fails_revalidation() {
    let s = setup();
    let mut raw = record(&s, SkillKind::Lift, 1, false, 4);
    // Same recorded motion, but the cube now starts 12 cm away: the replay grasps air.
    raw[0].task.objects[0].pose.xyz_m[1] += 0.12;
    let r = run(&s, &raw, &[], &RefineConfig::default());
    assert_eq!(verdicts(&r), vec!["revalidation_failed"]);
    assert_eq!(r.report.revalidation_rate, 0.0);
}

#[test]
fn rule7_near_duplicates_of_the_held_golden_set_are_dropped() {
    let s = setup();
    let raw = record(&s, SkillKind::Lift, 2, false, 5);
    let first = run(&s, &raw, &[], &RefineConfig::default());
    assert_eq!(first.golden.len(), 2);
    let cfg = RefineConfig {
        min_novelty: 0.005,
        ..RefineConfig::default()
    };
    let again = run(&s, &raw, &first.golden, &cfg);
    assert_eq!(verdicts(&again), vec!["near_duplicate", "near_duplicate"]);
    assert!(again
        .report
        .decisions
        .iter()
        .all(|d| d.novelty.is_some_and(|n| n < 0.005)));
}

#[test]
fn noisy_demonstrations_become_smooth_shorter_and_still_succeed() {
    let s = setup();
    let raw = record(&s, SkillKind::Lift, 8, true, 6);
    let r = run(&s, &raw, &[], &RefineConfig::default());
    let rep = &r.report;
    assert!(
        rep.revalidation_rate >= 0.8,
        "revalidation {}",
        rep.revalidation_rate
    );
    assert!(
        rep.rms_jerk_after * 5.0 <= rep.rms_jerk_before,
        "jerk {} → {}",
        rep.rms_jerk_before,
        rep.rms_jerk_after
    );
    assert!(
        rep.duration_after_s < rep.duration_before_s,
        "duration {} → {}",
        rep.duration_before_s,
        rep.duration_after_s
    );
    assert!(rep.ee_path_after_m < rep.ee_path_before_m);
}

#[test]
fn bad_refine_settings_name_the_field() {
    let s = setup();
    let raw = record(&s, SkillKind::Reach, 1, false, 7);
    for (cfg, field) in [
        (
            RefineConfig {
                jerk_limit: 0.0,
                ..RefineConfig::default()
            },
            "jerk_limit",
        ),
        (
            RefineConfig {
                efficiency_ratio: 0.5,
                ..RefineConfig::default()
            },
            "efficiency_ratio",
        ),
        (
            RefineConfig {
                denoise_window: 0,
                ..RefineConfig::default()
            },
            "denoise_window",
        ),
        (
            RefineConfig {
                min_novelty: f64::NAN,
                ..RefineConfig::default()
            },
            "min_novelty",
        ),
    ] {
        let err = refine(&s.robot, &s.config, &cfg, &raw, &[])
            .unwrap_err()
            .to_string();
        assert!(err.contains(field), "{err}");
    }
}

/// Sets the recorded gripper command of a step, whatever its action mode.
fn set_gripper(action: &mut sim::Action, value: f64) {
    match action {
        sim::Action::JointDelta { gripper, .. }
        | sim::Action::JointPosition { gripper, .. }
        | sim::Action::EeDelta { gripper, .. } => *gripper = value,
    }
}

#[test]
fn a_wandering_gripper_command_is_refined_like_a_clean_one() {
    let s = setup();
    let clean = record(&s, SkillKind::Lift, 3, false, 8);
    // A sampled policy's command wanders while it means "open" or "closed".
    let mut wandering = clean.clone();
    for e in &mut wandering {
        for (i, step) in e.steps.iter_mut().enumerate() {
            let wobble = 0.03 * (i % 3) as f64;
            let g = step.action.gripper();
            set_gripper(
                &mut step.action,
                if g >= 0.5 { 1.0 - wobble } else { wobble },
            );
        }
    }
    let a = run(&s, &clean, &[], &RefineConfig::default());
    let b = run(&s, &wandering, &[], &RefineConfig::default());
    assert_eq!(verdicts(&a), vec!["kept"; 3]);
    assert_eq!(verdicts(&b), verdicts(&a));
    let keyframes = |r: &Refined| {
        r.report
            .decisions
            .iter()
            .map(|d| d.keyframes)
            .collect::<Vec<_>>()
    };
    assert_eq!(keyframes(&b), keyframes(&a), "the wobble adds no keyframes");
    assert_eq!(b.golden, a.golden);
}

#[test]
fn the_trimmed_path_is_replayed_when_the_retimed_plan_fails() {
    let s = setup();
    let raw = record(&s, SkillKind::Lift, 2, false, 9);
    // Limits so low that the re-timed plan cannot finish within the episode.
    let crawling = RefineConfig {
        velocity_fraction: 0.01,
        ..RefineConfig::default()
    };
    let r = run(&s, &raw, &[], &crawling);
    assert_eq!(verdicts(&r), vec!["kept", "kept"]);
    assert!(r.report.decisions.iter().all(|d| d.plan == "trimmed"));
    assert_eq!(r.report.kept_trimmed, 2);
    assert!(r.golden.iter().all(|e| e.outcome.success));
    let off = RefineConfig {
        trimmed_fallback: false,
        ..crawling
    };
    let r = run(&s, &raw, &[], &off);
    assert_eq!(verdicts(&r), vec!["revalidation_failed"; 2]);
    assert_eq!(r.report.kept_trimmed, 0);
}
