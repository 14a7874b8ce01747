//! The crate's error type.
//!
//! Every variant that concerns a robot description names the file (or source, e.g.
//! `builtin:ur5e`), the element (link, joint, field) and what is wrong with it.

use std::path::PathBuf;

/// Errors of the `robots` crate.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RobotError {
    /// A mesh file that is unreadable or malformed.
    #[error("robots: mesh `{}`: {problem}", path.display())]
    Mesh { path: PathBuf, problem: String },

    /// A collision mesh whose file is not there: the link would have no collider.
    #[error(
        "robots: {file}: link {link:?}: collision mesh `{filename}` not found (looked for {})",
        resolved.display()
    )]
    MissingCollisionMesh {
        file: String,
        link: String,
        filename: String,
        resolved: PathBuf,
    },

    /// The URDF file could not be read.
    #[error("robots: {}: cannot read URDF file", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },

    /// The text is not well-formed URDF XML (reported by the URDF parser).
    #[error("robots: {file}: invalid URDF/XML: {message}")]
    Xml { file: String, message: String },

    /// The document has no `<link>` at all.
    #[error("robots: {file}: <robot>: the robot has no links")]
    NoLinks { file: String },

    /// Two links or two joints share a name.
    #[error("robots: {file}: {element} {name:?}: duplicate name")]
    DuplicateName {
        file: String,
        /// `link` or `joint`.
        element: &'static str,
        name: String,
    },

    /// A joint refers to a link that does not exist.
    #[error("robots: {file}: joint {joint:?}: {field} link {link:?} does not exist")]
    UnknownLink {
        file: String,
        joint: String,
        /// `parent` or `child`.
        field: &'static str,
        link: String,
    },

    /// A mimic joint refers to a joint that does not exist, is fixed, or mimics in a cycle.
    #[error("robots: {file}: joint {joint:?}: <mimic joint={target:?}>: {problem}")]
    InvalidMimic {
        file: String,
        joint: String,
        target: String,
        problem: String,
    },

    /// The joints do not form a tree: a loop, or a link with two parent joints.
    #[error("robots: {file}: link {link:?}: kinematic cycle: {problem}")]
    KinematicCycle {
        file: String,
        link: String,
        problem: String,
    },

    /// More than one link has no parent joint (the description is a forest).
    #[error("robots: {file}: links {roots:?}: several root links (a robot must be one tree)")]
    MultipleRoots { file: String, roots: Vec<String> },

    /// A joint type this crate does not model (`floating`, `planar`, `spherical`).
    #[error("robots: {file}: joint {joint:?}: unsupported joint type {kind:?}")]
    UnsupportedJoint {
        file: String,
        joint: String,
        kind: String,
    },

    /// A numeric value is NaN, infinite where that is not allowed, or out of its valid range.
    #[error("robots: {file}: {element} {name:?}: {field}: {problem}")]
    InvalidValue {
        file: String,
        /// `link` or `joint`.
        element: &'static str,
        name: String,
        /// The offending field, e.g. `<limit lower/upper>` or `<inertial><mass>`.
        field: String,
        problem: String,
    },

    /// A link named as the end effector does not exist.
    #[error("robots: {file}: link {link:?}: end-effector link not found")]
    UnknownEeLink { file: String, link: String },

    /// There is no movable joint between the root and the end-effector link.
    #[error("robots: {file}: link {link:?}: no movable joint between the root and this end-effector link")]
    NoArmJoints { file: String, link: String },

    /// `load_builtin` was given a name that is not shipped.
    #[error("robots: builtin:{name}: unknown builtin robot (known: {known})")]
    UnknownBuiltin { name: String, known: String },
}

/// `Result` with [`RobotError`].
pub type Result<T> = std::result::Result<T, RobotError>;
