//! The train phase of a generation: the pool (every learned skill's newest golden episodes and
//! failed rollouts) and behaviour cloning on it, warm-started from the current policy
//! (`learner::train_generation`).

use policy::Policy;

use super::curriculum::stream_seed;
use super::learner::{train_generation, SkillData, TrainSpec};
use super::state::{RunState, TrainFigures};
use super::{Context, Event};
use crate::error::Result;

/// What training is given: each learned skill's data (tree order), and the steps it gets.
#[derive(Debug, Default)]
pub struct Pool {
    pub data: Vec<SkillData>,
    /// The skills with data: the ones the trained policy is evaluated on.
    pub learned: Vec<String>,
    /// Training steps: the sum of the budgets of the skills still being learned.
    pub steps: usize,
    /// Failed rollouts in the pool (success-head negatives).
    pub failures: usize,
    /// Expert-relabelled episodes in the pool.
    pub relabelled: usize,
}

impl Pool {
    /// Some skill is being learned (or relearned): the generation trains.
    pub fn has_frontier(&self) -> bool {
        self.data.iter().any(|d| d.frontier)
    }
}

fn newest<T>(mut episodes: Vec<T>, max: usize) -> Vec<T> {
    let excess = episodes.len().saturating_sub(max);
    episodes.drain(..excess);
    episodes
}

/// The pool after generation `g`'s banking.
pub fn gather(ctx: &Context, state: &RunState, g: usize) -> Result<Pool> {
    let cfg = &ctx.cfg;
    let mut pool = Pool::default();
    for skill in ctx
        .tree
        .skills
        .iter()
        .filter(|s| ctx.closure.contains(s.name()))
    {
        let Some(st) = state.skills.get(skill.name()) else {
            continue;
        };
        if st.golden == 0 {
            continue;
        }
        let mut data = newest(
            ctx.dir.read_golden(skill.name(), g + 1)?,
            cfg.max_golden_per_skill,
        );
        if st.failures > 0 {
            let negatives = newest(
                ctx.dir.read_failures(skill.name(), g + 1)?,
                cfg.max_failures_per_skill,
            );
            pool.failures += negatives.len();
            data.extend(negatives);
        }
        let mut imitate_from = vec![0; data.len()];
        if st.relabelled > 0 {
            let relabelled = newest(
                ctx.dir.read_relabelled(skill.name(), g + 1)?,
                cfg.max_relabelled_per_skill,
            );
            pool.relabelled += relabelled.len();
            for (episode, at) in relabelled {
                data.push(episode);
                imitate_from.push(at);
            }
        }
        pool.learned.push(skill.name().to_owned());
        if !st.mastered() {
            pool.steps += skill.def.budget.train_steps;
        }
        pool.data.push(SkillData {
            skill: skill.name().to_owned(),
            episodes: data,
            imitate_from,
            frontier: !st.mastered() || st.regressed,
        });
    }
    Ok(pool)
}

/// Behaviour cloning on `pool` from `previous`; None when no skill is being learned.
pub fn train(
    ctx: &Context,
    previous: Option<&Policy>,
    pool: &Pool,
    g: usize,
    events: &mut dyn FnMut(Event<'_>),
) -> Result<Option<(Policy, TrainFigures)>> {
    if !pool.has_frontier() {
        return Ok(None);
    }
    events(Event::Phase {
        generation: g,
        skill: "",
        phase: "train",
    });
    let cfg = &ctx.cfg;
    let spec = TrainSpec {
        model: &ctx.model,
        tokenizer: &ctx.tokenizer,
        robot: &ctx.robot,
        sim: &ctx.sim,
        device: ctx.device,
        steps: pool.steps,
        batch_size: cfg.batch_size,
        lr: cfg.lr,
        replay_fraction: cfg.replay_fraction,
        frontier_weight: cfg.frontier_weight,
        train_passes: cfg.train_passes,
        ema_decay: cfg.ema_decay,
        seed: stream_seed(cfg.seed, g, 0, 6),
    };
    let (policy, mut figures) = train_generation(previous, &pool.data, &spec)?;
    figures.failures = pool.failures;
    Ok(Some((policy, figures)))
}
