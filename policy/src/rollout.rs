//! Policy rollouts: many episodes (`EpisodeStepper`) run by a [`Driver`] on a rayon pool.
//! Sampling noise comes from each episode's own seed and a row's network output from its own
//! observation, so results do not depend on the thread count.

use std::sync::Arc;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;
use robots::Manipulator;
use serde::{Deserialize, Serialize};

use crate::config::ObsMode;
use crate::error::{PolicyError, Result};
use crate::executor::{rollout_on, RolloutExecutor};
use crate::features::{self, ACTION_DIM};
use crate::host::HostOutput;
use crate::lockstep::{DrivenEpisode, Driver};
use crate::obs::{Featurizer, ObsRow, Stats};
use crate::policy::Policy;
use sim::{Episode, EpisodeStepper, Observation, SimConfig, TaskSpec};

/// How actions are chosen from the action Gaussian.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum Sampling {
    /// The mean (evaluation, deployment).
    Greedy,
    /// mean + temperature · std · N(0, 1) (exploration, GRPO).
    Sample { temperature: f64 },
}

/// One policy decision, kept for reinforcement learning.
#[derive(Clone, Debug)]
pub struct Transition {
    pub row: ObsRow,
    /// The executed action, normalised.
    pub action: [f32; ACTION_DIM],
    /// Its log-probability under the sampling distribution.
    pub logp: f32,
    /// Predicted success probability at this step.
    pub value: f32,
}

/// An episode run by the policy.
#[derive(Debug)]
pub struct PolicyRollout {
    pub episode: Episode,
    pub transitions: Vec<Transition>,
    /// The control step at which early stopping cut (or, auditing, would have cut) it.
    pub cut_at: Option<usize>,
    /// Early stopping audited it: it ran to the end whatever its predicted success.
    pub audited: bool,
}

/// Early stopping with the success head: a rollout whose predicted success stays below
/// `threshold` for `patience_steps` consecutive steps (after `min_steps`) is cut.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct EarlyStop {
    pub threshold: f64,
    pub patience_steps: usize,
    pub min_steps: usize,
    /// Only mark where rollouts would be cut and run them to the end (to measure how many cut
    /// rollouts would have succeeded).
    pub audit: bool,
    /// Also audit every k-th rollout (index a multiple of k) while cutting the others: a
    /// measured sample of what cutting costs. 0: none.
    #[serde(default)]
    pub audit_every: usize,
}

impl EarlyStop {
    /// Whether rollout `index` runs to the end (its cut point only marked).
    pub fn audits(&self, index: usize) -> bool {
        self.audit || (self.audit_every > 0 && index.is_multiple_of(self.audit_every))
    }
}

impl Default for EarlyStop {
    fn default() -> Self {
        EarlyStop {
            threshold: 0.05,
            patience_steps: 25,
            min_steps: 25,
            audit: false,
            audit_every: 0,
        }
    }
}

/// What early stopping did to a set of rollouts.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct EarlyStopReport {
    pub rollouts: usize,
    /// Rollouts whose predicted success stayed under the threshold (cut, or audited past it).
    pub cut: usize,
    /// Control steps actually simulated.
    pub steps_run: usize,
    /// Cut rollouts that were audited (run to the end anyway).
    pub audited_cut: usize,
    /// Audited cut rollouts: the steps they ran after their cut points (the compute cutting
    /// saves), and how many went on to succeed (the cost of the cut).
    pub steps_after_cut: usize,
    pub cut_but_succeeded: usize,
}

impl EarlyStopReport {
    pub fn of(runs: &[PolicyRollout]) -> EarlyStopReport {
        let audited: Vec<&PolicyRollout> = runs
            .iter()
            .filter(|r| r.audited && r.cut_at.is_some())
            .collect();
        EarlyStopReport {
            rollouts: runs.len(),
            cut: runs.iter().filter(|r| r.cut_at.is_some()).count(),
            steps_run: runs.iter().map(|r| r.episode.outcome.control_steps).sum(),
            audited_cut: audited.len(),
            steps_after_cut: audited
                .iter()
                .map(|r| {
                    r.episode
                        .outcome
                        .control_steps
                        .saturating_sub(r.cut_at.unwrap_or(0) + 1)
                })
                .sum(),
            cut_but_succeeded: audited.iter().filter(|r| r.episode.outcome.success).count(),
        }
    }

    /// Sums two reports.
    pub fn add(&mut self, other: &EarlyStopReport) {
        self.rollouts += other.rollouts;
        self.cut += other.cut;
        self.steps_run += other.steps_run;
        self.audited_cut += other.audited_cut;
        self.steps_after_cut += other.steps_after_cut;
        self.cut_but_succeeded += other.cut_but_succeeded;
    }

    /// Steps saved by the rollouts cut for real, estimated from the audited ones.
    pub fn steps_saved_estimate(&self) -> f64 {
        if self.audited_cut == 0 {
            return 0.0;
        }
        let per_cut = self.steps_after_cut as f64 / self.audited_cut as f64;
        per_cut * (self.cut - self.audited_cut) as f64
    }

    /// Share of cut rollouts that would have succeeded, measured on the audited ones.
    pub fn cut_success_rate(&self) -> Option<f64> {
        (self.audited_cut > 0).then(|| self.cut_but_succeeded as f64 / self.audited_cut as f64)
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RolloutConfig {
    pub sampling: Sampling,
    /// Worker threads (physics, and host inference for a state policy).
    pub threads: usize,
    /// Keep per-step transitions (needed by GRPO).
    pub keep_transitions: bool,
    /// Cut hopeless rollouts early (success head), or audit where it would.
    pub early_stop: Option<EarlyStop>,
}

/// The simulator settings a policy runs under: its training settings, without cameras when it
/// does not look at them.
pub fn sim_config_for(policy: &Policy) -> Arc<SimConfig> {
    let mut sim = policy.meta.sim.clone();
    if policy.featurizer.model.obs == ObsMode::State {
        sim.cameras.clear();
    }
    Arc::new(sim)
}

fn normal(rng: &mut ChaCha8Rng) -> f64 {
    // Box–Muller.
    let u1: f64 = rng.gen_range(f64::EPSILON..1.0);
    let u2: f64 = rng.gen();
    (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
}

/// The action from the network's normalised first-action `mean` (`actions`: the policy's
/// action statistics): the mean itself, or a draw
/// around it (with the draw's log-probability); returns the simulator action, the normalised
/// action and the log-probability.
pub fn choose_action(
    actions: &Stats,
    mean: &[f32; ACTION_DIM],
    log_std: &[f32; ACTION_DIM],
    sampling: Sampling,
    rng: &mut ChaCha8Rng,
) -> (sim::Action, [f32; ACTION_DIM], f64) {
    let mut a = [0.0f32; ACTION_DIM];
    let mut logp = 0.0f64;
    for d in 0..ACTION_DIM {
        let log_std = f64::from(log_std[d]);
        a[d] = match sampling {
            Sampling::Greedy => mean[d],
            Sampling::Sample { temperature } => {
                let std = temperature * log_std.exp();
                let z = normal(rng);
                logp += -0.5 * z * z - std.ln() - 0.5 * (std::f64::consts::TAU).ln();
                (f64::from(mean[d]) + std * z) as f32
            }
        };
    }
    let mut sim_units = [0.0f32; ACTION_DIM];
    for (i, o) in sim_units.iter_mut().enumerate() {
        *o = a[i] * actions.std[i] + actions.mean[i];
    }
    (features::to_sim_action(&sim_units), a, logp)
}

/// What rollouts of `policy` start from: the robot checked against the policy's, a rayon pool
/// of `threads`, and one `EpisodeStepper` per (task, seed) under the policy's simulator
/// settings, the first with episode index `first_index`.
pub fn start_episodes(
    policy: &Policy,
    robot: &Arc<Manipulator>,
    episodes: &[(&TaskSpec, u64)],
    first_index: usize,
    threads: usize,
) -> Result<(rayon::ThreadPool, Vec<EpisodeStepper>)> {
    if robot.model.model_hash != policy.meta.robot_model_hash {
        return Err(PolicyError::Data(format!(
            "the policy was trained for robot `{}` (model hash {}), not `{}` ({})",
            policy.meta.robot_name,
            policy.meta.robot_model_hash,
            robot.model.name,
            robot.model.model_hash
        )));
    }
    let sim = sim_config_for(policy);
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads.max(1))
        .build()
        .map_err(|e| PolicyError::config("threads", e.to_string()))?;
    let steppers: Vec<EpisodeStepper> = pool.install(|| {
        episodes
            .par_iter()
            .enumerate()
            .map(|(i, (task, seed))| {
                EpisodeStepper::new(robot, task, &sim, first_index + i, *seed, false)
            })
            .collect::<sim::Result<Vec<_>>>()
    })?;
    Ok((pool, steppers))
}

/// One rollout in progress: its episode, sampling noise, early-stopping state and transitions.
struct Runner<'a> {
    featurizer: &'a Featurizer,
    actions: &'a Stats,
    cfg: &'a RolloutConfig,
    stepper: EpisodeStepper,
    rng: ChaCha8Rng,
    transitions: Vec<Transition>,
    low_value_steps: usize,
    cut_at: Option<usize>,
    audited: bool,
}

impl DrivenEpisode for Runner<'_> {
    fn running(&self) -> bool {
        !(self.stepper.is_done() || (!self.audited && self.cut_at.is_some()))
    }

    fn query(&self) -> Option<(&Observation, &TaskSpec)> {
        Some((self.stepper.observation(), self.stepper.task()))
    }

    fn advance(&mut self, out: Option<&HostOutput>, log_std: &[f32; ACTION_DIM]) -> Result<()> {
        let out =
            out.ok_or_else(|| PolicyError::Data("a rollout step without the network".into()))?;
        let (action, a, logp) = choose_action(
            self.actions,
            &out.mean,
            log_std,
            self.cfg.sampling,
            &mut self.rng,
        );
        let step = self.stepper.steps_taken();
        if let Some(stop) = &self.cfg.early_stop {
            if step >= stop.min_steps && f64::from(out.value) < stop.threshold {
                self.low_value_steps += 1;
            } else {
                self.low_value_steps = 0;
            }
            if self.cut_at.is_none() && self.low_value_steps >= stop.patience_steps.max(1) {
                self.cut_at = Some(step);
            }
        }
        if self.cfg.keep_transitions {
            let row = self
                .featurizer
                .row(self.stepper.observation(), self.stepper.task())?;
            self.transitions.push(Transition {
                row,
                action: a,
                logp: logp as f32,
                value: out.value,
            });
        }
        self.stepper.step(action);
        Ok(())
    }
}

/// Runs `tasks[i]` with seed `seeds[i]` for every i ([`Driver`]: each on its own on the host
/// for a state policy, in lockstep through libtorch for an image policy).
pub fn rollout(
    policy: &Policy,
    robot: &Arc<Manipulator>,
    tasks: &[TaskSpec],
    seeds: &[u64],
    cfg: &RolloutConfig,
) -> Result<Vec<PolicyRollout>> {
    rollout_from(policy, robot, tasks, seeds, 0, cfg)
}

/// Rollouts `first_index..` of a larger set (episode indices and early-stopping audits count
/// from `first_index`): any split of a set into such parts gives the set's rollouts.
pub fn rollout_from(
    policy: &Policy,
    robot: &Arc<Manipulator>,
    tasks: &[TaskSpec],
    seeds: &[u64],
    first_index: usize,
    cfg: &RolloutConfig,
) -> Result<Vec<PolicyRollout>> {
    if tasks.len() != seeds.len() {
        return Err(PolicyError::Data(
            "rollout: one seed per task needed".into(),
        ));
    }
    let episodes: Vec<(&TaskSpec, u64)> = tasks.iter().zip(seeds.iter().copied()).collect();
    let (pool, steppers) = start_episodes(policy, robot, &episodes, first_index, cfg.threads)?;
    let mut runners: Vec<Runner> = steppers
        .into_iter()
        .zip(seeds)
        .enumerate()
        .map(|(i, (stepper, seed))| Runner {
            featurizer: &policy.featurizer,
            actions: &policy.normalizer.actions,
            cfg,
            stepper,
            rng: ChaCha8Rng::seed_from_u64(seed ^ 0x5EED_AC71_0000_0001),
            transitions: Vec::new(),
            low_value_steps: 0,
            cut_at: None,
            audited: cfg
                .early_stop
                .as_ref()
                .is_some_and(|e| e.audits(first_index + i)),
        })
        .collect();
    Driver::new(policy)?.run(&pool, &mut runners)?;
    Ok(runners
        .into_iter()
        .map(|r| PolicyRollout {
            episode: r.stepper.finish(),
            transitions: r.transitions,
            cut_at: r.cut_at,
            audited: r.audited,
        })
        .collect())
}

/// Held-out evaluation figures.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct EvalReport {
    pub skill: String,
    pub episodes: usize,
    pub successes: usize,
    pub success_rate: f64,
    pub mean_return: f64,
    pub mean_steps: f64,
    pub seed: u64,
    /// SHA-256 of every recorded number of the episodes (equal wherever they ran).
    #[serde(default)]
    pub trajectory_hash: String,
    pub wall_s: f64,
}

/// Evaluates the policy greedily on `episodes` task variants of `skill` drawn from the
/// default task family with seed `seed` (the same variants `coevolve sim` draws for that seed).
pub fn evaluate(
    policy: &Policy,
    robot: &Arc<Manipulator>,
    skill: sim::SkillKind,
    episodes: usize,
    seed: u64,
    threads: usize,
) -> Result<EvalReport> {
    evaluate_episodes(policy, robot, skill, episodes, seed, threads, None).map(|(report, _)| report)
}

/// `evaluate`, with the evaluation's episodes (to store and replay them).
pub fn evaluate_episodes(
    policy: &Policy,
    robot: &Arc<Manipulator>,
    skill: sim::SkillKind,
    episodes: usize,
    seed: u64,
    threads: usize,
    executor: Option<&dyn RolloutExecutor>,
) -> Result<(EvalReport, Vec<Episode>)> {
    let start = std::time::Instant::now();
    let (tasks, seeds) = task_variants(skill, episodes, seed, robot);
    let cfg = RolloutConfig {
        sampling: Sampling::Greedy,
        threads,
        keep_transitions: false,
        early_stop: None,
    };
    let runs = rollout_on(executor, policy, robot, &tasks, &seeds, &cfg)?;
    let successes = runs.iter().filter(|r| r.episode.outcome.success).count();
    let n = runs.len().max(1) as f64;
    let report = EvalReport {
        skill: skill.name().to_owned(),
        episodes: runs.len(),
        successes,
        success_rate: successes as f64 / n,
        mean_return: runs
            .iter()
            .map(|r| r.episode.outcome.episode_return)
            .sum::<f64>()
            / n,
        mean_steps: runs
            .iter()
            .map(|r| r.episode.outcome.control_steps as f64)
            .sum::<f64>()
            / n,
        seed,
        trajectory_hash: sim::episode::trajectory_hash(runs.iter().map(|r| &r.episode)),
        wall_s: start.elapsed().as_secs_f64(),
    };
    Ok((report, runs.into_iter().map(|r| r.episode).collect()))
}

/// Task variant `i` of a batch seeded `seed`, exactly as `EpisodeBatch` draws them, from the
/// skill's default family laid out for `robot`'s workspace.
pub fn task_variants(
    skill: sim::SkillKind,
    n: usize,
    seed: u64,
    robot: &Manipulator,
) -> (Vec<TaskSpec>, Vec<u64>) {
    let ranges = sim::library::TaskRanges::for_robot(robot);
    (0..n)
        .map(|i| {
            let s = sim::episode::episode_seed(seed, i);
            let mut rng = ChaCha8Rng::seed_from_u64(s);
            (sim::library::sample_task(skill, &ranges, &mut rng), s)
        })
        .unzip()
}
