//! Diagnostic: does a policy's behaviour depend on its instruction? Evaluates a checkpoint on
//! one skill's task variants with that skill's instruction and with another skill's (the task
//! and its judge unchanged), greedily.
//! `cargo run --release -p coevolve-policy --example swap_instruction -- CKPT TASK OTHER_INSTRUCTION [N]`
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;

use policy::rollout::{rollout, task_variants, RolloutConfig, Sampling};
use sim::SkillKind;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let policy =
        policy::checkpoint::load(std::path::Path::new(&args[0]), tch::Device::Cpu).unwrap();
    let skill = SkillKind::parse(&args[1]).unwrap();
    let other = args[2].clone();
    let n: usize = args.get(3).map_or(64, |s| s.parse().unwrap());
    let robot = Arc::new(robots::load_manipulator(&policy.meta.robot_name, None).unwrap());
    let cfg = RolloutConfig {
        sampling: Sampling::Greedy,
        threads: 1,
        keep_transitions: false,
        early_stop: None,
    };
    let (tasks, seeds) = task_variants(skill, n, 1000, &robot);
    let score = |tasks: &[sim::TaskSpec]| {
        let runs = rollout(&policy, &robot, tasks, &seeds, &cfg).unwrap();
        let (mut broken, mut upright, mut turned, mut maxmin) = (0, 0, 0, Vec::new());
        for r in runs.iter().filter(|r| !r.episode.outcome.success) {
            let o = r
                .episode
                .task
                .objects
                .iter()
                .position(|o| o.fragile_force_n.is_some())
                .unwrap();
            let up_z: Vec<f64> = r
                .episode
                .steps
                .iter()
                .map(|s| s.state.objects[o].up_axis().z)
                .collect();
            let last = up_z.last().copied().unwrap_or(1.0);
            let min = up_z.iter().copied().fold(1.0, f64::min);
            maxmin.push(format!("{last:.2}/{min:.2}/{}", r.episode.steps.len()));
            if r.episode.outcome.failure.is_some() {
                broken += 1;
            } else if last > 0.0 {
                upright += 1;
            } else {
                turned += 1;
            }
        }
        println!("  failures: broken {broken}, upright {upright}, turned but not judged {turned}; last/min up_z/steps {maxmin:?}");
        runs.iter().filter(|r| r.episode.outcome.success).count()
    };
    let own = score(&tasks);
    let swapped: Vec<_> = tasks
        .iter()
        .cloned()
        .map(|mut t| {
            t.instruction = other.clone();
            t
        })
        .collect();
    let with_other = score(&swapped);
    println!(
        "{}: own instruction `{}` {own}/{n}; with `{other}` {with_other}/{n}",
        args[1], tasks[0].instruction
    );
}
