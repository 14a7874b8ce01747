//! `policy`: the vision-language-action policy of the loop, in libtorch through tch — a
//! transformer over instruction, proprioception and either camera or privileged-state tokens
//! with an action-chunk Gaussian head and a success head; behaviour cloning and GRPO trainers;
//! batched policy rollouts in the simulator; safetensors checkpoints. The only crate that
//! needs libtorch.

pub mod bc;
pub mod bench;
pub mod blend;
pub mod checkpoint;
pub mod config;
pub mod dataset;
pub mod device;
pub mod error;
pub mod executor;
pub mod features;
pub mod grpo;
pub mod host;
pub mod lockstep;
pub mod loss;
pub mod model;
pub mod obs;
pub mod policy;
pub mod renormalize;
pub mod rollout;
pub mod tokenizer;
pub mod train;
pub mod vision;

pub use config::{ModelConfig, ObsMode, OptimConfig};
pub use error::{PolicyError, Result};
pub use policy::{Policy, SingleThreaded};
