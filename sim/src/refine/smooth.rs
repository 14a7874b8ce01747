//! Smooth kinematics: keyframes chosen from the kept samples (Ramer–Douglas–Peucker in joint
//! space, every gripper change kept), joined by minimum-jerk (quintic) segments whose durations
//! respect joint velocity, acceleration and jerk limits, with dwells for the gripper.

use super::segments::Sample;

/// Limits for re-timing, per joint (rad/s, rad/s², rad/s³; m-based for prismatic joints).
#[derive(Clone, Debug, PartialEq)]
pub struct Limits {
    pub velocity: Vec<f64>,
    pub acceleration: f64,
    pub jerk: f64,
}

/// Peak |velocity|, |acceleration| and |jerk| of a unit quintic min-jerk profile
/// s(τ) = 10τ³ − 15τ⁴ + 6τ⁵ per unit displacement and unit duration.
pub const MIN_JERK_PEAK_VEL: f64 = 1.875;
pub const MIN_JERK_PEAK_ACC: f64 = 5.773_502_691_896_258;
pub const MIN_JERK_PEAK_JERK: f64 = 60.0;

/// The shortest duration (s) a min-jerk move of `displacement` can take within the limits.
pub fn min_duration_s(displacement: &[f64], limits: &Limits) -> f64 {
    displacement
        .iter()
        .enumerate()
        .map(|(i, d)| {
            let d = d.abs();
            let v = limits.velocity.get(i).copied().unwrap_or(1.0).max(1e-9);
            (MIN_JERK_PEAK_VEL * d / v)
                .max((MIN_JERK_PEAK_ACC * d / limits.acceleration.max(1e-9)).sqrt())
                .max((MIN_JERK_PEAK_JERK * d / limits.jerk.max(1e-9)).cbrt())
        })
        .fold(0.0, f64::max)
}

fn distance_to_segment(p: &[f64], a: &[f64], b: &[f64]) -> f64 {
    let ab: Vec<f64> = b.iter().zip(a).map(|(b, a)| b - a).collect();
    let ap: Vec<f64> = p.iter().zip(a).map(|(p, a)| p - a).collect();
    let len2: f64 = ab.iter().map(|v| v * v).sum();
    let t = if len2 > 0.0 {
        (ap.iter().zip(&ab).map(|(x, y)| x * y).sum::<f64>() / len2).clamp(0.0, 1.0)
    } else {
        0.0
    };
    ap.iter()
        .zip(&ab)
        .map(|(x, y)| (x - t * y).powi(2))
        .sum::<f64>()
        .sqrt()
}

fn rdp(points: &[Vec<f64>], lo: usize, hi: usize, tolerance: f64, keep: &mut [bool]) {
    if hi <= lo + 1 {
        return;
    }
    let (mut worst, mut worst_i) = (0.0, lo);
    for i in lo + 1..hi {
        let d = distance_to_segment(&points[i], &points[lo], &points[hi]);
        if d > worst {
            worst = d;
            worst_i = i;
        }
    }
    if worst > tolerance {
        keep[worst_i] = true;
        rdp(points, lo, worst_i, tolerance, keep);
        rdp(points, worst_i, hi, tolerance, keep);
    }
}

/// Indices of keyframes: the ends, both sides of every gripper change, and the RDP points in
/// between. `points[i]` describes sample `i` in units where a deviation of 1 is the tolerance
/// (e.g. TCP position ÷ 1 cm concatenated with joints ÷ 0.15 rad).
pub fn keyframes(samples: &[Sample], points: &[Vec<f64>]) -> Vec<usize> {
    let n = samples.len();
    if n == 0 {
        return Vec::new();
    }
    let mut keep = vec![false; n];
    keep[0] = true;
    keep[n - 1] = true;
    for i in 1..n {
        if samples[i].gripper != samples[i - 1].gripper {
            keep[i - 1] = true;
            keep[i] = true;
        }
    }
    let fixed: Vec<usize> = (0..n).filter(|i| keep[*i]).collect();
    if points.len() == n {
        for w in fixed.windows(2) {
            rdp(points, w[0], w[1], 1.0, &mut keep);
        }
    }
    (0..n).filter(|i| keep[*i]).collect()
}

/// The gripper dwell of a re-timed plan: how long, and at which key of a change.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Dwell {
    pub s: f64,
    /// At the key before the change (the arm still where the command was given), not after it.
    pub before_change: bool,
}

/// The re-timed plan: one commanded sample per control step, starting at the first keyframe,
/// with `dwell.s` of the new gripper command held at each gripper change (at the key after the
/// change, or with `before_change` at the key before it, then moving on).
pub fn min_jerk_plan(
    keys: &[Sample],
    limits: &Limits,
    control_dt_s: f64,
    dwell: Dwell,
) -> Vec<Sample> {
    let mut plan = Vec::new();
    let dwell_steps = (dwell.s / control_dt_s).ceil() as usize;
    let hold = |q: &[f64], gripper: f64| {
        let sample = Sample {
            q_rad: q.to_vec(),
            gripper,
        };
        std::iter::repeat_n(sample, dwell_steps)
    };
    for w in keys.windows(2) {
        let (a, b) = (&w[0], &w[1]);
        let change = b.gripper != a.gripper;
        if change && dwell.before_change {
            plan.extend(hold(&a.q_rad, b.gripper));
        }
        let moving_gripper = if dwell.before_change {
            b.gripper
        } else {
            a.gripper
        };
        let d: Vec<f64> = b.q_rad.iter().zip(&a.q_rad).map(|(b, a)| b - a).collect();
        let steps = (min_duration_s(&d, limits) / control_dt_s).ceil() as usize;
        plan.extend((1..=steps).map(|k| {
            let tau = k as f64 / steps as f64;
            let s = tau * tau * tau * (10.0 - 15.0 * tau + 6.0 * tau * tau);
            Sample {
                q_rad: a.q_rad.iter().zip(&d).map(|(q, d)| q + s * d).collect(),
                gripper: moving_gripper,
            }
        }));
        if change && !dwell.before_change {
            plan.extend(hold(&b.q_rad, b.gripper));
        }
    }
    plan
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(q: &[f64], g: f64) -> Sample {
        Sample {
            q_rad: q.to_vec(),
            gripper: g,
        }
    }

    #[test]
    fn min_duration_respects_each_limit() {
        let limits = Limits {
            velocity: vec![1.0],
            acceleration: 1e9,
            jerk: 1e9,
        };
        assert!(
            (min_duration_s(&[2.0], &limits) - 3.75).abs() < 1e-12,
            "velocity bound: 1.875·2/1"
        );
        let limits = Limits {
            velocity: vec![1e9],
            acceleration: 4.0,
            jerk: 1e9,
        };
        assert!((min_duration_s(&[1.0], &limits) - (MIN_JERK_PEAK_ACC / 4.0).sqrt()).abs() < 1e-12);
        let limits = Limits {
            velocity: vec![1e9],
            acceleration: 1e9,
            jerk: 60.0,
        };
        assert!(
            (min_duration_s(&[1.0], &limits) - 1.0).abs() < 1e-12,
            "jerk bound: cbrt(60·1/60)"
        );
    }

    #[test]
    fn rdp_keeps_corners_and_gripper_changes() {
        let samples = vec![
            s(&[0.0, 0.0], 1.0),
            s(&[0.5, 0.001], 1.0),
            s(&[1.0, 0.0], 1.0),
            s(&[1.0, 0.5], 1.0),
            s(&[1.0, 1.0], 0.0),
        ];
        let points: Vec<Vec<f64>> = samples
            .iter()
            .map(|s| s.q_rad.iter().map(|q| q / 0.01).collect())
            .collect();
        assert_eq!(keyframes(&samples, &points), vec![0, 2, 3, 4]);
    }

    #[test]
    fn plan_is_within_limits_and_ends_on_the_last_key() {
        let keys = vec![s(&[0.0], 1.0), s(&[1.0], 0.0), s(&[0.2], 0.0)];
        let limits = Limits {
            velocity: vec![1.5],
            acceleration: 3.0,
            jerk: 30.0,
        };
        let dt = 0.04;
        let after = Dwell {
            s: 0.4,
            before_change: false,
        };
        let plan = min_jerk_plan(&keys, &limits, dt, after);
        assert!((plan.last().unwrap().q_rad[0] - 0.2).abs() < 1e-12);
        let q: Vec<f64> = std::iter::once(0.0)
            .chain(plan.iter().map(|p| p.q_rad[0]))
            .collect();
        let v: Vec<f64> = q.windows(2).map(|w| (w[1] - w[0]) / dt).collect();
        assert!(v.iter().all(|v| v.abs() <= 1.5 * 1.01), "velocity limit");
        let a: Vec<f64> = v.windows(2).map(|w| (w[1] - w[0]) / dt).collect();
        assert!(
            a.iter().all(|a| a.abs() <= 3.0 * 1.15),
            "acceleration limit (sampled)"
        );
        // The gripper closes only after the first move, then dwells.
        let closed_from = plan.iter().position(|p| p.gripper == 0.0).unwrap();
        assert_eq!(plan[closed_from].q_rad, vec![1.0]);
        assert!(plan[closed_from..closed_from + 10]
            .iter()
            .all(|p| p.q_rad == vec![1.0]));
    }

    #[test]
    fn a_dwell_before_the_change_holds_the_arm_where_the_command_was_given() {
        let limits = Limits {
            velocity: vec![1.5],
            acceleration: 3.0,
            jerk: 30.0,
        };
        let keys = vec![
            s(&[0.0], 1.0),
            s(&[1.0], 1.0),
            s(&[1.05], 0.0),
            s(&[0.2], 0.0),
        ];
        let before = Dwell {
            s: 0.4,
            before_change: true,
        };
        let plan = min_jerk_plan(&keys, &limits, 0.04, before);
        let closed_from = plan.iter().position(|p| p.gripper == 0.0).unwrap();
        assert_eq!(plan[closed_from - 1].q_rad, vec![1.0], "arrived open");
        assert!(
            plan[closed_from..closed_from + 10]
                .iter()
                .all(|p| p.q_rad == vec![1.0]),
            "the dwell holds the key before the change"
        );
        assert!(
            plan[closed_from + 10].q_rad[0] > 1.0,
            "then moves on, closed"
        );
        assert!((plan.last().unwrap().q_rad[0] - 0.2).abs() < 1e-12);
    }
}
