//! Task synthesis at the end of a generation (co-evolution curriculum only): mutations around
//! the variants the weakness signals mark, plus an adversarial generator (fresh variants the
//! new policy fails greedily); every candidate must be solved by the explorer (plans sampled
//! from the skill's search distribution, or the policy's sampled rollouts) within
//! `validation_attempts` before it enters the pool, to be explored next generation.

use std::collections::BTreeMap;
use std::time::Instant;

use policy::Policy;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};
use sim::Episode;

use super::config::Curriculum;
use super::curriculum::{fresh_variant, signal_candidates, stream_seed, tracked};
use super::frontier::Work;
use super::learner::{run_policy, sample_variants, SampledRuns};
use super::state::{GenerationRecord, Origin, RunState, SkillState, TrackedVariant};
use super::{Context, Event};
use crate::error::Result;
use crate::signals::Signal;
use crate::tree::Skill;

/// What synthesis did for one skill (written to `signals/gen-NNN.json`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SynthesisReport {
    pub skill: String,
    /// (variant, signal) raised over the tracked variants.
    pub signals: Vec<(String, Signal)>,
    pub candidates: usize,
    pub validated: BTreeMap<String, usize>,
    pub rejected: usize,
    pub episodes: usize,
}

/// The synthesis phase (co-evolution curriculum only): new validated variants for every
/// frontier skill not mastered yet, around the weaknesses of `policy` (the accepted one);
/// written to `signals/gen-NNN.json`, counted in `record`.
pub fn synthesis_phase(
    ctx: &Context,
    state: &mut RunState,
    policy: Option<&Policy>,
    work: &Work<'_>,
    record: &mut GenerationRecord,
    events: &mut dyn FnMut(Event<'_>),
) -> Result<()> {
    let g = record.generation;
    let start = Instant::now();
    let mut reports: Vec<SynthesisReport> = Vec::new();
    if ctx.cfg.curriculum == Curriculum::Coevolve {
        for &(si, skill) in &work.frontier {
            let Some(st) = state.skills.get_mut(skill.name()) else {
                continue;
            };
            if st.mastered() {
                continue;
            }
            events(Event::Phase {
                generation: g,
                skill: skill.name(),
                phase: "synthesise",
            });
            // Validated variants enter the pool and are explored next generation; the
            // validation episodes themselves are not banked (sampled plans demonstrate badly).
            let report = synthesize(ctx, skill, si, st, policy, g)?;
            if let Some(figures) = record.skills.get_mut(skill.name()) {
                figures.synthesized = report.validated.clone();
                figures.rejected = report.rejected;
                figures.episodes += report.episodes;
            }
            reports.push(report);
        }
    }
    ctx.dir.write_json(&ctx.dir.signals(g), &reports)?;
    record.synthesis_s = start.elapsed().as_secs_f64();
    Ok(())
}

/// Proposes, validates and queues new variants for `skill`.
pub fn synthesize(
    ctx: &Context,
    skill: &Skill,
    skill_index: usize,
    st: &mut SkillState,
    policy: Option<&Policy>,
    generation: usize,
) -> Result<SynthesisReport> {
    let cfg = &ctx.cfg;
    let (mut candidates, signals) = signal_candidates(
        skill,
        st,
        cfg,
        stream_seed(cfg.seed, generation, skill_index, 3),
    );
    let mut report = SynthesisReport {
        skill: skill.name().to_owned(),
        signals,
        ..SynthesisReport::default()
    };
    if let (true, Some(policy)) = (st.trained, policy) {
        let n = cfg.synth.adversarial_candidates * st.synth_multiplier.max(1);
        let seed = stream_seed(cfg.seed, generation, skill_index, 4);
        let pool: Vec<TrackedVariant> = (0..n)
            .map(|i| fresh_variant(skill, sim::episode::episode_seed(seed, i)))
            .collect();
        let tasks: Vec<_> = pool.iter().map(|v| v.task.clone()).collect();
        let seeds: Vec<u64> = pool.iter().map(|v| v.seed).collect();
        let runs = run_policy(policy, &ctx.robot, &tasks, &seeds, None, None, ctx.runs())?;
        report.episodes += runs.len();
        for (v, r) in pool.into_iter().zip(&runs) {
            if !r.episode.outcome.success {
                candidates.push(tracked(skill, v.task, v.seed, Origin::Adversarial));
            }
        }
    }
    report.candidates = candidates.len();
    if candidates.is_empty() {
        st.episodes_used += report.episodes;
        return Ok(report);
    }
    let attempts = cfg.synth.validation_attempts.max(1);
    let episodes = validate(
        ctx,
        st,
        policy,
        &candidates,
        attempts,
        generation,
        skill_index,
    )?;
    report.episodes += episodes.len();
    for (c, tries) in candidates.into_iter().zip(episodes.chunks(attempts)) {
        if !tries.iter().any(|e| e.outcome.success) {
            report.rejected += 1;
        } else {
            *report
                .validated
                .entry(c.origin.name().to_owned())
                .or_default() += 1;
            st.pending.push(c);
        }
    }
    st.episodes_used += report.episodes;
    Ok(report)
}

/// `attempts` explorer tries per candidate, in candidate order.
fn validate(
    ctx: &Context,
    st: &SkillState,
    policy: Option<&Policy>,
    candidates: &[TrackedVariant],
    attempts: usize,
    generation: usize,
    skill_index: usize,
) -> Result<Vec<Episode>> {
    let cfg = &ctx.cfg;
    let seed = stream_seed(cfg.seed, generation, skill_index, 5);
    match (&st.search, policy) {
        (Some(dist), _) => {
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            // The mean plan first, then samples around it.
            let plans: Vec<Vec<f64>> = (0..candidates.len() * attempts)
                .map(|i| match i % attempts {
                    0 => dist.mean.clone(),
                    _ => dist.sample(&mut rng),
                })
                .collect();
            let tasks = &|i: usize, _: &mut ChaCha8Rng| candidates[i / attempts].task.clone();
            ctx.run_plans(&plans, tasks, cfg.cem.segment_s, seed)
        }
        (None, Some(policy)) => {
            let runs = sample_variants(
                policy,
                &ctx.robot,
                candidates,
                attempts,
                &|c, k| sim::episode::episode_seed(c.seed ^ seed, k),
                SampledRuns {
                    temperature: cfg.temperature,
                    early_stop: None,
                    runs: ctx.runs(),
                },
            )?;
            Ok(runs.into_iter().map(|r| r.episode).collect())
        }
        (None, None) => Ok(Vec::new()),
    }
}
