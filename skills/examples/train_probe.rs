//! Diagnostic: one generation's training redone on a run's pool with different batch mixes and
//! weight averaging, from the same starting checkpoint; prints each candidate's held-out
//! success per learned skill. Separates the effect of the training settings from the run's
//! trajectory.
//!
//! `cargo run --release -p coevolve-skills --example train_probe -- RUN GEN [FROM_GEN]`
//! trains generation GEN's pool (golden and failures banked up to GEN) starting from the
//! checkpoint of FROM_GEN (default GEN − 1), with frontier_weight ∈ {0, 2} × ema ∈ {0, 0.99}
//! (or `SETTINGS`; `ONLY=skill` for one skill's data alone).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use skills::evolve::config::EvolveConfig;
use skills::evolve::curriculum::stream_seed;
use skills::evolve::evaluate::heldout;
use skills::evolve::learner::{train_generation, SkillData, TrainSpec};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let run = std::path::PathBuf::from(&args[0]);
    let generation: usize = args[1].parse().unwrap();
    let from: usize = args.get(2).map_or(generation - 1, |a| a.parse().unwrap());
    let ctx = skills::evolve::prepare(&run, EvolveConfig::default(), true).unwrap();
    tch::set_num_threads(2);
    let state = ctx.dir.read_state().unwrap();
    let start = policy::checkpoint::load(&ctx.dir.checkpoint(from), ctx.device).unwrap();
    let mastered_before: Vec<String> = state
        .skills
        .iter()
        .filter(|(_, st)| st.mastered_at.is_some_and(|m| m < generation))
        .map(|(n, _)| n.clone())
        .collect();
    let mut pool = Vec::new();
    let mut steps = 0;
    for skill in ctx
        .tree
        .skills
        .iter()
        .filter(|s| ctx.closure.contains(s.name()))
    {
        let mut episodes = ctx.dir.read_golden(skill.name(), generation + 1).unwrap();
        if episodes.is_empty() {
            continue;
        }
        // RAW_ONLY=1: leave out the refiner's replays (joint-position actions).
        if std::env::var("RAW_ONLY").is_ok() {
            episodes.retain(|e| {
                !e.steps
                    .iter()
                    .any(|s| matches!(s.action, sim::Action::JointPosition { .. }))
            });
        }
        // GOLDEN_FROM=g: only the golden episodes banked in generation g or later.
        if let Ok(g) = std::env::var("GOLDEN_FROM") {
            let older = ctx
                .dir
                .read_golden(skill.name(), g.parse().unwrap())
                .unwrap();
            episodes.drain(..older.len().min(episodes.len()));
        }
        let keep = ctx.cfg.max_golden_per_skill;
        episodes.drain(..episodes.len().saturating_sub(keep));
        let mut failures = ctx.dir.read_failures(skill.name(), generation + 1).unwrap();
        let keep = ctx.cfg.max_failures_per_skill;
        failures.drain(..failures.len().saturating_sub(keep));
        episodes.extend(failures);
        // ONLY=a,b: train on these skills' data alone, each as a frontier skill (a control:
        // does a mastered skill hold when trained on its own data again?).
        let only = std::env::var("ONLY").ok();
        if only
            .as_ref()
            .is_some_and(|o| !o.split(',').any(|n| n == skill.name()))
        {
            continue;
        }
        let frontier = only.is_some() || !mastered_before.iter().any(|m| m == skill.name());
        if frontier {
            steps += skill.def.budget.train_steps;
        }
        println!(
            "{}: {} episodes, frontier {frontier}",
            skill.name(),
            episodes.len()
        );
        pool.push(SkillData {
            skill: skill.name().to_owned(),
            episodes,
            imitate_from: Vec::new(),
            frontier,
        });
    }
    // SETTINGS="fw:ema:steps_scale:lr_scale ...": the candidates to train (default: frontier
    // weight 0 / 2 × ema 0 / 0.99 at the run's steps and lr; QUICK=1: the run's own settings).
    let settings: Vec<(f64, f64, f64, f64)> = match std::env::var("SETTINGS") {
        Ok(list) => list
            .split_whitespace()
            .map(|item| {
                let v: Vec<f64> = item.split(':').map(|x| x.parse().unwrap()).collect();
                (v[0], v[1], v[2], v[3])
            })
            .collect(),
        Err(_) if std::env::var("QUICK").is_ok() => vec![(2.0, 0.0, 1.0, 1.0)],
        Err(_) => vec![
            (0.0, 0.0, 1.0, 1.0),
            (2.0, 0.0, 1.0, 1.0),
            (0.0, 0.99, 1.0, 1.0),
            (2.0, 0.99, 1.0, 1.0),
        ],
    };
    // SIZE=tiny|small|base: another model size (trained from scratch).
    let model = std::env::var("SIZE").map_or(ctx.model.clone(), |size| {
        skills::evolve::learner::model_config(&size).unwrap()
    });
    for (frontier_weight, ema_decay, steps_scale, lr_scale) in settings {
        let spec = TrainSpec {
            model: &model,
            tokenizer: &ctx.tokenizer,
            robot: &ctx.robot,
            sim: &ctx.sim,
            device: ctx.device,
            steps: (steps as f64 * steps_scale).round() as usize,
            batch_size: ctx.cfg.batch_size,
            lr: ctx.cfg.lr * lr_scale,
            replay_fraction: ctx.cfg.replay_fraction,
            frontier_weight,
            train_passes: std::env::var("PASSES").map_or(0.0, |v| v.parse().unwrap()),
            // POOL_PASSES=1: the passes go over the whole pool (as a fresh start's do).
            passes_over_pool: std::env::var("POOL_PASSES").is_ok(),
            ema_decay,
            seed: stream_seed(ctx.cfg.seed, generation, 0, 6),
        };
        // SCRATCH=1: a fresh network instead of the warm start.
        let scratch = std::env::var("SCRATCH").is_ok() || std::env::var("SIZE").is_ok();
        let warm = (!scratch).then_some(&start);
        let (trained, figures) = train_generation(warm, &pool, &spec).unwrap();
        // SAVE=DIR: the trained candidate's checkpoint (for `coevolve eval --out`, replay).
        if let Ok(dir) = std::env::var("SAVE") {
            policy::checkpoint::save(&trained, std::path::Path::new(&dir)).unwrap();
        }
        // WISE="0.5 0.7": also evaluate blends alpha * trained + (1 - alpha) * start.
        let alphas: Vec<f64> = std::env::var("WISE").map_or(vec![1.0], |list| {
            list.split_whitespace()
                .map(|x| x.parse().unwrap())
                .collect()
        });
        for alpha in alphas {
            let blended;
            let candidate = if alpha == 1.0 {
                &trained
            } else {
                blended = trained.blended_with(&start, alpha).unwrap();
                &blended
            };
            let rates: Vec<String> = pool
                .iter()
                .map(|d| {
                    let skill = ctx.tree.get(&d.skill).unwrap();
                    let (ok, n) = heldout(&ctx, candidate, skill).unwrap();
                    format!("{} {ok}/{n}", d.skill)
                })
                .collect();
            println!(
            "frontier_weight {frontier_weight} ema {ema_decay} steps x{steps_scale} lr x{lr_scale}: {} (nll {:.2}, {} steps, {:.0} s)",
            rates.join(", "),
            figures.final_nll,
            figures.steps,
            figures.wall_s
        );
            println!("  blend alpha {alpha}");
        }
    }
}
