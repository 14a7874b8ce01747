//! The RL phase of a generation (`grpo` in `EvolveConfig`, off by default): after behaviour
//! cloning, GRPO on grouped sampled rollouts of each frontier skill (a group per task variant,
//! the variants the curriculum's choice: `curriculum::grpo_variants`), with a k3 KL penalty to
//! the behaviour-cloned policy and a trust region on it (`max_kl`: GRPO stops once an
//! iteration's KL exceeds it). The decision that follows guards mastered skills as for any
//! candidate (retention, rollback).

use policy::grpo::{train_grpo_on, GrpoConfig};
use policy::Policy;
use serde::{Deserialize, Serialize};

use super::curriculum::{grpo_variants, stream_seed};
use super::frontier::Work;
use super::state::{GenerationRecord, RunState};
use super::{Context, Event};
use crate::error::Result;

/// GRPO in the loop.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct LoopGrpo {
    /// Iterations per frontier skill and generation.
    pub iterations: usize,
    /// Variants (groups) per iteration and rollouts per variant.
    pub groups: usize,
    pub group_size: usize,
    pub lr: f64,
    pub kl_beta: f64,
    /// Trust region: stop once an iteration's mean KL to the BC policy exceeds this.
    pub max_kl: f64,
    /// Exploration temperature on the learned standard deviation.
    pub temperature: f64,
    /// Only while the policy's sampled exploration success on the skill is in this range:
    /// below it, groups are all failures (no advantage to learn from); above it, BC suffices.
    pub sampled_success: (f64, f64),
}

impl Default for LoopGrpo {
    fn default() -> Self {
        LoopGrpo {
            iterations: 2,
            groups: 16,
            group_size: 8,
            lr: 3e-5,
            kl_beta: 0.02,
            max_kl: 0.2,
            temperature: 1.0,
            sampled_success: (0.05, 0.9),
        }
    }
}

/// What GRPO did for one skill in one generation.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct GrpoFigures {
    pub skill: String,
    pub iterations: usize,
    pub rollouts: usize,
    /// Sampled success of the first and last iteration's rollouts.
    pub sampled_success: (f64, f64),
    /// KL to the behaviour-cloned policy after the last iteration.
    pub kl: f64,
    /// Groups over the iterations, and those whose sampled success was all 0 or all 1 (no
    /// gradient from success).
    #[serde(default)]
    pub groups: usize,
    #[serde(default)]
    pub uniform_groups: usize,
    pub wall_s: f64,
}

/// Runs GRPO on `policy` (the generation's trained candidate) for every frontier skill whose
/// exploration success this generation is in the configured range; returns the figures.
pub fn grpo_phase(
    ctx: &Context,
    state: &RunState,
    policy: &mut Policy,
    work: &Work<'_>,
    record: &GenerationRecord,
    events: &mut dyn FnMut(Event<'_>),
) -> Result<Vec<GrpoFigures>> {
    let Some(cfg) = &ctx.cfg.grpo else {
        return Ok(Vec::new());
    };
    let g = record.generation;
    let mut out = Vec::new();
    for &(si, skill) in &work.frontier {
        let (Some(st), Some(explored)) = (
            state.skills.get(skill.name()),
            record.skills.get(skill.name()),
        ) else {
            continue;
        };
        let rate = explored.policy_sampled_success.unwrap_or(0.0);
        if st.mastered() || rate < cfg.sampled_success.0 || rate > cfg.sampled_success.1 {
            continue;
        }
        events(Event::Phase {
            generation: g,
            skill: skill.name(),
            phase: "grpo",
        });
        let seed = stream_seed(ctx.cfg.seed, g, si, 9);
        let variants = |iteration: usize| {
            let chosen = grpo_variants(
                skill,
                st,
                &ctx.cfg,
                cfg.groups,
                sim::episode::episode_seed(seed, iteration),
            );
            chosen.into_iter().map(|v| (v.task, v.seed)).unzip()
        };
        let grpo = GrpoConfig {
            iterations: cfg.iterations,
            groups: cfg.groups,
            group_size: cfg.group_size,
            temperature: cfg.temperature,
            kl_beta: cfg.kl_beta,
            lr: cfg.lr,
            seed,
            threads: ctx.cfg.threads,
            max_kl: Some(cfg.max_kl),
            ..GrpoConfig::default()
        };
        let history = train_grpo_on(policy, &ctx.robot, &variants, &grpo, &mut |_| {})?;
        let (Some(first), Some(last)) = (history.first(), history.last()) else {
            continue;
        };
        out.push(GrpoFigures {
            skill: skill.name().to_owned(),
            iterations: history.len(),
            rollouts: history.iter().map(|h| h.rollouts).sum(),
            sampled_success: (first.sampled_success_rate, last.sampled_success_rate),
            kl: last.kl,
            groups: history.iter().map(|h| h.groups).sum(),
            uniform_groups: history.iter().map(|h| h.uniform_groups).sum(),
            wall_s: history.iter().map(|h| h.wall_s).sum(),
        });
    }
    Ok(out)
}
