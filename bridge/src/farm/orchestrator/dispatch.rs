//! One job sent to one worker: a zenoh query with a timeout, its outcome turned into an
//! [`Event`] by a thread that waits for it.

use std::sync::mpsc::Sender;

use zenoh::query::{ConsolidationMode, QueryTarget, Reply};
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

/// How long after its job timeout a dispatch still listens for its reply: a reply in that
/// window is a late result (counted, checked against the placed one, never used).
const LATE_WINDOW_FACTOR: u32 = 3;

/// Sends `request` (an encoded [`wire::JobRequest`]) to the ticket's worker. A thread waits
/// for the reply: past the job timeout it reports [`Failure::Timeout`] (the job is dispatched
/// again) and goes on listening, so that a late reply is still seen and reported.
pub(super) fn send(
    session: &Session,
    ticket: Ticket,
    request: Vec<u8>,
    options: &FarmOptions,
    events: &Sender<Event>,
) -> Result<()> {
    let job_timeout = options.job_timeout;
    let replies = session
        .get(wire::jobs_key(&ticket.worker))
        .payload(request)
        .target(QueryTarget::All)
        .consolidation(ConsolidationMode::None)
        .timeout(job_timeout * (1 + LATE_WINDOW_FACTOR))
        .wait()
        .map_err(BridgeError::zenoh)?;
    let events = events.clone();
    std::thread::Builder::new()
        .name("farm-dispatch".into())
        .spawn(move || {
            let first = match replies.recv_timeout(job_timeout) {
                Ok(Some(reply)) => Some(outcome(reply)),
                Ok(None) => None,
                Err(_) => Some(Err(Failure::Closed)),
            };
            let result = match first {
                Some(result) => result,
                None => {
                    let timed_out = Event::Done {
                        ticket: ticket.clone(),
                        result: Err(Failure::Timeout),
                    };
                    if events.send(timed_out).is_err() {
                        return;
                    }
                    match replies.recv() {
                        Ok(reply) => outcome(reply),
                        Err(_) => return,
                    }
                }
            };
            let _ = events.send(Event::Done { ticket, result });
        })
        .map_err(|e| BridgeError::Farm(format!("cannot start a dispatch thread: {e}")))?;
    Ok(())
}

/// A reply as a job's result, or why it is none.
fn outcome(reply: Reply) -> std::result::Result<(JobReply, usize), Failure> {
    match reply.into_result() {
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
    }
}
