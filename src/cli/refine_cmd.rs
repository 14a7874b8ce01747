//! `coevolve refine --in <episodes> --out <golden>`: raw rollouts → golden demonstrations.

use std::path::PathBuf;
use std::sync::Arc;

use anyhow::Context;
use clap::Args;
use sim::refine::{refine, RefineConfig};
use sim::store::{read_dir, EpisodeWriter};

#[derive(Debug, Args)]
pub struct RefineArgs {
    /// Directory of recorded episode files.
    #[arg(long = "in")]
    pub input: PathBuf,
    /// Directory of golden episode files (created; existing golden episodes count for novelty).
    #[arg(long)]
    pub out: PathBuf,
    /// Built-in robot name or URDF path the episodes were recorded with (default: the robot
    /// named in the episode files, else ur5e).
    #[arg(long)]
    pub robot: Option<String>,
    /// A RefineConfig JSON file (limits, ratios, tolerances).
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// Print the report as one JSON object.
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: &RefineArgs) -> anyhow::Result<()> {
    let cfg: RefineConfig = match &args.config {
        Some(path) => {
            let text = std::fs::read_to_string(path)
                .with_context(|| format!("reading {}", path.display()))?;
            serde_json::from_str(&text)
                .with_context(|| format!("parsing refine config {}", path.display()))?
        }
        None => RefineConfig::default(),
    };
    let scan = read_dir(&args.input)?;
    for skipped in &scan.skipped {
        eprintln!(
            "warning: skipped {}: {}",
            skipped.path.display(),
            skipped.problem
        );
    }
    let Some(first) = scan.files.first() else {
        anyhow::bail!("{}: no readable episode files", args.input.display());
    };
    let config = Arc::new(first.header.sim_config.clone());
    let robot_name = args
        .robot
        .clone()
        .or_else(|| first.header.robot_name.clone())
        .unwrap_or_else(|| "ur5e".to_owned());
    let robot = Arc::new(
        robots::load_manipulator(&robot_name, None)
            .with_context(|| format!("loading robot `{robot_name}`"))?,
    );
    let raw: Vec<sim::Episode> = scan
        .files
        .iter()
        .flat_map(|f| f.episodes.iter().cloned())
        .collect();
    let held: Vec<sim::Episode> = if args.out.is_dir() {
        let golden = read_dir(&args.out)?;
        for skipped in &golden.skipped {
            eprintln!(
                "warning: skipped {}: {}",
                skipped.path.display(),
                skipped.problem
            );
        }
        golden.files.into_iter().flat_map(|f| f.episodes).collect()
    } else {
        Vec::new()
    };
    let refined = refine(&robot, &config, &cfg, &raw, &held)?;
    let mut writer = EpisodeWriter::new(&args.out, "refiner", &config)?;
    if !refined.golden.is_empty() {
        let path = writer.write_batch(&refined.golden)?;
        if !args.json {
            println!(
                "wrote {} golden episodes to {}",
                refined.golden.len(),
                path.display()
            );
        }
    }
    let r = &refined.report;
    if args.json {
        println!("{}", serde_json::to_string(r)?);
    } else {
        println!(
            "{} in → {} kept (not success {}, unhealthy {}, inefficient {}, re-validation failed {}, near duplicates {})",
            r.episodes_in,
            r.kept,
            r.dropped_not_success,
            r.dropped_unhealthy,
            r.dropped_inefficient,
            r.dropped_revalidation_failed,
            r.dropped_near_duplicate
        );
        println!(
            "retries pruned {}, idle steps trimmed {}, re-validation rate {:.2}",
            r.retries_pruned, r.idle_steps_trimmed, r.revalidation_rate
        );
        println!(
            "duration {:.2} → {:.2} s, EE path {:.2} → {:.2} m, RMS jerk {:.1} → {:.1} rad/s³, peak acc {:.1} → {:.1} rad/s²",
            r.duration_before_s,
            r.duration_after_s,
            r.ee_path_before_m,
            r.ee_path_after_m,
            r.rms_jerk_before,
            r.rms_jerk_after,
            r.peak_acc_before,
            r.peak_acc_after
        );
    }
    Ok(())
}
