//! Per-control-step contact summary, accumulated over the physics sub-steps: who touches whom
//! and how hard. Every force comes from the solver's contact impulses (impulse / dt).

use rapier3d::prelude::*;
use serde::{Deserialize, Serialize};

/// What a collider is, for contact bookkeeping.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    RobotLink,
    /// Finger body of gripper joint `i`.
    Finger(usize),
    Tool,
    Table,
    Floor,
    Object(usize),
}

/// Contacts seen during one control step.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ContactSummary {
    /// `finger_touch[f][o]`: finger `f` touched object `o` at the last sub-step.
    pub finger_touch: Vec<Vec<bool>>,
    /// The tool (spatula) touched object `o` at the last sub-step.
    pub tool_touch: Vec<bool>,
    /// Object `o` rests on (touches) the table at the last sub-step.
    pub object_on_table: Vec<bool>,
    /// `object_touch[a][b]`: objects `a` and `b` touch at the last sub-step (symmetric).
    pub object_touch: Vec<Vec<bool>>,
    /// Peak total contact force on each object during the step (N).
    pub object_peak_force_n: Vec<f64>,
    /// Peak contact force between the robot (links, fingers, tool) and the table or floor (N).
    pub robot_env_force_n: f64,
    /// Deepest penetration of any contact during the step (m, positive = overlapping).
    pub max_penetration_m: f64,
}

impl ContactSummary {
    pub fn new(n_fingers: usize, n_objects: usize) -> Self {
        ContactSummary {
            finger_touch: vec![vec![false; n_objects]; n_fingers],
            tool_touch: vec![false; n_objects],
            object_on_table: vec![false; n_objects],
            object_touch: vec![vec![false; n_objects]; n_objects],
            object_peak_force_n: vec![0.0; n_objects],
            robot_env_force_n: 0.0,
            max_penetration_m: 0.0,
        }
    }

    /// Clears the "touching now" flags before a sub-step (peaks are kept).
    pub fn clear_touch(&mut self) {
        for row in self
            .finger_touch
            .iter_mut()
            .chain(self.object_touch.iter_mut())
        {
            row.iter_mut().for_each(|t| *t = false);
        }
        self.tool_touch.iter_mut().for_each(|t| *t = false);
        self.object_on_table.iter_mut().for_each(|t| *t = false);
    }

    /// Adds the contacts of the world's current narrow phase (after a physics step).
    pub fn accumulate(&mut self, world: &PhysicsWorld, roles: &[Option<Role>], dt_s: f64) {
        self.clear_touch();
        let role = |h: ColliderHandle| roles.get(h.into_raw_parts().0 as usize).copied().flatten();
        let n_objects = self.tool_touch.len();
        let mut object_force = vec![0.0f64; n_objects];
        for pair in world.narrow_phase.contact_pairs() {
            if !pair.has_any_active_contact() {
                continue;
            }
            let (Some(a), Some(b)) = (role(pair.collider1), role(pair.collider2)) else {
                continue;
            };
            for m in pair.manifolds() {
                for p in &m.points {
                    self.max_penetration_m = self.max_penetration_m.max(-p.dist as f64);
                }
            }
            let force_n = pair.total_impulse_magnitude() as f64 / dt_s;
            for (x, y) in [(a, b), (b, a)] {
                match (x, y) {
                    (Role::Object(o), other) => {
                        if let Some(f) = object_force.get_mut(o) {
                            *f += force_n;
                        }
                        match other {
                            Role::Table => set(&mut self.object_on_table, o),
                            Role::Finger(f) => {
                                if let Some(row) = self.finger_touch.get_mut(f) {
                                    set(row, o);
                                }
                            }
                            Role::Tool => set(&mut self.tool_touch, o),
                            Role::Object(p) => {
                                if let Some(row) = self.object_touch.get_mut(o) {
                                    set(row, p);
                                }
                            }
                            _ => {}
                        }
                    }
                    (Role::RobotLink | Role::Finger(_) | Role::Tool, Role::Table | Role::Floor) => {
                        self.robot_env_force_n = self.robot_env_force_n.max(force_n);
                    }
                    _ => {}
                }
            }
        }
        for (peak, f) in self.object_peak_force_n.iter_mut().zip(object_force) {
            *peak = peak.max(f);
        }
    }
}

fn set(flags: &mut [bool], i: usize) {
    if let Some(f) = flags.get_mut(i) {
        *f = true;
    }
}
