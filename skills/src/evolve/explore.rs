//! Exploration of one skill in one generation: the policy's sampled rollouts on the
//! curriculum's variants (two per variant, so each variant gets a success rate), then the search
//! explorer (CEM over keyframe plans, continued from the skill's distribution, or warm-started
//! from a prerequisite's) when the policy is not good enough yet; and banking successes as
//! golden data (refined, or raw in the no-refinement ablation).

use policy::Policy;
use sim::refine::refine;
use sim::store::EpisodeWriter;
use sim::Episode;

use super::curriculum::{choose_variants, record_outcomes, stream_seed};
use super::learner::run_policy;
use super::state::{RefineFigures, SkillGeneration, SkillState};
use super::Context;
use crate::error::Result;
use crate::explorer::{cem_search_from, run_plans, CemConfig, PlanDistribution};
use crate::tree::Skill;

/// Attempts per variant in the policy's exploration rollouts.
pub const ATTEMPTS_PER_VARIANT: usize = 2;

/// Explores `skill`; returns the raw successes found and the figures.
pub fn explore_skill(
    ctx: &Context,
    skill: &Skill,
    skill_index: usize,
    st: &mut SkillState,
    policy: Option<&Policy>,
    generation: usize,
    prerequisite_search: Option<PlanDistribution>,
    sim_steps: &mut usize,
) -> Result<(Vec<Episode>, SkillGeneration)> {
    let cfg = &ctx.cfg;
    let budget = skill.def.budget.episodes_per_generation.max(2);
    let mut figures = SkillGeneration {
        explored: true,
        ..SkillGeneration::default()
    };
    let mut raw = Vec::new();
    let variants = choose_variants(
        skill,
        st,
        cfg,
        budget / ATTEMPTS_PER_VARIANT,
        stream_seed(cfg.seed, generation, skill_index, 1),
    );
    let mut policy_rate = 0.0;
    if let (true, Some(policy)) = (st.trained, policy) {
        let mut tasks = Vec::new();
        let mut seeds = Vec::new();
        for v in &variants {
            for k in 0..ATTEMPTS_PER_VARIANT {
                tasks.push(v.task.clone());
                seeds.push(sim::episode::episode_seed(v.seed, k + generation * 7));
            }
        }
        let runs = run_policy(
            policy,
            &ctx.robot,
            &tasks,
            &seeds,
            Some(cfg.temperature),
            cfg.threads,
        )?;
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
        policy_rate = successes as f64 / runs.len().max(1) as f64;
        figures.policy_sampled_success = Some(policy_rate);
        figures.episodes += runs.len();
        *sim_steps += runs
            .iter()
            .map(|r| r.episode.outcome.control_steps)
            .sum::<usize>();
        raw.extend(
            runs.into_iter()
                .filter(|r| r.episode.outcome.success)
                .map(|r| r.episode),
        );
    }
    let search = !st.trained || policy_rate < cfg.search_below;
    if !search {
        if let Some(dist) = &st.search {
            // The search's mean plan still demonstrates consistently where it succeeds.
            let plans = vec![dist.mean.clone(); variants.len()];
            let tasks = &|i: usize, _: &mut rand_chacha::ChaCha8Rng| variants[i].task.clone();
            let runs = run_plans(
                &plans,
                tasks,
                &ctx.robot,
                &ctx.sim,
                cfg.cem.segment_s,
                stream_seed(cfg.seed, generation, skill_index, 7),
                Some(cfg.threads),
            )?;
            figures.episodes += runs.len();
            *sim_steps += runs.iter().map(|e| e.outcome.control_steps).sum::<usize>();
            let wins: Vec<Episode> = runs.into_iter().filter(|e| e.outcome.success).collect();
            figures.search_successes += wins.len();
            raw.extend(wins);
        }
    }
    if search {
        let start = st
            .search
            .clone()
            .or(prerequisite_search)
            .filter(|d| d.mean.len() == PlanDistribution::initial(&cfg.cem).mean.len())
            .unwrap_or_else(|| PlanDistribution::initial(&cfg.cem));
        let cem = CemConfig {
            seed: stream_seed(cfg.seed, generation, skill_index, 2),
            threads: Some(cfg.threads),
            ..cfg.cem.clone()
        };
        let tasks = &|i: usize, _: &mut rand_chacha::ChaCha8Rng| {
            variants[i % variants.len()].task.clone()
        };
        let result = cem_search_from(start, tasks, &ctx.robot, &ctx.sim, &cem, &mut |_| {})?;
        // Demonstrations should be consistent: the distribution's mean plan, run on every
        // variant, gives one behaviour per task; the samples' successes only top it up.
        let mean_plans = vec![result.distribution.mean.clone(); variants.len()];
        let mean_runs = run_plans(
            &mean_plans,
            tasks,
            &ctx.robot,
            &ctx.sim,
            cem.segment_s,
            cem.seed ^ 0x3EA9,
            cem.threads,
        )?;
        figures.episodes += result.episodes_run + mean_runs.len();
        *sim_steps += mean_runs
            .iter()
            .chain(&result.successes)
            .map(|e| e.outcome.control_steps)
            .sum::<usize>();
        let consistent: Vec<Episode> = mean_runs
            .into_iter()
            .filter(|e| e.outcome.success)
            .collect();
        figures.search_successes = consistent.len() + result.successes.len();
        let top_up = consistent.len() < variants.len() / 2;
        raw.extend(consistent);
        if top_up {
            raw.extend(result.successes);
        }
        st.search = Some(result.distribution);
    }
    st.episodes_used += figures.episodes;
    Ok((raw, figures))
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
        let figures = RefineFigures {
            raw: r.episodes_in,
            kept: r.kept,
            rms_jerk_before: r.rms_jerk_before,
            rms_jerk_after: r.rms_jerk_after,
            duration_before_s: r.duration_before_s,
            duration_after_s: r.duration_after_s,
        };
        (refined.golden, Some(figures))
    } else {
        (raw, None)
    };
    golden.truncate(max);
    if golden.is_empty() {
        return Ok((0, figures));
    }
    let mut writer = EpisodeWriter::new(ctx.dir.golden(generation, skill), "coevolve-evolve", &ctx.sim)?
        .with_robot_name(ctx.robot.model.name.clone());
    writer.write_batch(&golden)?;
    Ok((golden.len(), figures))
}
