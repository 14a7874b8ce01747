//! Statistics that can tell arms apart over few seeds, after Agarwal et al., "Deep
//! reinforcement learning at the edge of the statistical precipice" (NeurIPS 2021) and its
//! `rliable` library: every (run, skill) score of an arm pooled, the interquartile mean (IQM)
//! as the aggregate, 95 % percentile intervals from a *stratified* bootstrap (runs resampled
//! with replacement independently for each skill), the probability of improvement of one arm
//! over another (per skill P(X > Y) + ½ P(X = Y) over all pairs of runs, averaged over skills)
//! and performance profiles (the share of scores above each threshold τ).
//!
//! A score is a run's final held-out success on a skill; a skill a run never evaluated counts 0.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

/// Bootstrap resamples per interval (rliable's default for quick figures is 2,000).
pub const BOOTSTRAP_REPS: usize = 2_000;

/// One arm's scores: `runs[r][m]` is run r's score on skill m (every row as long as `skills`).
#[derive(Clone, Debug, PartialEq)]
pub struct Scores {
    pub skills: Vec<String>,
    pub runs: Vec<Vec<f64>>,
}

/// A point estimate and its 95 % bootstrap interval.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Interval {
    pub point: f64,
    pub lo: f64,
    pub hi: f64,
}

/// The mean of the middle half: ⌊n/4⌋ values trimmed from each end, as
/// `scipy.stats.trim_mean(x, 0.25)` (what rliable's IQM is); None when empty.
pub fn iqm(values: &[f64]) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let trim = sorted.len() / 4;
    let middle = &sorted[trim..sorted.len() - trim];
    Some(middle.iter().sum::<f64>() / middle.len() as f64)
}

impl Scores {
    fn pooled(&self) -> Vec<f64> {
        self.runs.iter().flatten().copied().collect()
    }

    fn column(&self, m: usize) -> impl Iterator<Item = f64> + '_ {
        self.runs.iter().map(move |r| r[m])
    }

    /// The same shape, each skill's column drawn from its own runs with replacement.
    fn resample(&self, rng: &mut ChaCha8Rng) -> Scores {
        let n = self.runs.len();
        let mut runs = vec![vec![0.0; self.skills.len()]; n];
        for m in 0..self.skills.len() {
            for row in &mut runs {
                row[m] = self.runs[rng.gen_range(0..n)][m];
            }
        }
        Scores {
            skills: self.skills.clone(),
            runs,
        }
    }

    /// The IQM of every (run, skill) score.
    pub fn iqm(&self) -> f64 {
        iqm(&self.pooled()).unwrap_or(0.0)
    }

    /// Share of (run, skill) scores strictly above `tau`.
    pub fn above(&self, tau: f64) -> f64 {
        let all = self.pooled();
        all.iter().filter(|s| **s > tau).count() as f64 / all.len().max(1) as f64
    }
}

/// The 2.5 and 97.5 percentiles of `samples` around `point`.
fn interval(point: f64, mut samples: Vec<f64>) -> Interval {
    samples.sort_by(f64::total_cmp);
    let at = |p: f64| samples[((samples.len() - 1) as f64 * p).round() as usize];
    Interval {
        point,
        lo: at(0.025),
        hi: at(0.975),
    }
}

/// `statistic` of one arm with its stratified-bootstrap interval.
pub fn bootstrap(x: &Scores, seed: u64, statistic: impl Fn(&Scores) -> f64) -> Interval {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let samples = (0..BOOTSTRAP_REPS)
        .map(|_| statistic(&x.resample(&mut rng)))
        .collect();
    interval(statistic(x), samples)
}

/// `statistic` of two arms (each resampled on its own) with its bootstrap interval.
pub fn bootstrap_pair(
    x: &Scores,
    y: &Scores,
    seed: u64,
    statistic: impl Fn(&Scores, &Scores) -> f64,
) -> Interval {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let samples = (0..BOOTSTRAP_REPS)
        .map(|_| {
            let a = x.resample(&mut rng);
            statistic(&a, &y.resample(&mut rng))
        })
        .collect();
    interval(statistic(x, y), samples)
}

/// P(X > Y) + ½ P(X = Y) for a run of `x` and a run of `y` on the same skill, averaged over
/// the skills (both arms scored on the same skill list).
pub fn probability_of_improvement(x: &Scores, y: &Scores) -> f64 {
    let skills = x.skills.len().min(y.skills.len());
    if skills == 0 || x.runs.is_empty() || y.runs.is_empty() {
        return 0.5;
    }
    let per_skill = (0..skills).map(|m| {
        let mut wins = 0.0;
        for a in x.column(m) {
            for b in y.column(m) {
                wins += if a > b {
                    1.0
                } else if a == b {
                    0.5
                } else {
                    0.0
                };
            }
        }
        wins / (x.runs.len() * y.runs.len()) as f64
    });
    per_skill.sum::<f64>() / skills as f64
}

/// Two arms compared: `arm` against `baseline`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PairStats {
    pub arm: String,
    pub baseline: String,
    /// IQM(arm) − IQM(baseline).
    pub iqm_difference: Interval,
    pub probability_of_improvement: Interval,
    /// The same difference on the hard-tail scores, when every run measured them.
    #[serde(default)]
    pub hard_tail_difference: Option<Interval>,
}

/// One arm's aggregate.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ArmStats {
    pub arm: String,
    pub runs: usize,
    pub skills: Vec<String>,
    pub iqm: Interval,
    /// (τ, share of scores above τ with its interval) at τ = 0, 0.05, …, 1.
    pub profile: Vec<(f64, Interval)>,
    /// GRPO groups over the arm's runs, and those whose sampled success was all 0 or all 1
    /// (they carry no gradient from success); (0, 0) without GRPO.
    #[serde(default)]
    pub grpo_groups: (usize, usize),
    /// IQM of the hard-tail scores, when every run measured them.
    #[serde(default)]
    pub hard_tail_iqm: Option<Interval>,
}

/// Thresholds of the performance profile.
pub fn taus() -> Vec<f64> {
    (0..=20).map(|i| i as f64 / 20.0).collect()
}

pub fn arm_stats(name: &str, x: &Scores) -> ArmStats {
    ArmStats {
        arm: name.to_owned(),
        runs: x.runs.len(),
        skills: x.skills.clone(),
        iqm: bootstrap(x, 1, Scores::iqm),
        profile: taus()
            .into_iter()
            .map(|tau| (tau, bootstrap(x, 2, |s| s.above(tau))))
            .collect(),
        grpo_groups: (0, 0),
        hard_tail_iqm: None,
    }
}

pub fn pair_stats(arm: &str, x: &Scores, baseline: &str, y: &Scores) -> PairStats {
    PairStats {
        arm: arm.to_owned(),
        baseline: baseline.to_owned(),
        iqm_difference: bootstrap_pair(x, y, 3, |a, b| a.iqm() - b.iqm()),
        probability_of_improvement: bootstrap_pair(x, y, 4, probability_of_improvement),
        hard_tail_difference: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scores(runs: &[&[f64]]) -> Scores {
        Scores {
            skills: (0..runs[0].len()).map(|m| format!("s{m}")).collect(),
            runs: runs.iter().map(|r| r.to_vec()).collect(),
        }
    }

    #[test]
    fn iqm_trims_a_quarter_from_each_end() {
        // scipy.stats.trim_mean([1..8], 0.25) = mean(3, 4, 5, 6) = 4.5
        let v: Vec<f64> = (1..=8).map(f64::from).collect();
        assert_eq!(iqm(&v), Some(4.5));
        assert_eq!(iqm(&[2.0, 100.0, 3.0]), Some(35.0), "n = 3 trims nothing");
        assert_eq!(iqm(&[]), None);
    }

    #[test]
    fn probability_of_improvement_counts_ties_as_half() {
        let x = scores(&[&[0.9, 0.5], &[0.7, 0.5]]);
        let y = scores(&[&[0.8, 0.5], &[0.6, 0.5]]);
        // skill 0: pairs (0.9>0.8, 0.9>0.6, 0.7<0.8, 0.7>0.6) = 3/4; skill 1: all ties = 1/2.
        assert!((probability_of_improvement(&x, &y) - 0.625).abs() < 1e-12);
        assert!((probability_of_improvement(&y, &x) - 0.375).abs() < 1e-12);
    }

    #[test]
    fn a_clear_difference_has_an_interval_above_zero_and_noise_does_not() {
        let better = scores(&[
            &[0.9, 0.85],
            &[0.95, 0.8],
            &[0.88, 0.9],
            &[0.92, 0.87],
            &[0.9, 0.9],
        ]);
        let worse = scores(&[
            &[0.5, 0.4],
            &[0.6, 0.45],
            &[0.55, 0.5],
            &[0.4, 0.5],
            &[0.5, 0.55],
        ]);
        let clear = pair_stats("a", &better, "b", &worse);
        assert!(clear.iqm_difference.lo > 0.2, "{:?}", clear.iqm_difference);
        assert_eq!(clear.probability_of_improvement.point, 1.0);
        let level = scores(&[
            &[0.9, 0.4],
            &[0.5, 0.85],
            &[0.6, 0.5],
            &[0.88, 0.5],
            &[0.45, 0.9],
        ]);
        let noisy = pair_stats("a", &level, "b", &better);
        assert!(noisy.iqm_difference.lo < 0.0 && noisy.iqm_difference.hi >= -0.6);
        let same = pair_stats("a", &level, "a", &level);
        assert_eq!(same.iqm_difference.point, 0.0);
        assert!(same.iqm_difference.lo < 0.0 && same.iqm_difference.hi > 0.0);
        assert!((same.probability_of_improvement.point - 0.5).abs() < 1e-12);
    }

    #[test]
    fn the_stratified_bootstrap_keeps_each_skills_own_values() {
        let x = scores(&[&[1.0, 10.0], &[2.0, 20.0], &[3.0, 30.0]]);
        let mut rng = ChaCha8Rng::seed_from_u64(0);
        for _ in 0..50 {
            let r = x.resample(&mut rng);
            assert!(r.runs.iter().all(|row| row[0] <= 3.0 && row[1] >= 10.0));
        }
        let profile = arm_stats("x", &scores(&[&[0.2, 0.9], &[0.6, 1.0]])).profile;
        assert_eq!(profile.len(), 21);
        assert_eq!(profile[0].1.point, 1.0, "every score is above 0");
        assert_eq!(profile[20].1.point, 0.0, "none is above 1");
        assert_eq!(profile[10].1.point, 0.75, "3 of 4 above 0.5");
    }
}
