//! How demonstration quality drives the loop's learner: 60 reach demonstrations from one
//! source, the loop's behaviour cloning (300 steps), greedy held-out success on the tree's reach
//! seeds. Sources: `scripted` (the reference controller), `plan` (the mean plan of a 3-iteration
//! CEM search, which wanders through its keyframes), `suffix` (that plan's last keyframe only);
//! `refine` re-times the demonstrations with the refiner's defaults first.
//! `cargo run --release -p coevolve-skills --example demo_quality -- [scripted|plan|suffix] [refine]`
#![allow(clippy::unwrap_used, clippy::expect_used)]

use sim::scripted::ScriptedPickPlace;
use sim::{BatchConfig, EpisodeBatch, EpisodeInfo};
use skills::evolve::evaluate::heldout;
use skills::evolve::learner::{train_generation, SkillData, TrainSpec};
use skills::evolve::{prepare, EvolveConfig};
use skills::explorer::{cem_search, plan_suffix, run_plans, CemConfig};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let source = args.first().map_or("suffix", String::as_str).to_owned();
    let refine = args.iter().any(|a| a == "refine");
    let dir = std::env::temp_dir().join(format!("demo-quality-{}", std::process::id()));
    let cfg = EvolveConfig {
        device: "cpu".into(),
        ..EvolveConfig::default()
    };
    let ctx = prepare(&dir, cfg, false).unwrap();
    let reach = ctx.tree.get("reach").unwrap().clone();
    let tasks = |_: usize, rng: &mut rand_chacha::ChaCha8Rng| reach.sample_task(rng);
    let episodes = match source.as_str() {
        "scripted" => {
            let scale = ctx.sim.action_scale.clone();
            let factory = |info: &EpisodeInfo<'_>| -> Box<dyn sim::Controller> {
                Box::new(ScriptedPickPlace::new(info, scale.clone()))
            };
            let batch_cfg = BatchConfig {
                episodes: 60,
                seed: 1,
                threads: None,
                record_images: false,
            };
            EpisodeBatch::run(
                ctx.robot.clone(),
                ctx.sim.clone(),
                &batch_cfg,
                &tasks,
                &factory,
                &|| {},
            )
            .unwrap()
            .episodes
        }
        "plan" | "suffix" => {
            let cem = CemConfig {
                iterations: 3,
                ..CemConfig::default()
            };
            let found = cem_search(&reach, &ctx.robot, &ctx.sim, &cem, &mut |_| {}).unwrap();
            let first = if source == "suffix" {
                cem.keyframes - 1
            } else {
                0
            };
            let plans =
                vec![plan_suffix(found.distribution.layout, &found.distribution.mean, first); 60];
            run_plans(
                &plans,
                &tasks,
                &ctx.robot,
                &ctx.sim,
                cem.segment_s,
                77,
                None,
            )
            .unwrap()
        }
        other => panic!("unknown source `{other}` (scripted, plan, suffix)"),
    };
    let mut demos: Vec<_> = episodes.into_iter().filter(|e| e.outcome.success).collect();
    if refine {
        let refined = sim::refine::refine(&ctx.robot, &ctx.sim, &Default::default(), &demos, &[]);
        demos = refined.unwrap().golden;
    }
    let steps = demos.iter().map(|e| e.steps.len()).sum::<usize>() as f64;
    tch::set_num_threads(2);
    let spec = TrainSpec {
        model: &ctx.model,
        tokenizer: &ctx.tokenizer,
        robot: &ctx.robot,
        sim: &ctx.sim,
        device: ctx.device,
        steps: 300,
        batch_size: 128,
        lr: 1e-3,
        replay_fraction: 0.3,
        frontier_weight: 0.0,
        train_passes: 0.0,
        passes_over_pool: false,
        ema_decay: 0.0,
        seed: 0,
    };
    let pool = [SkillData {
        skill: "reach".into(),
        episodes: demos.clone(),
        imitate_from: Vec::new(),
        frontier: true,
    }];
    let (policy, _) = train_generation(None, &pool, &spec).unwrap();
    let (ok, n) = heldout(&ctx, &policy, &reach).unwrap();
    println!(
        "{source}{}: {} demonstrations, {:.0} steps each, held-out {ok}/{n}",
        if refine { " refined" } else { "" },
        demos.len(),
        steps / demos.len().max(1) as f64
    );
    let _ = std::fs::remove_dir_all(&dir);
}
