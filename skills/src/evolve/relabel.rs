//! Expert relabelling of the policy's own states (after DAgger): the policy runs greedily — as
//! it is evaluated and deployed — on the generation's variants, and at a takeover step the
//! skill's searched plan (the expert, which sees privileged state) takes over from wherever the
//! policy has got to, anchored on where the objects are then. A success is an episode whose
//! first part is the policy's own (not imitated) and whose rest is the expert's answer to the
//! states the policy led to; its steps from the takeover on are imitated
//! (`RawSamples::push_episode_from`). Takeover steps are spread over the time the plan leaves
//! (two per variant, at a third and two thirds of it), so early and late mistakes are both
//! answered.

use policy::Policy;
use serde::{Deserialize, Serialize};
use sim::Episode;

use super::handoff::{run_handoffs, HandoffRun, Takeover};
use super::state::{SkillState, TrackedVariant};
use super::Context;
use crate::error::Result;
use crate::explorer::{plan_keyframes, PlanLayout};

/// Takeover steps per variant.
const TAKEOVERS: usize = 2;

/// What relabelling did for one skill in one generation.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct RelabelFigures {
    pub runs: usize,
    /// Runs in which the expert took over (the policy had not already ended the episode).
    pub taken_over: usize,
    pub successes: usize,
}

/// Relabelled successes, each with its first expert step.
#[derive(Debug, Default)]
pub struct Relabelled {
    pub episodes: Vec<(Episode, usize)>,
    pub figures: RelabelFigures,
    pub control_steps: usize,
}

/// Runs `ctx.cfg.relabel_runs` takeover episodes of `policy` and `st`'s searched plan on
/// `variants`; None when relabelling is off, the skill has no trained policy or no plan yet.
pub fn relabel(
    ctx: &Context,
    seed: u64,
    st: &SkillState,
    policy: Option<&Policy>,
    variants: &[TrackedVariant],
) -> Result<Option<Relabelled>> {
    let n = ctx.cfg.relabel_runs;
    // The expert takes over with a gripper plan (`evolve::handoff`); tool plans are not relabelled.
    let gripper_plan = st
        .search
        .as_ref()
        .filter(|d| d.layout == PlanLayout::Gripper);
    let (Some(policy), Some(search)) = (policy.filter(|_| n > 0 && st.trained), gripper_plan)
    else {
        return Ok(None);
    };
    if variants.is_empty() {
        return Ok(None);
    }
    let dt_s = ctx.sim.control_dt_s();
    let segment_s = ctx.cfg.cem.segment_s;
    let plan_steps = plan_keyframes(&search.mean) * ((segment_s / dt_s).round() as usize).max(1);
    let runs: Vec<HandoffRun> = (0..n)
        .filter_map(|i| {
            let v = &variants[(i / TAKEOVERS) % variants.len()];
            let max_steps = (v.task.max_duration_s / dt_s).ceil() as usize;
            let slack = max_steps.checked_sub(plan_steps)?;
            let at = slack * (i % TAKEOVERS + 1) / (TAKEOVERS + 1);
            (at > 0).then(|| HandoffRun {
                task: v.task.clone(),
                view: v.task.clone(),
                seed: sim::episode::episode_seed(seed, i),
                plan: search.mean.clone(),
                takeover: Takeover::AtStep(at),
            })
        })
        .collect();
    let done = run_handoffs(policy, &ctx.robot, &runs, segment_s, ctx.cfg.threads)?;
    let mut out = Relabelled {
        figures: RelabelFigures {
            runs: runs.len(),
            taken_over: done.handed_over,
            successes: 0,
        },
        ..Relabelled::default()
    };
    for (episode, at) in done.episodes.into_iter().zip(done.takeover_at) {
        out.control_steps += episode.outcome.control_steps;
        if let (true, Some(at)) = (episode.outcome.success, at) {
            out.episodes.push((episode, at));
        }
    }
    out.figures.successes = out.episodes.len();
    Ok(Some(out))
}
