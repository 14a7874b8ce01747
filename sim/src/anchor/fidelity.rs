//! Fidelity probes, computed identically by `benches/mujoco_fidelity.py` in MuJoCo: the
//! shoulder's gravity sag and servo step responses. The shoulder is joint index 1 (j2), the
//! base yaw index 0 (j1), the elbow [`AnchorModel::elbow`].
//!
//! Arm-cube: with all targets 0 the arm is horizontal and its wrist rests on the table's far
//! edge (MuJoCo too: the servo holds ~25 of the ~63 N·m gravity torque at j2), so that sag
//! measures contact as much as the servo (panda-cube: the hand hangs 2 cm above the cube, no
//! contact). The step responses and the "lifted" sag therefore start from the lifted posture
//! (j2 target −0.3 rad, arm clear of the table and cube).

use serde::{Deserialize, Serialize};

use super::{AnchorConfig, AnchorModel, AnchorScene, ArticulationKind};
use crate::error::Result;

/// Seconds held at `q_target = 0` before measuring the sag and starting a step.
pub const SETTLE_S: f32 = 2.0;
/// Step size of the step-response probes, rad (j2 steps up, to −0.6; j1 to +0.3).
pub const STEP_RAD: f32 = 0.3;
/// j2 target of the lifted posture, rad (negative lifts the arm).
pub const LIFTED_J2_RAD: f32 = -0.3;
/// Seconds simulated after a step (the last sample is the step's final value).
pub const STEP_HORIZON_S: f32 = 2.0;

/// A servo's response to a target step of `STEP_RAD` after settling in the lifted posture.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StepResponse {
    /// Joint name (MJCF).
    pub joint: String,
    /// Position when the step is applied, rad.
    pub q_initial_rad: f32,
    /// Position 0.05 s after the step, rad.
    pub q_at_0_05_s_rad: f32,
    /// Position 0.1 s after the step, rad.
    pub q_at_0_1_s_rad: f32,
    /// Position 0.2 s after the step, rad.
    pub q_at_0_2_s_rad: f32,
    /// Position 0.5 s after the step, rad.
    pub q_at_0_5_s_rad: f32,
    /// Position `STEP_HORIZON_S` after the step, rad.
    pub q_final_rad: f32,
    /// `(peak − final) / (final − initial)`, 0 if the response never passes its final value.
    pub overshoot_frac: f32,
    /// Last time the position is more than 5% of `final − initial` away from final, s.
    pub settling_time_5pct_s: f32,
}

/// The fidelity probes of one engine/articulation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Fidelity {
    /// `"coevolve-rapier/<articulation>"` or `"mujoco <version>"`.
    pub engine: String,
    /// j2 position after `SETTLE_S` holding all targets at 0 (arm-cube: arm horizontal, wrist
    /// resting on the table edge), rad: the shoulder's steady-state error.
    pub gravity_sag_j2_rad: f32,
    /// The elbow's position at the same instant, rad.
    pub gravity_sag_elbow_rad: f32,
    /// j2 error `q − target` after `SETTLE_S` in the lifted posture (no contact), rad: gravity
    /// torque / kp.
    pub lifted_sag_j2_rad: f32,
    /// The elbow's error at the same instant, rad.
    pub lifted_sag_elbow_rad: f32,
    /// Step of j2 (shoulder, gravity-loaded) from the lifted posture, up by `STEP_RAD`.
    pub step_j2: StepResponse,
    /// Step of j1 (base yaw, no gravity load) from the lifted posture, by `+STEP_RAD`.
    pub step_j1: StepResponse,
}

fn steps_for(seconds: f32, dt_s: f32) -> usize {
    (seconds / dt_s).round() as usize
}

fn lifted_targets(model: &AnchorModel) -> Vec<f32> {
    let mut t = vec![0.0; model.num_joints()];
    t[1] = LIFTED_J2_RAD;
    t
}

/// Holds `targets` for `SETTLE_S` from `q = 0` and returns the scene.
fn settled(
    model: &'static AnchorModel,
    kind: ArticulationKind,
    config: &AnchorConfig,
    targets: &[f32],
) -> Result<AnchorScene> {
    let mut scene = AnchorScene::new(model, kind, config)?;
    scene.set_targets(targets);
    for _ in 0..steps_for(SETTLE_S, scene.dt_s()) {
        scene.step();
    }
    Ok(scene)
}

fn step_response(
    model: &'static AnchorModel,
    kind: ArticulationKind,
    config: &AnchorConfig,
    joint: usize,
    step_rad: f32,
) -> Result<StepResponse> {
    let mut targets = lifted_targets(model);
    let mut scene = settled(model, kind, config, &targets)?;
    let dt_s = scene.dt_s();
    targets[joint] += step_rad;
    scene.set_targets(&targets);
    let q0 = scene.joint_position(joint);
    let n = steps_for(STEP_HORIZON_S, dt_s);
    let mut trace = Vec::with_capacity(n);
    for _ in 0..n {
        scene.step();
        trace.push(scene.joint_position(joint));
    }
    Ok(summarize(model.joints[joint].name, q0, &trace, dt_s))
}

/// Summarizes a step trace sampled every `dt_s`, `trace[k]` at `(k + 1)·dt_s` after the step.
pub fn summarize(joint: &str, q0: f32, trace: &[f32], dt_s: f32) -> StepResponse {
    let at = |t: f32| {
        let k = steps_for(t, dt_s).saturating_sub(1);
        trace.get(k).copied().unwrap_or(f32::NAN)
    };
    let q_final = trace.last().copied().unwrap_or(f32::NAN);
    let amplitude = q_final - q0;
    let sign = amplitude.signum();
    let peak = trace.iter().fold(f32::NEG_INFINITY, |m, q| m.max(sign * q));
    let overshoot = if amplitude != 0.0 {
        ((peak - sign * q_final) / amplitude.abs()).max(0.0)
    } else {
        0.0
    };
    let band = 0.05 * amplitude.abs();
    let settling = trace
        .iter()
        .rposition(|q| (q - q_final).abs() > band)
        .map(|k| (k + 1) as f32 * dt_s)
        .unwrap_or(0.0);
    StepResponse {
        joint: joint.to_owned(),
        q_initial_rad: q0,
        q_at_0_05_s_rad: at(0.05),
        q_at_0_1_s_rad: at(0.1),
        q_at_0_2_s_rad: at(0.2),
        q_at_0_5_s_rad: at(0.5),
        q_final_rad: q_final,
        overshoot_frac: overshoot,
        settling_time_5pct_s: settling,
    }
}

/// Runs the fidelity probes of `model`'s scene in rapier.
pub fn fidelity(
    model: &'static AnchorModel,
    kind: ArticulationKind,
    config: &AnchorConfig,
) -> Result<Fidelity> {
    let elbow = model.elbow;
    let rest = settled(model, kind, config, &vec![0.0; model.num_joints()])?;
    let lifted = lifted_targets(model);
    let q_lifted = settled(model, kind, config, &lifted)?;
    Ok(Fidelity {
        engine: format!("coevolve-rapier/{}", kind.name()),
        gravity_sag_j2_rad: rest.joint_position(1),
        gravity_sag_elbow_rad: rest.joint_position(elbow),
        lifted_sag_j2_rad: q_lifted.joint_position(1) - lifted[1],
        lifted_sag_elbow_rad: q_lifted.joint_position(elbow) - lifted[elbow],
        step_j2: step_response(model, kind, config, 1, -STEP_RAD)?,
        step_j1: step_response(model, kind, config, 0, STEP_RAD)?,
    })
}
