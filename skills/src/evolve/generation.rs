//! One generation, as its pipeline of phases, each in its own module with a typed hand-off:
//! `frontier::work` (which skills) → `bank::explore_phase` (explore and bank: `Explored`) →
//! `pool::gather` (`Pool`) → `pool::train` (the trained policy) → `rl::grpo_phase` (GRPO
//! on it, when on) → `decide::decide`
//! (`Decision`: the candidate, its held-out rates and faults, retention) → `accept::apply`
//! (roll back or accept: `Evaluations`) → `accept::plateau` → `synthesis::synthesis_phase` →
//! the record's totals → `evaluate::fresh_phase` (mastered skills on variants no decision sees).

use std::time::Instant;

use policy::Policy;
use sim::throughput::Meter;

use super::evaluate::{fresh_phase, Evaluations};
use super::state::{GenerationRecord, RunState};
use super::{
    accept, bank, decide, frontier, hard_tail, pool, reference, rl, synthesis, Context, Event,
};
use crate::error::Result;

/// Runs generation `g`; returns the policy to continue with and the generation's record.
pub fn run_generation(
    ctx: &Context,
    state: &mut RunState,
    policy: Option<Policy>,
    g: usize,
    events: &mut dyn FnMut(Event<'_>),
) -> Result<(Option<Policy>, GenerationRecord)> {
    let start = Instant::now();
    let work = frontier::work(ctx, state);
    let mut record = GenerationRecord {
        generation: g,
        frontier: work.frontier_names(),
        ..GenerationRecord::default()
    };
    let mut phases = Vec::new();
    if let Some(&(_, skill)) = work.explored().next() {
        phases.extend(reference::scripted_batch(ctx, skill, g)?);
    }
    let meter = Meter::start();
    let explored = bank::explore_phase(ctx, state, policy.as_ref(), &work, g, events)?;
    record.skills = explored.skills;
    record.explore_s = explored.wall_s;
    let explore = meter.stop("explore");
    record.sim_steps_per_sec = explore.control_steps_per_s();
    phases.push(explore);

    let meter = Meter::start();
    let pool = pool::gather(ctx, state, g)?;
    // Robust PLR learns nothing in a generation that only scored fresh variants.
    let score_only = !record.skills.is_empty() && record.skills.values().all(|s| s.score_only);
    let trained = if score_only {
        None
    } else {
        pool::train(ctx, policy.as_ref(), &pool, g, events)?
    };
    if pool.fresh && trained.is_some() {
        state.fresh_at = Some(g);
    }
    phases.push(meter.stop("train"));
    let evaluate_start = Instant::now();
    let (policy, evaluations) = match trained {
        Some((mut trained, figures)) => {
            record.train = Some(figures);
            let meter = Meter::start();
            record.grpo = rl::grpo_phase(ctx, state, &mut trained, &work, &record, events)?;
            if !record.grpo.is_empty() {
                phases.push(meter.stop("grpo"));
            }
            for run in &record.grpo {
                if let Some(figures) = record.skills.get_mut(&run.skill) {
                    figures.episodes += run.rollouts;
                }
            }
            events(Event::Phase {
                generation: g,
                skill: "",
                phase: "evaluate",
            });
            let meter = Meter::start();
            // A fresh network and the previous weights are not two points of one basin: no
            // retention blends between them.
            let fresh = record.train.as_ref().is_some_and(|t| t.fresh);
            let blend_base = if fresh { None } else { policy.as_ref() };
            let decision = decide::decide(ctx, state, blend_base, trained, &pool.learned)?;
            phases.push(meter.stop("evaluate"));
            accept::apply(ctx, state, &mut record, policy, decision, g)?
        }
        None => (
            policy,
            Evaluations {
                generation: g,
                ..Evaluations::default()
            },
        ),
    };
    ctx.dir.write_json(&ctx.dir.evaluation(g), &evaluations)?;
    record.evaluate_s = evaluate_start.elapsed().as_secs_f64();
    accept::plateau(ctx, state, &work, g);
    let meter = Meter::start();
    synthesis::synthesis_phase(ctx, state, policy.as_ref(), &work, &mut record, events)?;
    phases.push(meter.stop("synthesis"));

    totals(state, &mut record, &evaluations);
    let fresh_start = Instant::now();
    let meter = Meter::start();
    let last = is_last_generation(ctx, state, g);
    for (name, (ok, n)) in fresh_phase(ctx, state, policy.as_ref(), g, last, events)? {
        if let Some(figures) = record.skills.get_mut(&name) {
            figures.fresh_success = Some(ok as f64 / n.max(1) as f64);
            figures.fresh_episodes = Some(n);
        }
    }
    if last {
        hard_tail_phase(ctx, state, policy.as_ref(), &mut record, events)?;
    }
    record.evaluate_s += fresh_start.elapsed().as_secs_f64();
    phases.push(meter.stop("fresh"));
    record.wall_s = start.elapsed().as_secs_f64();
    record.phases = phases;
    Ok((policy, record))
}

/// The hard-tail evaluation of every skill the policy was trained on (when on).
fn hard_tail_phase(
    ctx: &Context,
    state: &RunState,
    policy: Option<&Policy>,
    record: &mut GenerationRecord,
    events: &mut dyn FnMut(Event<'_>),
) -> Result<()> {
    let (Some(cfg), Some(policy)) = (&ctx.cfg.hard_tail, policy) else {
        return Ok(());
    };
    for skill in &ctx.tree.skills {
        if !state.skills.get(skill.name()).is_some_and(|st| st.trained) {
            continue;
        }
        events(Event::Phase {
            generation: record.generation,
            skill: skill.name(),
            phase: "hard tail",
        });
        let figures = hard_tail::hard_tail(ctx, policy, skill, cfg)?;
        record
            .skills
            .entry(skill.name().to_owned())
            .or_default()
            .hard_tail = Some(figures);
    }
    Ok(())
}

/// Every skill with data or an evaluation gets a line (mastered skills are replayed and
/// evaluated without being explored); the run's episode count and mastered skills.
fn totals(state: &mut RunState, record: &mut GenerationRecord, evaluations: &Evaluations) {
    for (name, st) in &state.skills {
        let evaluated = evaluations.skills.get(name);
        if st.golden == 0 && evaluated.is_none() && !record.skills.contains_key(name) {
            continue;
        }
        let figures = record.skills.entry(name.clone()).or_default();
        figures.golden_total = st.golden;
        figures.mastered = st.mastered();
        if figures.heldout_success.is_none() {
            figures.heldout_success = evaluated.map(|(ok, n)| *ok as f64 / (*n).max(1) as f64);
            figures.heldout_episodes = evaluated.map(|(_, n)| *n);
        }
    }
    let episodes: usize = record.skills.values().map(|s| s.episodes).sum();
    state.episodes_simulated += episodes;
    record.episodes_simulated = state.episodes_simulated;
    record.mastered = state.mastered().into_iter().collect();
}

/// After generation `g`, the run stops: its last generation, every skill it works on mastered,
/// or its episode budget spent.
pub fn is_last_generation(ctx: &Context, state: &RunState, g: usize) -> bool {
    g + 1 >= ctx.cfg.generations
        || ctx
            .closure
            .iter()
            .all(|s| state.skills.get(s).is_some_and(|st| st.mastered()))
        || ctx
            .cfg
            .episode_budget
            .is_some_and(|b| state.episodes_simulated >= b)
}
