//! Every malformed input gives an error (never a panic) whose message names the file, the
//! element and the problem.

// Test helpers outside #[test] functions may unwrap too.
#![allow(clippy::unwrap_used)]

use std::path::PathBuf;

use robots::{RobotError, RobotModel};

const LIMIT: &str = r#"<limit lower="-1" upper="1" effort="10" velocity="1"/>"#;

/// A small valid robot: base → (j1, revolute) → l1 → (j2, revolute) → l2.
fn robot(extra_links: &str, joints: &str) -> String {
    format!(
        r#"<?xml version="1.0"?>
<robot name="test">
  <link name="base"><inertial><mass value="1"/><inertia ixx="0.1" ixy="0" ixz="0" iyy="0.1" iyz="0" izz="0.1"/></inertial></link>
  <link name="l1"/>
  <link name="l2"/>
  {extra_links}
  {joints}
</robot>"#
    )
}

fn joint(name: &str, kind: &str, parent: &str, child: &str, body: &str) -> String {
    format!(
        r#"<joint name="{name}" type="{kind}"><parent link="{parent}"/><child link="{child}"/>{body}</joint>"#
    )
}

fn chain(j1_body: &str) -> String {
    joint("j1", "revolute", "base", "l1", j1_body) + &joint("j2", "revolute", "l1", "l2", LIMIT)
}

/// Writes `urdf` to a temporary file and loads it; returns the error and the file name.
fn load_err(file_name: &str, urdf: &str) -> (RobotError, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(file_name);
    std::fs::write(&path, urdf).unwrap();
    match RobotModel::from_urdf_file(&path) {
        Ok(model) => panic!(
            "{file_name}: expected an error, loaded {} joints",
            model.joints.len()
        ),
        Err(e) => (e, path),
    }
}

/// Asserts the message starts with `robots:`, names the file and contains every `needle`.
fn assert_mentions(err: &RobotError, path: &std::path::Path, needles: &[&str]) {
    let msg = err.to_string();
    assert!(msg.starts_with("robots: "), "{msg}");
    assert!(
        msg.contains(&path.display().to_string()),
        "file missing in: {msg}"
    );
    for needle in needles {
        assert!(msg.contains(needle), "{needle:?} missing in: {msg}");
    }
}

#[test]
fn valid_baseline_loads() {
    let model = RobotModel::from_urdf_str(&robot("", &chain(LIMIT)), "ok.urdf", None).unwrap();
    assert_eq!(model.joints.len(), 2);
}

#[test]
fn missing_file() {
    let path = PathBuf::from("/nonexistent/dir/robot.urdf");
    let err = RobotModel::from_urdf_file(&path).unwrap_err();
    assert!(matches!(err, RobotError::Io { .. }), "{err:?}");
    assert_mentions(&err, &path, &["cannot read"]);
}

#[test]
fn xml_error() {
    let (err, path) = load_err("broken.urdf", r#"<robot name="x"><link name="a"></robot>"#);
    assert!(matches!(err, RobotError::Xml { .. }), "{err:?}");
    assert_mentions(&err, &path, &["XML"]);
    let (err, path) = load_err(
        "not_a_number.urdf",
        &robot(
            "",
            &chain(r#"<limit lower="abc" upper="1" effort="1" velocity="1"/>"#),
        ),
    );
    assert!(matches!(err, RobotError::Xml { .. }), "{err:?}");
    assert_mentions(&err, &path, &[]);
}

#[test]
fn no_links() {
    let (err, path) = load_err("empty.urdf", r#"<robot name="x"></robot>"#);
    assert!(matches!(err, RobotError::NoLinks { .. }), "{err:?}");
    assert_mentions(&err, &path, &["no links"]);
}

#[test]
fn unknown_parent_and_child_links() {
    let joints =
        joint("j1", "revolute", "bsae", "l1", LIMIT) + &joint("j2", "fixed", "l1", "l2", "");
    let (err, path) = load_err("typo_parent.urdf", &robot("", &joints));
    assert!(
        matches!(
            err,
            RobotError::UnknownLink {
                field: "parent",
                ..
            }
        ),
        "{err:?}"
    );
    assert_mentions(&err, &path, &["\"j1\"", "parent", "\"bsae\""]);

    let joints =
        joint("j1", "revolute", "base", "l1", LIMIT) + &joint("j2", "fixed", "l1", "l3", "");
    let (err, path) = load_err("typo_child.urdf", &robot("", &joints));
    assert!(
        matches!(err, RobotError::UnknownLink { field: "child", .. }),
        "{err:?}"
    );
    assert_mentions(&err, &path, &["\"j2\"", "child", "\"l3\""]);
}

#[test]
fn kinematic_cycles() {
    // l1 → l2 → l3 → l1: no joint from the root reaches them.
    let joints = joint("a", "fixed", "l1", "l2", "")
        + &joint("b", "fixed", "l2", "l3", "")
        + &joint("c", "fixed", "l3", "l1", "");
    let (err, path) = load_err("loop.urdf", &robot(r#"<link name="l3"/>"#, &joints));
    assert!(matches!(err, RobotError::KinematicCycle { .. }), "{err:?}");
    assert_mentions(&err, &path, &["cycle", "l1", "l2", "l3"]);

    // l2 is the child of two joints (a closed chain).
    let joints = joint("j1", "fixed", "base", "l1", "")
        + &joint("j2", "fixed", "l1", "l2", "")
        + &joint("j3", "fixed", "base", "l2", "");
    let (err, path) = load_err("closed_chain.urdf", &robot("", &joints));
    assert!(matches!(err, RobotError::KinematicCycle { .. }), "{err:?}");
    assert_mentions(&err, &path, &["\"l2\"", "\"j2\"", "\"j3\""]);

    let joints = chain(LIMIT) + &joint("self", "fixed", "l2", "l2", "");
    let (err, path) = load_err("self_loop.urdf", &robot("", &joints));
    assert!(matches!(err, RobotError::KinematicCycle { .. }), "{err:?}");
    assert_mentions(&err, &path, &["\"self\"", "\"l2\""]);
}

#[test]
fn two_roots() {
    let (err, path) = load_err(
        "forest.urdf",
        &robot(r#"<link name="floating_thing"/>"#, &chain(LIMIT)),
    );
    assert!(matches!(err, RobotError::MultipleRoots { .. }), "{err:?}");
    assert_mentions(&err, &path, &["\"base\"", "\"floating_thing\"", "root"]);
}

#[test]
fn inverted_and_nan_limits() {
    let bad = r#"<limit lower="1" upper="-1" effort="10" velocity="1"/>"#;
    let (err, path) = load_err("inverted.urdf", &robot("", &chain(bad)));
    assert!(matches!(err, RobotError::InvalidValue { .. }), "{err:?}");
    assert_mentions(
        &err,
        &path,
        &["joint \"j1\"", "<limit lower/upper>", "lower 1 > upper -1"],
    );

    let bad = r#"<limit lower="NaN" upper="1" effort="10" velocity="1"/>"#;
    let (err, path) = load_err("nan_limit.urdf", &robot("", &chain(bad)));
    assert_mentions(&err, &path, &["joint \"j1\"", "<limit>", "NaN"]);
}

#[test]
fn nan_in_origins() {
    let body = format!(r#"<origin xyz="0 nan 0" rpy="0 0 0"/>{LIMIT}"#);
    let (err, path) = load_err("nan_joint_origin.urdf", &robot("", &chain(&body)));
    assert!(matches!(err, RobotError::InvalidValue { .. }), "{err:?}");
    assert_mentions(&err, &path, &["joint \"j1\"", "<origin> xyz", "not finite"]);

    let body = format!(r#"<origin xyz="0 0 0" rpy="0 0 NaN"/>{LIMIT}"#);
    let (err, path) = load_err("nan_joint_rpy.urdf", &robot("", &chain(&body)));
    assert_mentions(&err, &path, &["joint \"j1\"", "<origin> rpy"]);

    let link = r#"<link name="l3"><visual><origin xyz="NaN 0 0"/><geometry><sphere radius="0.1"/></geometry></visual></link>"#;
    let joints = chain(LIMIT) + &joint("j3", "fixed", "l2", "l3", "");
    let (err, path) = load_err("nan_visual.urdf", &robot(link, &joints));
    assert_mentions(&err, &path, &["link \"l3\"", "<visual #0><origin> xyz"]);

    let link = r#"<link name="l3"><inertial><origin xyz="0 0 NaN"/><mass value="1"/><inertia ixx="1" ixy="0" ixz="0" iyy="1" iyz="0" izz="1"/></inertial></link>"#;
    let (err, path) = load_err("nan_inertial.urdf", &robot(link, &joints));
    assert_mentions(&err, &path, &["link \"l3\"", "<inertial><origin> xyz"]);
}

#[test]
fn zero_and_negative_mass() {
    let joints = chain(LIMIT) + &joint("j3", "fixed", "l2", "l3", "");
    for (file, mass) in [("zero_mass.urdf", "0"), ("negative_mass.urdf", "-2.5")] {
        let link = format!(
            r#"<link name="l3"><inertial><mass value="{mass}"/><inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"/></inertial></link>"#
        );
        let (err, path) = load_err(file, &robot(&link, &joints));
        assert!(matches!(err, RobotError::InvalidValue { .. }), "{err:?}");
        assert_mentions(
            &err,
            &path,
            &["link \"l3\"", "<inertial><mass value>", "positive"],
        );
    }
    // Even an all-zero <inertial> block is an explicit zero mass.
    let link = r#"<link name="l3"><inertial><mass value="0"/><inertia ixx="0" ixy="0" ixz="0" iyy="0" iyz="0" izz="0"/></inertial></link>"#;
    let (err, path) = load_err("all_zero_inertial.urdf", &robot(link, &joints));
    assert_mentions(&err, &path, &["link \"l3\"", "mass"]);
}

#[test]
fn non_positive_velocity_limit() {
    let bad = r#"<limit lower="-1" upper="1" effort="10" velocity="0"/>"#;
    let (err, path) = load_err("zero_velocity.urdf", &robot("", &chain(bad)));
    assert!(matches!(err, RobotError::InvalidValue { .. }), "{err:?}");
    assert_mentions(
        &err,
        &path,
        &["joint \"j1\"", "<limit velocity>", "positive"],
    );

    let joints = joint(
        "j1",
        "continuous",
        "base",
        "l1",
        r#"<limit effort="1" velocity="-3"/>"#,
    ) + &joint("j2", "fixed", "l1", "l2", "");
    let (err, path) = load_err("negative_velocity.urdf", &robot("", &joints));
    assert_mentions(&err, &path, &["joint \"j1\"", "<limit velocity>"]);

    let joints = joint("j1", "revolute", "base", "l1", "") + &joint("j2", "fixed", "l1", "l2", "");
    let (err, path) = load_err("missing_limit.urdf", &robot("", &joints));
    assert_mentions(&err, &path, &["joint \"j1\"", "missing <limit>"]);
}

#[test]
fn unsupported_joint_types() {
    for kind in ["floating", "planar"] {
        let joints =
            joint("free_joint", kind, "base", "l1", "") + &joint("j2", "fixed", "l1", "l2", "");
        let (err, path) = load_err(&format!("{kind}.urdf"), &robot("", &joints));
        assert!(
            matches!(err, RobotError::UnsupportedJoint { .. }),
            "{err:?}"
        );
        assert_mentions(&err, &path, &["joint \"free_joint\"", kind]);
    }
}

#[test]
fn duplicate_names() {
    let (err, path) = load_err(
        "dup_link.urdf",
        &robot(r#"<link name="l1"/>"#, &chain(LIMIT)),
    );
    assert!(
        matches!(
            err,
            RobotError::DuplicateName {
                element: "link",
                ..
            }
        ),
        "{err:?}"
    );
    assert_mentions(&err, &path, &["link \"l1\"", "duplicate"]);

    let joints =
        joint("j1", "revolute", "base", "l1", LIMIT) + &joint("j1", "fixed", "l1", "l2", "");
    let (err, path) = load_err("dup_joint.urdf", &robot("", &joints));
    assert!(
        matches!(
            err,
            RobotError::DuplicateName {
                element: "joint",
                ..
            }
        ),
        "{err:?}"
    );
    assert_mentions(&err, &path, &["joint \"j1\"", "duplicate"]);
}

#[test]
fn bad_mimic_and_axis() {
    let joints = joint("j1", "revolute", "base", "l1", LIMIT)
        + &joint(
            "j2",
            "revolute",
            "l1",
            "l2",
            &format!(r#"{LIMIT}<mimic joint="nope"/>"#),
        );
    let (err, path) = load_err("bad_mimic.urdf", &robot("", &joints));
    assert!(matches!(err, RobotError::InvalidMimic { .. }), "{err:?}");
    assert_mentions(&err, &path, &["joint \"j2\"", "nope"]);

    let joints = joint(
        "j1",
        "revolute",
        "base",
        "l1",
        &format!(r#"{LIMIT}<mimic joint="j2"/>"#),
    ) + &joint(
        "j2",
        "revolute",
        "l1",
        "l2",
        &format!(r#"{LIMIT}<mimic joint="j1"/>"#),
    );
    let (err, path) = load_err("mimic_cycle.urdf", &robot("", &joints));
    assert_mentions(&err, &path, &["mimic", "cycle"]);

    let body = format!(r#"<axis xyz="0 0 0"/>{LIMIT}"#);
    let (err, path) = load_err("zero_axis.urdf", &robot("", &chain(&body)));
    assert_mentions(&err, &path, &["joint \"j1\"", "<axis xyz>", "zero length"]);
}

#[test]
fn negative_geometry_dimension() {
    let link = r#"<link name="l3"><collision><geometry><cylinder radius="-0.1" length="1"/></geometry></collision></link>"#;
    let joints = chain(LIMIT) + &joint("j3", "fixed", "l2", "l3", "");
    let (err, path) = load_err("negative_radius.urdf", &robot(link, &joints));
    assert_mentions(
        &err,
        &path,
        &[
            "link \"l3\"",
            "<collision #0><geometry><cylinder>",
            "negative",
        ],
    );
}

#[test]
fn ee_link_errors_name_the_source() {
    let model = RobotModel::from_urdf_str(&robot("", &chain(LIMIT)), "arm.urdf", None).unwrap();
    let err = robots::Manipulator::new(model.clone(), "gripper").unwrap_err();
    assert!(
        err.to_string().contains("arm.urdf") && err.to_string().contains("\"gripper\""),
        "{err}"
    );
    let err = robots::Manipulator::new(model, "base").unwrap_err();
    assert!(matches!(err, RobotError::NoArmJoints { .. }), "{err}");
}
