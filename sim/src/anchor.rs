//! The speed/fidelity anchors: MuJoCo scenes rebuilt in rapier — the UR5e-class arm-cube
//! (`shared/anchors/mujoco_arm_cube.xml`) and the Panda-class panda-cube
//! (`benches/anchors/mujoco_panda_cube.xml`) — a throughput bench over many independent worlds,
//! fidelity probes, and the side-by-side report with MuJoCo behind `coevolve bench physics`.
//!
//! Main types: [`Anchor`] (which scene) → [`AnchorModel`] (the scene as data),
//! [`AnchorScene`] (one world: `new → set_targets → step`), [`AnchorConfig`]
//! (solver settings), [`run_physics_bench`] → [`PhysicsBench`], [`fidelity`] → [`Fidelity`],
//! [`physics_report`] → [`PhysicsReport`]. Not here: the robot scenes used for learning (they
//! reuse the articulation kind and solver settings chosen here, [`AnchorConfig::default`]).
//!
//! # How MuJoCo's model maps onto rapier
//! - Servos (`<position kp kv>`): MuJoCo applies `kp·(target − q) − kv·q̇`. Multibody: an
//!   implicit joint spring (`MultibodyJoint::set_spring`, stiffness `kp`, rest = target) plus
//!   per-DoF joint damping, both inside the articulated-body solve, so no solver iteration is
//!   spent on them. Impulse joints: a `MotorModel::ForceBased` position motor (a soft
//!   constraint with the same spring-damper law). Both are backward Euler in `q`, MuJoCo's
//!   `implicitfast` is explicit in `q`; [`servo_damping`] removes the `kp·h` damping that this
//!   adds so the two discrete updates coincide.
//! - Joint damping (2, fingers 5): added to the servo damping (the same `−d·q̇` term).
//! - Armature 0.1: multibody has MuJoCo's per-DoF armature natively. Impulse joints have no
//!   generalized coordinates: a hinge's armature goes on its child's inertia about the joint
//!   axis (so it also loads every joint upstream of that child on a parallel axis: j2 sees
//!   ~0.4 kg·m² of armature instead of 0.1, ~10% of its inertia), slide armature is dropped.
//! - Contacts: parent/child pairs are filtered like MuJoCo's `filterparent`; friction 0.8;
//!   contact softness stays rapier's (MuJoCo's `solref`/`solimp` have no exact counterpart).
//!
//! # Why multibody, 1 substep (the defaults)
//! With servos, damping and armature inside the articulated solve, the multibody scene is
//! MuJoCo's discrete dynamics: its step responses match MuJoCo's to 4 digits at one substep,
//! and PGS sweeps only serve contacts. Impulse joints need ~16 PGS sweeps (or 4×4 substeps) to
//! get the shoulder's static sag within 10% of MuJoCo's (at 1×2 it sags 3× more), and are then
//! no faster than multibody. Rapier's motors on multibody joints also match, ~10% slower than
//! springs. Time goes mostly into rapier's multibody internals (dense `JᵀMJ` mass matrix per
//! link, two LU factorizations per step), not into solver iterations.

mod bench;
mod fidelity;
pub mod model;
mod panda;
mod report;
mod scene;
#[cfg(test)]
mod tests;

use serde::{Deserialize, Serialize};

use crate::error::{Result, SimError};

pub use bench::{run_physics_bench, PhysicsBench, PhysicsBenchConfig};
pub use fidelity::{fidelity, Fidelity, StepResponse};
pub use model::{AnchorModel, JointSpec, JointType, ARM_CUBE, DT_S};
pub use panda::PANDA_CUBE;
pub use report::{
    physics_report, physics_report_with, FidelityReport, MujocoBench, PhysicsReport,
    PhysicsReportConfig,
};
pub use scene::{integration_parameters, servo_damping, AnchorScene};

pub use crate::config::ArticulationKind;

/// Which anchor scene.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Anchor {
    /// The UR5e-class arm over a cube (`mujoco_arm_cube.xml`).
    #[default]
    ArmCube,
    /// The Panda-class 7-DOF arm with its hand over a cube (`mujoco_panda_cube.xml`).
    PandaCube,
}

impl Anchor {
    /// Every anchor scene.
    pub const ALL: [Anchor; 2] = [Anchor::ArmCube, Anchor::PandaCube];

    /// The scene as data.
    pub fn model(self) -> &'static AnchorModel {
        match self {
            Anchor::ArmCube => &ARM_CUBE,
            Anchor::PandaCube => &PANDA_CUBE,
        }
    }

    /// The scene's name (`arm-cube`, `panda-cube`).
    pub fn name(self) -> &'static str {
        self.model().name
    }
}

impl std::str::FromStr for Anchor {
    type Err = SimError;

    fn from_str(s: &str) -> Result<Self> {
        Anchor::ALL
            .into_iter()
            .find(|a| a.name() == s)
            .ok_or_else(|| {
                SimError::config(
                    "anchor",
                    format!("`{s}` is not an anchor scene (arm-cube, panda-cube)"),
                )
            })
    }
}

/// Solver settings for the anchor scene (and the robot scenes that copy them).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct AnchorConfig {
    /// Physics step, s. Default 0.002 (the MJCF's).
    pub dt_s: f32,
    /// Rapier `num_solver_iterations`: solver substeps per step. Default 1.
    pub solver_iterations: usize,
    /// Rapier `num_internal_pgs_iterations` per substep. Default 2.
    pub pgs_iterations: usize,
    /// Rapier `num_internal_stabilization_iterations` per substep. Default 1.
    pub stabilization_iterations: usize,
    /// Rapier `warmstart_joints` (impulse joints only). Default true.
    pub warmstart_joints: bool,
    /// Rapier `normalized_prediction_distance`: contacts are generated this far before touching,
    /// m. Default 0.005 (rapier's 0.02 creates many speculative multibody contacts).
    pub prediction_distance_m: f32,
    /// Continuous collision detection (rapier `max_ccd_substeps = 1`; off: 0). Default false:
    /// bodies here move < 3 m/s, i.e. < 6 mm per 2 ms step.
    pub ccd: bool,
    /// Subtract `kp·h` from the servo damping so rapier's backward-Euler servo equals MuJoCo's
    /// `implicitfast` one ([`servo_damping`]). Default true.
    pub match_mujoco_discretization: bool,
}

impl Default for AnchorConfig {
    fn default() -> Self {
        Self {
            dt_s: model::DT_S,
            solver_iterations: 1,
            pgs_iterations: 2,
            stabilization_iterations: 1,
            warmstart_joints: true,
            prediction_distance_m: 0.005,
            ccd: false,
            match_mujoco_discretization: true,
        }
    }
}

impl AnchorConfig {
    /// Checks the ranges rapier needs.
    pub fn validate(&self) -> Result<()> {
        if !(self.dt_s > 0.0 && self.dt_s.is_finite()) {
            return Err(SimError::config(
                "anchor.dt_s",
                format!("{} is not a positive number of seconds", self.dt_s),
            ));
        }
        if self.solver_iterations == 0 {
            return Err(SimError::config(
                "anchor.solver_iterations",
                "0: rapier needs at least one substep",
            ));
        }
        if self.pgs_iterations == 0 {
            return Err(SimError::config(
                "anchor.pgs_iterations",
                "0: at least one PGS sweep per substep",
            ));
        }
        if !(self.prediction_distance_m >= 0.0 && self.prediction_distance_m.is_finite()) {
            return Err(SimError::config(
                "anchor.prediction_distance_m",
                format!(
                    "{} is not a non-negative distance",
                    self.prediction_distance_m
                ),
            ));
        }
        Ok(())
    }
}
