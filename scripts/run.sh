#!/usr/bin/env bash
# The main job on its embedded defaults: today `coevolve sim` (UR5e, lift, scripted controller,
# 256 parallel episodes). Extra arguments are passed to `coevolve sim`. Installs what the build
# needs first: scripts/torch-env.sh puts PyTorch 2.13.0 (libtorch for tch) into .venv.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/torch-env.sh
source scripts/torch-env.sh
cargo run --release --bin coevolve -- sim "$@"
