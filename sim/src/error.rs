//! The sim crate's error type.

/// Everything that can go wrong building or running a simulation.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SimError {
    #[error("sim: robot: {0}")]
    Robot(#[from] robots::RobotError),
    #[error("sim: task `{task}`: field `{field}`: {problem}")]
    InvalidTask {
        task: String,
        field: String,
        problem: String,
    },
    #[error("sim: config field `{field}`: {problem}")]
    InvalidConfig { field: String, problem: String },
    #[error("sim: unknown {what} `{name}` (known: {known})")]
    Unknown {
        what: &'static str,
        name: String,
        known: String,
    },
    #[error(transparent)]
    Camera(#[from] crate::camera::CameraError),
    #[error("sim: {context}")]
    Io {
        context: String,
        #[source]
        source: std::io::Error,
    },
    /// An episode store file (`store`) that cannot be written or read: names the file and
    /// what is wrong with it.
    #[error("sim: episode store file `{}`: {problem}", file.display())]
    Store {
        file: std::path::PathBuf,
        problem: crate::store::StoreProblem,
    },
    /// Replaying episodes (`replay`): an input or request that cannot be replayed, naming the
    /// file, episode or field and what is wrong.
    #[error("sim: replay: {context}: {problem}")]
    Replay { context: String, problem: String },
    /// The rerun SDK failed to create, log to or flush a recording (`replay`).
    #[error("sim: replay: {context}")]
    Rerun {
        context: String,
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// Exporting episodes as a LeRobot dataset (`lerobot`): the file, episode or setting and
    /// what is wrong.
    #[error("sim: lerobot export: {context}: {problem}")]
    Export { context: String, problem: String },
    /// An episode job (`job`) that cannot be decoded or run here: what and why.
    #[error("sim: episode job: {context}: {problem}")]
    Job { context: String, problem: String },
    #[error("sim: {context}")]
    Json {
        context: String,
        #[source]
        source: serde_json::Error,
    },
}

pub type Result<T, E = SimError> = std::result::Result<T, E>;

impl SimError {
    pub(crate) fn task(task: &str, field: impl Into<String>, problem: impl Into<String>) -> Self {
        SimError::InvalidTask {
            task: task.to_owned(),
            field: field.into(),
            problem: problem.into(),
        }
    }

    pub(crate) fn config(field: impl Into<String>, problem: impl Into<String>) -> Self {
        SimError::InvalidConfig {
            field: field.into(),
            problem: problem.into(),
        }
    }
}
