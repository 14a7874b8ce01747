//! A printable/serialisable overview of a [`Manipulator`] (for the CLI and run logs).

use std::fmt;

use serde::Serialize;

use crate::manipulator::Manipulator;
use crate::model::{JointKind, MissingMesh};
use crate::rng::SplitMix64;

/// Configurations sampled for [`RobotSummary::reach_m`].
pub const REACH_SAMPLES: usize = 2000;

/// What a joint does in a [`Manipulator`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum JointRole {
    Arm,
    Gripper,
    Fixed,
    Mimic,
    /// Movable, not mimic, but neither arm nor gripper (cannot happen with
    /// [`Manipulator::new`], kept for manually assembled manipulators).
    Other,
}

/// One joint row. Infinite limits serialise as `null` in JSON.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct JointSummary {
    pub name: String,
    pub kind: JointKind,
    pub role: JointRole,
    pub lower: f64,
    pub upper: f64,
    pub velocity: f64,
    pub effort: f64,
}

/// One link row.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct LinkMass {
    pub name: String,
    pub mass_kg: f64,
}

/// Overview of a manipulator: identity, joints, masses, reach.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RobotSummary {
    pub name: String,
    pub source: String,
    pub model_hash: String,
    pub dof: usize,
    pub ee_link: String,
    pub joints: Vec<JointSummary>,
    pub total_mass_kg: f64,
    pub links: Vec<LinkMass>,
    /// Max over [`REACH_SAMPLES`] deterministic random configurations of
    /// ‖ee position − first arm joint origin‖ (m).
    pub reach_m: f64,
    pub missing_meshes: Vec<MissingMesh>,
}

impl RobotSummary {
    pub fn from_manipulator(m: &Manipulator) -> Self {
        let model = &m.model;
        let joints = model
            .joints
            .iter()
            .enumerate()
            .map(|(id, j)| JointSummary {
                name: j.name.clone(),
                kind: j.kind,
                role: if !j.kind.is_movable() {
                    JointRole::Fixed
                } else if j.mimic.is_some() {
                    JointRole::Mimic
                } else if m.arm_joints.contains(&id) {
                    JointRole::Arm
                } else if m.gripper_joints.contains(&id) {
                    JointRole::Gripper
                } else {
                    JointRole::Other
                },
                lower: j.limits.lower,
                upper: j.limits.upper,
                velocity: j.limits.velocity,
                effort: j.limits.effort,
            })
            .collect();
        let links = model
            .links
            .iter()
            .map(|l| LinkMass {
                name: l.name.clone(),
                mass_kg: l.inertial.as_ref().map_or(0.0, |i| i.mass_kg),
            })
            .collect();
        Self {
            name: model.name.clone(),
            source: model.source.clone(),
            model_hash: model.model_hash.clone(),
            dof: m.dof(),
            ee_link: m.ee_link_name().to_string(),
            joints,
            total_mass_kg: model.total_mass_kg(),
            links,
            reach_m: reach_estimate_m(m, REACH_SAMPLES),
            missing_meshes: model.missing_meshes.clone(),
        }
    }
}

impl Manipulator {
    /// See [`RobotSummary`].
    pub fn summary(&self) -> RobotSummary {
        RobotSummary::from_manipulator(self)
    }
}

/// The first arm joint's origin in the root frame (any movable joint above it taken at home,
/// closed); `None` for an arm without joints.
pub fn first_joint_origin(m: &Manipulator) -> Option<nalgebra::Vector3<f64>> {
    let joint = m.model.joints.get(*m.arm_joints.first()?)?;
    let poses = m.model.link_poses(&m.joint_positions(&m.home_q_rad, 0.0));
    let root_from_parent = poses.get(joint.parent).copied().unwrap_or_default();
    Some(
        (root_from_parent * joint.parent_from_joint)
            .translation
            .vector,
    )
}

/// Max distance from the first arm joint's origin to the end effector over `samples`
/// deterministic random configurations within the limits.
pub fn reach_estimate_m(m: &Manipulator, samples: usize) -> f64 {
    let Some(origin) = first_joint_origin(m) else {
        return 0.0;
    };
    let limits = m.arm_limits();
    let mut rng = SplitMix64::new(0x5EAC_4000_0000_0001);
    let mut reach: f64 = 0.0;
    let mut q = vec![0.0; limits.len()];
    for _ in 0..samples {
        for (qi, l) in q.iter_mut().zip(&limits) {
            *qi = rng.in_limits(l.lower, l.upper);
        }
        let ee = m.fk(&q).translation.vector;
        reach = reach.max((ee - origin).norm());
    }
    reach
}

fn limit(x: f64) -> String {
    if x.is_infinite() {
        if x > 0.0 { "inf" } else { "-inf" }.to_string()
    } else {
        format!("{x:.4}")
    }
}

impl fmt::Display for RobotSummary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "robot       {}", self.name)?;
        writeln!(f, "source      {}", self.source)?;
        writeln!(f, "model hash  {}", self.model_hash)?;
        writeln!(
            f,
            "dof         {} (end effector: {})",
            self.dof, self.ee_link
        )?;
        writeln!(f, "total mass  {:.3} kg", self.total_mass_kg)?;
        writeln!(f, "reach       {:.3} m", self.reach_m)?;
        writeln!(f)?;
        let width = self
            .joints
            .iter()
            .map(|j| j.name.len())
            .max()
            .unwrap_or(5)
            .max(5);
        writeln!(
            f,
            "{:<width$}  {:<10}  {:<7}  {:>9}  {:>9}  {:>9}  {:>9}",
            "joint", "kind", "role", "lower", "upper", "velocity", "effort"
        )?;
        for j in &self.joints {
            let kind = format!("{:?}", j.kind).to_lowercase();
            let role = format!("{:?}", j.role).to_lowercase();
            if j.kind == JointKind::Fixed {
                writeln!(f, "{:<width$}  {kind:<10}  {role}", j.name)?;
                continue;
            }
            writeln!(
                f,
                "{:<width$}  {kind:<10}  {role:<7}  {:>9}  {:>9}  {:>9}  {:>9}",
                j.name,
                limit(j.lower),
                limit(j.upper),
                limit(j.velocity),
                limit(j.effort)
            )?;
        }
        writeln!(f)?;
        let width = self
            .links
            .iter()
            .map(|l| l.name.len())
            .max()
            .unwrap_or(4)
            .max(4);
        writeln!(f, "{:<width$}  {:>9}", "link", "mass_kg")?;
        for l in &self.links {
            writeln!(f, "{:<width$}  {:>9.4}", l.name, l.mass_kg)?;
        }
        if self.missing_meshes.is_empty() {
            writeln!(f, "\nmissing meshes: none")?;
        } else {
            writeln!(f, "\nmissing meshes ({}):", self.missing_meshes.len())?;
            for m in &self.missing_meshes {
                writeln!(
                    f,
                    "  link {:?} {}: {} (looked at {})",
                    m.link,
                    m.role,
                    m.filename,
                    m.resolved.display()
                )?;
            }
        }
        Ok(())
    }
}
