//! Diagnostic: the loop's learner (train_generation + held-out evaluation on the tree's seeds)
//! on scripted reach demonstrations, raw or refined.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;

use sim::library::{sample_task, TaskRanges};
use sim::scripted::ScriptedPickPlace;
use sim::{BatchConfig, EpisodeBatch, EpisodeInfo, SimConfig, SkillKind};
use skills::evolve::generation::heldout;
use skills::evolve::learner::{train_generation, TrainSpec};
use skills::evolve::{prepare, EvolveConfig};

fn main() {
    let refine = std::env::args().nth(1).as_deref() == Some("refine");
    let dir = tempfile_dir();
    let ctx = prepare(&dir, EvolveConfig { device: "cpu".into(), ..EvolveConfig::default() }, false).unwrap();
    let mut config = SimConfig::default();
    config.cameras.clear();
    let config = Arc::new(config);
    let scale = config.action_scale.clone();
    let ranges = TaskRanges::default();
    let reach = ctx.tree.get("reach").unwrap().clone();
    let batch = EpisodeBatch::run(
        ctx.robot.clone(),
        config.clone(),
        &BatchConfig { episodes: 60, seed: 1, threads: None, record_images: false },
        &|_, rng| if std::env::var("LIB").is_ok() { sample_task(SkillKind::Reach, &ranges, rng) } else { reach.sample_task(rng) },
        &|info: &EpisodeInfo<'_>| -> Box<dyn sim::Controller> { Box::new(ScriptedPickPlace::new(info, scale.clone())) },
        &|| {},
    )
    .unwrap();
    let mut eps: Vec<_> = batch.episodes.into_iter().filter(|e| e.outcome.success).collect();
    if refine {
        eps = sim::refine::refine(&ctx.robot, &ctx.sim, &std::env::var("REFINE").ok().map(|t| serde_json::from_str(&t).unwrap()).unwrap_or_default(), &eps, &[]).unwrap().golden;
    }
    println!("{} demos (refined {refine}), mean steps {:.0}", eps.len(), eps.iter().map(|e| e.steps.len()).sum::<usize>() as f64 / eps.len() as f64);
    tch::set_num_threads(2);
    let spec = TrainSpec {
        model: &ctx.model, tokenizer: &ctx.tokenizer, robot: &ctx.robot, sim: &ctx.sim, device: ctx.device,
        steps: 300, batch_size: 128, lr: std::env::var("LR").ok().and_then(|v| v.parse().ok()).unwrap_or(1e-3), replay_fraction: 0.3, seed: 0,
    };
    let (p, fig) = train_generation(None, &eps, &[], vec!["reach".into()], &spec).unwrap();
    println!("train {fig:?}");
    let skill = ctx.tree.get("reach").unwrap();
    println!("heldout {:?}", heldout(&ctx, &p, skill).unwrap());
}

fn tempfile_dir() -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("learner-check-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}
