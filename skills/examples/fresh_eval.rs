//! Diagnostic: a run's checkpoints on variants no decision of the loop has seen. The loop picks
//! between candidates (the trained policy, its retention blends) by the fixed held-out variants,
//! which are also what mastery is measured on; this evaluates the kept checkpoints greedily on
//! N fresh variants of the tree's SKILL family drawn from another seed, for an unselected
//! figure.
//!
//! `cargo run --release -p coevolve-skills --example fresh_eval -- RUN SKILL SEED N GEN...`
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use skills::evolve::learner::run_policy;
use skills::evolve::run_dir::RunDir;
use skills::tree::SkillTree;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let run = RunDir::new(&args[0]);
    let tree = SkillTree::default_tree().unwrap();
    let skill = tree.get(&args[1]).unwrap();
    let seed: u64 = args[2].parse().unwrap();
    let n: usize = args[3].parse().unwrap();
    tch::set_num_threads(2);
    let robot = Arc::new(robots::load_manipulator("ur5e", None).unwrap());
    let seeds: Vec<u64> = (0..n)
        .map(|i| sim::episode::episode_seed(seed, i))
        .collect();
    let tasks: Vec<_> = seeds
        .iter()
        .map(|s| skill.sample_task(&mut ChaCha8Rng::seed_from_u64(*s)))
        .collect();
    for generation in &args[4..] {
        let generation: usize = generation.parse().unwrap();
        let policy =
            policy::checkpoint::load(&run.checkpoint(generation), tch::Device::Cpu).unwrap();
        let runs = run_policy(&policy, &robot, &tasks, &seeds, None, None, 2).unwrap();
        let ok = runs.iter().filter(|r| r.episode.outcome.success).count();
        println!(
            "{} gen {generation} {}: {ok}/{n} = {:.2}",
            args[0],
            skill.name(),
            ok as f64 / n as f64
        );
    }
}
