//! Acting on a generation's decision (`evolve::decide`): roll back (the previous weights stay;
//! the skills at fault are marked for fresh demonstrations) or accept (held-out figures, best
//! rates, mastery, the checkpoint); then the plateau rule (no held-out gain for a while →
//! synthesis doubles for that skill). A rolled-back generation's trained policy is kept under
//! `rejected/gen-NNN/` for replay, never continued from.

use policy::Policy;

use super::decide::{rate_of, Decision};
use super::evaluate::Evaluations;
use super::frontier::Work;
use super::run_dir::generation_name;
use super::state::{GenerationRecord, RunState};
use super::Context;
use crate::error::Result;

/// Applies `decision` to the run; returns the policy to continue with and the evaluations.
pub fn apply(
    ctx: &Context,
    state: &mut RunState,
    record: &mut GenerationRecord,
    previous: Option<Policy>,
    decision: Decision,
    g: usize,
) -> Result<(Option<Policy>, Evaluations)> {
    let rolled_back = !decision.faults.is_empty();
    let evaluations = Evaluations {
        generation: g,
        rolled_back,
        skills: decision.rates,
    };
    record.rolled_back = rolled_back;
    record.retention = decision.retention;
    for (name, figures) in &mut record.skills {
        if let Some((_, n)) = evaluations.skills.get(name) {
            figures.heldout_success = Some(rate_of(&evaluations.skills, name));
            figures.heldout_episodes = Some(*n);
        }
    }
    if rolled_back {
        state.rollbacks += 1;
        for name in &decision.faults {
            if let Some(st) = state.skills.get_mut(name) {
                st.regressed = true;
            }
        }
        policy::checkpoint::save(&decision.policy, &ctx.dir.rejected(g))?;
        return Ok((previous, evaluations));
    }
    state
        .skills
        .values_mut()
        .for_each(|st| st.regressed = false);
    for name in evaluations.skills.keys() {
        let (Some(skill), Some(st)) = (ctx.tree.get(name), state.skills.get_mut(name)) else {
            continue;
        };
        let r = rate_of(&evaluations.skills, name);
        st.trained = true;
        st.heldout.push((g, r));
        if r > st.best_heldout || st.heldout.len() == 1 {
            if r > st.best_heldout + 1e-9 {
                st.synth_multiplier = 1;
            }
            st.best_heldout = st.best_heldout.max(r);
            st.best_generation = g;
        }
        if r >= skill.def.mastery && st.mastered_at.is_none() {
            st.mastered_at = Some(g);
        }
    }
    policy::checkpoint::save(&decision.policy, &ctx.dir.checkpoint(g))?;
    state.checkpoint = Some(format!("checkpoints/{}", generation_name(g)));
    Ok((Some(decision.policy), evaluations))
}

/// Frontier skills without a held-out gain for `plateau_generations`: synthesis doubles.
pub fn plateau(ctx: &Context, state: &mut RunState, work: &Work<'_>, g: usize) {
    for &(_, skill) in &work.frontier {
        if let Some(st) = state.skills.get_mut(skill.name()) {
            if st.stalled(g, ctx.cfg.plateau_generations) {
                st.synth_multiplier = (st.synth_multiplier * 2).min(8);
            }
        }
    }
}
