//! `EvolveConfig`: everything a co-evolution run needs, saved as `config.json` in the run
//! directory so a resumed run continues with exactly the settings it started with.

use policy::rollout::EarlyStop;
use serde::{Deserialize, Serialize};
use sim::refine::RefineConfig;

use super::hard_tail::HardTailConfig;
use super::rl::LoopGrpo;
use crate::error::{Result, SkillsError};
use crate::explorer::CemConfig;
use crate::signals::SignalConfig;
use crate::synth::MutationScale;

/// How each generation picks the task variants it explores.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Curriculum {
    /// Synthesised variants around weakness signals, adversarial variants, revisits of known
    /// variants, and fresh draws.
    Coevolve,
    /// Fresh draws from each skill's task generator only (the ablation baseline).
    Uniform,
    /// Sampling For Learnability (Rutherford et al. 2024): fresh candidates scored by the
    /// policy's sampled success p̂ as p̂(1 − p̂), the top ones kept in a buffer, each
    /// generation half from the buffer and half fresh (`SflConfig`).
    Sfl,
    /// Robust Prioritized Level Replay (Jiang et al. 2021): each generation either replays
    /// tracked variants drawn by rank-prioritised score mixed with staleness, or scores fresh
    /// ones without learning from them (`PlrConfig`).
    Plr,
}

impl Curriculum {
    pub fn parse(text: &str) -> Result<Curriculum> {
        match text {
            "coevolve" => Ok(Curriculum::Coevolve),
            "uniform" => Ok(Curriculum::Uniform),
            "sfl" => Ok(Curriculum::Sfl),
            "plr" => Ok(Curriculum::Plr),
            other => Err(SkillsError::run(
                "curriculum",
                format!("unknown curriculum `{other}` (coevolve, uniform, sfl or plr)"),
            )),
        }
    }
}

/// Sampling For Learnability's settings. The paper scores N = 5,000 levels and keeps K = 100
/// (N/K = 50) every 50 updates; a generation here is one update period and its variants are
/// few, so N/K is scaled down to keep scoring within a generation's episode budget (every
/// scoring episode counts in the run's budget).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct SflConfig {
    /// Fresh candidates scored per generation, as a multiple of the generation's variants (N).
    pub candidates_per_variant: usize,
    /// Sampled rollouts per candidate for its p̂.
    pub attempts: usize,
    /// Buffer size K, as a multiple of the generation's variants.
    pub buffer_per_variant: usize,
    /// Share of a generation's variants drawn from the buffer (the rest fresh): 0.5.
    pub buffer_ratio: f64,
}

impl Default for SflConfig {
    fn default() -> Self {
        SflConfig {
            candidates_per_variant: 4,
            attempts: 2,
            buffer_per_variant: 1,
            buffer_ratio: 0.5,
        }
    }
}

impl SflConfig {
    fn validate(&self) -> Result<()> {
        if self.candidates_per_variant == 0 || self.attempts == 0 || self.buffer_per_variant == 0 {
            return Err(SkillsError::run(
                "sfl",
                "candidates_per_variant, attempts and buffer_per_variant must be at least 1",
            ));
        }
        if !(0.0..=1.0).contains(&self.buffer_ratio) {
            return Err(SkillsError::run("sfl.buffer_ratio", "must be in [0, 1]"));
        }
        Ok(())
    }
}

/// How Prioritized Level Replay scores a variant.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PlrScore {
    /// p̂(1 − p̂) of its latest evaluation.
    Learnability,
    /// Best success ever measured on it minus the latest (MaxMC's regret estimate).
    BestMinusCurrent,
}

/// Robust PLR's settings, with the published defaults (temperature 0.3, staleness 0.3).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct PlrConfig {
    pub score: PlrScore,
    /// Rank-prioritisation temperature β: P ∝ (1 / rank)^(1/β).
    pub temperature: f64,
    /// Staleness mixing ρ: P = (1 − ρ) P_score + ρ P_staleness.
    pub staleness: f64,
    /// Probability that a generation replays (when the buffer holds enough variants).
    pub replay_prob: f64,
}

impl Default for PlrConfig {
    fn default() -> Self {
        PlrConfig {
            score: PlrScore::Learnability,
            temperature: 0.3,
            staleness: 0.3,
            replay_prob: 0.5,
        }
    }
}

impl PlrConfig {
    fn validate(&self) -> Result<()> {
        if !(self.temperature.is_finite() && self.temperature > 0.0) {
            return Err(SkillsError::run("plr.temperature", "must be positive"));
        }
        for (field, v) in [
            ("plr.staleness", self.staleness),
            ("plr.replay_prob", self.replay_prob),
        ] {
            if !(0.0..=1.0).contains(&v) {
                return Err(SkillsError::run(field, "must be in [0, 1]"));
            }
        }
        Ok(())
    }
}

/// Task synthesis around weakness signals, and the adversarial generator.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct SynthConfig {
    /// Mutations tried per signal-marked variant.
    pub mutations_per_variant: usize,
    /// Most signal-marked variants used per skill and generation.
    pub max_marked: usize,
    /// Fresh candidates the adversarial generator screens with the greedy policy.
    pub adversarial_candidates: usize,
    /// Plans (or sampled policy rollouts) the explorer gets to solve a synthesised variant.
    pub validation_attempts: usize,
    /// Known variants tracked per skill (oldest dropped first).
    pub max_tracked: usize,
    pub signals: SignalConfig,
    pub mutation: MutationScale,
}

impl Default for SynthConfig {
    fn default() -> Self {
        SynthConfig {
            mutations_per_variant: 2,
            max_marked: 8,
            adversarial_candidates: 16,
            validation_attempts: 4,
            max_tracked: 256,
            signals: SignalConfig::default(),
            mutation: MutationScale::default(),
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct EvolveConfig {
    /// `default` (the embedded tree) or a TOML file.
    pub tree: String,
    pub robot: String,
    /// The task families' preset under the tree's overrides: `easy` or `wide`
    /// ([`sim::library::TaskRanges::preset`]).
    pub families: String,
    pub generations: usize,
    /// Stop after the generation in which this many episodes have been simulated (equal
    /// budgets for the ablation); none: run all generations.
    pub episode_budget: Option<usize>,
    /// Skills the run works towards; the loop explores only these and their prerequisites.
    /// Empty: the whole tree.
    pub targets: Vec<String>,
    pub seed: u64,
    /// Physics and libtorch threads.
    pub threads: usize,
    pub model_size: String,
    pub device: String,
    pub curriculum: Curriculum,
    /// SFL's settings (`curriculum: sfl`).
    #[serde(default)]
    pub sfl: SflConfig,
    /// Robust PLR's settings (`curriculum: plr`).
    #[serde(default)]
    pub plr: PlrConfig,
    /// Refine raw successes into golden demonstrations (off: train on raw successes).
    pub refine: bool,
    /// The refiner's settings in the loop: quicker re-timing than the refiner's conservative
    /// defaults (slow min-jerk profiles make state-only imitation harder).
    pub refine_config: RefineConfig,
    /// Sampling temperature of the policy's exploration rollouts.
    pub temperature: f64,
    /// Early stopping of the exploration rollouts with the success head (every
    /// `audit_every`-th rollout runs to the end to measure what cutting costs); none: off.
    pub early_stop: Option<EarlyStop>,
    /// Failed exploration rollouts banked per skill and generation: the success head's
    /// negatives (their actions are not imitated).
    pub failures_per_generation: usize,
    /// Most failed rollouts per skill used for training (newest first).
    pub max_failures_per_skill: usize,
    /// The search explorer; `iterations` per generation, continued across generations.
    pub cem: CemConfig,
    /// The explorer searches while the policy's sampled success on the task family's own
    /// variants (not the synthesised ones, chosen for being hard) is below this.
    pub search_below: f64,
    /// Most golden episodes a skill adds per generation.
    pub max_golden_per_generation: usize,
    /// Runs of the search's mean plan per generation (on the generation's variants, then on
    /// fresh ones): its successes are the skill's consistent demonstrations. 0 (configs
    /// written before it existed): twice the generation's variants.
    #[serde(default)]
    pub mean_plan_runs: usize,
    /// A tool skill's first search, continued from its prerequisite's plan (flip from scoop),
    /// keeps that plan's approach (its first half and yaw fixed) and searches the rest
    /// (`PlanDistribution::with_approach_fixed`); the plan that demonstrates is simplified in
    /// its goal half only. false (and configs written before it existed): every parameter is
    /// searched from the prerequisite's distribution.
    #[serde(default)]
    pub keep_prerequisite_approach: bool,
    /// Most failed rollouts of a zone skill (place, push) per generation relabelled in
    /// hindsight (`sim::hindsight`): the zone is moved under where the object came to rest, if
    /// the skill's task family could have drawn it there; the result is refined and re-validated
    /// like any success. 0 (and configs written before it existed): off.
    #[serde(default)]
    pub hindsight_per_generation: usize,
    /// Handoff rollouts per generation while a skill is searched (`evolve::handoff`): the
    /// policy does the skill's mastered prerequisite (lift, for place) and the search's plan
    /// takes over at its goal half. When at least a quarter succeed, they are the skill's
    /// demonstrations and the mean plan is not run. 0 (and configs written before it
    /// existed): off.
    #[serde(default)]
    pub handoff_runs: usize,
    /// Expert relabelling (`evolve::relabel`): takeover episodes per skill and generation in
    /// which the searched plan answers the states the greedy policy led to. 0 (the default,
    /// and configs written before it existed): off.
    #[serde(default)]
    pub relabel_runs: usize,
    /// Most relabelled episodes per skill used for training (newest first).
    #[serde(default = "default_max_relabelled")]
    pub max_relabelled_per_skill: usize,
    /// Most golden episodes per skill used for training (newest first).
    pub max_golden_per_skill: usize,
    /// BC batch size. 64 (not 128) in the default: half the training time per generation for
    /// about one more generation to master grasp (measured on the default run).
    pub batch_size: usize,
    pub lr: f64,
    /// Weight averaging in training (`policy::bc::BcConfig::ema_decay`): the policy a
    /// generation keeps is the moving average of its weights, not the last iterate. Off (0) by
    /// default: 0.99 made no measurable difference to held-out success when one generation's
    /// training was redone with and without it (`examples/train_probe`).
    pub ema_decay: f64,
    /// Each learned skill gets an equal share of every training batch, frontier skills this
    /// many shares (so a skill's weight does not depend on how much data it has banked: a new
    /// skill with a few demonstrations is not drowned, and the skill it builds on is not
    /// crowded out of the replay by older, larger pools). 0: frontier data is the main stream
    /// and mastered skills' data, pooled, `replay_fraction` of each batch.
    pub frontier_weight: f64,
    /// Each generation's training goes at least this many times over the frontier skills'
    /// samples (their share of the batches counted): the skills' step budgets train a small
    /// pool, this a grown one. 0: the budgets only.
    #[serde(default = "default_train_passes")]
    pub train_passes: f64,
    /// When a frontier skill has gone `plateau_generations` without a held-out gain (and no
    /// fresh start was tried in that window), the generation trains a fresh network for this
    /// many steps (at most `FRESH_MAX_BUDGETS` times its step budget, so a small tree stays
    /// small; at least `train_passes` passes over the whole pool, since it relearns the
    /// mastered skills too) instead of warm-starting: a network warm-started through reach,
    /// grasp and lift does not learn place from data a fresh one learns it from (9 of 128 held-out against
    /// 89, docs/loop-findings.md). 0 (the default: on the default run it did not shorten
    /// lift's mastery; `--fresh-start 3000` mastered place on seed 0): always warm-start.
    #[serde(default)]
    pub fresh_start_steps: usize,
    /// Share of each batch drawn from mastered skills' data (with `frontier_weight` 0).
    pub replay_fraction: f64,
    /// Roll back when a skill's held-out success falls more than this below its best.
    pub rollback_tolerance: f64,
    /// Retention (`evolve::decide`). When non-empty, a mastered skill must stay at or above its
    /// mastery threshold too; before a generation rolls back, these blends of the trained
    /// weights with the previous ones (weight `alpha` on the trained policy, WiSE-FT) are
    /// evaluated in order and the first without a fault is kept. Empty (and configs written
    /// before it existed): off, and mastered skills only roll back by the tolerance.
    #[serde(default)]
    pub retention_blends: Vec<f64>,
    /// With retention on, a mastered skill is forgotten (a fault) only when the upper end of
    /// the Wilson interval of its held-out success at this many standard deviations is below
    /// its mastery threshold: 1.28, below with one-sided 90 % confidence (on 128 episodes a
    /// skill that truly holds 0.8 is then called forgotten 10 % of the time, not 50 %). 0 (and
    /// configs written before it existed): the rate itself below the threshold.
    #[serde(default)]
    pub forget_z: f64,
    /// Held-out evaluation in stages of this many variants (`evolve::evaluate`): after each
    /// stage, evaluation stops if no threshold a decision needs (mastery; best minus the
    /// rollback tolerance) lies inside the Wilson interval of the success rate; else it goes on
    /// up to the skill's whole held-out set. 0 (and configs written before it existed): the
    /// whole set at once.
    #[serde(default)]
    pub heldout_stage: usize,
    /// Half-width of that interval in standard deviations (1.96: 95 %).
    #[serde(default = "default_heldout_z")]
    pub heldout_z: f64,
    /// Fresh variants per mastered skill (a set no decision sees), evaluated when a skill is
    /// mastered and in a run's last generation. 0 (and configs written before it existed): off.
    #[serde(default)]
    pub fresh_episodes: usize,
    /// The hard-tail evaluation in a run's last generation (`evolve::hard_tail`); none (the
    /// default, and configs written before it existed): off.
    #[serde(default)]
    pub hard_tail: Option<HardTailConfig>,
    /// GRPO after behaviour cloning on the frontier skills (`evolve::rl`); none (the default,
    /// and configs written before it existed): off.
    #[serde(default)]
    pub grpo: Option<LoopGrpo>,
    /// Generations without a held-out gain before synthesis doubles.
    pub plateau_generations: usize,
    pub synth: SynthConfig,
}

fn default_heldout_z() -> f64 {
    1.96
}

fn default_max_relabelled() -> usize {
    96
}

impl Default for EvolveConfig {
    fn default() -> Self {
        EvolveConfig {
            tree: "default".into(),
            robot: "ur5e".into(),
            families: "easy".into(),
            generations: 12,
            episode_budget: None,
            targets: vec!["lift".into()],
            seed: 0,
            threads: 2,
            model_size: "small".into(),
            device: "auto".into(),
            curriculum: Curriculum::Coevolve,
            sfl: SflConfig::default(),
            plr: PlrConfig::default(),
            refine: true,
            refine_config: RefineConfig {
                acceleration_limit: 20.0,
                jerk_limit: 400.0,
                gripper_dwell_s: 0.15,
                ..RefineConfig::default()
            },
            temperature: 0.3,
            early_stop: Some(EarlyStop {
                threshold: 0.1,
                patience_steps: 20,
                min_steps: 20,
                audit: false,
                audit_every: 4,
            }),
            failures_per_generation: 12,
            max_failures_per_skill: 24,
            cem: CemConfig {
                iterations: 3,
                min_successes: 16,
                max_iterations: 10,
                ..CemConfig::default()
            },
            search_below: 0.5,
            max_golden_per_generation: 96,
            mean_plan_runs: 64,
            keep_prerequisite_approach: true,
            hindsight_per_generation: 48,
            handoff_runs: 64,
            relabel_runs: 0,
            max_relabelled_per_skill: default_max_relabelled(),
            max_golden_per_skill: 240,
            batch_size: 64,
            lr: 1e-3,
            ema_decay: 0.0,
            frontier_weight: 2.0,
            train_passes: default_train_passes(),
            fresh_start_steps: 0,
            replay_fraction: 0.3,
            rollback_tolerance: 0.2,
            retention_blends: vec![0.7, 0.4],
            forget_z: 1.28,
            heldout_stage: 32,
            heldout_z: default_heldout_z(),
            fresh_episodes: 256,
            hard_tail: None,
            grpo: None,
            plateau_generations: 2,
            synth: SynthConfig::default(),
        }
    }
}

impl EvolveConfig {
    /// Checks every field; the error names the bad one.
    pub fn validate(&self) -> Result<()> {
        let bad = |field: &str, problem: &str| Err(SkillsError::run(field, problem.to_owned()));
        if self.generations == 0 {
            return bad("generations", "must be at least 1");
        }
        if self.threads == 0 {
            return bad("threads", "must be at least 1");
        }
        if self.cem.population == 0 || self.cem.elites == 0 || self.cem.keyframes == 0 {
            return bad("cem", "population, elites and keyframes must be at least 1");
        }
        if !(self.temperature > 0.0 && self.temperature.is_finite()) {
            return bad("temperature", "must be positive");
        }
        self.sfl.validate()?;
        self.plr.validate()?;
        if !(0.0..1.0).contains(&self.ema_decay) {
            return bad("ema_decay", "must be in [0, 1)");
        }
        if !(self.frontier_weight.is_finite() && self.frontier_weight >= 0.0) {
            return bad("frontier_weight", "must be a number >= 0");
        }
        if !(self.train_passes.is_finite() && self.train_passes >= 0.0) {
            return bad("train_passes", "must be a number >= 0");
        }
        if !(0.0..1.0).contains(&self.replay_fraction) {
            return bad("replay_fraction", "must be in [0, 1)");
        }
        if self
            .retention_blends
            .iter()
            .any(|a| !(a.is_finite() && *a > 0.0 && *a < 1.0))
        {
            return bad("retention_blends", "every blend weight must be in (0, 1)");
        }
        if !(self.forget_z.is_finite() && self.forget_z >= 0.0) {
            return bad(
                "forget_z",
                "must be 0 or a positive number of standard deviations",
            );
        }
        if !(self.heldout_z.is_finite() && self.heldout_z > 0.0) {
            return bad(
                "heldout_z",
                "must be a positive number of standard deviations",
            );
        }
        if self.batch_size == 0 || !(self.lr > 0.0 && self.lr.is_finite()) {
            return bad("batch_size/lr", "must be positive");
        }
        if let Some(grpo) = &self.grpo {
            if grpo.iterations == 0 || grpo.groups == 0 || grpo.group_size < 2 {
                return bad(
                    "grpo",
                    "needs iterations ≥ 1, groups ≥ 1 and group_size ≥ 2",
                );
            }
            if !(grpo.lr > 0.0 && grpo.max_kl > 0.0 && grpo.temperature > 0.0) {
                return bad("grpo", "lr, max_kl and temperature must be positive");
            }
        }
        self.refine_config
            .validate()
            .map_err(|e| SkillsError::run("refine_config", e.to_string()))?;
        if self.max_golden_per_generation == 0 || self.max_golden_per_skill == 0 {
            return bad("max_golden", "must be at least 1");
        }
        if let Some(stop) = &self.early_stop {
            if !(0.0..1.0).contains(&stop.threshold) {
                return bad("early_stop.threshold", "must be in [0, 1)");
            }
            if stop.patience_steps == 0 {
                return bad("early_stop.patience_steps", "must be at least 1");
            }
        }
        Ok(())
    }
}

fn default_train_passes() -> f64 {
    3.0
}
