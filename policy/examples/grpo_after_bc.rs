//! GRPO after a deliberately weak BC start (few demonstrations, short training): held-out
//! success before and after, on the same evaluation seeds.
//! `cargo run --release -p coevolve-policy --example grpo_after_bc -- <skill> <demos> <bc steps> <grpo iterations>`
use std::sync::Arc;

use policy::bc::{train_bc, BcConfig};
use policy::grpo::{train_grpo, GrpoConfig};
use policy::rollout::evaluate;
use policy::{ModelConfig, ObsMode, OptimConfig};
use sim::library::{sample_task, TaskRanges};
use sim::{BatchConfig, EpisodeBatch, EpisodeInfo, ScriptedPickPlace, SimConfig, SkillKind};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let skill = SkillKind::parse(args.first().map_or("lift", String::as_str))?;
    let demos: usize = args.get(1).map_or(Ok(10), |s| s.parse())?;
    let bc_steps: usize = args.get(2).map_or(Ok(200), |s| s.parse())?;
    let iterations: usize = args.get(3).map_or(Ok(6), |s| s.parse())?;
    let robot = Arc::new(robots::builtin::load_manipulator("ur5e", None)?);
    let sim = Arc::new(SimConfig::default());
    let scale = sim.action_scale.clone();
    let ranges = TaskRanges::default();
    let batch = EpisodeBatch::run(
        robot.clone(),
        sim.clone(),
        &BatchConfig {
            episodes: demos,
            seed: 1,
            threads: None,
            record_images: false,
        },
        &|_, rng| sample_task(skill, &ranges, rng),
        &|info: &EpisodeInfo<'_>| -> Box<dyn sim::Controller> {
            Box::new(ScriptedPickPlace::new(info, scale.clone()))
        },
        &|| {},
    )?;
    let model = ModelConfig::preset("small", ObsMode::State)?;
    let (mut policy, data) = policy::train::policy_for_episodes(
        &batch.episodes,
        &robot,
        &sim,
        &model,
        tch::Device::Cpu,
        0,
    )?;
    let cfg = BcConfig {
        optim: OptimConfig {
            steps: bc_steps,
            batch_size: 128,
            warmup_steps: 20,
            ..OptimConfig::default()
        },
        ..BcConfig::default()
    };
    let t0 = std::time::Instant::now();
    train_bc(&mut policy, &data, None, &cfg, &mut |_| {})?;
    println!(
        "bc: {demos} demos, {bc_steps} steps, {:.0} s",
        t0.elapsed().as_secs_f64()
    );
    let before = evaluate(&policy, &robot, skill, 100, 1000, 2)?;
    println!("before: {}", serde_json::to_string(&before)?);
    let t1 = std::time::Instant::now();
    let grpo = GrpoConfig {
        iterations,
        ..GrpoConfig::default()
    };
    train_grpo(&mut policy, &robot, skill, &grpo, &mut |it| {
        println!("{}", serde_json::to_string(it).unwrap_or_default())
    })?;
    println!(
        "grpo: {iterations} iterations, {:.0} s",
        t1.elapsed().as_secs_f64()
    );
    let after = evaluate(&policy, &robot, skill, 100, 1000, 2)?;
    println!("after: {}", serde_json::to_string(&after)?);
    Ok(())
}
