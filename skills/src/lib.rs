//! `skills`: the skill tree, curriculum and task synthesis, and the co-evolution loop.
//!
//! This crate is the home of the closed loop (explore → refine → train → evaluate → unlock).
//! Its contents arrive with the co-evolution issue; today it only re-exports the task
//! vocabulary the loop is built on, so dependants can already name skills.

pub use sim::library::{sample_task, Range, TaskRanges};
pub use sim::task::{SkillKind, TaskSpec};
