//! Actions: joint-position deltas or end-effector delta poses (through IK), plus the gripper.
//! Actions are normalised to [-1, 1] per component and scaled by `ActionScale`; they move the
//! commanded target, which the PD motors track at the physics rate.

use serde::{Deserialize, Serialize};

/// One control-step command.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "mode", rename_all = "snake_case")]
pub enum Action {
    /// Arm joint target deltas (one per arm joint, in [-1, 1] × `max_joint_step_rad`) and the
    /// gripper opening target in [0, 1] (1 = open).
    JointDelta { dq: Vec<f64>, gripper: f64 },
    /// Absolute arm joint targets (rad or m; clamped to the joint limits) and the gripper
    /// opening target in [0, 1]. Used to replay refined joint-space trajectories.
    JointPosition { q_rad: Vec<f64>, gripper: f64 },
    /// End-effector target delta in the world frame: translation in [-1, 1]³ ×
    /// `max_ee_step_m`, rotation vector (axis × angle) in [-1, 1]³ × `max_ee_rot_rad`; the
    /// gripper opening target in [0, 1].
    EeDelta {
        dpos: [f64; 3],
        drot: [f64; 3],
        gripper: f64,
    },
}

impl Action {
    /// Flat vector for recording and learning: mode-specific components then the gripper.
    pub fn to_vec(&self) -> Vec<f64> {
        match self {
            Action::JointDelta { dq: q, gripper } | Action::JointPosition { q_rad: q, gripper } => {
                q.iter().copied().chain(std::iter::once(*gripper)).collect()
            }
            Action::EeDelta {
                dpos,
                drot,
                gripper,
            } => dpos
                .iter()
                .chain(drot)
                .copied()
                .chain(std::iter::once(*gripper))
                .collect(),
        }
    }

    pub fn gripper(&self) -> f64 {
        match self {
            Action::JointDelta { gripper, .. }
            | Action::JointPosition { gripper, .. }
            | Action::EeDelta { gripper, .. } => *gripper,
        }
    }

    /// Every component finite; returns a description of the first bad one.
    pub fn check(&self, arm_dof: usize) -> Result<(), String> {
        if let Action::JointDelta { dq: q, .. } | Action::JointPosition { q_rad: q, .. } = self {
            if q.len() != arm_dof {
                return Err(format!(
                    "joint action has {} components, the arm has {arm_dof} joints",
                    q.len()
                ));
            }
        }
        match self.to_vec().iter().position(|v| !v.is_finite()) {
            Some(i) => Err(format!("component {i} is not finite")),
            None => Ok(()),
        }
    }
}

/// Which action space a controller speaks (recorded with episodes).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ControlMode {
    JointDelta,
    JointPosition,
    EeDelta,
}
