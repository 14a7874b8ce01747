//! `coevolve export lerobot` checked by the real client: a scripted store with camera images
//! and a short `coevolve evolve` run's golden data are exported, loaded with `lerobot` 0.6.1
//! (its own venv, `COEVOLVE_LEROBOT_PYTHON`, which `scripts/test.sh` sets) and iterated with a
//! DataLoader and `delta_timestamps`; every frame's values are compared with our store. Bad
//! requests give clear errors.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::{coevolve, json, stderr};
use serde_json::{json, Value};
use sim::Episode;

fn lerobot_python() -> PathBuf {
    let Some(path) = std::env::var_os("COEVOLVE_LEROBOT_PYTHON") else {
        panic!(
            "COEVOLVE_LEROBOT_PYTHON is not set: it must name the python of a venv with \
             lerobot[dataset]==0.6.1. Run scripts/test.sh (which sets it), or \
             `source scripts/lerobot-env.sh`"
        );
    };
    PathBuf::from(path)
}

fn f32s(values: impl IntoIterator<Item = f64>) -> Vec<f32> {
    values.into_iter().map(|v| v as f32).collect()
}

/// Centre pixel of a camera frame: colour 0–255 and depth in mm.
fn pixels(frames: &[sim::camera::CameraFrame], names: &[String]) -> Value {
    let mut out = serde_json::Map::new();
    for (frame, name) in frames.iter().zip(names) {
        let (y, x) = (frame.height as usize / 2, frame.width as usize / 2);
        let i = y * frame.width as usize + x;
        let rgb: Vec<u8> = frame.rgb[3 * i..3 * i + 3].to_vec();
        let mm = (f64::from(frame.depth_m[i]) * 1000.0)
            .round()
            .clamp(0.0, 65535.0);
        out.insert(format!("observation.images.{name}"), json!([y, x, rgb]));
        out.insert(
            format!("observation.images.{name}_depth"),
            json!([y, x, [mm]]),
        );
    }
    Value::Object(out)
}

/// What the dataset must hold, frame by frame, computed from the store's episodes.
fn expected(episodes: &[Episode], cameras: &[String]) -> Value {
    let robot = robots::load_manipulator("ur5e", None).unwrap();
    let mut frames = Vec::new();
    for (e, episode) in episodes.iter().enumerate() {
        let n = episode.steps.len();
        for (t, step) in episode.steps.iter().enumerate() {
            let (before, q_before) = match t {
                0 => (&episode.initial_state, &episode.initial_state.q_rad),
                _ => (
                    &episode.steps[t - 1].state,
                    &episode.steps[t - 1].q_target_rad,
                ),
            };
            let gripper = step.action.gripper();
            let (a, b) = (robot.fk(q_before), robot.fk(&step.q_target_rad));
            let dp = b.translation.vector - a.translation.vector;
            let dr = (b.rotation * a.rotation.inverse()).scaled_axis();
            frames.push(json!({
                "index": frames.len(),
                "episode_index": e,
                "frame_index": t,
                "task": episode.task.instruction,
                "state": f32s(before.q_rad.iter().copied().chain([before.gripper_opening])),
                "action": f32s(step.q_target_rad.iter().copied().chain([gripper])),
                "ee_delta": f32s([dp.x, dp.y, dp.z, dr.x, dr.y, dr.z, gripper]),
                "reward": step.reward.total,
                "done": t + 1 == n,
                "success": t + 1 == n && episode.outcome.success,
                "pixels": (t > 0 && !cameras.is_empty())
                    .then(|| pixels(&episode.steps[t - 1].images, cameras)),
            }));
        }
    }
    json!({"fps": 25, "episodes": episodes.len(), "frames": frames})
}

fn check_with_lerobot(dataset: &Path, expected: &Value) {
    let expected_path = dataset.with_extension("expected.json");
    std::fs::write(&expected_path, expected.to_string()).unwrap();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/lerobot_check.py");
    let out = Command::new(lerobot_python())
        .arg(script)
        .arg(dataset)
        .arg(&expected_path)
        .env("HF_DATASETS_CACHE", dataset.with_extension("hf-cache"))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "lerobot check failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    eprintln!("{stdout}");
}

fn export(args: &[&str]) -> Value {
    let mut all = vec!["export", "lerobot"];
    all.extend_from_slice(args);
    all.push("--json");
    json(&coevolve(&all))
}

#[test]
fn scripted_store_with_cameras_loads_in_lerobot() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    let dataset = dir.path().join("dataset");
    let s = |p: &Path| p.to_str().unwrap().to_owned();
    json(&coevolve(&[
        "sim",
        "--task",
        "lift",
        "--controller",
        "scripted",
        "--episodes",
        "3",
        "--cameras",
        "--threads",
        "1",
        "--json",
        "--out",
        &s(&store),
    ]));
    let report = export(&[&s(&store), "--cameras", "--out", &s(&dataset)]);
    let scan = sim::store::read_dir(&store).unwrap();
    let episodes: Vec<Episode> = scan.episodes().map(|e| e.episode.clone()).collect();
    let cameras: Vec<String> = scan.files[0]
        .header
        .sim_config
        .cameras
        .iter()
        .map(|c| c.name.clone())
        .collect();
    assert!(!cameras.is_empty());
    assert_eq!(report["episodes"], 3);
    let features: Vec<&str> = report["features"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f.as_str().unwrap())
        .collect();
    assert!(features.contains(&format!("observation.images.{}_depth", cameras[0]).as_str()));
    check_with_lerobot(&dataset, &expected(&episodes, &cameras));

    // Bad requests: an existing output, cameras the store never recorded, nothing selected.
    let err = stderr(&coevolve(&[
        "export",
        "lerobot",
        &s(&store),
        "--out",
        &s(&dataset),
    ]));
    assert!(
        err.contains("already exists") && err.contains("dataset"),
        "{err}"
    );
    let plain = dir.path().join("plain");
    json(&coevolve(&[
        "sim",
        "--task",
        "reach",
        "--controller",
        "scripted",
        "--episodes",
        "2",
        "--threads",
        "1",
        "--json",
        "--out",
        &s(&plain),
    ]));
    let err = stderr(&coevolve(&[
        "export",
        "lerobot",
        &s(&plain),
        "--cameras",
        "--out",
        &s(&dir.path().join("x")),
    ]));
    assert!(
        err.contains("--cameras") && err.contains("no cameras"),
        "{err}"
    );
    let err = stderr(&coevolve(&[
        "export",
        "lerobot",
        &s(&plain),
        "--skills",
        "flip",
        "--out",
        &s(&dir.path().join("y")),
    ]));
    assert!(err.contains("no episodes") && err.contains("flip"), "{err}");
    assert!(!dir.path().join("y").exists() && !dir.path().join("x").exists());
}

#[test]
fn evolve_runs_golden_data_loads_in_lerobot() {
    let dir = tempfile::tempdir().unwrap();
    let run = common::reach_run(dir.path(), 1, &[]);
    let dataset = dir.path().join("dataset");
    let s = |p: &Path| p.to_str().unwrap().to_owned();
    let report = export(&[&s(&run), "--golden-only", "--out", &s(&dataset)]);
    let scan = sim::store::read_dir(run.join("golden/gen-000/reach")).unwrap();
    let episodes: Vec<Episode> = scan.episodes().map(|e| e.episode.clone()).collect();
    assert!(!episodes.is_empty());
    assert_eq!(report["episodes"], episodes.len());
    check_with_lerobot(&dataset, &expected(&episodes, &[]));
}
