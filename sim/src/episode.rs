//! Episodes and `EpisodeBatch`: N independent episodes in parallel (rayon, one world per
//! episode), each driven by a controller, recording per control step the physics state, the
//! action, the reward terms (and optionally camera images). Each episode's randomness comes only
//! from its own seed, so a batch is bit-identical whatever the thread count.

use std::sync::Arc;
use std::time::Instant;

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;
use robots::Manipulator;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::camera::CameraFrame;
use crate::config::SimConfig;
use crate::control::Action;
use crate::error::{Result, SimError};
use crate::reward::{Failure, RewardTerms};
use crate::state::{Observation, PhysicsState};
use crate::task::TaskSpec;

mod stepper;
pub use stepper::EpisodeStepper;

/// What a controller knows about the episode it is about to run.
#[derive(Debug)]
pub struct EpisodeInfo<'a> {
    pub index: usize,
    /// The episode's own seed (use it for any randomness of the controller).
    pub seed: u64,
    pub task: &'a TaskSpec,
    pub robot: &'a Arc<Manipulator>,
    pub world_from_root: nalgebra::Isometry3<f64>,
    pub control_dt_s: f64,
}

/// A closed-loop controller for one episode.
pub trait Controller: Send {
    fn act(&mut self, observation: &Observation) -> Action;
}

/// Makes a controller per episode.
pub trait ControllerFactory: Sync {
    fn make(&self, info: &EpisodeInfo<'_>) -> Box<dyn Controller>;
}

impl<F> ControllerFactory for F
where
    F: Fn(&EpisodeInfo<'_>) -> Box<dyn Controller> + Sync,
{
    fn make(&self, info: &EpisodeInfo<'_>) -> Box<dyn Controller> {
        self(info)
    }
}

/// One recorded control step: the action taken from the previous state and what followed.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StepRecord {
    pub action: Action,
    /// Commanded arm targets after the action.
    pub q_target_rad: Vec<f64>,
    /// State at the end of the step.
    pub state: PhysicsState,
    pub reward: RewardTerms,
    /// Camera images at the end of the step (only with `BatchConfig::record_images`).
    pub images: Vec<CameraFrame>,
}

/// How an episode ended.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Outcome {
    pub success: bool,
    /// When the success predicate started holding (s), if it did for `hold_s`.
    pub success_time_s: Option<f64>,
    pub failure: Option<Failure>,
    /// Physics health problem that ended the episode, if any.
    pub invalid: Option<String>,
    pub control_steps: usize,
    /// Sum of the dense reward.
    pub episode_return: f64,
}

/// A recorded episode.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Episode {
    pub index: usize,
    pub seed: u64,
    pub task: TaskSpec,
    pub robot_model_hash: String,
    pub initial_state: PhysicsState,
    pub steps: Vec<StepRecord>,
    pub outcome: Outcome,
}

/// SHA-256 of every recorded number of `episodes`, in order (a batch's trajectory hash).
pub fn trajectory_hash<'a>(episodes: impl IntoIterator<Item = &'a Episode>) -> String {
    let mut hasher = Sha256::new();
    for e in episodes {
        e.hash_into(&mut hasher);
    }
    format!("{:x}", hasher.finalize())
}

impl Episode {
    /// Feeds every recorded number (as bits) into `hasher`.
    pub fn hash_into(&self, hasher: &mut Sha256) {
        let mut f = |v: f64| hasher.update(v.to_bits().to_le_bytes());
        let state = |s: &PhysicsState, f: &mut dyn FnMut(f64)| {
            s.q_rad
                .iter()
                .chain(&s.qd_rad_s)
                .chain(&s.gripper_q)
                .for_each(|v| f(*v));
            s.world_from_ee.iter().for_each(|v| f(*v));
            for o in &s.objects {
                o.world_from_object
                    .iter()
                    .chain(&o.lin_vel_m_s)
                    .chain(&o.ang_vel_rad_s)
                    .for_each(|v| f(*v));
            }
            s.contacts.object_peak_force_n.iter().for_each(|v| f(*v));
            f(s.motor_energy_j);
        };
        f(self.seed as f64);
        state(&self.initial_state, &mut f);
        for step in &self.steps {
            step.action.to_vec().iter().for_each(|v| f(*v));
            state(&step.state, &mut f);
            f(step.reward.total);
        }
        f(f64::from(u8::from(self.outcome.success)));
    }
}

/// Batch settings.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BatchConfig {
    pub episodes: usize,
    pub seed: u64,
    /// Worker threads (`None`: all cores).
    pub threads: Option<usize>,
    /// Render and keep the configured cameras' images every step.
    pub record_images: bool,
}

/// Aggregate figures of a batch.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BatchStats {
    pub episodes: usize,
    pub successes: usize,
    pub success_rate: f64,
    pub invalid: usize,
    pub failures: usize,
    pub control_steps: usize,
    pub physics_steps: usize,
    pub wall_s: f64,
    pub env_steps_per_sec: f64,
    pub physics_steps_per_sec: f64,
    pub threads: usize,
    pub mean_return: f64,
    /// SHA-256 over every recorded number of every episode, in episode order.
    pub trajectory_hash: String,
}

/// Episodes run together.
#[derive(Debug)]
pub struct EpisodeBatch {
    pub episodes: Vec<Episode>,
    pub stats: BatchStats,
}

/// Seed of episode `index` in a batch seeded `seed` (SplitMix64 of both).
pub fn episode_seed(seed: u64, index: usize) -> u64 {
    let mut z = seed ^ (index as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Runs one episode to its end.
pub fn run_episode(
    robot: &Arc<Manipulator>,
    task: &TaskSpec,
    config: &Arc<SimConfig>,
    factory: &dyn ControllerFactory,
    index: usize,
    seed: u64,
    record_images: bool,
) -> Result<Episode> {
    let mut stepper = EpisodeStepper::new(robot, task, config, index, seed, record_images)?;
    let mut controller = factory.make(&stepper.info());
    while !stepper.is_done() {
        let action = controller.act(stepper.observation());
        stepper.step(action);
    }
    Ok(stepper.finish())
}

impl EpisodeBatch {
    /// Runs `cfg.episodes` episodes; the task of episode `i` comes from `tasks(i, rng)` where
    /// `rng` is seeded from the episode's seed. `progress` is called as each episode finishes.
    pub fn run(
        robot: Arc<Manipulator>,
        config: Arc<SimConfig>,
        cfg: &BatchConfig,
        tasks: &(dyn Fn(usize, &mut ChaCha8Rng) -> TaskSpec + Sync),
        factory: &dyn ControllerFactory,
        progress: &(dyn Fn() + Sync),
    ) -> Result<EpisodeBatch> {
        config.validate()?;
        let threads = cfg
            .threads
            .unwrap_or_else(rayon::current_num_threads)
            .max(1);
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .map_err(|e| SimError::config("threads", e.to_string()))?;
        let start = Instant::now();
        let episodes: Vec<Episode> = pool.install(|| {
            (0..cfg.episodes)
                .into_par_iter()
                .map(|i| {
                    let seed = episode_seed(cfg.seed, i);
                    let mut rng = ChaCha8Rng::seed_from_u64(seed);
                    let task = tasks(i, &mut rng);
                    let episode =
                        run_episode(&robot, &task, &config, factory, i, seed, cfg.record_images);
                    progress();
                    episode
                })
                .collect::<Result<Vec<_>>>()
        })?;
        let wall_s = start.elapsed().as_secs_f64();
        Ok(EpisodeBatch::from_episodes(
            episodes, &config, wall_s, threads,
        ))
    }

    /// A batch of episodes run elsewhere (a farm's workers), in episode order, with the
    /// figures `run` gives: `wall_s` and `threads` are what produced them.
    pub fn from_episodes(
        episodes: Vec<Episode>,
        config: &SimConfig,
        wall_s: f64,
        threads: usize,
    ) -> EpisodeBatch {
        let trajectory_hash = trajectory_hash(&episodes);
        let control_steps: usize = episodes.iter().map(|e| e.outcome.control_steps).sum();
        let physics_steps = control_steps * config.substeps();
        let successes = episodes.iter().filter(|e| e.outcome.success).count();
        let n = episodes.len().max(1) as f64;
        let stats = BatchStats {
            episodes: episodes.len(),
            successes,
            success_rate: successes as f64 / n,
            invalid: episodes
                .iter()
                .filter(|e| e.outcome.invalid.is_some())
                .count(),
            failures: episodes
                .iter()
                .filter(|e| e.outcome.failure.is_some())
                .count(),
            control_steps,
            physics_steps,
            wall_s,
            env_steps_per_sec: control_steps as f64 / wall_s.max(1e-9),
            physics_steps_per_sec: physics_steps as f64 / wall_s.max(1e-9),
            threads,
            mean_return: episodes
                .iter()
                .map(|e| e.outcome.episode_return)
                .sum::<f64>()
                / n,
            trajectory_hash,
        };
        EpisodeBatch { episodes, stats }
    }
}
