//! Episode batches: determinism across thread counts, the scripted reference solving lift and
#![allow(clippy::unwrap_used)] // test helpers
//! place (on the desk arm too), physics health.

use std::sync::Arc;

use rand_chacha::ChaCha8Rng;
use sim::library::{sample_task, TaskRanges};
use sim::{
    BatchConfig, Controller, EpisodeBatch, EpisodeInfo, ScriptedPickPlace, SimConfig, SkillKind,
    TaskSpec,
};

fn run(robot: &str, skill: SkillKind, episodes: usize, threads: usize, seed: u64) -> EpisodeBatch {
    run_families(robot, "easy", skill, episodes, threads, seed)
}

fn run_families(
    robot: &str,
    families: &str,
    skill: SkillKind,
    episodes: usize,
    threads: usize,
    seed: u64,
) -> EpisodeBatch {
    let robot = Arc::new(robots::load_manipulator_for_sim(robot, None).unwrap());
    let config = Arc::new(SimConfig::default());
    let scale = config.action_scale.clone();
    let ranges = TaskRanges::preset(families)
        .unwrap()
        .scaled(sim::library::workspace_scale(&robot));
    let tasks =
        move |_: usize, rng: &mut ChaCha8Rng| -> TaskSpec { sample_task(skill, &ranges, rng) };
    let factory = move |info: &EpisodeInfo<'_>| -> Box<dyn Controller> {
        Box::new(ScriptedPickPlace::new(info, scale.clone()))
    };
    let cfg = BatchConfig {
        episodes,
        seed,
        threads: Some(threads),
        record_images: false,
    };
    EpisodeBatch::run(robot, config, &cfg, &tasks, &factory, &|| {}).unwrap()
}

#[test]
fn batch_hash_is_identical_at_one_and_two_threads() {
    let a = run("ur5e", SkillKind::Lift, 4, 1, 11);
    let b = run("ur5e", SkillKind::Lift, 4, 2, 11);
    assert_eq!(a.stats.trajectory_hash, b.stats.trajectory_hash);
    assert_eq!(a.episodes, b.episodes);
    let c = run("ur5e", SkillKind::Lift, 4, 2, 12);
    assert_ne!(
        a.stats.trajectory_hash, c.stats.trajectory_hash,
        "the seed must matter"
    );
}

#[test]
fn scripted_controller_lifts_on_ur5e() {
    let batch = run("ur5e", SkillKind::Lift, 8, 2, 5);
    assert_eq!(
        batch.stats.invalid,
        0,
        "{:?}",
        batch
            .episodes
            .iter()
            .filter_map(|e| e.outcome.invalid.clone())
            .collect::<Vec<_>>()
    );
    assert!(
        batch.stats.success_rate >= 0.75,
        "lift success {}",
        batch.stats.success_rate
    );
}

#[test]
fn scripted_controller_places_on_ur5e() {
    let batch = run("ur5e", SkillKind::Place, 6, 2, 6);
    assert!(
        batch.stats.success_rate >= 0.66,
        "place success {}",
        batch.stats.success_rate
    );
}

#[test]
fn scripted_controller_pushes_on_ur5e() {
    let batch = run("ur5e", SkillKind::Push, 8, 2, 7);
    // A push slides the cube: it never rises (a carried cube is no push, `reward::Handling`).
    let rise_m: Vec<f64> = batch
        .episodes
        .iter()
        .map(|e| {
            let z0 = e.initial_state.objects[0].position_m().z;
            e.steps
                .iter()
                .map(|s| s.state.objects[0].position_m().z - z0)
                .fold(0.0, f64::max)
        })
        .collect();
    assert!(
        batch.stats.success_rate >= 0.75,
        "push success {}, highest rises {rise_m:.3?} m",
        batch.stats.success_rate
    );
    assert!(rise_m.iter().all(|m| *m < 0.01), "{rise_m:?}");
}

#[test]
fn scripted_controller_lifts_on_panda() {
    let batch = run("panda", SkillKind::Lift, 6, 2, 7);
    assert!(
        batch.stats.success_rate >= 0.66,
        "panda lift success {}",
        batch.stats.success_rate
    );
}

/// The project's own desk arm (5 DOF, a revolute jaw, STL meshes), its task families scaled
/// to its reach.
fn desk5() -> String {
    concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../robots/urdf/desk5/desk5.urdf"
    )
    .to_owned()
}

#[test]
fn scripted_controller_reaches_and_lifts_on_the_desk_arm() {
    for (skill, seed) in [(SkillKind::Reach, 21), (SkillKind::Lift, 22)] {
        let batch = run(&desk5(), skill, 32, 2, seed);
        assert_eq!(batch.stats.invalid, 0, "{skill:?}");
        eprintln!("desk5 {skill:?}: {}", batch.stats.success_rate);
        assert!(
            batch.stats.success_rate >= 0.8,
            "desk5 {skill:?} success {}",
            batch.stats.success_rate
        );
    }
    let one = run(&desk5(), SkillKind::Lift, 4, 1, 23);
    let two = run(&desk5(), SkillKind::Lift, 4, 2, 23);
    assert_eq!(one.stats.trajectory_hash, two.stats.trajectory_hash);
}

/// The wide families are solvable: the scripted reference lifts boxes, cylinders and cubes of
/// 3–7 cm and up to 1 kg, beside a distractor, from a perturbed start.
#[test]
fn scripted_controller_lifts_the_wide_families() {
    for (robot, threshold) in [("ur5e", 0.9), (desk5().as_str(), 0.6)] {
        let batch = run_families(robot, "wide", SkillKind::Lift, 32, 2, 31);
        eprintln!("{robot} wide lift: {}", batch.stats.success_rate);
        assert!(
            batch.stats.success_rate >= threshold,
            "{robot} wide lift success {}",
            batch.stats.success_rate
        );
    }
}

/// A driver that takes the same command at a finer rate (the simulated arm of the bridge) sees
/// exactly the physics of whole control periods when the command does not change mid-period.
#[test]
fn stepping_in_substeps_matches_whole_periods() {
    let robot = Arc::new(robots::load_builtin("ur5e").unwrap());
    let config = Arc::new(SimConfig::default());
    let mut rng = <ChaCha8Rng as rand::SeedableRng>::seed_from_u64(3);
    let task = sample_task(SkillKind::Lift, &TaskRanges::default(), &mut rng);
    let episode = |chunk: usize| {
        let mut stepper = sim::EpisodeStepper::new(&robot, &task, &config, 0, 3, false).unwrap();
        let mut controller = ScriptedPickPlace::new(&stepper.info(), config.action_scale.clone());
        let per_step = stepper.substeps_per_step();
        let mut mid_period_observations = 0;
        while !stepper.is_done() {
            let action = controller.act(stepper.observation());
            // The end-effector delta becomes joint targets once; the rest of the period
            // holds them, as a driver receives joint commands.
            let mut next = action.clone();
            let mut taken = 0;
            while taken < per_step && !stepper.is_done() {
                let before = stepper.steps_taken();
                taken += stepper.step_substeps(next, chunk);
                if stepper.steps_taken() == before {
                    mid_period_observations += 1;
                }
                next = q_action(stepper.q_target_rad(), action.gripper());
            }
        }
        let e = stepper.finish();
        (e, mid_period_observations)
    };
    let (whole, none) = episode(usize::MAX);
    let (chunked, mid) = episode(5);
    assert_eq!(none, 0);
    assert!(mid > 0);
    assert_eq!(whole.steps.len(), chunked.steps.len());
    assert_eq!(whole.outcome, chunked.outcome);
    assert_eq!(
        whole.steps.last().unwrap().state,
        chunked.steps.last().unwrap().state
    );
}

fn q_action(q_rad: &[f64], gripper: f64) -> sim::Action {
    sim::Action::JointPosition {
        q_rad: q_rad.to_vec(),
        gripper,
    }
}
