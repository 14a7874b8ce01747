//! Loss functions: the Gaussian log-likelihood of action chunks (behaviour cloning), the
//! success head's cross-entropy, and the GRPO objective (group-normalised advantages, clipped
//! probability ratio, k3 KL penalty to a frozen reference policy).

use tch::{Kind, Reduction, Tensor};

const LOG_2PI: f64 = 1.837_877_066_409_345_5;

/// log N(x; mean, exp(log_std)) summed over the last dimension.
pub fn gaussian_log_prob(x: &Tensor, mean: &Tensor, log_std: &Tensor) -> Tensor {
    let z = (x - mean) * (-log_std).exp();
    (z.square() * -0.5 - log_std - 0.5 * LOG_2PI).sum_dim_intlist(-1, false, Kind::Float)
}

/// Mean negative log-likelihood of the valid action chunk entries of the imitated samples.
/// `actions`: [B, H, A]; `mean`: [B, H, A]; `log_std`: [H, A]; `valid`: [B, H]; `imitate`: [B].
pub fn chunk_nll(
    actions: &Tensor,
    mean: &Tensor,
    log_std: &Tensor,
    valid: &Tensor,
    imitate: &Tensor,
) -> Tensor {
    let logp = gaussian_log_prob(actions, &mean.to_kind(Kind::Float), log_std); // [B, H]
    let w = valid * imitate.unsqueeze(1);
    -(logp * &w).sum(Kind::Float) / w.sum(Kind::Float).clamp_min(1.0)
}

/// Binary cross-entropy of the success logits against episode outcomes.
pub fn value_loss(value_logit: &Tensor, success: &Tensor) -> Tensor {
    value_logit
        .to_kind(Kind::Float)
        .binary_cross_entropy_with_logits::<Tensor>(success, None, None, Reduction::Mean)
}

/// Advantages within each group: (return − group mean) / (group std + eps); a group whose
/// returns are all equal gets zeros. `groups[i]` is the group id of `returns[i]`.
pub fn group_advantages(returns: &[f64], groups: &[usize], eps: f64) -> Vec<f64> {
    let n_groups = groups.iter().copied().max().map_or(0, |g| g + 1);
    let mut sum = vec![0.0; n_groups];
    let mut count = vec![0.0; n_groups];
    for (r, g) in returns.iter().zip(groups) {
        sum[*g] += r;
        count[*g] += 1.0;
    }
    let mean: Vec<f64> = sum
        .iter()
        .zip(&count)
        .map(|(s, c)| s / f64::max(*c, 1.0))
        .collect();
    let mut var = vec![0.0; n_groups];
    for (r, g) in returns.iter().zip(groups) {
        var[*g] += (r - mean[*g]).powi(2);
    }
    returns
        .iter()
        .zip(groups)
        .map(|(r, g)| {
            // Population std, as in GRPO.
            let std = (var[*g] / f64::max(count[*g], 1.0)).sqrt();
            if std < 1e-12 {
                0.0
            } else {
                (r - mean[*g]) / (std + eps)
            }
        })
        .collect()
}

/// The GRPO objective's parts for one batch of sampled actions.
#[derive(Debug)]
pub struct GrpoLoss {
    /// −mean(min(ρA, clip(ρ, 1−ε, 1+ε)A) − β·KL): minimise this.
    pub loss: Tensor,
    /// Mean k3 KL estimate to the reference policy.
    pub kl: Tensor,
    /// Fraction of samples whose ratio was clipped.
    pub clip_fraction: Tensor,
}

/// `logp_new`, `logp_old`, `logp_ref`, `advantage`: [N]. The KL estimate is k3:
/// exp(ref − new) − (ref − new) − 1 (unbiased, non-negative).
pub fn grpo_loss(
    logp_new: &Tensor,
    logp_old: &Tensor,
    logp_ref: &Tensor,
    advantage: &Tensor,
    clip_eps: f64,
    kl_beta: f64,
) -> GrpoLoss {
    let ratio = (logp_new - logp_old).exp();
    let unclipped = &ratio * advantage;
    let clipped = ratio.clamp(1.0 - clip_eps, 1.0 + clip_eps) * advantage;
    let surrogate = unclipped.minimum(&clipped);
    let log_r = logp_ref - logp_new;
    let kl = log_r.exp() - &log_r - 1.0;
    let loss = -(surrogate - &kl * kl_beta).mean(Kind::Float);
    let clip_fraction = (ratio - 1.0)
        .abs()
        .gt(clip_eps)
        .to_kind(Kind::Float)
        .mean(Kind::Float);
    GrpoLoss {
        loss,
        kl: kl.mean(Kind::Float),
        clip_fraction,
    }
}
