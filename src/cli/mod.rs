//! Command definitions and dispatch.

mod bench;
mod bridge_cmd;
mod evolve_cmd;
mod export_cmd;
mod farm_cmd;
mod farm_link;
mod policy_cmd;
mod refine_cmd;
mod replay_cmd;
mod robots_cmd;
mod sim_cmd;
mod tree_cmd;

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
    /// The co-evolution loop over a skill tree (the main job); resumable with --resume.
    Evolve(evolve_cmd::EvolveArgs),
    /// Write a run's skill-tree progress report (report.html, report.md, report.json).
    Report(evolve_cmd::ReportArgs),
    /// Compare runs (the ablation table and plot).
    Compare(evolve_cmd::CompareArgs),
    /// Run a batch of simulated episodes headless and report success and speed.
    Sim(sim_cmd::SimArgs),
    /// The simulation farm on zenoh: workers, a router, its status.
    Farm {
        #[command(subcommand)]
        command: farm_cmd::FarmCommand,
    },
    /// Refine raw episodes into short, smooth, re-validated golden demonstrations.
    Refine(refine_cmd::RefineArgs),
    /// Replay a recorded (raw and/or refined) episode into a rerun .rrd file or viewer.
    Replay(replay_cmd::ReplayArgs),
    /// Export episodes to other tools' formats (LeRobot datasets).
    Export {
        #[command(subcommand)]
        command: export_cmd::ExportCommand,
    },
    /// Inspect robot models.
    Robots {
        #[command(subcommand)]
        command: robots_cmd::RobotsCommand,
    },
    /// Load, validate and print a skill tree.
    Tree(tree_cmd::TreeArgs),
    /// Train a policy by behaviour cloning on (golden) episodes.
    Train(policy_cmd::TrainArgs),
    /// Evaluate a policy checkpoint on held-out task variants.
    Eval(policy_cmd::EvalArgs),
    /// Improve a policy checkpoint with GRPO on simulator rollouts.
    Grpo(policy_cmd::GrpoArgs),
    /// Benchmarks: physics vs MuJoCo, camera fps, training samples/s, inference latency.
    Bench(bench::BenchArgs),
    /// Run the robot controller: signed bundles in, safety-filtered joint commands out (zenoh).
    Controller(bridge_cmd::ControllerArgs),
    /// A simulated arm that speaks the controller protocol over zenoh.
    SimRobot(bridge_cmd::SimRobotArgs),
    /// Sign a run's policy for one skill, send it to a controller and print its answer.
    Deploy(bridge_cmd::DeployArgs),
    /// Engage (or release) a robot's latched e-stop.
    Estop(bridge_cmd::EstopArgs),
    /// Signing keys for policy bundles.
    Keys {
        #[command(subcommand)]
        command: bridge_cmd::KeysCommand,
    },
}

pub fn run(cli: Cli) -> anyhow::Result<()> {
    match cli.command {
        Command::Evolve(args) => evolve_cmd::evolve(&args),
        Command::Report(args) => evolve_cmd::report(&args),
        Command::Compare(args) => evolve_cmd::compare(&args),
        Command::Sim(args) => sim_cmd::run(&args),
        Command::Farm { command } => farm_cmd::run(&command),
        Command::Refine(args) => refine_cmd::run(&args),
        Command::Replay(args) => replay_cmd::run(&args),
        Command::Export { command } => export_cmd::run(&command),
        Command::Robots { command } => robots_cmd::run(&command),
        Command::Tree(args) => tree_cmd::run(&args),
        Command::Train(args) => policy_cmd::train(&args),
        Command::Eval(args) => policy_cmd::eval(&args),
        Command::Grpo(args) => policy_cmd::grpo(&args),
        Command::Bench(args) => bench::run(&args),
        Command::Controller(args) => bridge_cmd::controller(&args),
        Command::SimRobot(args) => bridge_cmd::sim_robot(&args),
        Command::Deploy(args) => bridge_cmd::deploy(&args),
        Command::Estop(args) => bridge_cmd::estop(&args),
        Command::Keys { command } => bridge_cmd::keys(&command),
    }
}
