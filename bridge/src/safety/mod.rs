//! The safety layer: limits from the URDF and config (`config.rs`), the jerk-limited,
//! look-ahead filter every command passes through (`filter.rs`) and the watchdog that turns
//! stale state or a lost heartbeat into a controlled stop (`watchdog.rs`).

pub mod config;
pub mod filter;
pub mod watchdog;

pub use config::{SafetyConfig, SafetyLimits};
pub use filter::SafetyFilter;
pub use watchdog::Watchdog;
