#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;

use nalgebra::Isometry3;

use super::*;
use crate::library::{sample_task, TaskRanges};
use crate::task::{SkillKind, ToolKind};
use crate::{BatchConfig, Controller, EpisodeBatch, EpisodeInfo, ScriptedPickPlace, TaskSpec};

fn ur5e() -> Arc<Manipulator> {
    Arc::new(robots::load_builtin("ur5e").unwrap())
}

/// Scripted lift episodes on the UR5e, `duration_s` long.
fn episodes(config: &SimConfig, n: usize, duration_s: f64, images: bool) -> Vec<Episode> {
    let config = Arc::new(config.clone());
    let scale = config.action_scale.clone();
    let ranges = TaskRanges::default();
    let tasks = move |_: usize, rng: &mut rand_chacha::ChaCha8Rng| -> TaskSpec {
        let mut task = sample_task(SkillKind::Lift, &ranges, rng);
        task.max_duration_s = duration_s;
        task
    };
    let factory = move |info: &EpisodeInfo<'_>| -> Box<dyn Controller> {
        Box::new(ScriptedPickPlace::new(info, scale.clone()))
    };
    let cfg = BatchConfig {
        episodes: n,
        seed: 5,
        threads: Some(1),
        record_images: images,
    };
    EpisodeBatch::run(ur5e(), config, &cfg, &tasks, &factory, &|| {})
        .unwrap()
        .episodes
}

#[test]
fn jerk_of_a_cubic_is_six() {
    // q(t) = t³ → q''' = 6 everywhere; the third difference is exact for cubics.
    let dt = 0.04;
    let q: Vec<Vec<f64>> = (0..8)
        .map(|k| {
            let t = k as f64 * dt;
            vec![t * t * t, -2.0 * t * t * t]
        })
        .collect();
    let samples: Vec<&[f64]> = q.iter().map(Vec::as_slice).collect();
    let jerk = joint_jerk(&samples, dt);
    assert_eq!(jerk.len(), 5);
    for j in jerk {
        assert!((j[0] - 6.0).abs() < 1e-6, "{j:?}");
        assert!((j[1] + 12.0).abs() < 1e-6, "{j:?}");
    }
    assert!(joint_jerk(&samples[..3], dt).is_empty());
}

#[test]
fn joint_vector_reproduces_the_manipulator_fk() {
    let robot = ur5e();
    let q_arm = [0.3, -1.2, 1.4, -1.7, -1.5, 0.4];
    let gripper: Vec<f64> = robot
        .gripper_joints
        .iter()
        .map(|&j| robot.model.joints[j].limits.upper)
        .collect();
    let q = joint_vector(&robot, &q_arm, &gripper);
    assert_eq!(q.len(), robot.model.joints.len());
    for (i, &j) in robot.arm_joints.iter().enumerate() {
        assert_eq!(q[j], q_arm[i]);
    }
    for (i, &j) in robot.gripper_joints.iter().enumerate() {
        assert_eq!(q[j], gripper[i]);
    }
    let root_from_ee = robot.model.link_poses(&q)[robot.ee_link];
    let expected = robot.fk(&q_arm);
    assert!((root_from_ee.translation.vector - expected.translation.vector).norm() < 1e-9);
    assert!(root_from_ee.rotation.angle_to(&expected.rotation) < 1e-9);
}

#[test]
fn reward_terms_names_every_field_and_the_total() {
    let r = crate::reward::RewardTerms {
        reach: 1.0,
        grasp: 2.0,
        lift: 3.0,
        goal: 4.0,
        success: 5.0,
        table_collision: -6.0,
        joint_limit: -7.0,
        energy: -8.0,
        total: -6.0,
    };
    let terms = reward_terms(&r);
    let names: Vec<&str> = terms.iter().map(|(n, _)| *n).collect();
    assert_eq!(
        names,
        [
            "reach",
            "grasp",
            "lift",
            "goal",
            "success",
            "table_collision",
            "joint_limit",
            "energy",
            "total"
        ]
    );
    assert_eq!(terms.map(|(_, v)| v)[5], -6.0);
}

#[test]
fn a_spatula_hides_the_fingers() {
    let robot = ur5e();
    let mut task = sample_task(
        SkillKind::Lift,
        &TaskRanges::default(),
        &mut <rand_chacha::ChaCha8Rng as rand::SeedableRng>::seed_from_u64(1),
    );
    let with_gripper = scene::drawn_links(&robot, &task);
    task.tool = ToolKind::Spatula;
    let with_spatula = scene::drawn_links(&robot, &task);
    assert!(with_spatula.len() < with_gripper.len());
    for &j in &robot.gripper_joints {
        let finger = robot.model.joints[j].child;
        assert!(!with_spatula.contains(&finger));
    }
    assert!(
        with_spatula.contains(&robot.model.root)
            || robot.model.links[robot.model.root].visuals.is_empty()
    );
}

#[test]
fn a_pan_has_a_base_sixteen_walls_and_a_handle() {
    let parts = (crate::task::ObjectKind::Pan {
        radius_m: 0.1,
        wall_height_m: 0.03,
        handle_length_m: 0.12,
    })
    .parts();
    assert_eq!(parts.len(), 18, "base, 16 wall segments, handle");
    assert_eq!(parts[0].0, Isometry3::identity());
}

#[test]
fn an_episode_with_images_logs_every_state_and_frame() {
    let config = SimConfig {
        cameras: SimConfig::default_cameras(),
        ..SimConfig::default()
    };
    let eps = episodes(&config, 1, 0.2, true);
    let e = &eps[0];
    let robot = ur5e();
    let (rec, storage) = rerun::RecordingStreamBuilder::new(APPLICATION_ID)
        .memory()
        .unwrap();
    let request = ReplayRequest {
        robot: &robot,
        config: &config,
        episode: e,
        label: "raw",
        companion: Some(("refined", e)),
    };
    let summary = log_episode(&rec, &request).unwrap();
    rec.flush_blocking().unwrap();
    assert_eq!(summary.states, e.steps.len() + 1);
    assert_eq!(summary.camera_frames, 2 * e.steps.len());
    assert!(summary.links >= 8, "{summary:?}");
    assert!(summary.warnings.is_empty(), "{:?}", summary.warnings);
    assert!(!storage.take().is_empty());
}

#[test]
fn a_robot_with_other_joint_counts_is_rejected_naming_the_episode() {
    let config = SimConfig::default();
    let eps = episodes(&config, 1, 0.1, false);
    let panda = robots::load_builtin("panda").unwrap();
    let request = ReplayRequest {
        robot: &panda,
        config: &config,
        episode: &eps[0],
        label: "raw",
        companion: None,
    };
    let err = request.validate().unwrap_err().to_string();
    assert!(err.contains("arm joint positions"), "{err}");
    assert!(err.contains("--robot"), "{err}");
}

#[test]
fn fk_of_recorded_joints_lands_on_the_recorded_tcp() {
    // Links are posed from q alone: world_from_root · FK(q) must match the simulator's measured
    // TCP pose (ties the joint indexing and the table-height root offset to the scene).
    let config = SimConfig::default();
    let eps = episodes(&config, 1, 0.6, false);
    let robot = ur5e();
    let e = &eps[0];
    let world_from_root = Isometry3::translation(0.0, 0.0, e.task.table.top_z_m);
    let tcp_from_link = robot.fk(&robot.home_q_rad).inverse()
        * robot
            .model
            .link_poses(&robot.joint_positions(&robot.home_q_rad, 1.0))[robot.ee_link];
    for step in &e.steps {
        let s = &step.state;
        let q = joint_vector(&robot, &s.q_rad, &s.gripper_q);
        let world_from_link = world_from_root * robot.model.link_poses(&q)[robot.ee_link];
        let world_from_tcp = world_from_link * tcp_from_link.inverse();
        let recorded = crate::state::iso_from_pose7(&s.world_from_ee);
        let error = (world_from_tcp.translation.vector - recorded.translation.vector).norm();
        assert!(error < 1e-4, "TCP off by {error} m at t = {}", s.time_s);
    }
}
