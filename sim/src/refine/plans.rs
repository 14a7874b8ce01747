//! Per-episode plans of the refiner (the re-timed keyframe plan and the trimmed commanded
//! path) and their replay in the simulator.

use std::sync::Arc;

use rayon::prelude::*;
use robots::Manipulator;

use super::segments::{self, Sample};
use super::{smooth, PlanFollower, RefineConfig};
use crate::config::SimConfig;
use crate::episode::{run_episode, Controller, Episode, EpisodeInfo};
use crate::error::Result;

/// The smoothing limits of `cfg` for `robot` (a fraction of each URDF velocity limit).
pub fn limits(robot: &Manipulator, cfg: &RefineConfig) -> smooth::Limits {
    smooth::Limits {
        velocity: robot
            .arm_limits()
            .iter()
            .map(|l| l.velocity * cfg.velocity_fraction)
            .collect(),
        acceleration: cfg.acceleration_limit,
        jerk: cfg.jerk_limit,
    }
}

/// What steps 3–5 make of one episode.
#[derive(Clone, Debug)]
pub struct EpisodePlans {
    /// Keyframes joined by minimum-jerk segments within the limits.
    pub min_jerk: Vec<Sample>,
    /// The pruned, trimmed, denoised commanded path at its own pace (the fallback).
    pub trimmed: Vec<Sample>,
    pub retries_pruned: usize,
    pub idle_steps_trimmed: usize,
    pub keyframes: usize,
}

/// Prunes failed attempts, trims idle time, denoises, picks keyframes and re-times them.
pub fn episode_plans(
    robot: &Manipulator,
    cfg: &RefineConfig,
    limits: &smooth::Limits,
    control_dt_s: f64,
    e: &Episode,
) -> EpisodePlans {
    let object = e.task.goal_object_index();
    let all = segments::commanded(e);
    let speeds = segments::arm_speeds(e);
    // The speeds of the samples pruning keeps: the first, then the tail it keeps.
    let tail = segments::failed_attempts(e, &all, object)
        .last()
        .map_or(1, |c| c.end);
    let speeds: Vec<f64> = speeds[..1]
        .iter()
        .chain(speeds.get(tail.max(1)..).unwrap_or_default())
        .copied()
        .collect();
    let (samples, retries_pruned) = segments::prune_failed_attempts(e, all, object);
    let (samples, idle_steps_trimmed) =
        segments::trim_idle(samples, &speeds, cfg.idle_still_rad, cfg.idle_settled_rad_s);
    let samples = segments::denoise(&samples, cfg.denoise_window);
    let points: Vec<Vec<f64>> = samples
        .iter()
        .map(|s| {
            let tcp = robot.fk(&s.q_rad).translation.vector / cfg.keyframe_tolerance_m;
            tcp.iter()
                .copied()
                .chain(s.q_rad.iter().map(|q| q / cfg.keyframe_tolerance_rad))
                .collect()
        })
        .collect();
    let keys: Vec<Sample> = smooth::keyframes(&samples, &points)
        .into_iter()
        .filter_map(|i| samples.get(i).cloned())
        .collect();
    EpisodePlans {
        min_jerk: smooth::min_jerk_plan(
            &keys,
            limits,
            control_dt_s,
            smooth::Dwell {
                s: cfg.gripper_dwell_s,
                before_change: cfg.dwell_before_change,
            },
        ),
        trimmed: samples.get(1..).unwrap_or_default().to_vec(),
        retries_pruned,
        idle_steps_trimmed,
        keyframes: keys.len(),
    }
}

/// Replays each plan (joint targets, `PlanFollower`) on its raw episode's task and seed; `None`
/// where there is no plan.
pub fn replay_plans(
    robot: &Arc<Manipulator>,
    config: &Arc<SimConfig>,
    raw: &[Episode],
    plans: &[Option<Vec<Sample>>],
) -> Result<Vec<Option<Episode>>> {
    raw.par_iter()
        .zip(plans.par_iter())
        .map(|(e, plan)| -> Result<Option<Episode>> {
            let Some(plan) = plan else { return Ok(None) };
            let plan = plan.clone();
            let factory = move |_: &EpisodeInfo<'_>| -> Box<dyn Controller> {
                Box::new(PlanFollower::new(plan.clone()))
            };
            let record_images = e.steps.first().is_some_and(|s| !s.images.is_empty());
            run_episode(
                robot,
                &e.task,
                config,
                &factory,
                e.index,
                e.seed,
                record_images,
            )
            .map(Some)
        })
        .collect()
}
