//! Episode jobs: some of a batch's episodes as a self-contained, serialisable unit of work
//! (robot by name and model hash, simulator settings, controller, each episode's index, seed
//! and task), so that another process — a farm worker — runs them exactly as
//! [`EpisodeBatch::run`](crate::EpisodeBatch::run) would: an episode depends only on its task,
//! its seed and the settings, never on where or beside what it runs.

use std::sync::Arc;

use rand_chacha::ChaCha8Rng;
use robots::Manipulator;
use serde::{Deserialize, Serialize};

use crate::baselines::{HoldController, RandomController};
use crate::config::SimConfig;
use crate::episode::{episode_seed, run_episode, Controller, Episode, EpisodeInfo};
use crate::error::{Result, SimError};
use crate::scripted::{ScriptNoise, ScriptedPickPlace};
use crate::task::TaskSpec;

/// The controllers a job can name (each seeded only by its episode's seed).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum JobController {
    /// The scripted IK pick-and-place reference.
    Scripted,
    /// The scripted reference with noise, hesitations and a failed first grasp.
    ScriptedNoisy,
    /// Uniformly random end-effector deltas.
    Random,
    /// Holds the start pose.
    Hold,
}

impl JobController {
    /// This controller for one episode.
    pub fn make(self, info: &EpisodeInfo<'_>, config: &SimConfig) -> Box<dyn Controller> {
        let scale = config.action_scale.clone();
        match self {
            JobController::Scripted => Box::new(ScriptedPickPlace::new(info, scale)),
            JobController::ScriptedNoisy => Box::new(ScriptedPickPlace::noisy(
                info,
                scale,
                ScriptNoise::default(),
            )),
            JobController::Random => Box::new(RandomController::new(info.seed)),
            JobController::Hold => Box::new(HoldController),
        }
    }
}

/// One episode of a job.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct JobEpisode {
    /// Its index in the batch.
    pub index: usize,
    pub seed: u64,
    pub task: TaskSpec,
}

/// Episodes to run, with everything needed to run them.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct EpisodeJob {
    /// A built-in robot's name or a URDF path (which the worker must have).
    pub robot: String,
    /// The robot's model hash: a worker whose model differs refuses the job.
    pub robot_model_hash: String,
    pub config: SimConfig,
    pub controller: JobController,
    pub record_images: bool,
    pub episodes: Vec<JobEpisode>,
}

impl EpisodeJob {
    /// A batch's episodes `indices`, seeded as [`EpisodeBatch::run`](crate::EpisodeBatch::run)
    /// seeds them (`episode_seed(seed, i)`, the task from `tasks(i, rng)` with `rng` seeded by
    /// the episode's seed).
    pub fn episodes_of(
        seed: u64,
        indices: std::ops::Range<usize>,
        tasks: &(dyn Fn(usize, &mut ChaCha8Rng) -> TaskSpec + Sync),
    ) -> Vec<JobEpisode> {
        indices
            .map(|index| {
                let seed = episode_seed(seed, index);
                let mut rng = rand::SeedableRng::seed_from_u64(seed);
                JobEpisode {
                    index,
                    seed,
                    task: tasks(index, &mut rng),
                }
            })
            .collect()
    }

    /// The job as bytes (JSON: exact for every number, a few hundred bytes per episode).
    pub fn to_bytes(&self) -> Result<Vec<u8>> {
        serde_json::to_vec(self).map_err(|e| job_error("encoding", e.to_string()))
    }

    pub fn from_bytes(bytes: &[u8]) -> Result<EpisodeJob> {
        serde_json::from_slice(bytes).map_err(|e| job_error("decoding", e.to_string()))
    }

    /// Runs the episodes one after another on this thread; `robot` must be the job's robot.
    pub fn run(&self, robot: &Arc<Manipulator>) -> Result<Vec<Episode>> {
        if robot.model.model_hash != self.robot_model_hash {
            return Err(job_error(
                "robot_model_hash",
                format!(
                    "the job's robot `{}` has model hash {}, this process's {}",
                    self.robot, self.robot_model_hash, robot.model.model_hash
                ),
            ));
        }
        self.config.validate()?;
        let config = Arc::new(self.config.clone());
        let controller = self.controller;
        let factory = |info: &EpisodeInfo<'_>| controller.make(info, &config);
        self.episodes
            .iter()
            .map(|e| {
                run_episode(
                    robot,
                    &e.task,
                    &config,
                    &factory,
                    e.index,
                    e.seed,
                    self.record_images,
                )
            })
            .collect()
    }
}

fn job_error(context: &str, problem: String) -> SimError {
    SimError::Job {
        context: context.to_owned(),
        problem,
    }
}
