//! Diagnostic: why smoothed replays of a golden store's episodes fail re-validation. For the
//! first N episodes of DIR, rebuilds the refiner's plan (the default evolve refine settings;
//! VEL, ACC, JERK, DWELL, TOL override them; TRIM=1: the trimmed path, the refiner's fallback;
//! RAW=1: the commanded path as recorded), replays it, and prints the raw and replayed object rise (peak / final, m), the time of the
//! first two-finger contact and of success, and the final gripper opening.
//!
//! `cargo run --release -p coevolve-sim --example refine_probe -- DIR [N]`
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;

use sim::refine::{segments, smooth, PlanFollower};
use sim::{Controller, Episode, EpisodeInfo, SimConfig};

fn summary(e: &Episode, dt: f64) -> String {
    let k = e
        .task
        .goal
        .object
        .as_deref()
        .and_then(|n| e.task.object_index(n))
        .unwrap();
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
    let (vel, acc, jerk, dwell) = (
        env("VEL", 0.8),
        env("ACC", 20.0),
        env("JERK", 400.0),
        env("DWELL", 0.15),
    );
    let limits = smooth::Limits {
        velocity: robot
            .arm_limits()
            .iter()
            .map(|l| l.velocity * vel)
            .collect(),
        acceleration: acc,
        jerk,
    };
    let tol_m = env("TOL", 0.015);
    let mut kept = 0;
    for e in &episodes {
        let object = e
            .task
            .goal
            .object
            .as_deref()
            .and_then(|n| e.task.object_index(n));
        // As the refiner does (no retries to prune in search and policy demonstrations).
        let (samples, _) = segments::prune_failed_attempts(e, segments::commanded(e), object);
        let speeds = segments::arm_speeds(e);
        let speeds = if samples.len() == speeds.len() {
            speeds
        } else {
            Vec::new()
        };
        let (samples, _) = segments::trim_idle(samples, &speeds, 1e-4, 0.05);
        let samples = segments::denoise(&samples, 5);
        let points: Vec<Vec<f64>> = samples
            .iter()
            .map(|s| {
                let tcp = robot.fk(&s.q_rad).translation.vector / tol_m;
                tcp.iter()
                    .copied()
                    .chain(s.q_rad.iter().map(|q| q / 0.2))
                    .collect()
            })
            .collect();
        let keys: Vec<_> = smooth::keyframes(&samples, &points)
            .into_iter()
            .filter_map(|i| samples.get(i).cloned())
            .collect();
        let grippers: Vec<String> = keys.iter().map(|k| format!("{:.2}", k.gripper)).collect();
        let plan = if std::env::var("TRIM").is_ok() {
            samples[1..].to_vec()
        } else if std::env::var("RAW").is_ok() {
            segments::commanded(e)[1..].to_vec()
        } else {
            smooth::min_jerk_plan(&keys, &limits, dt, dwell)
        };
        let factory = move |_: &EpisodeInfo<'_>| -> Box<dyn Controller> {
            Box::new(PlanFollower::new(plan.clone()))
        };
        let replay =
            sim::episode::run_episode(&robot, &e.task, &config, &factory, e.index, e.seed, false)
                .unwrap();
        kept += usize::from(replay.outcome.success);
        if std::env::var("QUIET").is_ok() {
            continue;
        }
        println!("raw    {}", summary(e, dt));
        println!(
            "replay {}  keys {} grippers {grippers:?}",
            summary(&replay, dt),
            keys.len()
        );
    }
    println!("{kept}/{} replays succeed", episodes.len());
}
