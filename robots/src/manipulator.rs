//! [`Manipulator`]: a [`RobotModel`] seen as an arm (root → end-effector chain) plus gripper.

use nalgebra::{Isometry3, Matrix6xX, Vector3};

use crate::error::{Result, RobotError};
use crate::model::{Joint, JointId, JointKind, JointLimits, LinkId, RobotModel};

/// An arm with an end-effector link and (optionally) gripper joints.
///
/// - `arm_joints`: the movable, non-mimic joints on the root → `ee_link` path, root side first.
///   `q_arm_rad[i]` is the position of `arm_joints[i]` (rad, or m for prismatic joints).
/// - `gripper_joints`: every other movable, non-mimic joint (the fingers). A finger joint's
///   lower limit is "closed" and its upper limit "open".
/// - `home_q_rad`: a default arm configuration (midpoint of the limits, 0 for continuous
///   joints, unless overridden, e.g. by [`crate::load_builtin`]).
#[derive(Clone, Debug)]
pub struct Manipulator {
    pub model: RobotModel,
    pub arm_joints: Vec<JointId>,
    pub gripper_joints: Vec<JointId>,
    pub ee_link: LinkId,
    pub home_q_rad: Vec<f64>,
    /// The root → end-effector chain, precomputed so that kinematics allocates nothing.
    chain: Vec<ChainJoint>,
}

/// A joint of the root → end-effector chain and how its position follows the arm
/// configuration: `scale · base + shift` (a mimic chain followed to its source), `base` being
/// arm joint `source` (its home where the configuration is short) or the constant `base_const`
/// (a gripper joint closed, a fixed joint 0).
#[derive(Clone, Debug)]
struct ChainJoint {
    joint: JointId,
    source: Option<usize>,
    base_const: f64,
    scale: f64,
    shift: f64,
    /// The Jacobian column this joint contributes to, with its weight.
    column: Option<(usize, f64)>,
}

impl Manipulator {
    /// Views `model` as an arm ending at the link named `ee_link`.
    pub fn new(model: RobotModel, ee_link: &str) -> Result<Self> {
        let ee = model
            .link_id(ee_link)
            .ok_or_else(|| RobotError::UnknownEeLink {
                file: model.source.clone(),
                link: ee_link.into(),
            })?;
        let actuated = model.actuated_joints();
        let arm_joints: Vec<JointId> = model
            .chain_to(ee)
            .into_iter()
            .filter(|j| actuated.contains(j))
            .collect();
        if arm_joints.is_empty() {
            return Err(RobotError::NoArmJoints {
                file: model.source.clone(),
                link: ee_link.into(),
            });
        }
        let gripper_joints = actuated
            .into_iter()
            .filter(|j| !arm_joints.contains(j))
            .collect();
        let home_q_rad = arm_joints
            .iter()
            .map(|&j| default_home(&model.joints[j].limits))
            .collect();
        let mut manipulator = Self {
            model,
            arm_joints,
            gripper_joints,
            ee_link: ee,
            home_q_rad,
            chain: Vec::new(),
        };
        manipulator.chain = manipulator.build_chain();
        Ok(manipulator)
    }

    /// The chain's joints with their position rules (as [`Manipulator::joint_positions`] with
    /// the gripper closed, then [`RobotModel::effective_position`]).
    fn build_chain(&self) -> Vec<ChainJoint> {
        self.model
            .chain_to(self.ee_link)
            .into_iter()
            .map(|joint| {
                let (mut id, mut scale, mut shift) = (joint, 1.0, 0.0);
                for _ in 0..=self.model.joints.len() {
                    match self.model.joints.get(id).and_then(|j| j.mimic.as_ref()) {
                        Some(m) => {
                            shift += scale * m.offset;
                            scale *= m.multiplier;
                            id = m.joint;
                        }
                        None => break,
                    }
                }
                let source = self.arm_joints.iter().position(|&a| a == id);
                let base_const = match self.model.joints.get(id) {
                    Some(j) if source.is_none() && self.gripper_joints.contains(&id) => {
                        let l = &j.limits;
                        if l.lower.is_finite() && l.upper.is_finite() {
                            l.lower + (l.upper - l.lower) * 0.0
                        } else {
                            clamp_to(0.0, l)
                        }
                    }
                    _ => 0.0,
                };
                ChainJoint {
                    joint,
                    source,
                    base_const,
                    scale,
                    shift,
                    column: self.arm_column(joint),
                }
            })
            .collect()
    }

    /// Number of arm joints.
    pub fn dof(&self) -> usize {
        self.arm_joints.len()
    }

    /// Name of the end-effector link.
    pub fn ee_link_name(&self) -> &str {
        self.model
            .links
            .get(self.ee_link)
            .map_or("", |l| l.name.as_str())
    }

    /// Limits of the arm joints, in `arm_joints` order.
    pub fn arm_limits(&self) -> Vec<JointLimits> {
        self.arm_joints
            .iter()
            .map(|&j| self.model.joints[j].limits)
            .collect()
    }

    /// Clamps an arm configuration into the joint limits, in place.
    pub fn clamp_arm(&self, q_arm_rad: &mut [f64]) {
        for (q, &j) in q_arm_rad.iter_mut().zip(&self.arm_joints) {
            let l = &self.model.joints[j].limits;
            *q = clamp_to(*q, l);
        }
    }

    /// The full joint vector (indexed by [`JointId`]) for an arm configuration and a gripper
    /// opening in [0, 1] (0 = closed = lower limit, 1 = open = upper limit; clamped).
    /// Missing arm entries take `home_q_rad`; mimic joints get `multiplier * q + offset`;
    /// fixed joints 0.
    pub fn joint_positions(&self, q_arm_rad: &[f64], gripper_opening: f64) -> Vec<f64> {
        let mut q = vec![0.0; self.model.joints.len()];
        for (i, &j) in self.arm_joints.iter().enumerate() {
            let value = q_arm_rad
                .get(i)
                .or(self.home_q_rad.get(i))
                .copied()
                .unwrap_or(0.0);
            q[j] = value;
        }
        let opening = if gripper_opening.is_nan() {
            0.0
        } else {
            gripper_opening.clamp(0.0, 1.0)
        };
        for &j in &self.gripper_joints {
            let l = &self.model.joints[j].limits;
            q[j] = if l.lower.is_finite() && l.upper.is_finite() {
                l.lower + (l.upper - l.lower) * opening
            } else {
                clamp_to(0.0, l)
            };
        }
        for j in 0..q.len() {
            if self.model.joints[j].mimic.is_some() {
                q[j] = self.model.effective_position(j, &q);
            }
        }
        q
    }

    /// `root_from_ee` for an arm configuration (allocates nothing).
    pub fn fk(&self, q_arm_rad: &[f64]) -> Isometry3<f64> {
        self.walk_chain(q_arm_rad, |_, _, _| {})
    }

    /// Geometric Jacobian (6 × dof) of the end-effector origin in the root frame: rows 0..3
    /// linear velocity (m/s), rows 3..6 angular velocity (rad/s), per unit arm joint velocity.
    /// Revolute/continuous column: `[z × (p_ee − p_j); z]`; prismatic: `[z; 0]`. A mimic joint
    /// on the chain adds `multiplier ×` its column to the column of the arm joint it follows.
    pub fn jacobian(&self, q_arm_rad: &[f64]) -> Matrix6xX<f64> {
        let mut jac = Matrix6xX::zeros(self.dof());
        self.jacobian_to(q_arm_rad, &mut jac);
        jac
    }

    /// [`Manipulator::jacobian`] into `jac` (resized only when it is not 6 × dof).
    pub fn jacobian_to(&self, q_arm_rad: &[f64], jac: &mut Matrix6xX<f64>) {
        if jac.ncols() != self.dof() {
            *jac = Matrix6xX::zeros(self.dof());
        }
        jac.fill(0.0);
        let p_ee = self.fk(q_arm_rad).translation.vector;
        self.walk_chain(q_arm_rad, |link, root_from_joint, column| {
            let Some((column, weight)) = column else {
                return;
            };
            let z = root_from_joint.rotation * link.axis.into_inner();
            let (linear, angular) = match link.kind {
                JointKind::Revolute | JointKind::Continuous => {
                    (z.cross(&(p_ee - root_from_joint.translation.vector)), z)
                }
                JointKind::Prismatic => (z, Vector3::zeros()),
                JointKind::Fixed => return,
            };
            let mut col = jac.column_mut(column);
            for r in 0..3 {
                col[r] += weight * linear[r];
                col[r + 3] += weight * angular[r];
            }
        });
    }

    /// The Jacobian column a chain joint contributes to, with its weight.
    fn arm_column(&self, j: JointId) -> Option<(usize, f64)> {
        if let Some(c) = self.arm_joints.iter().position(|&a| a == j) {
            return Some((c, 1.0));
        }
        let m = self.model.joints.get(j)?.mimic.as_ref()?;
        let c = self.arm_joints.iter().position(|&a| a == m.joint)?;
        Some((c, m.multiplier))
    }

    /// Walks the root → ee chain, calling `visit(joint, root_from_joint, column)` with each
    /// joint frame before its motion; returns `root_from_ee`.
    fn walk_chain(
        &self,
        q_arm_rad: &[f64],
        mut visit: impl FnMut(&Joint, &Isometry3<f64>, Option<(usize, f64)>),
    ) -> Isometry3<f64> {
        let mut root_from_link = Isometry3::identity();
        for c in &self.chain {
            let joint = &self.model.joints[c.joint];
            let base = match c.source {
                Some(i) => q_arm_rad
                    .get(i)
                    .or(self.home_q_rad.get(i))
                    .copied()
                    .unwrap_or(0.0),
                None => c.base_const,
            };
            let root_from_joint = root_from_link * joint.parent_from_joint;
            visit(joint, &root_from_joint, c.column);
            root_from_link = root_from_joint * joint.joint_from_child(c.scale * base + c.shift);
        }
        root_from_link
    }
}

/// Midpoint of finite limits; otherwise 0 clamped into the limits.
fn default_home(l: &JointLimits) -> f64 {
    if l.lower.is_finite() && l.upper.is_finite() {
        0.5 * (l.lower + l.upper)
    } else {
        clamp_to(0.0, l)
    }
}

/// Clamps `q` into `[lower, upper]` without panicking on odd limits (NaN limits are ignored).
pub(crate) fn clamp_to(q: f64, l: &JointLimits) -> f64 {
    q.max(l.lower).min(l.upper)
}
