//! `skills`: the skill tree, curriculum and task synthesis, and the co-evolution loop.
//!
//! In place: the skill tree (`tree`): TOML definitions, validation, prerequisite order and the
//! unlocked frontier; the search explorer (`explorer`): CEM over end-effector keyframe plans
//! that finds first successes without a hand-written solution; weakness signals (`signals`) and
//! task synthesis by mutation (`synth`). The loop itself (explore → refine → train → evaluate → unlock) comes next.

pub mod error;
pub mod evolve;
pub mod explorer;
pub mod plan_controller;
pub mod plan_jobs;
pub mod report;
pub mod signals;
pub mod synth;
pub mod tool_plan;
pub mod tree;

pub use error::{Result, SkillsError};
pub use sim::library::{sample_task, Range, TaskRanges};
pub use sim::task::{SkillKind, TaskSpec};
pub use tree::{Skill, SkillTree};
