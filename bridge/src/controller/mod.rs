//! The robot controller: verified bundles in, a policy at its own rate, the safety filter and
//! watchdog at the control rate, filtered joint commands out (`core.rs` the logic, `runner.rs`
//! the policy side, `node.rs` the zenoh wiring and control thread, `telemetry.rs` latency).

pub mod clock;
pub mod core;
pub mod node;
pub mod runner;
pub mod telemetry;

pub use self::core::{prepare_bundle, ControllerConfig, ControllerCore, PreparedBundle};
pub use node::run_controller;
pub use runner::PolicyRunner;
pub use telemetry::LATENCY_BUCKETS_US;
