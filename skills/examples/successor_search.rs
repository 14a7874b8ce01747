//! Diagnostic: the search for a successor skill warm-started from a prerequisite's plan
//! distribution saved in a run's `state.json` (e.g. lift from grasp, place from lift, set down
//! as the loop starts it), with and without reopening the last gripper event; prints successes
//! per CEM iteration.
//!
//! `cargo run --release -p coevolve-skills --example successor_search -- RUN FROM TO [ITERATIONS]`
//! (`OUT=dir`: the successes of the search with reopening written there as an episode store;
//! `MEAN=n`: instead the start's mean plan on n tasks, its successes (the first `TAKE`) written
//! to `OUT`).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;

use skills::evolve::run_dir::RunDir;
use skills::explorer::{cem_search_from, CemConfig};
use skills::tree::SkillTree;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let run = RunDir::new(&args[0]);
    let (from, to) = (&args[1], &args[2]);
    let iterations: usize = args.get(3).map_or(3, |a| a.parse().unwrap());
    let state = run.read_state().unwrap();
    let start = state.skills[from.as_str()].search.clone().unwrap();
    let tree = SkillTree::default_tree().unwrap();
    let skill = tree.get(to).unwrap();
    // As the loop starts a gripper skill from a prerequisite's plan.
    let start = if from != to && start.layout == skills::explorer::PlanLayout::Gripper {
        start.for_successor(skill.kind)
    } else {
        start
    };
    let robot = Arc::new(robots::load_manipulator("ur5e", None).unwrap());
    let sim = Arc::new(sim::SimConfig::default());
    // MEAN=n: the start's mean plan run on n tasks, its successes written to OUT.
    if let Ok(n) = std::env::var("MEAN") {
        let plans = vec![start.mean.clone(); n.parse().unwrap()];
        let take = std::env::var("TAKE").map_or(usize::MAX, |t| t.parse().unwrap());
        let cfg = CemConfig::default();
        let episodes = skills::explorer::run_plans(
            &plans,
            &|_, rng| skill.sample_task(rng),
            &robot,
            &sim,
            cfg.segment_s,
            7,
            Some(2),
        )
        .unwrap();
        let wins = episodes.iter().filter(|e| e.outcome.success).count();
        println!(
            "{from} → {to}, mean plan: {wins} of {} succeed",
            episodes.len()
        );
        if let Ok(out) = std::env::var("OUT") {
            sim::store::EpisodeWriter::new(out, "successor_search", &sim)
                .unwrap()
                .with_robot_name("ur5e")
                .write_batch(
                    &episodes
                        .iter()
                        .filter(|e| e.outcome.success)
                        .take(take)
                        .cloned()
                        .collect::<Vec<_>>(),
                )
                .unwrap();
        }
        return;
    }
    for reopen in [false, true] {
        let cfg = CemConfig {
            iterations,
            reopen_last_gripper: reopen,
            threads: Some(2),
            ..CemConfig::default()
        };
        let result = cem_search_from(
            start.clone(),
            &|_, rng| skill.sample_task(rng),
            &robot,
            &sim,
            &cfg,
            &mut |_| {},
        )
        .unwrap();
        let per: Vec<usize> = result.history.iter().map(|h| h.successes).collect();
        println!("{from} → {to}, reopen last gripper {reopen}: successes per iteration {per:?}");
        // OUT=dir: the successes of the search with reopening, as an episode store.
        if let (true, Ok(out)) = (reopen, std::env::var("OUT")) {
            sim::store::EpisodeWriter::new(out, "successor_search", &sim)
                .unwrap()
                .with_robot_name("ur5e")
                .write_batch(&result.successes)
                .unwrap();
        }
    }
}
