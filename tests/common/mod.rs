//! Helpers shared by the CLI end-to-end tests.
#![allow(dead_code, clippy::expect_used, clippy::unwrap_used)]

use std::process::{Command, Output};

pub fn coevolve(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_coevolve"))
        .args(args)
        .output()
        .expect("run coevolve")
}

/// The single JSON object a successful command printed.
pub fn json(out: &Output) -> serde_json::Value {
    assert!(
        out.status.success(),
        "stderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("one JSON object")
}

/// The error output of a command that must fail.
pub fn stderr(out: &Output) -> String {
    assert!(!out.status.success(), "expected failure");
    String::from_utf8_lossy(&out.stderr).into_owned()
}
