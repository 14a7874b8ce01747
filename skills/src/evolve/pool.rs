//! The train phase of a generation: the pool (every learned skill's newest golden episodes and
//! failed rollouts) and behaviour cloning on it, warm-started from the current policy
//! (`learner::train_generation`), or a fresh network when a frontier skill has stopped gaining.

use policy::Policy;

use super::config::EvolveConfig;
use super::curriculum::stream_seed;
use super::learner::{train_generation, SkillData, TrainSpec};
use super::state::{RunState, SkillState, TrainFigures};
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
    /// Train a fresh network, not a warm start: a frontier skill is on a plateau
    /// (`EvolveConfig::fresh_start_steps`).
    pub fresh: bool,
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

/// A fresh network trains at most this many times the generation's step budget.
pub const FRESH_MAX_BUDGETS: usize = 5;

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
        pool.fresh |= plateaued(cfg, state, st, g);
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
    let (previous, steps) = match pool.fresh {
        true => (
            None,
            cfg.fresh_start_steps
                .min(FRESH_MAX_BUDGETS * pool.steps)
                .max(pool.steps),
        ),
        false => (previous, pool.steps),
    };
    let spec = TrainSpec {
        model: &ctx.model,
        tokenizer: &ctx.tokenizer,
        robot: &ctx.robot,
        sim: &ctx.sim,
        device: ctx.device,
        steps,
        batch_size: cfg.batch_size,
        lr: cfg.lr,
        replay_fraction: cfg.replay_fraction,
        frontier_weight: cfg.frontier_weight,
        train_passes: cfg.train_passes,
        passes_over_pool: pool.fresh,
        ema_decay: cfg.ema_decay,
        seed: stream_seed(cfg.seed, g, 0, 6),
    };
    let (policy, mut figures) = train_generation(previous, &pool.data, &spec)?;
    figures.failures = pool.failures;
    Ok(Some((policy, figures)))
}

/// `st` has trained without a held-out gain for `plateau_generations`, and no fresh start was
/// tried in that window.
fn plateaued(cfg: &EvolveConfig, state: &RunState, st: &SkillState, g: usize) -> bool {
    let window = cfg.plateau_generations;
    cfg.fresh_start_steps > 0
        && st.stalled(g, window)
        && state.fresh_at.is_none_or(|f| g > f + window)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn a_plateau_trains_fresh_once_per_window() {
        let cfg = EvolveConfig {
            fresh_start_steps: 3000,
            ..EvolveConfig::default()
        };
        assert_eq!(cfg.plateau_generations, 2);
        let mut state = RunState::new(["place".to_owned()]);
        let st = SkillState {
            best_generation: 11,
            trained: true,
            ..SkillState::default()
        };
        // Generations 12 and 13 after the best at 11: 13 is the plateau.
        assert!(!plateaued(&cfg, &state, &st, 12));
        assert!(plateaued(&cfg, &state, &st, 13));
        // A fresh start at 13: not again until the window has passed.
        state.fresh_at = Some(13);
        assert!(!plateaued(&cfg, &state, &st, 14));
        assert!(!plateaued(&cfg, &state, &st, 15));
        assert!(plateaued(&cfg, &state, &st, 16));
        // Untrained skills and `fresh_start_steps` 0 never.
        let untrained = SkillState {
            trained: false,
            ..st.clone()
        };
        assert!(!plateaued(&cfg, &state, &untrained, 20));
        let off = EvolveConfig {
            fresh_start_steps: 0,
            ..cfg
        };
        assert!(!plateaued(&off, &state, &st, 20));
    }
}
