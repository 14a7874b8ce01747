//! `coevolve bench physics|camera`.

use clap::{Args, ValueEnum};

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum BenchKind {
    /// The anchor arm-cube scene: physics steps/s next to MuJoCo's, plus fidelity.
    Physics,
    /// 64×64 RGB-D + segmentation frames/s per core in the default pick scene.
    Camera,
}

#[derive(Debug, Args)]
pub struct BenchArgs {
    pub kind: BenchKind,
    /// Threads for the all-cores figure (default: all cores).
    #[arg(long)]
    pub threads: Option<usize>,
    /// Skip running MuJoCo (physics only).
    #[arg(long)]
    pub no_mujoco: bool,
    /// Print one JSON object.
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: &BenchArgs) -> anyhow::Result<()> {
    let _ = args;
    anyhow::bail!("bench: not wired yet")
}
