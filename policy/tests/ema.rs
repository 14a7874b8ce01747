//! Weight averaging in BC: the weights training leaves are the exponential moving average of
//! the iterates, starting at the initial weights (checked against the last iterates of the same
//! seeded run without averaging).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use policy::bc::{train_bc, BcConfig};
use policy::{ObsMode, OptimConfig};
use sim::SkillKind;
use tch::Tensor;

fn weights(policy: &policy::Policy) -> Vec<Tensor> {
    policy
        .vs
        .trainable_variables()
        .iter()
        .map(|w| w.detach().copy())
        .collect()
}

#[test]
fn averaged_weights_are_the_moving_average_of_the_iterates_and_bad_decays_are_errors() {
    tch::set_num_threads(1);
    let robot = common::ur5e();
    let (episodes, config) = common::demos(&robot, SkillKind::Reach, 2, 3);
    let train = |steps: usize, ema_decay: f64| {
        let (mut policy, data) =
            common::policy_for(&episodes, &robot, &config, "tiny", ObsMode::State);
        let cfg = BcConfig {
            optim: OptimConfig {
                steps,
                batch_size: 16,
                warmup_steps: 1,
                ..OptimConfig::default()
            },
            ema_decay,
            ..BcConfig::default()
        };
        let initial = weights(&policy);
        train_bc(&mut policy, &data, None, &cfg, &mut |_| {}).unwrap();
        (initial, weights(&policy))
    };
    let decay = 0.8;
    // Two steps: average = d²·w0 + d(1−d)·w1 + (1−d)·w2.
    let (w0, w1) = train(1, 0.0);
    let (_, w2) = train(2, 0.0);
    let (_, averaged) = train(2, decay);
    let mut moved = 0.0;
    for (((a, b), c), avg) in w0.iter().zip(&w1).zip(&w2).zip(&averaged) {
        let expected = a * (decay * decay) + b * (decay * (1.0 - decay)) + c * (1.0 - decay);
        let error = (avg - &expected).abs().max().double_value(&[]);
        assert!(error < 1e-6, "averaged weights off by {error}");
        moved += (avg - a).abs().max().double_value(&[]);
    }
    assert!(moved > 0.0, "training did not move the weights");

    // (In this test, not a parallel one: torch's generator is global.)
    let (mut policy, data) = common::policy_for(&episodes, &robot, &config, "tiny", ObsMode::State);
    let cfg = BcConfig {
        ema_decay: 1.0,
        ..BcConfig::default()
    };
    let err = train_bc(&mut policy, &data, None, &cfg, &mut |_| {}).unwrap_err();
    assert!(err.to_string().contains("ema_decay"), "{err}");
}
