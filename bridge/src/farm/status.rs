//! What farm members report on their status keys, and collecting it (`coevolve farm status`).

use std::time::Duration;

use serde::{Deserialize, Serialize};
use zenoh::query::{ConsolidationMode, QueryTarget};
use zenoh::{Session, Wait};

use super::wire::PREFIX;
use crate::error::{BridgeError, Result};

/// One farm member's status (a worker's or an orchestrator's).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct MemberStatus {
    /// `worker` or `orchestrator`.
    pub role: String,
    /// Filled in by [`collect`] from the key.
    #[serde(default)]
    pub id: String,
    /// Worker: its slots; orchestrator: the slots of the workers it uses.
    pub slots: usize,
    /// Worker: jobs running; orchestrator: jobs in flight.
    pub busy: usize,
    pub jobs_done: u64,
    pub episodes_done: u64,
    /// Worker: since it started; orchestrator: in its current (or last) batch.
    pub episodes_per_s: f64,
    /// Worker: jobs refused; orchestrator: workers refused.
    pub refused: u64,
    /// Orchestrator: workers in use.
    #[serde(default)]
    pub workers: usize,
    /// Orchestrator: jobs of the current batch, and how many were dispatched again.
    #[serde(default)]
    pub jobs_total: u64,
    #[serde(default)]
    pub redispatched: u64,
    pub up_s: f64,
}

/// Every member that answers within `timeout`, workers first, then by id.
pub fn collect(session: &Session, timeout: Duration) -> Result<Vec<MemberStatus>> {
    let replies = session
        .get(format!("{PREFIX}/status/*"))
        .target(QueryTarget::All)
        .consolidation(ConsolidationMode::None)
        .timeout(timeout)
        .wait()
        .map_err(BridgeError::zenoh)?;
    let mut members = Vec::new();
    while let Ok(reply) = replies.recv() {
        let Ok(sample) = reply.result() else { continue };
        let bytes = sample.payload().to_bytes();
        let mut status: MemberStatus =
            serde_json::from_slice(&bytes).map_err(|e| BridgeError::Decode {
                message: "farm status",
                field: sample.key_expr().to_string(),
                problem: e.to_string(),
            })?;
        status.id = sample
            .key_expr()
            .as_str()
            .rsplit('/')
            .next()
            .unwrap_or_default()
            .to_owned();
        members.push(status);
    }
    members.sort_by(|a, b| (a.role != "worker", &a.id).cmp(&(b.role != "worker", &b.id)));
    Ok(members)
}
