//! Hindsight relabelling: a place episode that set the cube down outside its zone becomes the
//! success the simulator records when the zone is where the cube came to rest.
#![allow(clippy::unwrap_used)] // test helpers

use std::sync::Arc;

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use sim::episode::run_episode;
use sim::hindsight::{relabel, with_zone_at, NotRelabelled};
use sim::library::{sample_task, TaskRanges};
use sim::{Controller, EpisodeInfo, ScriptedPickPlace, SimConfig, SkillKind, TaskSpec};

/// A point of the task family's range far from both the cube's start and the zone.
fn elsewhere(task: &TaskSpec, ranges: &TaskRanges) -> [f64; 2] {
    let start = task.objects[0].pose.xyz_m;
    let zone = task.zones[0].center_m;
    let dist = |p: [f64; 2], q: [f64; 3]| ((p[0] - q[0]).powi(2) + (p[1] - q[1]).powi(2)).sqrt();
    let mut best = [0.0; 2];
    let mut best_d = f64::NEG_INFINITY;
    for i in 0..=8 {
        for j in 0..=8 {
            let p = [
                ranges.object_x_m.lo
                    + (ranges.object_x_m.hi - ranges.object_x_m.lo) * i as f64 / 8.0,
                ranges.object_y_m.lo
                    + (ranges.object_y_m.hi - ranges.object_y_m.lo) * j as f64 / 8.0,
            ];
            let d = dist(p, start).min(dist(p, zone));
            if d > best_d {
                best = p;
                best_d = d;
            }
        }
    }
    best
}

#[test]
fn a_missed_placement_relabels_to_the_episode_the_simulator_records() {
    let robot = Arc::new(robots::load_builtin("ur5e").unwrap());
    let config = Arc::new(SimConfig::default());
    let ranges = TaskRanges::default();
    let task = sample_task(SkillKind::Place, &ranges, &mut ChaCha8Rng::seed_from_u64(5));
    // The scripted reference is told the zone is elsewhere: it sets the cube down there, which
    // fails the real task.
    let decoy = with_zone_at(&task, elsewhere(&task, &ranges)).unwrap();
    let scale = config.action_scale.clone();
    let factory = move |info: &EpisodeInfo<'_>| -> Box<dyn Controller> {
        let misled = EpisodeInfo {
            task: &decoy,
            ..*info
        };
        Box::new(ScriptedPickPlace::new(&misled, scale.clone()))
    };
    let dt = config.control_dt_s();
    let missed = run_episode(&robot, &task, &config, &factory, 0, 9, false).unwrap();
    assert!(
        !missed.outcome.success,
        "the cube was put in the wrong place"
    );
    let start_sep = |t: &TaskSpec, start: [f64; 2]| {
        let c = t.zones[0].center_m;
        ((c[0] - start[0]).powi(2) + (c[1] - start[1]).powi(2)).sqrt() >= ranges.min_separation_m
    };
    let relabelled = relabel(&missed, &config.reward, dt, start_sep).unwrap();
    assert!(relabelled.outcome.success);
    assert!(relabelled.steps.len() < missed.steps.len());
    let moved = relabelled.task.zones[0].center_m;
    assert!(
        (moved[0] - task.zones[0].center_m[0]).abs() > 0.05
            || (moved[1] - task.zones[0].center_m[1]).abs() > 0.05,
        "the zone moved"
    );
    // Running the same controller on the relabelled task records the same episode.
    let rerun = run_episode(&robot, &relabelled.task, &config, &factory, 0, 9, false).unwrap();
    assert_eq!(rerun.outcome.success, relabelled.outcome.success);
    assert_eq!(
        rerun.outcome.success_time_s,
        relabelled.outcome.success_time_s
    );
    assert_eq!(
        rerun.outcome.control_steps,
        relabelled.outcome.control_steps
    );
    assert!(
        (rerun.outcome.episode_return - relabelled.outcome.episode_return).abs() < 1e-9,
        "{} vs {}",
        rerun.outcome.episode_return,
        relabelled.outcome.episode_return
    );
    assert_eq!(rerun.steps, relabelled.steps);

    // The family check is honoured, and successes are not relabelled.
    assert_eq!(
        relabel(&missed, &config.reward, dt, |_, _| false).unwrap_err(),
        NotRelabelled::OutOfRange
    );
    assert_eq!(
        relabel(&rerun, &config.reward, dt, start_sep).unwrap_err(),
        NotRelabelled::NotAPlainFailure
    );
}

#[test]
fn lift_episodes_are_not_zone_tasks() {
    let robot = Arc::new(robots::load_builtin("ur5e").unwrap());
    let config = Arc::new(SimConfig::default());
    let task = sample_task(
        SkillKind::Lift,
        &TaskRanges::default(),
        &mut ChaCha8Rng::seed_from_u64(5),
    );
    let scale = config.action_scale.clone();
    let factory = move |info: &EpisodeInfo<'_>| -> Box<dyn Controller> {
        Box::new(ScriptedPickPlace::new(info, scale.clone()))
    };
    let episode = run_episode(&robot, &task, &config, &factory, 0, 1, false).unwrap();
    assert_eq!(
        relabel(&episode, &config.reward, config.control_dt_s(), |_, _| true).unwrap_err(),
        NotRelabelled::NotAZoneTask
    );
}
