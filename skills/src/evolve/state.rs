//! What a run remembers between generations (`state.json`) and what it reports per generation
//! (`metrics.jsonl`). The state file is the commit point of a generation: it is written last,
//! atomically, with a SHA-256 of its content, so a run killed at any moment resumes from the
//! last generation whose state was committed.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};
use sim::task::TaskSpec;

use super::decide::Retention;
use super::relabel::RelabelFigures;
use super::rl::GrpoFigures;
use crate::explorer::PlanDistribution;
use crate::signals::VariantHistory;
use policy::rollout::EarlyStopReport;

/// Where a task variant came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Origin {
    Generator,
    Forgetting,
    Boundary,
    Rare,
    Adversarial,
}

impl Origin {
    pub fn name(self) -> &'static str {
        match self {
            Origin::Generator => "generator",
            Origin::Forgetting => "forgetting",
            Origin::Boundary => "boundary",
            Origin::Rare => "rare",
            Origin::Adversarial => "adversarial",
        }
    }
}

/// A task variant the curriculum keeps track of.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TrackedVariant {
    pub task: TaskSpec,
    pub seed: u64,
    pub origin: Origin,
    pub history: VariantHistory,
}

/// One skill's progress.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SkillState {
    /// Best held-out success so far and the generation it was measured.
    pub best_heldout: f64,
    pub best_generation: usize,
    /// Held-out success per generation in which the skill was evaluated.
    pub heldout: Vec<(usize, f64)>,
    pub mastered_at: Option<usize>,
    /// Simulated episodes spent on the skill (exploration, search, synthesis, validation).
    pub episodes_used: usize,
    /// Golden episodes held.
    pub golden: usize,
    /// Failed policy rollouts held (the success head's negatives). Left out of the file while
    /// zero, so states written before it existed still match their seal.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub failures: usize,
    /// Expert-relabelled episodes held. Left out of the file while zero.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub relabelled: usize,
    /// The search explorer's plan distribution, continued across generations.
    pub search: Option<PlanDistribution>,
    /// The handoff search's distribution (`evolve::handoff`: plans that take over from the
    /// policy once it has done the prerequisite), continued across generations.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub handoff_search: Option<PlanDistribution>,
    /// Variants the policy has been measured on (signals are computed over these).
    pub tracked: Vec<TrackedVariant>,
    /// Validated synthesised variants waiting to be explored next generation.
    pub pending: Vec<TrackedVariant>,
    /// SFL's buffer: the most learnable of the latest scored candidates. Left out of the file
    /// while empty.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub buffer: Vec<TrackedVariant>,
    /// Synthesis multiplier (doubles on a plateau, resets on a gain).
    pub synth_multiplier: usize,
    /// The policy has been trained on data of this skill.
    pub trained: bool,
    /// A mastered skill whose regression rolled the last generation back: it is explored again
    /// and weighted like the frontier in training until a generation is accepted. Left out of
    /// the file while false.
    #[serde(default, skip_serializing_if = "is_false")]
    pub regressed: bool,
}

fn is_false(b: &bool) -> bool {
    !*b
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

impl SkillState {
    /// Trained, not mastered, and no held-out gain for `window` generations up to `g`.
    pub fn stalled(&self, g: usize, window: usize) -> bool {
        !self.mastered() && self.trained && g >= self.best_generation + window
    }

    pub fn mastered(&self) -> bool {
        self.mastered_at.is_some()
    }
}

pub const STATE_FORMAT: &str = "coevolve-run-state";
pub const STATE_VERSION: u32 = 1;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunState {
    pub format: String,
    pub version: u32,
    pub completed_generations: usize,
    pub skills: BTreeMap<String, SkillState>,
    /// Checkpoint of the current policy, relative to the run directory.
    pub checkpoint: Option<String>,
    pub episodes_simulated: usize,
    pub rollbacks: usize,
    pub wall_s: f64,
    /// The last generation that trained a fresh network on a plateau (`pool::gather`). Left
    /// out of the file while None.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fresh_at: Option<usize>,
}

impl RunState {
    pub fn new(skills: impl IntoIterator<Item = String>) -> RunState {
        RunState {
            format: STATE_FORMAT.into(),
            version: STATE_VERSION,
            completed_generations: 0,
            skills: skills
                .into_iter()
                .map(|s| {
                    (
                        s,
                        SkillState {
                            synth_multiplier: 1,
                            ..SkillState::default()
                        },
                    )
                })
                .collect(),
            checkpoint: None,
            episodes_simulated: 0,
            rollbacks: 0,
            wall_s: 0.0,
            fresh_at: None,
        }
    }

    pub fn mastered(&self) -> BTreeSet<String> {
        self.skills
            .iter()
            .filter(|(_, s)| s.mastered())
            .map(|(n, _)| n.clone())
            .collect()
    }
}

/// Refinement figures of one skill in one generation.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct RefineFigures {
    pub raw: usize,
    pub kept: usize,
    /// Kept episodes banked raw because the raw trajectory was shorter than its re-timing.
    pub raw_was_shorter: usize,
    /// Successes banked raw because their smoothed replay failed re-validation.
    pub raw_unrefined: usize,
    pub rms_jerk_before: f64,
    pub rms_jerk_after: f64,
    pub duration_before_s: f64,
    pub duration_after_s: f64,
}

/// One skill in one generation.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SkillGeneration {
    pub explored: bool,
    pub heldout_success: Option<f64>,
    /// Held-out episodes the sequential evaluation ran (`evolve::evaluate`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub heldout_episodes: Option<usize>,
    /// Success on fresh variants no decision sees (mastered skills: when mastered, and in the
    /// run's last generation), and how many were run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fresh_success: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fresh_episodes: Option<usize>,
    /// Success of the policy's sampled exploration rollouts.
    pub policy_sampled_success: Option<f64>,
    /// What early stopping did to those rollouts.
    #[serde(default)]
    pub early_stop: Option<EarlyStopReport>,
    /// Failed policy rollouts banked as the success head's negatives.
    #[serde(default)]
    pub failures_added: usize,
    pub search_successes: usize,
    /// Exploration episodes (policy rollouts, search, demonstrations) that ended in an
    /// integrity failure: a fragile object (the pancake) broken.
    #[serde(default)]
    pub broken: usize,
    /// Failed rollouts relabelled in hindsight (the goal zone moved under where the object came
    /// to rest) and passed on to refinement as successes.
    #[serde(default)]
    pub hindsight: usize,
    /// Handoff rollouts (the policy does the prerequisite, the search's plan the rest): run,
    /// handed over, succeeded.
    #[serde(default)]
    pub handoff: Option<HandoffFigures>,
    /// Expert relabelling of the policy's states (`evolve::relabel`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub relabel: Option<RelabelFigures>,
    /// How the search's tool plan that demonstrates was chosen and simplified.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub demo_plan: Option<DemoPlanFigures>,
    pub episodes: usize,
    /// Simulated control steps of the exploration (throughput).
    pub control_steps: usize,
    pub golden_added: usize,
    pub golden_total: usize,
    /// Synthesised variants that passed validation, per origin.
    pub synthesized: BTreeMap<String, usize>,
    /// Synthesised variants that the explorer could not solve (rejected).
    pub rejected: usize,
    pub refine: Option<RefineFigures>,
    pub mastered: bool,
    /// Robust PLR's exploratory generation: fresh variants scored by the policy's rollouts,
    /// nothing searched or banked. Left out of the file while false.
    #[serde(default, skip_serializing_if = "is_false")]
    pub score_only: bool,
    /// Rollouts that only scored variants for the curriculum (SFL's candidates); counted in
    /// `episodes`. Left out of the file while zero.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub scoring_episodes: usize,
    /// The hard-tail evaluation (a run's last generation, when on).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hard_tail: Option<super::hard_tail::HardTailFigures>,
}

/// What the handoff rollouts of one skill and generation did.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct HandoffFigures {
    pub runs: usize,
    /// The prerequisite's predicate held and the plan took over.
    pub handed_over: usize,
    pub successes: usize,
}

/// The tool plan that demonstrates (`evolve::explore`): which candidate won on the probe
/// variants (0: the search's mean, i: the i-th latest success's plan) and what simplifying it
/// did.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct DemoPlanFigures {
    pub champion: usize,
    pub probe: usize,
    pub wins_mean: usize,
    pub wins_before: usize,
    pub wins_after: usize,
    pub dropped: usize,
    pub duration_before_s: f64,
    pub duration_after_s: f64,
}

/// Training in one generation.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct TrainFigures {
    pub steps: usize,
    pub final_nll: f64,
    pub samples_per_sec: f64,
    pub wall_s: f64,
    /// Episodes trained on, and how many of them were failed rollouts (value-head negatives).
    pub episodes: usize,
    #[serde(default)]
    pub failures: usize,
    /// A fresh network, not a warm start (the first generation's, or a plateau's).
    #[serde(default)]
    pub fresh: bool,
}

/// One line of `metrics.jsonl`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct GenerationRecord {
    pub generation: usize,
    pub frontier: Vec<String>,
    pub mastered: Vec<String>,
    pub skills: BTreeMap<String, SkillGeneration>,
    pub train: Option<TrainFigures>,
    pub rolled_back: bool,
    pub episodes_simulated: usize,
    /// Simulated control steps per second over the generation's exploration: every episode
    /// it ran (policy rollouts, search candidates and probes, the refiner's re-validation),
    /// from `sim::throughput`'s counters (the `explore` entry of `phases`).
    pub sim_steps_per_sec: f64,
    pub wall_s: f64,
    /// Wall time of the phases: exploration (with banking), held-out evaluation, synthesis
    /// (training's is in `train`).
    #[serde(default)]
    pub explore_s: f64,
    #[serde(default)]
    pub evaluate_s: f64,
    #[serde(default)]
    pub synthesis_s: f64,
    /// Present when the trained policy had a fault and blends with the previous weights were
    /// tried (`evolve::decide`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retention: Option<Retention>,
    /// GRPO after behaviour cloning (`evolve::rl`), per skill it ran for.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub grpo: Vec<GrpoFigures>,
    /// Where the generation's time went, phase by phase (`sim::throughput`): `reference` (a
    /// plain scripted batch at the run's threads, `evolve::reference`), `explore`, `train`,
    /// `grpo`, `evaluate`, `synthesis`, `fresh`. Timings: never part of a decision.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub phases: Vec<sim::throughput::PhaseFigures>,
}

impl GenerationRecord {
    /// How the generation ended, in words: "rolled back", "blend 0.7" (the trained policy had
    /// a fault and a blend with the previous weights was kept), or "accepted".
    pub fn outcome(&self) -> String {
        match &self.retention {
            _ if self.rolled_back => "rolled back".to_owned(),
            Some(Retention {
                kept: Some(alpha), ..
            }) => format!("blend {alpha}"),
            _ => "accepted".to_owned(),
        }
    }
}
