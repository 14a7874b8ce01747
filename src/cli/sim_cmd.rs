//! `coevolve sim`: a headless batch of episodes on one robot and task family.

use std::path::PathBuf;
use std::sync::Arc;

use anyhow::Context;
use clap::{Args, ValueEnum};
use indicatif::{ProgressBar, ProgressStyle};
use std::time::Instant;

use bridge::farm::FarmStats;
use serde::Serialize;
use sim::job::{EpisodeJob, JobController};
use sim::library::{sample_task, TaskRanges};
use sim::{BatchConfig, Controller, EpisodeBatch, EpisodeInfo, SimConfig, SkillKind, TaskSpec};

use super::farm_cmd;

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum ControllerKind {
    /// The scripted IK pick-and-place reference (privileged state).
    Scripted,
    /// The scripted reference with noisy targets, hesitations and a forced failed first grasp
    /// (raw data for the refiner).
    ScriptedNoisy,
    /// Uniformly random end-effector deltas and gripper (a baseline).
    Random,
    /// Holds the home pose.
    Hold,
}

#[derive(Debug, Args)]
pub struct SimArgs {
    /// Built-in robot name (ur5e, panda) or a URDF path.
    #[arg(long, default_value = "ur5e")]
    pub robot: String,
    /// Task family: reach, push, grasp, lift, place, stack, flip.
    #[arg(long, default_value = "lift")]
    pub task: String,
    /// Task families: `easy` or `wide` (cubes, boxes and cylinders of 3–7 cm, 0.05–1 kg,
    /// anywhere on the table, a distractor, the arm started away from home).
    #[arg(long, default_value = "easy")]
    pub families: String,
    /// A TaskSpec JSON file used for every episode instead of sampling the family.
    #[arg(long)]
    pub task_file: Option<PathBuf>,
    /// A SimConfig JSON file (rates, gains, solver, cameras).
    #[arg(long)]
    pub config: Option<PathBuf>,
    #[arg(long, value_enum, default_value = "scripted")]
    pub controller: ControllerKind,
    #[arg(long, default_value_t = 256)]
    pub episodes: usize,
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Worker threads (default: all cores).
    #[arg(long)]
    pub threads: Option<usize>,
    /// Render the default front and wrist cameras into every observation.
    #[arg(long)]
    pub cameras: bool,
    /// Print one JSON object instead of a summary.
    #[arg(long)]
    pub json: bool,
    /// Record the episodes into this directory (episode store files, 64 episodes per file).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Print the effective SimConfig as JSON (a starting point for `--config`) and exit.
    #[arg(long)]
    pub print_config: bool,
    #[command(flatten)]
    pub farm: farm_cmd::FarmFlags,
}

impl ControllerKind {
    fn job_controller(self) -> JobController {
        match self {
            ControllerKind::Scripted => JobController::Scripted,
            ControllerKind::ScriptedNoisy => JobController::ScriptedNoisy,
            ControllerKind::Random => JobController::Random,
            ControllerKind::Hold => JobController::Hold,
        }
    }
}

#[derive(Debug, Serialize)]
struct SimReport<'a> {
    robot: &'a str,
    robot_model_hash: &'a str,
    task: &'a str,
    controller: String,
    seed: u64,
    #[serde(flatten)]
    stats: &'a sim::BatchStats,
    success_time_mean_s: Option<f64>,
    invalid_reasons: Vec<String>,
    /// With `--farm`: jobs, dispatches, re-dispatches, bytes and jobs per worker.
    #[serde(skip_serializing_if = "Option::is_none")]
    farm: Option<FarmStats>,
}

pub fn run(args: &SimArgs) -> anyhow::Result<()> {
    let robot = Arc::new(
        robots::load_manipulator_for_sim(&args.robot, None)
            .with_context(|| format!("loading robot `{}`", args.robot))?,
    );
    let mut config: SimConfig = match &args.config {
        Some(path) => {
            let text = std::fs::read_to_string(path)
                .with_context(|| format!("reading {}", path.display()))?;
            serde_json::from_str(&text)
                .with_context(|| format!("parsing sim config {}", path.display()))?
        }
        None => SimConfig::default(),
    };
    if args.cameras {
        config.cameras = SimConfig::default_cameras();
    }
    config.validate()?;
    if args.print_config {
        println!("{}", serde_json::to_string_pretty(&config)?);
        return Ok(());
    }
    let fixed_task: Option<TaskSpec> = match &args.task_file {
        Some(path) => {
            let text = std::fs::read_to_string(path)
                .with_context(|| format!("reading {}", path.display()))?;
            Some(TaskSpec::from_json(&text, &path.display().to_string())?)
        }
        None => None,
    };
    let skill = SkillKind::parse(&args.task)?;
    if args.episodes == 0 {
        anyhow::bail!("--episodes must be at least 1");
    }
    if args.threads == Some(0) {
        anyhow::bail!("--threads must be at least 1");
    }
    let ranges = TaskRanges::preset(&args.families)
        .map_err(|e| anyhow::anyhow!("--families {e}"))?
        .scaled(sim::library::workspace_scale(&robot));
    let tasks = move |_: usize, rng: &mut rand_chacha::ChaCha8Rng| match &fixed_task {
        Some(t) => t.clone(),
        None => sample_task(skill, &ranges, rng),
    };
    let controller = args.controller.job_controller();
    let bar = ProgressBar::new(args.episodes as u64);
    bar.set_style(
        ProgressStyle::with_template(
            "{spinner} sim [{bar:30}] {pos}/{len} episodes {per_sec} eta {eta}",
        )
        .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    let batch_cfg = BatchConfig {
        episodes: args.episodes,
        seed: args.seed,
        threads: args.threads,
        record_images: args.cameras && args.out.is_some(),
    };
    let config = Arc::new(config);
    let (batch, farm) = match &args.farm.farm {
        Some(endpoint) => {
            let (batch, stats) =
                run_on_farm(args, endpoint, &robot, &config, controller, &tasks, &bar)?;
            (batch, Some(stats))
        }
        None => {
            let factory =
                |info: &EpisodeInfo<'_>| -> Box<dyn Controller> { controller.make(info, &config) };
            let batch = EpisodeBatch::run(
                robot.clone(),
                config.clone(),
                &batch_cfg,
                &tasks,
                &factory,
                &|| bar.inc(1),
            )?;
            (batch, None)
        }
    };
    bar.finish_and_clear();
    let producer = args
        .controller
        .to_possible_value()
        .map_or_else(String::new, |v| v.get_name().to_owned());
    if let Some(dir) = &args.out {
        let mut writer = sim::store::EpisodeWriter::new(dir, producer.clone(), &config)?
            .with_robot_name(robot.model.load_name());
        for chunk in batch.episodes.chunks(64) {
            writer.write_batch(chunk)?;
        }
    }
    let times: Vec<f64> = batch
        .episodes
        .iter()
        .filter_map(|e| e.outcome.success_time_s)
        .collect();
    let report = SimReport {
        robot: &robot.model.name,
        robot_model_hash: &robot.model.model_hash,
        task: &args.task,
        controller: producer,
        seed: args.seed,
        stats: &batch.stats,
        success_time_mean_s: (!times.is_empty())
            .then(|| times.iter().sum::<f64>() / times.len() as f64),
        invalid_reasons: batch
            .episodes
            .iter()
            .filter_map(|e| e.outcome.invalid.clone())
            .take(5)
            .collect(),
        farm,
    };
    if args.json {
        println!("{}", serde_json::to_string(&report)?);
    } else {
        let s = &batch.stats;
        println!(
            "{} on {}: {}/{} succeeded ({:.1}%), {} invalid, {} failed outright",
            args.task,
            report.robot,
            s.successes,
            s.episodes,
            100.0 * s.success_rate,
            s.invalid,
            s.failures
        );
        println!(
            "{} control steps ({} physics steps) in {:.2} s on {} threads: {:.0} env steps/s, {:.0} physics steps/s",
            s.control_steps, s.physics_steps, s.wall_s, s.threads, s.env_steps_per_sec, s.physics_steps_per_sec
        );
        if let Some(f) = &report.farm {
            println!(
                "farm: {} jobs on {} workers, {} dispatched again, {:.1} KiB out, {:.1} KiB back",
                f.jobs,
                f.jobs_per_worker.len(),
                f.redispatched,
                f.request_bytes as f64 / 1024.0,
                f.reply_bytes as f64 / 1024.0
            );
        }
        println!("trajectory hash {}", s.trajectory_hash);
    }
    Ok(())
}

/// The batch's episodes as farm jobs, run by the farm's workers.
fn run_on_farm(
    args: &SimArgs,
    endpoint: &str,
    robot: &Arc<robots::Manipulator>,
    config: &Arc<SimConfig>,
    controller: JobController,
    tasks: &(dyn Fn(usize, &mut rand_chacha::ChaCha8Rng) -> TaskSpec + Sync),
    bar: &ProgressBar,
) -> anyhow::Result<(EpisodeBatch, FarmStats)> {
    let (net, options) = args.farm.settings(endpoint)?;
    let per_job = args.farm.farm_job_episodes;
    let jobs: Vec<EpisodeJob> = (0..args.episodes)
        .step_by(per_job)
        .map(|start| EpisodeJob {
            robot: args.robot.clone(),
            robot_model_hash: robot.model.model_hash.clone(),
            config: (**config).clone(),
            controller,
            record_images: args.cameras && args.out.is_some(),
            episodes: EpisodeJob::episodes_of(
                args.seed,
                start..(start + per_job).min(args.episodes),
                tasks,
            ),
        })
        .collect();
    let start = Instant::now();
    let (episodes, stats) = farm_cmd::run_jobs(&net, options, &jobs, &|n| bar.inc(n as u64))?;
    let workers = stats.jobs_per_worker.len();
    let batch =
        EpisodeBatch::from_episodes(episodes, config, start.elapsed().as_secs_f64(), workers);
    Ok((batch, stats))
}
