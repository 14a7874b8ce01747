//! `coevolve evolve` (the main job: the co-evolution loop over a skill tree, resumable) and
//! `coevolve report` (skill-tree progress reports of a run directory).

use std::path::PathBuf;
use std::time::Instant;

use anyhow::Context as _;
use clap::Args;
use skills::evolve::{self, Curriculum, Event, EvolveConfig};

#[derive(Debug, Args)]
pub struct EvolveArgs {
    /// `default` (the shipped tree) or a skill-tree TOML file.
    #[arg(long, default_value = "default")]
    pub tree: String,
    #[arg(long, default_value = "ur5e")]
    pub robot: String,
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
    /// whole tree. Default: place (reach → grasp → lift → place).
    #[arg(long)]
    pub targets: Option<String>,
    #[arg(long, default_value = "auto")]
    pub device: String,
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Physics and libtorch threads.
    #[arg(long, default_value_t = 2)]
    pub threads: usize,
    /// `coevolve` (signals + synthesis) or `uniform` (fresh draws only; the ablation baseline).
    #[arg(long, default_value = "coevolve")]
    pub curriculum: String,
    /// Train on raw successes (the no-refinement ablation).
    #[arg(long)]
    pub no_refine: bool,
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
    }
    cfg.device.clone_from(&args.device);
    cfg.seed = args.seed;
    cfg.threads = args.threads;
    cfg.curriculum = Curriculum::parse(&args.curriculum)?;
    cfg.refine = !args.no_refine;
    cfg.model_size.clone_from(&args.size);
    cfg.validate()?;
    Ok(cfg)
}

pub fn evolve(args: &EvolveArgs) -> anyhow::Result<()> {
    let cfg = config(args)?;
    if args.print_config {
        println!("{}", serde_json::to_string_pretty(&cfg)?);
        return Ok(());
    }
    let ctx = evolve::prepare(&args.out, cfg, args.resume)?;
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
            println!("{}", serde_json::to_string(r).unwrap_or_default());
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
    /// Run directories to compare.
    #[arg(required = true)]
    pub runs: Vec<PathBuf>,
    /// Write ablation.md, ablation.svg and ablation.json here.
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Compare each run as it stood after the first generation that reached this many
    /// simulated episodes (what `evolve --episode-budget` leaves; runs are deterministic).
    #[arg(long)]
    pub episode_budget: Option<usize>,
}

pub fn compare(args: &CompareArgs) -> anyhow::Result<()> {
    let runs: Vec<&std::path::Path> = args.runs.iter().map(PathBuf::as_path).collect();
    let (summaries, md, svg) = skills::report::compare::compare(&runs, args.episode_budget)?;
    println!("{md}");
    if let Some(out) = &args.out {
        std::fs::create_dir_all(out).with_context(|| format!("cannot create {}", out.display()))?;
        std::fs::write(out.join("ablation.md"), &md)?;
        std::fs::write(out.join("ablation.svg"), &svg)?;
        std::fs::write(
            out.join("ablation.json"),
            serde_json::to_string_pretty(&summaries)?,
        )?;
        eprintln!("wrote {}/ablation.{{md,svg,json}}", out.display());
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
