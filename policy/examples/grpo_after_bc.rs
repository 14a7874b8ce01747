//! GRPO after a deliberately weak BC start (few demonstrations, short training): held-out
//! success before and after on the same 100 evaluation seeds — the longer twin of
//! `policy/tests/grpo.rs`.
//! `cargo run --release -p coevolve-policy --example grpo_after_bc -- [skill] [demos] [bc steps] [iterations]`
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../tests/common.rs"]
mod common;

use policy::bc::{train_bc, BcConfig};
use policy::grpo::{train_grpo, GrpoConfig};
use policy::rollout::evaluate;
use policy::{ObsMode, OptimConfig};
use sim::SkillKind;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let skill = SkillKind::parse(args.first().map_or("lift", String::as_str))?;
    let demos: usize = args.get(1).map_or(Ok(10), |s| s.parse())?;
    let bc_steps: usize = args.get(2).map_or(Ok(200), |s| s.parse())?;
    let iterations: usize = args.get(3).map_or(Ok(6), |s| s.parse())?;
    let robot = common::ur5e();
    let (episodes, config) = common::demos(&robot, skill, demos, 1, false);
    let (mut policy, data) =
        common::policy_for(&episodes, &robot, &config, "small", ObsMode::State);
    let optim = OptimConfig {
        steps: bc_steps,
        batch_size: 128,
        warmup_steps: 20,
        ..OptimConfig::default()
    };
    let start = std::time::Instant::now();
    train_bc(
        &mut policy,
        &data,
        None,
        &BcConfig {
            optim,
            ..BcConfig::default()
        },
        &mut |_| {},
    )?;
    println!(
        "bc: {demos} demos, {bc_steps} steps, {:.0} s",
        start.elapsed().as_secs_f64()
    );
    let before = evaluate(&policy, &robot, skill, 100, 1000, 2)?;
    println!("before: {}", serde_json::to_string(&before)?);
    let start = std::time::Instant::now();
    let mut cfg = GrpoConfig {
        iterations,
        ..GrpoConfig::default()
    };
    let env = |name: &str| std::env::var(name).ok().and_then(|v| v.parse::<f64>().ok());
    if let Some(lr) = env("GRPO_LR") {
        cfg.lr = lr;
    }
    if let Some(m) = env("GRPO_MINIBATCH") {
        cfg.minibatch = m as usize;
    }
    if let Some(e) = env("GRPO_EPOCHS") {
        cfg.epochs = e as usize;
    }
    if let Some(t) = env("GRPO_TEMPERATURE") {
        cfg.temperature = t;
    }
    if let Some(k) = env("GRPO_KL") {
        cfg.kl_beta = k;
    }
    train_grpo(&mut policy, &robot, skill, &cfg, &mut |it| {
        println!("{}", serde_json::to_string(it).unwrap_or_default());
    })?;
    println!(
        "grpo: {iterations} iterations, {:.0} s",
        start.elapsed().as_secs_f64()
    );
    let after = evaluate(&policy, &robot, skill, 100, 1000, 2)?;
    println!("after: {}", serde_json::to_string(&after)?);
    Ok(())
}
