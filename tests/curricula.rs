//! The field's curricula as arms of the loop, end to end on a small reach tree: SFL scores
//! fresh candidates with the trained policy and explores its buffer; robust PLR with replay
//! probability 0 only scores fresh variants once the skill is trained and learns nothing from
//! them; every run measures its hard tail at the end (`--hard-tail`); `coevolve compare` over
//! the arms writes the statistics (IQM with its interval, probability of improvement, the hard
//! tail, performance profiles).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::Path;

const TAIL: &str = "--hard-tail";

fn metrics(run: &Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(run.join("metrics.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// A directory of its own for one arm's run.
fn arm_dir(tmp: &Path, name: &str) -> std::path::PathBuf {
    let dir = tmp.join(name);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn reach(record: &serde_json::Value) -> &serde_json::Value {
    &record["skills"]["reach"]
}

/// The small test config with `plr.replay_prob` as given.
fn small_config(dir: &Path, replay_prob: f64) -> String {
    common::small_config(dir, &format!("config-{replay_prob}"), |cfg| {
        cfg["plr"]["replay_prob"] = replay_prob.into();
    })
}

#[test]
fn sfl_and_plr_arms_run_and_compare() {
    let tmp = tempfile::tempdir().unwrap();
    let config = small_config(tmp.path(), 0.5);
    let sfl = common::reach_run(
        &arm_dir(tmp.path(), "sfl"),
        2,
        &["--curriculum", "sfl", TAIL, "10", "--config", &config],
    );
    let gens = metrics(&sfl);
    assert_eq!(gens.len(), 2);
    assert_eq!(
        reach(&gens[0])["scoring_episodes"],
        serde_json::Value::Null,
        "nothing to score with before the first training"
    );
    // 8 variants a generation: 4 × 8 candidates, 2 attempts each.
    assert_eq!(reach(&gens[1])["scoring_episodes"], 64);
    assert!(reach(&gens[1])["episodes"].as_u64().unwrap() >= 64 + 16);

    let never_replay = small_config(tmp.path(), 0.0);
    let plr = common::reach_run(
        &arm_dir(tmp.path(), "plr"),
        2,
        &["--curriculum", "plr", TAIL, "10", "--config", &never_replay],
    );
    let gens = metrics(&plr);
    assert_eq!(reach(&gens[0])["score_only"], serde_json::Value::Null);
    let g = &gens[1];
    assert_eq!(reach(g)["score_only"], true, "{g}");
    assert_eq!(reach(g)["golden_added"], 0);
    assert_eq!(g["train"], serde_json::Value::Null, "no training: {g}");
    assert_eq!(
        reach(g)["episodes"],
        16,
        "two rollouts on each of 8 variants"
    );
    let tail = &reach(g)["hard_tail"];
    assert_eq!(tail["variants"], 10);
    assert_eq!(tail["selected"], 1, "the worst 10 % of 10");
    let selected = tail["selection_success"].as_f64().unwrap();
    let overall = tail["overall_success"].as_f64().unwrap();
    assert!(selected <= overall, "the selected are the worst: {tail}");

    let args = ["--curriculum", "uniform", TAIL, "10", "--config", &config];
    let uniform = common::reach_run(&arm_dir(tmp.path(), "uniform"), 1, &args);

    let out = tmp.path().join("cmp");
    let arms = [
        format!("sfl={}", sfl.display()),
        format!("plr={}", plr.display()),
        format!("uniform={}", uniform.display()),
    ];
    let cmp = common::coevolve(&[
        "compare",
        &arms[0],
        &arms[1],
        &arms[2],
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(
        cmp.status.success(),
        "{}",
        String::from_utf8_lossy(&cmp.stderr)
    );
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("ablation.json")).unwrap()).unwrap();
    assert_eq!(json["stats"].as_array().unwrap().len(), 3);
    assert!(json["stats"][2]["hard_tail_iqm"]["point"].is_number());
    assert!(json["pairs"][0]["hard_tail_difference"]["lo"].is_number());
    let pairs = json["pairs"].as_array().unwrap();
    assert_eq!(pairs.len(), 2, "sfl against plr and uniform");
    for p in pairs {
        let poi = &p["probability_of_improvement"];
        let (lo, hi) = (poi["lo"].as_f64().unwrap(), poi["hi"].as_f64().unwrap());
        assert!((0.0..=1.0).contains(&lo) && lo <= hi && hi <= 1.0, "{p}");
    }
    let md = String::from_utf8_lossy(&cmp.stdout);
    assert!(
        md.contains("IQM [95 % CI]") && md.contains("P(improvement)"),
        "{md}"
    );
    let svg = std::fs::read_to_string(out.join("profiles.svg")).unwrap();
    assert!(svg.starts_with("<svg") && svg.matches("<polyline").count() == 3);
}
