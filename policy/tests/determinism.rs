//! Determinism: training is reproducible for a seed at a libtorch thread count, and rollouts
//! are identical whatever the thread count. Its own test binary: libtorch's random generator is
//! process-global, so trainers running concurrently in one process would share it.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use policy::bc::{train_bc, BcConfig};
use policy::{ObsMode, OptimConfig};
use sim::SkillKind;

#[test]
fn training_and_rollouts_are_deterministic() {
    let robot = common::ur5e();
    let (episodes, config) = common::demos(&robot, SkillKind::Reach, 6, 3);
    let train = |threads: i32| {
        tch::set_num_threads(threads);
        let (mut policy, data) =
            common::policy_for(&episodes, &robot, &config, "tiny", ObsMode::State);
        let cfg = BcConfig {
            optim: OptimConfig {
                steps: 30,
                batch_size: 32,
                seed: 5,
                ..OptimConfig::default()
            },
            ..BcConfig::default()
        };
        train_bc(&mut policy, &data, None, &cfg, &mut |_| {}).unwrap();
        policy
    };
    // libtorch's CPU reductions depend on its thread count, so training is reproducible for a
    // seed at a given thread count; rollouts (physics + inference) are thread-independent.
    let a = train(2);
    let b = train(2);
    for (name, t) in a.vs.variables() {
        let u = &b.vs.variables()[&name];
        assert!(t.equal(u), "weight {name} differs between runs");
    }
    // Sampled rollouts: same seeds, 1 vs 2 threads, identical episodes.
    let run = |threads| {
        let (tasks, seeds) = policy::rollout::task_variants(SkillKind::Reach, 4, 11, &robot);
        let cfg = policy::rollout::RolloutConfig {
            sampling: policy::rollout::Sampling::Sample { temperature: 1.0 },
            threads,
            keep_transitions: true,
            early_stop: None,
        };
        policy::rollout::rollout(&a, &robot, &tasks, &seeds, &cfg).unwrap()
    };
    let (r1, r2) = (run(1), run(2));
    for (x, y) in r1.iter().zip(&r2) {
        assert_eq!(x.episode, y.episode);
        assert_eq!(x.transitions.len(), y.transitions.len());
    }
    // The `small` network too (at 2 intra-op threads libtorch's products on its widths differ
    // in the last bits from 1 thread's; rollouts infer on one thread).
    let (small, _) = common::policy_for(&episodes, &robot, &config, "small", ObsMode::State);
    let run_small = |threads| {
        let (tasks, seeds) = policy::rollout::task_variants(SkillKind::Reach, 8, 13, &robot);
        let cfg = policy::rollout::RolloutConfig {
            sampling: policy::rollout::Sampling::Sample { temperature: 1.0 },
            threads,
            keep_transitions: false,
            early_stop: None,
        };
        policy::rollout::rollout(&small, &robot, &tasks, &seeds, &cfg).unwrap()
    };
    let (s1, s2) = (run_small(1), run_small(2));
    for (x, y) in s1.iter().zip(&s2) {
        assert_eq!(x.episode, y.episode);
    }
    assert_eq!(
        tch::get_num_threads(),
        2,
        "rollouts restore the thread count"
    );
}
