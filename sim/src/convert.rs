//! Conversions between our f64 nalgebra kinematics and rapier's f32 glam math.

use nalgebra::{Isometry3, Point3, UnitQuaternion, Vector3};
use rapier3d::math::{Pose, Rotation, Vector};

pub fn pose_from_iso(iso: &Isometry3<f64>) -> Pose {
    let q = iso.rotation.into_inner().coords;
    let t = iso.translation.vector;
    Pose::from_parts(
        Vector::new(t.x as f32, t.y as f32, t.z as f32),
        Rotation::from_xyzw(q.x as f32, q.y as f32, q.z as f32, q.w as f32).normalize(),
    )
}

pub fn iso_from_pose(pose: &Pose) -> Isometry3<f64> {
    let t = pose.translation;
    let q = pose.rotation;
    Isometry3::from_parts(
        nalgebra::Translation3::new(t.x as f64, t.y as f64, t.z as f64),
        UnitQuaternion::new_normalize(nalgebra::Quaternion::new(
            q.w as f64, q.x as f64, q.y as f64, q.z as f64,
        )),
    )
}

pub fn vec_from_na(v: &Vector3<f64>) -> Vector {
    Vector::new(v.x as f32, v.y as f32, v.z as f32)
}

pub fn na_from_vec(v: Vector) -> Vector3<f64> {
    Vector3::new(v.x as f64, v.y as f64, v.z as f64)
}

pub fn point_from_vec(v: Vector) -> Point3<f64> {
    Point3::new(v.x as f64, v.y as f64, v.z as f64)
}

/// Rotation taking the unit x axis onto `axis` (rapier's joints move along/about local x).
pub fn rotation_x_to(axis: &Vector3<f64>) -> UnitQuaternion<f64> {
    UnitQuaternion::rotation_between(&Vector3::x(), axis).unwrap_or_else(|| {
        // `axis` is -x: any half turn about an axis orthogonal to x.
        UnitQuaternion::from_axis_angle(&Vector3::z_axis(), std::f64::consts::PI)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_pose() {
        let iso = Isometry3::from_parts(
            nalgebra::Translation3::new(0.1, -0.2, 0.3),
            UnitQuaternion::from_euler_angles(0.3, -0.4, 1.2),
        );
        let back = iso_from_pose(&pose_from_iso(&iso));
        assert!((back.translation.vector - iso.translation.vector).norm() < 1e-6);
        assert!(back.rotation.angle_to(&iso.rotation) < 1e-6);
    }

    #[test]
    fn x_onto_axis() {
        for axis in [Vector3::x(), -Vector3::x(), Vector3::y(), -Vector3::z()] {
            let r = rotation_x_to(&axis);
            assert!((r * Vector3::x() - axis).norm() < 1e-9);
        }
    }
}
