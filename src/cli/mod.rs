//! Command definitions and dispatch.

mod bench;
mod refine_cmd;
mod replay_cmd;
mod robots_cmd;
mod sim_cmd;

use clap::{Parser, Subcommand};

/// Embodied robot learning by agent–data co-evolution.
#[derive(Debug, Parser)]
#[command(name = "coevolve", version, about)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run a batch of simulated episodes headless and report success and speed.
    Sim(sim_cmd::SimArgs),
    /// Refine raw episodes into short, smooth, re-validated golden demonstrations.
    Refine(refine_cmd::RefineArgs),
    /// Replay a recorded (raw and/or refined) episode into a rerun .rrd file or viewer.
    Replay(replay_cmd::ReplayArgs),
    /// Inspect robot models.
    Robots {
        #[command(subcommand)]
        command: robots_cmd::RobotsCommand,
    },
    /// Benchmarks: physics throughput against MuJoCo, camera frames per second.
    Bench(bench::BenchArgs),
}

pub fn run(cli: Cli) -> anyhow::Result<()> {
    match cli.command {
        Command::Sim(args) => sim_cmd::run(&args),
        Command::Refine(args) => refine_cmd::run(&args),
        Command::Replay(args) => replay_cmd::run(&args),
        Command::Robots { command } => robots_cmd::run(&command),
        Command::Bench(args) => bench::run(&args),
    }
}
