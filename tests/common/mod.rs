//! Helpers shared by the CLI end-to-end tests.
#![allow(dead_code, clippy::expect_used, clippy::unwrap_used)]

use std::process::{Command, Output};

pub mod farm;

pub fn coevolve(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_coevolve"))
        .args(args)
        .output()
        .expect("run coevolve")
}

/// The single JSON object a successful command printed.
pub fn json(out: &Output) -> serde_json::Value {
    assert!(
        out.status.success(),
        "stderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("one JSON object")
}

/// The error output of a command that must fail.
pub fn stderr(out: &Output) -> String {
    assert!(!out.status.success(), "expected failure");
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// A headless Chromium: `COEVOLVE_CHROMIUM`, or the first of the usual names on PATH.
pub fn chromium() -> Option<std::path::PathBuf> {
    if let Ok(p) = std::env::var("COEVOLVE_CHROMIUM") {
        return Some(p.into());
    }
    let path = std::env::var_os("PATH")?;
    [
        "chromium",
        "chromium-browser",
        "google-chrome",
        "headless_shell",
    ]
    .iter()
    .flat_map(|name| std::env::split_paths(&path).map(move |d| d.join(name)))
    .find(|p| p.is_file())
}

/// Renders `html` to a PNG screenshot with headless Chromium.
pub fn screenshot(browser: &std::path::Path, html: &std::path::Path, png: &std::path::Path) {
    let profile = tempfile::tempdir().expect("profile dir");
    let out = Command::new(browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
            "--window-size=1200,1600",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .arg(format!("--screenshot={}", png.display()))
        .arg(format!("file://{}", html.display()))
        .output()
        .expect("run chromium");
    assert!(
        png.is_file(),
        "chromium wrote no screenshot: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Distinct RGB colours in a PNG (a blank page has one).
pub fn png_colour_count(png: &std::path::Path) -> usize {
    let decoder = ::png::Decoder::new(std::io::BufReader::new(
        std::fs::File::open(png).expect("open png"),
    ));
    let mut reader = decoder.read_info().expect("png header");
    let mut buf = vec![0; reader.output_buffer_size().expect("png size")];
    let info = reader.next_frame(&mut buf).expect("png frame");
    let channels = info.color_type.samples();
    let mut colours = std::collections::BTreeSet::new();
    for px in buf[..info.buffer_size()].chunks(channels) {
        colours.insert((px[0], px.get(1).copied(), px.get(2).copied()));
        if colours.len() > 1000 {
            break;
        }
    }
    colours.len()
}

/// A one-skill tree (reach) for quick `coevolve evolve` runs in tests.
pub const REACH_TREE: &str = r#"
name = "small"

[[skills]]
name = "reach"
group = "tabletop"
predicate = "reach"
instructions = ["move the gripper to the green target", "touch the green target"]
mastery = 0.8
heldout = { episodes = 8, seed = 1000 }
budget = { episodes_per_generation = 16, train_steps = 20 }
"#;

/// The loop's default config, sized for a test: a smaller search (the default's population of
/// 64 over 3 iterations dominates a small run's time) and fresh set; `edit` changes it further.
/// Written to `dir/<name>.json`; returns that path.
pub fn small_config(
    dir: &std::path::Path,
    name: &str,
    edit: impl FnOnce(&mut serde_json::Value),
) -> String {
    let mut cfg = json(&coevolve(&["evolve", "--print-config"]));
    let cem = &mut cfg["cem"];
    cem["population"] = 24.into();
    cem["elites"] = 6.into();
    cem["iterations"] = 2.into();
    cem["min_successes"] = 4.into();
    cem["max_iterations"] = 3.into();
    cfg["mean_plan_runs"] = 16.into();
    cfg["fresh_episodes"] = 16.into();
    edit(&mut cfg);
    let path = dir.join(format!("{name}.json"));
    std::fs::write(&path, cfg.to_string()).unwrap();
    path.to_str().unwrap().to_owned()
}

/// `coevolve evolve` on [`REACH_TREE`] (tiny model, one thread) into `dir/run`, with `extra`
/// flags and, unless they name one, the [`small_config`]; returns the run directory.
pub fn reach_run(dir: &std::path::Path, generations: usize, extra: &[&str]) -> std::path::PathBuf {
    let tree = dir.join("reach.toml");
    std::fs::write(&tree, REACH_TREE).unwrap();
    let run = dir.join("run");
    let generations = generations.to_string();
    let config = (!extra.contains(&"--config")).then(|| small_config(dir, "config", |_| {}));
    let mut args = vec![
        "evolve",
        "--size",
        "tiny",
        "--device",
        "cpu",
        "--threads",
        "1",
        "--targets",
        "reach",
        "--generations",
        &generations,
        "--tree",
        tree.to_str().unwrap(),
        "--out",
        run.to_str().unwrap(),
    ];
    if let Some(config) = &config {
        args.extend(["--config", config.as_str()]);
    }
    args.extend_from_slice(extra);
    let out = coevolve(&args);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    run
}
