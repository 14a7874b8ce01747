//! The field's curricula as arms of the loop, with their published rules:
//! - Robust Prioritized Level Replay (Jiang, Grefenstette and Rocktäschel, "Prioritized Level
//!   Replay", ICML 2021; Jiang et al., "Replay-Guided Adversarial Environment Design", NeurIPS
//!   2021): tracked variants are the level buffer; each generation either replays variants
//!   drawn from P = (1 − ρ) P_score + ρ P_staleness, with P_score ∝ (1 / rank)^(1/β), or
//!   (with probability 1 − replay_prob) scores fresh variants with the policy's rollouts and
//!   learns nothing from them (the robust form); a full buffer drops its lowest score.
//! - Sampling For Learnability (Rutherford et al., "No Regrets: Investigating and Improving
//!   Regret Approximations for Curriculum Discovery", NeurIPS 2024): fresh candidates scored
//!   by p̂(1 − p̂), the top K kept, a generation's variants half from that buffer and half fresh.

use rand::Rng;
use rand_chacha::ChaCha8Rng;

use super::config::{PlrConfig, PlrScore};
use super::state::TrackedVariant;

/// p̂(1 − p̂) of the variant's latest evaluation (0 if never evaluated).
pub fn learnability(v: &TrackedVariant) -> f64 {
    v.history
        .evaluations
        .last()
        .map_or(0.0, |e| e.rate() * (1.0 - e.rate()))
}

/// PLR's score of a tracked variant.
pub fn plr_score(v: &TrackedVariant, score: PlrScore) -> f64 {
    match score {
        PlrScore::Learnability => learnability(v),
        PlrScore::BestMinusCurrent => {
            let evals = &v.history.evaluations;
            let best = evals.iter().map(|e| e.rate()).fold(0.0, f64::max);
            evals.last().map_or(0.0, |e| best - e.rate())
        }
    }
}

fn last_played(v: &TrackedVariant) -> usize {
    v.history.evaluations.last().map_or(0, |e| e.generation)
}

/// PLR's replay distribution over `tracked` at generation `now`: rank prioritisation of the
/// scores (rank 1 the highest; ties by position) at temperature β, mixed with staleness (the
/// generations since a variant was last played) by ρ.
pub fn replay_distribution(tracked: &[TrackedVariant], now: usize, cfg: &PlrConfig) -> Vec<f64> {
    let n = tracked.len();
    if n == 0 {
        return Vec::new();
    }
    let scores: Vec<f64> = tracked.iter().map(|v| plr_score(v, cfg.score)).collect();
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by(|a, b| scores[*b].total_cmp(&scores[*a]));
    let mut by_score = vec![0.0; n];
    for (rank, &i) in order.iter().enumerate() {
        by_score[i] = (1.0 / (rank + 1) as f64).powf(1.0 / cfg.temperature.max(1e-6));
    }
    let total: f64 = by_score.iter().sum();
    let stale: Vec<f64> = tracked
        .iter()
        .map(|v| now.saturating_sub(last_played(v)) as f64)
        .collect();
    let stale_total: f64 = stale.iter().sum();
    (0..n)
        .map(|i| {
            let p_stale = if stale_total > 0.0 {
                stale[i] / stale_total
            } else {
                1.0 / n as f64
            };
            (1.0 - cfg.staleness) * by_score[i] / total + cfg.staleness * p_stale
        })
        .collect()
}

/// `count` distinct indices drawn in turn from `weights` (renormalised after each draw).
pub fn draw_distinct(weights: &[f64], count: usize, rng: &mut ChaCha8Rng) -> Vec<usize> {
    let mut w = weights.to_vec();
    let mut out = Vec::with_capacity(count.min(w.len()));
    while out.len() < count.min(w.len()) {
        let total: f64 = w.iter().sum();
        let mut at = rng.gen::<f64>() * total;
        let pick = (0..w.len())
            .filter(|i| w[*i] > 0.0)
            .find(|i| {
                at -= w[*i];
                at < 0.0
            })
            .or_else(|| (0..w.len()).rev().find(|i| w[*i] > 0.0));
        let Some(i) = pick else { break };
        out.push(i);
        w[i] = 0.0;
    }
    out
}

/// Index of the variant a full PLR buffer drops: the lowest score, the oldest on a tie.
pub fn lowest_scored(tracked: &[TrackedVariant], score: PlrScore) -> Option<usize> {
    (0..tracked.len())
        .min_by(|a, b| plr_score(&tracked[*a], score).total_cmp(&plr_score(&tracked[*b], score)))
}

/// SFL's buffer: the `k` most learnable of the scored candidates (ones the policy always or
/// never solves carry no learnability and are not kept).
pub fn most_learnable(mut scored: Vec<TrackedVariant>, k: usize) -> Vec<TrackedVariant> {
    scored.retain(|v| learnability(v) > 0.0);
    scored.sort_by(|a, b| learnability(b).total_cmp(&learnability(a)));
    scored.truncate(k);
    scored
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evolve::state::Origin;
    use crate::signals::{Evaluation, VariantHistory};

    fn variant(name: &str, evals: &[(usize, usize, usize)]) -> TrackedVariant {
        let task = sim::library::sample_task(
            sim::SkillKind::Reach,
            &sim::library::TaskRanges::default(),
            &mut <ChaCha8Rng as rand::SeedableRng>::seed_from_u64(0),
        );
        TrackedVariant {
            task,
            seed: 0,
            origin: Origin::Generator,
            history: VariantHistory {
                name: name.into(),
                params: Vec::new(),
                evaluations: evals
                    .iter()
                    .map(|&(generation, attempts, successes)| Evaluation {
                        generation,
                        attempts,
                        successes,
                    })
                    .collect(),
            },
        }
    }

    #[test]
    fn scores_follow_the_published_definitions() {
        let v = variant("a", &[(0, 4, 4), (1, 4, 1)]);
        assert!((learnability(&v) - 0.1875).abs() < 1e-12, "0.25 × 0.75");
        assert!((plr_score(&v, PlrScore::BestMinusCurrent) - 0.75).abs() < 1e-12);
        assert_eq!(learnability(&variant("b", &[])), 0.0);
    }

    #[test]
    fn replay_prefers_high_scores_and_stale_variants() {
        let tracked = vec![
            variant("solved", &[(5, 2, 2)]),
            variant("learnable", &[(5, 2, 1)]),
            variant("stale", &[(0, 2, 2)]),
        ];
        let cfg = PlrConfig::default();
        let p = replay_distribution(&tracked, 6, &cfg);
        assert!((p.iter().sum::<f64>() - 1.0).abs() < 1e-9);
        // Ranks 1, 2, 3 at β = 0.3: weights 1, 2^-3.33, 3^-3.33 (the solved ones tie at 0 and
        // keep their order); staleness 1, 1, 6 generations.
        let h = [
            1.0f64,
            0.5f64.powf(1.0 / 0.3),
            (1.0f64 / 3.0).powf(1.0 / 0.3),
        ];
        let hs: f64 = h.iter().sum();
        let expect_learnable = 0.7 * h[0] / hs + 0.3 * 1.0 / 8.0;
        assert!((p[1] - expect_learnable).abs() < 1e-9, "{p:?}");
        assert!(p[1] > p[0] && p[2] > p[0], "{p:?}");
        let no_staleness = PlrConfig {
            staleness: 0.0,
            ..cfg
        };
        let q = replay_distribution(&tracked, 6, &no_staleness);
        assert!(q[1] > 0.85, "{q:?}");
    }

    #[test]
    fn draws_are_distinct_and_follow_the_weights() {
        let mut rng = <ChaCha8Rng as rand::SeedableRng>::seed_from_u64(1);
        let mut first = [0usize; 3];
        for _ in 0..2000 {
            let d = draw_distinct(&[0.7, 0.2, 0.1], 2, &mut rng);
            assert_eq!(d.len(), 2);
            assert_ne!(d[0], d[1]);
            first[d[0]] += 1;
        }
        assert!((first[0] as f64 / 2000.0 - 0.7).abs() < 0.04, "{first:?}");
        assert_eq!(draw_distinct(&[1.0, 0.0], 2, &mut rng), vec![0]);
    }

    #[test]
    fn sfl_keeps_the_most_learnable_and_plr_drops_the_lowest() {
        let scored = vec![
            variant("never", &[(0, 2, 0)]),
            variant("half", &[(0, 2, 1)]),
            variant("always", &[(0, 2, 2)]),
            variant("quarter", &[(0, 4, 1)]),
        ];
        let kept = most_learnable(scored.clone(), 5);
        let names: Vec<&str> = kept.iter().map(|v| v.history.name.as_str()).collect();
        assert_eq!(names, ["half", "quarter"]);
        assert_eq!(most_learnable(scored.clone(), 1).len(), 1);
        assert_eq!(lowest_scored(&scored, PlrScore::Learnability), Some(0));
    }
}
