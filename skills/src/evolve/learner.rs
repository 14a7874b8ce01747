//! The learner side of a generation: behaviour cloning of one multi-skill policy on the golden
//! pool (frontier skills' data as the main stream, mastered skills' data as replay), warm-started
//! from the previous generation's weights with the normaliser refitted to the grown pool (the
//! weights rewritten to keep the previous policy's actions, `Policy::renormalize`); and
//! greedy policy rollouts on given task variants (held-out evaluation, adversarial screening).

use std::sync::Arc;

use policy::bc::{train_bc, BcConfig};
use policy::dataset::{Dataset, RawSamples};
use policy::executor::{rollout_on, RolloutExecutor};
use policy::obs::Featurizer;
use policy::rollout::{EarlyStop, PolicyRollout, RolloutConfig, Sampling};
use policy::tokenizer::Tokenizer;
use policy::{ModelConfig, ObsMode, OptimConfig, Policy};
use robots::Manipulator;
use sim::task::TaskSpec;
use sim::{Episode, SimConfig};
use tch::Device;

use super::state::{TrackedVariant, TrainFigures};
use crate::error::Result;
use crate::tree::SkillTree;

/// The vocabulary of a run: every instruction of the tree and every skill's default one, so
/// skills that have no data yet are already spelled.
pub fn tokenizer_for(tree: &SkillTree) -> Tokenizer {
    let mut instructions: Vec<String> = tree
        .skills
        .iter()
        .flat_map(|s| s.def.instructions.iter().cloned())
        .collect();
    instructions.extend(sim::SkillKind::ALL.iter().map(|k| {
        let mut rng = <rand_chacha::ChaCha8Rng as rand::SeedableRng>::seed_from_u64(0);
        sim::library::sample_task(*k, &sim::library::TaskRanges::default(), &mut rng).instruction
    }));
    Tokenizer::build(instructions.iter().map(String::as_str))
}

/// Settings of one generation's training.
#[derive(Clone, Debug)]
pub struct TrainSpec<'a> {
    pub model: &'a ModelConfig,
    pub tokenizer: &'a Tokenizer,
    pub robot: &'a Arc<Manipulator>,
    pub sim: &'a Arc<SimConfig>,
    pub device: Device,
    pub steps: usize,
    pub batch_size: usize,
    pub lr: f64,
    pub replay_fraction: f64,
    /// Shares of each batch (see `EvolveConfig::frontier_weight`); 0: main stream + replay.
    pub frontier_weight: f64,
    /// At least this many passes over the frontier skills' samples (`steps` raised to fit).
    pub train_passes: f64,
    /// The passes go over every skill's samples, not only the frontier's: a fresh network
    /// relearns the skills a warm start keeps.
    pub passes_over_pool: bool,
    pub ema_decay: f64,
    pub seed: u64,
}

/// One learned skill's training data.
#[derive(Clone, Debug)]
pub struct SkillData {
    pub skill: String,
    pub episodes: Vec<Episode>,
    /// Per episode, the first step whose action is imitated (expert relabelling: the steps
    /// before it are the policy's own); missing entries: 0.
    pub imitate_from: Vec<usize>,
    /// A frontier skill (being learned), not a mastered one.
    pub frontier: bool,
}

/// Trains a policy on the pool, starting from `previous`'s weights when given. With a positive
/// `frontier_weight` every skill gets its share of each batch (frontier skills
/// `frontier_weight` shares, mastered ones one each); with 0, frontier skills' data is the main
/// stream and mastered skills' data, pooled, `replay_fraction` of each batch.
pub fn train_generation(
    previous: Option<&Policy>,
    pool: &[SkillData],
    spec: &TrainSpec<'_>,
) -> Result<(Policy, TrainFigures)> {
    let featurizer = Featurizer::new(
        spec.model,
        spec.tokenizer.clone(),
        spec.sim,
        spec.robot.dof(),
    )?;
    let balanced = spec.frontier_weight > 0.0;
    let mut raw_main = RawSamples::default();
    let mut raw_replay = RawSamples::default();
    let mut groups = Vec::new();
    let mut shares = Vec::new();
    for (g, data) in pool.iter().enumerate() {
        let raw = if balanced || data.frontier {
            &mut raw_main
        } else {
            &mut raw_replay
        };
        for (j, e) in data.episodes.iter().enumerate() {
            let from = data.imitate_from.get(j).copied().unwrap_or(0);
            raw.push_episode_from(e, from, &featurizer, spec.robot, spec.sim)?;
        }
        groups.resize(raw_main.len(), g);
        shares.push(if data.frontier {
            spec.frontier_weight
        } else {
            1.0
        });
    }
    let mut all = raw_main.clone();
    all.rows.extend(raw_replay.rows.iter().cloned());
    all.actions.extend_from_slice(&raw_replay.actions);
    all.action_valid.extend_from_slice(&raw_replay.action_valid);
    all.success.extend_from_slice(&raw_replay.success);
    all.imitate.extend_from_slice(&raw_replay.imitate);
    let normalizer = all.fit_normalizer(&featurizer);
    let mut policy = Policy::new(
        spec.model,
        spec.tokenizer.clone(),
        previous.map_or_else(|| normalizer.clone(), |p| p.normalizer.clone()),
        spec.robot,
        spec.sim,
        spec.device,
        spec.seed,
    )?;
    if let Some(prev) = previous {
        policy
            .vs
            .copy(&prev.vs)
            .map_err(|e| policy::PolicyError::Data(format!("warm start: {e}")))?;
        // The grown pool's statistics, with the weights rewritten so the warm start still
        // acts as before on the data it learned (a bare refit shifts every input it knows).
        policy.renormalize(normalizer)?;
    }
    policy.meta.skills = pool.iter().map(|d| d.skill.clone()).collect();
    let mut data = Dataset::new(&raw_main, &policy.featurizer, &policy.normalizer)?;
    if balanced {
        data = data.with_group_shares(&groups, &shares)?;
    }
    let replay_data = if raw_replay.is_empty() {
        None
    } else {
        Some(Dataset::new(
            &raw_replay,
            &policy.featurizer,
            &policy.normalizer,
        )?)
    };
    let split = BatchSplit {
        batch_size: spec.batch_size,
        frontier_weight: spec.frontier_weight,
        replay_fraction: spec.replay_fraction,
    };
    let passes = if spec.passes_over_pool {
        (spec.train_passes * all.len() as f64 / spec.batch_size as f64).ceil() as usize
    } else {
        steps_for_passes(pool, &groups, &shares, split, spec.train_passes)
    };
    let steps = spec.steps.max(passes);
    let cfg = BcConfig {
        optim: OptimConfig {
            steps,
            batch_size: spec.batch_size,
            lr: spec.lr,
            warmup_steps: (steps / 10).max(1),
            seed: spec.seed,
            ..OptimConfig::default()
        },
        replay_fraction: if replay_data.is_some() {
            spec.replay_fraction
        } else {
            0.0
        },
        ema_decay: spec.ema_decay,
        ..BcConfig::default()
    };
    let report = train_bc(&mut policy, &data, replay_data.as_ref(), &cfg, &mut |_| {})?;
    Ok((
        policy,
        TrainFigures {
            steps: report.steps,
            final_nll: report.final_nll,
            samples_per_sec: report.samples_per_sec,
            wall_s: report.wall_s,
            episodes: pool.iter().map(|d| d.episodes.len()).sum(),
            failures: 0,
            fresh: previous.is_none(),
        },
    ))
}

/// How a batch is split (`TrainSpec`'s fields of the same names).
#[derive(Clone, Copy, Debug)]
struct BatchSplit {
    batch_size: usize,
    frontier_weight: f64,
    replay_fraction: f64,
}

/// The steps that take `passes` passes over the frontier skills' samples: their rows (`groups`
/// gives each main-stream row's place in `pool`) over the rows of a batch they get (their
/// `shares` of it, or all but the replay fraction without balancing).
fn steps_for_passes(
    pool: &[SkillData],
    groups: &[usize],
    shares: &[f64],
    split: BatchSplit,
    passes: f64,
) -> usize {
    let frontier_rows = groups.iter().filter(|g| pool[**g].frontier).count();
    let share = if split.frontier_weight > 0.0 {
        let present = |g: &usize| groups.contains(g);
        let frontier: f64 = (0..pool.len())
            .filter(|g| pool[*g].frontier && present(g))
            .map(|g| shares[g])
            .sum();
        let total: f64 = (0..pool.len()).filter(present).map(|g| shares[g]).sum();
        frontier / total.max(1e-9)
    } else {
        1.0 - split.replay_fraction
    };
    let per_step = split.batch_size as f64 * share;
    if per_step <= 0.0 {
        return 0;
    }
    (passes * frontier_rows as f64 / per_step).ceil() as usize
}

/// Where the loop's policy rollouts run: on `threads` here, or on the executor (a farm).
#[derive(Clone, Copy, Debug)]
pub struct Runs<'a> {
    pub threads: usize,
    pub executor: Option<&'a dyn RolloutExecutor>,
}

/// Runs the policy on `tasks` (greedy, or sampled with `temperature`), to the end or with
/// early stopping.
pub fn run_policy(
    policy: &Policy,
    robot: &Arc<Manipulator>,
    tasks: &[TaskSpec],
    seeds: &[u64],
    temperature: Option<f64>,
    early_stop: Option<&EarlyStop>,
    runs: Runs<'_>,
) -> Result<Vec<PolicyRollout>> {
    let cfg = RolloutConfig {
        sampling: match temperature {
            Some(temperature) => Sampling::Sample { temperature },
            None => Sampling::Greedy,
        },
        threads: runs.threads,
        keep_transitions: false,
        early_stop: early_stop.cloned(),
    };
    Ok(rollout_on(
        runs.executor,
        policy,
        robot,
        tasks,
        seeds,
        &cfg,
    )?)
}

/// How the policy's sampled rollouts run.
#[derive(Clone, Copy, Debug)]
pub struct SampledRuns<'a> {
    pub temperature: f64,
    pub early_stop: Option<&'a EarlyStop>,
    pub runs: Runs<'a>,
}

/// `attempts` sampled rollouts of the policy on each variant (in variant order), the seed of
/// attempt k on variant v given by `seed_of(v, k)`.
pub fn sample_variants(
    policy: &Policy,
    robot: &Arc<Manipulator>,
    variants: &[TrackedVariant],
    attempts: usize,
    seed_of: &dyn Fn(&TrackedVariant, usize) -> u64,
    how: SampledRuns<'_>,
) -> Result<Vec<PolicyRollout>> {
    let mut tasks = Vec::new();
    let mut seeds = Vec::new();
    for v in variants {
        for k in 0..attempts {
            tasks.push(v.task.clone());
            seeds.push(seed_of(v, k));
        }
    }
    run_policy(
        policy,
        robot,
        &tasks,
        &seeds,
        Some(how.temperature),
        how.early_stop,
        how.runs,
    )
}

/// The model a run trains (state observations: the CPU default).
pub fn model_config(size: &str) -> Result<ModelConfig> {
    Ok(ModelConfig::preset(size, ObsMode::State)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn data(skill: &str, frontier: bool) -> SkillData {
        SkillData {
            skill: skill.into(),
            episodes: Vec::new(),
            imitate_from: Vec::new(),
            frontier,
        }
    }

    #[test]
    fn passes_count_the_frontier_share_of_each_batch() {
        let pool = [data("grasp", false), data("lift", true)];
        // 50 grasp rows, 120 lift rows; lift has 2 of 3 shares of a 64-row batch.
        let groups: Vec<usize> = [vec![0; 50], vec![1; 120]].concat();
        let balanced = BatchSplit {
            batch_size: 64,
            frontier_weight: 2.0,
            replay_fraction: 0.3,
        };
        let steps = steps_for_passes(&pool, &groups, &[1.0, 2.0], balanced, 3.0);
        assert_eq!(steps, (3.0f64 * 120.0 / (64.0 * 2.0 / 3.0)).ceil() as usize);
        // Main stream + replay: the frontier gets all but the replay fraction.
        let unbalanced = BatchSplit {
            frontier_weight: 0.0,
            ..balanced
        };
        let lift_only = [1; 120];
        let steps = steps_for_passes(&pool, &lift_only, &[1.0, 2.0], unbalanced, 1.0);
        assert_eq!(steps, (120.0f64 / (64.0 * 0.7)).ceil() as usize);
        assert_eq!(
            steps_for_passes(&pool, &groups, &[1.0, 2.0], balanced, 0.0),
            0
        );
    }
}
