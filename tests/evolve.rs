//! `coevolve evolve` end to end on a small tree and budget: killed with SIGKILL at random
//! moments and resumed, a run ends exactly where an uninterrupted one does (same metrics, same
//! state, same weights) with nothing left half-written; the report is written, and renders in
//! headless Chromium; bad trees, targets and state files give clear errors; a run whose
//! policy rollouts go to a farm of three workers ends where the local run does.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::farm;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use rand::{Rng, SeedableRng};

const TREE: &str = r#"
name = "small"

[[skills]]
name = "reach"
group = "tabletop"
predicate = "reach"
instructions = ["move the gripper to the green target"]
mastery = 0.8
heldout = { episodes = 8, seed = 1000 }
budget = { episodes_per_generation = 16, train_steps = 40 }

[[skills]]
name = "grasp"
group = "tabletop"
predicate = "grasp"
instructions = ["grasp the red cube"]
prerequisites = ["reach"]
mastery = 0.8
heldout = { episodes = 8, seed = 1000 }
budget = { episodes_per_generation = 16, train_steps = 40 }
"#;

const CONFIG: &str = r#"{
  "cem": { "population": 16, "elites": 4, "iterations": 2, "keyframes": 4, "segment_s": 1.6,
           "init_offset_std_m": 0.06, "min_std": 0.005, "success_bonus": 1000.0, "seed": 0,
           "threads": null },
  "batch_size": 32,
  "synth": { "adversarial_candidates": 4, "validation_attempts": 2, "max_marked": 2 },
  "heldout_stage": 4,
  "fresh_episodes": 4,
  "relabel_runs": 4,
  "grpo": { "iterations": 1, "groups": 2, "group_size": 2, "sampled_success": [0.0, 1.0] }
}"#;

const GENERATIONS: &str = "3";

fn setup(dir: &Path) -> (PathBuf, PathBuf) {
    let tree = dir.join("small.toml");
    let config = dir.join("evolve.json");
    std::fs::write(&tree, TREE).unwrap();
    std::fs::write(&config, CONFIG).unwrap();
    (tree, config)
}

fn evolve_command(tree: &Path, config: &Path, out: &Path, resume: bool) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_coevolve"));
    cmd.args([
        "evolve",
        "--size",
        "tiny",
        "--device",
        "cpu",
        "--targets",
        "grasp",
    ])
    .args(["--generations", GENERATIONS, "--tree"])
    .arg(tree)
    .arg("--config")
    .arg(config)
    .arg("--out")
    .arg(out)
    .stdout(Stdio::null())
    .stderr(Stdio::piped());
    if resume {
        cmd.arg("--resume");
    }
    cmd
}

fn finish(child: Child) {
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "evolve failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A run's results without wall-clock figures.
fn results(run: &Path) -> (Vec<serde_json::Value>, serde_json::Value, serde_json::Value) {
    let strip = |v: &mut serde_json::Value| {
        fn walk(v: &mut serde_json::Value) {
            match v {
                serde_json::Value::Object(m) => {
                    for k in [
                        "wall_s",
                        "samples_per_sec",
                        "sim_steps_per_sec",
                        "explore_s",
                        "evaluate_s",
                        "synthesis_s",
                        "phases",
                    ] {
                        m.remove(k);
                    }
                    m.values_mut().for_each(walk);
                }
                serde_json::Value::Array(a) => a.iter_mut().for_each(walk),
                _ => {}
            }
        }
        walk(v);
    };
    let metrics: Vec<serde_json::Value> = std::fs::read_to_string(run.join("metrics.jsonl"))
        .unwrap()
        .lines()
        .map(|l| {
            let mut v = serde_json::from_str(l).unwrap();
            strip(&mut v);
            v
        })
        .collect();
    let mut state: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(run.join("state.json")).unwrap()).unwrap();
    let mut state = state["state"].take();
    strip(&mut state);
    let checkpoint = state["checkpoint"].as_str().map(|c| {
        let cfg: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(run.join(c).join("policy.json")).unwrap(),
        )
        .unwrap();
        cfg["weights_sha256"].clone()
    });
    (metrics, state, checkpoint.unwrap_or_default())
}

fn leftovers(dir: &Path, found: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.starts_with('.') || name.contains(".tmp") || name.ends_with(".old") {
            found.push(path.clone());
        }
        if path.is_dir() {
            leftovers(&path, found);
        }
    }
}

/// `coevolve deploy --run` finds the run's current policy for a trained skill, bundles and
/// signs it (then, with no controller listening, reports that nobody answered); a skill the
/// run does not have is named with the ones it has.
fn deploy_reads_the_run(dir: &Path, run: &Path) {
    let coevolve = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_coevolve"))
            .args(args)
            .output()
            .unwrap()
    };
    let key = dir.join("ops");
    let key_s = key.to_str().unwrap();
    assert!(coevolve(&["keys", "generate", "--out", key_s])
        .status
        .success());
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let endpoint = format!("tcp/127.0.0.1:{port}");
    let deploy = |skill: &str| {
        coevolve(&[
            "deploy",
            "--run",
            run.to_str().unwrap(),
            "--skill",
            skill,
            "--robot-id",
            "arm1",
            "--key",
            &format!("{key_s}.key"),
            "--timeout-s",
            "1",
            "--listen",
            &endpoint,
        ])
    };
    let out = deploy("reach");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(err.contains("deploy: bundle"), "{err}");
    assert!(err.contains("no answer from controller `arm1`"), "{err}");
    let out = deploy("stack");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("no skill `stack`") && err.contains("reach"),
        "{err}"
    );
}

#[test]
fn evolve_on_a_farm_ends_where_the_local_run_does() {
    let dir = tempfile::tempdir().unwrap();
    let (tree, config) = setup(dir.path());
    let local = dir.path().join("local");
    finish(
        evolve_command(&tree, &config, &local, false)
            .spawn()
            .unwrap(),
    );
    let at = farm::endpoint();
    let _router = farm::router(&at);
    let _workers: Vec<farm::Proc> = (0..3).map(|_| farm::worker(&at)).collect();
    farm::wait_for_workers(&at, 3);
    let on_farm = dir.path().join("farm");
    let mut cmd = evolve_command(&tree, &config, &on_farm, false);
    cmd.args(["--farm", &at, "--farm-job-episodes", "4"]);
    let out = cmd.spawn().unwrap().wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "evolve --farm failed: {stderr}");
    // The progress line shows what the farm ran.
    assert!(
        stderr.contains("farm: ") && stderr.contains(" jobs on 3 workers"),
        "{stderr}"
    );
    assert_eq!(results(&on_farm), results(&local));
}

#[test]
fn evolve_killed_at_random_points_resumes_to_the_same_result() {
    let dir = tempfile::tempdir().unwrap();
    let (tree, config) = setup(dir.path());
    let reference = dir.path().join("reference");
    let start = Instant::now();
    finish(
        evolve_command(&tree, &config, &reference, false)
            .spawn()
            .unwrap(),
    );
    let full_s = start.elapsed().as_secs_f64();
    let (metrics, state, weights) = results(&reference);
    // Three generations, or fewer if every target was mastered sooner (the run then stops).
    let generations = metrics.len();
    assert!((1..=3).contains(&generations), "{generations} generations");
    assert_eq!(state["completed_generations"], generations);
    for f in ["report.html", "report.md", "report.json"] {
        assert!(reference.join(f).is_file(), "{f} written");
    }
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(reference.join("report.json")).unwrap())
            .unwrap();
    let skills = report["skills"].as_array().unwrap();
    assert_eq!(skills.len(), 2);
    for s in skills {
        for field in ["name", "mastered", "heldout_success", "episodes_used"] {
            assert!(s.get(field).is_some(), "report skill has `{field}`");
        }
    }
    assert!(report["skills"][0]["episodes_used"].as_u64().unwrap() > 0);
    assert_eq!(report["history"].as_array().unwrap().len(), generations);
    for field in [
        "rollouts",
        "cut",
        "audited_cut",
        "steps_after_cut",
        "cut_but_succeeded",
    ] {
        assert!(
            report["early_stop"].get(field).is_some(),
            "report early_stop has `{field}`"
        );
    }

    deploy_reads_the_run(dir.path(), &reference);

    // Kill the same run with SIGKILL at random moments, resuming each time.
    let seed: u64 = rand::random();
    eprintln!("kill points seed {seed}, uninterrupted run {full_s:.1} s");
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let killed = dir.path().join("killed");
    let mut kills = 0;
    // The kill window scales with the uninterrupted run's time; a run that ends before its
    // first kill (the machine was less loaded than during the reference) starts over with
    // half the window.
    let mut window_s = full_s;
    for attempt in 0..8 {
        let mut child = evolve_command(&tree, &config, &killed, attempt > 0)
            .spawn()
            .unwrap();
        let wait = Duration::from_secs_f64(rng.gen_range(0.2..0.6) * window_s);
        let deadline = Instant::now() + wait;
        while Instant::now() < deadline {
            if child.try_wait().unwrap().is_some() {
                break;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        if child.try_wait().unwrap().is_none() {
            child.kill().unwrap(); // SIGKILL
            child.wait().unwrap();
            kills += 1;
        } else if kills > 0 {
            break;
        } else {
            std::fs::remove_dir_all(&killed).unwrap();
            window_s /= 2.0;
        }
    }
    finish(
        evolve_command(&tree, &config, &killed, true)
            .spawn()
            .unwrap(),
    );
    eprintln!("killed {kills} times");
    assert!(kills > 0, "the run was never interrupted");
    let (metrics_k, state_k, weights_k) = results(&killed);
    assert_eq!(metrics_k, metrics, "metrics after kills and resumes");
    assert_eq!(state_k, state, "state after kills and resumes");
    assert_eq!(weights_k, weights, "final weights after kills and resumes");
    let mut found = Vec::new();
    leftovers(&killed, &mut found);
    assert!(found.is_empty(), "half-written files left: {found:?}");

    // The HTML report renders (when a headless Chromium is installed; scripts/test.sh installs it).
    match common::chromium() {
        Some(browser) => {
            let shot = dir.path().join("report.png");
            common::screenshot(&browser, &reference.join("report.html"), &shot);
            let distinct = common::png_colour_count(&shot);
            assert!(distinct > 8, "screenshot looks blank ({distinct} colours)");
        }
        None => panic!(
            "no headless Chromium found (install the `chromium` package or set COEVOLVE_CHROMIUM)"
        ),
    }
}

#[test]
fn evolve_rejects_bad_trees_targets_and_state() {
    let dir = tempfile::tempdir().unwrap();
    let (tree, config) = setup(dir.path());
    let bad_tree = dir.path().join("bad.toml");
    std::fs::write(
        &bad_tree,
        TREE.replace("predicate = \"grasp\"", "predicate = \"juggle\""),
    )
    .unwrap();
    let run = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_coevolve"))
            .args(args)
            .output()
            .unwrap()
    };
    let out_dir = dir.path().join("x");
    let err = common::stderr(&run(&[
        "evolve",
        "--tree",
        bad_tree.to_str().unwrap(),
        "--out",
        out_dir.to_str().unwrap(),
    ]));
    assert!(err.contains("bad.toml") && err.contains("juggle"), "{err}");
    let err = common::stderr(&run(&[
        "evolve",
        "--tree",
        tree.to_str().unwrap(),
        "--targets",
        "juggle",
        "--out",
        out_dir.to_str().unwrap(),
    ]));
    assert!(err.contains("targets") && err.contains("juggle"), "{err}");
    // A tampered state file is refused, naming the file and the checksum.
    let run_dir = dir.path().join("tampered");
    std::fs::create_dir_all(&run_dir).unwrap();
    std::fs::write(run_dir.join("config.json"), "{}").unwrap();
    std::fs::write(
        run_dir.join("state.json"),
        r#"{"sha256":"00","state":{"format":"coevolve-run-state","version":1,"completed_generations":1,"skills":{},"checkpoint":null,"episodes_simulated":0,"rollbacks":0,"wall_s":0.0}}"#,
    )
    .unwrap();
    let err = common::stderr(&run(&[
        "evolve",
        "--resume",
        "--tree",
        tree.to_str().unwrap(),
        "--config",
        config.to_str().unwrap(),
        "--out",
        run_dir.to_str().unwrap(),
    ]));
    assert!(
        err.contains("state.json") && err.contains("sha256"),
        "{err}"
    );
    // Without --resume an existing run is not overwritten.
    let err = common::stderr(&run(&["evolve", "--out", run_dir.to_str().unwrap()]));
    assert!(err.contains("--resume"), "{err}");
    // A run killed before its first commit left only its config: resuming reads it, so a
    // damaged one is reported, not silently replaced by the defaults.
    let early = dir.path().join("killed-early");
    std::fs::create_dir_all(&early).unwrap();
    std::fs::write(early.join("config.json"), r#"{"generations": "many"}"#).unwrap();
    let err = common::stderr(&run(&[
        "evolve",
        "--resume",
        "--out",
        early.to_str().unwrap(),
    ]));
    assert!(
        err.contains("config.json") && err.contains("invalid type"),
        "{err}"
    );
}
