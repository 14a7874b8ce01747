//! `coevolve replay` end to end: recorded (raw) and refined episodes, with and without camera
//! images, become `.rrd` files that the rerun CLI (PyPI `rerun-sdk==0.36.3`, found through
//! `COEVOLVE_RERUN`, which `scripts/test.sh` sets) verifies and lists with the promised
//! entities; bad inputs give errors naming the file.
#![allow(clippy::expect_used, clippy::unwrap_used)] // test helpers

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn coevolve(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_coevolve"))
        .args(args)
        .output()
        .expect("run coevolve")
}

fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// Runs coevolve, asserting success; returns stdout and stderr.
fn ok(args: &[&str]) -> String {
    let out = coevolve(args);
    assert!(
        out.status.success(),
        "coevolve {args:?} failed:\n{}",
        text(&out)
    );
    text(&out)
}

/// Runs coevolve, asserting failure; returns stderr.
fn fails(args: &[&str]) -> String {
    let out = coevolve(args);
    assert!(
        !out.status.success(),
        "coevolve {args:?} succeeded:\n{}",
        text(&out)
    );
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn s(p: &Path) -> &str {
    p.to_str().expect("UTF-8 temp path")
}

/// The rerun CLI named by COEVOLVE_RERUN.
fn rerun_cli() -> PathBuf {
    let Some(path) = std::env::var_os("COEVOLVE_RERUN") else {
        panic!(
            "COEVOLVE_RERUN is not set: it must name the rerun CLI of PyPI rerun-sdk==0.36.3. \
             Run scripts/test.sh (which sets it), or `scripts/python-env.sh` and \
             `export COEVOLVE_RERUN=$PWD/.venv/bin/rerun`"
        );
    };
    let path = PathBuf::from(path);
    assert!(
        path.is_file(),
        "COEVOLVE_RERUN={} is not a file: run scripts/python-env.sh (installs rerun-sdk==0.36.3 \
         into .venv) and point it at .venv/bin/rerun",
        path.display()
    );
    path
}

/// Runs `rerun rrd <args>`, asserting success; returns stdout and stderr.
fn rrd(args: &[&str]) -> String {
    let out = Command::new(rerun_cli())
        .arg("rrd")
        .args(args)
        .env("RERUN_ANALYTICS", "false")
        .output()
        .expect("run the rerun CLI");
    assert!(
        out.status.success(),
        "rerun rrd {args:?} failed:\n{}",
        text(&out)
    );
    text(&out)
}

/// `rerun rrd verify` exits 0 even on an empty file: the text must say the file verified.
fn verify(file: &Path) {
    assert!(file.is_file(), "{} was not written", file.display());
    let out = rrd(&["verify", s(file)]);
    assert!(out.contains("1 file verified"), "rerun rrd verify:\n{out}");
}

/// `rerun rrd stats` lists every entity path with its chunk count.
fn stats(file: &Path) -> String {
    rrd(&["stats", s(file)])
}

fn assert_lists(listing: &str, entities: &[&str]) {
    for e in entities {
        assert!(listing.contains(e), "`{e}` missing from:\n{listing}");
    }
}

#[test]
fn raw_and_refined_episodes_replay_to_verified_rrd_files() {
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path();
    let raw = run.join("raw");
    let golden = run.join("golden");
    ok(&[
        "sim",
        "--controller",
        "scripted-noisy",
        "--task",
        "lift",
        "--episodes",
        "2",
        "--seed",
        "1",
        "--out",
        s(&raw),
    ]);
    let refined = ok(&["refine", "--in", s(&raw), "--out", s(&golden)]);
    assert!(
        refined.contains("golden episodes"),
        "nothing refined:\n{refined}"
    );

    // A raw episode file, default output next to it.
    let raw_file = raw.join("episodes-000000.cep");
    let out = ok(&["replay", s(&raw_file), "--episode", "1"]);
    assert!(out.contains("replayed raw episode 1"), "{out}");
    let raw_rrd = raw.join("episodes-000000-episode-1.rrd");
    verify(&raw_rrd);
    let listing = stats(&raw_rrd);
    let robot = robots::load_builtin("ur5e").unwrap();
    for link in robot.model.links.iter().filter(|l| !l.visuals.is_empty()) {
        assert_lists(&listing, &[&format!("/world/robot/{}/visual_0", link.name)]);
        assert_lists(&listing, &[&format!("/world/robot/{}:", link.name)]);
    }
    for &j in &robot.arm_joints {
        let name = &robot.model.joints[j].name;
        assert_lists(
            &listing,
            &[
                &format!("/plots/joints/q_rad/{name}"),
                &format!("/plots/joints/jerk_rad_s3/{name}"),
            ],
        );
    }
    assert_lists(
        &listing,
        &[
            "/world/ee_path/raw",
            "/world/ee:",
            "/world/table",
            "/world/pedestal",
            "/world/objects/",
            "/world/outcome",
            "/plots/reward/reach",
            "/plots/reward/grasp",
            "/plots/reward/lift",
            "/plots/reward/goal",
            "/plots/reward/success",
            "/plots/reward/table_collision",
            "/plots/reward/joint_limit",
            "/plots/reward/energy",
            "/plots/reward/total",
            "/plots/contacts/object_peak_force_n/",
            "/plots/contacts/robot_env_force_n",
            "/plots/gripper/opening",
            "/instruction",
            "/log",
            "sim_time",
            "Transform3D",
            "Scalars",
            "LineStrips3D",
            "TextDocument",
            "TextLog",
        ],
    );
    assert!(!listing.contains("/world/ee_path/refined"), "{listing}");
    let printed = rrd(&["print", s(&raw_rrd)]);
    assert_lists(
        &printed,
        &["/world/robot/", "/world/ee_path/raw", "/plots/reward/total"],
    );

    // The run directory: the refined episode in full, with the raw TCP path of the same source.
    let both = run.join("both.rrd");
    let out = ok(&["replay", s(run), "--out", s(&both), "--robot", "ur5e"]);
    assert!(out.contains("replayed refined episode 0"), "{out}");
    assert!(out.contains("with the raw TCP path"), "{out}");
    verify(&both);
    let listing = stats(&both);
    assert_lists(
        &listing,
        &[
            "/world/ee_path/raw",
            "/world/ee_path/refined",
            "/world/robot/",
        ],
    );

    // Explicit --raw / --refined give the same pairing.
    let explicit = run.join("explicit.rrd");
    ok(&[
        "replay",
        "--raw",
        s(&raw),
        "--refined",
        s(&golden),
        "--out",
        s(&explicit),
    ]);
    verify(&explicit);
    assert_lists(
        &stats(&explicit),
        &["/world/ee_path/raw", "/world/ee_path/refined"],
    );

    // Out of range, and a truncated copy of a real file.
    let err = fails(&["replay", s(&raw), "--episode", "7"]);
    assert!(
        err.contains("out of range") && err.contains(s(&raw)),
        "{err}"
    );
    let bytes = std::fs::read(&raw_file).unwrap();
    let truncated = run.join("truncated.cep");
    std::fs::write(&truncated, &bytes[..bytes.len() / 2]).unwrap();
    let err = fails(&["replay", s(&truncated), "--out", s(&run.join("t.rrd"))]);
    assert!(err.contains(s(&truncated)), "{err}");
    assert!(!run.join("t.rrd").exists());
}

#[test]
fn camera_images_are_replayed() {
    let tmp = tempfile::tempdir().unwrap();
    let raw = tmp.path().join("raw");
    ok(&[
        "sim",
        "--controller",
        "scripted-noisy",
        "--task",
        "lift",
        "--episodes",
        "1",
        "--seed",
        "2",
        "--cameras",
        "--out",
        s(&raw),
    ]);
    let file = tmp.path().join("cameras.rrd");
    let out = ok(&["replay", s(&raw), "--out", s(&file)]);
    assert!(!out.contains(" 0 camera frames"), "{out}");
    verify(&file);
    assert_lists(
        &stats(&file),
        &[
            "/world/cameras/front/rgb",
            "/world/cameras/front/depth",
            "/world/cameras/front/segmentation",
            "/world/cameras/wrist/rgb",
            "/world/cameras/wrist/depth",
            "/world/cameras/wrist/segmentation",
            "Pinhole",
            "AnnotationContext",
            "DepthImage",
            "SegmentationImage",
        ],
    );
}

/// The project's own desk arm: its episodes replay with its STL meshes drawn, the robot found
/// again from the path the store records.
#[test]
fn desk_arm_episodes_replay_with_their_meshes() {
    let tmp = tempfile::tempdir().unwrap();
    let raw = tmp.path().join("raw");
    let urdf = concat!(env!("CARGO_MANIFEST_DIR"), "/robots/urdf/desk5/desk5.urdf");
    let args = [
        "sim",
        "--robot",
        urdf,
        "--controller",
        "scripted",
        "--task",
        "lift",
    ];
    ok(&[&args[..], &["--episodes", "1", "--out", s(&raw)]].concat());
    let file = tmp.path().join("desk5.rrd");
    let out = ok(&["replay", s(&raw), "--out", s(&file)]);
    assert!(!out.contains("not drawn"), "{out}");
    verify(&file);
    let listing = stats(&file);
    let robot = robots::load_manipulator(urdf, None).unwrap();
    for link in robot.model.links.iter().filter(|l| !l.visuals.is_empty()) {
        assert_lists(&listing, &[&format!("/world/robot/{}/visual_0", link.name)]);
    }
    assert_lists(&listing, &["/world/robot/gripper_link/visual_1", "Asset3D"]);
}

#[test]
fn missing_and_corrupted_inputs_name_the_file() {
    let tmp = tempfile::tempdir().unwrap();
    let missing = tmp.path().join("no-such-run");
    let err = fails(&["replay", s(&missing)]);
    assert!(
        err.contains(s(&missing)) && err.contains("does not exist"),
        "{err}"
    );

    let corrupted = tmp.path().join("episodes-000000.cep");
    std::fs::write(&corrupted, b"not an episode file at all").unwrap();
    let err = fails(&["replay", s(&corrupted)]);
    assert!(
        err.contains(s(&corrupted)) && err.contains("not an episode store file"),
        "{err}"
    );
    // A directory whose only file is corrupted names that file.
    let err = fails(&["replay", s(tmp.path())]);
    assert!(err.contains(s(&corrupted)), "{err}");

    let empty = tmp.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    let err = fails(&["replay", "--raw", s(&empty)]);
    assert!(
        err.contains(s(&empty)) && err.contains("no episode store files"),
        "{err}"
    );
    let out = Command::new(env!("CARGO_BIN_EXE_coevolve"))
        .args(["replay", "--spawn", s(&corrupted)])
        .env("COEVOLVE_RERUN", tmp.path().join("no-viewer"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        err.contains("COEVOLVE_RERUN") && err.contains("no-viewer") && err.contains("--out"),
        "{err}"
    );
}

#[test]
fn evolve_live_view_saves_a_verified_recording() {
    let tmp = tempfile::tempdir().unwrap();
    let rrd_file = tmp.path().join("live.rrd");
    common::reach_run(tmp.path(), 2, &["--rerun", "save", s(&rrd_file)]);
    verify(&rrd_file);
    assert_lists(
        &stats(&rrd_file),
        &[
            "/curves/heldout/reach",
            "/pool/golden/reach",
            "/run/episodes_simulated",
            "/run/phase_s/train",
            "/log",
            "/episodes/gen-000/reach/golden/world/robot",
            "/episodes/gen-000/reach/golden/plots/reward",
            // Generation 1's episodes (a demonstration or a failed rollout).
            "/episodes/gen-001/reach/",
        ],
    );
    let err = fails(&[
        "evolve",
        "--rerun",
        "show",
        "--out",
        s(&tmp.path().join("x")),
    ]);
    assert!(
        err.contains("--rerun show") && err.contains("save FILE"),
        "{err}"
    );
}
