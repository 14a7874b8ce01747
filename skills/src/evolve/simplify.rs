//! A tool plan cut down to what its success needs, before it demonstrates: the search's mean
//! tool plan keeps every keyframe CEM gave it, and the ones that do nothing for the outcome
//! (loops around the pancake, wrist flaps, slow creeps) make demonstrations that behaviour
//! cloning learns badly from. Greedily, while the probe variants succeed at least as often as
//! with the whole plan: drop the keyframe whose removal keeps the most successes; then shorten
//! one segment's time at a time, the quickest candidate that keeps the most successes first;
//! then every segment's time. Each candidate runs on the same probe variants.

use crate::explorer::PlanLayout;
use crate::tool_plan::{PER_TOOL_KEYFRAME, SEGMENT_S};

/// One segment's time scale tried per round, and the rounds.
const SEGMENT_SCALE: f64 = 0.6;
const SEGMENT_ROUNDS: usize = 6;
/// Every segment's time scale tried per round after that, and the rounds.
const TIME_SCALE: f64 = 0.75;
const TIME_ROUNDS: usize = 3;

/// What simplifying a plan gave.
#[derive(Debug)]
pub struct Simplified {
    pub plan: Vec<f64>,
    /// Successes of the whole plan and of the simplified one on the probe variants.
    pub wins_before: usize,
    pub wins_after: usize,
    /// Keyframes dropped and the plan's time before and after (s).
    pub dropped: usize,
    pub duration_before_s: f64,
    pub duration_after_s: f64,
    /// Plans run on the probe variants.
    pub plans_tried: usize,
}

/// Runs each plan on the same probe variants and returns each plan's successes.
pub type ProbeRunner<'a, E> = dyn FnMut(&[Vec<f64>]) -> Result<Vec<usize>, E> + 'a;

/// Simplifies a tool plan (`PlanLayout::Tool`), each candidate judged by `run`; its first
/// `fixed` keyframes (an approach it shares with a prerequisite's plan) are left as they are.
pub fn simplify_tool_plan<E>(
    plan: &[f64],
    fixed: usize,
    run: &mut ProbeRunner<'_, E>,
) -> Result<Simplified, E> {
    let mut plans_tried = 0;
    let mut wins_of = |plans: &[Vec<f64>]| -> Result<Vec<usize>, E> {
        plans_tried += plans.len();
        run(plans)
    };
    let wins_before = wins_of(&[plan.to_vec()])?[0];
    let mut best = (plan.to_vec(), wins_before);
    let mut dropped = 0;
    // Each drop leaves one pose fewer, so this ends within the plan's keyframes.
    loop {
        let candidates: Vec<Vec<f64>> = droppable(&best.0, fixed)
            .into_iter()
            .map(|j| drop_keyframe(&best.0, j))
            .collect();
        if candidates.is_empty() {
            break;
        }
        let wins = wins_of(&candidates)?;
        let Some((i, &w)) = wins
            .iter()
            .enumerate()
            .max_by_key(|&(i, &w)| (w, usize::MAX - i))
        else {
            break;
        };
        if w < wins_before.max(1) {
            break;
        }
        best = (candidates[i].clone(), w);
        dropped += 1;
    }
    // Then each segment on its own (a slide may need its time while the approach does not),
    // the quickest candidate that keeps the most successes first.
    for _ in 0..SEGMENT_ROUNDS {
        let candidates: Vec<Vec<f64>> = (0..PlanLayout::Tool.keyframes(&best.0))
            .filter(|&i| {
                i >= fixed && !is_repeat(&best.0, i) && keyframe(&best.0, i)[4] > SEGMENT_S.0
            })
            .map(|i| scale_segment(&best.0, i, SEGMENT_SCALE))
            .collect();
        if candidates.is_empty() {
            break;
        }
        let wins = wins_of(&candidates)?;
        let pick = (0..candidates.len()).max_by(|&a, &b| {
            (wins[a], -plan_duration_s(&candidates[a]))
                .partial_cmp(&(wins[b], -plan_duration_s(&candidates[b])))
                .unwrap_or(std::cmp::Ordering::Equal)
        });
        match pick {
            Some(i) if wins[i] >= wins_before.max(1) => best = (candidates[i].clone(), wins[i]),
            _ => break,
        }
    }
    for _ in 0..TIME_ROUNDS {
        let quicker = scale_times(&best.0, fixed, TIME_SCALE);
        let w = wins_of(std::slice::from_ref(&quicker))?[0];
        if w < wins_before.max(1) {
            break;
        }
        best = (quicker, w);
    }
    Ok(Simplified {
        duration_before_s: plan_duration_s(plan),
        duration_after_s: plan_duration_s(&best.0),
        plan: best.0,
        wins_before,
        wins_after: best.1,
        dropped,
        plans_tried,
    })
}

/// Keyframes in each half of a tool plan of `k` keyframes: the first half is anchored on the
/// object's start, the second on the goal's target (`tool_plan`).
fn halves(k: usize) -> [std::ops::Range<usize>; 2] {
    let h = k.div_ceil(2);
    [0..h, h..k]
}

fn keyframe(plan: &[f64], i: usize) -> &[f64] {
    &plan[i * PER_TOOL_KEYFRAME..][..PER_TOOL_KEYFRAME]
}

/// A keyframe that only repeats its predecessor's pose (a hold).
fn is_repeat(plan: &[f64], i: usize) -> bool {
    i > 0 && keyframe(plan, i)[..4] == keyframe(plan, i - 1)[..4]
}

/// The keyframes worth trying to drop: not fixed, not holds, and not the last pose left in
/// their half.
fn droppable(plan: &[f64], fixed: usize) -> Vec<usize> {
    let k = PlanLayout::Tool.keyframes(plan);
    halves(k)
        .into_iter()
        .flat_map(|half| {
            let poses: Vec<usize> = half.filter(|&i| !is_repeat(plan, i)).collect();
            if poses.len() > 1 {
                poses.into_iter().filter(|&i| i >= fixed).collect()
            } else {
                Vec::new()
            }
        })
        .collect()
}

/// `plan` without keyframe `j` (and the holds that follow it): the later keyframes of its half
/// move up and the half ends on brief holds of its new last pose, so no keyframe changes
/// anchor.
pub fn drop_keyframe(plan: &[f64], j: usize) -> Vec<f64> {
    let k = PlanLayout::Tool.keyframes(plan);
    let half = halves(k)
        .into_iter()
        .find(|h| h.contains(&j))
        .unwrap_or(0..k);
    let mut end = j + 1;
    while end < half.end && is_repeat(plan, end) {
        end += 1;
    }
    let mut kept: Vec<Vec<f64>> = half
        .clone()
        .filter(|i| !(j..end).contains(i))
        .map(|i| keyframe(plan, i).to_vec())
        .collect();
    let mut hold = kept
        .last()
        .map_or_else(|| keyframe(plan, j).to_vec(), Clone::clone);
    hold[4] = SEGMENT_S.0;
    kept.resize(half.len(), hold);
    let mut out: Vec<f64> = Vec::with_capacity(plan.len());
    for i in 0..half.start {
        out.extend_from_slice(keyframe(plan, i));
    }
    out.extend(kept.concat());
    for i in half.end..k {
        out.extend_from_slice(keyframe(plan, i));
    }
    out.extend_from_slice(&plan[k * PER_TOOL_KEYFRAME..]);
    out
}

/// Segment `i`'s time scaled by `scale`, kept within the allowed range.
fn scale_segment(plan: &[f64], i: usize, scale: f64) -> Vec<f64> {
    let mut out = plan.to_vec();
    let t = &mut out[i * PER_TOOL_KEYFRAME + 4];
    *t = (*t * scale).clamp(SEGMENT_S.0, SEGMENT_S.1);
    out
}

/// Every segment time from keyframe `first` on scaled by `scale`, kept within the allowed
/// range.
fn scale_times(plan: &[f64], first: usize, scale: f64) -> Vec<f64> {
    let mut out = plan.to_vec();
    for i in first..PlanLayout::Tool.keyframes(plan) {
        let t = &mut out[i * PER_TOOL_KEYFRAME + 4];
        *t = (*t * scale).clamp(SEGMENT_S.0, SEGMENT_S.1);
    }
    out
}

/// A tool plan's total segment time (s), each as the controller clamps it.
pub fn plan_duration_s(plan: &[f64]) -> f64 {
    (0..PlanLayout::Tool.keyframes(plan))
        .map(|i| keyframe(plan, i)[4].clamp(SEGMENT_S.0, SEGMENT_S.1))
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Four keyframes (two per half), keyframe i at along = i, time 1 + i; yaw 0.5.
    fn plan() -> Vec<f64> {
        let mut p: Vec<f64> = (0..4)
            .flat_map(|i| [f64::from(i), 0.0, 0.0, 0.0, 1.0 + f64::from(i)])
            .collect();
        p.push(0.5);
        p
    }

    #[test]
    fn dropping_a_keyframe_keeps_the_halves_and_ends_the_half_on_a_hold() {
        let p = drop_keyframe(&plan(), 0);
        let along: Vec<f64> = (0..4).map(|i| keyframe(&p, i)[0]).collect();
        assert_eq!(along, [1.0, 1.0, 2.0, 3.0]);
        assert_eq!(keyframe(&p, 1)[4], SEGMENT_S.0);
        assert_eq!(p[20], 0.5);
        // The second half is untouched; dropping in it holds at its end.
        let q = drop_keyframe(&plan(), 2);
        let along: Vec<f64> = (0..4).map(|i| keyframe(&q, i)[0]).collect();
        assert_eq!(along, [0.0, 1.0, 3.0, 3.0]);
    }

    #[test]
    fn dropping_a_pose_drops_its_holds() {
        let six: Vec<f64> = (0..6)
            .flat_map(|i| [f64::from(i), 0.0, 0.0, 0.0, 1.0])
            .collect();
        let p = drop_keyframe(&six, 2);
        let q = drop_keyframe(&p, 1);
        let along: Vec<f64> = (0..6).map(|i| keyframe(&q, i)[0]).collect();
        assert_eq!(along, [0.0, 0.0, 0.0, 3.0, 4.0, 5.0]);
        assert_eq!(droppable(&q, 0), [3, 4, 5]);
    }

    #[test]
    fn holds_and_a_half_s_last_pose_are_not_dropped() {
        assert_eq!(droppable(&plan(), 0), [0, 1, 2, 3]);
        let p = drop_keyframe(&plan(), 0);
        assert_eq!(droppable(&p, 0), [2, 3]);
        // A fixed approach (the first half) is never dropped.
        assert_eq!(droppable(&plan(), 2), [2, 3]);
    }

    #[test]
    fn simplifying_drops_what_the_outcome_does_not_need_and_shortens_time() {
        // A fake probe: a plan succeeds on all 4 variants while its keyframe at along = 2 is
        // kept and it takes at least 3 s; otherwise on none.
        let mut run = |plans: &[Vec<f64>]| -> Result<Vec<usize>, ()> {
            Ok(plans
                .iter()
                .map(|p| {
                    let keeps = (0..4).any(|i| keyframe(p, i)[0] == 2.0);
                    if keeps && plan_duration_s(p) >= 3.0 {
                        4
                    } else {
                        0
                    }
                })
                .collect())
        };
        let s = simplify_tool_plan(&plan(), 0, &mut run).unwrap();
        assert_eq!((s.wins_before, s.wins_after), (4, 4));
        assert!((0..4).any(|i| keyframe(&s.plan, i)[0] == 2.0));
        assert_eq!(s.dropped, 2, "{:?}", s.plan);
        assert!(s.duration_after_s < s.duration_before_s && s.duration_after_s >= 3.0);
        // With the first half fixed only the goal half changes: keyframe 3 goes, and the
        // first two keyframes keep their poses and times.
        let s = simplify_tool_plan(&plan(), 2, &mut run).unwrap();
        assert_eq!(s.dropped, 1, "{:?}", s.plan);
        assert_eq!(s.plan[..10], plan()[..10]);
        assert!(s.duration_after_s >= 3.0);
    }
}
