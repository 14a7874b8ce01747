//! Exploration of one skill in one generation: the policy's sampled rollouts on the
//! curriculum's variants (two per variant, so each variant gets a success rate), then the search
//! explorer (CEM over keyframe plans, continued from the skill's distribution, or warm-started
//! from a prerequisite's) when the policy is not good enough yet. Banking what it finds is
//! `evolve::bank`.

use policy::rollout::{EarlyStopReport, PolicyRollout};
use policy::Policy;
use sim::Episode;

use super::config::Curriculum;
use super::curriculum::{choose_variants, fresh_variant, record_outcomes, stream_seed};
use super::handoff::explore_handoffs;
use super::hindsight::relabel_failures;
use super::learner::{sample_variants, SampledRuns};
use super::level_replay;
use super::relabel::relabel;
use super::state::{DemoPlanFigures, Origin, SkillGeneration, SkillState, TrackedVariant};
use super::Context;
use crate::error::Result;
use crate::explorer::{
    broken_count, cem_with, plan_suffix, CemConfig, PlanDistribution, PlanLayout,
};
use crate::tree::Skill;

/// Attempts per variant in the policy's exploration rollouts.
pub const ATTEMPTS_PER_VARIANT: usize = 2;

/// What exploring a skill in one generation produced.
#[derive(Debug)]
pub struct Exploration {
    /// Raw successes (policy rollouts and search), to be refined and banked.
    pub successes: Vec<Episode>,
    /// Failed policy rollouts (cut ones included), banked as the success head's negatives.
    pub failures: Vec<Episode>,
    /// Expert-relabelled successes (`evolve::relabel`) with their first expert step, banked
    /// as they are (not refined: their states are the policy's).
    pub relabelled: Vec<(Episode, usize)>,
    pub figures: SkillGeneration,
}

/// One skill's exploration in progress: what the steps below add to.
struct Found {
    /// Raw successes (policy rollouts and search), to be refined and banked.
    raw: Vec<Episode>,
    /// Failed policy rollouts kept as the success head's negatives.
    failures: Vec<Episode>,
    /// Every failed rollout, for hindsight relabelling.
    unsolved: Vec<Episode>,
    figures: SkillGeneration,
}

/// What one exploration step works with.
struct Step<'a> {
    ctx: &'a Context,
    skill: &'a Skill,
    skill_index: usize,
    generation: usize,
    policy: Option<&'a Policy>,
    variants: &'a [TrackedVariant],
}

impl Step<'_> {
    fn seed(&self, purpose: u64) -> u64 {
        stream_seed(
            self.ctx.cfg.seed,
            self.generation,
            self.skill_index,
            purpose,
        )
    }
}

/// Explores `skill`: the policy's rollouts, the search while the policy is weak, consistent
/// demonstrations (handoffs or the mean plan), hindsight and expert relabelling.
pub fn explore_skill(
    ctx: &Context,
    skill: &Skill,
    skill_index: usize,
    st: &mut SkillState,
    policy: Option<&Policy>,
    generation: usize,
    prerequisite_search: Option<PlanDistribution>,
) -> Result<Exploration> {
    let cfg = &ctx.cfg;
    let budget = skill.def.budget.episodes_per_generation.max(2);
    let seed = stream_seed(cfg.seed, generation, skill_index, 1);
    let count = budget / ATTEMPTS_PER_VARIANT;
    let scoring = match (cfg.curriculum, st.trained, policy) {
        (Curriculum::Sfl, true, Some(policy)) => {
            let s = stream_seed(cfg.seed, generation, skill_index, 11);
            refresh_sfl_buffer(ctx, skill, st, policy, count, s, generation)?
        }
        _ => (0, 0),
    };
    let choice = choose_variants(skill, st, cfg, count, seed, generation);
    let variants = choice.variants;
    let step = Step {
        ctx,
        skill,
        skill_index,
        generation,
        policy,
        variants: &variants,
    };
    let mut found = Found {
        raw: Vec::new(),
        failures: Vec::new(),
        unsolved: Vec::new(),
        figures: SkillGeneration {
            explored: true,
            score_only: choice.score_only,
            scoring_episodes: scoring.0,
            episodes: scoring.0,
            control_steps: scoring.1,
            ..SkillGeneration::default()
        },
    };
    let policy_rate = policy_rollouts(&step, st, &mut found)?;
    if choice.score_only {
        st.episodes_used += found.figures.episodes;
        return Ok(Exploration {
            successes: Vec::new(),
            failures: Vec::new(),
            relabelled: Vec::new(),
            figures: found.figures,
        });
    }
    let searched_before = st.search.is_some();
    let search = !st.trained || policy_rate < cfg.search_below;
    let raw_search = if search {
        run_search(&step, st, prerequisite_search, &mut found)?
    } else {
        Vec::new()
    };
    if let Some(dist) = st.search.clone() {
        // Handoffs take over from the policy with a gripper plan's goal half.
        let handoffs = search && searched_before && dist.layout == PlanLayout::Gripper;
        demonstrate(&step, st, &dist, handoffs, raw_search, &mut found)?;
    }
    if cfg.hindsight_per_generation > 0 {
        let relabelled =
            relabel_failures(ctx, skill, &found.unsolved, cfg.hindsight_per_generation);
        found.figures.hindsight = relabelled.len();
        found.raw.extend(relabelled);
    }
    let mut expert = Vec::new();
    if let Some(r) = relabel(ctx, step.seed(10), st, policy, &variants)? {
        found.figures.episodes += r.figures.runs;
        found.figures.control_steps += r.control_steps;
        found.figures.relabel = Some(r.figures);
        expert = r.episodes;
    }
    st.episodes_used += found.figures.episodes;
    Ok(Exploration {
        successes: found.raw,
        failures: found.failures,
        relabelled: expert,
        figures: found.figures,
    })
}

/// SFL's buffer update: `candidates_per_variant × count` fresh variants, each run `attempts`
/// times with the sampled policy, the most learnable `buffer_per_variant × count` kept.
/// Returns the episodes and control steps it took.
fn refresh_sfl_buffer(
    ctx: &Context,
    skill: &Skill,
    st: &mut SkillState,
    policy: &Policy,
    count: usize,
    seed: u64,
    generation: usize,
) -> Result<(usize, usize)> {
    let sfl = &ctx.cfg.sfl;
    let candidates: Vec<TrackedVariant> = (0..sfl.candidates_per_variant * count)
        .map(|i| fresh_variant(skill, sim::episode::episode_seed(seed, i)))
        .collect();
    let attempts = sfl.attempts.max(1);
    let runs = sample_variants(
        policy,
        &ctx.robot,
        &candidates,
        attempts,
        &|v, k| sim::episode::episode_seed(v.seed, k + generation * 7),
        SampledRuns {
            temperature: ctx.cfg.temperature,
            early_stop: ctx.cfg.early_stop.as_ref(),
            runs: ctx.runs(),
        },
    )?;
    let steps = runs.iter().map(|r| r.episode.outcome.control_steps).sum();
    let scored = candidates
        .into_iter()
        .zip(runs.chunks(attempts))
        .map(|(mut v, c)| {
            v.history.evaluations.push(crate::signals::Evaluation {
                generation,
                attempts: c.len(),
                successes: c.iter().filter(|r| r.episode.outcome.success).count(),
            });
            v
        })
        .collect();
    st.buffer = level_replay::most_learnable(scored, sfl.buffer_per_variant * count);
    Ok((runs.len(), steps))
}

/// The policy's sampled rollouts on the generation's variants (early-stopped by the success
/// head), their outcomes recorded in the variants' histories; returns the policy's success
/// on the task family's own variants (0 without a trained policy).
fn policy_rollouts(step: &Step<'_>, st: &mut SkillState, found: &mut Found) -> Result<f64> {
    let cfg = &step.ctx.cfg;
    let (true, Some(policy)) = (st.trained, step.policy) else {
        return Ok(0.0);
    };
    let generation = step.generation;
    let runs = sample_variants(
        policy,
        &step.ctx.robot,
        step.variants,
        ATTEMPTS_PER_VARIANT,
        &|v, k| sim::episode::episode_seed(v.seed, k + generation * 7),
        SampledRuns {
            temperature: cfg.temperature,
            early_stop: cfg.early_stop.as_ref(),
            runs: step.ctx.runs(),
        },
    )?;
    let figures = &mut found.figures;
    if cfg.early_stop.is_some() {
        figures.early_stop = Some(EarlyStopReport::of(&runs));
    }
    let outcomes: Vec<(usize, usize)> = runs
        .chunks(ATTEMPTS_PER_VARIANT)
        .map(|c| {
            let ok = c.iter().filter(|r| r.episode.outcome.success).count();
            (c.len(), ok)
        })
        .collect();
    record_outcomes(st, step.variants, &outcomes, generation, cfg);
    let successes = runs.iter().filter(|r| r.episode.outcome.success).count();
    figures.broken += broken_count(runs.iter().map(|r| &r.episode));
    figures.policy_sampled_success = Some(successes as f64 / runs.len().max(1) as f64);
    figures.episodes += runs.len();
    figures.control_steps += runs
        .iter()
        .map(|r| r.episode.outcome.control_steps)
        .sum::<usize>();
    let (wins, losses): (Vec<PolicyRollout>, Vec<PolicyRollout>) =
        runs.into_iter().partition(|r| r.episode.outcome.success);
    found.raw.extend(wins.into_iter().map(|r| r.episode));
    found.unsolved.extend(losses.into_iter().map(|r| r.episode));
    let keep = cfg.failures_per_generation;
    found
        .failures
        .extend(found.unsolved.iter().take(keep).cloned());
    Ok(family_rate(step.variants, &outcomes))
}

/// CEM search over keyframe plans, continued from the skill's distribution (or a
/// prerequisite's), its mean cut to the shortest suffix that succeeds as often; returns the
/// search samples' successes (they only top up a mean plan that rarely succeeds).
fn run_search(
    step: &Step<'_>,
    st: &mut SkillState,
    prerequisite_search: Option<PlanDistribution>,
    found: &mut Found,
) -> Result<Vec<Episode>> {
    let (ctx, cfg) = (step.ctx, &step.ctx.cfg);
    let initial = PlanDistribution::initial_for(PlanLayout::for_skill(step.skill.kind), &cfg.cem);
    // A tool skill that goes on from its prerequisite's plan keeps that plan's approach
    // (`PlanDistribution::with_approach_fixed`) when `keep_prerequisite_approach` is set; a
    // gripper skill starts from the prerequisite's grasp set down at the target or held at
    // the lift height (`PlanDistribution::for_successor`).
    let from_prerequisite = prerequisite_search.map(|d| match d.layout {
        PlanLayout::Tool if cfg.keep_prerequisite_approach => d.with_approach_fixed(&cfg.cem),
        PlanLayout::Gripper => d.for_successor(step.skill.kind),
        PlanLayout::Tool => d,
    });
    let start = st
        .search
        .clone()
        .or(from_prerequisite)
        .filter(|d| d.layout == initial.layout && d.mean.len() == initial.mean.len())
        .unwrap_or(initial);
    // A skill's first search (from scratch or from a prerequisite's plan) gets twice the
    // iterations: its first demonstrations come from this distribution, and a less converged
    // one gives slower, less consistent plans that BC learns badly from. Any search short of
    // `min_successes` goes on up to `max_iterations`.
    let iterations = if st.search.is_none() {
        2 * cfg.cem.iterations
    } else {
        cfg.cem.iterations
    };
    let cem = CemConfig {
        seed: step.seed(2),
        threads: Some(cfg.threads),
        iterations,
        ..cfg.cem.clone()
    };
    let variants = step.variants;
    let tasks =
        &|i: usize, _: &mut rand_chacha::ChaCha8Rng| variants[i % variants.len()].task.clone();
    let mut result = cem_with(
        start,
        &cem,
        &mut |plans, seed| ctx.run_plans(plans, tasks, cem.segment_s, seed),
        &mut |_| {},
    )?;
    // Demonstrations should be direct: the mean plan cut to its shortest suffix that still
    // succeeds as often (a tool plan: the best of the mean and the latest successes' plans,
    // simplified).
    let dist = &result.distribution;
    let (plan, tried) = match dist.layout {
        PlanLayout::Gripper => shortest_suffix(ctx, dist.layout, &dist.mean, variants, cem.seed)?,
        PlanLayout::Tool => {
            let (plan, tried, figures) = demonstrating_tool_plan(ctx, &result, variants, cem.seed)?;
            found.figures.demo_plan = Some(figures);
            (plan, tried)
        }
    };
    result.distribution.mean = plan;
    let figures = &mut found.figures;
    figures.episodes += result.episodes_run + tried;
    figures.control_steps += result
        .successes
        .iter()
        .map(|e| e.outcome.control_steps)
        .sum::<usize>();
    figures.search_successes += result.successes.len();
    figures.broken += result.history.iter().map(|i| i.broken).sum::<usize>();
    st.search = Some(result.distribution);
    Ok(result.successes)
}

/// Consistent demonstrations from the search's distribution `dist`: handoffs (when `handoffs`:
/// the search's own demonstrations were trained on and did not teach the skill) or the mean
/// plan, run on the generation's variants and fresh ones (`mean_plan_runs` in all).
fn demonstrate(
    step: &Step<'_>,
    st: &mut SkillState,
    dist: &PlanDistribution,
    handoffs: bool,
    mut raw_search: Vec<Episode>,
    found: &mut Found,
) -> Result<()> {
    let (ctx, cfg) = (step.ctx, &step.ctx.cfg);
    let extra_seed = step.seed(7);
    let fresh = match cfg.mean_plan_runs {
        0 => step.variants.len(),
        n => n.saturating_sub(step.variants.len()),
    };
    let demo_variants: Vec<TrackedVariant> = step
        .variants
        .iter()
        .cloned()
        .chain(
            (0..fresh)
                .map(|i| fresh_variant(step.skill, sim::episode::episode_seed(extra_seed, i))),
        )
        .collect();
    let mut enough = false;
    // Handoffs once the search's own demonstrations (an earlier generation's) have been
    // trained on and did not teach the policy the skill: a skill like lift is learned from
    // them in one generation, and handoff demonstrations mixed in only slow it down.
    if handoffs {
        let seed = step.seed(8);
        if let Some(h) =
            explore_handoffs(ctx, step.skill, seed, st, step.policy, dist, &demo_variants)?
        {
            found.figures.episodes += h.figures.runs;
            found.figures.control_steps += h.control_steps;
            found.figures.handoff = Some(h.figures);
            enough = h.enough;
            found.raw.extend(h.wins);
            found.unsolved.extend(h.misses);
        }
    }
    let plans = vec![dist.mean.clone(); if enough { 0 } else { demo_variants.len() }];
    let tasks = &|i: usize, _: &mut rand_chacha::ChaCha8Rng| demo_variants[i].task.clone();
    let runs = ctx.run_plans(&plans, tasks, cfg.cem.segment_s, extra_seed ^ 0x3EA9)?;
    found.figures.episodes += runs.len();
    found.figures.control_steps += runs.iter().map(|e| e.outcome.control_steps).sum::<usize>();
    found.figures.broken += broken_count(runs.iter());
    let (wins, misses): (Vec<Episode>, Vec<Episode>) =
        runs.into_iter().partition(|e| e.outcome.success);
    found.figures.search_successes += wins.len();
    if !enough && wins.len() < demo_variants.len() / 4 {
        found.raw.append(&mut raw_search);
    }
    found.raw.extend(wins);
    found.unsolved.extend(misses);
    Ok(())
}

/// The policy's success on the task family's own variants (fresh or revisited, not the
/// synthesised ones, which are chosen for being hard): whether the policy needs the search.
/// Without any such variant, its success on all of them.
fn family_rate(variants: &[TrackedVariant], outcomes: &[(usize, usize)]) -> f64 {
    let rate = |own: bool| {
        let (attempts, successes) = variants
            .iter()
            .zip(outcomes)
            .filter(|(v, _)| !own || v.origin == Origin::Generator)
            .fold((0, 0), |(a, s), (_, &(n, k))| (a + n, s + k));
        (attempts > 0).then(|| successes as f64 / attempts as f64)
    };
    rate(true).or_else(|| rate(false)).unwrap_or(0.0)
}

/// Variants the suffix choice is measured on.
const SUFFIX_PROBE: usize = 8;

/// The shortest suffix of `plan` (dropping leading keyframes) that succeeds on the probe
/// variants at least as often as the whole plan; returns it and the episodes spent.
fn shortest_suffix(
    ctx: &Context,
    layout: PlanLayout,
    plan: &[f64],
    variants: &[TrackedVariant],
    seed: u64,
) -> Result<(Vec<f64>, usize)> {
    let keyframes = layout.keyframes(plan);
    let probe: Vec<&TrackedVariant> = variants.iter().take(SUFFIX_PROBE).collect();
    let plans: Vec<Vec<f64>> = (0..keyframes)
        .map(|first| plan_suffix(layout, plan, first))
        .collect();
    let (wins, episodes) = probe_wins(ctx, &plans, &probe, seed ^ 0x5u64)?;
    let whole = wins.first().copied().unwrap_or(0);
    let first = (0..keyframes)
        .rev()
        .find(|&f| wins.get(f).copied().unwrap_or(0) >= whole.max(1))
        .unwrap_or(0);
    Ok((plan_suffix(layout, plan, first), episodes))
}

/// Runs each plan on every probe variant (plan-major order, one batch seed); returns each
/// plan's successes and the episodes run.
fn probe_wins(
    ctx: &Context,
    plans: &[Vec<f64>],
    probe: &[&TrackedVariant],
    seed: u64,
) -> Result<(Vec<usize>, usize)> {
    let n = probe.len();
    let all: Vec<Vec<f64>> = plans
        .iter()
        .flat_map(|p| std::iter::repeat_n(p.clone(), n))
        .collect();
    let tasks = &|i: usize, _: &mut rand_chacha::ChaCha8Rng| probe[i % n].task.clone();
    let runs = ctx.run_plans(&all, tasks, ctx.cfg.cem.segment_s, seed)?;
    let wins = runs
        .chunks(n.max(1))
        .map(|c| c.iter().filter(|e| e.outcome.success).count())
        .collect();
    Ok((wins, runs.len()))
}

/// Variants a tool plan's choice and simplification are measured on, and the latest search
/// successes whose plans compete with the mean.
const TOOL_PROBE: usize = 16;
const CHAMPION_CANDIDATES: usize = 8;

/// The tool plan that demonstrates: of the search's mean and its latest successes' plans, the
/// one that succeeds most often on the probe variants (the mean on a tie; a lucky plan that
/// works across variants beats a mean between modes), then simplified (`evolve::simplify`).
/// Returns it, the episodes spent and what simplifying did.
fn demonstrating_tool_plan(
    ctx: &Context,
    search: &crate::explorer::SearchResult,
    variants: &[TrackedVariant],
    seed: u64,
) -> Result<(Vec<f64>, usize, DemoPlanFigures)> {
    if variants.is_empty() {
        return Ok((
            search.distribution.mean.clone(),
            0,
            DemoPlanFigures::default(),
        ));
    }
    let n = TOOL_PROBE.min(variants.len());
    let probe: Vec<&TrackedVariant> = variants.iter().cycle().take(n).collect();
    let mut episodes = 0;
    let mut wins = |plans: &[Vec<f64>]| -> Result<Vec<usize>> {
        let (wins, run) = probe_wins(ctx, plans, &probe, seed ^ 0x7u64)?;
        episodes += run;
        Ok(wins)
    };
    let latest = search.success_plans.iter().rev().take(CHAMPION_CANDIDATES);
    let candidates: Vec<Vec<f64>> = std::iter::once(search.distribution.mean.clone())
        .chain(latest.cloned())
        .collect();
    let scores = wins(&candidates)?;
    let champion = (0..candidates.len())
        .max_by_key(|&i| (scores[i], usize::MAX - i))
        .unwrap_or(0);
    let fixed = search.distribution.fixed_keyframes;
    let s = super::simplify::simplify_tool_plan(&candidates[champion], fixed, &mut wins)?;
    let figures = DemoPlanFigures {
        champion,
        probe: n,
        wins_mean: scores[0],
        wins_before: s.wins_before,
        wins_after: s.wins_after,
        dropped: s.dropped,
        duration_before_s: s.duration_before_s,
        duration_after_s: s.duration_after_s,
    };
    Ok((s.plan, episodes, figures))
}
