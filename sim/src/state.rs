//! What the simulator records each control step: observations for the policy and the physics
//! state that rewards and predicates are computed from.

use nalgebra::{Isometry3, Translation3, UnitQuaternion, Vector3};
use serde::{Deserialize, Serialize};

use crate::camera::CameraFrame;
use crate::scene::contacts::ContactSummary;

/// A pose as `[x, y, z, qx, qy, qz, qw]` (m, unit quaternion).
pub type Pose7 = [f64; 7];

pub fn pose7(iso: &Isometry3<f64>) -> Pose7 {
    let t = iso.translation.vector;
    let q = iso.rotation.into_inner().coords;
    [t.x, t.y, t.z, q.x, q.y, q.z, q.w]
}

pub fn iso_from_pose7(p: &Pose7) -> Isometry3<f64> {
    Isometry3::from_parts(
        Translation3::new(p[0], p[1], p[2]),
        UnitQuaternion::new_normalize(nalgebra::Quaternion::new(p[6], p[3], p[4], p[5])),
    )
}

/// A prop's state in the world frame.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ObjectState {
    pub world_from_object: Pose7,
    pub lin_vel_m_s: [f64; 3],
    pub ang_vel_rad_s: [f64; 3],
}

impl ObjectState {
    pub fn position_m(&self) -> Vector3<f64> {
        Vector3::new(
            self.world_from_object[0],
            self.world_from_object[1],
            self.world_from_object[2],
        )
    }

    /// The object's z axis in the world frame ("up" for discs and plates).
    pub fn up_axis(&self) -> Vector3<f64> {
        iso_from_pose7(&self.world_from_object).rotation * Vector3::z()
    }

    pub fn at_rest(&self, max_lin_m_s: f64, max_ang_rad_s: f64) -> bool {
        Vector3::from(self.lin_vel_m_s).norm() <= max_lin_m_s
            && Vector3::from(self.ang_vel_rad_s).norm() <= max_ang_rad_s
    }
}

/// The simulator's physical state after a control step.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PhysicsState {
    pub time_s: f64,
    /// Measured arm joint positions / velocities.
    pub q_rad: Vec<f64>,
    pub qd_rad_s: Vec<f64>,
    /// Measured gripper joint positions (m for prismatic fingers).
    pub gripper_q: Vec<f64>,
    /// Measured opening in [0, 1].
    pub gripper_opening: f64,
    pub world_from_ee: Pose7,
    pub objects: Vec<ObjectState>,
    pub contacts: ContactSummary,
    /// Mechanical energy spent by the arm motors during the step (J, Σ|τ·q̇|·dt).
    pub motor_energy_j: f64,
    /// Arm joints within the limit margin at the end of the step.
    pub joint_limit_hits: usize,
}

impl PhysicsState {
    pub fn ee_position_m(&self) -> Vector3<f64> {
        Vector3::new(
            self.world_from_ee[0],
            self.world_from_ee[1],
            self.world_from_ee[2],
        )
    }
}

/// What a policy sees.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Observation {
    pub time_s: f64,
    /// Proprioception.
    pub q_rad: Vec<f64>,
    pub qd_rad_s: Vec<f64>,
    pub gripper_opening: f64,
    pub world_from_ee: Pose7,
    /// The commanded arm joint targets (what the controller is servoing to).
    pub q_target_rad: Vec<f64>,
    /// Privileged object state (for state-based policies and scripted controllers).
    pub objects: Vec<ObjectState>,
    /// Camera images, in the order of `SimConfig::cameras` (empty when none configured).
    #[serde(skip)]
    pub images: Vec<CameraFrame>,
}
