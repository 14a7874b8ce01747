//! `coevolve export lerobot`: an episode store or a run's banked data → a LeRobot dataset
//! (format v3.0) that `lerobot` 0.6 loads offline.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{bail, Context};
use clap::{Args, Subcommand};
use sim::store::EpisodeFile;
use sim::{Episode, SimConfig};
use skills::evolve::run_dir::RunDir;

#[derive(Debug, Subcommand)]
pub enum ExportCommand {
    /// Write a LeRobot dataset (v3.0: parquet frames, tasks, episodes, stats).
    Lerobot(LerobotArgs),
}

#[derive(Debug, Args)]
pub struct LerobotArgs {
    /// An episode store (directory or file), or a run directory of `coevolve evolve` (its
    /// golden episodes and failed rollouts of every committed generation).
    pub input: PathBuf,
    /// The dataset directory to create (must not exist).
    #[arg(long)]
    pub out: PathBuf,
    /// Only these skills (comma-separated) [default: all].
    #[arg(long, value_delimiter = ',')]
    pub skills: Vec<String>,
    /// Only successful episodes (a run: its golden data, no failed rollouts).
    #[arg(long)]
    pub golden_only: bool,
    /// Include the recorded camera images (colour PNG and 16-bit depth PNG in mm).
    #[arg(long)]
    pub cameras: bool,
    /// Built-in robot name or URDF path [default: the robot named in the episode files, else
    /// ur5e].
    #[arg(long)]
    pub robot: Option<String>,
    /// Start a new data file once one holds about this many MB (LeRobot's default: 100).
    #[arg(long, default_value_t = sim::lerobot::DATA_FILE_MB)]
    pub data_file_mb: usize,
    #[arg(long)]
    pub json: bool,
}

pub fn run(command: &ExportCommand) -> anyhow::Result<()> {
    match command {
        ExportCommand::Lerobot(args) => lerobot(args),
    }
}

/// The store files to export: a run's banked data in generation order, or a store.
fn store_files(args: &LerobotArgs) -> anyhow::Result<Vec<EpisodeFile>> {
    let input = &args.input;
    let run = RunDir::new(input);
    if !run.state_path().is_file() {
        if input.is_file() {
            return Ok(vec![sim::store::read_file(input)?]);
        }
        let scan = sim::store::read_dir(input)?;
        for skipped in &scan.skipped {
            eprintln!("warning: skipped {skipped}");
        }
        return Ok(scan.files);
    }
    let state = run
        .read_state()
        .with_context(|| format!("reading the run in `{}`", input.display()))?;
    let mut files = Vec::new();
    for g in 0..state.completed_generations {
        for skill in state.skills.keys() {
            let mut dirs = vec![run.golden(g, skill)];
            if !args.golden_only {
                dirs.push(run.failures(g, skill));
            }
            for dir in dirs.into_iter().filter(|d| d.is_dir()) {
                let scan = sim::store::read_dir(&dir)?;
                for skipped in &scan.skipped {
                    eprintln!("warning: skipped {skipped}");
                }
                files.extend(scan.files);
            }
        }
    }
    Ok(files)
}

fn selected<'a>(files: &'a [EpisodeFile], args: &LerobotArgs) -> Vec<&'a Episode> {
    files
        .iter()
        .flat_map(|f| &f.episodes)
        .filter(|e| args.skills.is_empty() || args.skills.iter().any(|s| s == e.task.skill.name()))
        .filter(|e| !args.golden_only || e.outcome.success)
        .collect()
}

fn one_config(files: &[EpisodeFile], input: &Path) -> anyhow::Result<SimConfig> {
    let Some(first) = files.first() else {
        bail!("`{}` holds no episode files", input.display());
    };
    if let Some(other) = files
        .iter()
        .find(|f| f.header.sim_config != first.header.sim_config)
    {
        bail!(
            "`{}` and `{}` were recorded with different simulator settings; export them separately",
            first.path.display(),
            other.path.display()
        );
    }
    Ok(first.header.sim_config.clone())
}

fn lerobot(args: &LerobotArgs) -> anyhow::Result<()> {
    let files = store_files(args)?;
    let config = Arc::new(one_config(&files, &args.input)?);
    let episodes = selected(&files, args);
    if episodes.is_empty() {
        bail!(
            "no episodes in `{}` match (skills {:?}, golden only: {})",
            args.input.display(),
            args.skills,
            args.golden_only
        );
    }
    let robot_name = args
        .robot
        .clone()
        .or_else(|| files.iter().find_map(|f| f.header.robot_name.clone()))
        .unwrap_or_else(|| "ur5e".to_owned());
    let robot = Arc::new(
        robots::load_manipulator(&robot_name, None)
            .with_context(|| format!("loading robot `{robot_name}` (choose one with --robot)"))?,
    );
    let opts = sim::lerobot::ExportOptions {
        robot_type: robot.model.name.clone(),
        cameras: args.cameras,
        data_file_mb: args.data_file_mb,
    };
    let report = sim::lerobot::export(&episodes, &robot, &config, &opts, &args.out)?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        println!(
            "lerobot: {} episodes, {} frames at {} fps, {} tasks, {} data file(s) → {}",
            report.episodes,
            report.frames,
            report.fps,
            report.tasks.len(),
            report.data_files,
            args.out.display()
        );
    }
    Ok(())
}
