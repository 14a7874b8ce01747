//! How learnable a run's searched tool plan is: the run's saved mean plan of SKILL (or, with
//! `SIMPLIFY=1`, that plan simplified by `evolve::simplify` on 16 probe variants) run on 64
//! fresh variants; its successes are the demonstrations (`REFINE=1`: refined first) for the
//! loop's behaviour cloning from scratch; greedy held-out success on the skill's variants.
//!
//! `cargo run --release -p coevolve-skills --example plan_learnability -- RUN SKILL`
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout)]

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use skills::evolve::curriculum::stream_seed;
use skills::evolve::evaluate::heldout;
use skills::evolve::learner::{train_generation, SkillData, TrainSpec};
use skills::evolve::simplify::simplify_tool_plan;
use skills::evolve::EvolveConfig;
use skills::explorer::run_plans;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let run = std::path::PathBuf::from(&args[0]);
    let skill_name = &args[1];
    let dir = std::env::temp_dir().join(format!("plan-learnability-{}", std::process::id()));
    let ctx = skills::evolve::prepare(&dir, EvolveConfig::default(), false).unwrap();
    tch::set_num_threads(2);
    let skill = ctx.tree.get(skill_name).unwrap().clone();
    let state = skills::evolve::run_dir::RunDir::new(&run)
        .read_state()
        .unwrap();
    let mut plan = state.skills[skill_name.as_str()]
        .search
        .clone()
        .expect("a search")
        .mean;
    let variants = |n: usize, seed: u64| -> Vec<sim::task::TaskSpec> {
        (0..n)
            .map(|i| skill.sample_task(&mut ChaCha8Rng::seed_from_u64(seed + i as u64)))
            .collect()
    };
    let segment_s = ctx.cfg.cem.segment_s;
    let run_on = |plans: &[Vec<f64>], tasks: &[sim::task::TaskSpec]| {
        let n = tasks.len();
        let all: Vec<Vec<f64>> = plans
            .iter()
            .flat_map(|p| std::iter::repeat_n(p.clone(), n))
            .collect();
        let f = |i: usize, _: &mut ChaCha8Rng| tasks[i % n].clone();
        run_plans(&all, &f, &ctx.robot, &ctx.sim, segment_s, 5, Some(2))
    };
    if std::env::var("SIMPLIFY").is_ok() {
        let probe = variants(16, 1_000);
        let mut wins = |plans: &[Vec<f64>]| -> sim::Result<Vec<usize>> {
            let runs = run_on(plans, &probe)?;
            Ok(runs
                .chunks(probe.len())
                .map(|c| c.iter().filter(|e| e.outcome.success).count())
                .collect())
        };
        let s = simplify_tool_plan(&plan, 0, &mut wins).unwrap();
        println!(
            "simplified: {} keyframes dropped, {:.1} s -> {:.1} s, probe wins {} -> {} ({} plans tried)",
            s.dropped, s.duration_before_s, s.duration_after_s, s.wins_before, s.wins_after, s.plans_tried
        );
        println!("plan {:.3?}", s.plan);
        plan = s.plan;
    }
    let runs = run_on(&[plan], &variants(64, 77)).unwrap();
    let mut demos: Vec<sim::Episode> = runs.into_iter().filter(|e| e.outcome.success).collect();
    let steps = demos.iter().map(|e| e.steps.len()).sum::<usize>() / demos.len().max(1);
    println!("{} of 64 succeed, {steps} steps each", demos.len());
    if std::env::var("REFINE").is_ok() {
        let cfg = &ctx.cfg.refine_config;
        demos = sim::refine::refine(&ctx.robot, &ctx.sim, cfg, &demos, &[])
            .unwrap()
            .golden;
    }
    let spec = TrainSpec {
        model: &ctx.model,
        tokenizer: &ctx.tokenizer,
        robot: &ctx.robot,
        sim: &ctx.sim,
        device: ctx.device,
        steps: skill.def.budget.train_steps,
        batch_size: ctx.cfg.batch_size,
        lr: ctx.cfg.lr,
        replay_fraction: ctx.cfg.replay_fraction,
        frontier_weight: 2.0,
        train_passes: 0.0,
        passes_over_pool: false,
        ema_decay: 0.0,
        seed: stream_seed(ctx.cfg.seed, 0, 0, 6),
    };
    let pool = [SkillData {
        skill: skill_name.clone(),
        episodes: demos.clone(),
        imitate_from: Vec::new(),
        frontier: true,
    }];
    let (policy, figures) = train_generation(None, &pool, &spec).unwrap();
    let (ok, n) = heldout(&ctx, &policy, &skill).unwrap();
    println!(
        "{skill_name}: {} demonstrations, nll {:.2}, held-out {ok}/{n}",
        demos.len(),
        figures.final_nll
    );
    let _ = std::fs::remove_dir_all(&dir);
}
