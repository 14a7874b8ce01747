//! A scripted pick-and-place (and push) controller through end-effector deltas (IK in the
//! simulator): the reference that shows the simulator, the control path and the predicates work
//! together.
//! It reads privileged object state. It is a test reference, never a data source for learning.

use std::sync::Arc;

use nalgebra::{Isometry3, UnitQuaternion, Vector3};
use robots::Manipulator;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

use crate::config::ActionScale;
use crate::control::Action;
use crate::episode::{Controller, EpisodeInfo};
use crate::reward::half_height_m;
use crate::state::{iso_from_pose7, ObjectState, Observation};
use crate::task::{ObjectKind, SkillKind, TaskSpec};

/// Phases of a pick-and-place; a push goes Approach, Descend (behind the object, fingers
/// closed), Push, Retreat.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    Approach,
    Descend,
    Push,
    Close,
    Lift,
    Carry,
    Lower,
    Release,
    Retreat,
    /// The gripper closed on nothing (or dropped the object): open, back off, try again.
    Retry,
    Done,
}

/// Imperfections of the noisy scripted variant, which produces the raw, retrying, hesitating
/// demonstrations the refiner learns to clean up.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ScriptNoise {
    /// Standard deviation of the noise added to each translation command (m). Default 0.004.
    pub target_noise_m: f64,
    /// Standard deviation of the noise added to each rotation command (rad). Default 0.02.
    pub rot_noise_rad: f64,
    /// Miss the first grasp on purpose (closing beside the object), then retry. Default true.
    pub forced_miss: bool,
    /// How far beside the object the forced miss closes (m). Default 0.06.
    pub miss_offset_m: f64,
    /// Chance per control step of starting a hesitation (a pause). Default 0.02.
    pub hesitation_probability: f64,
    /// Length of a hesitation (s). Default 0.4.
    pub hesitation_s: f64,
}

impl Default for ScriptNoise {
    fn default() -> Self {
        ScriptNoise {
            target_noise_m: 0.004,
            rot_noise_rad: 0.02,
            forced_miss: true,
            miss_offset_m: 0.06,
            hesitation_probability: 0.02,
            hesitation_s: 0.4,
        }
    }
}

/// Gripper opening below which a closed gripper holds nothing.
const EMPTY_GRIP_OPENING: f64 = 0.05;

/// Scripted controller state for one episode.
#[derive(Debug)]
pub struct ScriptedPickPlace {
    task: TaskSpec,
    robot: Arc<Manipulator>,
    world_from_root: Isometry3<f64>,
    /// Where the object is grasped and where it goes, latched at the first step (a push: where
    /// the closed fingers start behind it and where they end, `latch_push`).
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
    noise: Option<(ScriptNoise, ChaCha8Rng)>,
    /// The next grasp is the deliberate miss.
    miss_pending: bool,
    /// Control steps of hesitation left.
    hesitation_steps: usize,
    last_gripper: f64,
}

/// How far behind the object's side the closed fingers start a push (m).
const PUSH_GAP_M: f64 = 0.02;
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
        let object = task.goal_object_index();
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
            noise: None,
            miss_pending: false,
            hesitation_steps: 0,
            last_gripper: 1.0,
        }
    }

    /// The noisy, retrying, hesitating variant (randomness from the episode's seed).
    pub fn noisy(info: &EpisodeInfo<'_>, scale: ActionScale, noise: ScriptNoise) -> Self {
        let mut c = ScriptedPickPlace::new(info, scale);
        c.miss_pending = noise.forced_miss;
        c.noise = Some((noise, ChaCha8Rng::seed_from_u64(info.seed ^ 0x5C41_97ED)));
        c
    }

    fn advance(&mut self, next: Phase) {
        self.phase = next;
        self.phase_steps = 0;
    }

    /// How much taller than 6 cm the object is (half of it): a tall object is grasped higher,
    /// so it is lifted that much further (0 for the easy family's cubes).
    fn tall_extra_m(&self) -> f64 {
        self.object
            .and_then(|o| self.task.objects.get(o))
            .map_or(0.0, |o| (half_height_m(&o.kind) - 0.03).max(0.0))
    }

    /// Where the object should end up (centre), for place and stack.
    fn place_target(&self, obs: &Observation) -> Option<Vector3<f64>> {
        let o = self.object?;
        let half = half_height_m(&self.task.objects.get(o)?.kind);
        match self.task.skill {
            SkillKind::Place => {
                let zone = self.task.goal_zone()?;
                Some(Vector3::new(
                    zone.center_m[0],
                    zone.center_m[1],
                    self.task.table.top_z_m + half,
                ))
            }
            SkillKind::Stack => {
                let b = self.task.goal_support_index()?;
                let base = iso_from_pose7(&obs.objects.get(b)?.world_from_object);
                let base_half = half_height_m(&self.task.objects.get(b)?.kind);
                Some(base.translation.vector + Vector3::new(0.0, 0.0, base_half + half))
            }
            _ => None,
        }
    }

    /// A push's two points, latched at the first step: the TCP behind the object on the line
    /// from the zone's centre through it, and the same distance behind the zone's centre (where
    /// the push ends with the object at the centre), both low enough for the closed fingers to
    /// meet the object's side.
    fn latch_push(&mut self, object: &ObjectState) {
        let top = self.task.table.top_z_m;
        let zone = self.task.goal_zone();
        let (Some(zone), Some(spec)) = (zone, self.object.and_then(|o| self.task.objects.get(o)))
        else {
            return;
        };
        let object_pose = iso_from_pose7(&object.world_from_object);
        let start = object_pose.translation.vector;
        let dir = (Vector3::new(zone.center_m[0], zone.center_m[1], start.z) - start)
            .try_normalize(1e-9)
            .unwrap_or_else(Vector3::x);
        let (_, _, yaw) = object_pose.rotation.euler_angles();
        self.grasp_yaw = Some(grasp_yaw(&spec.kind, yaw));
        let behind =
            dir * (spec.kind.half_extents_m()[0].max(spec.kind.half_extents_m()[1]) + PUSH_GAP_M);
        let z = (start.z + 0.005).max(top + GRASP_MIN_HEIGHT_M);
        let at = |p: Vector3<f64>| Vector3::new(p.x, p.y, z) - behind;
        self.grasp_point = Some(at(start));
        self.place_point = Some(at(Vector3::from(zone.center_m)));
    }

    fn goal(&mut self, obs: &Observation, world_from_ee: &Isometry3<f64>) -> (Vector3<f64>, f64) {
        let top = self.task.table.top_z_m;
        if self.task.skill == SkillKind::Reach {
            let zone = self.task.goal_zone();
            let c = zone.map_or(world_from_ee.translation.vector, |z| {
                Vector3::from(z.center_m)
            });
            return (c, 1.0);
        }
        let Some(object) = self.object.and_then(|o| obs.objects.get(o)) else {
            return (world_from_ee.translation.vector, 1.0);
        };
        if self.grasp_point.is_none() && self.task.skill == SkillKind::Push {
            self.latch_push(object);
        }
        if self.grasp_point.is_none() {
            let object_pose = iso_from_pose7(&object.world_from_object);
            let (_, _, y) = object_pose.rotation.euler_angles();
            let spec = self.object.and_then(|o| self.task.objects.get(o));
            self.grasp_yaw = Some(spec.map_or(y, |spec| grasp_yaw(&spec.kind, y)));
            // TCP a little above the centre, high enough that the finger tips clear the table.
            let mut grasp = object_pose.translation.vector;
            grasp.z = (grasp.z + 0.005).max(top + GRASP_MIN_HEIGHT_M);
            if self.miss_pending {
                // Beside the object, along the TCP x axis (across the finger pads' width).
                let offset = self.noise.as_ref().map_or(0.0, |(n, _)| n.miss_offset_m);
                let yaw = self.grasp_yaw.unwrap_or(0.0);
                grasp += Vector3::new(yaw.cos(), yaw.sin(), 0.0) * offset;
                self.miss_pending = false;
            }
            self.grasp_point = Some(grasp);
            self.place_point = self.place_target(obs);
        }
        let p = self.grasp_point.unwrap_or(world_from_ee.translation.vector);
        let above = |v: Vector3<f64>, h: f64| Vector3::new(v.x, v.y, v.z + h);
        let place = self.place_point;
        let pushes = self.task.skill == SkillKind::Push;
        // A push keeps its fingers closed throughout: open, they would catch the object.
        let open = if pushes { 0.0 } else { 1.0 };
        match self.phase {
            Phase::Approach => (above(p, CLEARANCE_M), open),
            Phase::Descend => (p, open),
            Phase::Push => (place.unwrap_or(p), 0.0),
            Phase::Close => (p, 0.0),
            Phase::Lift => {
                let h = match self.task.skill {
                    SkillKind::Lift | SkillKind::Grasp => self.lift_height_m + 0.03,
                    _ => CLEARANCE_M,
                };
                (
                    Vector3::new(p.x, p.y, top + h + 0.03 + self.tall_extra_m()),
                    0.0,
                )
            }
            Phase::Carry => match place {
                Some(t) => (above(t, CLEARANCE_M), 0.0),
                None => (world_from_ee.translation.vector, 0.0),
            },
            Phase::Lower => (place.map_or(p, |t| above(t, 0.004)), 0.0),
            Phase::Release | Phase::Done => (world_from_ee.translation.vector, open),
            Phase::Retreat => (place.map_or(p, |t| above(t, CLEARANCE_M)), open),
            Phase::Retry => (above(p, CLEARANCE_M), 1.0),
        }
    }
}

impl Controller for ScriptedPickPlace {
    fn act(&mut self, obs: &Observation) -> Action {
        if self.hesitation_steps > 0 {
            self.hesitation_steps -= 1;
            return Action::EeDelta {
                dpos: [0.0; 3],
                drot: [0.0; 3],
                gripper: self.last_gripper,
            };
        }
        if let Some((noise, rng)) = &mut self.noise {
            if rng.gen_bool(noise.hesitation_probability.clamp(0.0, 1.0)) {
                self.hesitation_steps = (noise.hesitation_s / self.control_dt_s).round() as usize;
            }
        }
        let world_from_ee = iso_from_pose7(&obs.world_from_ee);
        let (goal_pos, gripper) = self.goal(obs, &world_from_ee);
        let yaw = self.grasp_yaw.unwrap_or(0.0);
        let (mut dp, mut dr) =
            top_down_error(&self.robot, &self.world_from_root, obs, &goal_pos, yaw);
        if let Some((noise, rng)) = &mut self.noise {
            let mut gauss = |sigma: f64| {
                // Box–Muller from two uniforms: deterministic for the episode's seed.
                let u1: f64 = rng.gen_range(f64::EPSILON..1.0);
                let u2: f64 = rng.gen();
                sigma * (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
            };
            dp += Vector3::new(
                gauss(noise.target_noise_m),
                gauss(noise.target_noise_m),
                gauss(noise.target_noise_m),
            );
            dr += Vector3::new(
                gauss(noise.rot_noise_rad),
                gauss(noise.rot_noise_rad),
                gauss(noise.rot_noise_rad),
            );
        }
        let tracking_m = (world_from_ee.translation.vector - goal_pos).norm();
        let reached =
            dp.norm() < POS_TOL_M && dr.norm() < ROT_TOL_RAD && tracking_m < TRACKING_TOL_M;
        self.phase_steps += 1;
        let t = self.phase_steps as f64 * self.control_dt_s;
        let places = self.task.skill.sets_down();
        let pushes = self.task.skill == SkillKind::Push;
        let next = match self.phase {
            Phase::Approach if reached || t > 4.0 => Some(Phase::Descend),
            Phase::Descend if (reached || t > 2.0) && pushes => Some(Phase::Push),
            Phase::Push if reached || t > 6.0 => Some(Phase::Retreat),
            Phase::Descend if reached || t > 2.0 => Some(Phase::Close),
            Phase::Close if t >= 0.5 && obs.gripper_opening < EMPTY_GRIP_OPENING => {
                Some(Phase::Retry)
            }
            Phase::Close if t >= 0.5 => Some(Phase::Lift),
            Phase::Lift | Phase::Carry if obs.gripper_opening < EMPTY_GRIP_OPENING => {
                Some(Phase::Retry)
            }
            Phase::Retry if t >= 0.6 => {
                // Re-latch the grasp on wherever the object is now.
                self.grasp_point = None;
                Some(Phase::Approach)
            }
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
        self.last_gripper = gripper;
        ee_delta_action(&dp, &dr, gripper, &self.scale)
    }
}

/// The grasp yaw (about world z) for an object at yaw `object_yaw_rad`, the jaws closing across
/// two faces: a cube's nearest quarter turn to zero; a box's nearest half turn that closes the
/// jaws across its short side; a round object's own yaw, to the nearest quarter turn.
fn grasp_yaw(kind: &ObjectKind, object_yaw_rad: f64) -> f64 {
    let nearest = |y: f64, period: f64| y - (y / period).round() * period;
    let quarter = std::f64::consts::FRAC_PI_2;
    match kind {
        ObjectKind::Cube { size_m } if size_m[0] > size_m[1] => {
            nearest(object_yaw_rad, std::f64::consts::PI)
        }
        ObjectKind::Cube { size_m } if size_m[1] > size_m[0] => {
            nearest(object_yaw_rad + quarter, std::f64::consts::PI)
        }
        _ => nearest(object_yaw_rad, quarter),
    }
}

/// Error from the commanded TCP pose (not the measured one: proportional steering without
/// wind-up) to a top-down grasp pose at `goal_pos` rotated by `yaw` about world z:
/// (translation m, rotation vector rad), both in the world frame.
pub fn top_down_error(
    robot: &Manipulator,
    world_from_root: &Isometry3<f64>,
    obs: &Observation,
    goal_pos: &Vector3<f64>,
    yaw: f64,
) -> (Vector3<f64>, Vector3<f64>) {
    let world_from_target = world_from_root * robot.fk(&obs.q_target_rad);
    // TCP z down (approach from above), rotated about world z by the grasp yaw.
    let goal_rot = UnitQuaternion::from_axis_angle(&Vector3::z_axis(), yaw)
        * UnitQuaternion::from_axis_angle(&Vector3::x_axis(), std::f64::consts::PI);
    let dp = goal_pos - world_from_target.translation.vector;
    let dr = (goal_rot * world_from_target.rotation.inverse()).scaled_axis();
    (dp, dr)
}

/// The end-effector-delta action that closes (`dp`, `dr`) as fast as the action scale allows.
pub fn ee_delta_action(
    dp: &Vector3<f64>,
    dr: &Vector3<f64>,
    gripper: f64,
    scale: &ActionScale,
) -> Action {
    let norm = |v: &Vector3<f64>, s: f64| {
        let a = v / s;
        [
            a.x.clamp(-1.0, 1.0),
            a.y.clamp(-1.0, 1.0),
            a.z.clamp(-1.0, 1.0),
        ]
    };
    Action::EeDelta {
        dpos: norm(dp, scale.max_ee_step_m),
        drot: norm(dr, scale.max_ee_rot_rad),
        gripper,
    }
}
