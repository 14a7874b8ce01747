//! One job sent to one worker: a zenoh query with a timeout, its outcome turned into an
//! [`Event`] by a thread that waits for it.

use std::sync::mpsc::Sender;

use zenoh::query::{ConsolidationMode, QueryTarget};
use zenoh::{Session, Wait};

use super::FarmOptions;
use crate::error::{BridgeError, Result};
use crate::farm::wire::{self, JobReply, WorkerToken};

/// Which dispatch of which job went to which worker.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Ticket {
    pub job: usize,
    pub attempt: u32,
    pub worker: String,
}

/// Why a dispatch brought no result.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Failure {
    /// No reply within the job timeout.
    Timeout,
    /// The worker answered with an error (it cannot run the job).
    Worker(String),
    /// The query ended without any reply (the worker's session went away).
    Closed,
}

/// What the orchestrator's batch loop reacts to.
#[derive(Debug)]
pub(super) enum Event {
    WorkerUp(WorkerToken),
    WorkerGone(String),
    Done {
        ticket: Ticket,
        /// The reply and its size on the wire.
        result: std::result::Result<(JobReply, usize), Failure>,
    },
}

/// Sends `request` (an encoded [`wire::JobRequest`]) to the ticket's worker.
pub(super) fn send(
    session: &Session,
    ticket: Ticket,
    request: Vec<u8>,
    options: &FarmOptions,
    events: &Sender<Event>,
) -> Result<()> {
    let replies = session
        .get(wire::jobs_key(&ticket.worker))
        .payload(request)
        .target(QueryTarget::All)
        .consolidation(ConsolidationMode::None)
        .timeout(options.job_timeout)
        .wait()
        .map_err(BridgeError::zenoh)?;
    let events = events.clone();
    std::thread::Builder::new()
        .name("farm-dispatch".into())
        .spawn(move || {
            let result = match replies.recv() {
                Ok(reply) => match reply.into_result() {
                    Ok(sample) => {
                        let bytes = sample.payload().to_bytes();
                        wire::decode::<JobReply>("job reply", &bytes)
                            .map(|r| (r, bytes.len()))
                            .map_err(|e| Failure::Worker(e.to_string()))
                    }
                    Err(e) => {
                        let text = String::from_utf8_lossy(&e.payload().to_bytes()).into_owned();
                        Err(if text == "Timeout" {
                            Failure::Timeout
                        } else {
                            Failure::Worker(text)
                        })
                    }
                },
                Err(_) => Err(Failure::Closed),
            };
            let _ = events.send(Event::Done { ticket, result });
        })
        .map_err(|e| BridgeError::Farm(format!("cannot start a dispatch thread: {e}")))?;
    Ok(())
}
