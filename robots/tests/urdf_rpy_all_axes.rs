//! URDF `rpy` is fixed-axis roll-pitch-yaw: R = Rz(yaw)·Ry(pitch)·Rx(roll). A joint origin with
//! all three angles non-zero catches the classic wrong-convention bug (intrinsic XYZ, or the
//! product in the wrong order).

// Test helpers outside #[test] functions may unwrap too.
#![allow(clippy::unwrap_used)]

use nalgebra::{Matrix3, Rotation3, Vector3};
use robots::RobotModel;

const ROLL: f64 = 0.3;
const PITCH: f64 = -0.7;
const YAW: f64 = 1.1;

fn rx(a: f64) -> Matrix3<f64> {
    let (s, c) = a.sin_cos();
    Matrix3::new(1.0, 0.0, 0.0, 0.0, c, -s, 0.0, s, c)
}
fn ry(a: f64) -> Matrix3<f64> {
    let (s, c) = a.sin_cos();
    Matrix3::new(c, 0.0, s, 0.0, 1.0, 0.0, -s, 0.0, c)
}
fn rz(a: f64) -> Matrix3<f64> {
    let (s, c) = a.sin_cos();
    Matrix3::new(c, -s, 0.0, s, c, 0.0, 0.0, 0.0, 1.0)
}

#[test]
fn nalgebra_euler_angles_are_urdf_rpy() {
    let explicit = rz(YAW) * ry(PITCH) * rx(ROLL);
    let nalgebra = Rotation3::from_euler_angles(ROLL, PITCH, YAW);
    assert!((nalgebra.matrix() - explicit).abs().max() < 1e-15);
    // The other order is really different for these angles (the test would catch a swap).
    assert!((rx(ROLL) * ry(PITCH) * rz(YAW) - explicit).abs().max() > 0.1);
}

const URDF: &str = r#"<?xml version="1.0"?>
<robot name="rpy_test">
  <link name="base"/>
  <link name="tilted"/>
  <link name="tip"/>
  <joint name="tilt" type="revolute">
    <parent link="base"/>
    <child link="tilted"/>
    <origin xyz="0.1 -0.2 0.3" rpy="0.3 -0.7 1.1"/>
    <axis xyz="0 0 1"/>
    <limit lower="-3" upper="3" effort="10" velocity="1"/>
  </joint>
  <joint name="to_tip" type="fixed">
    <parent link="tilted"/>
    <child link="tip"/>
    <origin xyz="0.5 0 0" rpy="0 0 0"/>
  </joint>
</robot>"#;

#[test]
fn joint_origin_with_roll_pitch_and_yaw() {
    let model = RobotModel::from_urdf_str(URDF, "rpy_test.urdf", None).unwrap();
    let tilted = model.link_id("tilted").unwrap();
    let tip = model.link_id("tip").unwrap();
    let origin = Vector3::new(0.1, -0.2, 0.3);
    let r_origin = rz(YAW) * ry(PITCH) * rx(ROLL);
    for q in [0.0, 0.8, -2.4] {
        let poses = model.link_poses(&[q, 0.0]);
        // root_from_tilted = origin · Rz(q) (revolute about the joint frame's z).
        let r_expected = r_origin * rz(q);
        let r_actual = poses[tilted].rotation.to_rotation_matrix();
        assert!(
            (r_actual.matrix() - r_expected).abs().max() < 1e-12,
            "q = {q}"
        );
        assert!((poses[tilted].translation.vector - origin).norm() < 1e-12);
        // The tip is 0.5 m along the rotated x axis.
        let tip_expected = origin + r_expected * Vector3::new(0.5, 0.0, 0.0);
        assert!(
            (poses[tip].translation.vector - tip_expected).norm() < 1e-12,
            "q = {q}"
        );
    }
}
