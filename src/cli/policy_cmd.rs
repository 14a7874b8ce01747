//! `coevolve train | eval | grpo`: behaviour cloning from golden episodes, held-out evaluation
//! of a checkpoint, and GRPO fine-tuning of a checkpoint in the simulator.

use std::path::PathBuf;
use std::sync::Arc;

use anyhow::Context;
use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};
use policy::bc::{train_bc, BcConfig};
use policy::checkpoint;
use policy::device::{device_name, parse_device};
use policy::grpo::{train_grpo, GrpoConfig};
use policy::rollout::evaluate_episodes;
use policy::{ModelConfig, ObsMode, OptimConfig};
use sim::store::read_dir;
use sim::SkillKind;

#[derive(Debug, Args)]
pub struct TrainArgs {
    /// Directory of (golden) episode files to imitate.
    #[arg(long)]
    pub data: PathBuf,
    /// Checkpoint directory to write (replaced atomically).
    #[arg(long)]
    pub out: PathBuf,
    /// Model size preset: tiny, small or base.
    #[arg(long, default_value = "small")]
    pub size: String,
    /// Observation mode: state (privileged object state) or rgbd (cameras).
    #[arg(long, default_value = "state")]
    pub obs: String,
    /// auto, cpu, cuda or cuda:N.
    #[arg(long, default_value = "auto")]
    pub device: String,
    #[arg(long, default_value_t = 2000)]
    pub steps: usize,
    #[arg(long, default_value_t = 256)]
    pub batch_size: usize,
    #[arg(long, default_value_t = 1e-3)]
    pub lr: f64,
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Episodes of older skills mixed into every batch to limit forgetting.
    #[arg(long)]
    pub replay: Option<PathBuf>,
    /// Fraction of each batch drawn from --replay.
    #[arg(long, default_value_t = 0.25)]
    pub replay_fraction: f64,
    /// Built-in robot name or URDF path (default: the robot named in the episode files).
    #[arg(long)]
    pub robot: Option<String>,
    /// libtorch threads (default: all cores).
    #[arg(long)]
    pub threads: Option<usize>,
    /// Print the training report as one JSON object.
    #[arg(long)]
    pub json: bool,
}

fn threads(arg: Option<usize>) -> anyhow::Result<usize> {
    match arg {
        Some(0) => anyhow::bail!("--threads must be at least 1"),
        Some(n) => Ok(n),
        None => Ok(std::thread::available_parallelism().map_or(1, usize::from)),
    }
}

fn load_episodes(
    dir: &PathBuf,
    robot_arg: Option<&str>,
) -> anyhow::Result<(Vec<sim::Episode>, sim::SimConfig, String)> {
    let scan = read_dir(dir).with_context(|| format!("reading episodes from {}", dir.display()))?;
    for skipped in &scan.skipped {
        eprintln!(
            "warning: skipped {}: {}",
            skipped.path.display(),
            skipped.problem
        );
    }
    let Some(first) = scan.files.first() else {
        anyhow::bail!("{}: no readable episode files", dir.display());
    };
    let sim = first.header.sim_config.clone();
    let robot = robot_arg
        .map(str::to_owned)
        .or_else(|| first.header.robot_name.clone())
        .unwrap_or_else(|| "ur5e".to_owned());
    let episodes = scan.files.into_iter().flat_map(|f| f.episodes).collect();
    Ok((episodes, sim, robot))
}

fn progress_bar(len: u64) -> ProgressBar {
    let bar = ProgressBar::new(len);
    bar.set_style(
        ProgressStyle::with_template("{bar:30} {pos}/{len} {msg} [{elapsed_precise}]")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    bar
}

pub fn train(args: &TrainArgs) -> anyhow::Result<()> {
    let threads = threads(args.threads)?;
    tch::set_num_threads(threads as i32);
    let device = parse_device(&args.device)?;
    let obs = ObsMode::parse(&args.obs)?;
    let model = ModelConfig::preset(&args.size, obs)?;
    let (episodes, sim, robot_name) = load_episodes(&args.data, args.robot.as_deref())?;
    let robot = Arc::new(
        robots::load_manipulator_for_sim(&robot_name, None)
            .with_context(|| format!("loading robot `{robot_name}`"))?,
    );
    let sim = Arc::new(sim);
    let (mut policy, data) =
        policy::train::policy_for_episodes(&episodes, &robot, &sim, &model, device, args.seed)
            .with_context(|| format!("building the dataset from {}", args.data.display()))?;
    let replay = match &args.replay {
        Some(dir) => {
            let (older, _, _) = load_episodes(dir, Some(&robot_name))?;
            let mut raw = policy::dataset::RawSamples::default();
            for e in &older {
                raw.push_episode(e, &policy.featurizer, &robot, &sim)?;
            }
            Some(policy::dataset::Dataset::new(
                &raw,
                &policy.featurizer,
                &policy.normalizer,
            )?)
        }
        None => None,
    };
    let cfg = BcConfig {
        optim: OptimConfig {
            steps: args.steps,
            batch_size: args.batch_size,
            lr: args.lr,
            seed: args.seed,
            warmup_steps: (args.steps / 20).clamp(1, 200),
            ..OptimConfig::default()
        },
        replay_fraction: args.replay_fraction,
        ..BcConfig::default()
    };
    let bar = progress_bar(args.steps as u64);
    if args.json {
        bar.set_draw_target(indicatif::ProgressDrawTarget::hidden());
    }
    bar.println(format!(
        "training {} {:?} policy ({} parameters) on {} samples from {} episodes, device {}",
        args.size,
        obs,
        policy.parameter_count(),
        data.len,
        episodes.len(),
        device_name(device)
    ));
    let report = train_bc(&mut policy, &data, replay.as_ref(), &cfg, &mut |p| {
        bar.set_position(p.step as u64);
        bar.set_message(format!(
            "loss {:.3} (nll {:.3}, value {:.3}) {:.0} samples/s",
            p.loss, p.nll, p.value_loss, p.samples_per_sec
        ));
    })?;
    bar.finish();
    policy.meta.training = serde_json::json!({
        "kind": "bc",
        "data": args.data.display().to_string(),
        "episodes": episodes.len(),
        "samples": data.len,
        "config": cfg,
        "report": report,
    });
    checkpoint::save(&policy, &args.out)?;
    if args.json {
        println!("{}", serde_json::to_string(&report)?);
    } else {
        println!(
            "{} steps, final loss {:.3}, {:.0} samples/s; checkpoint {}",
            report.steps,
            report.final_loss,
            report.samples_per_sec,
            args.out.display()
        );
    }
    Ok(())
}

#[derive(Debug, Args)]
pub struct EvalArgs {
    /// Checkpoint directory.
    #[arg(long)]
    pub policy: PathBuf,
    /// Built-in robot name or URDF path (default: the policy's robot).
    #[arg(long)]
    pub robot: Option<String>,
    /// Skill whose default task family is evaluated.
    #[arg(long)]
    pub task: String,
    #[arg(long, default_value_t = 100)]
    pub episodes: usize,
    /// Seed of the evaluation variants (keep it away from the training seeds: held out).
    #[arg(long, default_value_t = 1000)]
    pub seed: u64,
    #[arg(long, default_value = "cpu")]
    pub device: String,
    #[arg(long)]
    pub threads: Option<usize>,
    #[arg(long)]
    pub json: bool,
    /// Also write the evaluation's episodes to this store directory (`coevolve replay` them).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// The rollouts on a farm's workers (a state policy's; the same results).
    #[command(flatten)]
    pub farm: super::farm_cmd::FarmFlags,
}

fn robot_for(
    policy: &policy::Policy,
    arg: Option<&str>,
) -> anyhow::Result<Arc<robots::Manipulator>> {
    let name = arg.unwrap_or(&policy.meta.robot_name);
    Ok(Arc::new(
        robots::load_manipulator_for_sim(name, None)
            .with_context(|| format!("loading robot `{name}`"))?,
    ))
}

pub fn eval(args: &EvalArgs) -> anyhow::Result<()> {
    let threads = threads(args.threads)?;
    let device = parse_device(&args.device)?;
    let skill = SkillKind::parse(&args.task)?;
    let policy = checkpoint::load(&args.policy, device)?;
    let robot = robot_for(&policy, args.robot.as_deref())?;
    let farm = super::farm_link::connect(&args.farm, robot.model.load_name())?;
    let executor = farm
        .as_ref()
        .map(|f| f.rollouts.as_ref() as &dyn policy::executor::RolloutExecutor);
    let (report, episodes) = evaluate_episodes(
        &policy,
        &robot,
        skill,
        args.episodes,
        args.seed,
        threads,
        executor,
    )?;
    if let Some(farm) = &farm {
        eprintln!("{}", farm.summary());
    }
    if let Some(dir) = &args.out {
        let config = policy::rollout::sim_config_for(&policy);
        let mut writer = sim::store::EpisodeWriter::new(dir, "policy".to_owned(), &config)?
            .with_robot_name(robot.model.load_name());
        for chunk in episodes.chunks(64) {
            writer.write_batch(chunk)?;
        }
    }
    if args.json {
        println!("{}", serde_json::to_string(&report)?);
    } else {
        println!(
            "{}: {}/{} successful ({:.1}%), mean return {:.2}, mean {:.0} steps, {:.1} s",
            report.skill,
            report.successes,
            report.episodes,
            100.0 * report.success_rate,
            report.mean_return,
            report.mean_steps,
            report.wall_s
        );
    }
    Ok(())
}

#[derive(Debug, Args)]
pub struct GrpoArgs {
    /// Checkpoint to improve.
    #[arg(long)]
    pub policy: PathBuf,
    /// Checkpoint directory to write.
    #[arg(long)]
    pub out: PathBuf,
    /// Skill whose default task family is trained on.
    #[arg(long)]
    pub task: String,
    #[arg(long, default_value_t = 8)]
    pub iterations: usize,
    /// Task variants per iteration.
    #[arg(long, default_value_t = 16)]
    pub groups: usize,
    /// Rollouts per task variant.
    #[arg(long, default_value_t = 8)]
    pub group_size: usize,
    #[arg(long, default_value_t = 1e-4)]
    pub lr: f64,
    #[arg(long, default_value_t = 0.02)]
    pub kl_beta: f64,
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    #[arg(long)]
    pub robot: Option<String>,
    #[arg(long, default_value = "cpu")]
    pub device: String,
    #[arg(long)]
    pub threads: Option<usize>,
    #[arg(long)]
    pub json: bool,
}

pub fn grpo(args: &GrpoArgs) -> anyhow::Result<()> {
    let threads = threads(args.threads)?;
    let device = parse_device(&args.device)?;
    let skill = SkillKind::parse(&args.task)?;
    let mut policy = checkpoint::load(&args.policy, device)?;
    let robot = robot_for(&policy, args.robot.as_deref())?;
    let cfg = GrpoConfig {
        iterations: args.iterations,
        groups: args.groups,
        group_size: args.group_size,
        lr: args.lr,
        kl_beta: args.kl_beta,
        seed: args.seed,
        threads,
        ..GrpoConfig::default()
    };
    let bar = progress_bar(args.iterations as u64);
    if args.json {
        bar.set_draw_target(indicatif::ProgressDrawTarget::hidden());
    }
    let history = train_grpo(&mut policy, &robot, skill, &cfg, &mut |it| {
        bar.set_position(it.iteration as u64 + 1);
        bar.println(format!(
            "iteration {}: sampled success {:.2}, return {:.3}, {} samples, kl {:.4}, clipped {:.2}, {:.1} s",
            it.iteration, it.sampled_success_rate, it.mean_return, it.samples, it.kl, it.clip_fraction, it.wall_s
        ));
    })?;
    bar.finish();
    let previous = std::mem::take(&mut policy.meta.training);
    policy.meta.training = serde_json::json!({
        "kind": "grpo",
        "skill": skill.name(),
        "config": cfg,
        "history": history,
        "previous": previous,
    });
    checkpoint::save(&policy, &args.out)?;
    if args.json {
        println!("{}", serde_json::to_string(&history)?);
    } else {
        println!("checkpoint {}", args.out.display());
    }
    Ok(())
}
