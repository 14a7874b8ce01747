//! The refiner: turns raw rollouts into short, smooth, re-validated golden demonstrations.
//!
//! For each raw episode, in order, recording which rule kept or dropped it: (1) success and
//! physics health, (2) efficiency against the best success of the same task variant, (3) pruning
//! failed sub-attempts, (4) trimming idle and hesitation, (5) smoothing into min-jerk joint
//! trajectories re-timed within the limits, (6) re-validation in the simulator from the
//! episode's initial state, (7) novelty against the golden set already held.

pub mod metrics;
pub mod plans;
pub mod segments;
pub mod smooth;

use std::collections::BTreeMap;
use std::sync::Arc;

use robots::Manipulator;
use serde::{Deserialize, Serialize};

use crate::config::SimConfig;
use crate::control::Action;
use crate::episode::{Controller, Episode};
use crate::error::{Result, SimError};
use crate::state::Observation;
use plans::replay_plans;
use segments::Sample;

/// Refiner settings; every default is documented.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct RefineConfig {
    /// Drop a success whose steps or EE path exceed this multiple of the best success of the
    /// same task variant. Default 1.5.
    pub efficiency_ratio: f64,
    /// Targets moving less than this between steps (and the same gripper command) are idle. Default 1e-4 rad.
    pub idle_still_rad: f64,
    /// ... once the arm has settled: every joint slower than this (rad/s). Still targets while
    /// the arm is catching up with them are the motion, not idle time. Default 0.05.
    pub idle_settled_rad_s: f64,
    /// Moving-average window (samples) applied to the kept targets before keyframing. Default 5.
    pub denoise_window: usize,
    /// Keyframe tolerance on the TCP path (m). Default 0.015.
    pub keyframe_tolerance_m: f64,
    /// Keyframe tolerance in joint space (rad, Euclidean over joints). Default 0.2.
    pub keyframe_tolerance_rad: f64,
    /// Fraction of each joint's URDF velocity limit the smoothed motion may use. Default 0.8.
    pub velocity_fraction: f64,
    /// Joint acceleration limit (rad/s²). Default 6.0.
    pub acceleration_limit: f64,
    /// Joint jerk limit (rad/s³). Default 60.0.
    pub jerk_limit: f64,
    /// Dwell after each gripper command change (s). Default 0.3.
    pub gripper_dwell_s: f64,
    /// Hold the dwell at the keyframe before each gripper change (where the arm was when the
    /// command was given: the fingers close on a still arm) instead of the one after it (a
    /// commanded target leads the arm, so that key is already a step into the next motion; a
    /// grasp then rises while the fingers close). Default false.
    pub dwell_before_change: bool,
    /// When the re-timed plan no longer succeeds, replay the trimmed, denoised commanded path at
    /// its own pace instead (kept if that succeeds). Default true.
    pub trimmed_fallback: bool,
    /// Drop kept trajectories whose novelty (mean per-point TCP-path distance to the nearest
    /// golden trajectory, m) is below this. Default 0.0 (keep all, only score).
    pub min_novelty: f64,
}

impl Default for RefineConfig {
    fn default() -> Self {
        RefineConfig {
            efficiency_ratio: 1.5,
            idle_still_rad: 1e-4,
            idle_settled_rad_s: 0.05,
            denoise_window: 5,
            keyframe_tolerance_m: 0.015,
            keyframe_tolerance_rad: 0.2,
            velocity_fraction: 0.8,
            acceleration_limit: 6.0,
            jerk_limit: 60.0,
            gripper_dwell_s: 0.3,
            dwell_before_change: false,
            min_novelty: 0.0,
            trimmed_fallback: true,
        }
    }
}

impl RefineConfig {
    /// Checks every field; the error names the bad one.
    pub fn validate(&self) -> Result<()> {
        let positive = [
            ("velocity_fraction", self.velocity_fraction),
            ("acceleration_limit", self.acceleration_limit),
            ("jerk_limit", self.jerk_limit),
            ("keyframe_tolerance_m", self.keyframe_tolerance_m),
            ("keyframe_tolerance_rad", self.keyframe_tolerance_rad),
        ];
        for (field, v) in positive {
            if !(v.is_finite() && v > 0.0) {
                return Err(SimError::config(
                    format!("refine.{field}"),
                    "must be a positive number",
                ));
            }
        }
        let non_negative = [
            ("idle_still_rad", self.idle_still_rad),
            ("idle_settled_rad_s", self.idle_settled_rad_s),
            ("gripper_dwell_s", self.gripper_dwell_s),
            ("min_novelty", self.min_novelty),
        ];
        for (field, v) in non_negative {
            if !(v.is_finite() && v >= 0.0) {
                return Err(SimError::config(format!("refine.{field}"), "must be >= 0"));
            }
        }
        if !(self.efficiency_ratio.is_finite() && self.efficiency_ratio >= 1.0) {
            return Err(SimError::config("refine.efficiency_ratio", "must be >= 1"));
        }
        if self.denoise_window == 0 {
            return Err(SimError::config(
                "refine.denoise_window",
                "must be at least 1",
            ));
        }
        Ok(())
    }
}

/// What happened to one raw episode (`Refined::report.decisions` has one per raw episode, in
/// the order given).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Decision {
    /// The episode's own `index` (its place in the batch or store it came from), not its
    /// position in the refiner's input.
    pub source_index: usize,
    pub task: String,
    /// `kept`, or the rule that dropped it: `not_success`, `unhealthy`, `inefficient`,
    /// `revalidation_failed`, `near_duplicate`.
    pub verdict: String,
    pub retries_pruned: usize,
    pub idle_steps_trimmed: usize,
    pub keyframes: usize,
    pub novelty: Option<f64>,
    /// What a kept episode replays: `min_jerk` (keyframes re-timed within the limits) or
    /// `trimmed` (the commanded path without idle time and failed attempts, denoised, at its
    /// own pace: the fallback when the re-timed replay no longer succeeds).
    #[serde(default)]
    pub plan: String,
}

/// Mean figures over a set of episodes.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Figures {
    pub duration_s: f64,
    pub ee_path_m: f64,
    pub rms_jerk: f64,
    pub peak_acc: f64,
}

/// The JSON report of `coevolve refine`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RefineReport {
    pub episodes_in: usize,
    pub dropped_not_success: usize,
    pub dropped_unhealthy: usize,
    pub dropped_inefficient: usize,
    pub dropped_revalidation_failed: usize,
    pub dropped_near_duplicate: usize,
    pub retries_pruned: usize,
    pub idle_steps_trimmed: usize,
    pub kept: usize,
    /// Kept episodes that replay the trimmed path (the re-timed one failed re-validation).
    #[serde(default)]
    pub kept_trimmed: usize,
    /// Re-validated successes ÷ smoothed trajectories replayed.
    pub revalidation_rate: f64,
    /// Means over the raw episodes that reached smoothing vs over the golden episodes.
    pub duration_before_s: f64,
    pub duration_after_s: f64,
    pub ee_path_before_m: f64,
    pub ee_path_after_m: f64,
    pub rms_jerk_before: f64,
    pub rms_jerk_after: f64,
    pub peak_acc_before: f64,
    pub peak_acc_after: f64,
    pub decisions: Vec<Decision>,
}

/// Replays a plan of joint targets, then holds the last one.
#[derive(Debug)]
pub struct PlanFollower {
    plan: Vec<Sample>,
    next: usize,
}

impl PlanFollower {
    pub fn new(plan: Vec<Sample>) -> Self {
        PlanFollower { plan, next: 0 }
    }
}

impl Controller for PlanFollower {
    fn act(&mut self, obs: &Observation) -> Action {
        let i = self.next.min(self.plan.len().saturating_sub(1));
        self.next += 1;
        match self.plan.get(i) {
            Some(s) => Action::JointPosition {
                q_rad: s.q_rad.clone(),
                gripper: s.gripper,
            },
            None => Action::JointPosition {
                q_rad: obs.q_target_rad.clone(),
                gripper: obs.gripper_opening,
            },
        }
    }
}

fn mean(v: impl Iterator<Item = f64>) -> f64 {
    let (s, n) = v.fold((0.0, 0usize), |(s, n), x| (s + x, n + 1));
    if n == 0 {
        0.0
    } else {
        s / n as f64
    }
}

fn figures(episodes: &[&Episode], dt: f64) -> Figures {
    Figures {
        duration_s: mean(episodes.iter().map(|e| metrics::duration_s(e, dt))),
        ee_path_m: mean(episodes.iter().map(|e| metrics::path_length_m(e))),
        rms_jerk: mean(episodes.iter().map(|e| metrics::rms_jerk(e, dt))),
        peak_acc: mean(episodes.iter().map(|e| metrics::peak_acceleration(e, dt))),
    }
}

/// Output of [`refine`].
#[derive(Debug)]
pub struct Refined {
    pub golden: Vec<Episode>,
    pub report: RefineReport,
}

/// Refines `raw` (all recorded with `robot` under `config`); `held` is the golden set already
/// held (for novelty). Golden episodes are the re-validated simulator rollouts of the smoothed
/// plans, recorded exactly like raw ones.
pub fn refine(
    robot: &Arc<Manipulator>,
    config: &Arc<SimConfig>,
    cfg: &RefineConfig,
    raw: &[Episode],
    held: &[Episode],
) -> Result<Refined> {
    cfg.validate()?;
    if raw
        .iter()
        .any(|e| e.robot_model_hash != robot.model.model_hash)
    {
        return Err(SimError::config(
            "robot",
            "episodes were recorded with a different robot model (model hash differs)",
        ));
    }
    let dt = config.control_dt_s();
    let mut decisions: Vec<Decision> = raw
        .iter()
        .map(|e| Decision {
            source_index: e.index,
            task: e.task.name.clone(),
            verdict: String::new(),
            retries_pruned: 0,
            idle_steps_trimmed: 0,
            keyframes: 0,
            novelty: None,
            plan: String::new(),
        })
        .collect();
    // 1. Success and health.
    for (d, e) in decisions.iter_mut().zip(raw) {
        if e.outcome.invalid.is_some() || e.outcome.failure.is_some() {
            d.verdict = "unhealthy".into();
        } else if !e.outcome.success {
            d.verdict = "not_success".into();
        }
    }
    // 2. Efficiency within each task variant.
    let mut best: BTreeMap<&str, (usize, f64)> = BTreeMap::new();
    for (d, e) in decisions.iter().zip(raw) {
        if d.verdict.is_empty() {
            let entry = best
                .entry(e.task.name.as_str())
                .or_insert((usize::MAX, f64::INFINITY));
            entry.0 = entry.0.min(e.steps.len());
            entry.1 = entry.1.min(metrics::path_length_m(e));
        }
    }
    for (d, e) in decisions.iter_mut().zip(raw) {
        if let (true, Some((steps, path))) = (d.verdict.is_empty(), best.get(e.task.name.as_str()))
        {
            let too_long = e.steps.len() as f64 > cfg.efficiency_ratio * *steps as f64;
            let too_far = metrics::path_length_m(e) > cfg.efficiency_ratio * path + 1e-9;
            if too_long || too_far {
                d.verdict = "inefficient".into();
            }
        }
    }
    // 3–5. Prune, trim, smooth.
    let limits = plans::limits(robot, cfg);
    let mut min_jerk_plans: Vec<Option<Vec<Sample>>> = vec![None; raw.len()];
    let mut trimmed_plans: Vec<Option<Vec<Sample>>> = vec![None; raw.len()];
    for (((d, e), plan), trimmed_plan) in decisions
        .iter_mut()
        .zip(raw)
        .zip(min_jerk_plans.iter_mut())
        .zip(trimmed_plans.iter_mut())
    {
        if !d.verdict.is_empty() {
            continue;
        }
        let p = plans::episode_plans(robot, cfg, &limits, dt, e);
        d.retries_pruned = p.retries_pruned;
        d.idle_steps_trimmed = p.idle_steps_trimmed;
        d.keyframes = p.keyframes;
        *plan = Some(p.min_jerk);
        *trimmed_plan = Some(p.trimmed);
    }
    // 6. Re-validate in parallel (each replay is its own world; order is preserved), then
    // replay the trimmed path of those whose re-timed plan no longer succeeds.
    let mut replays = replay_plans(robot, config, raw, &min_jerk_plans)?;
    let replayed = replays.iter().flatten().count();
    let retry: Vec<Option<Vec<Sample>>> = replays
        .iter()
        .zip(trimmed_plans)
        .map(|(r, t)| {
            t.filter(|_| cfg.trimmed_fallback && r.as_ref().is_some_and(|r| !r.outcome.success))
        })
        .collect();
    let fallbacks = replay_plans(robot, config, raw, &retry)?;
    for ((d, replay), fallback) in decisions.iter_mut().zip(&mut replays).zip(fallbacks) {
        if replay.is_some() {
            d.plan = "min_jerk".into();
        }
        if let Some(f) = fallback.filter(|f| f.outcome.success) {
            *replay = Some(f);
            d.plan = "trimmed".into();
        }
    }
    let before: Vec<&Episode> = raw
        .iter()
        .zip(&min_jerk_plans)
        .filter(|(_, p)| p.is_some())
        .map(|(e, _)| e)
        .collect();
    // 7. Novelty against the held golden set and the ones kept so far.
    let mut known: Vec<Vec<f64>> = held.iter().map(|e| metrics::features(e, dt)).collect();
    let mut golden = Vec::new();
    let mut revalidated = 0;
    for (d, replay) in decisions.iter_mut().zip(replays) {
        let Some(replay) = replay else { continue };
        if !replay.outcome.success {
            d.verdict = "revalidation_failed".into();
            continue;
        }
        revalidated += 1;
        let f = metrics::features(&replay, dt);
        let novelty = metrics::novelty(&f, &known);
        d.novelty = novelty.is_finite().then_some(novelty);
        if novelty < cfg.min_novelty {
            d.verdict = "near_duplicate".into();
            continue;
        }
        d.verdict = "kept".into();
        known.push(f);
        golden.push(replay);
    }
    let count = |v: &str| decisions.iter().filter(|d| d.verdict == v).count();
    let b = figures(&before, dt);
    let a = figures(&golden.iter().collect::<Vec<_>>(), dt);
    let report = RefineReport {
        episodes_in: raw.len(),
        dropped_not_success: count("not_success"),
        dropped_unhealthy: count("unhealthy"),
        dropped_inefficient: count("inefficient"),
        dropped_revalidation_failed: count("revalidation_failed"),
        dropped_near_duplicate: count("near_duplicate"),
        retries_pruned: decisions.iter().map(|d| d.retries_pruned).sum(),
        idle_steps_trimmed: decisions.iter().map(|d| d.idle_steps_trimmed).sum(),
        kept: golden.len(),
        kept_trimmed: decisions
            .iter()
            .filter(|d| d.verdict == "kept" && d.plan == "trimmed")
            .count(),
        revalidation_rate: if replayed == 0 {
            0.0
        } else {
            revalidated as f64 / replayed as f64
        },
        duration_before_s: b.duration_s,
        duration_after_s: a.duration_s,
        ee_path_before_m: b.ee_path_m,
        ee_path_after_m: a.ee_path_m,
        rms_jerk_before: b.rms_jerk,
        rms_jerk_after: a.rms_jerk,
        peak_acc_before: b.peak_acc,
        peak_acc_after: a.peak_acc,
        decisions,
    };
    Ok(Refined { golden, report })
}
