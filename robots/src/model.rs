//! The robot model: a kinematic tree of links and joints, in SI units, built from URDF.
//!
//! Indices: `LinkId` and `JointId` index `RobotModel::links` / `RobotModel::joints`.
//! Joints are stored in topological order (a joint's parent link is the root or the child of an
//! earlier joint), so a single forward pass computes forward kinematics.

use std::path::PathBuf;

use nalgebra::{Isometry3, Matrix3, Unit, Vector3};
use serde::Serialize;

/// Index into [`RobotModel::links`].
pub type LinkId = usize;
/// Index into [`RobotModel::joints`].
pub type JointId = usize;

/// A robot: links connected by joints into a tree with one root.
#[derive(Clone, Debug)]
pub struct RobotModel {
    /// The `<robot name>` attribute.
    pub name: String,
    /// Where the model came from (a file path, or `builtin:<name>` for shipped models).
    pub source: String,
    pub links: Vec<Link>,
    /// All joints (fixed ones too), in topological order.
    pub joints: Vec<Joint>,
    pub root: LinkId,
    /// Mesh files referenced by the URDF that could not be found; their geometry was dropped.
    pub missing_meshes: Vec<MissingMesh>,
    /// Hex SHA-256 of the canonical model content (kinematics, inertials, geometry), stable
    /// across whitespace/comment edits of the URDF. Identifies "the same robot body".
    pub model_hash: String,
}

#[derive(Clone, Debug)]
pub struct Link {
    pub name: String,
    pub inertial: Option<Inertial>,
    pub visuals: Vec<GeometryItem>,
    pub collisions: Vec<GeometryItem>,
    /// The joint whose child is this link; `None` for the root.
    pub parent_joint: Option<JointId>,
    pub child_joints: Vec<JointId>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Inertial {
    pub mass_kg: f64,
    /// Centre-of-mass frame expressed in the link frame.
    pub link_from_com: Isometry3<f64>,
    /// Inertia tensor about the COM, in the COM frame (kg·m²).
    pub inertia_kg_m2: Matrix3<f64>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct GeometryItem {
    pub name: Option<String>,
    pub link_from_geometry: Isometry3<f64>,
    pub shape: Shape,
    /// RGBA in [0, 1] from the visual's material (resolved by name against robot-level materials).
    pub rgba: Option<[f32; 4]>,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Shape {
    Box {
        size_m: Vector3<f64>,
    },
    /// Axis along the geometry frame's z, centred at the origin (URDF convention).
    Cylinder {
        radius_m: f64,
        length_m: f64,
    },
    /// Axis along z; `length_m` is the length of the cylindrical part.
    Capsule {
        radius_m: f64,
        length_m: f64,
    },
    Sphere {
        radius_m: f64,
    },
    /// A mesh that exists on disk (`path` is resolved and absolute); `data`: its triangles
    /// when it is an STL file (collision uses their convex hull), `None` for other formats.
    Mesh {
        path: PathBuf,
        scale: Vector3<f64>,
        data: Option<std::sync::Arc<crate::stl::MeshData>>,
    },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum JointKind {
    Revolute,
    Continuous,
    Prismatic,
    Fixed,
}

#[derive(Clone, Debug)]
pub struct Joint {
    pub name: String,
    pub kind: JointKind,
    pub parent: LinkId,
    pub child: LinkId,
    /// The joint frame (URDF `<origin>`) in the parent link frame.
    pub parent_from_joint: Isometry3<f64>,
    /// Motion axis in the joint frame (unit). Unused for fixed joints.
    pub axis: Unit<Vector3<f64>>,
    pub limits: JointLimits,
    pub damping: f64,
    pub friction: f64,
    pub mimic: Option<Mimic>,
}

/// Position limits are rad (revolute) or m (prismatic); continuous joints have ±inf position
/// limits. Velocity is rad/s or m/s; effort is N·m or N.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct JointLimits {
    pub lower: f64,
    pub upper: f64,
    pub velocity: f64,
    pub effort: f64,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Mimic {
    pub joint: JointId,
    pub multiplier: f64,
    pub offset: f64,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct MissingMesh {
    pub link: String,
    /// The filename as written in the URDF.
    pub filename: String,
    /// Where we looked.
    pub resolved: PathBuf,
    /// `visual` or `collision`.
    pub role: &'static str,
}

impl JointKind {
    pub fn is_movable(self) -> bool {
        !matches!(self, JointKind::Fixed)
    }
}
