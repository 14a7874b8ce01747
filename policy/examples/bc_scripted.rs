//! Behaviour cloning on scripted demonstrations, evaluated on held-out seeds.
//! `cargo run --release -p coevolve-policy --example bc_scripted -- <skill> <episodes> <steps> <size> <obs>`
use std::sync::Arc;

use policy::bc::{train_bc, BcConfig};
use policy::rollout::evaluate;
use policy::{ModelConfig, ObsMode, OptimConfig};
use sim::library::{sample_task, TaskRanges};
use sim::{BatchConfig, EpisodeBatch, EpisodeInfo, ScriptedPickPlace, SimConfig, SkillKind};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let skill = SkillKind::parse(args.first().map_or("reach", String::as_str))?;
    let episodes: usize = args.get(1).map_or(Ok(100), |s| s.parse())?;
    let steps: usize = args.get(2).map_or(Ok(1000), |s| s.parse())?;
    let size = args.get(3).map_or("small", String::as_str);
    let obs = ObsMode::parse(args.get(4).map_or("state", String::as_str))?;
    let robot = Arc::new(robots::builtin::load_manipulator("ur5e", None)?);
    let mut sim = SimConfig::default();
    if obs == ObsMode::Rgbd {
        sim.cameras = SimConfig::default_cameras()
            .into_iter()
            .filter(|c| c.name == "front")
            .collect();
    }
    let sim = Arc::new(sim);
    let t0 = std::time::Instant::now();
    let ranges = TaskRanges::default();
    let batch = EpisodeBatch::run(
        robot.clone(),
        sim.clone(),
        &BatchConfig {
            episodes,
            seed: 1,
            threads: None,
            record_images: obs == ObsMode::Rgbd,
        },
        &|_, rng| sample_task(skill, &ranges, rng),
        &|info: &EpisodeInfo<'_>| -> Box<dyn sim::Controller> {
            Box::new(ScriptedPickPlace::new(info, sim.action_scale.clone()))
        },
        &|| {},
    )?;
    println!(
        "demos: {} episodes, success {:.2}, {:.1}s",
        episodes,
        batch.stats.success_rate,
        t0.elapsed().as_secs_f64()
    );
    let model = ModelConfig::preset(size, obs)?;
    let (mut policy, data) = policy::train::policy_for_episodes(
        &batch.episodes,
        &robot,
        &sim,
        &model,
        tch::Device::Cpu,
        0,
    )?;
    println!("samples {} params {}", data.len, policy.parameter_count());
    let batch_size: usize = std::env::var("BATCH")
        .ok()
        .and_then(|b| b.parse().ok())
        .unwrap_or(256);
    let cfg = BcConfig {
        optim: OptimConfig {
            steps,
            batch_size,
            ..OptimConfig::default()
        },
        ..BcConfig::default()
    };
    let t1 = std::time::Instant::now();
    let report = train_bc(&mut policy, &data, None, &cfg, &mut |p| {
        if p.step % 200 == 0 {
            println!(
                "step {} loss {:.3} nll {:.3} v {:.3} {:.0} samples/s",
                p.step, p.loss, p.nll, p.value_loss, p.samples_per_sec
            );
        }
    })?;
    println!("train {:.1}s {:?}", t1.elapsed().as_secs_f64(), report);
    let eval = evaluate(&policy, &robot, skill, 100, 1000, 2)?;
    println!("eval: {}", serde_json::to_string(&eval)?);
    Ok(())
}
