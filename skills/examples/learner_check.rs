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
    let ctx = prepare(
        &dir,
        EvolveConfig {
            device: "cpu".into(),
            ..EvolveConfig::default()
        },
        false,
    )
    .unwrap();
    let mut config = SimConfig::default();
    config.cameras.clear();
    let config = Arc::new(config);
    let scale = config.action_scale.clone();
    let ranges = TaskRanges::default();
    let reach = ctx.tree.get("reach").unwrap().clone();
    let batch = EpisodeBatch::run(
        ctx.robot.clone(),
        config.clone(),
        &BatchConfig {
            episodes: 60,
            seed: 1,
            threads: None,
            record_images: false,
        },
        &|_, rng| {
            if std::env::var("LIB").is_ok() {
                sample_task(SkillKind::Reach, &ranges, rng)
            } else {
                reach.sample_task(rng)
            }
        },
        &|info: &EpisodeInfo<'_>| -> Box<dyn sim::Controller> {
            Box::new(ScriptedPickPlace::new(info, scale.clone()))
        },
        &|| {},
    )
    .unwrap();
    let mut eps: Vec<_> = batch
        .episodes
        .into_iter()
        .filter(|e| e.outcome.success)
        .collect();
    if std::env::var("PLAN").is_ok() {
        let cem = skills::explorer::CemConfig {
            iterations: 3,
            ..Default::default()
        };
        let r =
            skills::explorer::cem_search(&reach, &ctx.robot, &ctx.sim, &cem, &mut |_| {}).unwrap();
        let first: usize = std::env::var("FIRST")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(0);
        let plans = vec![skills::explorer::plan_suffix(&r.distribution.mean, first); 60];
        println!(
            "mean plan {:?}",
            r.distribution
                .mean
                .iter()
                .map(|v| (v * 1000.0).round() / 1000.0)
                .collect::<Vec<_>>()
        );
        eps = skills::explorer::run_plans(
            &plans,
            &|_, rng| reach.sample_task(rng),
            &ctx.robot,
            &ctx.sim,
            cem.segment_s,
            77,
            None,
        )
        .unwrap()
        .into_iter()
        .filter(|e| e.outcome.success)
        .collect();
    }
    if refine || std::env::var("REFINE").is_ok() {
        eps = sim::refine::refine(
            &ctx.robot,
            &ctx.sim,
            &std::env::var("REFINE")
                .ok()
                .map(|t| serde_json::from_str(&t).unwrap())
                .unwrap_or_default(),
            &eps,
            &[],
        )
        .unwrap()
        .golden;
    }
    println!(
        "{} demos (refined {refine}), mean steps {:.0}",
        eps.len(),
        eps.iter().map(|e| e.steps.len()).sum::<usize>() as f64 / eps.len() as f64
    );
    tch::set_num_threads(2);
    let spec = TrainSpec {
        model: &ctx.model,
        tokenizer: &ctx.tokenizer,
        robot: &ctx.robot,
        sim: &ctx.sim,
        device: ctx.device,
        steps: 300,
        batch_size: 128,
        lr: std::env::var("LR")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(1e-3),
        replay_fraction: 0.3,
        seed: 0,
    };
    let (p, fig) = train_generation(None, &eps, &[], vec!["reach".into()], &spec).unwrap();
    println!("train {fig:?}");
    let skill = ctx.tree.get("reach").unwrap();
    println!("heldout {:?}", heldout(&ctx, &p, skill).unwrap());
    let seeds: Vec<u64> = (0..32)
        .map(|i| sim::episode::episode_seed(1000, i))
        .collect();
    let tasks: Vec<_> = seeds
        .iter()
        .map(|s| {
            skill
                .sample_task(&mut <rand_chacha::ChaCha8Rng as rand::SeedableRng>::seed_from_u64(*s))
        })
        .collect();
    for t in [None, Some(0.5)] {
        let runs =
            skills::evolve::learner::run_policy(&p, &ctx.robot, &tasks, &seeds, t, 2).unwrap();
        let mut ok = 0;
        for r in &runs {
            let e = &r.episode;
            let target = nalgebra::Vector3::from(e.task.zones[0].center_m);
            let ee = sim::refine::metrics::ee_positions(e);
            let d_end = (ee.last().unwrap() - target).norm();
            let d_min = ee
                .iter()
                .map(|p| (p - target).norm())
                .fold(f64::MAX, f64::min);
            if e.outcome.success {
                ok += 1;
            } else {
                print!(
                    "[{} steps, end {:.3}, min {:.3}] ",
                    e.steps.len(),
                    d_end,
                    d_min
                );
            }
        }
        println!(
            "\n{t:?}: {ok}/32; tolerance {}",
            tasks[0].goal.reach_tolerance_m
        );
    }
}

fn tempfile_dir() -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("learner-check-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}
