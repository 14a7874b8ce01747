//! The simulation farm on loopback, through the real binary: a router (ours, or the Python
//! eclipse-zenoh package's), worker processes, and `coevolve sim --farm`, whose trajectory hash
//! must equal the local run's with 1, 3 and 7 workers, a worker killed (kill -9) or frozen
//! (SIGSTOP) mid-batch, a worker joining mid-batch and the router restarted mid-batch.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::process::{Child, Command, Stdio};
use std::thread::sleep;
use std::time::{Duration, Instant};

use common::{coevolve, json};

/// A lift batch long enough (a few seconds on two cores) for something to happen in it.
const EPISODES: &str = "40";
const SEED: &str = "5";

struct Proc(Child);

impl Drop for Proc {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

impl Proc {
    fn signal(&self, sig: &str) {
        let ok = Command::new("kill")
            .args([sig, &self.0.id().to_string()])
            .status()
            .unwrap()
            .success();
        assert!(ok, "kill {sig}");
    }
}

fn endpoint() -> String {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    format!("tcp/127.0.0.1:{port}")
}

fn spawn(args: &[&str]) -> Proc {
    Proc(
        Command::new(env!("CARGO_BIN_EXE_coevolve"))
            .args(args)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    )
}

fn router(at: &str) -> Proc {
    spawn(&["farm", "router", "--listen", at])
}

fn worker(at: &str) -> Proc {
    spawn(&["farm", "worker", "--connect", at, "--slots", "1"])
}

/// Waits until `n` workers answer `farm status`.
fn wait_for_workers(at: &str, n: usize) {
    let start = Instant::now();
    loop {
        let out = coevolve(&["farm", "status", "--connect", at, "--json", "--timeout-ms", "500"]);
        if out.status.success() {
            let members: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
            let workers = members
                .as_array()
                .unwrap()
                .iter()
                .filter(|m| m["role"] == "worker")
                .count();
            if workers >= n {
                return;
            }
        }
        assert!(start.elapsed() < Duration::from_secs(60), "{n} workers never joined");
        sleep(Duration::from_millis(300));
    }
}

fn sim_args<'a>(extra: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec![
        "sim", "--task", "lift", "--episodes", EPISODES, "--seed", SEED, "--json",
    ];
    args.extend_from_slice(extra);
    args
}

fn local_hash() -> String {
    let out = json(&coevolve(&sim_args(&["--threads", "2"])));
    out["trajectory_hash"].as_str().unwrap().to_owned()
}

fn farm_sim(at: &str, extra: &[&str]) -> serde_json::Value {
    let mut args = vec!["--farm", at, "--farm-job-episodes", "2"];
    args.extend_from_slice(extra);
    json(&coevolve(&sim_args(&args)))
}

/// `coevolve sim --farm` started in the background (its output read by `finish`).
fn farm_sim_background(at: &str, extra: &[&str]) -> Child {
    let mut args = sim_args(&["--farm", at, "--farm-job-episodes", "2"]);
    args.extend_from_slice(extra);
    Command::new(env!("CARGO_BIN_EXE_coevolve"))
        .args(&args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

fn finish(child: Child) -> serde_json::Value {
    json(&child.wait_with_output().unwrap())
}

fn workers_used(out: &serde_json::Value) -> usize {
    out["farm"]["jobs_per_worker"].as_object().unwrap().len()
}

#[test]
fn farm_results_equal_the_local_run_at_1_3_and_7_workers() {
    let local = local_hash();
    let at = endpoint();
    let _router = router(&at);
    let mut workers = Vec::new();
    for n in [1, 3, 7] {
        while workers.len() < n {
            workers.push(worker(&at));
        }
        wait_for_workers(&at, n);
        let out = farm_sim(&at, &[]);
        assert_eq!(out["trajectory_hash"], local.as_str(), "{n} workers: {out}");
        assert_eq!(out["farm"]["jobs"], 20);
        assert!(workers_used(&out) >= n.min(2), "{n} workers: {out}");
    }
}

#[test]
fn a_killed_or_frozen_worker_s_jobs_are_dispatched_again_with_the_same_results() {
    let local = local_hash();
    let at = endpoint();
    let _router = router(&at);
    let doomed = worker(&at);
    let _steady = worker(&at);
    wait_for_workers(&at, 2);
    let run = farm_sim_background(&at, &[]);
    sleep(Duration::from_millis(1500));
    doomed.signal("-KILL");
    let out = finish(run);
    assert_eq!(out["trajectory_hash"], local.as_str(), "{out}");
    assert!(out["farm"]["redispatched"].as_u64().unwrap() >= 1, "{out}");

    let frozen = worker(&at);
    wait_for_workers(&at, 2);
    let run = farm_sim_background(&at, &["--farm-job-timeout-s", "3"]);
    sleep(Duration::from_millis(1500));
    frozen.signal("-STOP");
    let out = finish(run);
    frozen.signal("-CONT");
    assert_eq!(out["trajectory_hash"], local.as_str(), "{out}");
    assert!(out["farm"]["redispatched"].as_u64().unwrap() >= 1, "{out}");
}

#[test]
fn a_worker_joining_mid_batch_gets_jobs() {
    let local = local_hash();
    let at = endpoint();
    let _router = router(&at);
    let _first = worker(&at);
    wait_for_workers(&at, 1);
    let run = farm_sim_background(&at, &[]);
    sleep(Duration::from_millis(1000));
    let _second = worker(&at);
    let out = finish(run);
    assert_eq!(out["trajectory_hash"], local.as_str(), "{out}");
    assert_eq!(workers_used(&out), 2, "{out}");
}

#[test]
fn a_router_restarted_mid_batch_changes_nothing() {
    let local = local_hash();
    let at = endpoint();
    let router_1 = router(&at);
    let _workers = [worker(&at), worker(&at)];
    wait_for_workers(&at, 2);
    let run = farm_sim_background(&at, &["--farm-job-timeout-s", "5"]);
    sleep(Duration::from_millis(1500));
    drop(router_1);
    sleep(Duration::from_millis(500));
    let _router_2 = router(&at);
    let out = finish(run);
    assert_eq!(out["trajectory_hash"], local.as_str(), "{out}");
}

#[test]
fn a_router_that_is_not_ours_serves_the_farm() {
    let python = std::env::var("COEVOLVE_PYTHON")
        .expect("COEVOLVE_PYTHON: run under scripts/test.sh (the project venv's python)");
    let local = local_hash();
    let at = endpoint();
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/python/zenoh_router.py");
    let _router = Proc(
        Command::new(python)
            .args([script, &at])
            .stdout(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let _workers = [worker(&at), worker(&at)];
    wait_for_workers(&at, 2);
    let out = farm_sim(&at, &[]);
    assert_eq!(out["trajectory_hash"], local.as_str(), "{out}");
    assert_eq!(workers_used(&out), 2, "{out}");
}
