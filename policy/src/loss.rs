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

#[cfg(test)]
mod tests {
    use super::*;

    fn t(v: &[f32]) -> Tensor {
        Tensor::from_slice(v)
    }

    fn scalar(x: &Tensor) -> f64 {
        x.double_value(&[])
    }

    #[test]
    fn gaussian_log_prob_matches_the_formula() {
        // x = 1, mean = 0, log_std = ln 2: −0.5·(1/2)² − ln 2 − 0.5·ln 2π.
        let lp = gaussian_log_prob(&t(&[1.0]), &t(&[0.0]), &t(&[2f32.ln()]));
        let expected = -0.125 - 2f64.ln() - 0.5 * (2.0 * std::f64::consts::PI).ln();
        assert!((scalar(&lp) - expected).abs() < 1e-6);
    }

    #[test]
    fn group_advantages_are_normalised_per_group() {
        // Group 0: returns 1, 0 → mean 0.5, std 0.5 → ±1. Group 1: all equal → 0.
        let a = group_advantages(&[1.0, 0.0, 3.0, 3.0], &[0, 0, 1, 1], 0.0);
        assert_eq!(a, vec![1.0, -1.0, 0.0, 0.0]);
        // Group of three: 0, 1, 2 → mean 1, population std sqrt(2/3).
        let a = group_advantages(&[0.0, 1.0, 2.0], &[0, 0, 0], 0.0);
        let s = (2.0f64 / 3.0).sqrt();
        assert!(
            (a[0] + 1.0 / s).abs() < 1e-12 && a[1].abs() < 1e-12 && (a[2] - 1.0 / s).abs() < 1e-12
        );
    }

    #[test]
    fn grpo_loss_hand_computed() {
        // Sample 1: ratio e^0.5 = 1.6487 > 1.2 with A = +1 → clipped term 1.2 is the minimum.
        // Sample 2: ratio e^-0.5 = 0.6065 < 0.8 with A = −1 → min(−0.6065, −0.8) = −0.8.
        // Sample 3: ratio 1 with A = 2 → 2.
        // KL k3 with ref − new = d: e^d − d − 1 for d = −0.5, 0.5, 0.
        let new = t(&[0.5, -0.5, 0.0]);
        let old = t(&[0.0, 0.0, 0.0]);
        let reference = t(&[0.0, 0.0, 0.0]);
        let adv = t(&[1.0, -1.0, 2.0]);
        let beta = 0.1;
        let out = grpo_loss(&new, &old, &reference, &adv, 0.2, beta);
        let k = |d: f64| d.exp() - d - 1.0;
        let kl = [k(-0.5), k(0.5), 0.0];
        let surrogate = [1.2, -0.8, 2.0];
        let expected = -(0..3).map(|i| surrogate[i] - beta * kl[i]).sum::<f64>() / 3.0;
        assert!(
            (scalar(&out.loss) - expected).abs() < 1e-6,
            "{} vs {expected}",
            scalar(&out.loss)
        );
        assert!((scalar(&out.kl) - kl.iter().sum::<f64>() / 3.0).abs() < 1e-6);
        assert!((scalar(&out.clip_fraction) - 2.0 / 3.0).abs() < 1e-6);
    }

    #[test]
    fn chunk_nll_ignores_invalid_and_non_imitated_entries() {
        // Two samples × chunk 2 × 1 dim; only sample 0, step 0 counts.
        let actions = t(&[1.0, 50.0, 7.0, 7.0]).view([2, 2, 1]);
        let mean = Tensor::zeros([2, 2, 1], (Kind::Float, tch::Device::Cpu));
        let log_std = Tensor::zeros([2, 1], (Kind::Float, tch::Device::Cpu));
        let valid = t(&[1.0, 0.0, 1.0, 1.0]).view([2, 2]);
        let imitate = t(&[1.0, 0.0]);
        let nll = chunk_nll(&actions, &mean, &log_std, &valid, &imitate);
        let expected = 0.5 + 0.5 * (2.0 * std::f64::consts::PI).ln();
        assert!((scalar(&nll) - expected).abs() < 1e-6);
    }
}
