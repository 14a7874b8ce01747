//! The deploy path end to end on loopback, through the real binaries: a BC policy for reach is
//! trained from scripted demonstrations, evaluated in the simulator, then signed and deployed
//! to `coevolve controller`, which drives `coevolve sim-robot` over zenoh; the arm's success
//! rate on the same task variants must be within 10 points of the simulator's. Bundles from
//! an untrusted key are rejected; a Python client that knows only PROTOCOL.md reads the joint
//! state and latches the e-stop.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::io::Read;
use std::process::{Child, Command, Stdio};

use common::{coevolve, json};

const EPISODES: usize = 40;
const EVAL_SEED: &str = "1000";

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

struct Killed(Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn spawn(args: &[&str]) -> Killed {
    Killed(
        Command::new(env!("CARGO_BIN_EXE_coevolve"))
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap(),
    )
}

#[test]
fn deployed_policy_performs_on_the_simulated_arm_like_in_simulation() {
    let dir = tempfile::tempdir().unwrap();
    let p = |name: &str| dir.path().join(name).to_str().unwrap().to_owned();
    let out = coevolve(&[
        "sim",
        "--task",
        "reach",
        "--controller",
        "scripted",
        "--episodes",
        "120",
        "--seed",
        "1",
        "--out",
        &p("demos"),
        "--json",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = coevolve(&[
        "train",
        "--data",
        &p("demos"),
        "--out",
        &p("ckpt"),
        "--size",
        "tiny",
        "--steps",
        "600",
        "--device",
        "cpu",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let eval = json(&coevolve(&[
        "eval",
        "--policy",
        &p("ckpt"),
        "--task",
        "reach",
        "--episodes",
        &EPISODES.to_string(),
        "--seed",
        EVAL_SEED,
        "--json",
    ]));
    let sim_rate = eval["success_rate"].as_f64().unwrap();
    for name in ["ops", "stranger"] {
        assert!(coevolve(&["keys", "generate", "--out", &p(name)])
            .status
            .success());
    }
    // A loaded 2-core test machine can stall a process for a while: generous state timeout,
    // in the controller's limits and in the bundle's (the controller enforces the tighter).
    let safety = r#"{"state_timeout_ms": 500, "ramp_in_s": 0.2}"#;
    std::fs::write(p("safety.json"), safety).unwrap();
    std::fs::write(
        p("controller.json"),
        format!(r#"{{"rate_hz": 100, "safety": {safety}}}"#),
    )
    .unwrap();

    let endpoint = format!("tcp/127.0.0.1:{}", free_port());
    let mut arm = spawn(&[
        "sim-robot",
        "--robot-id",
        "arm1",
        "--skill",
        "reach",
        "--seed",
        EVAL_SEED,
        "--episodes",
        &EPISODES.to_string(),
        "--wait-for-policy",
        "--listen",
        &endpoint,
    ]);
    let _controller = spawn(&[
        "controller",
        "--robot-id",
        "arm1",
        "--config",
        &p("controller.json"),
        "--trusted-key",
        &p("ops.pub"),
        "--connect",
        &endpoint,
    ]);

    let rejected = coevolve(&[
        "deploy",
        "--checkpoint",
        &p("ckpt"),
        "--skill",
        "reach",
        "--robot-id",
        "arm1",
        "--key",
        &p("stranger.key"),
        "--connect",
        &endpoint,
    ]);
    assert!(!rejected.status.success());
    let err = String::from_utf8_lossy(&rejected.stderr);
    assert!(err.contains("does not trust"), "{err}");

    let accepted = coevolve(&[
        "deploy",
        "--checkpoint",
        &p("ckpt"),
        "--skill",
        "reach",
        "--robot-id",
        "arm1",
        "--key",
        &p("ops.key"),
        "--safety",
        &p("safety.json"),
        "--connect",
        &endpoint,
    ]);
    assert!(
        accepted.status.success(),
        "{}",
        String::from_utf8_lossy(&accepted.stderr)
    );

    let status = arm.0.wait().unwrap();
    let mut stdout = String::new();
    arm.0
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut stdout)
        .unwrap();
    let mut stderr = String::new();
    arm.0
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    assert!(status.success(), "sim-robot: {stderr}");
    let report: serde_json::Value = serde_json::from_str(stdout.trim()).unwrap();
    let arm_rate = report["success_rate"].as_f64().unwrap();
    eprintln!("reach: simulator {sim_rate:.2}, deployed on the simulated arm {arm_rate:.2}");
    assert_eq!(report["episodes"].as_u64().unwrap() as usize, EPISODES);
    // The issue asks for parity within 10 points: the arm follows every 100 Hz command, as a
    // real driver does, so the deployed policy sees what it saw in simulation.
    assert!(
        sim_rate >= 0.9,
        "the trained policy is weak in simulation: {sim_rate:.2}"
    );
    assert!(
        arm_rate >= sim_rate - 0.10,
        "deployed {arm_rate:.2} vs simulator {sim_rate:.2}"
    );
}

#[test]
fn a_python_client_reads_joint_state_and_latches_the_estop() {
    let python = std::env::var("COEVOLVE_PYTHON").expect(
        "COEVOLVE_PYTHON is not set: run scripts/test.sh (it sources scripts/torch-env.sh)",
    );
    let endpoint = format!("tcp/127.0.0.1:{}", free_port());
    let _arm = spawn(&[
        "sim-robot",
        "--robot-id",
        "arm7",
        "--skill",
        "reach",
        "--listen",
        &endpoint,
    ]);
    let _controller = spawn(&["controller", "--robot-id", "arm7", "--connect", &endpoint]);
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/bridge/tests/python/estop.py");
    let out = Command::new(python)
        .args([script, &endpoint, "arm7"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "estop.py: {}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["mode_after_estop"], 4);
    assert_eq!(report["joint_state"]["q_rad"].as_array().unwrap().len(), 6);
}
