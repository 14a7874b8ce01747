//! Exploration of one skill in one generation: the policy's sampled rollouts on the
//! curriculum's variants (two per variant, so each variant gets a success rate), then the search
//! explorer (CEM over keyframe plans, continued from the skill's distribution, or warm-started
//! from a prerequisite's) when the policy is not good enough yet; and banking successes as
//! golden data (refined, or raw in the no-refinement ablation).

use policy::rollout::{EarlyStopReport, PolicyRollout};
use policy::Policy;
use sim::refine::refine;
use sim::store::EpisodeWriter;
use sim::Episode;

use super::curriculum::{choose_variants, fresh_variant, record_outcomes, stream_seed};
use super::handoff::explore_handoffs;
use super::hindsight::relabel_failures;
use super::learner::{sample_variants, SampledRuns};
use super::state::{Origin, RefineFigures, SkillGeneration, SkillState, TrackedVariant};
use super::Context;
use crate::error::Result;
use crate::explorer::{cem_search_from, plan_suffix, run_plans, CemConfig, PlanDistribution};
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
    pub figures: SkillGeneration,
}

/// Explores `skill`; returns the raw successes found, the policy's failed rollouts (the success
/// head's negatives) and the figures.
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
    let mut figures = SkillGeneration {
        explored: true,
        ..SkillGeneration::default()
    };
    let mut raw = Vec::new();
    let mut failures = Vec::new();
    // Every failed rollout, for hindsight relabelling.
    let mut unsolved = Vec::new();
    let variants = choose_variants(
        skill,
        st,
        cfg,
        budget / ATTEMPTS_PER_VARIANT,
        stream_seed(cfg.seed, generation, skill_index, 1),
    );
    let mut policy_rate = 0.0;
    let mut raw_search = Vec::new();
    if let (true, Some(policy)) = (st.trained, policy) {
        let runs = sample_variants(
            policy,
            &ctx.robot,
            &variants,
            ATTEMPTS_PER_VARIANT,
            &|v, k| sim::episode::episode_seed(v.seed, k + generation * 7),
            SampledRuns {
                temperature: cfg.temperature,
                early_stop: cfg.early_stop.as_ref(),
                threads: cfg.threads,
            },
        )?;
        if cfg.early_stop.is_some() {
            figures.early_stop = Some(EarlyStopReport::of(&runs));
        }
        let outcomes: Vec<(usize, usize)> = runs
            .chunks(ATTEMPTS_PER_VARIANT)
            .map(|c| {
                (
                    c.len(),
                    c.iter().filter(|r| r.episode.outcome.success).count(),
                )
            })
            .collect();
        record_outcomes(st, &variants, &outcomes, generation, cfg.synth.max_tracked);
        let successes = runs.iter().filter(|r| r.episode.outcome.success).count();
        figures.policy_sampled_success = Some(successes as f64 / runs.len().max(1) as f64);
        policy_rate = family_rate(&variants, &outcomes);
        figures.episodes += runs.len();
        figures.control_steps += runs
            .iter()
            .map(|r| r.episode.outcome.control_steps)
            .sum::<usize>();
        let (wins, losses): (Vec<PolicyRollout>, Vec<PolicyRollout>) =
            runs.into_iter().partition(|r| r.episode.outcome.success);
        raw.extend(wins.into_iter().map(|r| r.episode));
        unsolved.extend(losses.into_iter().map(|r| r.episode));
        failures.extend(unsolved.iter().take(cfg.failures_per_generation).cloned());
    }
    let searched_before = st.search.is_some();
    let search = !st.trained || policy_rate < cfg.search_below;
    if search {
        let start = st
            .search
            .clone()
            .or(prerequisite_search)
            .filter(|d| d.mean.len() == PlanDistribution::initial(&cfg.cem).mean.len())
            .unwrap_or_else(|| PlanDistribution::initial(&cfg.cem));
        // A skill's first search (from scratch or from a prerequisite's plan) gets twice the
        // iterations: its first demonstrations come from this distribution, and a less
        // converged one gives slower, less consistent plans that BC learns badly from. Any
        // search short of `min_successes` goes on up to `max_iterations`.
        let iterations = if st.search.is_none() {
            2 * cfg.cem.iterations
        } else {
            cfg.cem.iterations
        };
        let cem = CemConfig {
            seed: stream_seed(cfg.seed, generation, skill_index, 2),
            threads: Some(cfg.threads),
            iterations,
            ..cfg.cem.clone()
        };
        let tasks =
            &|i: usize, _: &mut rand_chacha::ChaCha8Rng| variants[i % variants.len()].task.clone();
        let mut result = cem_search_from(start, tasks, &ctx.robot, &ctx.sim, &cem, &mut |_| {})?;
        // Demonstrations should be direct: the mean plan cut to its shortest suffix that still
        // succeeds as often.
        let (shortest, tried) =
            shortest_suffix(ctx, &result.distribution.mean, &variants, cem.seed)?;
        result.distribution.mean = shortest;
        figures.episodes += result.episodes_run + tried;
        figures.control_steps += result
            .successes
            .iter()
            .map(|e| e.outcome.control_steps)
            .sum::<usize>();
        figures.search_successes += result.successes.len();
        st.search = Some(result.distribution);
        // The samples' successes only top up a mean plan that rarely succeeds (below).
        raw_search = result.successes;
    }
    if let Some(dist) = st.search.clone() {
        // Demonstrations should be consistent: the search's mean plan, run on the generation's
        // variants and fresh ones (`mean_plan_runs` in all), gives one behaviour per task.
        let extra_seed = stream_seed(cfg.seed, generation, skill_index, 7);
        let fresh = match cfg.mean_plan_runs {
            0 => variants.len(),
            n => n.saturating_sub(variants.len()),
        };
        let demo_variants: Vec<TrackedVariant> = variants
            .iter()
            .cloned()
            .chain(
                (0..fresh).map(|i| fresh_variant(skill, sim::episode::episode_seed(extra_seed, i))),
            )
            .collect();
        let mut enough = false;
        // Handoffs once the search's own demonstrations (an earlier generation's) have been
        // trained on and did not teach the policy the skill: a skill like lift is learned from
        // them in one generation, and handoff demonstrations mixed in only slow it down.
        if search && searched_before {
            let seed = stream_seed(cfg.seed, generation, skill_index, 8);
            if let Some(h) = explore_handoffs(ctx, skill, seed, st, policy, &dist, &demo_variants)?
            {
                figures.episodes += h.figures.runs;
                figures.control_steps += h.control_steps;
                figures.handoff = Some(h.figures);
                enough = h.enough;
                raw.extend(h.wins);
                unsolved.extend(h.misses);
            }
        }
        let plans = vec![dist.mean.clone(); if enough { 0 } else { demo_variants.len() }];
        let tasks = &|i: usize, _: &mut rand_chacha::ChaCha8Rng| demo_variants[i].task.clone();
        let runs = run_plans(
            &plans,
            tasks,
            &ctx.robot,
            &ctx.sim,
            cfg.cem.segment_s,
            extra_seed ^ 0x3EA9,
            Some(cfg.threads),
        )?;
        figures.episodes += runs.len();
        figures.control_steps += runs.iter().map(|e| e.outcome.control_steps).sum::<usize>();
        let (wins, misses): (Vec<Episode>, Vec<Episode>) =
            runs.into_iter().partition(|e| e.outcome.success);
        figures.search_successes += wins.len();
        if !enough && wins.len() < demo_variants.len() / 4 {
            raw.append(&mut raw_search);
        }
        raw.extend(wins);
        unsolved.extend(misses);
    }
    if cfg.hindsight_per_generation > 0 {
        let relabelled = relabel_failures(ctx, skill, &unsolved, cfg.hindsight_per_generation);
        figures.hindsight = relabelled.len();
        raw.extend(relabelled);
    }
    st.episodes_used += figures.episodes;
    Ok(Exploration {
        successes: raw,
        failures,
        figures,
    })
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
    plan: &[f64],
    variants: &[TrackedVariant],
    seed: u64,
) -> Result<(Vec<f64>, usize)> {
    let keyframes = ctx.cfg.cem.keyframes;
    let probe: Vec<&TrackedVariant> = variants.iter().take(SUFFIX_PROBE).collect();
    let mut plans = Vec::new();
    for first in 0..keyframes {
        plans.extend(std::iter::repeat_n(plan_suffix(plan, first), probe.len()));
    }
    let n = probe.len();
    let tasks = &|i: usize, _: &mut rand_chacha::ChaCha8Rng| probe[i % n].task.clone();
    let runs = run_plans(
        &plans,
        tasks,
        &ctx.robot,
        &ctx.sim,
        ctx.cfg.cem.segment_s,
        seed ^ 0x5u64,
        Some(ctx.cfg.threads),
    )?;
    let wins: Vec<usize> = runs
        .chunks(n.max(1))
        .map(|c| c.iter().filter(|e| e.outcome.success).count())
        .collect();
    let whole = wins.first().copied().unwrap_or(0);
    let first = (0..keyframes)
        .rev()
        .find(|&f| wins.get(f).copied().unwrap_or(0) >= whole.max(1))
        .unwrap_or(0);
    Ok((plan_suffix(plan, first), runs.len()))
}

/// Refines (or, in the no-refinement ablation, keeps) `raw` successes, keeps at most `max`, and
/// writes them to the generation's golden store of `skill`. Returns the number written.
pub fn bank(
    ctx: &Context,
    skill: &str,
    raw: Vec<Episode>,
    generation: usize,
    max: usize,
) -> Result<(usize, Option<RefineFigures>)> {
    if raw.is_empty() {
        return Ok((0, None));
    }
    let (mut golden, figures) = if ctx.cfg.refine {
        let refined = refine(&ctx.robot, &ctx.sim, &ctx.cfg.refine_config, &raw, &[])?;
        let r = &refined.report;
        let merged = golden_of(&raw, &refined);
        let golden = merged.golden;
        let figures = RefineFigures {
            raw: r.episodes_in,
            kept: r.kept,
            raw_was_shorter: merged.raw_was_shorter,
            raw_unrefined: merged.raw_unrefined,
            rms_jerk_before: r.rms_jerk_before,
            rms_jerk_after: r.rms_jerk_after,
            duration_before_s: r.duration_before_s,
            duration_after_s: r.duration_after_s,
        };
        (golden, Some(figures))
    } else {
        (raw, None)
    };
    golden.truncate(max);
    write_store(ctx, ctx.dir.golden(generation, skill), &golden)?;
    Ok((golden.len(), figures))
}

/// Golden demonstrations from a refiner run on `raw`, with how many came out raw.
#[derive(Debug)]
pub struct Merged {
    pub golden: Vec<Episode>,
    /// Kept episodes whose raw original was already shorter than the re-timed replay (the raw
    /// one is the better demonstration, so it is banked instead).
    pub raw_was_shorter: usize,
    /// Successes whose smoothed replay no longer succeeds, banked raw (real, healthy,
    /// efficient successes the smoother could not improve).
    pub raw_unrefined: usize,
}

/// Merges `refined` (the refiner's output on `raw`) with `raw`: kept episodes (raw where the
/// raw one is shorter), then the successes whose smoothed replay failed. The refiner's
/// decisions come one per raw episode in order; `source_index` is the episode's own index in
/// the batch that ran it, not its place in `raw`, so it is not used here.
pub fn golden_of(raw: &[Episode], refined: &sim::refine::Refined) -> Merged {
    let decisions = &refined.report.decisions;
    let kept = decisions
        .iter()
        .zip(raw)
        .filter(|(d, _)| d.verdict == "kept")
        .map(|(_, e)| e);
    let mut raw_was_shorter = 0;
    let mut golden: Vec<Episode> = refined
        .golden
        .iter()
        .zip(kept)
        .map(|(g, e)| {
            if e.outcome.control_steps < g.outcome.control_steps {
                raw_was_shorter += 1;
                e.clone()
            } else {
                g.clone()
            }
        })
        .collect();
    let before = golden.len();
    golden.extend(
        decisions
            .iter()
            .zip(raw)
            .filter(|(d, _)| d.verdict == "revalidation_failed")
            .map(|(_, e)| e.clone()),
    );
    Merged {
        raw_unrefined: golden.len() - before,
        golden,
        raw_was_shorter,
    }
}

/// Writes the policy's failed rollouts of `skill` (the success head's negatives) to the
/// generation's failure store. Returns the number written.
pub fn bank_failures(
    ctx: &Context,
    skill: &str,
    failures: &[Episode],
    generation: usize,
) -> Result<usize> {
    write_store(ctx, ctx.dir.failures(generation, skill), failures)?;
    Ok(failures.len())
}

fn write_store(ctx: &Context, dir: std::path::PathBuf, episodes: &[Episode]) -> Result<()> {
    if episodes.is_empty() {
        return Ok(());
    }
    let mut writer = EpisodeWriter::new(dir, "coevolve-evolve", &ctx.sim)?
        .with_robot_name(ctx.robot.model.name.clone());
    writer.write_batch(episodes)?;
    Ok(())
}
