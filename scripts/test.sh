#!/usr/bin/env bash
# The whole test suite: formatting, clippy with -D warnings, then every test of the workspace.
# Installs nothing by hand: cargo fetches the Rust dependencies.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo fmt --all -- --check
cargo clippy --workspace --all-targets -- -D warnings
cargo test --workspace
