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
    #[error("{path}: {source}")]
    Io {
        path: std::path::PathBuf,
        source: std::io::Error,
    },
}

pub type Result<T, E = SkillsError> = std::result::Result<T, E>;
