//! The farm's keys and messages (postcard), digests and the build identity that workers and
//! orchestrators must share.

use std::sync::OnceLock;

use serde::{de::DeserializeOwned, Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::error::{BridgeError, Result};

/// Changes whenever a message or key changes meaning.
pub const PROTOCOL_VERSION: u32 = 1;
/// Every farm key starts with this.
pub const PREFIX: &str = "coevolve/farm";

/// A job for one worker.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct JobRequest {
    pub protocol: u32,
    /// The orchestrator's [`build_id`]: a worker of another build refuses the job.
    pub build: String,
    /// Names the batch (and so the orchestrator's run) the job belongs to.
    pub batch: String,
    pub job: u64,
    pub attempt: u32,
    /// What the payload is (`episodes`: a [`sim::job::EpisodeJob`]).
    pub kind: String,
    pub payload: Vec<u8>,
}

/// A worker's result for one job.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct JobReply {
    pub batch: String,
    pub job: u64,
    /// SHA-256 of `payload`, hex.
    pub digest: String,
    /// Episodes the job ran (for throughput figures).
    pub episodes: u64,
    pub payload: Vec<u8>,
}

/// A worker as its liveliness token describes it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WorkerToken {
    pub id: String,
    pub slots: usize,
    pub protocol: u32,
    pub build: String,
}

impl WorkerToken {
    pub fn key(&self) -> String {
        format!(
            "{PREFIX}/workers/{}/{}/{}/{}",
            self.id, self.slots, self.protocol, self.build
        )
    }

    /// A token key back into its fields (`None`: not a worker token of any version).
    pub fn parse(key: &str) -> Option<WorkerToken> {
        let rest = key.strip_prefix(PREFIX)?.strip_prefix("/workers/")?;
        let parts: Vec<&str> = rest.split('/').collect();
        let [id, slots, protocol, build] = parts.as_slice() else {
            return None;
        };
        Some(WorkerToken {
            id: (*id).to_owned(),
            slots: slots.parse().ok()?,
            protocol: protocol.parse().ok()?,
            build: (*build).to_owned(),
        })
    }
}

/// The key of worker `id`'s job queryable.
pub fn jobs_key(id: &str) -> String {
    format!("{PREFIX}/jobs/{id}")
}

/// The key of a content-addressed blob (a packed policy) an orchestrator serves.
pub fn blob_key(hash: &str) -> String {
    format!("{PREFIX}/blobs/{hash}")
}

/// The key of a farm member's status queryable.
pub fn status_key(id: &str) -> String {
    format!("{PREFIX}/status/{id}")
}

/// SHA-256 of `bytes`, hex.
pub fn digest(bytes: &[u8]) -> String {
    format!("{:x}", Sha256::digest(bytes))
}

/// This program's identity: the first 16 hex digits of the SHA-256 of its executable, so that
/// two processes agree only when they run the same build.
pub fn build_id() -> Result<&'static str> {
    static ID: OnceLock<String> = OnceLock::new();
    if let Some(id) = ID.get() {
        return Ok(id);
    }
    let exe = std::env::current_exe().map_err(|e| BridgeError::io("<current executable>", e))?;
    let bytes = std::fs::read(&exe).map_err(|e| BridgeError::io(&exe, e))?;
    let id = digest(&bytes)[..16].to_owned();
    Ok(ID.get_or_init(|| id))
}

pub fn encode<T: Serialize>(message: &T) -> Result<Vec<u8>> {
    postcard::to_stdvec(message).map_err(|e| BridgeError::Farm(format!("encoding: {e}")))
}

pub fn decode<T: DeserializeOwned>(what: &'static str, bytes: &[u8]) -> Result<T> {
    postcard::from_bytes(bytes).map_err(|e| BridgeError::Decode {
        message: what,
        field: "<body>".to_owned(),
        problem: e.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn token_keys_round_trip_and_foreign_keys_are_not_tokens() {
        let t = WorkerToken {
            id: "a1b2".into(),
            slots: 3,
            protocol: PROTOCOL_VERSION,
            build: "0123456789abcdef".into(),
        };
        assert_eq!(WorkerToken::parse(&t.key()), Some(t));
        assert_eq!(WorkerToken::parse("coevolve/farm/workers/a1b2/x/1/b"), None);
        assert_eq!(WorkerToken::parse("coevolve/farm/workers/a1b2/3/1"), None);
        assert_eq!(WorkerToken::parse("coevolve/robot/a1b2/3/1/b"), None);
    }

    #[test]
    fn requests_round_trip() {
        let r = JobRequest {
            protocol: 1,
            build: "b".into(),
            batch: "x".into(),
            job: 7,
            attempt: 2,
            kind: "episodes".into(),
            payload: vec![1, 2, 3],
        };
        let back: JobRequest = decode("job request", &encode(&r).unwrap()).unwrap();
        assert_eq!(back, r);
        assert!(decode::<JobRequest>("job request", &[0xff; 3]).is_err());
    }
}
