//! Farm processes for the end-to-end tests: routers and workers of the real binary on
//! loopback, killed when dropped.

use std::process::{Child, Command, Stdio};
use std::thread::sleep;
use std::time::{Duration, Instant};

use super::coevolve;

pub struct Proc(pub Child);

impl Drop for Proc {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

impl Proc {
    pub fn signal(&self, sig: &str) {
        let ok = Command::new("kill")
            .args([sig, &self.0.id().to_string()])
            .status()
            .unwrap()
            .success();
        assert!(ok, "kill {sig}");
    }
}

pub fn endpoint() -> String {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    format!("tcp/127.0.0.1:{port}")
}

pub fn spawn(args: &[&str]) -> Proc {
    Proc(
        Command::new(env!("CARGO_BIN_EXE_coevolve"))
            .args(args)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    )
}

pub fn router(at: &str) -> Proc {
    spawn(&["farm", "router", "--listen", at])
}

pub fn worker(at: &str) -> Proc {
    spawn(&["farm", "worker", "--connect", at, "--slots", "1"])
}

/// Waits until `n` workers answer `farm status`.
pub fn wait_for_workers(at: &str, n: usize) {
    wait_for_workers_with(at, n, &[]);
}

/// The farm's members as `farm status --json` run with `extra` arguments lists them, if it
/// answered.
pub fn members(at: &str, extra: &[&str]) -> Option<Vec<serde_json::Value>> {
    let mut args = vec![
        "farm",
        "status",
        "--connect",
        at,
        "--json",
        "--timeout-ms",
        "500",
    ];
    args.extend_from_slice(extra);
    let out = coevolve(&args);
    out.status
        .success()
        .then(|| serde_json::from_slice(&out.stdout).unwrap())
}

/// Waits until `n` workers answer `farm status` run with `extra` arguments; the workers seen.
pub fn wait_for_workers_with(at: &str, n: usize, extra: &[&str]) -> usize {
    let start = Instant::now();
    loop {
        if let Some(members) = members(at, extra) {
            let workers = members.iter().filter(|m| m["role"] == "worker").count();
            if workers >= n {
                return workers;
            }
        }
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "{n} workers never joined"
        );
        sleep(Duration::from_millis(300));
    }
}
