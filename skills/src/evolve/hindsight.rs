//! Hindsight relabelling of a zone skill's failed rollouts (`sim::hindsight`): where the
//! object came to rest intact outside its zone, the rollout demonstrates the same skill for a
//! zone drawn there, if the skill's task family could have drawn it.

use sim::hindsight::relabel;
use sim::Episode;

use super::Context;
use crate::tree::Skill;

/// Whether `skill`'s task family could have drawn the (relabelled) task's zone, given where the
/// object started: zone centres are drawn in the object ranges, at least `min_separation_m` from
/// the object's start (`sim::library::sample_task`).
pub fn drawable(skill: &Skill) -> impl Fn(&sim::TaskSpec, [f64; 2]) -> bool + '_ {
    let ranges = &skill.ranges;
    move |task, start_xy_m| {
        task.goal_zone().is_some_and(|z| {
            let [x, y, _] = z.center_m;
            let separation_m = (x - start_xy_m[0]).hypot(y - start_xy_m[1]);
            (ranges.object_x_m.lo..=ranges.object_x_m.hi).contains(&x)
                && (ranges.object_y_m.lo..=ranges.object_y_m.hi).contains(&y)
                && separation_m >= ranges.min_separation_m
        })
    }
}

/// Successes relabelled from `failed` (in order), at most `max`.
pub fn relabel_failures(
    ctx: &Context,
    skill: &Skill,
    failed: &[Episode],
    max: usize,
) -> Vec<Episode> {
    let dt_s = ctx.sim.control_dt_s();
    failed
        .iter()
        .filter_map(|e| relabel(e, &ctx.sim.reward, dt_s, drawable(skill)).ok())
        .take(max)
        .collect()
}
