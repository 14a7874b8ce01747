#!/usr/bin/env bash
# The whole test suite: formatting, clippy with -D warnings, then every test of the workspace.
# Installs nothing by hand: cargo fetches the Rust dependencies; scripts/torch-env.sh installs the
# pinned Python packages (libtorch 2.13.0 through PyTorch, safetensors, the rerun CLI, MuJoCo)
# into the project venv and exports LIBTORCH / LD_LIBRARY_PATH for tch; scripts/chromium-env.sh
# finds (or installs, Debian package) the headless Chromium the report rendering test uses;
# scripts/lerobot-env.sh makes the LeRobot client's own venv (lerobot 0.6.1, torch 2.11) for the
# export test.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/torch-env.sh
source scripts/torch-env.sh
# shellcheck source=scripts/chromium-env.sh
source scripts/chromium-env.sh
# shellcheck source=scripts/lerobot-env.sh
source scripts/lerobot-env.sh
cargo fmt --all -- --check
cargo clippy --workspace --all-targets -- -D warnings
cargo test --workspace
