//! Behaviour cloning: action-chunk negative log-likelihood on golden samples (plus a replay mix
//! of older skills' data), success-head cross-entropy on every sample, AdamW with warm-up +
//! cosine schedule and gradient clipping. On CUDA the forward pass runs under bf16 autocast
//! (fp32 master weights) and losses are read back only every `log_every` steps.

use std::time::Instant;

use serde::{Deserialize, Serialize};
use tch::nn::OptimizerConfig;
use tch::{nn, Device, Tensor};

use crate::config::OptimConfig;
use crate::dataset::{Batch, Dataset};
use crate::error::{PolicyError, Result};
use crate::loss;
use crate::policy::Policy;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BcConfig {
    pub optim: OptimConfig,
    /// Weight of the success-head loss.
    pub value_weight: f64,
    /// Fraction of each batch drawn from the replay dataset (older skills), when given.
    pub replay_fraction: f64,
    /// Read losses back (a host sync) every this many steps.
    pub log_every: usize,
    /// Exponential moving average of the weights: after every step each weight's average
    /// moves `1 − ema_decay` of the way to it, and the averaged weights are what training
    /// leaves in the policy (the last iterate of small-batch SGD is noisy; its average is
    /// not). 0 (the default) keeps the last iterate.
    #[serde(default)]
    pub ema_decay: f64,
}

impl Default for BcConfig {
    fn default() -> Self {
        BcConfig {
            optim: OptimConfig::default(),
            value_weight: 0.5,
            replay_fraction: 0.25,
            log_every: 25,
            ema_decay: 0.0,
        }
    }
}

/// Progress report passed to the caller every `log_every` steps.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TrainProgress {
    pub step: usize,
    pub steps: usize,
    pub loss: f64,
    pub nll: f64,
    pub value_loss: f64,
    pub lr: f64,
    pub samples_per_sec: f64,
}

/// What a training run did.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TrainReport {
    pub steps: usize,
    pub samples: i64,
    pub final_loss: f64,
    pub final_nll: f64,
    pub final_value_loss: f64,
    pub wall_s: f64,
    pub samples_per_sec: f64,
}

/// One optimiser step with the global gradient norm clipped to `max_norm`, computed on the
/// device without reading anything back to the host (torch's `clip_grad_norm_`; tch's own
/// clipping reads the norm back every step, a host sync on CUDA).
pub fn step_clipped(opt: &mut nn::Optimizer, vs: &nn::VarStore, loss: &Tensor, max_norm: f64) {
    opt.zero_grad();
    loss.backward();
    let grads: Vec<Tensor> = vs
        .trainable_variables()
        .iter()
        .map(Tensor::grad)
        .filter(Tensor::defined)
        .collect();
    if !grads.is_empty() {
        let norms: Vec<Tensor> = grads.iter().map(Tensor::norm).collect();
        let total = Tensor::stack(&norms, 0).norm();
        let coef = (max_norm / (total + 1e-6)).clamp_max(1.0);
        tch::no_grad(|| {
            for mut g in grads {
                let _ = g.g_mul_(&coef);
            }
        });
    }
    opt.step();
}

/// An AdamW optimiser over the policy's variables.
pub fn adamw(vs: &nn::VarStore, optim: &OptimConfig) -> Result<nn::Optimizer> {
    let mut opt = nn::AdamW {
        wd: optim.weight_decay,
        ..Default::default()
    }
    .build(vs, optim.lr)?;
    opt.set_weight_decay(optim.weight_decay);
    Ok(opt)
}

fn concat_batches(a: Batch, b: Batch) -> Batch {
    let cat = |x: &Tensor, y: &Tensor| Tensor::cat(&[x, y], 0);
    let pair = |x: &Option<(Tensor, Tensor)>, y: &Option<(Tensor, Tensor)>| match (x, y) {
        (Some((x0, x1)), Some((y0, y1))) => Some((cat(x0, y0), cat(x1, y1))),
        _ => None,
    };
    Batch {
        obs: crate::model::ObsBatch {
            lang: cat(&a.obs.lang, &b.obs.lang),
            proprio: cat(&a.obs.proprio, &b.obs.proprio),
            objects: pair(&a.obs.objects, &b.obs.objects),
            zones: pair(&a.obs.zones, &b.obs.zones),
            images: a
                .obs
                .images
                .iter()
                .zip(&b.obs.images)
                .map(|(x, y)| cat(x, y))
                .collect(),
        },
        actions: cat(&a.actions, &b.actions),
        action_valid: cat(&a.action_valid, &b.action_valid),
        success: cat(&a.success, &b.success),
        imitate: cat(&a.imitate, &b.imitate),
    }
}

/// The BC loss of one batch: (total, nll, value loss).
pub fn bc_losses(policy: &Policy, batch: &Batch, value_weight: f64) -> (Tensor, Tensor, Tensor) {
    let cuda = policy.device().is_cuda();
    let out = tch::autocast(cuda, || policy.net.forward(&batch.obs));
    let nll = loss::chunk_nll(
        &batch.actions,
        &out.mean,
        &out.log_std,
        &batch.action_valid,
        &batch.imitate,
    );
    let value = loss::value_loss(&out.value_logit, &batch.success);
    (&nll + &value * value_weight, nll, value)
}

/// Trains `policy` in place on `data` (normalised with the policy's normaliser).
pub fn train_bc(
    policy: &mut Policy,
    data: &Dataset,
    replay: Option<&Dataset>,
    cfg: &BcConfig,
    progress: &mut dyn FnMut(&TrainProgress),
) -> Result<TrainReport> {
    cfg.optim.validate()?;
    if !(0.0..1.0).contains(&cfg.replay_fraction) {
        return Err(PolicyError::config("replay_fraction", "must be in [0, 1)"));
    }
    if !(0.0..1.0).contains(&cfg.ema_decay) {
        return Err(PolicyError::config("ema_decay", "must be in [0, 1)"));
    }
    let device: Device = policy.device();
    tch::manual_seed(cfg.optim.seed as i64);
    let mut opt = adamw(&policy.vs, &cfg.optim)?;
    let batch_size = cfg.optim.batch_size as i64;
    let replay_n = match replay {
        Some(_) => (batch_size as f64 * cfg.replay_fraction).round() as i64,
        None => 0,
    };
    let start = Instant::now();
    let mut last = (f64::NAN, f64::NAN, f64::NAN);
    let log_every = cfg.log_every.max(1);
    // (weight, its average), the averages starting at the weights training starts from.
    let ema: Vec<(Tensor, Tensor)> = if cfg.ema_decay > 0.0 {
        tch::no_grad(|| {
            policy
                .vs
                .trainable_variables()
                .into_iter()
                .map(|w| {
                    let average = w.detach().copy();
                    (w, average)
                })
                .collect()
        })
    } else {
        Vec::new()
    };
    for step in 0..cfg.optim.steps {
        let lr = cfg.optim.lr_at(step);
        opt.set_lr(lr);
        let mut batch = data.gather(&data.draw(batch_size - replay_n), device);
        if let (Some(r), true) = (replay, replay_n > 0) {
            batch = concat_batches(batch, r.gather(&r.draw(replay_n), device));
        }
        let (total, nll, value) = bc_losses(policy, &batch, cfg.value_weight);
        step_clipped(&mut opt, &policy.vs, &total, cfg.optim.grad_clip);
        policy.net.project_log_std();
        tch::no_grad(|| {
            for (w, average) in &ema {
                let _ = average.shallow_clone().lerp_(w, 1.0 - cfg.ema_decay);
            }
        });
        if (step + 1) % log_every == 0 || step + 1 == cfg.optim.steps {
            last = (
                total.double_value(&[]),
                nll.double_value(&[]),
                value.double_value(&[]),
            );
            if !last.0.is_finite() {
                return Err(PolicyError::Data(format!(
                    "training diverged at step {}: loss {}",
                    step + 1,
                    last.0
                )));
            }
            let elapsed = start.elapsed().as_secs_f64();
            progress(&TrainProgress {
                step: step + 1,
                steps: cfg.optim.steps,
                loss: last.0,
                nll: last.1,
                value_loss: last.2,
                lr,
                samples_per_sec: ((step + 1) as f64 * batch_size as f64) / elapsed.max(1e-9),
            });
        }
    }
    tch::no_grad(|| {
        for (w, average) in &ema {
            w.shallow_clone().copy_(average);
        }
    });
    let wall_s = start.elapsed().as_secs_f64();
    let samples = cfg.optim.steps as i64 * batch_size;
    Ok(TrainReport {
        steps: cfg.optim.steps,
        samples,
        final_loss: last.0,
        final_nll: last.1,
        final_value_loss: last.2,
        wall_s,
        samples_per_sec: samples as f64 / wall_s.max(1e-9),
    })
}
