//! Function-preserving change of a policy's normaliser. Warm-starting on a grown data pool
//! refits the statistics; without compensation every input the network has learned shifts and
//! every output it predicts is rescaled, which erases skills learned on the old pool. Here the
//! input projections (`proprio_in`, `object_in`, `zone_in`), the action head and the log-std
//! are rewritten so that the policy's raw-unit actions (means) are unchanged on the data the old
//! statistics came from (exactly, up to float rounding), the way Pop-Art preserves outputs. The
//! action std is preserved too, except that it is never narrowed (see `rewrite_output`).

use tch::Tensor;

use crate::error::{PolicyError, Result};
use crate::model::{LOG_STD_MAX, LOG_STD_MIN};
use crate::obs::{Normalizer, Stats};
use crate::policy::Policy;

/// A feature or action whose spread grew by more than this factor barely varied in the old
/// data (its statistics sat at the floor): the network never saw it move. An input's weights
/// are then kept instead of scaled up by the factor (the bias absorbs its new offset, which
/// keeps the old data's outputs exact). (An action's log-std is never narrowed at all.)
const MAX_GAIN: f32 = 100.0;

/// Per-feature (gain, offset) with `x_old_normalised = gain * x_new_normalised + offset` on
/// the old data.
fn input_map(old: &Stats, new: &Stats) -> (Vec<f32>, Vec<f32>) {
    let mut gain = Vec::with_capacity(old.mean.len());
    let mut offset = Vec::with_capacity(old.mean.len());
    for j in 0..old.mean.len() {
        let ratio = new.std[j] / old.std[j];
        let a = if ratio > MAX_GAIN { 1.0 } else { ratio };
        gain.push(a);
        offset.push(-a * (old.mean[j] - new.mean[j]) / new.std[j]);
    }
    (gain, offset)
}

fn var(policy: &Policy, name: &str) -> Result<Tensor> {
    policy
        .vs
        .variables()
        .remove(name)
        .ok_or_else(|| PolicyError::Data(format!("renormalize: the model has no `{name}`")))
}

/// `linear(x_old) = W x_old + b` rewritten to take `x_new` (`x_old = gain ⊙ x_new + offset`).
fn rewrite_input(policy: &Policy, layer: &str, old: &Stats, new: &Stats) -> Result<()> {
    let (gain, offset) = input_map(old, new);
    let w = var(policy, &format!("{layer}.weight"))?;
    let b = var(policy, &format!("{layer}.bias"))?;
    let dev = w.device();
    let gain = Tensor::from_slice(&gain).to_device(dev).to_kind(w.kind());
    let offset = Tensor::from_slice(&offset).to_device(dev).to_kind(w.kind());
    tch::no_grad(|| {
        let new_b = &b + w.matmul(&offset);
        let new_w = &w * gain.unsqueeze(0);
        let (mut w, mut b) = (w.shallow_clone(), b.shallow_clone());
        w.copy_(&new_w);
        b.copy_(&new_b);
    });
    Ok(())
}

/// The action head and log-std rewritten so `mean_new * s_new + m_new == mean_old * s_old +
/// m_old` and, where the spread did not grow (`s_new <= s_old`), `exp(log_std_new) * s_new ==
/// exp(log_std_old) * s_old`; where it grew, the normalised log-std is kept.
fn rewrite_output(policy: &Policy, old: &Stats, new: &Stats) -> Result<()> {
    let w = var(policy, "action_head.weight")?;
    let b = var(policy, "action_head.bias")?;
    let log_std = var(policy, "log_std")?;
    let dim = old.mean.len();
    let chunk = log_std.size()[0];
    let scale: Vec<f32> = (0..dim).map(|j| old.std[j] / new.std[j]).collect();
    // The log-std is never narrowed: where the new data spreads wider than the old (scale
    // < 1), the std stays what it was in normalised units, i.e. as wide relative to the new
    // spread as it was to the old. Narrowed, it fits only the old data; the new skill's
    // actions on that component then have an enormous NLL whose clipped gradient swamps
    // everything else, and Adam moves a log-std by only about lr per step, so it takes
    // generations to recover (seen: reach data, where a component barely varied, followed by
    // grasp data: final NLL 7–14 and both skills collapsing).
    let std_scale: Vec<f32> = scale.iter().map(|r| r.max(1.0)).collect();
    let shift: Vec<f32> = (0..dim)
        .map(|j| (old.mean[j] - new.mean[j]) / new.std[j])
        .collect();
    let dev = w.device();
    let per_chunk = |v: &[f32]| {
        Tensor::from_slice(v)
            .to_device(dev)
            .to_kind(w.kind())
            .unsqueeze(0)
            .expand([chunk, dim as i64], true)
    };
    let scale = per_chunk(&scale);
    let std_scale = per_chunk(&std_scale);
    let shift = per_chunk(&shift);
    tch::no_grad(|| {
        let flat_scale = scale.reshape([-1]);
        let new_w = &w * flat_scale.unsqueeze(1);
        let new_b = &b * &flat_scale + shift.reshape([-1]);
        // Stored clamped: the forward pass clamps anyway, so the output is the same, and a
        // parameter left beyond a bound would get no gradient (stuck, its NLL unbounded).
        let new_log_std =
            (&log_std + std_scale.log().to_kind(log_std.kind())).clamp(LOG_STD_MIN, LOG_STD_MAX);
        let (mut w, mut b, mut ls) = (
            w.shallow_clone(),
            b.shallow_clone(),
            log_std.shallow_clone(),
        );
        w.copy_(&new_w);
        b.copy_(&new_b);
        ls.copy_(&new_log_std);
    });
    Ok(())
}

impl Policy {
    /// Replaces the normaliser by `new`, rewriting the affected weights so the policy acts the
    /// same on the data the current statistics describe. State-observation models only (image
    /// inputs are not normalised by statistics).
    pub fn renormalize(&mut self, new: Normalizer) -> Result<()> {
        new.check(self.featurizer.proprio_dim)?;
        let old = self.normalizer.clone();
        rewrite_input(self, "proprio_in", &old.proprio, &new.proprio)?;
        if self.vs.variables().contains_key("object_in.weight") {
            rewrite_input(self, "object_in", &old.objects, &new.objects)?;
            rewrite_input(self, "zone_in", &old.zones, &new.zones)?;
        }
        rewrite_output(self, &old.actions, &new.actions)?;
        self.normalizer = new;
        Ok(())
    }
}
