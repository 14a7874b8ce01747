//! Physics-based success predicates and dense reward terms, computed only from simulator
//! state (`PhysicsState`) and the task — never from what a controller intended.

use nalgebra::Vector3;
use serde::{Deserialize, Serialize};

use crate::state::PhysicsState;
use crate::task::{ObjectKind, SkillKind, TaskSpec};

/// An object is "at rest" below these speeds.
pub const REST_LIN_M_S: f64 = 0.05;
pub const REST_ANG_RAD_S: f64 = 0.8;
/// Lifted: at least this far above its start and off the table.
pub const LIFTED_M: f64 = 0.01;
/// Scoop: the disc must be carried at least this far above where it started (m).
pub const SCOOP_HEIGHT_M: f64 = 0.05;
/// A robot-table contact above this force counts as a collision (N).
pub const TABLE_COLLISION_N: f64 = 1.0;
/// Most a released goal object may fall after the gripper last held it (every finger touching,
/// the gripper not opening) for a place or stack to count: a place is a set-down, not a drop (m).
pub const MAX_DROP_M: f64 = 0.02;
/// The gripper is opening when its opening (0 closed, 1 open) grew more than this in a step.
const OPENING_EPS: f64 = 0.002;

/// How the gripper handled the goal object over an episode, for the rules a single state cannot
/// judge. Place and stack release the object and must set it down: it may have fallen at most
/// [`MAX_DROP_M`] since the gripper last held it (every finger touching it, the gripper not
/// opening) — a hold, not any touch: a cube let go high up slides down one finger, or between
/// both as they open, and leaves them near the table. Push slides the object: it fails once the
/// gripper has carried it (grasped, off the table, [`Judge::grasped`]) at any step.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Handling {
    last_hold_z_m: Option<f64>,
    last_opening: Option<f64>,
    carried: bool,
}

impl Handling {
    /// Takes in the state at the end of a step.
    pub fn observe(&mut self, judge: &Judge<'_>, s: &PhysicsState) {
        let Some(o) = judge.task.goal_object_index() else {
            return;
        };
        let fingers = &s.contacts.finger_touch;
        let opening = self
            .last_opening
            .is_some_and(|o| s.gripper_opening > o + OPENING_EPS);
        self.last_opening = Some(s.gripper_opening);
        let touched =
            fingers.len() >= 2 && fingers.iter().all(|f| f.get(o).copied().unwrap_or(false));
        if let (true, false, Some(obj)) = (touched, opening, s.objects.get(o)) {
            self.last_hold_z_m = Some(obj.position_m().z);
        }
        self.carried |= judge.grasped(s, o);
    }

    /// Whether `s` passes the episode's handling rules: a set-down skill's object has fallen at
    /// most [`MAX_DROP_M`] since the gripper last held it; a push's was never carried.
    pub fn holds(&self, task: &TaskSpec, s: &PhysicsState) -> bool {
        if task.skill == SkillKind::Push {
            return !self.carried;
        }
        if !task.skill.sets_down() {
            return true;
        }
        let now = task.goal_object_index().and_then(|o| s.objects.get(o));
        match (self.last_hold_z_m, now) {
            (Some(z), Some(obj)) => z - obj.position_m().z <= MAX_DROP_M,
            _ => true,
        }
    }
}

/// Weights of the dense reward terms.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RewardWeights {
    pub reach: f64,
    pub grasp: f64,
    pub lift: f64,
    pub goal: f64,
    pub success: f64,
    pub table_collision: f64,
    pub joint_limit: f64,
    pub energy_per_j: f64,
}

impl Default for RewardWeights {
    fn default() -> Self {
        RewardWeights {
            reach: 1.0,
            grasp: 1.0,
            lift: 1.0,
            goal: 2.0,
            success: 5.0,
            table_collision: 1.0,
            joint_limit: 0.5,
            energy_per_j: 0.01,
        }
    }
}

/// The dense reward of one control step, term by term (already weighted), and their sum.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct RewardTerms {
    pub reach: f64,
    /// Held: in the gripper, or on the spatula (scoop, flip).
    pub grasp: f64,
    /// Progress while held: lifted (lift height) or scooped (scoop height); flip: turned over.
    pub lift: f64,
    pub goal: f64,
    pub success: f64,
    pub table_collision: f64,
    pub joint_limit: f64,
    pub energy: f64,
    pub total: f64,
}

/// Why an episode failed outright.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Failure {
    /// A fragile object saw a contact force above its threshold.
    Broken { object: String },
}

/// Half the object's height along its own z (cubes, discs), for resting tests.
pub fn half_height_m(kind: &ObjectKind) -> f64 {
    kind.half_extents_m()[2]
}

fn half_width_m(kind: &ObjectKind) -> f64 {
    let h = kind.half_extents_m();
    h[0].min(h[1])
}

/// Objects `a` and `b` touch at the end of the step.
fn objects_touch(s: &PhysicsState, a: usize, b: usize) -> bool {
    s.contacts
        .object_touch
        .get(a)
        .and_then(|r| r.get(b))
        .copied()
        .unwrap_or(false)
}

/// Evaluates predicates and rewards for one task against states; `initial` is the state at
/// the start of the episode.
#[derive(Clone, Copy, Debug)]
pub struct Judge<'a> {
    pub task: &'a TaskSpec,
    pub initial: &'a PhysicsState,
    pub weights: &'a RewardWeights,
}

impl<'a> Judge<'a> {
    fn object(&self) -> Option<usize> {
        self.task.goal_object_index()
    }

    fn support(&self) -> Option<usize> {
        self.task.goal_support_index()
    }

    fn zone_center(&self) -> Option<Vector3<f64>> {
        let z = self.task.goal_zone()?;
        Some(Vector3::from(z.center_m))
    }

    /// Both (all) fingers touch object `o` and it is off the table and above its start.
    pub fn grasped(&self, s: &PhysicsState, o: usize) -> bool {
        let fingers = &s.contacts.finger_touch;
        let all_touch =
            fingers.len() >= 2 && fingers.iter().all(|f| f.get(o).copied().unwrap_or(false));
        all_touch && !self.on_table(s, o) && self.height_gain(s, o) > LIFTED_M
    }

    fn on_table(&self, s: &PhysicsState, o: usize) -> bool {
        s.contacts.object_on_table.get(o).copied().unwrap_or(false)
    }

    fn released(&self, s: &PhysicsState, o: usize) -> bool {
        s.contacts
            .finger_touch
            .iter()
            .all(|f| !f.get(o).copied().unwrap_or(false))
            && !s.contacts.tool_touch.get(o).copied().unwrap_or(false)
    }

    fn height_gain(&self, s: &PhysicsState, o: usize) -> f64 {
        match (s.objects.get(o), self.initial.objects.get(o)) {
            (Some(now), Some(start)) => now.position_m().z - start.position_m().z,
            _ => 0.0,
        }
    }

    fn at_rest(&self, s: &PhysicsState, o: usize) -> bool {
        s.objects
            .get(o)
            .is_some_and(|x| x.at_rest(REST_LIN_M_S, REST_ANG_RAD_S))
    }

    /// Object `o` is inside the goal zone's footprint and resting on the table.
    fn in_zone(&self, s: &PhysicsState, o: usize) -> bool {
        let Some(zone) = self.task.goal_zone() else {
            return false;
        };
        let Some(obj) = s.objects.get(o) else {
            return false;
        };
        let p = obj.position_m();
        (p.x - zone.center_m[0]).abs() <= zone.half_extents_m[0]
            && (p.y - zone.center_m[1]).abs() <= zone.half_extents_m[1]
            && self.on_table(s, o)
    }

    /// The skill's physics success predicate at this instant (the episode additionally requires
    /// it to hold for `goal.hold_s`). A broken fragile object is never a success.
    pub fn success(&self, s: &PhysicsState) -> bool {
        if self.failure(s).is_some() {
            return false;
        }
        let task = self.task;
        match task.skill {
            SkillKind::Reach => self
                .zone_center()
                .is_some_and(|c| (s.ee_position_m() - c).norm() <= task.goal.reach_tolerance_m),
            SkillKind::Push => self
                .object()
                .is_some_and(|o| self.in_zone(s, o) && self.height_gain(s, o) < LIFTED_M),
            SkillKind::Grasp => self.object().is_some_and(|o| self.grasped(s, o)),
            SkillKind::Lift => self.object().is_some_and(|o| {
                self.grasped(s, o) && self.height_gain(s, o) >= task.goal.lift_height_m
            }),
            SkillKind::Place => self
                .object()
                .is_some_and(|o| self.in_zone(s, o) && self.released(s, o) && self.at_rest(s, o)),
            SkillKind::Stack => match (self.object(), self.support()) {
                (Some(o), Some(b)) => self.stacked(s, o, b),
                _ => false,
            },
            SkillKind::Scoop => match (self.object(), self.support()) {
                (Some(o), Some(b)) => {
                    let on_tool = s.contacts.tool_touch.get(o).copied().unwrap_or(false);
                    on_tool && !objects_touch(s, o, b) && self.height_gain(s, o) >= SCOOP_HEIGHT_M
                }
                _ => false,
            },
            SkillKind::Flip => match (self.object(), self.support()) {
                (Some(o), Some(b)) => {
                    let touching = objects_touch(s, o, b);
                    let upside_down = s.objects.get(o).is_some_and(|x| x.up_axis().z < -0.8);
                    let started_up = self
                        .initial
                        .objects
                        .get(o)
                        .is_some_and(|x| x.up_axis().z > 0.8);
                    touching
                        && upside_down
                        && started_up
                        && self.released(s, o)
                        && self.at_rest(s, o)
                }
                _ => false,
            },
        }
    }

    fn stacked(&self, s: &PhysicsState, o: usize, b: usize) -> bool {
        let (Some(top), Some(base)) = (s.objects.get(o), s.objects.get(b)) else {
            return false;
        };
        let (Some(top_spec), Some(base_spec)) =
            (self.task.objects.get(o), self.task.objects.get(b))
        else {
            return false;
        };
        let d = top.position_m() - base.position_m();
        let expected_dz = half_height_m(&top_spec.kind) + half_height_m(&base_spec.kind);
        let touching = objects_touch(s, o, b);
        touching
            && d.xy().norm() <= half_width_m(&base_spec.kind)
            && (d.z - expected_dz).abs() <= 0.01
            && self.on_table(s, b)
            && !self.on_table(s, o)
            && self.released(s, o)
            && self.at_rest(s, o)
    }

    /// Whether the object is held (in the gripper; on the spatula for the kitchen's skills)
    /// and how far along its goal it is, in [0, 1]: lifted toward the goal height while held,
    /// scooped toward the scoop height while on the blade, turned over toward upside down
    /// (flip, held or not).
    fn holding_progress(&self, s: &PhysicsState, o: usize) -> (bool, f64) {
        let on_tool = || s.contacts.tool_touch.get(o).copied().unwrap_or(false);
        let raised = |goal_m: f64| (self.height_gain(s, o) / goal_m.max(1e-6)).clamp(0.0, 1.0);
        match self.task.skill {
            SkillKind::Scoop => {
                let held = on_tool();
                (held, if held { raised(SCOOP_HEIGHT_M) } else { 0.0 })
            }
            SkillKind::Flip => {
                let up_z = s.objects.get(o).map_or(1.0, |x| x.up_axis().z);
                (on_tool(), ((1.0 - up_z) / 2.0).clamp(0.0, 1.0))
            }
            _ => {
                let held = self.grasped(s, o);
                let goal_m = self.task.goal.lift_height_m;
                (held, if held { raised(goal_m) } else { 0.0 })
            }
        }
    }

    /// An outright failure (integrity rule).
    pub fn failure(&self, s: &PhysicsState) -> Option<Failure> {
        self.task.objects.iter().enumerate().find_map(|(i, spec)| {
            let limit = spec.fragile_force_n?;
            let peak = s
                .contacts
                .object_peak_force_n
                .get(i)
                .copied()
                .unwrap_or(0.0);
            (peak > limit).then(|| Failure::Broken {
                object: spec.name.clone(),
            })
        })
    }

    /// The dense reward terms of a step ending in state `s`.
    pub fn reward(&self, s: &PhysicsState) -> RewardTerms {
        let w = self.weights;
        let ee = s.ee_position_m();
        let object = self.object();
        let object_pos = object
            .and_then(|o| s.objects.get(o))
            .map(|x| x.position_m());
        let shaping = |d: f64| 1.0 - (5.0 * d).tanh();
        let reach_target = match self.task.skill {
            SkillKind::Reach => self.zone_center(),
            _ => object_pos,
        };
        let mut t = RewardTerms {
            reach: w.reach * reach_target.map_or(0.0, |p| shaping((ee - p).norm())),
            ..RewardTerms::default()
        };
        if let Some(o) = object {
            let (held, progress) = self.holding_progress(s, o);
            t.grasp = w.grasp * f64::from(u8::from(held));
            t.lift = w.lift * progress;
            let goal_pos = match self.task.skill {
                SkillKind::Push | SkillKind::Place => self.zone_center(),
                SkillKind::Stack | SkillKind::Scoop | SkillKind::Flip => self
                    .support()
                    .and_then(|b| s.objects.get(b))
                    .map(|x| x.position_m()),
                _ => None,
            };
            if let (Some(p), Some(g)) = (object_pos, goal_pos) {
                t.goal = w.goal * shaping((p.xy() - g.xy()).norm());
            }
        }
        t.success = w.success * f64::from(u8::from(self.success(s)));
        t.table_collision = -w.table_collision
            * f64::from(u8::from(s.contacts.robot_env_force_n > TABLE_COLLISION_N));
        t.joint_limit = -w.joint_limit * s.joint_limit_hits as f64;
        t.energy = -w.energy_per_j * s.motor_energy_j;
        t.total = t.reach
            + t.grasp
            + t.lift
            + t.goal
            + t.success
            + t.table_collision
            + t.joint_limit
            + t.energy;
        t
    }
}
