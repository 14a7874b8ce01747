//! The project's own desk arm (`robots/urdf/desk5/`: 5 revolute arm joints, a revolute jaw,
//! STL meshes) through the CLI: `robots show`, a short `evolve` of reach on it (the task
//! family scaled to its reach), and the run's golden episodes recorded for it.
#![allow(clippy::expect_used, clippy::unwrap_used)] // test helpers

mod common;

use common::{coevolve, json};

const DESK5: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/robots/urdf/desk5/desk5.urdf");

#[test]
fn robots_show_reads_the_desk_arm() {
    let summary = json(&coevolve(&["robots", "show", DESK5, "--json"]));
    assert_eq!(summary["dof"], 5, "{summary}");
    assert_eq!(summary["missing_meshes"].as_array().unwrap().len(), 0);
    let roles: Vec<&str> = summary["joints"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|j| j["role"].as_str())
        .collect();
    assert_eq!(
        roles.iter().filter(|r| **r == "gripper").count(),
        1,
        "{roles:?}"
    );
}

#[test]
fn evolve_runs_reach_on_the_desk_arm() {
    let dir = tempfile::tempdir().unwrap();
    let run = common::reach_run(dir.path(), 1, &["--robot", DESK5]);
    let config: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(run.join("config.json")).unwrap()).unwrap();
    assert_eq!(config["robot"], DESK5);
    let scan = sim::store::read_dir(run.join("golden/gen-000/reach")).unwrap();
    assert!(!scan.files.is_empty(), "no golden data");
    for f in &scan.files {
        assert_eq!(f.header.robot_name.as_deref(), Some(DESK5));
    }
    // Every golden episode stays on the scaled table (a desk arm reaches about 0.27 m).
    for e in scan.episodes() {
        let zone = &e.episode.task.zones[0];
        assert!(zone.center_m[0] < 0.3, "zone at {:?}", zone.center_m);
    }
}
