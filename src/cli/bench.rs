//! `coevolve bench physics|camera|train|infer`.

use clap::{Args, ValueEnum};
use sim::anchor::{physics_report_with, Anchor, PhysicsReport, PhysicsReportConfig};

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum BenchKind {
    /// The anchor scenes (arm-cube, panda-cube): physics steps/s next to MuJoCo's, plus
    /// fidelity probes.
    Physics,
    /// 64×64 RGB-D + segmentation frames/s per core in the default pick scene.
    Camera,
    /// Policy training samples/s (BC loop, synthetic data); twin: benches/train_reference.py.
    Train,
    /// Policy inference latency per action chunk (batch 1), p50/p99.
    Infer,
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
    /// Physics: one anchor scene (arm-cube, panda-cube) instead of both; with --json, one
    /// JSON object per scene, one per line.
    #[arg(long)]
    pub anchor: Option<String>,
    /// Camera: frames to render.
    #[arg(long, default_value_t = 5000)]
    pub frames: usize,
    /// Train/infer: model size preset (tiny, small, base).
    #[arg(long, default_value = "small")]
    pub size: String,
    /// Train/infer: observation mode (state or rgbd).
    #[arg(long, default_value = "state")]
    pub obs: String,
    /// Train: timed steps (after 20 untimed warm-up steps); infer: timed inferences.
    #[arg(long)]
    pub steps: Option<usize>,
    /// Train: batch size.
    #[arg(long, default_value_t = 256)]
    pub batch_size: usize,
    /// Train/infer: auto, cpu, cuda or cuda:N.
    #[arg(long, default_value = "cpu")]
    pub device: String,
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
            let anchors = match &args.anchor {
                Some(name) => vec![name.parse::<Anchor>()?],
                None => Anchor::ALL.to_vec(),
            };
            for anchor in anchors {
                let cfg = PhysicsReportConfig {
                    anchor,
                    ..PhysicsReportConfig::new(threads, !args.no_mujoco)
                };
                let r = physics_report_with(&cfg)?;
                if args.json {
                    println!("{}", serde_json::to_string(&r)?);
                } else {
                    print_physics(&r);
                }
            }
        }
        BenchKind::Train => {
            let cfg = policy::bench::TrainBenchConfig {
                size: args.size.clone(),
                obs: policy::ObsMode::parse(&args.obs)?,
                steps: args.steps.unwrap_or(200).max(1),
                warmup_steps: 20,
                batch_size: args.batch_size.max(1),
                samples: 4096,
                threads,
                seed: 0,
            };
            let device = policy::device::parse_device(&args.device)?;
            let r = policy::bench::train_throughput(&cfg, device)?;
            if args.json {
                println!("{}", serde_json::to_string(&r)?);
            } else {
                println!(
                    "train {} {:?} ({} params), batch {}, {} threads on {}: {:.0} samples/s ({:.1} ms/step)",
                    r.size, r.obs, r.params, r.batch_size, r.threads, r.device, r.samples_per_sec, r.ms_per_step
                );
            }
        }
        BenchKind::Infer => {
            let device = policy::device::parse_device(&args.device)?;
            let obs = policy::ObsMode::parse(&args.obs)?;
            let n = args.steps.unwrap_or(1000).max(1);
            let r = policy::bench::inference_latency(&args.size, obs, n, threads, device)?;
            if args.json {
                println!("{}", serde_json::to_string(&r)?);
            } else {
                println!(
                    "infer {} {:?}, {} threads on {}: p50 {:.2} ms, p99 {:.2} ms per action chunk",
                    r.size, r.obs, r.threads, r.device, r.p50_ms, r.p99_ms
                );
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

fn print_physics(r: &PhysicsReport) {
    let fmt = |v: Option<f64>| v.map_or("n/a".to_owned(), |v| format!("{v:.0}"));
    let ratio = |v: Option<f64>| v.map_or("n/a".to_owned(), |v| format!("{v:.2}×"));
    println!(
        "physics, anchor {} scene ({:?} joints)",
        r.scene, r.articulation
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
    let (ours, theirs) = (&r.fidelity.ours, r.fidelity.mujoco.as_ref());
    let sag = |f: &sim::anchor::Fidelity| f.lifted_sag_j2_rad;
    println!(
        "  fidelity: lifted j2 sag ours {:.4} rad, MuJoCo {}; j2 step at 0.1 s ours {:.4} rad, MuJoCo {}",
        sag(ours),
        theirs.map_or("n/a".to_owned(), |m| format!("{:.4}", sag(m))),
        ours.step_j2.q_at_0_1_s_rad,
        theirs.map_or("n/a".to_owned(), |m| format!("{:.4}", m.step_j2.q_at_0_1_s_rad)),
    );
    if let Some(note) = &r.note {
        println!("  note: {note}");
    }
}
