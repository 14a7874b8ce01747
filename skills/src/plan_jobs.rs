//! Plan episodes as data: a [`PlanJob`] carries the search's candidates (or a plan's
//! validation runs) with each episode's index, seed and task, so that another process — a
//! farm worker — runs them with [`run_plans`](crate::explorer::run_plans)'s results; a
//! [`PlanExecutor`] is where they run when not here.

use std::sync::Arc;

use rand_chacha::ChaCha8Rng;
use robots::Manipulator;
use serde::{Deserialize, Serialize};
use sim::job::EpisodeJob;
use sim::task::TaskSpec;
use sim::{Episode, EpisodeInfo, SimConfig};

use crate::explorer::plan_controller;

/// One plan episode.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PlanEpisode {
    /// Its index in the batch (which also picks the plan's episode seed and task).
    pub index: usize,
    pub seed: u64,
    pub task: TaskSpec,
    pub plan: Vec<f64>,
}

/// Plan episodes with everything needed to run them.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PlanJob {
    /// A built-in robot's name or a URDF path (which a worker must have).
    pub robot: String,
    pub robot_model_hash: String,
    pub sim: SimConfig,
    /// A gripper plan's time per keyframe segment.
    pub segment_s: f64,
    pub episodes: Vec<PlanEpisode>,
}

impl PlanJob {
    /// `plans[i]` on `tasks(i, rng)` for every i, seeded as a batch seeded `batch_seed`.
    pub fn of(
        robot: (&str, &Manipulator),
        sim: &SimConfig,
        segment_s: f64,
        plans: &[Vec<f64>],
        tasks: &(dyn Fn(usize, &mut ChaCha8Rng) -> TaskSpec + Sync),
        batch_seed: u64,
    ) -> PlanJob {
        let episodes = EpisodeJob::episodes_of(batch_seed, 0..plans.len(), tasks)
            .into_iter()
            .zip(plans)
            .map(|(e, plan)| PlanEpisode {
                index: e.index,
                seed: e.seed,
                task: e.task,
                plan: plan.clone(),
            })
            .collect();
        PlanJob {
            robot: robot.0.to_owned(),
            robot_model_hash: robot.1.model.model_hash.clone(),
            sim: sim.clone(),
            segment_s,
            episodes,
        }
    }

    /// The job cut into jobs of at most `per_job` episodes, in order.
    pub fn split(&self, per_job: usize) -> Vec<PlanJob> {
        self.episodes
            .chunks(per_job.max(1))
            .map(|chunk| PlanJob {
                episodes: chunk.to_vec(),
                ..self.without_episodes()
            })
            .collect()
    }

    fn without_episodes(&self) -> PlanJob {
        PlanJob {
            robot: self.robot.clone(),
            robot_model_hash: self.robot_model_hash.clone(),
            sim: self.sim.clone(),
            segment_s: self.segment_s,
            episodes: Vec::new(),
        }
    }

    /// Runs the episodes one after another on this thread; `robot` must be the job's robot.
    pub fn run(&self, robot: &Arc<Manipulator>) -> Result<Vec<Episode>, String> {
        if robot.model.model_hash != self.robot_model_hash {
            return Err(format!(
                "the plan job's robot `{}` has model hash {}, this process's {}",
                self.robot, self.robot_model_hash, robot.model.model_hash
            ));
        }
        self.sim.validate().map_err(|e| e.to_string())?;
        let sim = Arc::new(self.sim.clone());
        self.episodes
            .iter()
            .map(|e| {
                let factory = |info: &EpisodeInfo<'_>| {
                    plan_controller(info, &e.plan, self.segment_s, sim.action_scale.clone())
                };
                sim::episode::run_episode(robot, &e.task, &sim, &factory, e.index, e.seed, false)
                    .map_err(|err| err.to_string())
            })
            .collect()
    }

    /// The job as bytes (JSON: exact for every number).
    pub fn to_bytes(&self) -> Result<Vec<u8>, String> {
        serde_json::to_vec(self).map_err(|e| format!("encoding a plan job: {e}"))
    }

    pub fn from_bytes(bytes: &[u8]) -> Result<PlanJob, String> {
        serde_json::from_slice(bytes).map_err(|e| format!("decoding a plan job: {e}"))
    }
}

/// Runs plan episodes elsewhere (a simulation farm): the result must equal
/// [`PlanJob::run`]'s, episodes in the job's order.
pub trait PlanExecutor: Send + Sync + std::fmt::Debug {
    fn run(&self, job: &PlanJob) -> Result<Vec<Episode>, String>;
}
