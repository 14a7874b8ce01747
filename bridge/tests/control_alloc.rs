//! The controller's steady state allocates nothing: with a `small` state policy active on a
//! reach task (the benchmark's setup, `benches/bridge.rs`), 400 control ticks at 100 Hz — each
//! taking in a joint-state and an object message and running the tick: features, the policy on
//! its 25 Hz ticks, IK, the safety filter, the command — make no heap allocation.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;

use bridge::bundle::{self, BundleInfo};
use bridge::controller::{prepare_bundle, ControllerConfig, ControllerCore};
use bridge::protocol::{ControllerMode, JointStateMsg, ObjectPose, ObjectsMsg, TaskMsg};
use bridge::safety::SafetyConfig;
use policy::obs::Normalizer;
use policy::{ModelConfig, ObsMode, Policy};
use rand::SeedableRng;

const PERIOD_NS: u64 = 10_000_000;

#[test]
fn the_control_loop_allocates_nothing_in_its_steady_state() {
    let robot = Arc::new(robots::load_manipulator("ur5e", None).unwrap());
    let sim = sim::SimConfig::default();
    let task = sim::library::sample_task(
        sim::SkillKind::Reach,
        &sim::library::TaskRanges::default(),
        &mut rand::rngs::StdRng::seed_from_u64(3),
    );
    let model = ModelConfig::preset("small", ObsMode::State).unwrap();
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
    let dir = tempfile::tempdir().unwrap();
    policy::checkpoint::save(&p, &dir.path().join("ckpt")).unwrap();
    let key = bridge::keys::generate();
    let info = BundleInfo {
        skill: "reach".into(),
        source: "test".into(),
        heldout_success: None,
        safety: SafetyConfig::default(),
    };
    let bytes = bundle::build(&dir.path().join("ckpt"), &info, Some(&key)).unwrap();
    let config = ControllerConfig {
        rate_hz: 100.0,
        safety: SafetyConfig::default(),
        trusted_keys: vec![key.verifying_key()],
        device: tch::Device::Cpu,
        ros2: None,
    };
    let prepared = prepare_bundle(&bytes, &config.trusted_keys, &robot, config.device).unwrap();
    let mut core = ControllerCore::new(robot.clone(), config).unwrap();
    let mut state = JointStateMsg {
        seq: 0,
        stamp_ns: 0,
        q_rad: robot.home_q_rad.clone(),
        qd_rad_s: vec![0.0; robot.dof()],
        gripper_opening: 1.0,
    };
    let objects = ObjectsMsg {
        seq: 0,
        stamp_ns: 0,
        objects: task
            .objects
            .iter()
            .map(|o| ObjectPose {
                world_from_object: [
                    o.pose.xyz_m[0],
                    o.pose.xyz_m[1],
                    o.pose.xyz_m[2],
                    0.0,
                    0.0,
                    0.0,
                    1.0,
                ],
                lin_vel_m_s: [0.0; 3],
                ang_vel_rad_s: [0.0; 3],
            })
            .collect(),
    };
    core.on_task(&TaskMsg {
        seq: 1,
        task_json: serde_json::to_string(&task).unwrap(),
    })
    .unwrap();
    core.on_joint_state(&state, 0);
    core.on_objects(&objects);
    core.activate(prepared, 0).unwrap();
    // The counter sees allocations (so that a zero below means something).
    let probe = allocation_counter::measure(|| drop(std::hint::black_box(vec![0u8; 8])));
    assert_eq!(probe.count_total, 1);
    let mut inferences = 0;
    // Warm-up: the ramp-in (0.5 s by default), the first inference, the latency window.
    for k in 1..=100 {
        tick(&mut core, &mut state, &objects, k, &mut inferences);
    }
    assert_eq!(core.mode(), ControllerMode::Active);
    inferences = 0;
    let info = allocation_counter::measure(|| {
        for k in 101..=500 {
            tick(&mut core, &mut state, &objects, k, &mut inferences);
        }
    });
    assert!(
        inferences >= 90,
        "the policy ran {inferences} times in 400 ticks"
    );
    assert_eq!(
        info.count_total, 0,
        "allocations in 400 steady-state ticks: {info:?}"
    );
}

/// One control period: the arm's messages in, the tick, and the arm following its command
/// (a driver's job), so that the policy keeps moving it.
fn tick(
    core: &mut ControllerCore,
    state: &mut JointStateMsg,
    objects: &ObjectsMsg,
    k: u64,
    inferences: &mut usize,
) {
    let now = k * PERIOD_NS;
    state.seq = k;
    state.stamp_ns = now;
    core.on_joint_state(state, now);
    core.on_objects(objects);
    let cmd = core.step(now).expect("a command every tick");
    state.q_rad.copy_from_slice(&cmd.q_rad);
    *inferences += usize::from(core.last_step_inferred());
}
