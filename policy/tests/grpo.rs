//! GRPO on a weak behaviour-cloning policy (few demonstrations, short training) on lift: the
//! update mechanics (finite losses, non-negative KL, informative groups), the held-out success
//! before and after on the same seeds (printed), and early stopping with the success head.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::time::Instant;

use policy::bc::{train_bc, BcConfig};
use policy::grpo::{train_grpo, GrpoConfig};
use policy::rollout::{
    evaluate, rollout, task_variants, EarlyStop, EarlyStopReport, RolloutConfig, Sampling,
};
use policy::{ObsMode, OptimConfig};
use sim::SkillKind;

#[test]
fn grpo_on_a_weak_bc_policy_and_early_stopping() {
    let start = Instant::now();
    tch::set_num_threads(2);
    let robot = common::ur5e();
    let (episodes, config) = common::demos(&robot, SkillKind::Lift, 10, 1);
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
    // lr 1e-4 (above the default 3e-5): three iterations must move the success head far
    // enough for the early-stopping check below.
    let cfg = GrpoConfig {
        iterations: 3,
        lr: 1e-4,
        ..GrpoConfig::default()
    };
    let history = train_grpo(&mut policy, &robot, SkillKind::Lift, &cfg, &mut |_| {}).unwrap();
    let after = evaluate(&policy, &robot, SkillKind::Lift, 50, 1000, 2).unwrap();
    // BC saw only successes; GRPO's rollouts taught the success head what failure looks like.
    early_stopping_saves_compute(&policy, &robot);
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
        history.iter().all(|h| h.samples > 0),
        "every iteration had mixed groups"
    );
    // The size of the gain is seed-sensitive (measured: 0.25 → 0.34 on 100 variants after 6
    // iterations at lr 3e-5; 0.14 → 0.82, 0.12 → 0.73 and 0.22 → 0.26 at lr 1e-4 with another
    // initialisation; see README), so the test checks the mechanics and prints the figures
    // rather than asserting a margin.
}

/// The success head cuts hopeless rollouts: audited (run to the end anyway) and for real, on
/// the same variants; the report says the compute saved and how many cut rollouts would have
/// succeeded.
fn early_stopping_saves_compute(
    policy: &policy::Policy,
    robot: &std::sync::Arc<robots::Manipulator>,
) {
    let (tasks, seeds) = task_variants(SkillKind::Lift, 32, 2024, robot);
    let run = |audit: bool, audit_every: usize| {
        let cfg = RolloutConfig {
            sampling: Sampling::Greedy,
            threads: 2,
            keep_transitions: false,
            early_stop: Some(EarlyStop {
                threshold: 0.25,
                audit,
                audit_every,
                ..EarlyStop::default()
            }),
        };
        EarlyStopReport::of(&rollout(policy, robot, &tasks, &seeds, &cfg).unwrap())
    };
    let audit = run(true, 0);
    let real = run(false, 0);
    let sampled = run(false, 2);
    eprintln!("early stopping, audit: {audit:?}; for real: {real:?}; half audited: {sampled:?}");
    assert_eq!(audit.rollouts, 32);
    assert!(audit.cut > 0, "a weak policy has hopeless rollouts to cut");
    assert_eq!(audit.audited_cut, audit.cut);
    assert!(audit.cut_but_succeeded <= audit.cut);
    assert_eq!(
        real.audited_cut, 0,
        "nothing is audited when cutting for real"
    );
    assert!(
        real.steps_run < audit.steps_run,
        "cutting must save simulated steps"
    );
    // Auditing every other rollout runs a sample of the cut ones past their cut points.
    assert!(sampled.audited_cut > 0 && sampled.audited_cut <= sampled.cut);
    assert!(real.steps_run <= sampled.steps_run && sampled.steps_run <= audit.steps_run);
}
