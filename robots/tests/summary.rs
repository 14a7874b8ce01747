//! `RobotSummary` of the shipped robots: roles, masses, reach, table and JSON.

// Test helpers outside #[test] functions may unwrap too.
#![allow(clippy::unwrap_used)]

use robots::{load_builtin, load_manipulator, JointRole, RobotSummary};

#[test]
fn builtin_summaries() {
    for (name, dof, mass_range) in [("ur5e", 6, 22.0..23.5), ("panda", 7, 14.5..16.0)] {
        let m = load_builtin(name).unwrap();
        let s = RobotSummary::from_manipulator(&m);
        assert_eq!(s.name, name);
        assert_eq!(s.source, format!("builtin:{name}"));
        assert_eq!(s.model_hash, m.model.model_hash);
        assert_eq!(s.dof, dof);
        assert_eq!(s.ee_link, "tcp");
        let count = |role| s.joints.iter().filter(|j| j.role == role).count();
        assert_eq!(count(JointRole::Arm), dof);
        assert_eq!(count(JointRole::Gripper), 2);
        assert_eq!(count(JointRole::Mimic), 0);
        assert!(
            mass_range.contains(&s.total_mass_kg),
            "{name}: {} kg",
            s.total_mass_kg
        );
        let link_sum: f64 = s.links.iter().map(|l| l.mass_kg).sum();
        assert!((link_sum - s.total_mass_kg).abs() < 1e-12);
        // Published reach: UR5e 850 mm, Panda 855 mm (to the flange); plus the gripper.
        assert!(
            (0.85..1.15).contains(&s.reach_m),
            "{name}: reach {} m",
            s.reach_m
        );
        assert!(s.missing_meshes.is_empty());
        // Deterministic.
        assert_eq!(s, m.summary());

        let table = s.to_string();
        for needle in [
            name,
            "tcp",
            "arm",
            "gripper",
            "fixed",
            &s.model_hash[..16],
            "reach",
        ] {
            assert!(table.contains(needle), "{needle:?} missing in\n{table}");
        }
        for j in &m.model.joints {
            assert!(table.contains(&j.name), "{} missing in\n{table}", j.name);
        }

        let json: serde_json::Value = serde_json::to_value(&s).unwrap();
        assert_eq!(json["dof"], dof);
        assert_eq!(
            json["joints"][0]["role"],
            if name == "ur5e" { "fixed" } else { "arm" }
        );
        assert_eq!(
            json["joints"].as_array().unwrap().len(),
            m.model.joints.len()
        );
    }
}

#[test]
fn load_manipulator_accepts_builtin_names_and_other_ee_links() {
    let m = load_manipulator("panda", None).unwrap();
    assert_eq!(m.ee_link_name(), "tcp");
    let m = load_manipulator("ur5e", Some("tool0")).unwrap();
    assert_eq!(m.ee_link_name(), "tool0");
    assert_eq!(m.dof(), 6);
    assert!(load_manipulator("ur5e", Some("nope")).is_err());
    let err = load_manipulator("/no/such/robot.urdf", None).unwrap_err();
    assert!(err.to_string().contains("/no/such/robot.urdf"), "{err}");
}
