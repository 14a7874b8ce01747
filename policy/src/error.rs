//! `PolicyError`: everything that can go wrong building, training, saving or loading a policy.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum PolicyError {
    #[error("libtorch: {0}")]
    Torch(#[from] tch::TchError),
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("checkpoint {path}: {problem}")]
    Checkpoint { path: PathBuf, problem: String },
    #[error("config field `{field}`: {problem}")]
    Config { field: String, problem: String },
    #[error("training data: {0}")]
    Data(String),
    #[error("device `{0}`: expected auto, cpu, cuda or cuda:N (with CUDA available)")]
    Device(String),
    #[error(transparent)]
    Sim(#[from] sim::SimError),
}

impl PolicyError {
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        PolicyError::Io {
            path: path.into(),
            source,
        }
    }

    pub fn checkpoint(path: impl Into<PathBuf>, problem: impl Into<String>) -> Self {
        PolicyError::Checkpoint {
            path: path.into(),
            problem: problem.into(),
        }
    }

    pub fn config(field: impl Into<String>, problem: impl Into<String>) -> Self {
        PolicyError::Config {
            field: field.into(),
            problem: problem.into(),
        }
    }
}

pub type Result<T, E = PolicyError> = std::result::Result<T, E>;
