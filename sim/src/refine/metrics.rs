//! Trajectory metrics (duration, EE path length, joint-space jerk and acceleration) and the
//! trajectory feature vector used for novelty.

use nalgebra::Vector3;

use crate::episode::Episode;

/// Samples of measured joint positions at the control rate, including the initial state.
pub fn joint_samples(e: &Episode) -> Vec<&[f64]> {
    std::iter::once(e.initial_state.q_rad.as_slice())
        .chain(e.steps.iter().map(|s| s.state.q_rad.as_slice()))
        .collect()
}

/// TCP positions, including the initial state.
pub fn ee_positions(e: &Episode) -> Vec<Vector3<f64>> {
    std::iter::once(&e.initial_state)
        .chain(e.steps.iter().map(|s| &s.state))
        .map(|s| s.ee_position_m())
        .collect()
}

pub fn path_length_m(e: &Episode) -> f64 {
    ee_positions(e)
        .windows(2)
        .map(|w| (w[1] - w[0]).norm())
        .sum()
}

/// Finite-difference derivative of order `order` (1 = velocity …) of joint samples spaced
/// `dt_s`, as one vector per interior sample.
fn derivative(q: &[&[f64]], order: usize, dt_s: f64) -> Vec<Vec<f64>> {
    let mut d: Vec<Vec<f64>> = q.iter().map(|s| s.to_vec()).collect();
    for _ in 0..order {
        d = d
            .windows(2)
            .map(|w| {
                w[1].iter()
                    .zip(&w[0])
                    .map(|(b, a)| (b - a) / dt_s)
                    .collect()
            })
            .collect();
    }
    d
}

/// Root-mean-square joint jerk (rad/s³) over all joints and samples.
pub fn rms_jerk(e: &Episode, dt_s: f64) -> f64 {
    let j = derivative(&joint_samples(e), 3, dt_s);
    let (sum, n) = j
        .iter()
        .flatten()
        .fold((0.0, 0usize), |(s, n), v| (s + v * v, n + 1));
    if n == 0 {
        0.0
    } else {
        (sum / n as f64).sqrt()
    }
}

/// Largest absolute joint acceleration (rad/s²).
pub fn peak_acceleration(e: &Episode, dt_s: f64) -> f64 {
    derivative(&joint_samples(e), 2, dt_s)
        .iter()
        .flatten()
        .fold(0.0, |m: f64, v| m.max(v.abs()))
}

pub fn duration_s(e: &Episode, dt_s: f64) -> f64 {
    e.steps.len() as f64 * dt_s
}

/// Number of resampled TCP path points in the feature vector.
pub const FEATURE_POINTS: usize = 16;

/// A fixed-length description of what the trajectory did: the TCP path relative to the first
/// object's start, resampled by arc length at `FEATURE_POINTS` points (m), plus the duration
/// (s, scaled by 0.1 so a second weighs like 10 cm).
pub fn features(e: &Episode, dt_s: f64) -> Vec<f64> {
    let origin = e
        .initial_state
        .objects
        .first()
        .map_or(Vector3::zeros(), |o| o.position_m());
    let path = ee_positions(e);
    let cumulative: Vec<f64> = std::iter::once(0.0)
        .chain(path.windows(2).scan(0.0, |acc, w| {
            *acc += (w[1] - w[0]).norm();
            Some(*acc)
        }))
        .collect();
    let total = cumulative.last().copied().unwrap_or(0.0);
    let mut out = Vec::with_capacity(FEATURE_POINTS * 3 + 1);
    let mut j = 0;
    for k in 0..FEATURE_POINTS {
        let s = total * k as f64 / (FEATURE_POINTS - 1) as f64;
        while j + 1 < cumulative.len() && cumulative[j + 1] < s {
            j += 1;
        }
        let p = match (path.get(j), path.get(j + 1)) {
            (Some(a), Some(b)) => {
                let span = (cumulative[j + 1] - cumulative[j]).max(1e-12);
                a + (b - a) * ((s - cumulative[j]) / span).clamp(0.0, 1.0)
            }
            (Some(a), None) => *a,
            _ => Vector3::zeros(),
        };
        out.extend((p - origin).iter());
    }
    out.push(0.1 * duration_s(e, dt_s));
    out
}

/// Distance from `f` to the nearest of `others` (∞ when there are none).
pub fn novelty(f: &[f64], others: &[Vec<f64>]) -> f64 {
    others
        .iter()
        .map(|o| {
            o.iter()
                .zip(f)
                .map(|(a, b)| (a - b) * (a - b))
                .sum::<f64>()
                .sqrt()
                / (FEATURE_POINTS as f64).sqrt()
        })
        .fold(f64::INFINITY, f64::min)
}
