//! `SkillsError`: problems with skill trees and the loop, naming the file and field.

#[derive(Debug, thiserror::Error)]
pub enum SkillsError {
    #[error("{source_name}: {problem}")]
    Tree {
        source_name: String,
        problem: String,
    },
    #[error("{source_name}: skill `{skill}`: {field}: {problem}")]
    Skill {
        source_name: String,
        skill: String,
        field: String,
        problem: String,
    },
    #[error("{path}: {problem}")]
    Run {
        path: std::path::PathBuf,
        problem: String,
    },
    #[error(transparent)]
    Sim(#[from] sim::SimError),
    #[error(transparent)]
    Policy(#[from] policy::PolicyError),
    #[error("{}", path.display())]
    Io {
        path: std::path::PathBuf,
        source: std::io::Error,
    },
}

pub type Result<T, E = SkillsError> = std::result::Result<T, E>;

impl SkillsError {
    pub fn io(path: impl Into<std::path::PathBuf>, source: std::io::Error) -> SkillsError {
        SkillsError::Io {
            path: path.into(),
            source,
        }
    }

    pub fn run(path: impl Into<std::path::PathBuf>, problem: impl Into<String>) -> SkillsError {
        SkillsError::Run {
            path: path.into(),
            problem: problem.into(),
        }
    }
}
