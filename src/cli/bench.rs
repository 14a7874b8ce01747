//! `coevolve bench physics|camera`.

use clap::{Args, ValueEnum};
use sim::anchor::{physics_report_with, PhysicsReportConfig};

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum BenchKind {
    /// The anchor arm-cube scene: physics steps/s next to MuJoCo's, plus fidelity probes.
    Physics,
    /// 64×64 RGB-D + segmentation frames/s per core in the default pick scene.
    Camera,
}

#[derive(Debug, Args)]
pub struct BenchArgs {
    pub kind: BenchKind,
    /// Threads of the all-cores run (default: all cores). The camera bench is per core.
    #[arg(long)]
    pub threads: Option<usize>,
    /// Physics: skip MuJoCo (its fields are then null).
    #[arg(long)]
    pub no_mujoco: bool,
    /// Camera: frames to render.
    #[arg(long, default_value_t = 5000)]
    pub frames: usize,
    /// Print one JSON object.
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: &BenchArgs) -> anyhow::Result<()> {
    let threads = match args.threads {
        Some(0) => anyhow::bail!("--threads must be at least 1"),
        Some(n) => n,
        None => std::thread::available_parallelism().map_or(1, usize::from),
    };
    match args.kind {
        BenchKind::Physics => {
            let cfg = PhysicsReportConfig::new(threads, !args.no_mujoco);
            let r = physics_report_with(&cfg)?;
            if args.json {
                println!("{}", serde_json::to_string(&r)?);
            } else {
                let fmt = |v: Option<f64>| v.map_or("n/a".to_owned(), |v| format!("{v:.0}"));
                let ratio = |v: Option<f64>| v.map_or("n/a".to_owned(), |v| format!("{v:.2}×"));
                println!(
                    "physics, anchor arm-cube scene ({:?} joints)",
                    r.articulation
                );
                println!(
                    "  1 thread : ours {:.0} steps/s, MuJoCo {} steps/s, ratio {}",
                    r.steps_per_sec_1t,
                    fmt(r.mujoco_steps_per_sec_1t),
                    ratio(r.ratio_1t)
                );
                println!(
                    "  {} threads: ours {:.0} steps/s (scaling {:.2}×), MuJoCo {} steps/s, ratio {}",
                    r.threads,
                    r.steps_per_sec,
                    r.scaling,
                    fmt(r.mujoco_steps_per_sec),
                    ratio(r.ratio)
                );
                if let Some(note) = &r.note {
                    println!("  note: {note}");
                }
            }
        }
        BenchKind::Camera => {
            if args.frames == 0 {
                anyhow::bail!("--frames must be at least 1");
            }
            let r = sim::scene::camera_bench::pick_scene_camera_bench(args.frames)?;
            if args.json {
                println!("{}", serde_json::to_string(&r)?);
            } else {
                println!(
                    "camera {}×{} RGB-D+segmentation: {:.0} frames/s per core ({:.2} M rays/s)",
                    r.width,
                    r.height,
                    r.frames_per_sec,
                    r.rays_per_sec / 1e6
                );
            }
        }
    }
    Ok(())
}
