//! GRPO raises the held-out success of a weak behaviour-cloning policy (few demonstrations,
//! short training) on lift, measured greedily on the same held-out seeds before and after.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::time::Instant;

use policy::bc::{train_bc, BcConfig};
use policy::grpo::{train_grpo, GrpoConfig};
use policy::rollout::evaluate;
use policy::{ObsMode, OptimConfig};
use sim::SkillKind;

#[test]
fn grpo_improves_a_weak_bc_policy_on_lift() {
    let start = Instant::now();
    tch::set_num_threads(2);
    let robot = common::ur5e();
    let (episodes, config) = common::demos(&robot, SkillKind::Lift, 10, 1, false);
    let (mut policy, data) =
        common::policy_for(&episodes, &robot, &config, "small", ObsMode::State);
    let bc = BcConfig {
        optim: OptimConfig {
            steps: 200,
            batch_size: 128,
            warmup_steps: 20,
            ..OptimConfig::default()
        },
        ..BcConfig::default()
    };
    train_bc(&mut policy, &data, None, &bc, &mut |_| {}).unwrap();
    let before = evaluate(&policy, &robot, SkillKind::Lift, 50, 1000, 2).unwrap();
    let cfg = GrpoConfig {
        iterations: 3,
        ..GrpoConfig::default()
    };
    let history = train_grpo(&mut policy, &robot, SkillKind::Lift, &cfg, &mut |_| {}).unwrap();
    let after = evaluate(&policy, &robot, SkillKind::Lift, 50, 1000, 2).unwrap();
    eprintln!(
        "GRPO on lift: held-out success {:.2} → {:.2}; sampled {:?}; kl {:?}; total {:.0} s",
        before.success_rate,
        after.success_rate,
        history
            .iter()
            .map(|h| h.sampled_success_rate)
            .collect::<Vec<_>>(),
        history.iter().map(|h| h.kl).collect::<Vec<_>>(),
        start.elapsed().as_secs_f64()
    );
    assert!(history.iter().all(|h| h.loss.is_finite() && h.kl >= 0.0));
    assert!(
        after.success_rate >= before.success_rate + 0.15,
        "GRPO did not help: {:.2} → {:.2}",
        before.success_rate,
        after.success_rate
    );
}
