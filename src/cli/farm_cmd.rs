//! `coevolve farm worker|router|status`, and the orchestrator side of `coevolve sim --farm`.

use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use bridge::farm::{sim_jobs, Farm, FarmOptions, FarmStats, Worker};
use bridge::transport::ZenohArgs;
use clap::{Args, Subcommand};
use sim::job::EpisodeJob;
use sim::Episode;

#[derive(Debug, Subcommand)]
pub enum FarmCommand {
    /// Run episode jobs for the farm's orchestrators (one per machine; --slots jobs at once).
    Worker(WorkerArgs),
    /// A zenoh router for the farm (zenoh's own router mode; any zenohd serves as well).
    Router(RouterArgs),
    /// List the farm's workers and orchestrators: slots, jobs in flight, episodes/s.
    Status(StatusArgs),
}

/// How a farm member reaches the farm.
#[derive(Debug, Args, Clone)]
pub struct FarmNet {
    /// The farm's router, e.g. tcp/10.0.0.1:7447 (repeatable).
    #[arg(long, required = true)]
    pub connect: Vec<String>,
    /// A zenoh JSON5 configuration file (TLS, user/password authentication); the endpoints
    /// are added to it.
    #[arg(long)]
    pub zenoh_config: Option<PathBuf>,
    /// zenoh mode: client (default: everything goes through the router) or peer.
    #[arg(long, default_value = "client")]
    pub mode: String,
}

impl FarmNet {
    pub fn zenoh(&self) -> ZenohArgs {
        ZenohArgs {
            connect: self.connect.clone(),
            listen: Vec::new(),
            config_file: self.zenoh_config.clone(),
            mode: Some(self.mode.clone()),
        }
    }
}

/// How a batch-running command uses a farm (`--farm` and its settings).
#[derive(Debug, Args, Clone)]
pub struct FarmFlags {
    /// Run the episodes on a farm's workers through this router (e.g. tcp/10.0.0.1:7447)
    /// instead of on this machine; the same episodes, the same results.
    #[arg(long)]
    pub farm: Option<String>,
    /// The farm's zenoh JSON5 configuration (TLS, authentication).
    #[arg(long, requires = "farm")]
    pub farm_config: Option<PathBuf>,
    /// Episodes per farm job.
    #[arg(long, default_value_t = 8, requires = "farm")]
    pub farm_job_episodes: usize,
    /// A farm job without a reply after this many seconds is dispatched again.
    #[arg(long, default_value_t = 120.0, requires = "farm")]
    pub farm_job_timeout_s: f64,
    /// Give up when no usable worker (nor the router) has been there for this many seconds.
    #[arg(long, default_value_t = 60.0, requires = "farm")]
    pub farm_wait_s: f64,
}

impl FarmFlags {
    /// The farm's network settings and options, the flags checked.
    pub fn settings(&self, endpoint: &str) -> anyhow::Result<(FarmNet, FarmOptions)> {
        if self.farm_job_episodes == 0 {
            anyhow::bail!("--farm-job-episodes must be at least 1");
        }
        let seconds = |flag: &str, s: f64| -> anyhow::Result<Duration> {
            if s > 0.0 && s.is_finite() && s < 1e9 {
                Ok(Duration::from_secs_f64(s))
            } else {
                anyhow::bail!("{flag} must be a positive number of seconds, not {s}")
            }
        };
        let net = FarmNet {
            connect: vec![endpoint.to_owned()],
            zenoh_config: self.farm_config.clone(),
            mode: "client".to_owned(),
        };
        let options = FarmOptions {
            job_timeout: seconds("--farm-job-timeout-s", self.farm_job_timeout_s)?,
            wait_for_workers: seconds("--farm-wait-s", self.farm_wait_s)?,
        };
        Ok((net, options))
    }
}

#[derive(Debug, Args)]
pub struct WorkerArgs {
    #[command(flatten)]
    pub net: FarmNet,
    /// Jobs run at once, one thread each [default: all cores].
    #[arg(long)]
    pub slots: Option<usize>,
}

#[derive(Debug, Args)]
pub struct RouterArgs {
    /// Endpoint to listen on, e.g. tcp/0.0.0.0:7447 (repeatable).
    #[arg(long, required = true)]
    pub listen: Vec<String>,
    /// A zenoh JSON5 configuration file (TLS, authentication).
    #[arg(long)]
    pub zenoh_config: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct StatusArgs {
    #[command(flatten)]
    pub net: FarmNet,
    /// How long to wait for answers, in milliseconds.
    #[arg(long, default_value_t = 1000)]
    pub timeout_ms: u64,
    /// Print JSON instead of a table.
    #[arg(long)]
    pub json: bool,
}

pub fn run(command: &FarmCommand) -> anyhow::Result<()> {
    match command {
        FarmCommand::Worker(args) => worker(args),
        FarmCommand::Router(args) => router(args),
        FarmCommand::Status(args) => status(args),
    }
}

fn worker(args: &WorkerArgs) -> anyhow::Result<()> {
    let slots = args
        .slots
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    // Before joining: joining waits for the router.
    anyhow::ensure!(slots >= 1, "--slots {slots}: must be at least 1");
    eprintln!("farm worker: joining {}", args.net.connect.join(", "));
    let session = args
        .net
        .zenoh()
        .open_waiting(None)
        .context("joining the farm")?;
    let worker = Worker::new(
        session,
        slots,
        Arc::new(super::farm_link::WorkerRunner::default()),
    )?;
    eprintln!(
        "farm worker {}: {slots} slots, build {}, connected to {}",
        worker.id(),
        bridge::farm::wire::build_id()?,
        args.net.connect.join(", ")
    );
    worker.serve(&AtomicBool::new(false))?;
    Ok(())
}

fn router(args: &RouterArgs) -> anyhow::Result<()> {
    let session = ZenohArgs {
        connect: Vec::new(),
        listen: args.listen.clone(),
        config_file: args.zenoh_config.clone(),
        mode: Some("router".to_owned()),
    }
    .open()
    .context("starting the farm router")?;
    eprintln!(
        "farm router {} listening on {}",
        session.zid(),
        args.listen.join(", ")
    );
    loop {
        std::thread::park();
    }
}

fn status(args: &StatusArgs) -> anyhow::Result<()> {
    let session = args.net.zenoh().open().context("joining the farm")?;
    let members = bridge::farm::status::collect(&session, Duration::from_millis(args.timeout_ms))?;
    if args.json {
        println!("{}", serde_json::to_string(&members)?);
        return Ok(());
    }
    println!("role          id                                slots  busy  jobs done  episodes  episodes/s");
    for m in &members {
        println!(
            "{:<13} {:<33} {:>5} {:>5} {:>10} {:>9} {:>11.1}",
            m.role, m.id, m.slots, m.busy, m.jobs_done, m.episodes_done, m.episodes_per_s
        );
    }
    if members.is_empty() {
        println!("(no farm member answered within {} ms)", args.timeout_ms);
    }
    Ok(())
}

/// Runs episode jobs on the farm; the episodes in batch order and what the farm did.
pub fn run_jobs(
    net: &FarmNet,
    options: FarmOptions,
    jobs: &[EpisodeJob],
    progress: &dyn Fn(usize),
) -> anyhow::Result<(Vec<Episode>, FarmStats)> {
    let farm = Farm::connect(&net.zenoh(), options).context("joining the farm")?;
    let payloads = jobs
        .iter()
        .map(EpisodeJob::to_bytes)
        .collect::<Result<Vec<_>, _>>()?;
    let (results, stats) = farm.run(sim_jobs::EPISODES, &payloads, &|job| {
        progress(jobs[job].episodes.len());
    })?;
    let mut episodes = Vec::new();
    for (job, bytes) in results.iter().enumerate() {
        let batch = sim::store::decode_episodes(bytes)
            .map_err(|e| anyhow::anyhow!("farm job {job}'s episodes: {e}"))?;
        episodes.extend(batch);
    }
    Ok((episodes, stats))
}
