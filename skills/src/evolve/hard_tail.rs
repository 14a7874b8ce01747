//! The hard tail of a skill's task family: how the policy does on the variants it finds
//! hardest, the part of the family where a curriculum should matter most.
//!
//! Reporting the worst variants' success on the very rollouts that selected them would be
//! biased low: the selection picks unlucky rollouts as well as hard variants. Selection and
//! score therefore use independent rollouts. `variants` variants are drawn from the task
//! family (a part of the held-out seed's stream disjoint from the held-out and fresh sets, so
//! no decision has seen them), each run `attempts` times with the sampled policy; the `share`
//! with the lowest success (ties: the lower mean return) are selected; the score is their
//! success in `attempts` new sampled rollouts each. Run in a run's last generation, on every
//! skill the policy was trained on; not counted in the run's episode budget.

use policy::rollout::PolicyRollout;
use policy::Policy;
use serde::{Deserialize, Serialize};

use super::evaluate::variants_at;
use super::learner::run_policy;
use super::Context;
use crate::error::Result;
use crate::tree::Skill;

/// Episode indices of the hard-tail variants start here in the held-out seed's stream.
const HARD_TAIL_INDEX_OFFSET: usize = 2 << 32;
/// The score's rollouts use attempt indices from here on (independent of the selection's).
const SCORE_ATTEMPT_OFFSET: usize = 1 << 16;

/// Settings of the hard-tail evaluation.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct HardTailConfig {
    pub variants: usize,
    pub attempts: usize,
    /// Share of the variants selected as the tail (0.1: the worst 10 %).
    pub share: f64,
}

impl Default for HardTailConfig {
    fn default() -> Self {
        HardTailConfig {
            variants: 256,
            attempts: 4,
            share: 0.1,
        }
    }
}

/// What the hard-tail evaluation measured.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct HardTailFigures {
    pub variants: usize,
    pub attempts: usize,
    pub selected: usize,
    /// Sampled success over every variant, in the selection rollouts.
    pub overall_success: f64,
    /// The selected variants' success in the selection rollouts (biased low).
    pub selection_success: f64,
    /// The selected variants' success in the independent rollouts: the hard-tail score.
    pub success: f64,
}

/// (success rate, mean return) of each consecutive group of `attempts` rollouts.
fn per_variant(runs: &[PolicyRollout], attempts: usize) -> Vec<(f64, f64)> {
    runs.chunks(attempts)
        .map(|c| {
            let n = c.len().max(1) as f64;
            let ok = c.iter().filter(|r| r.episode.outcome.success).count() as f64;
            let ret: f64 = c.iter().map(|r| r.episode.outcome.episode_return).sum();
            (ok / n, ret / n)
        })
        .collect()
}

/// Indices of the `k` worst variants: lowest success, then lowest mean return, then index.
pub fn worst(scores: &[(f64, f64)], k: usize) -> Vec<usize> {
    let mut order: Vec<usize> = (0..scores.len()).collect();
    order.sort_by(|a, b| {
        let (sa, sb) = (scores[*a], scores[*b]);
        sa.0.total_cmp(&sb.0).then(sa.1.total_cmp(&sb.1))
    });
    order.truncate(k);
    order
}

fn mean(values: impl Iterator<Item = f64>) -> f64 {
    let (sum, n) = values.fold((0.0, 0usize), |(s, n), v| (s + v, n + 1));
    sum / n.max(1) as f64
}

/// The hard-tail evaluation of `policy` on `skill`.
pub fn hard_tail(
    ctx: &Context,
    policy: &Policy,
    skill: &Skill,
    cfg: &HardTailConfig,
) -> Result<HardTailFigures> {
    let attempts = cfg.attempts.max(1);
    let start = HARD_TAIL_INDEX_OFFSET;
    let (tasks, seeds) = variants_at(skill, start..start + cfg.variants);
    let run = |offset: usize, picked: &[usize]| {
        let mut t = Vec::new();
        let mut s = Vec::new();
        for &i in picked {
            for k in 0..attempts {
                t.push(tasks[i].clone());
                s.push(sim::episode::episode_seed(seeds[i], offset + k));
            }
        }
        let temperature = Some(ctx.cfg.temperature);
        run_policy(policy, &ctx.robot, &t, &s, temperature, None, ctx.runs())
    };
    let all: Vec<usize> = (0..tasks.len()).collect();
    let selection = per_variant(&run(0, &all)?, attempts);
    let k = ((cfg.variants as f64 * cfg.share).round() as usize).clamp(1, cfg.variants.max(1));
    let picked = worst(&selection, k);
    let scored = per_variant(&run(SCORE_ATTEMPT_OFFSET, &picked)?, attempts);
    Ok(HardTailFigures {
        variants: tasks.len(),
        attempts,
        selected: picked.len(),
        overall_success: mean(selection.iter().map(|s| s.0)),
        selection_success: mean(picked.iter().map(|i| selection[*i].0)),
        success: mean(scored.iter().map(|s| s.0)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_worst_are_the_least_successful_then_the_lowest_return() {
        let scores = [(0.5, 1.0), (0.0, 3.0), (0.0, 2.0), (1.0, 0.0), (0.25, 9.0)];
        assert_eq!(worst(&scores, 3), vec![2, 1, 4]);
        assert_eq!(worst(&scores, 9).len(), 5);
    }
}
