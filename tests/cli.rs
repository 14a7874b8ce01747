//! End-to-end tests of the `coevolve` binary: JSON outputs and clear errors on bad input.
#![allow(clippy::expect_used, clippy::unwrap_used)] // test helpers

mod common;

use common::{coevolve, json, stderr};

#[test]
fn sim_json_has_the_promised_fields_and_is_thread_independent() {
    let one = json(&coevolve(&[
        "sim",
        "--task",
        "lift",
        "--episodes",
        "4",
        "--seed",
        "3",
        "--threads",
        "1",
        "--json",
    ]));
    let two = json(&coevolve(&[
        "sim",
        "--task",
        "lift",
        "--episodes",
        "4",
        "--seed",
        "3",
        "--threads",
        "2",
        "--json",
    ]));
    for key in [
        "success_rate",
        "episodes",
        "invalid",
        "env_steps_per_sec",
        "trajectory_hash",
    ] {
        assert!(one.get(key).is_some(), "missing {key}");
    }
    assert_eq!(one["episodes"], 4);
    assert_eq!(one["trajectory_hash"], two["trajectory_hash"]);
    let rate = one["success_rate"].as_f64().unwrap();
    assert!((0.0..=1.0).contains(&rate));
}

#[test]
fn robots_show_summarises_both_builtin_arms() {
    let ur = json(&coevolve(&["robots", "show", "ur5e", "--json"]));
    assert_eq!(ur["dof"], 6);
    let panda = json(&coevolve(&["robots", "show", "panda", "--json"]));
    assert_eq!(panda["dof"], 7);
    let reach = panda["reach_m"].as_f64().unwrap();
    assert!(reach > 0.7 && reach < 1.2, "panda reach {reach}");
}

#[test]
fn bad_inputs_give_clear_errors() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("nope.urdf");
    let err = stderr(&coevolve(&["robots", "show", missing.to_str().unwrap()]));
    assert!(err.contains("nope.urdf"), "{err}");

    let broken = dir.path().join("broken.urdf");
    std::fs::write(&broken, "<robot name=\"x\"><link name=\"a\"></robot>").unwrap();
    let err = stderr(&coevolve(&["robots", "show", broken.to_str().unwrap()]));
    assert!(err.contains("broken.urdf"), "{err}");

    let err = stderr(&coevolve(&["sim", "--task", "juggle", "--episodes", "1"]));
    assert!(err.contains("juggle"), "{err}");

    let task = dir.path().join("task.json");
    std::fs::write(&task, "{\"name\": 3}").unwrap();
    let err = stderr(&coevolve(&[
        "sim",
        "--task-file",
        task.to_str().unwrap(),
        "--episodes",
        "1",
    ]));
    assert!(err.contains("task.json"), "{err}");

    let config = dir.path().join("config.json");
    std::fs::write(&config, "{\"physics_dt_s\": -1}").unwrap();
    let err = stderr(&coevolve(&[
        "sim",
        "--config",
        config.to_str().unwrap(),
        "--episodes",
        "1",
    ]));
    assert!(err.contains("config.json"), "{err}");

    let err = stderr(&coevolve(&["sim", "--episodes", "0"]));
    assert!(err.contains("--episodes"), "{err}");

    let err = stderr(&coevolve(&["sim", "--families", "huge", "--episodes", "1"]));
    assert!(
        err.contains("huge") && err.contains("easy or wide"),
        "{err}"
    );
    let out = dir.path().join("run");
    let err = stderr(&coevolve(&[
        "evolve",
        "--families",
        "huge",
        "--out",
        out.to_str().unwrap(),
    ]));
    assert!(err.contains("families") && err.contains("huge"), "{err}");
}

#[test]
fn printed_config_round_trips_through_the_cli() {
    let dir = tempfile::tempdir().unwrap();
    let out = coevolve(&["sim", "--print-config"]);
    let config: serde_json::Value = json(&out);
    assert_eq!(config["physics_dt_s"], 0.002);
    let path = dir.path().join("config.json");
    std::fs::write(&path, serde_json::to_string(&config).unwrap()).unwrap();
    let report = json(&coevolve(&[
        "sim",
        "--config",
        path.to_str().unwrap(),
        "--task",
        "reach",
        "--episodes",
        "2",
        "--json",
    ]));
    assert_eq!(report["episodes"], 2);
}

#[test]
fn tree_validates_and_names_problems() {
    let tree = json(&coevolve(&["tree", "--json"]));
    assert_eq!(tree["skills"].as_array().unwrap().len(), 8);
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad_tree.toml");
    std::fs::write(
        &bad,
        "name = \"x\"\n[[skills]]\nname = \"a\"\ngroup = \"g\"\npredicate = \"fly\"\n\
         instructions = [\"go\"]\nmastery = 0.8\nheldout = { episodes = 4, seed = 1 }\n\
         budget = { episodes_per_generation = 4, train_steps = 4 }\n",
    )
    .unwrap();
    let err = stderr(&coevolve(&["tree", "--tree", bad.to_str().unwrap()]));
    assert!(
        err.contains("bad_tree.toml") && err.contains("predicate") && err.contains("fly"),
        "{err}"
    );
}
