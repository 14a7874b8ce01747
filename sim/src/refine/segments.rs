//! From a raw episode to the commanded path worth keeping: the commanded joint targets and
//! gripper commands per control step, with failed sub-attempts (retried grasps) pruned and idle
//! or hesitating stretches trimmed. Events come from the recorded contacts and kinematics.

use crate::episode::Episode;

/// One commanded sample: arm joint targets and the gripper opening command.
#[derive(Clone, Debug, PartialEq)]
pub struct Sample {
    pub q_rad: Vec<f64>,
    pub gripper: f64,
}

/// Gripper commands below this close the gripper.
pub const CLOSED_BELOW: f64 = 0.5;

/// A gripper command as the event it stands for: open (1) or closed (0). A sampled policy's
/// command wanders (0.94, 1.0, 0.97, …) while it means "open"; kept as is, every wobble would be
/// a gripper change (a keyframe and a dwell in the re-timed plan).
pub fn gripper_event(command: f64) -> f64 {
    if command < CLOSED_BELOW {
        0.0
    } else {
        1.0
    }
}

/// The commanded samples of an episode: the initial configuration, then one per step, gripper
/// commands as open/closed events.
pub fn commanded(e: &Episode) -> Vec<Sample> {
    let first = Sample {
        q_rad: e.initial_state.q_rad.clone(),
        gripper: gripper_event(e.initial_state.gripper_opening),
    };
    std::iter::once(first)
        .chain(e.steps.iter().map(|s| Sample {
            q_rad: s.q_target_rad.clone(),
            gripper: gripper_event(s.action.gripper()),
        }))
        .collect()
}

/// A closed-gripper stretch `[start, end)` in sample indices.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Closure {
    pub start: usize,
    pub end: usize,
}

pub fn closures(samples: &[Sample]) -> Vec<Closure> {
    let mut out = Vec::new();
    let mut start = None;
    for (i, s) in samples.iter().enumerate() {
        match (s.gripper < CLOSED_BELOW, start) {
            (true, None) => start = Some(i),
            (false, Some(b)) => {
                out.push(Closure { start: b, end: i });
                start = None;
            }
            _ => {}
        }
    }
    if let Some(b) = start {
        out.push(Closure {
            start: b,
            end: samples.len(),
        });
    }
    out
}

/// Whether both fingers held `object` at sample `i` (sample 0 is the initial state).
fn held_at(e: &Episode, object: usize, i: usize) -> bool {
    let state = if i == 0 {
        &e.initial_state
    } else {
        &e.steps[i - 1].state
    };
    let fingers = &state.contacts.finger_touch;
    fingers.len() >= 2
        && fingers
            .iter()
            .all(|f| f.get(object).copied().unwrap_or(false))
}

/// Closed stretches that ended (re-opened) without holding the object: failed grasps or drops.
pub fn failed_attempts(e: &Episode, samples: &[Sample], object: Option<usize>) -> Vec<Closure> {
    let Some(object) = object else {
        return Vec::new();
    };
    closures(samples)
        .into_iter()
        .filter(|c| c.end < samples.len())
        .filter(|c| {
            // Sample `end - 1` is the last closed command; its state is what followed it.
            let last = c.end.saturating_sub(1).max(c.start);
            !held_at(e, object, last)
        })
        .collect()
}

/// Keeps the initial sample and everything from the re-opening after the last failed attempt:
/// the final, successful approach. Returns the kept samples and how many attempts were cut.
pub fn prune_failed_attempts(
    e: &Episode,
    samples: Vec<Sample>,
    object: Option<usize>,
) -> (Vec<Sample>, usize) {
    let failed = failed_attempts(e, &samples, object);
    let Some(last) = failed.last() else {
        return (samples, 0);
    };
    let mut kept = Vec::with_capacity(samples.len() - last.end + 1);
    kept.push(samples[0].clone());
    kept.extend(samples[last.end..].iter().cloned());
    (kept, failed.len())
}

/// The arm's measured speed (fastest joint, rad/s) after each commanded sample of
/// [`commanded`]: the initial state's, then each step's.
pub fn arm_speeds(e: &Episode) -> Vec<f64> {
    let fastest = |qd: &[f64]| qd.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    std::iter::once(fastest(&e.initial_state.qd_rad_s))
        .chain(e.steps.iter().map(|s| fastest(&s.state.qd_rad_s)))
        .collect()
}

/// Drops samples where nothing changes (same targets within `still_rad`, same gripper command)
/// once the arm has settled (`speeds[i]`, the arm's speed after sample `i`, below
/// `settled_rad_s`; a missing speed counts as settled): hesitations and idle time anywhere, but
/// not the wait for the arm to reach a target. Returns the kept samples and how many were
/// dropped.
pub fn trim_idle(
    samples: Vec<Sample>,
    speeds: &[f64],
    still_rad: f64,
    settled_rad_s: f64,
) -> (Vec<Sample>, usize) {
    let n = samples.len();
    let mut kept: Vec<Sample> = Vec::with_capacity(n);
    for (i, s) in samples.into_iter().enumerate() {
        let idle = kept.last().is_some_and(|prev| {
            prev.gripper == s.gripper
                && prev
                    .q_rad
                    .iter()
                    .zip(&s.q_rad)
                    .all(|(a, b)| (a - b).abs() <= still_rad)
                && speeds.get(i).is_none_or(|v| *v < settled_rad_s)
        });
        if !idle {
            kept.push(s);
        }
    }
    let dropped = n - kept.len();
    (kept, dropped)
}

/// Centred moving average of the joint targets over `window` samples, never across a gripper
/// command change (so grasp and release configurations are estimated from their own stretch).
pub fn denoise(samples: &[Sample], window: usize) -> Vec<Sample> {
    let half = window / 2;
    let n = samples.len();
    let mut out = samples.to_vec();
    let mut run_start = 0;
    for i in 0..=n {
        let run_ends =
            i == n || (i > run_start && samples[i].gripper != samples[run_start].gripper);
        if !run_ends {
            continue;
        }
        for (k, sample) in out.iter_mut().enumerate().take(i).skip(run_start) {
            let lo = k.saturating_sub(half).max(run_start);
            let hi = (k + half + 1).min(i);
            let count = (hi - lo) as f64;
            for (j, q) in sample.q_rad.iter_mut().enumerate() {
                *q = samples[lo..hi].iter().map(|s| s.q_rad[j]).sum::<f64>() / count;
            }
        }
        run_start = i;
    }
    // The start is where the episode really begins and the end is where it succeeded: keep
    // both exact (averaging a still-moving end would stop short of it).
    if let (Some(first), Some(orig)) = (out.first_mut(), samples.first()) {
        *first = orig.clone();
    }
    if let (Some(last), Some(orig)) = (out.last_mut(), samples.last()) {
        *last = orig.clone();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(q: f64, g: f64) -> Sample {
        Sample {
            q_rad: vec![q, 0.0],
            gripper: g,
        }
    }

    #[test]
    fn closures_are_found() {
        let v = vec![
            s(0.0, 1.0),
            s(0.1, 0.0),
            s(0.2, 0.0),
            s(0.3, 1.0),
            s(0.4, 0.0),
        ];
        assert_eq!(
            closures(&v),
            vec![Closure { start: 1, end: 3 }, Closure { start: 4, end: 5 }]
        );
    }

    #[test]
    fn denoise_averages_within_gripper_runs_only() {
        let v = vec![
            s(0.0, 1.0),
            s(0.3, 1.0),
            s(0.0, 1.0),
            s(1.0, 0.0),
            s(2.0, 0.0),
        ];
        let d = denoise(&v, 3);
        assert_eq!(d[0].q_rad[0], 0.0, "start kept exact");
        assert!((d[1].q_rad[0] - 0.1).abs() < 1e-12);
        assert!(
            (d[2].q_rad[0] - 0.15).abs() < 1e-12,
            "window clipped at the gripper change"
        );
        assert!((d[3].q_rad[0] - 1.5).abs() < 1e-12);
    }

    #[test]
    fn idle_samples_are_trimmed_anywhere() {
        let v = vec![
            s(0.0, 1.0),
            s(0.0, 1.0),
            s(0.1, 1.0),
            s(0.1, 1.0),
            s(0.1, 0.0),
            s(0.1, 0.0),
            s(0.2, 0.0),
        ];
        let (kept, dropped) = trim_idle(v, &[], 1e-6, 0.05);
        assert_eq!(dropped, 3);
        assert_eq!(
            kept,
            vec![s(0.0, 1.0), s(0.1, 1.0), s(0.1, 0.0), s(0.2, 0.0)]
        );
    }

    #[test]
    fn a_still_target_is_not_idle_while_the_arm_catches_up() {
        let v = vec![
            s(0.0, 1.0),
            s(0.1, 1.0),
            s(0.1, 1.0),
            s(0.1, 1.0),
            s(0.1, 1.0),
        ];
        // The arm is still moving toward 0.1 for two samples, then settles.
        let speeds = [0.0, 0.4, 0.2, 0.01, 0.0];
        let (kept, dropped) = trim_idle(v, &speeds, 1e-6, 0.05);
        assert_eq!(dropped, 2);
        assert_eq!(kept, vec![s(0.0, 1.0), s(0.1, 1.0), s(0.1, 1.0)]);
    }

    #[test]
    fn gripper_commands_become_open_or_closed_events() {
        assert_eq!(gripper_event(0.94), 1.0);
        assert_eq!(gripper_event(0.5), 1.0);
        assert_eq!(gripper_event(0.49), 0.0);
        assert_eq!(gripper_event(0.03), 0.0);
    }
}
