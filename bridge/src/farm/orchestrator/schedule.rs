//! One batch's bookkeeping: pending jobs, dispatches in flight, credits per worker, results
//! by job index. Pure logic (no zenoh), so its rules are tested on their own.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::time::Duration;

use super::dispatch::{Event, Failure};
use super::FarmStats;
use crate::error::{BridgeError, Result};
use crate::farm::status::MemberStatus;
use crate::farm::wire::{self, WorkerToken};

/// Workers by id, as their tokens announce them.
pub(super) type Workers = BTreeMap<String, WorkerToken>;

#[derive(Debug)]
pub(super) struct Schedule {
    results: Vec<Option<(String, Vec<u8>)>>,
    pending: BTreeSet<usize>,
    /// (job, attempt) → worker.
    in_flight: HashMap<(usize, u32), String>,
    attempts: Vec<u32>,
    workers: Workers,
    busy: BTreeMap<String, usize>,
    /// Workers not used in this batch, and why.
    excluded: BTreeMap<String, String>,
    build: String,
    done: usize,
    episodes: u64,
    pub stats: FarmStats,
}

impl Schedule {
    pub fn new(jobs: usize, workers: Workers, build: &str) -> Schedule {
        let mut s = Schedule {
            results: vec![None; jobs],
            pending: (0..jobs).collect(),
            in_flight: HashMap::new(),
            attempts: vec![0; jobs],
            workers: Workers::new(),
            busy: BTreeMap::new(),
            excluded: BTreeMap::new(),
            build: build.to_owned(),
            done: 0,
            episodes: 0,
            stats: FarmStats {
                jobs,
                ..FarmStats::default()
            },
        };
        for token in workers.into_values() {
            s.worker_up(token);
        }
        s
    }

    pub fn complete(&self) -> bool {
        self.done == self.results.len()
    }

    pub fn has_workers(&self) -> bool {
        self.workers
            .keys()
            .any(|id| !self.excluded.contains_key(id))
    }

    /// The lowest pending job and the usable worker with the most free slots (ties: lowest
    /// id), if both exist.
    pub fn next_dispatch(&self) -> Option<(usize, String)> {
        let job = *self.pending.first()?;
        let mut best: Option<(&String, usize)> = None;
        for (id, token) in &self.workers {
            if self.excluded.contains_key(id) {
                continue;
            }
            let free = token
                .slots
                .saturating_sub(self.busy.get(id).copied().unwrap_or(0));
            if free > 0 && best.is_none_or(|(_, f)| free > f) {
                best = Some((id, free));
            }
        }
        best.map(|(id, _)| (job, id.clone()))
    }

    /// Records that `job` went to `worker`; its attempt number.
    pub fn dispatched(&mut self, job: usize, worker: &str) -> u32 {
        self.pending.remove(&job);
        self.attempts[job] += 1;
        let attempt = self.attempts[job];
        self.in_flight.insert((job, attempt), worker.to_owned());
        *self.busy.entry(worker.to_owned()).or_default() += 1;
        self.stats.dispatches += 1;
        if attempt > 1 {
            self.stats.redispatched += 1;
        }
        attempt
    }

    /// Applies an event; the job whose result it placed, if any.
    pub fn handle(&mut self, event: Event) -> Result<Option<usize>> {
        match event {
            Event::WorkerUp(token) => {
                self.worker_up(token);
                Ok(None)
            }
            Event::WorkerGone(id) => {
                self.worker_gone(&id);
                Ok(None)
            }
            Event::Done { ticket, result } => {
                let live = self
                    .in_flight
                    .remove(&(ticket.job, ticket.attempt))
                    .is_some();
                if live {
                    if let Some(b) = self.busy.get_mut(&ticket.worker) {
                        *b = b.saturating_sub(1);
                    }
                }
                match result {
                    Ok((reply, size)) => {
                        self.stats.reply_bytes += size;
                        self.place(ticket.job, &ticket.worker, live, reply)
                    }
                    Err(failure) => {
                        if live {
                            self.failed(ticket.job, &ticket.worker, failure);
                        }
                        Ok(None)
                    }
                }
            }
        }
    }

    fn place(
        &mut self,
        job: usize,
        worker: &str,
        live: bool,
        reply: wire::JobReply,
    ) -> Result<Option<usize>> {
        if wire::digest(&reply.payload) != reply.digest || reply.job != job as u64 {
            if live {
                self.failed(
                    job,
                    worker,
                    Failure::Worker("a reply that does not match its digest or job".into()),
                );
            }
            return Ok(None);
        }
        if let Some((first, _)) = &self.results[job] {
            if *first != reply.digest {
                return Err(BridgeError::Farm(format!(
                    "nondeterminism: job {job} gave two different results (digests {first} and {} from worker {worker}); every worker must run the same build on the same kind of machine",
                    reply.digest
                )));
            }
            self.stats.duplicates += 1;
            return Ok(None);
        }
        if !live {
            self.stats.late_ignored += 1;
            return Ok(None);
        }
        self.results[job] = Some((reply.digest, reply.payload));
        self.done += 1;
        self.episodes += reply.episodes;
        *self
            .stats
            .jobs_per_worker
            .entry(worker.to_owned())
            .or_default() += 1;
        Ok(Some(job))
    }

    fn failed(&mut self, job: usize, worker: &str, failure: Failure) {
        match failure {
            Failure::Worker(why) => {
                eprintln!("farm: worker {worker} cannot run job {job}: {why}; not using it for this batch");
                self.excluded.insert(worker.to_owned(), why);
            }
            Failure::Timeout => {
                eprintln!(
                    "farm: job {job}: no reply from worker {worker} within the job timeout; dispatching it again and not using that worker for this batch"
                );
                self.excluded
                    .insert(worker.to_owned(), "no reply within the job timeout".into());
            }
            Failure::Closed => {
                eprintln!("farm: job {job}: worker {worker}'s query closed without a reply; dispatching it again");
            }
        }
        if self.results[job].is_none() {
            self.pending.insert(job);
        }
    }

    fn worker_up(&mut self, token: WorkerToken) {
        if token.protocol != wire::PROTOCOL_VERSION || token.build != self.build {
            let why = format!(
                "it speaks farm protocol {} as build {}, this orchestrator protocol {} as build {} (run the same coevolve binary everywhere)",
                token.protocol,
                token.build,
                wire::PROTOCOL_VERSION,
                self.build
            );
            if self
                .excluded
                .insert(token.id.clone(), why.clone())
                .is_none()
            {
                eprintln!("farm: refusing worker {}: {why}", token.id);
            }
        }
        self.workers.insert(token.id.clone(), token);
    }

    fn worker_gone(&mut self, id: &str) {
        self.workers.remove(id);
        self.busy.remove(id);
        let lost: Vec<(usize, u32)> = self
            .in_flight
            .iter()
            .filter(|(_, w)| w.as_str() == id)
            .map(|(k, _)| *k)
            .collect();
        for key in &lost {
            self.in_flight.remove(key);
            if self.results[key.0].is_none() {
                self.pending.insert(key.0);
            }
        }
        if !lost.is_empty() {
            eprintln!(
                "farm: worker {id} left with {} jobs in flight; dispatching them again",
                lost.len()
            );
        }
    }

    pub fn no_workers_message(&self, waited: Duration) -> String {
        let mut text = format!("no usable worker for {:.0} s: ", waited.as_secs_f64());
        if self.excluded.is_empty() {
            text.push_str("none has joined (is `coevolve farm worker --connect <router>` running against this router?)");
        } else {
            for (id, why) in &self.excluded {
                text.push_str(&format!("worker {id} not used: {why}; "));
            }
        }
        text
    }

    /// Fills an orchestrator's status from this batch.
    pub fn describe(&self, s: &mut MemberStatus, elapsed_s: f64) {
        let usable = self
            .workers
            .iter()
            .filter(|(id, _)| !self.excluded.contains_key(*id));
        s.workers = usable.clone().count();
        s.slots = usable.map(|(_, t)| t.slots).sum();
        s.busy = self.in_flight.len();
        s.jobs_done = self.done as u64;
        s.jobs_total = self.results.len() as u64;
        s.redispatched = self.stats.redispatched as u64;
        s.refused = self.excluded.len() as u64;
        s.episodes_done = self.episodes;
        s.episodes_per_s = self.episodes as f64 / elapsed_s.max(1e-9);
    }

    /// The results in job order, the statistics and the workers known now.
    pub fn finish(self) -> (Vec<Vec<u8>>, FarmStats, Workers) {
        let results = self
            .results
            .into_iter()
            .map(|r| r.map(|(_, payload)| payload).unwrap_or_default())
            .collect();
        let mut stats = self.stats;
        stats.episodes = self.episodes;
        (results, stats, self.workers)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::farm::orchestrator::dispatch::Ticket;
    use crate::farm::wire::JobReply;

    fn token(id: &str, slots: usize, build: &str) -> WorkerToken {
        WorkerToken {
            id: id.into(),
            slots,
            protocol: wire::PROTOCOL_VERSION,
            build: build.into(),
        }
    }

    fn reply(job: usize, payload: &[u8]) -> Event {
        reply_from("a", job, payload)
    }

    fn reply_from(worker: &str, job: usize, payload: &[u8]) -> Event {
        Event::Done {
            ticket: Ticket {
                job,
                attempt: 1,
                worker: worker.into(),
            },
            result: Ok((
                JobReply {
                    batch: "b".into(),
                    job: job as u64,
                    digest: wire::digest(payload),
                    episodes: 1,
                    payload: payload.to_vec(),
                },
                payload.len(),
            )),
        }
    }

    fn workers(tokens: &[WorkerToken]) -> Workers {
        tokens.iter().map(|t| (t.id.clone(), t.clone())).collect()
    }

    #[test]
    fn credits_bound_work_in_flight_and_a_lost_worker_s_jobs_return() {
        let mut s = Schedule::new(5, workers(&[token("a", 2, "x"), token("b", 1, "x")]), "x");
        let mut sent = Vec::new();
        while let Some((job, w)) = s.next_dispatch() {
            s.dispatched(job, &w);
            sent.push((job, w));
        }
        assert_eq!(
            sent,
            vec![(0, "a".into()), (1, "a".into()), (2, "b".into())]
        );
        s.handle(Event::WorkerGone("a".into())).unwrap();
        assert_eq!(s.next_dispatch(), None, "b's one slot is taken");
        assert_eq!(s.handle(reply_from("b", 2, b"two")).unwrap(), Some(2));
        assert_eq!(
            s.next_dispatch(),
            Some((0, "b".into())),
            "a's jobs are pending again"
        );
        assert_eq!(
            s.handle(reply(0, b"late")).unwrap(),
            None,
            "a's late result is ignored"
        );
        assert_eq!(s.stats.late_ignored, 1);
    }

    #[test]
    fn results_go_by_job_index_and_disagreeing_duplicates_are_errors() {
        let mut s = Schedule::new(2, workers(&[token("a", 2, "x")]), "x");
        for _ in 0..2 {
            let (job, w) = s.next_dispatch().unwrap();
            s.dispatched(job, &w);
        }
        assert_eq!(s.handle(reply(1, b"one")).unwrap(), Some(1));
        assert_eq!(s.handle(reply(1, b"one")).unwrap(), None);
        assert_eq!(s.stats.duplicates, 1);
        assert!(s.handle(reply(1, b"other")).is_err());
        assert_eq!(s.handle(reply(0, b"zero")).unwrap(), Some(0));
        assert!(s.complete());
        let (results, _, _) = s.finish();
        assert_eq!(results, vec![b"zero".to_vec(), b"one".to_vec()]);
    }

    #[test]
    fn workers_of_another_build_are_not_used() {
        let s = Schedule::new(1, workers(&[token("a", 4, "other")]), "x");
        assert!(!s.has_workers());
        assert_eq!(s.next_dispatch(), None);
        assert!(s
            .no_workers_message(Duration::from_secs(1))
            .contains("build other"));
    }

    #[test]
    fn a_timed_out_job_goes_elsewhere() {
        let mut s = Schedule::new(1, workers(&[token("a", 1, "x"), token("b", 1, "x")]), "x");
        let (job, w) = s.next_dispatch().unwrap();
        let attempt = s.dispatched(job, &w);
        s.handle(Event::Done {
            ticket: Ticket {
                job,
                attempt,
                worker: w.clone(),
            },
            result: Err(Failure::Timeout),
        })
        .unwrap();
        let (again, other) = s.next_dispatch().unwrap();
        assert_eq!((again, other.as_str()), (0, "b"));
        assert_eq!(s.dispatched(again, &other), 2);
        assert_eq!(s.stats.redispatched, 1);
    }
}
