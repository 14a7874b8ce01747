//! A scripted pick-and-place controller through end-effector deltas (IK in the simulator):
//! the reference that shows the simulator, the control path and the predicates work together.
//! It reads privileged object state. It is a test reference, never a data source for learning.

use std::sync::Arc;

use nalgebra::{Isometry3, UnitQuaternion, Vector3};
use robots::Manipulator;

use crate::config::ActionScale;
use crate::control::Action;
use crate::episode::{Controller, EpisodeInfo};
use crate::reward::half_height_m;
use crate::state::{iso_from_pose7, Observation};
use crate::task::{SkillKind, TaskSpec};

/// Phases of a pick-and-place.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    Approach,
    Descend,
    Close,
    Lift,
    Carry,
    Lower,
    Release,
    Retreat,
    Done,
}

/// Scripted controller state for one episode.
#[derive(Debug)]
pub struct ScriptedPickPlace {
    task: TaskSpec,
    robot: Arc<Manipulator>,
    world_from_root: Isometry3<f64>,
    /// Where the object is grasped and where it goes, latched at the first step.
    grasp_point: Option<Vector3<f64>>,
    place_point: Option<Vector3<f64>>,
    scale: ActionScale,
    phase: Phase,
    phase_steps: usize,
    control_dt_s: f64,
    /// Grasp yaw chosen at the first step (rad).
    grasp_yaw: Option<f64>,
    object: Option<usize>,
    lift_height_m: f64,
}

/// Pre-grasp and carry clearance above the object (m).
const CLEARANCE_M: f64 = 0.10;
const POS_TOL_M: f64 = 0.006;
/// Lowest TCP height above the table when grasping (the finger pads reach 2 cm past the TCP).
const GRASP_MIN_HEIGHT_M: f64 = 0.03;
/// How far the measured TCP may lag the commanded one for a waypoint to count as reached.
const TRACKING_TOL_M: f64 = 0.015;
const ROT_TOL_RAD: f64 = 0.05;

impl ScriptedPickPlace {
    pub fn new(info: &EpisodeInfo<'_>, scale: ActionScale) -> Self {
        let task = info.task.clone();
        let object = task
            .goal
            .object
            .as_deref()
            .and_then(|n| task.object_index(n));
        ScriptedPickPlace {
            robot: info.robot.clone(),
            world_from_root: info.world_from_root,
            grasp_point: None,
            place_point: None,
            lift_height_m: task.goal.lift_height_m,
            task,
            scale,
            phase: Phase::Approach,
            phase_steps: 0,
            control_dt_s: info.control_dt_s,
            grasp_yaw: None,
            object,
        }
    }

    fn advance(&mut self, next: Phase) {
        self.phase = next;
        self.phase_steps = 0;
    }

    /// Where the object should end up (centre), for place and stack.
    fn place_target(&self, obs: &Observation) -> Option<Vector3<f64>> {
        let o = self.object?;
        let half = half_height_m(&self.task.objects.get(o)?.kind);
        match self.task.skill {
            SkillKind::Place => {
                let zone = self
                    .task
                    .goal
                    .zone
                    .as_deref()
                    .and_then(|n| self.task.zones.iter().find(|z| z.name == n))?;
                Some(Vector3::new(
                    zone.center_m[0],
                    zone.center_m[1],
                    self.task.table.top_z_m + half,
                ))
            }
            SkillKind::Stack => {
                let b = self
                    .task
                    .goal
                    .support
                    .as_deref()
                    .and_then(|n| self.task.object_index(n))?;
                let base = iso_from_pose7(&obs.objects.get(b)?.world_from_object);
                let base_half = half_height_m(&self.task.objects.get(b)?.kind);
                Some(base.translation.vector + Vector3::new(0.0, 0.0, base_half + half))
            }
            _ => None,
        }
    }

    fn goal(&mut self, obs: &Observation, world_from_ee: &Isometry3<f64>) -> (Vector3<f64>, f64) {
        let top = self.task.table.top_z_m;
        if self.task.skill == SkillKind::Reach {
            let zone = self
                .task
                .goal
                .zone
                .as_deref()
                .and_then(|n| self.task.zones.iter().find(|z| z.name == n));
            let c = zone.map_or(world_from_ee.translation.vector, |z| {
                Vector3::from(z.center_m)
            });
            return (c, 1.0);
        }
        let Some(object) = self.object.and_then(|o| obs.objects.get(o)) else {
            return (world_from_ee.translation.vector, 1.0);
        };
        if self.grasp_point.is_none() {
            let object_pose = iso_from_pose7(&object.world_from_object);
            // Object yaw modulo a quarter turn, nearest to zero: grasp across two faces.
            let (_, _, y) = object_pose.rotation.euler_angles();
            let q = std::f64::consts::FRAC_PI_2;
            self.grasp_yaw = Some(y - (y / q).round() * q);
            // TCP a little above the centre, high enough that the finger tips clear the table.
            let mut grasp = object_pose.translation.vector;
            grasp.z = (grasp.z + 0.005).max(top + GRASP_MIN_HEIGHT_M);
            self.grasp_point = Some(grasp);
            self.place_point = self.place_target(obs);
        }
        let p = self.grasp_point.unwrap_or(world_from_ee.translation.vector);
        let above = |v: Vector3<f64>, h: f64| Vector3::new(v.x, v.y, v.z + h);
        let place = self.place_point;
        match self.phase {
            Phase::Approach => (above(p, CLEARANCE_M), 1.0),
            Phase::Descend => (p, 1.0),
            Phase::Close => (p, 0.0),
            Phase::Lift => {
                let h = match self.task.skill {
                    SkillKind::Lift | SkillKind::Grasp => self.lift_height_m + 0.03,
                    _ => CLEARANCE_M,
                };
                (Vector3::new(p.x, p.y, top + h + 0.03), 0.0)
            }
            Phase::Carry => match place {
                Some(t) => (above(t, CLEARANCE_M), 0.0),
                None => (world_from_ee.translation.vector, 0.0),
            },
            Phase::Lower => (place.map_or(p, |t| above(t, 0.004)), 0.0),
            Phase::Release | Phase::Done => (world_from_ee.translation.vector, 1.0),
            Phase::Retreat => (place.map_or(p, |t| above(t, CLEARANCE_M)), 1.0),
        }
    }
}

impl Controller for ScriptedPickPlace {
    fn act(&mut self, obs: &Observation) -> Action {
        let world_from_ee = iso_from_pose7(&obs.world_from_ee);
        // Steer the commanded target (not the measured pose): proportional, no wind-up.
        let world_from_target = self.world_from_root * self.robot.fk(&obs.q_target_rad);
        let (goal_pos, gripper) = self.goal(obs, &world_from_ee);
        let yaw = self.grasp_yaw.unwrap_or(0.0);
        // TCP z down (approach from above), rotated about world z by the grasp yaw.
        let goal_rot = UnitQuaternion::from_axis_angle(&Vector3::z_axis(), yaw)
            * UnitQuaternion::from_axis_angle(&Vector3::x_axis(), std::f64::consts::PI);
        let dp = goal_pos - world_from_target.translation.vector;
        let dr = (goal_rot * world_from_target.rotation.inverse()).scaled_axis();
        let tracking_m = (world_from_ee.translation.vector - goal_pos).norm();
        let reached =
            dp.norm() < POS_TOL_M && dr.norm() < ROT_TOL_RAD && tracking_m < TRACKING_TOL_M;
        self.phase_steps += 1;
        let t = self.phase_steps as f64 * self.control_dt_s;
        let places = matches!(self.task.skill, SkillKind::Place | SkillKind::Stack);
        let next = match self.phase {
            Phase::Approach if reached || t > 4.0 => Some(Phase::Descend),
            Phase::Descend if reached || t > 2.0 => Some(Phase::Close),
            Phase::Close if t >= 0.5 => Some(Phase::Lift),
            Phase::Lift if (reached || t > 3.0) && places => Some(Phase::Carry),
            Phase::Carry if reached || t > 4.0 => Some(Phase::Lower),
            Phase::Lower if reached || t > 2.0 => Some(Phase::Release),
            Phase::Release if t >= 0.4 => Some(Phase::Retreat),
            Phase::Retreat if reached || t > 2.0 => Some(Phase::Done),
            _ => None,
        };
        if let Some(next) = next {
            self.advance(next);
        }
        let norm = |v: Vector3<f64>, s: f64| {
            let a = v / s;
            [
                a.x.clamp(-1.0, 1.0),
                a.y.clamp(-1.0, 1.0),
                a.z.clamp(-1.0, 1.0),
            ]
        };
        Action::EeDelta {
            dpos: norm(dp, self.scale.max_ee_step_m),
            drot: norm(dr, self.scale.max_ee_rot_rad),
            gripper,
        }
    }
}
