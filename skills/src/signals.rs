//! Weakness signals (after the CoEvolve paper, arXiv 2604.15840): which task variants the
//! curriculum should synthesise around.
//! - **Forgetting**: a variant once solved (success rate ≥ `solved_rate` in an earlier
//!   evaluation) that now fails (rate < `solved_rate`).
//! - **Boundary**: a variant whose current success rate is near 50 % (|rate − 0.5| ≤ `band`):
//!   the policy is uncertain there.
//! - **Rare**: a variant in a seldom-explored region of task-parameter space: its mean distance
//!   to its `k` nearest explored neighbours (parameters scaled to [0, 1] by their ranges) is in
//!   the top `rare_fraction` of all variants.

use serde::{Deserialize, Serialize};

/// One evaluation of a variant under the policy of some generation.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Evaluation {
    pub generation: usize,
    pub attempts: usize,
    pub successes: usize,
}

impl Evaluation {
    pub fn rate(&self) -> f64 {
        self.successes as f64 / self.attempts.max(1) as f64
    }
}

/// A task variant's position in parameter space and its evaluations, oldest first.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct VariantHistory {
    pub name: String,
    /// Task parameters scaled to [0, 1] by their generator ranges.
    pub params: Vec<f64>,
    pub evaluations: Vec<Evaluation>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Signal {
    Forgetting,
    Boundary,
    Rare,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SignalConfig {
    pub solved_rate: f64,
    pub band: f64,
    /// Fewest attempts for a rate to count.
    pub min_attempts: usize,
    pub neighbours: usize,
    pub rare_fraction: f64,
}

impl Default for SignalConfig {
    fn default() -> Self {
        SignalConfig {
            solved_rate: 0.75,
            band: 0.2,
            min_attempts: 2,
            neighbours: 3,
            rare_fraction: 0.1,
        }
    }
}

/// The signals raised for each variant (indices into `variants`), sorted by variant.
pub fn weakness_signals(variants: &[VariantHistory], cfg: &SignalConfig) -> Vec<(usize, Signal)> {
    let mut out = Vec::new();
    for (i, v) in variants.iter().enumerate() {
        let counted: Vec<&Evaluation> = v
            .evaluations
            .iter()
            .filter(|e| e.attempts >= cfg.min_attempts)
            .collect();
        if let Some((last, earlier)) = counted.split_last() {
            if last.rate() < cfg.solved_rate && earlier.iter().any(|e| e.rate() >= cfg.solved_rate)
            {
                out.push((i, Signal::Forgetting));
            }
            if (last.rate() - 0.5).abs() <= cfg.band {
                out.push((i, Signal::Boundary));
            }
        }
    }
    for i in rare(variants, cfg) {
        out.push((i, Signal::Rare));
    }
    out.sort();
    out
}

/// Mean distance of each variant to its k nearest neighbours; the sparsest fraction are rare.
fn rare(variants: &[VariantHistory], cfg: &SignalConfig) -> Vec<usize> {
    let n = variants.len();
    if n <= cfg.neighbours || cfg.rare_fraction <= 0.0 {
        return Vec::new();
    }
    let dist = |a: &[f64], b: &[f64]| {
        a.iter()
            .zip(b)
            .map(|(x, y)| (x - y).powi(2))
            .sum::<f64>()
            .sqrt()
    };
    let sparsity: Vec<f64> = variants
        .iter()
        .enumerate()
        .map(|(i, v)| {
            let mut d: Vec<f64> = variants
                .iter()
                .enumerate()
                .filter(|(j, _)| *j != i)
                .map(|(_, w)| dist(&v.params, &w.params))
                .collect();
            d.sort_by(f64::total_cmp);
            d.iter().take(cfg.neighbours).sum::<f64>() / cfg.neighbours as f64
        })
        .collect();
    let count = ((n as f64 * cfg.rare_fraction).ceil() as usize).clamp(1, n);
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by(|a, b| sparsity[*b].total_cmp(&sparsity[*a]).then(a.cmp(b)));
    order.truncate(count);
    order.sort_unstable();
    order
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(name: &str, params: &[f64], rates: &[(usize, usize)]) -> VariantHistory {
        VariantHistory {
            name: name.into(),
            params: params.to_vec(),
            evaluations: rates
                .iter()
                .enumerate()
                .map(|(g, (s, a))| Evaluation {
                    generation: g,
                    attempts: *a,
                    successes: *s,
                })
                .collect(),
        }
    }

    #[test]
    fn forgetting_boundary_and_rare() {
        let variants = vec![
            v("forgotten", &[0.1, 0.1], &[(4, 4), (1, 4)]),
            v("uncertain", &[0.12, 0.1], &[(2, 4)]),
            v("solid", &[0.1, 0.12], &[(4, 4), (4, 4)]),
            v("never", &[0.11, 0.11], &[(0, 4), (0, 4)]),
            v("far away", &[0.9, 0.9], &[(4, 4)]),
            v("too few", &[0.12, 0.12], &[(1, 1), (0, 1)]),
        ];
        let cfg = SignalConfig {
            rare_fraction: 0.1,
            ..SignalConfig::default()
        };
        let s = weakness_signals(&variants, &cfg);
        assert_eq!(
            s,
            vec![
                (0, Signal::Forgetting),
                (1, Signal::Boundary),
                (4, Signal::Rare)
            ]
        );
    }
}
