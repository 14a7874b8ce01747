//! Hindsight relabelling of zone tasks (after Andrychowicz et al., "Hindsight Experience
//! Replay", 2017): a failed place or push episode whose object ended intact and at rest on the
//! table outside the goal zone is a success of the same task with the zone drawn under where the
//! object came to rest. Zones collide with nothing, so the recorded physics is exactly what the
//! relabelled task would have produced; the relabelled episode is re-judged step by step with
//! the task's own predicate and hold time and cut where that success is complete.

use crate::episode::{Episode, Outcome};
use crate::reward::{Handling, Judge, RewardWeights};
use crate::task::{SkillKind, TaskSpec};

/// Why an episode cannot be relabelled (for the caller's statistics).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NotRelabelled {
    /// Not a place or push task, or the task has no goal object or zone.
    NotAZoneTask,
    /// Already a success, broken, or ended by a physics health problem.
    NotAPlainFailure,
    /// Camera images were recorded with the old zone drawn in them.
    HasImages,
    /// The zone under the object's final position is not one the task family could have
    /// drawn (`accept` said no).
    OutOfRange,
    /// The relabelled predicate never held for the task's hold time.
    NeverSucceeds,
}

/// The task with its goal zone moved (in x and y) under `xy_m`.
pub fn with_zone_at(task: &TaskSpec, xy_m: [f64; 2]) -> Option<TaskSpec> {
    let name = task.goal.zone.as_deref()?;
    let mut moved = task.clone();
    let zone = moved.zones.iter_mut().find(|z| z.name == name)?;
    zone.center_m[0] = xy_m[0];
    zone.center_m[1] = xy_m[1];
    Some(moved)
}

/// Relabels a failed zone episode (see the module docs). `accept(task, start_xy_m)` decides
/// whether the relabelled task (its zone under the object's final position) is one the task
/// family could have drawn, given where the object started; `control_dt_s` is the control
/// period the episode was recorded at.
pub fn relabel(
    episode: &Episode,
    weights: &RewardWeights,
    control_dt_s: f64,
    accept: impl Fn(&TaskSpec, [f64; 2]) -> bool,
) -> Result<Episode, NotRelabelled> {
    let task = &episode.task;
    if !matches!(task.skill, SkillKind::Place | SkillKind::Push) {
        return Err(NotRelabelled::NotAZoneTask);
    }
    let object = task
        .goal_object_index()
        .ok_or(NotRelabelled::NotAZoneTask)?;
    let outcome = &episode.outcome;
    if outcome.success || outcome.failure.is_some() || outcome.invalid.is_some() {
        return Err(NotRelabelled::NotAPlainFailure);
    }
    if episode.steps.iter().any(|s| !s.images.is_empty()) {
        return Err(NotRelabelled::HasImages);
    }
    let last = episode.steps.last().ok_or(NotRelabelled::NeverSucceeds)?;
    let end = last
        .state
        .objects
        .get(object)
        .ok_or(NotRelabelled::NotAZoneTask)?
        .position_m();
    let start = episode
        .initial_state
        .objects
        .get(object)
        .ok_or(NotRelabelled::NotAZoneTask)?
        .position_m();
    let relabelled = with_zone_at(task, [end.x, end.y]).ok_or(NotRelabelled::NotAZoneTask)?;
    if !accept(&relabelled, [start.x, start.y]) {
        return Err(NotRelabelled::OutOfRange);
    }
    let judge = Judge {
        task: &relabelled,
        initial: &episode.initial_state,
        weights,
    };
    // The same rule as the episode loop: the predicate must hold for `hold_s` (at least one
    // step); the episode ends on the step that completes it.
    let hold_steps = ((relabelled.goal.hold_s / control_dt_s).round() as usize).max(1);
    let mut held_since: Option<(usize, f64)> = None;
    let mut handling = Handling::default();
    let mut done = None;
    for (step, record) in episode.steps.iter().enumerate() {
        handling.observe(&judge, &record.state);
        let success = judge.success(&record.state) && handling.holds(&relabelled, &record.state);
        held_since = match (success, held_since) {
            (true, None) => Some((step, record.state.time_s)),
            (true, held) => held,
            (false, _) => None,
        };
        if let Some((first, t)) = held_since {
            if step + 1 - first >= hold_steps {
                done = Some((step, t));
                break;
            }
        }
    }
    let (last_step, success_time_s) = done.ok_or(NotRelabelled::NeverSucceeds)?;
    let mut steps = episode.steps[..=last_step].to_vec();
    for record in &mut steps {
        record.reward = judge.reward(&record.state);
    }
    let episode_return = steps.iter().map(|s| s.reward.total).sum();
    Ok(Episode {
        index: episode.index,
        seed: episode.seed,
        task: relabelled,
        robot_model_hash: episode.robot_model_hash.clone(),
        initial_state: episode.initial_state.clone(),
        outcome: Outcome {
            success: true,
            success_time_s: Some(success_time_s),
            failure: None,
            invalid: None,
            control_steps: steps.len(),
            episode_return,
        },
        steps,
    })
}
