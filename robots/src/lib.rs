//! Robot models for coevolve: URDF loading into a kinematic tree of links and joints (SI
//! units, `f64`), forward kinematics, the geometric Jacobian and damped-least-squares inverse
//! kinematics, plus the shipped robots (`ur5e`, `panda`, each with a parallel-jaw gripper and
//! a `tcp` link; `urdf/desk5/`, a 5-DOF desk arm with a revolute jaw and STL meshes, loaded
//! by path).
//!
//! It is not a physics engine and not a robot driver: it holds no simulation state, talks to
//! no hardware and depends on neither rapier nor zenoh. Simulation and bridges build on it.
//!
//! Main types: [`RobotModel`] (links, joints, inertials, geometry, `model_hash`; built by
//! [`RobotModel::from_urdf_file`] / [`RobotModel::from_urdf_str`]), [`Manipulator`] (a model
//! seen as arm + gripper + end-effector link, with [`Manipulator::fk`],
//! [`Manipulator::jacobian`] and [`Manipulator::ik`]), [`IkConfig`] / [`IkSolution`],
//! [`RobotSummary`], and [`RobotError`]. Load robots with [`load_builtin`] or
//! [`load_manipulator`].
//!
//! Conventions: transforms are named `a_from_b` (maps coordinates in frame `b` to frame `a`);
//! joint vectors are indexed by [`JointId`] (full model) or by arm joint (`q_arm_rad`); URDF
//! `rpy` is fixed-axis, R = Rz(yaw)·Ry(pitch)·Rx(roll).

pub mod builtin;
mod dls;
pub mod error;
mod hash;
pub mod home;
pub mod ik;
pub mod kinematics;
pub mod load;
pub mod manipulator;
mod mesh_path;
pub mod model;
mod rng;
pub mod stl;
pub mod summary;
mod tree;
mod xml_scan;

pub use builtin::{
    builtin_names, builtin_urdf, default_ee_link, load_builtin, load_manipulator,
    load_manipulator_for_sim,
};
pub use error::{Result, RobotError};
pub use ik::{IkConfig, IkSolution};
pub use manipulator::Manipulator;
pub use model::{
    GeometryItem, Inertial, Joint, JointId, JointKind, JointLimits, Link, LinkId, Mimic,
    MissingMesh, RobotModel, Shape,
};
pub use summary::{JointRole, JointSummary, LinkMass, RobotSummary};
