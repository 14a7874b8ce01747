//! Diagnostic: why smoothed replays of a golden store's episodes fail re-validation. For the
//! first N episodes of DIR, rebuilds the refiner's plan (the default evolve refine settings;
//! VEL, ACC, JERK, DWELL, TOL override them; TRIM=1: the trimmed path, the refiner's fallback;
//! RAW=1: the commanded path as recorded), replays it, and prints the raw and replayed object rise (peak / final, m), the time of the
//! first two-finger contact and of success, and the final gripper opening.
//!
//! `cargo run --release -p coevolve-sim --example refine_probe -- DIR [N]`
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;

use sim::refine::segments::{self, Sample};
use sim::refine::{plans, RefineConfig};
use sim::{Episode, SimConfig};

fn summary(e: &Episode, dt: f64) -> String {
    let k = e.task.goal_object_index().unwrap();
    let z0 = e.initial_state.objects[k].position_m().z;
    let mut peak = 0.0f64;
    let mut touch = None;
    for (i, s) in e.steps.iter().enumerate() {
        peak = peak.max(s.state.objects[k].position_m().z - z0);
        let both = s.state.contacts.finger_touch.iter().all(|f| f[k]);
        if both && touch.is_none() {
            touch = Some(i as f64 * dt);
        }
    }
    let last = e.steps.last().unwrap();
    format!(
        "ok {} steps {:3} peak {:.3} final {:.3} touch {:?} succ {:?} open {:.2} inv {:?}",
        e.outcome.success,
        e.steps.len(),
        peak,
        last.state.objects[k].position_m().z - z0,
        touch,
        e.outcome.success_time_s,
        last.state.gripper_opening,
        e.outcome.invalid
    )
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let n: usize = args.get(1).map_or(6, |s| s.parse().unwrap());
    let scan = sim::store::read_dir(&args[0]).unwrap();
    let robot = Arc::new(robots::load_manipulator("ur5e", None).unwrap());
    let mut config = SimConfig::default();
    config.cameras.clear();
    let config = Arc::new(config);
    let dt = config.control_dt_s();
    let episodes: Vec<Episode> = scan
        .files
        .into_iter()
        .flat_map(|f| f.episodes)
        .take(n)
        .collect();
    let env = |k: &str, d: f64| std::env::var(k).ok().map_or(d, |v| v.parse().unwrap());
    // The loop's refine settings (`skills::evolve::config`), with overrides.
    let defaults = RefineConfig::default();
    let cfg = RefineConfig {
        velocity_fraction: env("VEL", defaults.velocity_fraction),
        acceleration_limit: env("ACC", 20.0),
        jerk_limit: env("JERK", 400.0),
        gripper_dwell_s: env("DWELL", 0.15),
        keyframe_tolerance_m: env("TOL", defaults.keyframe_tolerance_m),
        ..defaults
    };
    let limits = plans::limits(&robot, &cfg);
    let chosen: Vec<Option<Vec<Sample>>> = episodes
        .iter()
        .map(|e| {
            let p = plans::episode_plans(&robot, &cfg, &limits, dt, e);
            Some(if std::env::var("TRIM").is_ok() {
                p.trimmed
            } else if std::env::var("RAW").is_ok() {
                segments::commanded(e)[1..].to_vec()
            } else {
                p.min_jerk
            })
        })
        .collect();
    let replays = plans::replay_plans(&robot, &config, &episodes, &chosen).unwrap();
    let mut kept = 0;
    for (e, replay) in episodes.iter().zip(replays.into_iter().flatten()) {
        kept += usize::from(replay.outcome.success);
        if std::env::var("QUIET").is_err() {
            println!("raw    {}", summary(e, dt));
            println!("replay {}", summary(&replay, dt));
        }
    }
    println!("{kept}/{} replays succeed", episodes.len());
}
