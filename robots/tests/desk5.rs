//! The project's own desk arm (`urdf/desk5/`): 5 revolute arm joints, a single revolute jaw,
//! binary and ASCII STL meshes; its tool-down home, top-down IK across its workspace, IK that
//! gives up the orientation axis a 5-DOF arm cannot reach, and a missing mesh.

// Test helpers outside #[test] functions may unwrap too.
#![allow(clippy::unwrap_used)]

use std::path::PathBuf;

use nalgebra::{Isometry3, Translation3, UnitQuaternion, Vector3};
use robots::{load_manipulator, load_manipulator_for_sim, IkConfig, JointKind, RobotError, Shape};

fn desk5_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("urdf/desk5/desk5.urdf")
}

fn top_down(p: [f64; 3], yaw: f64) -> Isometry3<f64> {
    Isometry3::from_parts(
        Translation3::new(p[0], p[1], p[2]),
        UnitQuaternion::from_axis_angle(&Vector3::z_axis(), yaw)
            * UnitQuaternion::from_axis_angle(&Vector3::x_axis(), std::f64::consts::PI),
    )
}

#[test]
fn desk5_loads_with_five_arm_joints_a_revolute_jaw_and_its_meshes() {
    let m = load_manipulator_for_sim(desk5_path().to_str().unwrap(), None).unwrap();
    assert_eq!(m.dof(), 5);
    assert_eq!(m.ee_link_name(), "tcp");
    assert_eq!(m.gripper_joints.len(), 1);
    let jaw = &m.model.joints[m.gripper_joints[0]];
    assert_eq!((jaw.name.as_str(), jaw.kind), ("jaw", JointKind::Revolute));
    assert!(m.model.missing_meshes.is_empty());
    let mut triangles = 0;
    for link in &m.model.links {
        for item in &link.collisions {
            if let Shape::Mesh { data: Some(d), .. } = &item.shape {
                triangles += d.triangles.len();
            }
        }
    }
    // base 32, shoulder 24 (ASCII), upper arm 32, forearm 32, wrist 48 (ASCII), housing 16,
    // fixed jaw 16 (ASCII), moving jaw 16.
    assert_eq!(triangles, 216);
}

#[test]
fn desk5_home_points_the_tool_down_in_front() {
    let m = load_manipulator(desk5_path().to_str().unwrap(), None).unwrap();
    let home = m.fk(&m.home_q_rad);
    let down = top_down([0.0; 3], 0.0).rotation;
    assert!(home.rotation.angle_to(&down) < 1e-3, "{home}");
    let p = home.translation.vector;
    assert!(
        p.x > 0.12 && p.x < 0.3 && p.y.abs() < 1e-3 && p.z > 0.05,
        "{p}"
    );
}

#[test]
fn desk5_reaches_top_down_grasps_over_its_table() {
    let m = load_manipulator(desk5_path().to_str().unwrap(), None).unwrap();
    let cfg = IkConfig::default();
    let mut worst = 0.0_f64;
    let mut count = 0;
    // The scaled tabletop family's span (object and zone positions, grasp and lift heights).
    for x in [0.15, 0.2, 0.24] {
        for y in [-0.08, 0.0, 0.08] {
            for z in [0.03, 0.08, 0.12] {
                for yaw in [-0.7, 0.0, 0.7] {
                    let sol = m.ik(&top_down([x, y, z], yaw), &m.home_q_rad, &cfg);
                    assert!(sol.converged, "({x}, {y}, {z}) yaw {yaw}: {sol:?}");
                    worst = worst.max(sol.pos_err_m);
                    count += 1;
                }
            }
        }
    }
    eprintln!("{count} top-down poses, worst position error {worst:.2e} m");
}

#[test]
fn top_down_reach_scales_a_desk_arm_but_not_the_full_size_ones() {
    let desk5 = load_manipulator(desk5_path().to_str().unwrap(), None).unwrap();
    let small = robots::home::top_down_reach_m(&desk5);
    assert!((0.25..0.32).contains(&small), "desk5 {small}");
    for name in ["ur5e", "panda"] {
        let m = robots::load_builtin(name).unwrap();
        let r = robots::home::top_down_reach_m(&m);
        eprintln!("{name}: top-down reach {r:.3} m; desk5 {small:.3} m");
        assert!(r >= robots::home::FULL_SIZE_TOP_DOWN_REACH_M, "{name} {r}");
    }
}

#[test]
fn desk5_ik_gives_up_the_orientation_it_cannot_reach_not_the_position() {
    let m = load_manipulator(desk5_path().to_str().unwrap(), None).unwrap();
    let cfg = IkConfig::default();
    // Tilted sideways (about the root's x at a point straight ahead): out of the arm's plane.
    let p = [0.2, 0.0, 0.1];
    let tilted = Isometry3::from_parts(
        Translation3::new(p[0], p[1], p[2]),
        UnitQuaternion::from_axis_angle(&Vector3::x_axis(), 0.3) * top_down(p, 0.0).rotation,
    );
    let sol = m.ik(&tilted, &m.home_q_rad, &cfg);
    assert!(!sol.converged);
    assert!(sol.pos_err_m < 1e-3, "position traded away: {sol:?}");
    assert!(
        (sol.rot_err_rad - 0.3).abs() < 0.05,
        "the sideways tilt is what is given up: {sol:?}"
    );
    // A servo step towards it keeps the TCP where it was asked to be.
    let mut q = m.home_q_rad.clone();
    let start = m.fk(&q);
    let nudged = Isometry3::from_parts(
        Translation3::from(start.translation.vector + Vector3::new(0.0, 0.004, 0.0)),
        UnitQuaternion::from_axis_angle(&Vector3::x_axis(), 0.05) * start.rotation,
    );
    assert!(m.servo_step(&mut q, &nudged, &cfg, 0.1));
    let moved = (m.fk(&q).translation.vector - nudged.translation.vector).norm();
    assert!(moved < 5e-4, "servo position error {moved}");
}

#[test]
fn a_missing_collision_mesh_is_an_error_naming_the_link_and_file() {
    let dir = tempfile::tempdir().unwrap();
    let urdf = dir.path().join("desk5.urdf");
    std::fs::copy(desk5_path(), &urdf).unwrap();
    // No meshes/ folder beside it: the loader reports them, simulation refuses.
    let m = load_manipulator(urdf.to_str().unwrap(), None).unwrap();
    assert_eq!(m.model.missing_meshes.len(), 16);
    let err = load_manipulator_for_sim(urdf.to_str().unwrap(), None).unwrap_err();
    assert!(matches!(err, RobotError::MissingCollisionMesh { .. }));
    let text = err.to_string();
    assert!(
        text.contains("desk5.urdf") && text.contains("base_link") && text.contains("base.stl"),
        "{text}"
    );
}
