//! `coevolve replay`: a recorded episode (raw and/or refined) → a rerun `.rrd` file, opened in a
//! rerun viewer with `--spawn`.

use std::path::{Path, PathBuf};

use anyhow::Context;
use clap::Args;
use sim::replay::{self, ReplayRequest};

/// Environment variable naming the rerun executable (the CLI from `pip install rerun-sdk`).
pub const RERUN_ENV: &str = "COEVOLVE_RERUN";

#[derive(Debug, Args)]
pub struct ReplayArgs {
    /// An episode store file, a store directory, or a run directory holding `raw/` and
    /// `golden/` (or `refined/`) store directories.
    #[arg(
        conflicts_with_all = ["raw", "refined"],
        required_unless_present_any = ["raw", "refined"]
    )]
    pub input: Option<PathBuf>,
    /// Raw episodes (a store file or directory).
    #[arg(long)]
    pub raw: Option<PathBuf>,
    /// Refined (golden) episodes (a store file or directory). With --raw, the raw episode of the
    /// same task and seed has its TCP path drawn next to the refined one.
    #[arg(long)]
    pub refined: Option<PathBuf>,
    /// Which episode of the primary input (the refined one when both are given), counted over
    /// its files in store order.
    #[arg(long, default_value_t = 0)]
    pub episode: usize,
    /// The .rrd file to write [default: next to the input, `<input>-episode-<K>.rrd`].
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Also open the written file in a rerun viewer (the executable named by COEVOLVE_RERUN,
    /// else `rerun` on PATH; needs a display).
    #[arg(long)]
    pub spawn: bool,
    /// Built-in robot name or URDF path [default: the robot named in the episode file, else
    /// ur5e].
    #[arg(long)]
    pub robot: Option<String>,
}

pub fn run(args: &ReplayArgs) -> anyhow::Result<()> {
    // Find the viewer before any work, so a missing one fails fast.
    let viewer = args.spawn.then(rerun_executable).transpose()?;
    let inputs = replay::resolve_inputs(
        args.input.as_deref(),
        args.raw.as_deref(),
        args.refined.as_deref(),
    )?;
    for skipped in inputs.skipped() {
        eprintln!("warning: skipped {skipped}");
    }
    let selection = replay::select_episode(&inputs, args.episode)?;
    if let Some(note) = selection.missing_companion(&inputs) {
        eprintln!("warning: {note}");
    }
    let robot_name = args
        .robot
        .clone()
        .or_else(|| selection.file.header.robot_name.clone())
        .unwrap_or_else(|| "ur5e".to_owned());
    let robot = robots::load_manipulator(&robot_name, None)
        .with_context(|| format!("loading robot `{robot_name}` (choose one with --robot)"))?;
    let request = ReplayRequest {
        robot: &robot,
        config: &selection.file.header.sim_config,
        episode: selection.episode,
        label: selection.role.label(),
        companion: selection.companion.map(|(role, e)| (role.label(), e)),
    };
    let e = selection.episode;
    let out = match &args.out {
        Some(out) => out.clone(),
        None => default_out(&selection.file.path, inputs.primary(), args.episode)?,
    };
    let summary = replay::save_rrd(&out, &request)?;
    for w in &summary.warnings {
        eprintln!("warning: {w}");
    }
    println!(
        "replayed {} episode {} (task `{}`, seed {}, {}) to {}: {} states, {} links, {} \
         camera frames{}",
        request.label,
        args.episode,
        e.task.name,
        e.seed,
        if e.outcome.success {
            "success"
        } else {
            "failure"
        },
        out.display(),
        summary.states,
        summary.links,
        summary.camera_frames,
        request
            .companion
            .map_or_else(String::new, |(label, _)| format!(
                ", with the {label} TCP path"
            ))
    );
    if let Some(viewer) = viewer {
        open_viewer(&viewer, &out)?;
    }
    Ok(())
}

/// How long a spawned viewer must stay up to count as started.
const VIEWER_START_S: u64 = 3;

/// Opens `file` in a rerun viewer (detached); fails when none is found or it exits at once
/// (no display, wrong version).
fn open_viewer(executable: &str, file: &Path) -> anyhow::Result<()> {
    let mut child = std::process::Command::new(executable)
        .arg(file)
        .stdin(std::process::Stdio::null())
        .spawn()
        .with_context(|| format!("--spawn: starting the rerun viewer `{executable}`"))?;
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(VIEWER_START_S);
    while std::time::Instant::now() < deadline {
        if let Some(status) = child
            .try_wait()
            .with_context(|| format!("--spawn: waiting for the rerun viewer `{executable}`"))?
        {
            anyhow::ensure!(
                status.success(),
                "--spawn: the rerun viewer `{executable}` exited with {status} (its message is \
                 above; a headless machine has no display). The replay is in {}",
                file.display()
            );
            return Ok(());
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    println!(
        "opened {} in the rerun viewer `{executable}`",
        file.display()
    );
    Ok(())
}

/// `<input>-episode-<K>.rrd` next to the primary input (a file or a store directory).
fn default_out(
    file: &Path,
    primary: Option<&replay::EpisodeSet>,
    k: usize,
) -> anyhow::Result<PathBuf> {
    let input = primary.map_or(file, |s| s.path.as_path());
    let input = std::path::absolute(input)
        .with_context(|| format!("resolving the input path `{}`", input.display()))?;
    let stem = if input.is_dir() {
        input.file_name()
    } else {
        input.file_stem()
    }
    .map_or_else(|| "replay".into(), |s| s.to_string_lossy().into_owned());
    let dir = input.parent().unwrap_or(Path::new("."));
    Ok(dir.join(format!("{stem}-episode-{k}.rrd")))
}

/// The rerun executable for `--spawn`: COEVOLVE_RERUN, else `rerun` found on PATH.
fn rerun_executable() -> anyhow::Result<String> {
    if let Some(path) = std::env::var_os(RERUN_ENV) {
        let path = PathBuf::from(path);
        anyhow::ensure!(
            path.is_file(),
            "{RERUN_ENV}={} is not a file (install the viewer with `pip install \
             rerun-sdk==0.36.3`, or write a file with --out)",
            path.display()
        );
        return Ok(path.display().to_string());
    }
    let found = std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|dir| dir.join("rerun"))
            .find(|p| p.is_file())
    });
    match found {
        Some(p) => Ok(p.display().to_string()),
        None => anyhow::bail!(
            "--spawn: no rerun viewer found (set {RERUN_ENV} or put `rerun` on PATH: \
             `pip install rerun-sdk==0.36.3`, or `scripts/python-env.sh` and use .venv/bin/rerun); \
             without a viewer, write a file with --out"
        ),
    }
}
