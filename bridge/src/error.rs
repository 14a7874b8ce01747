//! `BridgeError`: everything that can go wrong in the bridge — decoding, bundles and keys,
//! configuration, zenoh, the policy behind the controller.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BridgeError {
    #[error("bridge: {message} message, field `{field}`: {problem}")]
    Decode {
        message: &'static str,
        field: String,
        problem: String,
    },
    #[error("bridge: config field `{field}`: {problem}")]
    Config { field: String, problem: String },
    #[error("bridge: bundle rejected: {0}")]
    Bundle(String),
    #[error("bridge: key file {path}: {problem}")]
    Key { path: PathBuf, problem: String },
    #[error("bridge: {path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("bridge: zenoh: {0}")]
    Zenoh(String),
    /// The simulation farm: no workers, a job no worker could run, results that differ.
    #[error("bridge: farm: {0}")]
    Farm(String),
    #[error("bridge: timed out: {0}")]
    Timeout(String),
    #[error(transparent)]
    Policy(#[from] policy::PolicyError),
    #[error(transparent)]
    Sim(#[from] sim::SimError),
    #[error(transparent)]
    Robot(#[from] robots::RobotError),
}

impl BridgeError {
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        BridgeError::Io {
            path: path.into(),
            source,
        }
    }

    pub fn config(field: impl Into<String>, problem: impl Into<String>) -> Self {
        BridgeError::Config {
            field: field.into(),
            problem: problem.into(),
        }
    }

    /// A zenoh error (zenoh's own error type is a boxed trait object).
    pub fn zenoh(e: impl std::fmt::Display) -> Self {
        BridgeError::Zenoh(e.to_string())
    }
}

pub type Result<T, E = BridgeError> = std::result::Result<T, E>;
