#!/usr/bin/env bash
# The main job on its embedded default: `coevolve evolve` — the co-evolution loop over the
# default skill tree (UR5e; reach → grasp → lift; CPU-sized, up to 12 generations, stopping
# once lift is mastered) into runs/default, with its report (runs/default/report.html).
# Re-running continues the same run (--resume) from its last completed generation. Extra
# arguments go to `coevolve evolve` (e.g. `--seed 3`, `--targets place`).
# Installs what the build needs first: scripts/torch-env.sh puts PyTorch 2.13.0 (libtorch for
# tch) into .venv.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/torch-env.sh
source scripts/torch-env.sh
cargo build --release --bin coevolve
"${CARGO_TARGET_DIR:-target}/release/coevolve" evolve --resume "$@"
