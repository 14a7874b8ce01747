//! `sim`: rapier3d scenes for robot learning — a `TaskSpec` (props, zones, instruction) plus a
//! robot from `robots` become a rapier world with PD-motor joints; `EpisodeBatch` runs many
//! episodes in parallel (one world each, rayon) under controllers, recording physics state,
//! actions and physics-based rewards; a ray-cast camera renders RGB-D + segmentation.
//!
//! Not here: learning (`policy`), curricula (`skills`), networking (`bridge`).
//! Main types: [`TaskSpec`], [`SimConfig`], [`Scene`], [`EpisodeBatch`], [`Judge`], [`Camera`].

pub mod anchor;
pub mod baselines;
pub mod camera;
pub mod config;
pub mod control;
pub mod convert;
pub mod episode;
pub mod error;
pub mod hindsight;
pub mod job;
pub mod lerobot;
pub mod library;
pub mod refine;
pub mod replay;
pub mod reward;
pub mod scene;
pub mod scripted;
pub mod scripted_tool;
pub mod state;
pub mod store;
pub mod task;
pub mod throughput;

pub use camera::{Camera, CameraFrame, CameraSpec};
pub use config::SimConfig;
pub use control::{Action, ControlMode};
pub use episode::{
    BatchConfig, BatchStats, Controller, ControllerFactory, Episode, EpisodeBatch, EpisodeInfo,
    EpisodeStepper,
};
pub use error::{Result, SimError};
pub use reward::{Judge, RewardTerms, RewardWeights};
pub use scene::Scene;
pub use scripted::ScriptedPickPlace;
pub use state::{Observation, PhysicsState};
pub use store::{EpisodeFile, EpisodeWriter, StoreScan};
pub use task::{SkillKind, TaskSpec};
