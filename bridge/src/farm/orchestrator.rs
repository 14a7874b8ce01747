//! The orchestrator's side: worker discovery (liveliness), scheduling by credits, timeouts and
//! re-dispatch, results placed by job index and checked by digest.

use std::collections::BTreeMap;
use std::sync::mpsc::{channel, Receiver, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde::Serialize;
use zenoh::pubsub::Subscriber;
use zenoh::query::Queryable;
use zenoh::sample::SampleKind;
use zenoh::{Session, Wait};

use super::status::MemberStatus;
use super::wire::{self, WorkerToken};
use crate::error::{BridgeError, Result};
use crate::transport::ZenohArgs;

mod blobs;
mod dispatch;
mod schedule;

use dispatch::Event;
use schedule::Schedule;

/// How long to wait for workers and for each job.
#[derive(Clone, Debug)]
pub struct FarmOptions {
    /// A job without a reply after this long is dispatched again (and its late reply ignored).
    pub job_timeout: Duration,
    /// A batch fails when no usable worker has been there for this long.
    pub wait_for_workers: Duration,
}

impl Default for FarmOptions {
    fn default() -> FarmOptions {
        FarmOptions {
            job_timeout: Duration::from_secs(120),
            wait_for_workers: Duration::from_secs(60),
        }
    }
}

/// What a batch cost on the farm.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct FarmStats {
    pub jobs: usize,
    /// Episodes (rollouts) the jobs ran.
    pub episodes: u64,
    /// Workers that completed at least one job, and how many each.
    pub jobs_per_worker: BTreeMap<String, usize>,
    pub dispatches: usize,
    /// Jobs dispatched again (worker gone, no reply in time, a worker that could not run it).
    pub redispatched: usize,
    /// Second results that agreed with the first (dropped).
    pub duplicates: usize,
    /// Results of abandoned dispatches that arrived anyway (ignored).
    pub late_ignored: usize,
    pub request_bytes: usize,
    pub reply_bytes: usize,
    pub wall_s: f64,
    /// CPU time of the orchestrator's process during the batch (scheduling, encoding,
    /// decoding, hashing; on Linux).
    pub cpu_s: f64,
}

impl FarmStats {
    /// Adds another batch's figures to these.
    pub fn add(&mut self, other: &FarmStats) {
        self.jobs += other.jobs;
        self.episodes += other.episodes;
        for (worker, jobs) in &other.jobs_per_worker {
            *self.jobs_per_worker.entry(worker.clone()).or_default() += jobs;
        }
        self.dispatches += other.dispatches;
        self.redispatched += other.redispatched;
        self.duplicates += other.duplicates;
        self.late_ignored += other.late_ignored;
        self.request_bytes += other.request_bytes;
        self.reply_bytes += other.reply_bytes;
        self.wall_s += other.wall_s;
        self.cpu_s += other.cpu_s;
    }
}

/// A connection to the farm, able to run batches of jobs on its workers.
pub struct Farm {
    session: Session,
    build: String,
    options: FarmOptions,
    events_tx: Sender<Event>,
    events: Mutex<Receiver<Event>>,
    status: Arc<Mutex<MemberStatus>>,
    /// Workers known from earlier batches (liveliness events are consumed by the batch loop).
    known: Mutex<schedule::Workers>,
    blobs: blobs::Blobs,
    /// Every batch's figures summed.
    totals: Mutex<FarmStats>,
    _workers: Subscriber<()>,
    _status: Queryable<()>,
}

impl std::fmt::Debug for Farm {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Farm")
            .field("options", &self.options)
            .finish_non_exhaustive()
    }
}

impl Farm {
    /// Joins the farm through `args` (a client of its router unless the config says otherwise;
    /// the router is waited for as long as workers are) and starts following its workers.
    pub fn connect(args: &ZenohArgs, options: FarmOptions) -> Result<Farm> {
        let session = args.open_waiting(Some(options.wait_for_workers))?;
        let build = wire::build_id()?.to_owned();
        let (events_tx, events) = channel();
        let tx = events_tx.clone();
        let workers = session
            .liveliness()
            .declare_subscriber(format!("{}/workers/**", wire::PREFIX))
            .history(true)
            .callback(move |sample| {
                let Some(token) = WorkerToken::parse(sample.key_expr().as_str()) else {
                    return;
                };
                let event = match sample.kind() {
                    SampleKind::Put => Event::WorkerUp(token),
                    SampleKind::Delete => Event::WorkerGone(token.id),
                };
                let _ = tx.send(event);
            })
            .wait()
            .map_err(BridgeError::zenoh)?;
        let status = Arc::new(Mutex::new(MemberStatus {
            role: "orchestrator".to_owned(),
            ..MemberStatus::default()
        }));
        let shared = status.clone();
        let started = Instant::now();
        let status_key = wire::status_key(&session.zid().to_string());
        let status_queryable = session
            .declare_queryable(status_key.clone())
            .callback(move |query| {
                let mut s = shared.lock().map(|s| s.clone()).unwrap_or_default();
                s.up_s = started.elapsed().as_secs_f64();
                if let Ok(json) = serde_json::to_vec(&s) {
                    let _ = query.reply(&status_key, json).wait();
                }
            })
            .wait()
            .map_err(BridgeError::zenoh)?;
        let blobs = blobs::Blobs::declare(&session)?;
        Ok(Farm {
            session,
            build,
            options,
            events_tx,
            events: Mutex::new(events),
            status,
            known: Mutex::new(schedule::Workers::new()),
            blobs,
            totals: Mutex::default(),
            _workers: workers,
            _status: status_queryable,
        })
    }

    /// Every batch's figures so far, summed.
    pub fn totals(&self) -> FarmStats {
        self.totals.lock().map(|t| t.clone()).unwrap_or_default()
    }

    /// Serves `bytes` (a packed policy) to the workers, which fetch it by the hash returned.
    pub fn offer(&self, bytes: Vec<u8>) -> String {
        self.blobs.offer(bytes)
    }

    /// Runs `jobs` (payloads of `kind`) on the farm; their results in job order. `progress` is
    /// called with each job's index as its result is placed.
    pub fn run(
        &self,
        kind: &str,
        jobs: &[Vec<u8>],
        progress: &dyn Fn(usize),
    ) -> Result<(Vec<Vec<u8>>, FarmStats)> {
        let events = self
            .events
            .lock()
            .map_err(|_| BridgeError::Farm("event queue poisoned".into()))?;
        let batch = format!("{:016x}", rand::random::<u64>());
        let known = self
            .known
            .lock()
            .map(|k| k.clone())
            .map_err(|_| BridgeError::Farm("worker list poisoned".into()))?;
        let mut schedule = Schedule::new(jobs.len(), known, &self.build);
        let start = Instant::now();
        let cpu_start = sim::throughput::process_cpu_s();
        let mut no_worker_since = Some(start);
        while !schedule.complete() {
            while let Some((job, worker)) = schedule.next_dispatch() {
                let attempt = schedule.dispatched(job, &worker);
                let request = wire::JobRequest {
                    protocol: wire::PROTOCOL_VERSION,
                    build: self.build.clone(),
                    batch: batch.clone(),
                    job: job as u64,
                    attempt,
                    kind: kind.to_owned(),
                    payload: jobs[job].clone(),
                };
                let bytes = wire::encode(&request)?;
                schedule.stats.request_bytes += bytes.len();
                let ticket = dispatch::Ticket {
                    job,
                    attempt,
                    worker,
                };
                dispatch::send(&self.session, ticket, bytes, &self.options, &self.events_tx)?;
            }
            self.publish(&schedule, start);
            no_worker_since = match (schedule.has_workers(), no_worker_since) {
                (true, _) => None,
                (false, None) => Some(Instant::now()),
                (false, since) => since,
            };
            if let Some(since) = no_worker_since {
                if since.elapsed() > self.options.wait_for_workers {
                    return Err(BridgeError::Farm(
                        schedule.no_workers_message(self.options.wait_for_workers),
                    ));
                }
            }
            match events.recv_timeout(Duration::from_millis(250)) {
                Ok(event) => {
                    if let Some(done) = schedule.handle(event)? {
                        progress(done);
                    }
                }
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => {
                    return Err(BridgeError::Farm("event queue closed".into()))
                }
            }
        }
        schedule.stats.wall_s = start.elapsed().as_secs_f64();
        if let (Some(a), Some(b)) = (cpu_start, sim::throughput::process_cpu_s()) {
            schedule.stats.cpu_s = b - a;
        }
        self.publish(&schedule, start);
        let (results, stats, workers) = schedule.finish();
        if let Ok(mut known) = self.known.lock() {
            *known = workers;
        }
        if let Ok(mut totals) = self.totals.lock() {
            totals.add(&stats);
        }
        Ok((results, stats))
    }

    fn publish(&self, schedule: &Schedule, start: Instant) {
        if let Ok(mut s) = self.status.lock() {
            schedule.describe(&mut s, start.elapsed().as_secs_f64());
        }
    }
}
