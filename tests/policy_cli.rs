//! `coevolve train | eval | grpo` end to end: recorded episodes → checkpoint → held-out
//! evaluation JSON → GRPO checkpoint; bad inputs give errors that name the problem.
#![allow(clippy::expect_used, clippy::unwrap_used)] // test helpers

mod common;

use common::{coevolve, json, stderr};

#[test]
fn train_eval_grpo_round_trip() {
    let dir = tempfile::tempdir().unwrap();
    let raw = dir.path().join("raw");
    let ckpt = dir.path().join("ckpt");
    let tuned = dir.path().join("tuned");
    let p = |x: &std::path::Path| x.to_str().unwrap().to_owned();
    let sim = coevolve(&[
        "sim",
        "--task",
        "reach",
        "--controller",
        "scripted",
        "--episodes",
        "12",
        "--out",
        &p(&raw),
        "--json",
    ]);
    assert!(
        sim.status.success(),
        "{}",
        String::from_utf8_lossy(&sim.stderr)
    );
    let report = json(&coevolve(&[
        "train",
        "--data",
        &p(&raw),
        "--out",
        &p(&ckpt),
        "--size",
        "tiny",
        "--steps",
        "40",
        "--batch-size",
        "32",
        "--device",
        "cpu",
        "--json",
    ]));
    assert_eq!(report["steps"], 40);
    assert!(report["final_loss"].as_f64().unwrap().is_finite());
    assert!(ckpt.join("model.safetensors").is_file() && ckpt.join("policy.json").is_file());
    let eval = json(&coevolve(&[
        "eval",
        "--policy",
        &p(&ckpt),
        "--task",
        "reach",
        "--episodes",
        "6",
        "--seed",
        "1000",
        "--json",
    ]));
    assert_eq!(eval["episodes"], 6);
    let rate = eval["success_rate"].as_f64().unwrap();
    assert!((0.0..=1.0).contains(&rate));
    assert!(eval["mean_return"].as_f64().unwrap().is_finite());
    let history = json(&coevolve(&[
        "grpo",
        "--policy",
        &p(&ckpt),
        "--out",
        &p(&tuned),
        "--task",
        "reach",
        "--iterations",
        "1",
        "--groups",
        "2",
        "--group-size",
        "2",
        "--json",
    ]));
    assert_eq!(history.as_array().unwrap().len(), 1);
    assert!(tuned.join("policy.json").is_file());
}

#[test]
fn bad_inputs_are_named() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("no-such-ckpt");
    let err = stderr(&coevolve(&[
        "eval",
        "--policy",
        missing.to_str().unwrap(),
        "--task",
        "reach",
    ]));
    assert!(err.contains("no-such-ckpt"), "{err}");
    let err = stderr(&coevolve(&[
        "train",
        "--data",
        dir.path().to_str().unwrap(),
        "--out",
        "x",
        "--size",
        "huge",
    ]));
    assert!(err.contains("huge"), "{err}");
    let err = stderr(&coevolve(&[
        "train",
        "--data",
        dir.path().to_str().unwrap(),
        "--out",
        "x",
        "--device",
        "tpu:3",
    ]));
    assert!(err.contains("tpu:3"), "{err}");
    let err = stderr(&coevolve(&[
        "train",
        "--data",
        dir.path().to_str().unwrap(),
        "--out",
        "x",
    ]));
    assert!(err.contains("no readable episode files"), "{err}");
}
