//! Deciding on a generation's trained policy: held-out evaluation of every learned skill, the
//! faults that roll a generation back (a skill more than `rollback_tolerance` below its best;
//! with retention on, also a mastered skill below its mastery threshold with confidence), and
//! retention by weight blending: before rolling back, blends of the trained weights with the
//! previous ones (`Policy::blended_with`, WiSE-FT) are evaluated in turn, and the first without
//! a fault is kept. Learning a new skill then moves the policy only as far as the skills it already
//! masters allow.

use std::collections::BTreeMap;

use policy::Policy;
use serde::{Deserialize, Serialize};

use super::config::EvolveConfig;
use super::evaluate::{heldout_sequential, wilson_interval};
use super::state::RunState;
use super::Context;
use crate::error::Result;
use crate::tree::SkillTree;

/// What the blends did in a generation whose trained policy had a fault.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Retention {
    /// Skill → held-out success of the trained policy.
    pub trained: BTreeMap<String, f64>,
    /// Skills at fault under the trained policy.
    pub faults: Vec<String>,
    /// Each blend evaluated, in order: its weight on the trained policy (`alpha`) and skill →
    /// held-out success.
    pub blends: Vec<(f64, BTreeMap<String, f64>)>,
    /// The blend kept; None: every blend had a fault too (the generation rolls back).
    pub kept: Option<f64>,
}

/// The policy a generation decided on and why.
#[derive(Debug)]
pub struct Decision {
    /// The trained policy, or the blend kept.
    pub policy: Policy,
    /// Skill → (successes, episodes) of `policy` on its held-out variants.
    pub rates: BTreeMap<String, (usize, usize)>,
    /// Skills at fault under `policy`: non-empty means roll back.
    pub faults: Vec<String>,
    /// Present when the trained policy had a fault and blends were tried.
    pub retention: Option<Retention>,
}

/// Held-out success rate from (successes, episodes); 0 for a skill not evaluated.
pub fn rate_of(rates: &BTreeMap<String, (usize, usize)>, name: &str) -> f64 {
    rates
        .get(name)
        .map_or(0.0, |(s, n)| *s as f64 / (*n).max(1) as f64)
}

fn fractions(rates: &BTreeMap<String, (usize, usize)>) -> BTreeMap<String, f64> {
    rates
        .keys()
        .map(|name| (name.clone(), rate_of(rates, name)))
        .collect()
}

/// The rates `name`'s held-out success is compared with by `faults` and by mastery: its
/// mastery threshold (unless mastered with retention off) and, once trained, its best minus
/// the rollback tolerance. The sequential evaluation runs until none is in doubt.
pub fn thresholds(cfg: &EvolveConfig, tree: &SkillTree, state: &RunState, name: &str) -> Vec<f64> {
    let Some(skill) = tree.get(name) else {
        return Vec::new();
    };
    let st = state.skills.get(name);
    let mut out = Vec::new();
    if !st.is_some_and(|s| s.mastered()) || !cfg.retention_blends.is_empty() {
        out.push(skill.def.mastery);
    }
    if let Some(st) = st.filter(|s| s.trained) {
        let floor = st.best_heldout - cfg.rollback_tolerance;
        if floor > 0.0 {
            out.push(floor);
        }
    }
    out
}

/// Held-out results of `policy` on every skill in `learned` (tree order).
fn evaluate(
    ctx: &Context,
    state: &RunState,
    policy: &Policy,
    learned: &[String],
) -> Result<BTreeMap<String, (usize, usize)>> {
    let mut rates = BTreeMap::new();
    for skill in ctx
        .tree
        .skills
        .iter()
        .filter(|s| learned.iter().any(|l| l == s.name()))
    {
        let at = thresholds(&ctx.cfg, &ctx.tree, state, skill.name());
        let result = heldout_sequential(ctx, policy, skill, &at)?;
        rates.insert(skill.name().to_owned(), result);
    }
    Ok(rates)
}

/// `name`'s held-out success is below `threshold` with confidence: the upper end of its Wilson
/// interval at `z` is under it (z 0: the rate itself is).
fn surely_below(
    rates: &BTreeMap<String, (usize, usize)>,
    name: &str,
    z: f64,
    threshold: f64,
) -> bool {
    let (ok, n) = rates.get(name).copied().unwrap_or((0, 0));
    if n == 0 {
        return threshold > 0.0;
    }
    let upper = if z > 0.0 {
        wilson_interval(ok, n, z).1
    } else {
        ok as f64 / n as f64
    };
    upper < threshold
}

/// Skills at fault under the held-out `rates`: trained skills more than the rollback tolerance
/// below their best and, with retention on, mastered skills below their mastery threshold with
/// confidence (`EvolveConfig::forget_z`).
pub fn faults(
    cfg: &EvolveConfig,
    tree: &SkillTree,
    state: &RunState,
    rates: &BTreeMap<String, (usize, usize)>,
) -> Vec<String> {
    let retain = !cfg.retention_blends.is_empty();
    state
        .skills
        .iter()
        .filter(|(name, st)| {
            let r = rate_of(rates, name);
            let regressed = st.trained && st.best_heldout - r > cfg.rollback_tolerance;
            let forgotten = retain
                && st.mastered()
                && tree
                    .get(name)
                    .is_some_and(|s| surely_below(rates, name, cfg.forget_z, s.def.mastery));
            regressed || forgotten
        })
        .map(|(name, _)| name.clone())
        .collect()
}

/// Evaluates `trained` on the `learned` skills and, if a skill is at fault and there is a
/// `previous` policy, the configured blends of the two, in order; returns the first without a
/// fault, else the trained policy with its faults.
pub fn decide(
    ctx: &Context,
    state: &RunState,
    previous: Option<&Policy>,
    trained: Policy,
    learned: &[String],
) -> Result<Decision> {
    let rates = evaluate(ctx, state, &trained, learned)?;
    let at_fault = faults(&ctx.cfg, &ctx.tree, state, &rates);
    let previous = match previous {
        Some(p) if !at_fault.is_empty() && !ctx.cfg.retention_blends.is_empty() => p,
        _ => {
            return Ok(Decision {
                policy: trained,
                rates,
                faults: at_fault,
                retention: None,
            })
        }
    };
    let mut retention = Retention {
        trained: fractions(&rates),
        faults: at_fault.clone(),
        ..Retention::default()
    };
    for &alpha in &ctx.cfg.retention_blends {
        let blend = trained.blended_with(previous, alpha)?;
        let blend_rates = evaluate(ctx, state, &blend, learned)?;
        retention.blends.push((alpha, fractions(&blend_rates)));
        if faults(&ctx.cfg, &ctx.tree, state, &blend_rates).is_empty() {
            retention.kept = Some(alpha);
            return Ok(Decision {
                policy: blend,
                rates: blend_rates,
                faults: Vec::new(),
                retention: Some(retention),
            });
        }
    }
    Ok(Decision {
        policy: trained,
        rates,
        faults: at_fault,
        retention: Some(retention),
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::evolve::state::SkillState;

    fn state() -> RunState {
        let mut state = RunState::new(["lift".to_owned(), "place".to_owned()]);
        let lift = state.skills.get_mut("lift").unwrap();
        *lift = SkillState {
            best_heldout: 0.84,
            mastered_at: Some(5),
            trained: true,
            ..SkillState::default()
        };
        let place = state.skills.get_mut("place").unwrap();
        *place = SkillState {
            best_heldout: 0.3,
            trained: true,
            ..SkillState::default()
        };
        state
    }

    fn rates(lift: usize, place: usize) -> BTreeMap<String, (usize, usize)> {
        [
            ("lift".to_owned(), (lift, 32)),
            ("place".to_owned(), (place, 32)),
        ]
        .into()
    }

    #[test]
    fn a_mastered_skill_below_its_threshold_is_a_fault_only_with_retention_on() {
        let tree = SkillTree::default_tree().unwrap();
        let mut cfg = EvolveConfig::default();
        assert!(!cfg.retention_blends.is_empty());
        let state = state();
        // Lift 21/32 = 0.66: under its 0.8 threshold with confidence (the Wilson interval's
        // upper end at 1.28 is 0.75), though only 0.18 below its best.
        assert_eq!(faults(&cfg, &tree, &state, &rates(21, 8)), ["lift"]);
        // 24/32 = 0.75 is under the threshold, but not surely (upper end 0.83): no fault.
        assert!(faults(&cfg, &tree, &state, &rates(24, 8)).is_empty());
        assert!(faults(&cfg, &tree, &state, &rates(26, 8)).is_empty());
        // On 128 episodes, 97 (0.758) is not surely under 0.8, 96 (0.75) is.
        let lift_of = |ok| -> BTreeMap<String, (usize, usize)> {
            [
                ("lift".to_owned(), (ok, 128)),
                ("place".to_owned(), (8, 32)),
            ]
            .into()
        };
        assert!(faults(&cfg, &tree, &state, &lift_of(97)).is_empty());
        assert_eq!(faults(&cfg, &tree, &state, &lift_of(96)), ["lift"]);
        // forget_z 0: the rate itself under the threshold is a fault.
        cfg.forget_z = 0.0;
        assert_eq!(faults(&cfg, &tree, &state, &rates(24, 8)), ["lift"]);
        assert!(faults(&cfg, &tree, &state, &rates(26, 8)).is_empty());
        // Place 2/32 after 0.3: more than the 0.2 tolerance below its best.
        assert_eq!(faults(&cfg, &tree, &state, &rates(26, 2)), ["place"]);
        // The sequential evaluation settles lift's threshold and its best minus the tolerance.
        assert_eq!(thresholds(&cfg, &tree, &state, "lift"), [0.8, 0.84 - 0.2]);
        assert_eq!(thresholds(&cfg, &tree, &state, "place"), [0.8, 0.3 - 0.2]);
        cfg.retention_blends.clear();
        assert!(faults(&cfg, &tree, &state, &rates(24, 8)).is_empty());
        assert_eq!(thresholds(&cfg, &tree, &state, "lift"), [0.84 - 0.2]);
        assert_eq!(
            faults(&cfg, &tree, &state, &rates(20, 2)),
            ["lift", "place"]
        );
    }
}
