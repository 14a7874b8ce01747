//! Forward kinematics over the whole tree, and name lookups.

use nalgebra::{Isometry3, Translation3, UnitQuaternion};

use crate::model::{Joint, JointId, JointKind, LinkId, RobotModel};

impl Joint {
    /// `joint_from_child` for joint position `q` (rad or m): the motion about/along the axis.
    pub fn joint_from_child(&self, q: f64) -> Isometry3<f64> {
        match self.kind {
            JointKind::Revolute | JointKind::Continuous => Isometry3::from_parts(
                Translation3::identity(),
                UnitQuaternion::from_axis_angle(&self.axis, q),
            ),
            JointKind::Prismatic => Isometry3::from_parts(
                Translation3::from(self.axis.into_inner() * q),
                UnitQuaternion::identity(),
            ),
            JointKind::Fixed => Isometry3::identity(),
        }
    }

    /// `parent_from_child` for joint position `q`.
    pub fn parent_from_child(&self, q: f64) -> Isometry3<f64> {
        self.parent_from_joint * self.joint_from_child(q)
    }
}

impl RobotModel {
    /// The link called `name`.
    pub fn link_id(&self, name: &str) -> Option<LinkId> {
        self.links.iter().position(|l| l.name == name)
    }

    /// The joint called `name`.
    pub fn joint_id(&self, name: &str) -> Option<JointId> {
        self.joints.iter().position(|j| j.name == name)
    }

    /// Position actually applied at `joint`: its own entry of `joint_positions`, or for a
    /// mimic joint `multiplier * q_source + offset` (chains followed). Missing entries read 0.
    pub fn effective_position(&self, joint: JointId, joint_positions: &[f64]) -> f64 {
        let mut id = joint;
        let mut scale = 1.0;
        let mut shift = 0.0;
        // Mimic chains are acyclic (checked at load), so this ends within joints.len() steps.
        for _ in 0..=self.joints.len() {
            match self.joints.get(id).and_then(|j| j.mimic.as_ref()) {
                Some(m) => {
                    shift += scale * m.offset;
                    scale *= m.multiplier;
                    id = m.joint;
                }
                None => break,
            }
        }
        scale * joint_positions.get(id).copied().unwrap_or(0.0) + shift
    }

    /// `root_from_link` for every link (indexed by [`LinkId`]).
    ///
    /// `joint_positions` is indexed by [`JointId`] and should have `joints.len()` entries;
    /// entries of fixed joints are ignored, mimic joints follow their source joint, and
    /// missing entries are read as 0.
    pub fn link_poses(&self, joint_positions: &[f64]) -> Vec<Isometry3<f64>> {
        let mut poses = vec![Isometry3::identity(); self.links.len()];
        for (id, joint) in self.joints.iter().enumerate() {
            let q = self.effective_position(id, joint_positions);
            let root_from_parent = poses.get(joint.parent).copied().unwrap_or_default();
            if let Some(pose) = poses.get_mut(joint.child) {
                *pose = root_from_parent * joint.parent_from_child(q);
            }
        }
        poses
    }

    /// Joints from the root down to `link` (root side first), fixed ones included.
    pub fn chain_to(&self, link: LinkId) -> Vec<JointId> {
        let mut chain = Vec::new();
        let mut current = self.links.get(link).and_then(|l| l.parent_joint);
        while let Some(j) = current {
            if chain.len() > self.joints.len() {
                break;
            }
            chain.push(j);
            current = self
                .joints
                .get(j)
                .and_then(|joint| self.links.get(joint.parent))
                .and_then(|l| l.parent_joint);
        }
        chain.reverse();
        chain
    }

    /// Movable, non-mimic joints: the ones a controller commands.
    pub fn actuated_joints(&self) -> Vec<JointId> {
        (0..self.joints.len())
            .filter(|&j| self.joints[j].kind.is_movable() && self.joints[j].mimic.is_none())
            .collect()
    }

    /// Sum of all link masses (kg).
    pub fn total_mass_kg(&self) -> f64 {
        self.links
            .iter()
            .filter_map(|l| l.inertial.as_ref())
            .map(|i| i.mass_kg)
            .sum()
    }
}
