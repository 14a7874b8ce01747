//! Episodes → LeRobot frames: one frame per control step, holding the observation the
//! controller saw before the step and the action it took.
//!
//! Frame `t` of an episode with `n` recorded steps (`t` in `0..n`): the state before step `t`
//! (the initial state for `t = 0`, else the state at the end of step `t − 1`), the step's
//! commanded joint targets (`action`) and the commanded TCP motion (`action.ee_delta`), and
//! the step's reward; `next.done` on the last frame; `next.success` on the last frame of a
//! successful episode.

use std::sync::Arc;

use nalgebra::UnitQuaternion;
use robots::Manipulator;

use crate::camera::CameraFrame;
use crate::config::SimConfig;
use crate::episode::Episode;
use crate::scene::Scene;
use crate::state::PhysicsState;
use crate::Result;

/// Floats per object pose in `observation.environment_state` (x y z qx qy qz qw).
pub const POSE_DIM: usize = 7;
/// `action.ee_delta`: dx dy dz (m), rx ry rz (rad, rotation vector, world frame), gripper.
pub const EE_DELTA_DIM: usize = 7;

/// One episode's frames, column by column.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct EpisodeFrames {
    /// Arm joint positions (rad or m) then the gripper opening in [0, 1]; `[frames][dof + 1]`.
    pub state: Vec<Vec<f32>>,
    /// The TCP pose in the world frame (x y z qx qy qz qw).
    pub ee_pose: Vec<[f32; POSE_DIM]>,
    /// Every object's pose, flattened, padded with zeros to the export's object count.
    pub environment: Vec<Vec<f32>>,
    /// Commanded arm joint targets then the gripper target in [0, 1].
    pub action: Vec<Vec<f32>>,
    pub ee_delta: Vec<[f32; EE_DELTA_DIM]>,
    pub reward: Vec<f32>,
    pub done: Vec<bool>,
    pub success: Vec<bool>,
    /// Per camera, per frame (empty when the episode has no recorded images).
    pub images: Vec<Vec<CameraFrame>>,
}

impl EpisodeFrames {
    pub fn len(&self) -> usize {
        self.reward.len()
    }

    pub fn is_empty(&self) -> bool {
        self.reward.is_empty()
    }
}

fn f32s(values: impl IntoIterator<Item = f64>) -> Vec<f32> {
    values.into_iter().map(|v| v as f32).collect()
}

fn state_row(s: &PhysicsState) -> Vec<f32> {
    f32s(s.q_rad.iter().copied().chain([s.gripper_opening]))
}

fn environment_row(s: &PhysicsState, objects: usize) -> Vec<f32> {
    let mut row = f32s(s.objects.iter().flat_map(|o| o.world_from_object));
    row.resize(objects * POSE_DIM, 0.0);
    row
}

/// The commanded TCP motion between two joint targets, in the world frame (the scene's
/// world_from_root is a pure translation, so root-frame deltas are world-frame deltas).
fn ee_delta(robot: &Manipulator, before: &[f64], after: &[f64], gripper: f64) -> [f32; 7] {
    let (a, b) = (robot.fk(before), robot.fk(after));
    let dp = b.translation.vector - a.translation.vector;
    let dr: UnitQuaternion<f64> = b.rotation * a.rotation.inverse();
    let dr = dr.scaled_axis();
    [dp.x, dp.y, dp.z, dr.x, dr.y, dr.z, gripper].map(|v| v as f32)
}

/// The frames of `episode`. `objects`: the export's object-slot count (≥ the episode's);
/// `cameras`: export camera images (the episode must have recorded them; the first frame's
/// images, taken before any step, are rendered from the episode's initial scene).
pub fn episode_frames(
    episode: &Episode,
    robot: &Arc<Manipulator>,
    sim: &Arc<SimConfig>,
    objects: usize,
    cameras: bool,
) -> Result<EpisodeFrames> {
    let n = episode.steps.len();
    let mut f = EpisodeFrames::default();
    for (t, step) in episode.steps.iter().enumerate() {
        let (before, q_before) = match t {
            0 => (&episode.initial_state, &episode.initial_state.q_rad),
            _ => (
                &episode.steps[t - 1].state,
                &episode.steps[t - 1].q_target_rad,
            ),
        };
        f.state.push(state_row(before));
        f.ee_pose.push(before.world_from_ee.map(|v| v as f32));
        f.environment.push(environment_row(before, objects));
        let gripper = step.action.gripper();
        f.action
            .push(f32s(step.q_target_rad.iter().copied().chain([gripper])));
        f.ee_delta
            .push(ee_delta(robot, q_before, &step.q_target_rad, gripper));
        f.reward.push(step.reward.total as f32);
        f.done.push(t + 1 == n);
        f.success.push(t + 1 == n && episode.outcome.success);
    }
    if cameras && n > 0 {
        let first = Scene::new(robot.clone(), &episode.task, sim.clone())?.render_all();
        f.images = first.into_iter().map(|frame| vec![frame]).collect();
        for step in &episode.steps[..n - 1] {
            for (camera, frame) in f.images.iter_mut().zip(&step.images) {
                camera.push(frame.clone());
            }
        }
    }
    Ok(f)
}
