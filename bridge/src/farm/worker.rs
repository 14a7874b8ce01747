//! A farm worker: announces itself with a liveliness token, answers job queries on its own
//! key and runs each job on one of its slots (a thread per slot), replying when it is done.

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::mpsc::{channel, Receiver};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use zenoh::query::Query;
use zenoh::{Session, Wait};

use super::status::MemberStatus;
use super::wire::{self, JobReply, JobRequest, WorkerToken};
use crate::error::{BridgeError, Result};

/// Runs jobs of the kinds a worker knows.
pub trait JobRunner: Send + Sync {
    /// Runs one job (fetching what it names from `blobs`); its reply payload and the episodes
    /// it ran, or why it cannot.
    fn run(
        &self,
        kind: &str,
        payload: &[u8],
        blobs: &dyn BlobSource,
    ) -> std::result::Result<(Vec<u8>, u64), String>;
}

/// Where a worker gets the content-addressed blobs (packed policies) its jobs name.
pub trait BlobSource {
    /// The blob whose SHA-256 is `hash` (checked).
    fn fetch(&self, hash: &str) -> std::result::Result<Vec<u8>, String>;
}

/// Blobs fetched from the farm's orchestrators.
struct FarmBlobs<'a>(&'a Session);

impl BlobSource for FarmBlobs<'_> {
    fn fetch(&self, hash: &str) -> std::result::Result<Vec<u8>, String> {
        let replies = self
            .0
            .get(wire::blob_key(hash))
            .target(zenoh::query::QueryTarget::All)
            .consolidation(zenoh::query::ConsolidationMode::None)
            .timeout(Duration::from_secs(60))
            .wait()
            .map_err(|e| format!("asking for blob {hash}: {e}"))?;
        while let Ok(reply) = replies.recv() {
            if let Ok(sample) = reply.result() {
                let bytes = sample.payload().to_bytes().into_owned();
                if wire::digest(&bytes) == hash {
                    return Ok(bytes);
                }
            }
        }
        Err(format!(
            "no orchestrator served blob {hash} (whose policy the job names)"
        ))
    }
}

/// Counters behind a worker's status.
#[derive(Debug, Default)]
struct Counters {
    busy: AtomicUsize,
    jobs: AtomicU64,
    episodes: AtomicU64,
    refused: AtomicU64,
}

/// A worker serving on a zenoh session until `stop` is set.
pub struct Worker {
    session: Session,
    slots: usize,
    runner: Arc<dyn JobRunner>,
}

impl std::fmt::Debug for Worker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Worker")
            .field("slots", &self.slots)
            .finish()
    }
}

impl Worker {
    pub fn new(session: Session, slots: usize, runner: Arc<dyn JobRunner>) -> Result<Worker> {
        if slots == 0 {
            return Err(BridgeError::config("--slots", "must be at least 1"));
        }
        Ok(Worker {
            session,
            slots,
            runner,
        })
    }

    /// The worker's id (its zenoh session id).
    pub fn id(&self) -> String {
        self.session.zid().to_string()
    }

    /// Serves until `stop` is set: the token, the job and status queryables, one thread per
    /// slot.
    pub fn serve(&self, stop: &AtomicBool) -> Result<()> {
        let id = self.id();
        let build = wire::build_id()?.to_owned();
        let token = WorkerToken {
            id: id.clone(),
            slots: self.slots,
            protocol: wire::PROTOCOL_VERSION,
            build: build.clone(),
        };
        let counters = Arc::new(Counters::default());
        let (tx, rx) = channel::<(Query, JobRequest)>();
        let refused = counters.clone();
        let _jobs = self
            .session
            .declare_queryable(wire::jobs_key(&id))
            .callback(move |query| {
                match admit(&query, &build) {
                    Ok(request) => {
                        // The receiver lives as long as `serve`; a send after it only drops
                        // the query (the orchestrator sees no reply and re-dispatches).
                        let _ = tx.send((query, request));
                    }
                    Err(why) => {
                        refused.refused.fetch_add(1, Ordering::Relaxed);
                        eprintln!("farm worker: refused a job: {why}");
                        let _ = query.reply_err(why.into_bytes()).wait();
                    }
                }
            })
            .wait()
            .map_err(BridgeError::zenoh)?;
        let started = Instant::now();
        let status_counters = counters.clone();
        let slots = self.slots;
        let status_key = wire::status_key(&id);
        let _status = self
            .session
            .declare_queryable(status_key.clone())
            .callback(move |query| {
                let s = worker_status(slots, &status_counters, started);
                if let Ok(json) = serde_json::to_vec(&s) {
                    let _ = query.reply(&status_key, json).wait();
                }
            })
            .wait()
            .map_err(BridgeError::zenoh)?;
        let _token = self
            .session
            .liveliness()
            .declare_token(token.key())
            .wait()
            .map_err(BridgeError::zenoh)?;
        let rx = Arc::new(Mutex::new(rx));
        std::thread::scope(|scope| {
            for _ in 0..self.slots {
                scope.spawn(|| slot_loop(&rx, self, &counters, stop));
            }
            while !stop.load(Ordering::Relaxed) {
                std::thread::sleep(Duration::from_millis(100));
            }
        });
        Ok(())
    }
}

/// A job query's request, if this worker may run it.
fn admit(query: &Query, build: &str) -> std::result::Result<JobRequest, String> {
    let bytes = query
        .payload()
        .map(|p| p.to_bytes().into_owned())
        .ok_or("a job query without a payload")?;
    let request: JobRequest =
        wire::decode("job request", &bytes).map_err(|e| format!("undecodable job: {e}"))?;
    if request.protocol != wire::PROTOCOL_VERSION {
        return Err(format!(
            "the orchestrator speaks farm protocol {}, this worker {}",
            request.protocol,
            wire::PROTOCOL_VERSION
        ));
    }
    if request.build != build {
        return Err(format!(
            "the orchestrator is build {}, this worker build {build}: run the same coevolve binary on both",
            request.build
        ));
    }
    Ok(request)
}

fn slot_loop(
    rx: &Mutex<Receiver<(Query, JobRequest)>>,
    worker: &Worker,
    counters: &Counters,
    stop: &AtomicBool,
) {
    while !stop.load(Ordering::Relaxed) {
        let next = match rx.lock() {
            Ok(rx) => rx.recv_timeout(Duration::from_millis(100)),
            Err(_) => return,
        };
        let Ok((query, request)) = next else { continue };
        counters.busy.fetch_add(1, Ordering::Relaxed);
        let blobs = FarmBlobs(&worker.session);
        let outcome = worker.runner.run(&request.kind, &request.payload, &blobs);
        counters.busy.fetch_sub(1, Ordering::Relaxed);
        let sent = match outcome {
            Ok((payload, episodes)) => {
                counters.jobs.fetch_add(1, Ordering::Relaxed);
                counters.episodes.fetch_add(episodes, Ordering::Relaxed);
                let reply = JobReply {
                    batch: request.batch,
                    job: request.job,
                    digest: wire::digest(&payload),
                    episodes,
                    payload,
                };
                wire::encode(&reply).and_then(|b| {
                    query
                        .reply(query.key_expr().clone(), b)
                        .wait()
                        .map_err(BridgeError::zenoh)
                })
            }
            Err(why) => query
                .reply_err(why.into_bytes())
                .wait()
                .map_err(BridgeError::zenoh),
        };
        if let Err(e) = sent {
            eprintln!("farm worker: job {} not answered: {e}", request.job);
        }
    }
}

fn worker_status(slots: usize, c: &Counters, started: Instant) -> MemberStatus {
    let up_s = started.elapsed().as_secs_f64();
    let episodes = c.episodes.load(Ordering::Relaxed);
    MemberStatus {
        role: "worker".to_owned(),
        slots,
        busy: c.busy.load(Ordering::Relaxed),
        jobs_done: c.jobs.load(Ordering::Relaxed),
        episodes_done: episodes,
        episodes_per_s: episodes as f64 / up_s.max(1e-9),
        refused: c.refused.load(Ordering::Relaxed),
        up_s,
        ..MemberStatus::default()
    }
}
