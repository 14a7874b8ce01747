#!/usr/bin/env bash
# The main job on its embedded defaults: today `coevolve sim` (UR5e, lift, scripted controller,
# 256 parallel episodes). Extra arguments are passed to `coevolve sim`.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo run --release --bin coevolve -- sim "$@"
