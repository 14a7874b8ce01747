//! Observation → raw feature vectors (SI units, before normalisation) and recorded steps →
//! action labels in the policy's action space (normalised end-effector deltas + gripper).
//!
//! Proprioception (`proprio_dim = 3·dof + 12`): q, q̇, commanded q, gripper opening, TCP
//! position (world, m), TCP rotation as its first two matrix columns, episode time fraction,
//! the task's lift height. State mode adds one token per object (`OBJECT_DIM`: position relative
//! to the TCP, position, quaternion, linear and angular velocity, half extents in its own frame,
//! 1 for a round object (a cylinder) else 0) and per zone (`ZONE_DIM`:
//! centre relative to the TCP, centre, half extents). Images: RGB in [-0.5, 0.5] and depth / 3 m
//! − 0.5, channel-first.

use nalgebra::{Isometry3, UnitQuaternion, Vector3};
use robots::Manipulator;
use sim::config::ActionScale;
use sim::state::{iso_from_pose7, ObjectState, Observation};
use sim::task::{ObjectKind, TaskSpec, ZoneSpec};
use sim::{Action, CameraFrame};

/// Action components: TCP translation (3), rotation vector (3), gripper opening target (1).
pub const ACTION_DIM: usize = 7;
pub const OBJECT_DIM: usize = 20;
pub const ZONE_DIM: usize = 9;
/// Depth beyond this reads as the far plane in the image features (m).
pub const DEPTH_RANGE_M: f32 = 3.0;

pub fn proprio_dim(dof: usize) -> usize {
    3 * dof + 12
}

/// Proprioception of `obs` for `task`.
pub fn proprio(obs: &Observation, task: &TaskSpec) -> Vec<f32> {
    let mut v = vec![0.0; proprio_dim(obs.q_rad.len())];
    proprio_into(obs, task, &mut v);
    v
}

/// [`proprio`] into `out` (`proprio_dim` long; allocates nothing).
pub fn proprio_into(obs: &Observation, task: &TaskSpec, out: &mut [f32]) {
    let ee = iso_from_pose7(&obs.world_from_ee);
    let r = ee.rotation.to_rotation_matrix();
    let columns = r.matrix().columns(0, 2);
    let values = obs
        .q_rad
        .iter()
        .chain(&obs.qd_rad_s)
        .chain(&obs.q_target_rad)
        .chain(std::iter::once(&obs.gripper_opening))
        .chain(ee.translation.vector.iter())
        .chain(columns.iter())
        .copied()
        .chain([
            obs.time_s / task.max_duration_s.max(1e-6),
            task.goal.lift_height_m,
        ]);
    for (dst, src) in out.iter_mut().zip(values) {
        *dst = src as f32;
    }
}

/// One object's token features (see the module docs); `ee_m`: the TCP position (world, m).
pub fn object_token(o: &ObjectState, kind: &ObjectKind, ee_m: &Vector3<f64>) -> [f32; OBJECT_DIM] {
    object_features(o, kind, ee_m)
}

fn object_features(o: &ObjectState, kind: &ObjectKind, ee_m: &Vector3<f64>) -> [f32; OBJECT_DIM] {
    let p = o.position_m();
    let rel = p - ee_m;
    let mut q = [
        o.world_from_object[3],
        o.world_from_object[4],
        o.world_from_object[5],
        o.world_from_object[6],
    ];
    // q and -q are the same rotation: keep w ≥ 0 so the feature is continuous near identity.
    if q[3] < 0.0 {
        q.iter_mut().for_each(|c| *c = -*c);
    }
    let half_extents = kind.half_extents_m();
    let round = if kind.is_round() { 1.0 } else { 0.0 };
    let mut f = [0.0f32; OBJECT_DIM];
    let values = rel
        .iter()
        .chain(p.iter())
        .chain(q.iter())
        .chain(o.lin_vel_m_s.iter())
        .chain(o.ang_vel_rad_s.iter())
        .chain(half_extents.iter())
        .chain(std::iter::once(&round));
    for (dst, src) in f.iter_mut().zip(values) {
        *dst = *src as f32;
    }
    f
}

/// Object tokens (one row per object, in task order).
pub fn objects(obs: &Observation, task: &TaskSpec) -> Vec<[f32; OBJECT_DIM]> {
    let ee = iso_from_pose7(&obs.world_from_ee).translation.vector;
    obs.objects
        .iter()
        .zip(&task.objects)
        .map(|(o, spec)| object_features(o, &spec.kind, &ee))
        .collect()
}

/// Zone tokens (one row per zone of the task).
pub fn zones(obs: &Observation, task: &TaskSpec) -> Vec<[f32; ZONE_DIM]> {
    let ee = iso_from_pose7(&obs.world_from_ee).translation.vector;
    task.zones.iter().map(|z| zone_token(z, &ee)).collect()
}

/// One zone's token features; `ee_m`: the TCP position (world, m).
pub fn zone_token(z: &ZoneSpec, ee_m: &Vector3<f64>) -> [f32; ZONE_DIM] {
    let c = Vector3::from(z.center_m);
    let mut f = [0.0f32; ZONE_DIM];
    let rel = c - ee_m;
    let values = rel
        .iter()
        .copied()
        .chain(z.center_m)
        .chain(z.half_extents_m);
    for (dst, src) in f.iter_mut().zip(values) {
        *dst = src as f32;
    }
    f
}

/// Appends a camera frame as 4 channel-first planes (R, G, B, depth).
pub fn push_image(frame: &CameraFrame, out: &mut Vec<f32>) {
    let n = frame.depth_m.len();
    for c in 0..3 {
        out.extend((0..n).map(|i| f32::from(frame.rgb[3 * i + c]) / 255.0 - 0.5));
    }
    out.extend(
        frame
            .depth_m
            .iter()
            .map(|d| d.clamp(0.0, DEPTH_RANGE_M) / DEPTH_RANGE_M - 0.5),
    );
}

/// The policy's action for a recorded step: the step's own command when it was an
/// end-effector delta, otherwise the change of the commanded TCP pose (from the commanded
/// joint targets before and after) in normalised units.
pub fn action_label(
    action: &Action,
    robot: &Manipulator,
    q_target_before: &[f64],
    q_target_after: &[f64],
    scale: &ActionScale,
) -> [f32; ACTION_DIM] {
    let mut out = [0.0f32; ACTION_DIM];
    let values: Vec<f64> = match action {
        Action::EeDelta { .. } => action.to_vec(),
        _ => {
            // The scene's world_from_root is a pure translation, so root-frame deltas are
            // world-frame deltas.
            let before: Isometry3<f64> = robot.fk(q_target_before);
            let after: Isometry3<f64> = robot.fk(q_target_after);
            let dp = (after.translation.vector - before.translation.vector) / scale.max_ee_step_m;
            let dr: UnitQuaternion<f64> = after.rotation * before.rotation.inverse();
            let dr = dr.scaled_axis() / scale.max_ee_rot_rad;
            dp.iter()
                .chain(dr.iter())
                .copied()
                .chain(std::iter::once(action.gripper()))
                .collect()
        }
    };
    for (i, (dst, src)) in out.iter_mut().zip(values).enumerate() {
        *dst = if i < 6 {
            src.clamp(-1.0, 1.0) as f32
        } else {
            src.clamp(0.0, 1.0) as f32
        };
    }
    out
}

/// The simulator action for a policy output (components clamped to their ranges).
pub fn to_sim_action(a: &[f32]) -> Action {
    let c = |i: usize| f64::from(a[i]).clamp(-1.0, 1.0);
    Action::EeDelta {
        dpos: [c(0), c(1), c(2)],
        drot: [c(3), c(4), c(5)],
        gripper: f64::from(a[6]).clamp(0.0, 1.0),
    }
}

/// The observation a controller saw before recorded step `t` of an episode (the initial state
/// for t = 0), rebuilt from the recorded physics state and commanded targets.
pub fn observation_before(
    episode: &sim::Episode,
    t: usize,
    home_q_rad: &[f64],
    images: Vec<CameraFrame>,
) -> Observation {
    let (state, q_target) = if t == 0 {
        (&episode.initial_state, home_q_rad.to_vec())
    } else {
        let prev = &episode.steps[t - 1];
        (&prev.state, prev.q_target_rad.clone())
    };
    Observation {
        time_s: state.time_s,
        q_rad: state.q_rad.clone(),
        qd_rad_s: state.qd_rad_s.clone(),
        gripper_opening: state.gripper_opening,
        world_from_ee: state.world_from_ee,
        q_target_rad: q_target,
        objects: state.objects.clone(),
        images,
    }
}
