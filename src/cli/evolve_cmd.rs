//! `coevolve evolve` (the main job: the co-evolution loop over a skill tree, resumable) and
//! `coevolve report` (skill-tree progress reports of a run directory).

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use anyhow::Context as _;
use clap::Args;
use policy::executor::RolloutExecutor;
use skills::evolve::live::{LiveTarget, LiveView};
use skills::evolve::{self, Curriculum, Event, EvolveConfig};
use skills::plan_jobs::PlanExecutor;

use super::farm_cmd;
use super::farm_link::{self, FarmLink};

#[derive(Debug, Args)]
pub struct EvolveArgs {
    /// `default` (the shipped tree) or a skill-tree TOML file.
    #[arg(long, default_value = "default")]
    pub tree: String,
    #[arg(long, default_value = "ur5e")]
    pub robot: String,
    /// Task families: `easy` (cubes of 4.5–5.5 cm in a small patch) or `wide` (cubes, boxes
    /// and cylinders of 3–7 cm, 0.05–1 kg, anywhere on the table, a distractor, the arm
    /// started away from home) [default: easy, or the config's].
    #[arg(long)]
    pub families: Option<String>,
    /// The run directory (config, checkpoints, golden data, metrics, reports).
    #[arg(long, default_value = "runs/default")]
    pub out: PathBuf,
    /// Generations to run (with --resume: the total to reach).
    #[arg(long)]
    pub generations: Option<usize>,
    /// Stop once this many episodes have been simulated (equal budgets for comparisons).
    #[arg(long)]
    pub episode_budget: Option<usize>,
    /// Skills to work towards (comma-separated; their prerequisites come along). `all`: the
    /// whole tree; `tabletop` or `kitchen`: that group of the tree. Default: lift (reach →
    /// grasp → lift).
    #[arg(long)]
    pub targets: Option<String>,
    #[arg(long, default_value = "auto")]
    pub device: String,
    /// Policy rollouts (exploration, evaluation, synthesis) and plan episodes (the search's
    /// candidates, plan probes) on a farm's workers.
    #[command(flatten)]
    pub farm: farm_cmd::FarmFlags,
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Run once per seed (`0,1,2`, `0-4`) into `<out>/seed-<S>`, then summarise the seeds in
    /// `<out>/seeds.md` and `seeds.json` (mastered in k of n, held-out and fresh-variant mean /
    /// min / IQM, generation and episodes at mastery).
    #[arg(long)]
    pub seeds: Option<String>,
    /// Physics and libtorch threads.
    #[arg(long, default_value_t = 2)]
    pub threads: usize,
    /// `coevolve` (signals + synthesis), `uniform` (fresh draws only), `sfl` (Sampling For
    /// Learnability) or `plr` (robust Prioritized Level Replay): the curriculum arms.
    #[arg(long, default_value = "coevolve")]
    pub curriculum: String,
    /// Train on raw successes (the no-refinement ablation).
    #[arg(long)]
    pub no_refine: bool,
    /// GRPO after behaviour cloning on the frontier skills, with its default settings (the
    /// `grpo` object of `--config` sets them).
    #[arg(long)]
    pub grpo: bool,
    /// Expert relabelling: this many takeover episodes per skill and generation in which the
    /// searched plan answers the states the greedy policy led to (64 is a good start).
    #[arg(long)]
    pub relabel: Option<usize>,
    /// A mastered skill is forgotten (a fault) when its held-out rate is below its mastery
    /// threshold with this confidence, in standard deviations [1.28]; 0: the rate itself.
    #[arg(long)]
    pub forget_z: Option<f64>,
    /// A frontier skill without a held-out gain for two generations gets a fresh network
    /// trained this many steps (at most five step budgets) instead of a warm start [0: off;
    /// 3000 mastered place on seed 0].
    #[arg(long)]
    pub fresh_start: Option<usize>,
    /// The hard-tail evaluation in the run's last generation on this many variants per
    /// trained skill (4 sampled rollouts each; the worst 10 % rescored independently).
    #[arg(long)]
    pub hard_tail: Option<usize>,
    /// Model size: tiny, small or base.
    #[arg(long, default_value = "small")]
    pub size: String,
    /// Continue the run in --out from its last completed generation (its saved settings win).
    #[arg(long)]
    pub resume: bool,
    /// A JSON file with the full `EvolveConfig` (flags given explicitly still apply on top).
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// Print the effective configuration as JSON and exit.
    #[arg(long)]
    pub print_config: bool,
    /// A live view in rerun after every generation: `save FILE` (.rrd), `spawn` (a viewer
    /// from PATH) or `connect [URL]` (a running viewer; default rerun+http://127.0.0.1:9876/proxy).
    #[arg(long, num_args = 1..=2, value_names = ["MODE", "ARG"])]
    pub rerun: Option<Vec<String>>,
}

#[derive(Debug, Args)]
pub struct ReportArgs {
    /// The run directory.
    pub run: PathBuf,
    /// Print report.json to stdout as well.
    #[arg(long)]
    pub json: bool,
}

fn config(args: &EvolveArgs) -> anyhow::Result<EvolveConfig> {
    let mut cfg = match &args.config {
        Some(path) => {
            let text = std::fs::read_to_string(path)
                .with_context(|| format!("cannot read {}", path.display()))?;
            serde_json::from_str(&text)
                .with_context(|| format!("{}: not a valid evolve configuration", path.display()))?
        }
        None => EvolveConfig::default(),
    };
    cfg.tree.clone_from(&args.tree);
    cfg.robot.clone_from(&args.robot);
    if let Some(families) = &args.families {
        cfg.families.clone_from(families);
    }
    if let Some(g) = args.generations {
        cfg.generations = g;
    }
    if args.episode_budget.is_some() {
        cfg.episode_budget = args.episode_budget;
    }
    if let Some(t) = &args.targets {
        cfg.targets = match t.as_str() {
            "all" => Vec::new(),
            t => t.split(',').map(|s| s.trim().to_owned()).collect(),
        };
        let tree = skills::SkillTree::named(&cfg.tree)?;
        cfg.targets = tree.expand_groups(&cfg.targets);
    }
    cfg.device.clone_from(&args.device);
    cfg.seed = args.seed;
    cfg.threads = args.threads;
    cfg.curriculum = Curriculum::parse(&args.curriculum)?;
    cfg.refine = !args.no_refine;
    if let Some(runs) = args.relabel {
        cfg.relabel_runs = runs;
    }
    if args.grpo && cfg.grpo.is_none() {
        cfg.grpo = Some(skills::evolve::rl::LoopGrpo::default());
    }
    if let Some(z) = args.forget_z {
        cfg.forget_z = z;
    }
    if let Some(steps) = args.fresh_start {
        cfg.fresh_start_steps = steps;
    }
    if let Some(variants) = args.hard_tail {
        cfg.hard_tail = Some(skills::evolve::hard_tail::HardTailConfig {
            variants,
            ..cfg.hard_tail.clone().unwrap_or_default()
        });
    }
    cfg.model_size.clone_from(&args.size);
    cfg.validate()?;
    Ok(cfg)
}

/// `0,1,2` or `0-4` (inclusive), or a mix: `0-2,7`.
fn parse_seeds(text: &str) -> anyhow::Result<Vec<u64>> {
    let mut seeds = Vec::new();
    for part in text.split(',').map(str::trim) {
        let bad = || anyhow::anyhow!("--seeds: `{part}` is not a seed or a range `A-B`");
        match part.split_once('-') {
            Some((a, b)) => {
                let (a, b): (u64, u64) =
                    (a.parse().map_err(|_| bad())?, b.parse().map_err(|_| bad())?);
                anyhow::ensure!(a <= b, "--seeds: range `{part}` is empty");
                seeds.extend(a..=b);
            }
            None => seeds.push(part.parse().map_err(|_| bad())?),
        }
    }
    Ok(seeds)
}

pub fn evolve(args: &EvolveArgs) -> anyhow::Result<()> {
    let cfg = config(args)?;
    let live = args
        .rerun
        .as_deref()
        .map(LiveTarget::parse)
        .transpose()
        .map_err(anyhow::Error::msg)?;
    if live.is_some() && args.seeds.is_some() {
        anyhow::bail!("--rerun streams one run: use it without --seeds");
    }
    if args.print_config {
        println!("{}", serde_json::to_string_pretty(&cfg)?);
        return Ok(());
    }
    let farm = farm_link::connect(&args.farm, &cfg.robot)?;
    let Some(seeds) = &args.seeds else {
        return evolve_one(cfg, &args.out, args.resume, live.as_ref(), farm.as_ref());
    };
    let seeds = parse_seeds(seeds)?;
    let mut runs = Vec::new();
    for seed in seeds {
        let out = args.out.join(format!("seed-{seed}"));
        eprintln!("evolve: seed {seed} → {}", out.display());
        evolve_one(
            EvolveConfig {
                seed,
                ..cfg.clone()
            },
            &out,
            args.resume,
            None,
            farm.as_ref(),
        )?;
        runs.push(out);
    }
    let name = args.out.file_name().map_or_else(
        || args.out.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    );
    let arm = skills::report::seeds::Arm { name, runs };
    let (summary, _) = skills::report::seeds::summarise_arm(&arm)?;
    let md = skills::report::seeds::markdown(std::slice::from_ref(&summary));
    std::fs::write(args.out.join("seeds.md"), &md)?;
    std::fs::write(
        args.out.join("seeds.json"),
        serde_json::to_string_pretty(&summary)?,
    )?;
    eprintln!("{md}wrote {}/seeds.{{md,json}}", args.out.display());
    Ok(())
}

fn evolve_one(
    cfg: EvolveConfig,
    out: &std::path::Path,
    resume: bool,
    live: Option<&LiveTarget>,
    farm: Option<&FarmLink>,
) -> anyhow::Result<()> {
    let mut ctx = evolve::prepare(out, cfg, resume)?;
    if let Some(farm) = farm {
        ctx.executor = Some(farm.rollouts.clone() as Arc<dyn RolloutExecutor>);
        ctx.plan_executor = Some(farm.plans.clone() as Arc<dyn PlanExecutor>);
    }
    let live = live.map(LiveView::open).transpose()?;
    let mut live_error = None;
    let start = Instant::now();
    let elapsed = move || start.elapsed().as_secs_f64();
    eprintln!(
        "evolve: tree `{}`, skills {}, {} generations, robot {}, device {}, run {}",
        ctx.tree.name,
        ctx.closure.iter().cloned().collect::<Vec<_>>().join(" "),
        ctx.cfg.generations,
        ctx.cfg.robot,
        policy::device::device_name(ctx.device),
        ctx.dir.root.display()
    );
    let state = evolve::run(&ctx, &mut |event| {
        match event {
        Event::Resumed {
            completed,
            discarded,
        } => eprintln!(
            "[{:>6.1}s] resumed after generation {completed} ({discarded} uncommitted leftovers removed)",
            elapsed(),
        ),
        Event::Phase {
            generation,
            skill,
            phase,
        } => eprintln!("[{:>6.1}s] gen {generation} {phase} {skill}", elapsed()),
        Event::Generation(r) => {
            let heldout: Vec<String> = r
                .skills
                .iter()
                .filter_map(|(n, s)| s.heldout_success.map(|h| format!("{n} {:.0}%", 100.0 * h)))
                .collect();
            eprintln!(
                "[{:>6.1}s] gen {} done in {:.0} s: held-out {} ({}); mastered [{}]; {} episodes so far",
                elapsed(),
                r.generation,
                r.wall_s,
                heldout.join(", "),
                r.outcome(),
                r.mastered.join(", "),
                r.episodes_simulated
            );
            if let Some(farm) = farm {
                eprintln!("[{:>6.1}s] {}", elapsed(), farm.summary());
            }
            println!("{}", serde_json::to_string(r).unwrap_or_default());
            // The loop goes on if the viewer goes away; the first problem is reported.
            if let Some(Err(e)) = live.as_ref().map(|v| v.log_generation(&ctx, r)) {
                if live_error.is_none() {
                    eprintln!("warning: {e}");
                    live_error = Some(e);
                }
            }
        }
    }
    })?;
    eprintln!(
        "evolve: {} generations, mastered [{}], report {}",
        state.completed_generations,
        state.mastered().into_iter().collect::<Vec<_>>().join(", "),
        ctx.dir.root.join("report.html").display()
    );
    Ok(())
}

#[derive(Debug, Args)]
pub struct CompareArgs {
    /// Arms to compare, each a run directory, a directory of seed runs (what `evolve --seeds`
    /// writes), or `NAME=RUN,RUN,…`.
    #[arg(required = true)]
    pub arms: Vec<String>,
    /// Write ablation.md, ablation.svg (curves), profiles.svg and ablation.json here.
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Compare each run as it stood after the first generation that reached this many
    /// simulated episodes (what `evolve --episode-budget` leaves; runs are deterministic).
    #[arg(long, conflicts_with = "update_budget")]
    pub episode_budget: Option<usize>,
    /// Compare each run as it stood after the first generation whose behaviour-cloning steps
    /// reached this many in total (equal training updates).
    #[arg(long)]
    pub update_budget: Option<usize>,
}

pub fn compare(args: &CompareArgs) -> anyhow::Result<()> {
    let arms = args
        .arms
        .iter()
        .map(|a| skills::report::seeds::arm(a))
        .collect::<Result<Vec<_>, _>>()?;
    use skills::report::compare::Budget;
    let budget = match (args.episode_budget, args.update_budget) {
        (Some(n), _) => Some(Budget::Episodes(n)),
        (None, Some(n)) => Some(Budget::Updates(n)),
        (None, None) => None,
    };
    let compared = skills::report::compare::compare(&arms, budget)?;
    println!("{}", compared.markdown);
    if let Some(out) = &args.out {
        std::fs::create_dir_all(out).with_context(|| format!("cannot create {}", out.display()))?;
        std::fs::write(out.join("ablation.md"), &compared.markdown)?;
        std::fs::write(out.join("ablation.svg"), &compared.curves_svg)?;
        std::fs::write(out.join("profiles.svg"), &compared.profile_svg)?;
        std::fs::write(
            out.join("ablation.json"),
            serde_json::to_string_pretty(&compared.comparison)?,
        )?;
        eprintln!(
            "wrote {}/ablation.{{md,svg,json}} and profiles.svg",
            out.display()
        );
    }
    Ok(())
}

pub fn report(args: &ReportArgs) -> anyhow::Result<()> {
    let report = skills::report::write_reports(&args.run)?;
    if args.json {
        println!("{}", serde_json::to_string(&report)?);
    }
    eprintln!(
        "wrote {}, report.md and report.json",
        args.run.join("report.html").display()
    );
    Ok(())
}
