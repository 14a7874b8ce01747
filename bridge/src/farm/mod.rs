//! The simulation farm on zenoh: workers on many machines run episode jobs for one
//! orchestrator (`coevolve sim --farm`), with results identical to a local run.
//!
//! Keys, all under [`wire::PREFIX`] (`coevolve/farm`):
//! - `workers/<id>/<slots>/<protocol>/<build>` — a worker's liveliness token (it disappears
//!   when the worker's session ends or its zenoh lease expires);
//! - `jobs/<id>` — the worker's job queryable (get/reply: a [`wire::JobRequest`] in, a
//!   [`wire::JobReply`] or an error text out);
//! - `status/<id>` — a worker's or an orchestrator's status as JSON (`coevolve farm status`).
//!
//! zenoh does not balance load among queryables, so the orchestrator schedules
//! ([`orchestrator::Farm::run`]): one query per job to a worker with a free slot (a credit per
//! slot, so in-flight work is bounded), a timeout per job; a job whose worker's token
//! disappears or whose query ends without a reply is dispatched again. Results are placed by
//! job index, never by arrival order, and carry a SHA-256 digest: a second result for a job is
//! dropped if it agrees and is an error (nondeterminism) if it does not.

pub mod orchestrator;
pub mod policy_jobs;
pub mod sim_jobs;
pub mod status;
pub mod wire;
pub mod worker;

pub use orchestrator::{Farm, FarmOptions, FarmStats};
pub use worker::{BlobSource, JobRunner, Worker};
