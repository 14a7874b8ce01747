//! GRPO (group relative policy optimisation) in the simulator: each iteration draws task
//! variants, runs a group of sampled rollouts per variant, scores every rollout
//! (success bonus + a little dense return), normalises returns within each group into
//! advantages, and takes clipped-ratio policy-gradient steps with a k3 KL penalty to the frozen
//! policy it started from; the success head is trained on the rollouts' outcomes.

use std::sync::Arc;
use std::time::Instant;

use robots::Manipulator;
use serde::{Deserialize, Serialize};
use tch::{Kind, Tensor};

use crate::bc::{adamw, step_clipped};
use crate::config::OptimConfig;
use crate::error::{PolicyError, Result};
use crate::features::ACTION_DIM;
use crate::loss::{gaussian_log_prob, group_advantages, grpo_loss, value_loss};
use crate::model::ObsBatch;
use crate::obs::ObsRow;
use crate::policy::Policy;
use crate::rollout::{rollout, task_variants, PolicyRollout, RolloutConfig, Sampling};

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GrpoConfig {
    pub iterations: usize,
    /// Task variants per iteration.
    pub groups: usize,
    /// Rollouts per variant.
    pub group_size: usize,
    /// Exploration temperature on the learned standard deviation.
    pub temperature: f64,
    pub clip_eps: f64,
    pub kl_beta: f64,
    /// Passes over each iteration's samples.
    pub epochs: usize,
    pub minibatch: usize,
    pub lr: f64,
    pub grad_clip: f64,
    pub value_weight: f64,
    /// Return = success_bonus · success + dense_weight · dense return.
    pub success_bonus: f64,
    pub dense_weight: f64,
    pub seed: u64,
    pub threads: usize,
    /// Stop once an iteration's mean KL to the starting policy exceeds this (the trust region
    /// around a behaviour-cloned policy); none: run every iteration.
    #[serde(default)]
    pub max_kl: Option<f64>,
}

impl Default for GrpoConfig {
    fn default() -> Self {
        GrpoConfig {
            iterations: 8,
            groups: 16,
            group_size: 8,
            temperature: 1.0,
            clip_eps: 0.2,
            kl_beta: 0.02,
            epochs: 1,
            minibatch: 1024,
            lr: 3e-5,
            grad_clip: 1.0,
            value_weight: 0.5,
            success_bonus: 1.0,
            dense_weight: 0.0,
            seed: 0,
            threads: 2,
            max_kl: None,
        }
    }
}

/// Where each iteration's task variants come from: iteration → (variants, their seeds); every
/// variant is one group.
pub type VariantSource<'a> = dyn Fn(usize) -> (Vec<sim::TaskSpec>, Vec<u64>) + 'a;

/// One iteration's figures.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GrpoIteration {
    pub iteration: usize,
    pub rollouts: usize,
    /// Success rate of the sampled (exploring) rollouts.
    pub sampled_success_rate: f64,
    pub mean_return: f64,
    /// Samples with a non-zero advantage (the ones that teach anything).
    pub samples: usize,
    /// Groups (task variants), and those whose rollouts all succeeded or all failed: their
    /// success carries no advantage.
    #[serde(default)]
    pub groups: usize,
    #[serde(default)]
    pub uniform_groups: usize,
    pub loss: f64,
    pub kl: f64,
    pub clip_fraction: f64,
    pub wall_s: f64,
}

/// Log-probability of `actions` [N, A] under the first chunk step of `policy`'s Gaussian
/// (at `temperature`).
fn first_action_logp(
    policy: &Policy,
    obs: &ObsBatch,
    actions: &Tensor,
    temperature: f64,
) -> (Tensor, Tensor) {
    let out = tch::autocast(policy.device().is_cuda(), || policy.net.forward(obs));
    let mean = out.mean.select(1, 0).to_kind(Kind::Float);
    let log_std = out.log_std.get(0) + temperature.ln();
    (gaussian_log_prob(actions, &mean, &log_std), out.value_logit)
}

/// Improves `policy` on `skill` in place, `cfg.groups` fresh variants of the skill's default
/// task family per iteration; returns per-iteration figures.
pub fn train_grpo(
    policy: &mut Policy,
    robot: &Arc<Manipulator>,
    skill: sim::SkillKind,
    cfg: &GrpoConfig,
    progress: &mut dyn FnMut(&GrpoIteration),
) -> Result<Vec<GrpoIteration>> {
    let variants = |iteration: usize| {
        let base_seed = cfg.seed.wrapping_add(1_000_003 * iteration as u64);
        task_variants(skill, cfg.groups, base_seed, robot)
    };
    train_grpo_on(policy, robot, &variants, cfg, progress)
}

/// Improves `policy` in place on the variants `variants` gives each iteration (one group of
/// `cfg.group_size` sampled rollouts each); returns per-iteration figures.
pub fn train_grpo_on(
    policy: &mut Policy,
    robot: &Arc<Manipulator>,
    variants: &VariantSource<'_>,
    cfg: &GrpoConfig,
    progress: &mut dyn FnMut(&GrpoIteration),
) -> Result<Vec<GrpoIteration>> {
    if cfg.group_size < 2 || cfg.groups == 0 || cfg.minibatch == 0 || cfg.epochs == 0 {
        return Err(PolicyError::config(
            "grpo",
            "needs group_size ≥ 2 and groups, minibatch, epochs > 0",
        ));
    }
    if !(cfg.temperature.is_finite() && cfg.temperature > 0.0) {
        return Err(PolicyError::config("temperature", "must be > 0"));
    }
    let reference = policy.frozen_copy()?;
    let optim = OptimConfig {
        lr: cfg.lr,
        grad_clip: cfg.grad_clip,
        ..OptimConfig::default()
    };
    let mut opt = adamw(&policy.vs, &optim)?;
    tch::manual_seed(cfg.seed as i64);
    let device = policy.device();
    let mut history = Vec::new();
    for iteration in 0..cfg.iterations {
        let start = Instant::now();
        let (variants, variant_seeds) = variants(iteration);
        let mut tasks = Vec::new();
        let mut seeds = Vec::new();
        let mut groups = Vec::new();
        for (g, (task, seed)) in variants.iter().zip(&variant_seeds).enumerate() {
            for k in 0..cfg.group_size {
                tasks.push(task.clone());
                seeds.push(sim::episode::episode_seed(*seed, k));
                groups.push(g);
            }
        }
        let runs = rollout(
            policy,
            robot,
            &tasks,
            &seeds,
            &RolloutConfig {
                sampling: Sampling::Sample {
                    temperature: cfg.temperature,
                },
                threads: cfg.threads,
                keep_transitions: true,
                early_stop: None,
            },
        )?;
        let returns: Vec<f64> = runs
            .iter()
            .map(|r| {
                let o = &r.episode.outcome;
                cfg.success_bonus * f64::from(u8::from(o.success))
                    + cfg.dense_weight * o.episode_return
            })
            .collect();
        let advantages = group_advantages(&returns, &groups, 1e-6);
        let mut rows: Vec<&ObsRow> = Vec::new();
        let mut actions: Vec<f32> = Vec::new();
        let mut logp_old: Vec<f32> = Vec::new();
        let mut adv: Vec<f32> = Vec::new();
        let mut success: Vec<f32> = Vec::new();
        for (run, a) in runs.iter().zip(&advantages) {
            if *a == 0.0 {
                continue;
            }
            for t in &run.transitions {
                rows.push(&t.row);
                actions.extend_from_slice(&t.action);
                logp_old.push(t.logp);
                adv.push(*a as f32);
                success.push(f32::from(u8::from(run.episode.outcome.success)));
            }
        }
        let n = rows.len() as i64;
        let mut sums = (0.0, 0.0, 0.0, 0usize);
        if n > 0 {
            let obs = policy
                .normalizer
                .apply(&policy.featurizer.collate(&rows).to_device(device));
            let actions = Tensor::from_slice(&actions)
                .view([n, ACTION_DIM as i64])
                .to_device(device);
            let logp_old = Tensor::from_slice(&logp_old).to_device(device);
            let adv = Tensor::from_slice(&adv).to_device(device);
            let success = Tensor::from_slice(&success).to_device(device);
            let logp_ref =
                tch::no_grad(|| first_action_logp(&reference, &obs, &actions, cfg.temperature).0);
            for _ in 0..cfg.epochs {
                let order = Tensor::randperm(n, (Kind::Int64, tch::Device::Cpu)).to_device(device);
                let mut start_i = 0;
                while start_i < n {
                    let len = (cfg.minibatch as i64).min(n - start_i);
                    let idx = order.narrow(0, start_i, len);
                    start_i += len;
                    let mb = select(&obs, &idx);
                    let (logp_new, value_logit) = first_action_logp(
                        policy,
                        &mb,
                        &actions.index_select(0, &idx),
                        cfg.temperature,
                    );
                    let parts = grpo_loss(
                        &logp_new,
                        &logp_old.index_select(0, &idx),
                        &logp_ref.index_select(0, &idx),
                        &adv.index_select(0, &idx),
                        cfg.clip_eps,
                        cfg.kl_beta,
                    );
                    let total = &parts.loss
                        + value_loss(&value_logit, &success.index_select(0, &idx))
                            * cfg.value_weight;
                    step_clipped(&mut opt, &policy.vs, &total, cfg.grad_clip);
                    policy.net.project_log_std();
                    sums.0 += parts.loss.double_value(&[]);
                    sums.1 += parts.kl.double_value(&[]);
                    sums.2 += parts.clip_fraction.double_value(&[]);
                    sums.3 += 1;
                }
            }
        }
        let updates = sums.3.max(1) as f64;
        let record = GrpoIteration {
            iteration,
            rollouts: runs.len(),
            sampled_success_rate: runs.iter().filter(|r| r.episode.outcome.success).count() as f64
                / runs.len().max(1) as f64,
            mean_return: returns.iter().sum::<f64>() / returns.len().max(1) as f64,
            samples: n as usize,
            groups: variants.len(),
            uniform_groups: uniform_groups(&runs, &groups, variants.len()),
            loss: sums.0 / updates,
            kl: sums.1 / updates,
            clip_fraction: sums.2 / updates,
            wall_s: start.elapsed().as_secs_f64(),
        };
        progress(&record);
        let beyond_trust_region = cfg.max_kl.is_some_and(|max| record.kl > max);
        history.push(record);
        if beyond_trust_region {
            break;
        }
    }
    Ok(history)
}

/// Groups whose rollouts all succeeded or all failed.
fn uniform_groups(runs: &[PolicyRollout], groups: &[usize], n: usize) -> usize {
    let mut counts = vec![(0usize, 0usize); n];
    for (run, g) in runs.iter().zip(groups) {
        counts[*g].0 += 1;
        counts[*g].1 += usize::from(run.episode.outcome.success);
    }
    counts
        .iter()
        .filter(|(runs, ok)| *runs > 0 && (*ok == 0 || ok == runs))
        .count()
}

fn select(obs: &ObsBatch, idx: &Tensor) -> ObsBatch {
    let take = |t: &Tensor| t.index_select(0, idx);
    let pair = |p: &Option<(Tensor, Tensor)>| p.as_ref().map(|(a, b)| (take(a), take(b)));
    ObsBatch {
        lang: take(&obs.lang),
        proprio: take(&obs.proprio),
        objects: pair(&obs.objects),
        zones: pair(&obs.zones),
        images: obs.images.iter().map(take).collect(),
    }
}
