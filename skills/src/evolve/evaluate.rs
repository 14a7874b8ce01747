//! Held-out evaluation that decisions can rest on.
//!
//! Every mastery, rollback and retention decision compares a skill's held-out success with a
//! threshold (its mastery threshold, or its best minus the rollback tolerance). On 32 episodes
//! a skill whose true rate is 0.75 passes a 0.8 threshold 28 % of the time; on 128, 9 %. The
//! evaluation is therefore sequential: the skill's fixed held-out variants are run in stages of
//! `heldout_stage` episodes, and after each stage the Wilson score interval of the success
//! rate is computed; evaluation stops as soon as no threshold the decision needs lies inside
//! the interval, or when every held-out variant of the skill has run. The decision is then the
//! point estimate at that size: as reliable as the full set (0.75 passes 9 % of the time, 0.85
//! fails 7 %), at a fraction of the episodes for a skill far from its thresholds
//! (docs/decisions.md has the figures).
//!
//! Fresh variants (`fresh_variants`) are a second, disjoint set per skill that no decision of
//! the loop ever sees: the figure a mastered skill is reported with besides its held-out one.

use std::collections::BTreeMap;

use policy::Policy;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};
use sim::task::TaskSpec;

use super::learner::run_policy;
use super::state::RunState;
use super::{Context, Event};
use crate::error::Result;
use crate::tree::Skill;

/// Held-out results of one generation (`evaluations/gen-NNN.json`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Evaluations {
    pub generation: usize,
    pub rolled_back: bool,
    /// skill → (successes, episodes) of the candidate decided on: the trained policy, or the
    /// blend of it with the previous one that was kept (`evolve::decide`).
    pub skills: BTreeMap<String, (usize, usize)>,
}

/// Episode indices of the fresh variants start here in the held-out seed's stream, so the two
/// sets never share a variant.
const FRESH_INDEX_OFFSET: usize = 1 << 32;

/// The Wilson score interval of `successes` out of `episodes` at `z` standard deviations.
pub fn wilson_interval(successes: usize, episodes: usize, z: f64) -> (f64, f64) {
    if episodes == 0 {
        return (0.0, 1.0);
    }
    let n = episodes as f64;
    let p = successes as f64 / n;
    let z2 = z * z;
    let denom = 1.0 + z2 / n;
    let centre = (p + z2 / (2.0 * n)) / denom;
    let half = z * (p * (1.0 - p) / n + z2 / (4.0 * n * n)).sqrt() / denom;
    ((centre - half).max(0.0), (centre + half).min(1.0))
}

/// No threshold lies strictly inside the interval: every comparison with them is settled.
pub fn settled(successes: usize, episodes: usize, z: f64, thresholds: &[f64]) -> bool {
    let (lo, hi) = wilson_interval(successes, episodes, z);
    thresholds.iter().all(|t| !(lo < *t && *t < hi))
}

fn variants(
    skill: &Skill,
    seed: u64,
    indices: std::ops::Range<usize>,
) -> (Vec<TaskSpec>, Vec<u64>) {
    let seeds: Vec<u64> = indices
        .map(|i| sim::episode::episode_seed(seed, i))
        .collect();
    let tasks = seeds
        .iter()
        .map(|s| skill.sample_task(&mut ChaCha8Rng::seed_from_u64(*s)))
        .collect();
    (tasks, seeds)
}

/// `skill`'s variants at `indices` of its held-out seed's stream, and their seeds.
pub fn variants_at(skill: &Skill, indices: std::ops::Range<usize>) -> (Vec<TaskSpec>, Vec<u64>) {
    variants(skill, skill.def.heldout.seed, indices)
}

/// `skill`'s fixed held-out evaluation variants and their seeds (all of them).
pub fn heldout_variants(skill: &Skill) -> (Vec<TaskSpec>, Vec<u64>) {
    let h = &skill.def.heldout;
    variants(skill, h.seed, 0..h.episodes)
}

/// `n` fresh variants of `skill`: drawn from its task family like the held-out ones, from a
/// disjoint part of the same seed stream; no decision of the loop is taken on them.
pub fn fresh_variants(skill: &Skill, n: usize) -> (Vec<TaskSpec>, Vec<u64>) {
    let seed = skill.def.heldout.seed;
    variants(skill, seed, FRESH_INDEX_OFFSET..FRESH_INDEX_OFFSET + n)
}

/// (successes, episodes) of `policy`, greedy, on the given variants.
fn successes(ctx: &Context, policy: &Policy, tasks: &[TaskSpec], seeds: &[u64]) -> Result<usize> {
    let runs = run_policy(policy, &ctx.robot, tasks, seeds, None, None, ctx.runs())?;
    Ok(runs.iter().filter(|r| r.episode.outcome.success).count())
}

/// Held-out success of `policy` on all of `skill`'s fixed evaluation variants.
pub fn heldout(ctx: &Context, policy: &Policy, skill: &Skill) -> Result<(usize, usize)> {
    let (tasks, seeds) = heldout_variants(skill);
    Ok((successes(ctx, policy, &tasks, &seeds)?, tasks.len()))
}

/// Held-out success of `policy` on `skill`, evaluated in stages of `ctx.cfg.heldout_stage`
/// variants until no threshold lies inside the Wilson interval (`ctx.cfg.heldout_z`) or the
/// held-out set is used up. A stage of 0 runs the whole set at once.
pub fn heldout_sequential(
    ctx: &Context,
    policy: &Policy,
    skill: &Skill,
    thresholds: &[f64],
) -> Result<(usize, usize)> {
    let (tasks, seeds) = heldout_variants(skill);
    let stage = match ctx.cfg.heldout_stage {
        0 => tasks.len(),
        s => s,
    };
    let (mut ok, mut n) = (0, 0);
    while n < tasks.len() {
        let end = (n + stage).min(tasks.len());
        ok += successes(ctx, policy, &tasks[n..end], &seeds[n..end])?;
        n = end;
        if settled(ok, n, ctx.cfg.heldout_z, thresholds) {
            break;
        }
    }
    Ok((ok, n))
}

/// Success of `policy` on `ctx.cfg.fresh_episodes` fresh variants of `skill`.
pub fn fresh(ctx: &Context, policy: &Policy, skill: &Skill) -> Result<(usize, usize)> {
    let (tasks, seeds) = fresh_variants(skill, ctx.cfg.fresh_episodes);
    Ok((successes(ctx, policy, &tasks, &seeds)?, tasks.len()))
}

/// The fresh phase: mastered skills on fresh variants, those mastered in generation `g` and,
/// in the run's `last` generation, every mastered one. Returns skill → (successes, episodes).
pub fn fresh_phase(
    ctx: &Context,
    state: &RunState,
    policy: Option<&Policy>,
    g: usize,
    last: bool,
    events: &mut dyn FnMut(Event<'_>),
) -> Result<BTreeMap<String, (usize, usize)>> {
    let mut out = BTreeMap::new();
    let Some(policy) = policy.filter(|_| ctx.cfg.fresh_episodes > 0) else {
        return Ok(out);
    };
    for skill in &ctx.tree.skills {
        let Some(st) = state.skills.get(skill.name()) else {
            continue;
        };
        if !(st.mastered_at == Some(g) || (last && st.mastered())) {
            continue;
        }
        events(Event::Phase {
            generation: g,
            skill: skill.name(),
            phase: "fresh",
        });
        out.insert(skill.name().to_owned(), fresh(ctx, policy, skill)?);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wilson_interval_matches_hand_computed_values() {
        // 26/32 at z = 1.96: p = 0.8125, centre 0.7790, half-width 0.1321.
        let (lo, hi) = wilson_interval(26, 32, 1.96);
        assert!((lo - 0.6469).abs() < 1e-3, "{lo}");
        assert!((hi - 0.9111).abs() < 1e-3, "{hi}");
        assert_eq!(wilson_interval(0, 0, 1.96), (0.0, 1.0));
        let (lo, hi) = wilson_interval(32, 32, 1.96);
        assert!(lo > 0.89 && (hi - 1.0).abs() < 1e-12);
    }

    #[test]
    fn a_rate_near_its_threshold_is_not_settled_and_a_far_one_is() {
        assert!(!settled(26, 32, 1.96, &[0.8]));
        assert!(settled(4, 32, 1.96, &[0.8]));
        assert!(
            settled(32, 32, 1.96, &[0.8]),
            "interval [0.89, 1] excludes 0.8"
        );
        assert!(settled(31, 32, 1.96, &[0.8]), "interval [0.84, 0.99]");
        assert!(!settled(30, 32, 1.96, &[0.8]), "interval [0.799, 0.98]");
        assert!(
            settled(26, 32, 1.96, &[]),
            "no threshold: nothing to settle"
        );
        assert!(
            !settled(120, 128, 1.96, &[0.8, 0.9]),
            "0.9 inside [0.88, 0.97]"
        );
    }

    #[test]
    fn fresh_variants_share_no_seed_with_the_heldout_ones() {
        let tree = crate::tree::SkillTree::default_tree().unwrap_or_else(|e| panic!("{e}"));
        let skill = tree.get("lift").unwrap_or_else(|| panic!("lift"));
        let (_, heldout) = heldout_variants(skill);
        let (tasks, fresh) = fresh_variants(skill, 64);
        assert_eq!(tasks.len(), 64);
        assert!(fresh.iter().all(|s| !heldout.contains(s)));
    }
}
