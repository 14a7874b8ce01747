//! Forward kinematics of the shipped robots against hand-written DH / transform products.

// Test helpers outside #[test] functions may unwrap too.
#![allow(clippy::unwrap_used)]

use std::f64::consts::{FRAC_PI_2, FRAC_PI_4, PI};

use nalgebra::{Isometry3, Translation3, UnitQuaternion, Vector3};
use robots::{load_builtin, JointKind};

fn rot_x(a: f64) -> Isometry3<f64> {
    Isometry3::from_parts(
        Translation3::identity(),
        UnitQuaternion::from_axis_angle(&Vector3::x_axis(), a),
    )
}
fn rot_z(a: f64) -> Isometry3<f64> {
    Isometry3::from_parts(
        Translation3::identity(),
        UnitQuaternion::from_axis_angle(&Vector3::z_axis(), a),
    )
}
fn trans(x: f64, y: f64, z: f64) -> Isometry3<f64> {
    Isometry3::translation(x, y, z)
}

/// Standard DH: Rz(θ) Tz(d) Tx(a) Rx(α).
fn dh(theta: f64, d: f64, a: f64, alpha: f64) -> Isometry3<f64> {
    rot_z(theta) * trans(0.0, 0.0, d) * trans(a, 0.0, 0.0) * rot_x(alpha)
}

/// Modified (Craig) DH: Rx(α) Tx(a) Rz(θ) Tz(d).
fn mdh(a: f64, d: f64, alpha: f64, theta: f64) -> Isometry3<f64> {
    rot_x(alpha) * trans(a, 0.0, 0.0) * rot_z(theta) * trans(0.0, 0.0, d)
}

/// UR5e `base_link_from_tool0` from Universal Robots' published DH table. `base_link` is the
/// DH base frame rotated by π about z (ROS REP-103 convention of ur_description), and the
/// ROS-Industrial `tool0` frame is the DH flange frame rotated by π about its z (same
/// approach axis, x/y flipped), as in ur_description.
fn ur5e_dh(q: &[f64]) -> Isometry3<f64> {
    let d = [0.1625, 0.0, 0.0, 0.1333, 0.0997, 0.0996];
    let a = [0.0, -0.425, -0.3922, 0.0, 0.0, 0.0];
    let alpha = [FRAC_PI_2, 0.0, 0.0, FRAC_PI_2, -FRAC_PI_2, 0.0];
    let mut t = rot_z(PI);
    for i in 0..6 {
        t *= dh(q[i], d[i], a[i], alpha[i]);
    }
    t * rot_z(PI)
}

/// Panda `link0_from_tcp` from Franka's published (modified DH) table, flange, hand and TCP.
fn panda_mdh(q: &[f64]) -> Isometry3<f64> {
    let a = [0.0, 0.0, 0.0, 0.0825, -0.0825, 0.0, 0.088];
    let d = [0.333, 0.0, 0.316, 0.0, 0.384, 0.0, 0.0];
    let alpha = [
        0.0, -FRAC_PI_2, FRAC_PI_2, FRAC_PI_2, -FRAC_PI_2, FRAC_PI_2, FRAC_PI_2,
    ];
    let mut t = Isometry3::identity();
    for i in 0..7 {
        t *= mdh(a[i], d[i], alpha[i], q[i]);
    }
    t * trans(0.0, 0.0, 0.107) * rot_z(-FRAC_PI_4) * trans(0.0, 0.0, 0.1034)
}

fn assert_pose_eq(actual: &Isometry3<f64>, expected: &Isometry3<f64>, what: &str) {
    let dp = (actual.translation.vector - expected.translation.vector).norm();
    let dr = actual.rotation.angle_to(&expected.rotation);
    assert!(
        dp < 1e-9 && dr < 1e-9,
        "{what}: dp={dp:e} m dr={dr:e} rad\nactual {actual}\nexpected {expected}"
    );
}

#[test]
fn ur5e_fk_matches_published_dh() {
    let ur = load_builtin("ur5e").unwrap();
    assert_eq!(ur.dof(), 6);
    let tool0 = ur.model.link_id("tool0").unwrap();
    for q in [
        vec![0.0; 6],
        vec![0.3, -1.1, 1.4, -0.6, 0.9, -2.2],
        vec![-2.5, 0.4, -2.9, 3.5, -1.3, 5.0],
    ] {
        let full = ur.joint_positions(&q, 0.5);
        let poses = ur.model.link_poses(&full);
        let expected_tool0 = ur5e_dh(&q);
        assert_pose_eq(&poses[tool0], &expected_tool0, &format!("tool0 at {q:?}"));
        let expected_tcp = expected_tool0 * trans(0.0, 0.0, 0.15);
        assert_pose_eq(&ur.fk(&q), &expected_tcp, &format!("tcp at {q:?}"));
        assert_pose_eq(&poses[ur.ee_link], &expected_tcp, "tcp via link_poses");
    }
    // At zero the arm is stretched out along +x of base_link: x = a2 + a3 (with the sign flip
    // of base_link), y = d4 + d6 + tcp offset, z = d1 − d5.
    let p = ur.fk(&[0.0; 6]).translation.vector;
    assert!(
        (p - Vector3::new(0.8172, 0.1333 + 0.0996 + 0.15, 0.1625 - 0.0997)).norm() < 1e-9,
        "{p}"
    );
}

#[test]
fn panda_fk_matches_published_dh() {
    let panda = load_builtin("panda").unwrap();
    assert_eq!(panda.dof(), 7);
    for q in [
        vec![0.0; 7],
        vec![0.0, -0.785, 0.0, -2.356, 0.0, 1.571, 0.785],
        vec![1.2, 0.7, -2.1, -1.4, 2.5, 3.1, -0.4],
    ] {
        assert_pose_eq(&panda.fk(&q), &panda_mdh(&q), &format!("tcp at {q:?}"));
    }
    // Zero pose by hand: x = a4 + a5... cancel to a7 = 0.088, z = d1 + d3 + d5 − flange − tcp.
    let p = panda.fk(&[0.0; 7]).translation.vector;
    assert!(
        (p - Vector3::new(0.088, 0.0, 0.333 + 0.316 + 0.384 - 0.107 - 0.1034)).norm() < 1e-9,
        "{p}"
    );
}

#[test]
fn home_pose_points_tool_down_in_front() {
    for name in robots::builtin_names() {
        let m = load_builtin(name).unwrap();
        let root_from_tcp = m.fk(&m.home_q_rad);
        let z = root_from_tcp.rotation * Vector3::z();
        assert!(z.dot(&-Vector3::z()) > 0.999, "{name}: tcp z = {z}");
        let p = root_from_tcp.translation.vector;
        assert!((0.3..=0.5).contains(&p.x), "{name}: tcp x = {} m", p.x);
        assert!(p.y.abs() < 0.2, "{name}: tcp y = {} m", p.y);
        assert!((0.15..=0.6).contains(&p.z), "{name}: tcp z = {} m", p.z);
        for (q, l) in m.home_q_rad.iter().zip(m.arm_limits()) {
            assert!(l.lower <= *q && *q <= l.upper);
        }
    }
}

#[test]
fn grippers_have_two_outward_fingers_between_which_the_tcp_lies() {
    for (name, stroke) in [("ur5e", 0.0425), ("panda", 0.04)] {
        let m = load_builtin(name).unwrap();
        assert_eq!(m.gripper_joints.len(), 2, "{name}");
        let poses = m.model.link_poses(&m.joint_positions(&m.home_q_rad, 1.0));
        let mut axes = Vec::new();
        for &j in &m.gripper_joints {
            let joint = &m.model.joints[j];
            assert_eq!(joint.kind, JointKind::Prismatic);
            assert!(joint.mimic.is_none());
            assert_eq!((joint.limits.lower, joint.limits.upper), (0.0, stroke));
            let root_from_parent = poses[joint.parent];
            axes.push(
                root_from_parent.rotation
                    * joint.parent_from_joint.rotation
                    * joint.axis.into_inner(),
            );
        }
        assert!(
            (axes[0] + axes[1]).norm() < 1e-12,
            "{name}: finger axes must be opposite"
        );
        // Fully open: the fingers are 2 × stroke apart and the tcp is midway between them.
        let f0 = poses[m.model.joints[m.gripper_joints[0]].child]
            .translation
            .vector;
        let f1 = poses[m.model.joints[m.gripper_joints[1]].child]
            .translation
            .vector;
        assert!(((f0 - f1).norm() - 2.0 * stroke).abs() < 1e-12);
        let tcp = poses[m.ee_link].translation.vector;
        let mid = 0.5 * (f0 + f1);
        let approach = poses[m.ee_link].rotation * Vector3::z();
        let off_axis = (tcp - mid) - approach * approach.dot(&(tcp - mid));
        assert!(
            off_axis.norm() < 1e-12,
            "{name}: tcp off the finger midline by {off_axis}"
        );
        // The closed position of a finger is its lower limit.
        let closed = m.joint_positions(&m.home_q_rad, 0.0);
        assert!(m.gripper_joints.iter().all(|&j| closed[j] == 0.0));
        let half = m.joint_positions(&m.home_q_rad, 0.5);
        assert!(m
            .gripper_joints
            .iter()
            .all(|&j| (half[j] - 0.5 * stroke).abs() < 1e-15));
        let clamped = m.joint_positions(&m.home_q_rad, 7.0);
        assert!(m.gripper_joints.iter().all(|&j| clamped[j] == stroke));
    }
}

#[test]
fn builtin_metadata() {
    assert_eq!(robots::builtin_names(), &["ur5e", "panda"]);
    let ur = load_builtin("ur5e").unwrap();
    let limits = ur.arm_limits();
    let efforts: Vec<f64> = limits.iter().map(|l| l.effort).collect();
    assert_eq!(efforts, [150.0, 150.0, 150.0, 28.0, 28.0, 28.0]);
    assert!(limits.iter().all(|l| (l.velocity - PI).abs() < 1e-12));
    assert!((limits[2].upper - PI).abs() < 1e-12 && (limits[0].upper - 2.0 * PI).abs() < 1e-12);
    let masses: Vec<f64> = [
        "shoulder_link",
        "upper_arm_link",
        "forearm_link",
        "wrist_1_link",
        "wrist_2_link",
        "wrist_3_link",
    ]
    .iter()
    .map(|n| {
        ur.model.links[ur.model.link_id(n).unwrap()]
            .inertial
            .as_ref()
            .unwrap()
            .mass_kg
    })
    .collect();
    assert_eq!(masses, [3.761, 8.058, 2.846, 1.37, 1.3, 0.365]);

    let panda = load_builtin("panda").unwrap();
    let limits = panda.arm_limits();
    let v: Vec<f64> = limits.iter().map(|l| l.velocity).collect();
    assert_eq!(v, [2.175, 2.175, 2.175, 2.175, 2.61, 2.61, 2.61]);
    let e: Vec<f64> = limits.iter().map(|l| l.effort).collect();
    assert_eq!(e, [87.0, 87.0, 87.0, 87.0, 12.0, 12.0, 12.0]);
    assert!(robots::load_builtin("kuka")
        .unwrap_err()
        .to_string()
        .contains("kuka"));
}
