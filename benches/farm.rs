//! The simulation farm on loopback against the same batch run locally: a scripted lift batch
//! (`coevolve sim`) at 1 and 2 threads here, then through a router to 1 and 2 worker
//! processes of one slot each (`coevolve farm router|worker`, `coevolve sim --farm`).
//!
//! Prints one JSON object: episodes/s of each arm; the farm's overhead per episode (wall time
//! of 1 worker against 1 local thread, and bytes on the wire); CPU time per job of the
//! orchestrator, the router and the workers beyond the simulation itself; the parallel
//! efficiency of 2 workers against 2 local threads; and a throughput model for W workers
//! (`model`: where the orchestrator's CPU, one router's CPU or a 1 Gb/s link at the
//! orchestrator becomes the limit). `FARM_BENCH_EPISODES` (default 384) and
//! `FARM_BENCH_JOB` (episodes per job, default 8) set the batch.

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

const BIN: &str = env!("CARGO_BIN_EXE_coevolve");

struct Proc(Child);

impl Drop for Proc {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

impl Proc {
    fn cpu_s(&self) -> f64 {
        sim::throughput::cpu_s_of(&self.0.id().to_string()).unwrap_or(f64::NAN)
    }
}

fn spawn(args: &[&str]) -> anyhow::Result<Proc> {
    Ok(Proc(
        Command::new(BIN)
            .args(args)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()?,
    ))
}

fn env_usize(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// `coevolve sim` of the batch with `extra` arguments: its JSON and wall time.
fn sim(episodes: &str, extra: &[&str]) -> anyhow::Result<(Value, f64)> {
    let start = Instant::now();
    let out = Command::new(BIN)
        .args([
            "sim",
            "--task",
            "lift",
            "--episodes",
            episodes,
            "--seed",
            "5",
            "--json",
        ])
        .args(extra)
        .output()?;
    let wall_s = start.elapsed().as_secs_f64();
    anyhow::ensure!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    Ok((serde_json::from_slice(&out.stdout)?, wall_s))
}

fn workers_joined(at: &str, n: usize) -> anyhow::Result<()> {
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs(60) {
        let out = Command::new(BIN)
            .args([
                "farm",
                "status",
                "--connect",
                at,
                "--json",
                "--timeout-ms",
                "500",
            ])
            .output()?;
        let members: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
        let workers = members
            .as_array()
            .map_or(0, |m| m.iter().filter(|m| m["role"] == "worker").count());
        if workers >= n {
            return Ok(());
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    anyhow::bail!("{n} workers never joined")
}

/// The batch on a farm of `workers` one-slot workers: its JSON, wall time, and the CPU time
/// of the router and of the workers during it.
fn farm(episodes: &str, job: &str, workers: usize) -> anyhow::Result<(Value, f64, f64, f64)> {
    let port = std::net::TcpListener::bind("127.0.0.1:0")?
        .local_addr()?
        .port();
    let at = format!("tcp/127.0.0.1:{port}");
    let router = spawn(&["farm", "router", "--listen", &at])?;
    let pool = (0..workers)
        .map(|_| spawn(&["farm", "worker", "--connect", &at, "--slots", "1"]))
        .collect::<anyhow::Result<Vec<Proc>>>()?;
    workers_joined(&at, workers)?;
    let cpu = |p: &[Proc]| p.iter().map(Proc::cpu_s).sum::<f64>();
    let (router_0, workers_0) = (router.cpu_s(), cpu(&pool));
    let (out, wall_s) = sim(episodes, &["--farm", &at, "--farm-job-episodes", job])?;
    let router_s = router.cpu_s() - router_0;
    let workers_s = cpu(&pool) - workers_0;
    Ok((out, wall_s, router_s, workers_s))
}

fn main() -> anyhow::Result<()> {
    let n = env_usize("FARM_BENCH_EPISODES", 384);
    let job = env_usize("FARM_BENCH_JOB", 8);
    let (episodes, job_s) = (n.to_string(), job.to_string());
    // Local runs: the wall time of the whole command (process start and robot loading
    // included, as for the farm runs).
    let (local_1, local_1_s) = sim(&episodes, &["--threads", "1"])?;
    let (local_2, local_2_s) = sim(&episodes, &["--threads", "2"])?;
    let (farm_1, farm_1_s, router_1_cpu, workers_1_cpu) = farm(&episodes, &job_s, 1)?;
    let (farm_2, farm_2_s, _, _) = farm(&episodes, &job_s, 2)?;
    for out in [&local_2, &farm_1, &farm_2] {
        anyhow::ensure!(
            out["trajectory_hash"] == local_1["trajectory_hash"],
            "results differ: {out}"
        );
    }
    let eps = |wall_s: f64| n as f64 / wall_s;
    let jobs = farm_1["farm"]["jobs"].as_f64().unwrap_or(f64::NAN);
    let per_episode = |key: &str| farm_1["farm"][key].as_f64().unwrap_or(f64::NAN) / n as f64;
    // CPU time the local single-threaded run spent per episode simulating.
    let sim_cpu_s = local_1["wall_s"].as_f64().unwrap_or(f64::NAN) / n as f64;
    let orchestrator_ms_per_job = 1e3 * farm_1["farm"]["cpu_s"].as_f64().unwrap_or(f64::NAN) / jobs;
    let router_ms_per_job = 1e3 * router_1_cpu / jobs;
    let bytes_per_episode = per_episode("request_bytes") + per_episode("reply_bytes");
    // Throughput model: a worker core runs 1 / sim_cpu_s episodes/s; the farm delivers W times
    // that until one of these limits (episodes/s) is reached.
    let per_core = 1.0 / sim_cpu_s;
    let orchestrator_limit = job as f64 / (orchestrator_ms_per_job / 1e3);
    let router_limit = job as f64 / (router_ms_per_job / 1e3);
    let link_limit = 125e6 / bytes_per_episode;
    let workers_at = |limit: f64| limit / per_core;
    let report = json!({
        "bench": "farm",
        "episodes": n,
        "job_episodes": job,
        "local_1_thread_eps": eps(local_1_s),
        "local_2_threads_eps": eps(local_2_s),
        "farm_1_worker_eps": eps(farm_1_s),
        "farm_2_workers_eps": eps(farm_2_s),
        "parallel_efficiency_2_workers_vs_2_threads": local_2_s / farm_2_s,
        "overhead_ms_per_episode": 1e3 * (farm_1_s - local_1_s) / n as f64,
        "request_bytes_per_episode": per_episode("request_bytes"),
        "reply_bytes_per_episode": per_episode("reply_bytes"),
        "orchestrator_cpu_ms_per_job": orchestrator_ms_per_job,
        "router_cpu_ms_per_job": router_ms_per_job,
        "worker_cpu_overhead_ms_per_episode": 1e3 * (workers_1_cpu / n as f64 - sim_cpu_s),
        "model": {
            "episodes_per_s_per_worker_core": per_core,
            "orchestrator_limit_eps": orchestrator_limit,
            "one_router_limit_eps": router_limit,
            "gigabit_link_limit_eps": link_limit,
            "worker_cores_at_orchestrator_limit": workers_at(orchestrator_limit),
            "worker_cores_at_one_router_limit": workers_at(router_limit),
            "worker_cores_at_link_limit": workers_at(link_limit),
        },
    });
    println!("{report}");
    Ok(())
}
