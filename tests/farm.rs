//! The simulation farm on loopback, through the real binary: a router (ours, or the Python
//! eclipse-zenoh package's), worker processes, and `coevolve sim --farm`, whose trajectory hash
//! must equal the local run's with 1, 3 and 7 workers, a worker killed (kill -9) or frozen
//! (SIGSTOP, its late result ignored) mid-batch, a worker joining mid-batch and the router
//! restarted mid-batch; workers of another build are refused, and over mutual TLS with
//! passwords a worker without credentials never joins.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../bridge/tests/support/certs.rs"]
mod certs;
mod common;

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::thread::sleep;
use std::time::{Duration, Instant};

use certs::write_certs;
use common::farm::{
    endpoint, members, router, spawn, wait_for_workers, wait_for_workers_with, worker, Proc,
};
use common::{coevolve, json};

/// A lift batch for the equality test (about a second on two cores).
const EPISODES: &str = "40";
/// A batch long enough (several seconds on one worker) for a failure to happen in it.
const LONG: &str = "200";
const SEED: &str = "5";

/// Waits until an orchestrator's status field `field` is positive.
fn wait_for_orchestrator(at: &str, field: &str) {
    let start = Instant::now();
    loop {
        let seen = members(at, &[]).is_some_and(|members| {
            members
                .iter()
                .any(|m| m["role"] == "orchestrator" && m[field].as_u64().unwrap_or(0) > 0)
        });
        if seen {
            return;
        }
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "no orchestrator with {field} > 0"
        );
        sleep(Duration::from_millis(100));
    }
}

/// Waits until an orchestrator reports jobs in flight: the batch has been dispatched.
fn wait_for_batch(at: &str) {
    wait_for_orchestrator(at, "busy");
}

fn sim_args<'a>(episodes: &'a str, extra: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec![
        "sim",
        "--task",
        "lift",
        "--episodes",
        episodes,
        "--seed",
        SEED,
        "--json",
    ];
    args.extend_from_slice(extra);
    args
}

fn local_hash(episodes: &str) -> String {
    let out = json(&coevolve(&sim_args(episodes, &["--threads", "2"])));
    out["trajectory_hash"].as_str().unwrap().to_owned()
}

fn farm_sim(at: &str, extra: &[&str]) -> serde_json::Value {
    let mut args = vec!["--farm", at, "--farm-job-episodes", "2"];
    args.extend_from_slice(extra);
    json(&coevolve(&sim_args(EPISODES, &args)))
}

/// `coevolve sim --farm` of the long batch started in the background (its output read by
/// `finish`).
fn farm_sim_background(at: &str, extra: &[&str]) -> Child {
    let mut args = sim_args(LONG, &["--farm", at, "--farm-job-episodes", "4"]);
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
    let local = local_hash(EPISODES);
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
fn a_killed_worker_s_jobs_are_dispatched_again_with_the_same_results() {
    let local = local_hash(LONG);
    let at = endpoint();
    let _router = router(&at);
    let doomed = worker(&at);
    let _steady = worker(&at);
    wait_for_workers(&at, 2);
    // Stopped first, so that the job it is given is still running when it is killed.
    doomed.signal("-STOP");
    let run = farm_sim_background(&at, &[]);
    wait_for_batch(&at);
    doomed.signal("-KILL");
    let out = finish(run);
    assert_eq!(out["trajectory_hash"], local.as_str(), "{out}");
    assert!(out["farm"]["redispatched"].as_u64().unwrap() >= 1, "{out}");
    assert_eq!(workers_used(&out), 1, "{out}");
}

#[test]
fn a_frozen_worker_s_jobs_are_dispatched_again_and_its_late_results_ignored() {
    let local = local_hash(LONG);
    let at = endpoint();
    let _router = router(&at);
    let frozen = worker(&at);
    let _steady = worker(&at);
    wait_for_workers(&at, 2);
    frozen.signal("-STOP");
    let run = farm_sim_background(&at, &["--farm-job-timeout-s", "2"]);
    // Woken once its job has timed out and been dispatched again, while the steady worker
    // still has most of the batch to run.
    wait_for_orchestrator(&at, "redispatched");
    frozen.signal("-CONT");
    let out = finish(run);
    assert_eq!(out["trajectory_hash"], local.as_str(), "{out}");
    assert!(out["farm"]["redispatched"].as_u64().unwrap() >= 1, "{out}");
    let farm = &out["farm"];
    let late = farm["late_ignored"].as_u64().unwrap() + farm["duplicates"].as_u64().unwrap();
    assert!(
        late >= 1,
        "the woken worker's result never came back: {out}"
    );
}

#[test]
fn a_worker_joining_mid_batch_gets_jobs() {
    let local = local_hash(LONG);
    let at = endpoint();
    let _router = router(&at);
    let _first = worker(&at);
    wait_for_workers(&at, 1);
    let run = farm_sim_background(&at, &[]);
    wait_for_batch(&at);
    let _second = worker(&at);
    let out = finish(run);
    assert_eq!(out["trajectory_hash"], local.as_str(), "{out}");
    assert_eq!(workers_used(&out), 2, "{out}");
}

#[test]
fn a_router_restarted_mid_batch_changes_nothing() {
    let local = local_hash(LONG);
    let at = endpoint();
    let router_1 = router(&at);
    let _workers = [worker(&at), worker(&at)];
    wait_for_workers(&at, 2);
    let run = farm_sim_background(&at, &["--farm-job-timeout-s", "5"]);
    wait_for_batch(&at);
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
    let local = local_hash(EPISODES);
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

#[test]
fn workers_of_another_build_or_protocol_are_refused_with_a_clear_message() {
    let python = std::env::var("COEVOLVE_PYTHON")
        .expect("COEVOLVE_PYTHON: run under scripts/test.sh (the project venv's python)");
    let at = endpoint();
    let _router = router(&at);
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/python/farm_fake_worker.py"
    );
    wait_for_workers(&at, 0);
    let fake = |protocol: &str, build: &str| {
        let mut child = Command::new(&python)
            .args([script, &at, protocol, build])
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        assert_eq!(line.trim(), "ready");
        Proc(child)
    };
    let _old_build = fake("1", "00000000deadbeef");
    let _new_protocol = fake("99", "00000000deadbeef");
    let mut args = sim_args(EPISODES, &["--farm", &at, "--farm-wait-s", "3"]);
    args.retain(|a| *a != "--json");
    let out = coevolve(&args);
    assert!(!out.status.success(), "the batch ran on refused workers");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("no usable worker"), "{stderr}");
    assert!(stderr.contains("as build 00000000deadbeef"), "{stderr}");
    assert!(stderr.contains("farm protocol 99"), "{stderr}");
    assert!(
        stderr.contains("run the same coevolve binary everywhere"),
        "{stderr}"
    );
}

/// A zenoh configuration file for a farm member over mutual TLS: `tls` (the certificate
/// settings) and the user/password it authenticates with (a router also checks others').
fn tls_config(dir: &Path, name: &str, tls: &str, auth: &str) -> String {
    let d = dir.display();
    let text = format!(
        r#"{{ scouting: {{ multicast: {{ enabled: false }} }},
        transport: {{ link: {{ tls: {{ root_ca_certificate: "{d}/ca.pem", {tls} }} }},
          auth: {{ usrpwd: {{ {auth} }} }} }} }}"#
    )
    .replace("{d}", &d.to_string());
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path.to_str().unwrap().to_owned()
}

#[test]
fn a_farm_over_mutual_tls_admits_only_members_with_credentials() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write_certs(d);
    let server = format!(
        r#"enable_mtls: true, listen_private_key: "{0}/server.key", listen_certificate: "{0}/server.pem""#,
        d.display()
    );
    let client = format!(
        r#"enable_mtls: true, connect_private_key: "{0}/client.key", connect_certificate: "{0}/client.pem""#,
        d.display()
    );
    let router_cfg = tls_config(
        d,
        "router.json5",
        &server,
        &format!(
            r#"user: "router", password: "routerpw", dictionary_file: "{}/users.txt""#,
            d.display()
        ),
    );
    let member = tls_config(
        d,
        "member.json5",
        &client,
        r#"user: "operator", password: "s3cret""#,
    );
    let no_password = tls_config(
        d,
        "intruder.json5",
        &client,
        r#"user: "operator", password: "guess""#,
    );
    let no_certificate = tls_config(
        d,
        "no-cert.json5",
        "",
        r#"user: "operator", password: "s3cret""#,
    );
    let port = endpoint().rsplit(':').next().unwrap().to_owned();
    let at = format!("tls/localhost:{port}");
    let _router = spawn(&[
        "farm",
        "router",
        "--listen",
        &at,
        "--zenoh-config",
        &router_cfg,
    ]);
    let farm_worker = |cfg: &str| {
        spawn(&[
            "farm",
            "worker",
            "--connect",
            &at,
            "--slots",
            "1",
            "--zenoh-config",
            cfg,
        ])
    };
    let _member = farm_worker(&member);
    let _intruders = [farm_worker(&no_password), farm_worker(&no_certificate)];
    wait_for_workers_with(&at, 1, &["--zenoh-config", &member]);
    // The intruders have been trying to join all along; give them a few more seconds.
    sleep(Duration::from_secs(3));
    assert_eq!(
        wait_for_workers_with(&at, 1, &["--zenoh-config", &member]),
        1
    );

    let local = local_hash(EPISODES);
    let out = farm_sim(&at, &["--farm-config", &member]);
    assert_eq!(out["trajectory_hash"], local.as_str(), "{out}");
    assert_eq!(workers_used(&out), 1, "{out}");
    for cfg in [&no_password, &no_certificate] {
        let mut args = sim_args(
            EPISODES,
            &["--farm", &at, "--farm-config", cfg, "--farm-wait-s", "3"],
        );
        args.retain(|a| *a != "--json");
        let out = coevolve(&args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "joined without credentials ({cfg})");
        assert!(stderr.contains("joining the farm"), "{stderr}");
    }
}
