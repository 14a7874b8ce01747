//! The controller sees what the simulator would show the policy: an observation rebuilt from
//! the wire messages (joint state, objects, camera) gives the same policy features as the
//! simulator's own observation, images included, so rgbd policies deploy like state ones.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;

use bridge::controller::PolicyRunner;
use bridge::protocol::{CameraMsg, JointStateMsg, ObjectsMsg, WireMessage};
use bridge::sim_robot::{camera_message, state_messages};
use policy::obs::Normalizer;
use policy::{ModelConfig, ObsMode, Policy};

#[test]
fn wire_observations_give_the_simulator_features_images_included() {
    let robot = Arc::new(robots::load_manipulator("ur5e", None).unwrap());
    let mut sim = sim::SimConfig::default();
    sim.cameras = sim::SimConfig::default_cameras();
    let sim = Arc::new(sim);
    let (tasks, seeds) = policy::rollout::task_variants(sim::SkillKind::Reach, 1, 5, &robot);
    let task = &tasks[0];
    let mut stepper = sim::EpisodeStepper::new(&robot, task, &sim, 0, seeds[0], false).unwrap();
    // Move a little so velocities and targets are not trivial; split periods like a driver.
    let mut q = stepper.observation().q_rad.clone();
    q[0] += 0.05;
    q[2] -= 0.04;
    for _ in 0..2 * stepper.substeps_per_step() / 5 {
        let a = sim::Action::JointPosition {
            q_rad: q.clone(),
            gripper: 0.5,
        };
        stepper.step_substeps(a, 5);
    }
    let obs = stepper.observation().clone();
    assert_eq!(obs.images.len(), 2, "period-end observations carry images");

    let (state, objects) = state_messages(&obs, 9, 1);
    let camera = camera_message(&obs, 9, 1).unwrap();
    let state = JointStateMsg::decode(&state.encode()).unwrap();
    let objects = ObjectsMsg::decode(&objects.encode()).unwrap();
    let camera = CameraMsg::decode(&camera.encode()).unwrap();

    let mut model = ModelConfig::preset("tiny", ObsMode::Rgbd).unwrap();
    model.cameras = vec!["front".into(), "wrist".into()];
    let tokenizer = policy::tokenizer::Tokenizer::build([task.instruction.as_str()]);
    let proprio = policy::features::proprio_dim(robot.dof());
    let p = Policy::new(
        &model,
        tokenizer,
        Normalizer::identity(proprio),
        &robot,
        &sim,
        tch::Device::Cpu,
        0,
    )
    .unwrap();
    let mut runner = PolicyRunner::new(p, robot.clone()).unwrap();
    assert!(runner.needs_images());
    runner.q_target_rad.clone_from(&obs.q_target_rad);
    let rebuilt = runner.observation(&state, &objects.objects, &camera.frames, task, obs.time_s);

    let featurizer = &runner.policy.featurizer;
    let want = featurizer.row(&obs, task).unwrap();
    let got = featurizer.row(&rebuilt, task).unwrap();
    assert_eq!(got.images, want.images);
    assert_eq!(got.lang, want.lang);
    for (g, w) in got.proprio.iter().zip(&want.proprio) {
        assert!((g - w).abs() < 1e-3, "proprio {g} vs {w}");
    }
    // Without the camera the rgbd policy has nothing to look at: a clear error, not a panic.
    let blind = runner.observation(&state, &objects.objects, &[], task, obs.time_s);
    let err = featurizer.row(&blind, task).unwrap_err().to_string();
    assert!(err.contains("camera"), "{err}");
}
