#!/usr/bin/env bash
# The whole test suite: formatting, clippy with -D warnings, then every test of the workspace.
# Installs nothing by hand: cargo fetches the Rust dependencies, scripts/python-env.sh the pinned
# Python packages (the rerun CLI that checks replay files).
set -euo pipefail
cd "$(dirname "$0")/.."
cargo fmt --all -- --check
cargo clippy --workspace --all-targets -- -D warnings
# The replay tests check .rrd files with the rerun CLI of PyPI rerun-sdk (pinned in python-env.sh).
python="$(scripts/python-env.sh)"
export COEVOLVE_RERUN="${COEVOLVE_RERUN:-$(dirname "$python")/rerun}"
cargo test --workspace
