//! One generation: explore the frontier skills → bank golden data → train the policy on the
//! pool (replaying mastered skills) → evaluate on held-out seeds → roll back on regression or
//! accept (checkpoint, mastery, unlock) → plateau check → synthesise validated variants.

use std::collections::BTreeMap;
use std::time::Instant;

use policy::Policy;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};
use sim::Episode;

use super::config::Curriculum;
use super::curriculum::stream_seed;
use super::decide::{decide, rate_of};
use super::explore::{bank, bank_failures, explore_skill};
use super::learner::{run_policy, train_generation, SkillData, TrainSpec};
use super::state::{GenerationRecord, RunState};
use super::synthesis::{synthesize, SynthesisReport};
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

/// `skill`'s fixed held-out evaluation variants and their seeds.
pub fn heldout_variants(skill: &Skill) -> (Vec<sim::task::TaskSpec>, Vec<u64>) {
    let h = &skill.def.heldout;
    let seeds: Vec<u64> = (0..h.episodes)
        .map(|i| sim::episode::episode_seed(h.seed, i))
        .collect();
    let tasks = seeds
        .iter()
        .map(|s| skill.sample_task(&mut ChaCha8Rng::seed_from_u64(*s)))
        .collect();
    (tasks, seeds)
}

/// Held-out success of `policy` on `skill`'s fixed evaluation variants.
pub fn heldout(ctx: &Context, policy: &Policy, skill: &Skill) -> Result<(usize, usize)> {
    let (tasks, seeds) = heldout_variants(skill);
    let runs = run_policy(
        policy,
        &ctx.robot,
        &tasks,
        &seeds,
        None,
        None,
        ctx.cfg.threads,
    )?;
    Ok((
        runs.iter().filter(|r| r.episode.outcome.success).count(),
        runs.len(),
    ))
}

fn newest(mut episodes: Vec<Episode>, max: usize) -> Vec<Episode> {
    let excess = episodes.len().saturating_sub(max);
    episodes.drain(..excess);
    episodes
}

/// Runs generation `g`; returns the policy to continue with and the generation's record.
pub fn run_generation(
    ctx: &Context,
    state: &mut RunState,
    policy: Option<Policy>,
    g: usize,
    events: &mut dyn FnMut(Event<'_>),
) -> Result<(Option<Policy>, GenerationRecord)> {
    let start = Instant::now();
    let cfg = &ctx.cfg;
    let mastered = state.mastered();
    let frontier: Vec<(usize, &Skill)> = ctx
        .tree
        .skills
        .iter()
        .enumerate()
        .filter(|(_, s)| ctx.closure.contains(s.name()))
        .filter(|(_, s)| !mastered.contains(s.name()))
        .filter(|(_, s)| s.def.prerequisites.iter().all(|p| mastered.contains(p)))
        .collect();
    let mut record = GenerationRecord {
        generation: g,
        frontier: frontier.iter().map(|(_, s)| s.name().to_owned()).collect(),
        ..GenerationRecord::default()
    };
    // Mastered skills that regressed last generation get fresh demonstrations too.
    let refresh: Vec<(usize, &Skill)> = ctx
        .tree
        .skills
        .iter()
        .enumerate()
        .filter(|(_, s)| ctx.closure.contains(s.name()))
        .filter(|(_, s)| {
            state
                .skills
                .get(s.name())
                .is_some_and(|st| st.mastered() && st.regressed)
        })
        .collect();
    let mut sim_steps = 0usize;
    let explore_start = Instant::now();
    for &(si, skill) in frontier.iter().chain(&refresh) {
        events(Event::Phase {
            generation: g,
            skill: skill.name(),
            phase: "explore",
        });
        let fallback = skill
            .def
            .prerequisites
            .iter()
            .find_map(|p| state.skills.get(p).and_then(|s| s.search.clone()));
        let Some(st) = state.skills.get_mut(skill.name()) else {
            continue;
        };
        let found = explore_skill(ctx, skill, si, st, policy.as_ref(), g, fallback)?;
        let mut figures = found.figures;
        sim_steps += figures.control_steps;
        let (added, refine) = bank(
            ctx,
            skill.name(),
            found.successes,
            g,
            cfg.max_golden_per_generation,
        )?;
        st.golden += added;
        figures.golden_added = added;
        figures.refine = refine;
        let failed = bank_failures(ctx, skill.name(), &found.failures, g)?;
        st.failures += failed;
        figures.failures_added = failed;
        record.skills.insert(skill.name().to_owned(), figures);
    }
    let explore_s = explore_start.elapsed().as_secs_f64();
    record.explore_s = explore_s;

    // Train on the pool: frontier skills are learned, mastered ones are replayed.
    let mut pool = Vec::new();
    let mut steps = 0;
    let mut failures = 0;
    let mut learned = Vec::new();
    for skill in ctx
        .tree
        .skills
        .iter()
        .filter(|s| ctx.closure.contains(s.name()))
    {
        let Some(st) = state.skills.get(skill.name()) else {
            continue;
        };
        if st.golden == 0 {
            continue;
        }
        let mut data = newest(
            ctx.dir.read_golden(skill.name(), g + 1)?,
            cfg.max_golden_per_skill,
        );
        if st.failures > 0 {
            let negatives = newest(
                ctx.dir.read_failures(skill.name(), g + 1)?,
                cfg.max_failures_per_skill,
            );
            failures += negatives.len();
            data.extend(negatives);
        }
        learned.push(skill.name().to_owned());
        if !st.mastered() {
            steps += skill.def.budget.train_steps;
        }
        pool.push(SkillData {
            skill: skill.name().to_owned(),
            episodes: data,
            frontier: !st.mastered() || st.regressed,
        });
    }
    let mut candidate = None;
    if pool.iter().any(|d| d.frontier) {
        events(Event::Phase {
            generation: g,
            skill: "",
            phase: "train",
        });
        let spec = TrainSpec {
            model: &ctx.model,
            tokenizer: &ctx.tokenizer,
            robot: &ctx.robot,
            sim: &ctx.sim,
            device: ctx.device,
            steps,
            batch_size: cfg.batch_size,
            lr: cfg.lr,
            replay_fraction: cfg.replay_fraction,
            frontier_weight: cfg.frontier_weight,
            ema_decay: cfg.ema_decay,
            seed: stream_seed(cfg.seed, g, 0, 6),
        };
        let (p, mut train) = train_generation(policy.as_ref(), &pool, &spec)?;
        train.failures = failures;
        record.train = Some(train);
        candidate = Some(p);
    }

    // Evaluate the candidate on held-out seeds; roll back on a regression.
    let mut evaluations = Evaluations {
        generation: g,
        ..Evaluations::default()
    };
    let mut policy = policy;
    let evaluate_start = Instant::now();
    if let Some(trained) = candidate {
        events(Event::Phase {
            generation: g,
            skill: "",
            phase: "evaluate",
        });
        let decision = decide(ctx, state, policy.as_ref(), trained, &learned)?;
        let new_policy = decision.policy;
        evaluations.skills = decision.rates;
        let rate = |name: &str| rate_of(&evaluations.skills, name);
        let regressed = !decision.faults.is_empty();
        evaluations.rolled_back = regressed;
        record.rolled_back = regressed;
        record.retention = decision.retention;
        for (name, figures) in &mut record.skills {
            if evaluations.skills.contains_key(name) {
                figures.heldout_success = Some(rate(name));
            }
        }
        if regressed {
            state.rollbacks += 1;
            for name in &decision.faults {
                if let Some(st) = state.skills.get_mut(name) {
                    st.regressed = true;
                }
            }
        } else {
            state
                .skills
                .values_mut()
                .for_each(|st| st.regressed = false);
            for name in evaluations.skills.keys() {
                let Some(skill) = ctx.tree.get(name) else {
                    continue;
                };
                let Some(st) = state.skills.get_mut(name) else {
                    continue;
                };
                let r = rate(name);
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
            let path = ctx.dir.checkpoint(g);
            policy::checkpoint::save(&new_policy, &path)?;
            state.checkpoint = Some(format!(
                "checkpoints/{}",
                super::run_dir::generation_name(g)
            ));
            policy = Some(new_policy);
        }
    }
    ctx.dir.write_json(&ctx.dir.evaluation(g), &evaluations)?;
    record.evaluate_s = evaluate_start.elapsed().as_secs_f64();

    // Plateau: no held-out gain for a while → synthesise more.
    for &(_, skill) in &frontier {
        if let Some(st) = state.skills.get_mut(skill.name()) {
            if !st.mastered() && st.trained && g >= st.best_generation + cfg.plateau_generations {
                st.synth_multiplier = (st.synth_multiplier * 2).min(8);
            }
        }
    }

    // Synthesis around the weaknesses of the (accepted) policy.
    let synthesis_start = Instant::now();
    let mut reports: Vec<SynthesisReport> = Vec::new();
    if cfg.curriculum == Curriculum::Coevolve {
        for &(si, skill) in &frontier {
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
            let report = synthesize(ctx, skill, si, st, policy.as_ref(), g)?;
            if let Some(figures) = record.skills.get_mut(skill.name()) {
                figures.synthesized = report.validated.clone();
                figures.rejected = report.rejected;
                figures.episodes += report.episodes;
            }
            reports.push(report);
        }
    }
    ctx.dir.write_json(&ctx.dir.signals(g), &reports)?;
    record.synthesis_s = synthesis_start.elapsed().as_secs_f64();

    // Every skill with data or an evaluation gets a line (mastered skills are replayed and
    // evaluated without being explored).
    for (name, st) in &state.skills {
        let evaluated = evaluations
            .skills
            .get(name)
            .map(|(ok, n)| *ok as f64 / (*n).max(1) as f64);
        if st.golden == 0 && evaluated.is_none() && !record.skills.contains_key(name) {
            continue;
        }
        let figures = record.skills.entry(name.clone()).or_default();
        figures.golden_total = st.golden;
        figures.mastered = st.mastered();
        if figures.heldout_success.is_none() {
            figures.heldout_success = evaluated;
        }
    }
    let episodes: usize = record.skills.values().map(|s| s.episodes).sum();
    state.episodes_simulated += episodes;
    record.episodes_simulated = state.episodes_simulated;
    record.mastered = state.mastered().into_iter().collect();
    record.sim_steps_per_sec = sim_steps as f64 / explore_s.max(1e-9);
    record.wall_s = start.elapsed().as_secs_f64();
    Ok((policy, record))
}
