//! Where rollouts run: [`rollout`] on this machine's rayon pool, or a [`RolloutExecutor`] that
//! runs them elsewhere (a simulation farm's workers) with the same results.

use std::sync::Arc;

use robots::Manipulator;
use sim::TaskSpec;

use crate::error::Result;
use crate::policy::Policy;
use crate::rollout::{rollout, PolicyRollout, RolloutConfig};

/// Runs rollouts elsewhere: the result must equal [`rollout`]'s for the same arguments.
pub trait RolloutExecutor: Send + Sync + std::fmt::Debug {
    /// [`rollout`]`(policy, robot, tasks, seeds, cfg)`, without transitions.
    fn rollout(
        &self,
        policy: &Policy,
        robot: &Arc<Manipulator>,
        tasks: &[TaskSpec],
        seeds: &[u64],
        cfg: &RolloutConfig,
    ) -> Result<Vec<PolicyRollout>>;
}

/// [`rollout`] on `executor` where there is one and the rollouts keep no transitions
/// (reinforcement learning's rollouts stay on this machine), else here.
pub fn rollout_on(
    executor: Option<&dyn RolloutExecutor>,
    policy: &Policy,
    robot: &Arc<Manipulator>,
    tasks: &[TaskSpec],
    seeds: &[u64],
    cfg: &RolloutConfig,
) -> Result<Vec<PolicyRollout>> {
    match executor {
        Some(executor) if !cfg.keep_transitions && !tasks.is_empty() => {
            executor.rollout(policy, robot, tasks, seeds, cfg)
        }
        _ => rollout(policy, robot, tasks, seeds, cfg),
    }
}
