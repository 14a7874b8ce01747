//! Host inference (`policy::host::HostPolicy`) computes the network's action as libtorch does:
//! on recorded observations of reach, place and stack (instructions of several lengths, one to
//! two objects, no zone to one), for the `tiny` and `small` models with the normaliser fitted to
//! the data, the instruction pooled or one token per word (the action and the predicted
//! success); and a call allocates nothing.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use policy::features::{self, ACTION_DIM};
use policy::host::HostPolicy;
use policy::{ObsMode, Policy};
use sim::SkillKind;

/// libtorch's action (simulator units) and predicted success.
fn libtorch_action(
    p: &Policy,
    obs: &sim::Observation,
    task: &sim::TaskSpec,
) -> ([f32; ACTION_DIM], f32) {
    let row = p.featurizer.row(obs, task).unwrap();
    let out = p.infer(&[&row]).unwrap();
    (p.denormalize_action(&out.mean[..ACTION_DIM]), out.value[0])
}

#[test]
fn host_actions_match_libtorch_on_recorded_observations() {
    let robot = common::ur5e();
    let mut episodes = Vec::new();
    for skill in [SkillKind::Reach, SkillKind::Place, SkillKind::Stack] {
        episodes.extend(common::demos(&robot, skill, 2, 3).0);
    }
    let config = common::demos(&robot, SkillKind::Reach, 1, 3).1;
    // The instruction pooled into one token (every preset), and one token per word (checkpoints
    // written before pooling).
    for (size, pool_lang) in [("tiny", true), ("small", true), ("small", false)] {
        let model = policy::ModelConfig {
            pool_lang,
            ..policy::ModelConfig::preset(size, ObsMode::State).unwrap()
        };
        let (p, _) = common::policy_with(&episodes, &robot, &config, &model);
        let mut host = HostPolicy::new(&p).unwrap();
        let (mut worst, mut worst_value) = (0.0f32, 0.0f32);
        for e in &episodes {
            host.set_instruction(&p, &e.task.instruction);
            for t in (0..e.steps.len()).step_by(17) {
                let obs = features::observation_before(e, t, &robot.home_q_rad, Vec::new());
                let (want, want_value) = libtorch_action(&p, &obs, &e.task);
                let got = host.act(&obs, &e.task).unwrap();
                let out = host.infer(&p.featurizer.tokenizer, &obs, &e.task).unwrap();
                assert_eq!(p.denormalize_action(&out.mean), got);
                let row = p.featurizer.row(&obs, &e.task).unwrap();
                let log_std = p.infer(&[&row]).unwrap().log_std;
                assert_eq!(host.log_std()[..], log_std[..ACTION_DIM]);
                for (a, b) in got.iter().zip(&want) {
                    let scale = b.abs().max(1e-2);
                    worst = worst.max((a - b).abs() / scale);
                }
                worst_value = worst_value.max((out.value - want_value).abs());
            }
        }
        let size = format!("{size}, pool_lang {pool_lang}");
        eprintln!("{size}: worst relative difference {worst:.2e}, success {worst_value:.2e}");
        assert!(worst < 1e-3, "{size}: host and libtorch differ by {worst}");
        assert!(
            worst_value < 1e-4,
            "{size}: success heads differ by {worst_value}"
        );
    }
}

#[test]
fn a_host_action_allocates_nothing() {
    let robot = common::ur5e();
    let (episodes, config) = common::demos(&robot, SkillKind::Place, 1, 5);
    let (p, _) = common::policy_for(&episodes, &robot, &config, "small", ObsMode::State);
    let mut host = HostPolicy::new(&p).unwrap();
    let e = &episodes[0];
    host.set_instruction(&p, &e.task.instruction);
    let obs = features::observation_before(e, 10, &robot.home_q_rad, Vec::new());
    host.act(&obs, &e.task).unwrap();
    let info = allocation_counter::measure(|| {
        for _ in 0..10 {
            std::hint::black_box(host.act(&obs, &e.task).unwrap());
        }
    });
    assert_eq!(info.count_total, 0, "{info:?}");
}
