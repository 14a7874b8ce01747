//! The co-evolution loop (`coevolve evolve`): generations of explore → refine → train →
//! evaluate → unlock over a skill tree, persisted in a run directory so that a run killed at
//! any moment resumes from its last completed generation.

pub mod accept;
pub mod bank;
pub mod config;
pub mod curriculum;
pub mod decide;
pub mod evaluate;
pub mod explore;
pub mod frontier;
pub mod generation;
pub mod handoff;
pub mod hard_tail;
pub mod hindsight;
pub mod learner;
pub mod level_replay;
pub mod live;
pub mod pool;
pub mod reference;
pub mod relabel;
pub mod rl;
pub mod run_dir;
pub mod simplify;
pub mod state;
pub mod synthesis;

use std::collections::BTreeSet;
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use policy::executor::RolloutExecutor;
use policy::tokenizer::Tokenizer;
use policy::{ModelConfig, Policy};
use rand_chacha::ChaCha8Rng;
use robots::Manipulator;
use sim::task::TaskSpec;
use sim::{Episode, SimConfig};
use tch::Device;

pub use config::{Curriculum, EvolveConfig, SynthConfig};
pub use run_dir::RunDir;
pub use state::{GenerationRecord, RunState};

use crate::error::{Result, SkillsError};
use crate::explorer;
use crate::plan_jobs::{PlanExecutor, PlanJob};
use crate::tree::SkillTree;

/// Everything a generation reads.
#[derive(Debug)]
pub struct Context {
    pub cfg: EvolveConfig,
    pub tree: SkillTree,
    pub robot: Arc<Manipulator>,
    /// Simulator settings of exploration and training (no cameras: state observations).
    pub sim: Arc<SimConfig>,
    pub model: ModelConfig,
    pub tokenizer: Tokenizer,
    pub device: Device,
    pub dir: RunDir,
    /// The skills this run works on: the targets and their prerequisites.
    pub closure: BTreeSet<String>,
    /// Where policy rollouts run when not here (a simulation farm); `None`: this machine.
    pub executor: Option<Arc<dyn RolloutExecutor>>,
    /// Where plan episodes (search candidates, plan probes) run when not here.
    pub plan_executor: Option<Arc<dyn PlanExecutor>>,
}

impl Context {
    /// Where the loop's policy rollouts run.
    pub fn runs(&self) -> learner::Runs<'_> {
        learner::Runs {
            threads: self.cfg.threads,
            executor: self.executor.as_deref(),
        }
    }

    /// `plans[i]` on `tasks(i, rng)` for every i, seeded as a batch seeded `batch_seed`
    /// ([`explorer::run_plans`]), here or on the plan executor.
    pub fn run_plans(
        &self,
        plans: &[Vec<f64>],
        tasks: &(dyn Fn(usize, &mut ChaCha8Rng) -> TaskSpec + Sync),
        segment_s: f64,
        batch_seed: u64,
    ) -> Result<Vec<Episode>> {
        match &self.plan_executor {
            Some(executor) if !plans.is_empty() => {
                let robot = (self.cfg.robot.as_str(), self.robot.as_ref());
                let job = PlanJob::of(robot, &self.sim, segment_s, plans, tasks, batch_seed);
                executor.run(&job).map_err(|e| SkillsError::run("farm", e))
            }
            _ => Ok(explorer::run_plans(
                plans,
                tasks,
                &self.robot,
                &self.sim,
                segment_s,
                batch_seed,
                Some(self.cfg.threads),
            )?),
        }
    }
}

/// Progress of a run, for progress bars and logs.
#[derive(Debug)]
pub enum Event<'a> {
    Resumed {
        completed: usize,
        discarded: usize,
    },
    Phase {
        generation: usize,
        skill: &'a str,
        phase: &'a str,
    },
    Generation(&'a GenerationRecord),
}

/// The targets and, transitively, their prerequisites (all skills when `targets` is empty).
pub fn closure(tree: &SkillTree, targets: &[String]) -> Result<BTreeSet<String>> {
    if targets.is_empty() {
        return Ok(tree.skills.iter().map(|s| s.name().to_owned()).collect());
    }
    let mut out = BTreeSet::new();
    let mut todo: Vec<String> = targets.to_vec();
    while let Some(name) = todo.pop() {
        let skill = tree.get(&name).ok_or_else(|| {
            SkillsError::run(
                "targets",
                format!(
                    "unknown skill `{name}` in tree `{}` (known: {})",
                    tree.name,
                    tree.skills
                        .iter()
                        .map(|s| s.name().to_owned())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            )
        })?;
        if out.insert(name) {
            todo.extend(skill.def.prerequisites.iter().cloned());
        }
    }
    Ok(out)
}

/// Opens (or, with `resume`, reopens) a run directory and builds the context.
pub fn prepare(dir: &Path, cfg: EvolveConfig, resume: bool) -> Result<Context> {
    let dir = RunDir::new(dir);
    // A run killed before its first commit has a `config.json` and no `state.json`: resuming
    // it starts over with the configuration it was started with.
    let cfg = if resume && (dir.exists() || dir.config_path().is_file()) {
        let saved = dir.read_config()?;
        EvolveConfig {
            generations: cfg.generations.max(saved.generations),
            episode_budget: cfg.episode_budget.or(saved.episode_budget),
            ..saved
        }
    } else {
        if dir.exists() {
            return Err(SkillsError::run(
                &dir.root,
                "already holds a run (use --resume to continue it, or another --out)",
            ));
        }
        cfg.validate()?;
        cfg
    };
    let robot = Arc::new(
        robots::load_manipulator_for_sim(&cfg.robot, None)
            .map_err(|e| SkillsError::run("robot", e.to_string()))?,
    );
    let tree = SkillTree::named(&cfg.tree)?
        .with_families(&cfg.families)?
        .for_robot(&robot);
    let closure = closure(&tree, &cfg.targets)?;
    let mut sim = SimConfig::default();
    sim.cameras.clear();
    let model = learner::model_config(&cfg.model_size)?;
    let device = policy::device::parse_device(&cfg.device)?;
    let tokenizer = learner::tokenizer_for(&tree);
    Ok(Context {
        cfg,
        tree,
        robot,
        sim: Arc::new(sim),
        model,
        tokenizer,
        device,
        dir,
        closure,
        executor: None,
        plan_executor: None,
    })
}

/// Runs (or continues) the loop to `ctx.cfg.generations`; returns the final state.
pub fn run(ctx: &Context, events: &mut dyn FnMut(Event<'_>)) -> Result<RunState> {
    tch::set_num_threads(ctx.cfg.threads as i32);
    let (mut state, mut records, mut policy) = if ctx.dir.exists() {
        let state = ctx.dir.read_state()?;
        let discarded = ctx.dir.discard_uncommitted(state.completed_generations)?;
        let records = ctx.dir.read_metrics(state.completed_generations)?;
        let policy = match &state.checkpoint {
            Some(rel) => Some(policy::checkpoint::load(
                &ctx.dir.root.join(rel),
                ctx.device,
            )?),
            None => None,
        };
        events(Event::Resumed {
            completed: state.completed_generations,
            discarded,
        });
        (state, records, policy)
    } else {
        ctx.dir.write_config(&ctx.cfg)?;
        let state = RunState::new(ctx.closure.iter().cloned());
        // Nothing of a previous attempt that never committed its first generation survives.
        ctx.dir.discard_uncommitted(0)?;
        ctx.dir.commit(&state)?;
        (state, Vec::new(), None::<Policy>)
    };
    for g in state.completed_generations..ctx.cfg.generations {
        if g > 0 && generation::is_last_generation(ctx, &state, g - 1) {
            break;
        }
        let start = Instant::now();
        let (next, record) = generation::run_generation(ctx, &mut state, policy, g, events)?;
        policy = next;
        records.push(record);
        ctx.dir.write_metrics(&records)?;
        state.completed_generations = g + 1;
        state.wall_s += start.elapsed().as_secs_f64();
        ctx.dir.commit(&state)?;
        if let Some(r) = records.last() {
            events(Event::Generation(r));
        }
        crate::report::write_reports(&ctx.dir.root)?;
    }
    Ok(state)
}
