//! Tests of the anchor scene: servo fidelity against MuJoCo's numbers, health under random
//! targets, determinism across thread counts, and the hand-computable helpers.

use super::fidelity::summarize;
use super::*;

/// `benches/mujoco_fidelity.py` with MuJoCo 4.0.0 on `mujoco_arm_cube.xml`.
const MUJOCO_LIFTED_SAG_J2_RAD: f32 = 0.077_646;
const MUJOCO_STEP_J2_Q_AT_0_1_S_RAD: f32 = -0.403_260;
const MUJOCO_STEP_J2_OVERSHOOT: f32 = 0.275_84;
const MUJOCO_STEP_J1_OVERSHOOT: f32 = 0.304_38;
const MUJOCO_GRAVITY_SAG_J2_RAD: f32 = 0.031_266;

fn rel_err(ours: f32, theirs: f32) -> f32 {
    ((ours - theirs) / theirs).abs()
}

#[test]
fn anchor_multibody_servo_matches_mujoco() {
    let f = fidelity(
        &ARM_CUBE,
        ArticulationKind::Multibody,
        &AnchorConfig::default(),
    )
    .unwrap();
    assert!(
        rel_err(f.lifted_sag_j2_rad, MUJOCO_LIFTED_SAG_J2_RAD) < 0.01,
        "{f:?}"
    );
    assert!(
        rel_err(f.step_j2.q_at_0_1_s_rad, MUJOCO_STEP_J2_Q_AT_0_1_S_RAD) < 0.01,
        "{f:?}"
    );
    assert!(
        (f.step_j2.overshoot_frac - MUJOCO_STEP_J2_OVERSHOOT).abs() < 0.01,
        "{f:?}"
    );
    assert!(
        (f.step_j1.overshoot_frac - MUJOCO_STEP_J1_OVERSHOOT).abs() < 0.01,
        "{f:?}"
    );
    // Resting on the table edge: contact models differ (MuJoCo's soft contact sinks ~0.5 mm
    // deeper), so only a few percent.
    assert!(
        rel_err(f.gravity_sag_j2_rad, MUJOCO_GRAVITY_SAG_J2_RAD) < 0.05,
        "{f:?}"
    );
}

/// `benches/mujoco_fidelity.py --elbow j4` with MuJoCo 4.0.0 on `mujoco_panda_cube.xml`.
const MUJOCO_PANDA_LIFTED_SAG_J2_RAD: f32 = 0.002_467_9;
const MUJOCO_PANDA_GRAVITY_SAG_ELBOW_RAD: f32 = -0.004_688_8;
const MUJOCO_PANDA_STEP_J2_Q_AT_0_1_S_RAD: f32 = -0.488_374;
const MUJOCO_PANDA_STEP_J1_Q_AT_0_1_S_RAD: f32 = 0.190_450;

#[test]
fn anchor_panda_servo_matches_mujoco() {
    let f = fidelity(
        &PANDA_CUBE,
        ArticulationKind::Multibody,
        &AnchorConfig::default(),
    )
    .unwrap();
    assert!(
        rel_err(f.lifted_sag_j2_rad, MUJOCO_PANDA_LIFTED_SAG_J2_RAD) < 0.01,
        "{f:?}"
    );
    assert!(
        rel_err(f.gravity_sag_elbow_rad, MUJOCO_PANDA_GRAVITY_SAG_ELBOW_RAD) < 0.01,
        "{f:?}"
    );
    assert!(
        rel_err(
            f.step_j2.q_at_0_1_s_rad,
            MUJOCO_PANDA_STEP_J2_Q_AT_0_1_S_RAD
        ) < 0.01,
        "{f:?}"
    );
    assert!(
        rel_err(
            f.step_j1.q_at_0_1_s_rad,
            MUJOCO_PANDA_STEP_J1_Q_AT_0_1_S_RAD
        ) < 0.01,
        "{f:?}"
    );
}

#[test]
fn anchor_panda_scene_matches_its_mjcf() {
    let m = &PANDA_CUBE;
    assert_eq!((m.num_joints(), m.arm_dofs, m.links.len()), (9, 7, 10));
    // Menagerie's home pose: the fingertips (link7 − 0.1654 − 0.045 m) 2 cm above the cube.
    let link7 = m.link_positions_in_world_m()[7];
    let tip_z = link7.z - 0.1654 - 0.045;
    let cube_top_z = m.cube_center_m[2] + model::CUBE_HALF_EXTENT_M;
    assert!((link7.x - 0.5545).abs() < 1e-6 && (link7.z - 0.7315).abs() < 1e-6);
    assert!(
        (tip_z - cube_top_z - 0.0211).abs() < 1e-4,
        "{tip_z} {cube_top_z}"
    );
    let mjcf = include_str!("../../../benches/anchors/mujoco_panda_cube.xml");
    for j in m.joints {
        assert!(mjcf.contains(&format!("name=\"{}\"", j.name)), "{}", j.name);
        assert!(mjcf.contains(&format!("kp=\"{}\"", j.kp)), "{} kp", j.name);
    }
    for l in m.links {
        assert!(mjcf.contains(&format!("name=\"{}\"", l.name)), "{}", l.name);
    }
}

#[test]
fn anchor_random_targets_never_blow_up() {
    // Impulse joints at the default 1 × 2 sweeps are not stable on the panda-cube (kp 4500 on
    // 0.65 kg links: a light body spins at ~400 rad/s); multibody is the default kind.
    let runs = [
        (Anchor::ArmCube, ArticulationKind::Multibody),
        (Anchor::ArmCube, ArticulationKind::Impulse),
        (Anchor::PandaCube, ArticulationKind::Multibody),
    ];
    for (anchor, articulation) in runs {
        let cfg = PhysicsBenchConfig {
            anchor,
            articulation,
            episodes: 3,
            steps_per_episode: 400,
            ..PhysicsBenchConfig::default()
        };
        let b = run_physics_bench(&cfg).unwrap();
        assert!(b.all_finite, "{b:?}");
        assert!(b.max_linvel_m_per_s < 10.0, "{b:?}");
        assert!(b.max_angvel_rad_per_s < 60.0, "{b:?}");
        assert!(b.max_abs_arm_q_rad < 0.8, "{b:?}");
        assert!(b.steps_per_sec > 0.0);
    }
}

#[test]
fn anchor_bench_is_deterministic_across_thread_counts() {
    let cfg = PhysicsBenchConfig {
        episodes: 4,
        steps_per_episode: 200,
        ..Default::default()
    };
    let one = run_physics_bench(&PhysicsBenchConfig { threads: 1, ..cfg }).unwrap();
    let two = run_physics_bench(&PhysicsBenchConfig { threads: 2, ..cfg }).unwrap();
    assert_eq!(
        one.max_linvel_m_per_s.to_bits(),
        two.max_linvel_m_per_s.to_bits()
    );
    assert_eq!(
        one.max_angvel_rad_per_s.to_bits(),
        two.max_angvel_rad_per_s.to_bits()
    );
    assert_eq!(
        one.max_abs_arm_q_rad.to_bits(),
        two.max_abs_arm_q_rad.to_bits()
    );
}

#[test]
#[allow(clippy::approx_constant)] // MJCF ctrlrange literal
fn anchor_targets_are_clamped_to_ctrlrange() {
    let mut scene = AnchorScene::new(
        &ARM_CUBE,
        ArticulationKind::Multibody,
        &AnchorConfig::default(),
    )
    .unwrap();
    scene.set_targets(&[0.5, -0.5, 7.0, -7.0, 0.0, 0.0, 0.5, -0.5]);
    assert_eq!(
        scene.targets(),
        [0.5, -0.5, 6.28, -6.28, 0.0, 0.0, 0.0, 0.0]
    );
    scene.set_targets(&[0.0, 0.0, 0.0, 0.0, 0.0, 0.0, -0.5, 0.5]);
    assert_eq!(scene.targets()[6..], [-0.03, 0.03]);
}

#[test]
fn anchor_both_kinds_start_at_zero() {
    let kinds = [ArticulationKind::Multibody, ArticulationKind::Impulse];
    for (anchor, kind) in Anchor::ALL.into_iter().flat_map(|a| kinds.map(|k| (a, k))) {
        let scene = AnchorScene::new(anchor.model(), kind, &AnchorConfig::default()).unwrap();
        for q in scene.joint_positions() {
            assert!(
                q.abs() < 1e-5,
                "{anchor:?} {kind:?}: {:?}",
                scene.joint_positions()
            );
        }
    }
    assert_eq!("panda-cube".parse::<Anchor>().unwrap(), Anchor::PandaCube);
    assert!("panda".parse::<Anchor>().is_err());
}

#[test]
fn anchor_servo_damping_removes_the_backward_euler_term() {
    let j2 = &ARM_CUBE.joints[1];
    // kv 40 + joint damping 2 − kp 800 · h 0.002.
    assert!((servo_damping(j2, 0.002, true) - 40.4).abs() < 1e-4);
    assert!((servo_damping(j2, 0.002, false) - 42.0).abs() < 1e-4);
    let finger = &ARM_CUBE.joints[6];
    // kv 10 + 5 − 200 · 0.002.
    assert!((servo_damping(finger, 0.002, true) - 14.6).abs() < 1e-4);
}

#[test]
fn anchor_step_summary_by_hand() {
    // 0 → 1 with one overshoot to 1.2, dt 0.05 s: samples at 0.05, 0.10, ..., 0.50 s.
    let trace = [0.5, 0.9, 1.2, 1.1, 1.04, 1.0, 1.0, 1.0, 1.0, 1.0];
    let s = summarize("j", 0.0, &trace, 0.05);
    assert_eq!(s.q_at_0_05_s_rad, 0.5);
    assert_eq!(s.q_at_0_1_s_rad, 0.9);
    assert_eq!(s.q_at_0_2_s_rad, 1.1);
    assert_eq!(s.q_at_0_5_s_rad, 1.0);
    assert!((s.overshoot_frac - 0.2).abs() < 1e-6);
    // Last sample outside ±0.05 of 1.0 is 1.1 at 0.20 s.
    assert!((s.settling_time_5pct_s - 0.2).abs() < 1e-6);
}

#[test]
fn anchor_config_rejects_zero_iterations() {
    let cfg = AnchorConfig {
        solver_iterations: 0,
        ..AnchorConfig::default()
    };
    assert!(cfg.validate().is_err());
    assert!(AnchorScene::new(&ARM_CUBE, ArticulationKind::Impulse, &cfg).is_err());
    assert!("multibody".parse::<ArticulationKind>().is_ok());
    assert!("featherstone".parse::<ArticulationKind>().is_err());
}
