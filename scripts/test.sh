#!/usr/bin/env bash
# The whole test suite: formatting, clippy with -D warnings, then every test of the workspace.
# The tests run under cargo-nextest where it is installed (.config/nextest.toml: tests of
# different binaries side by side), else under cargo test.
# Installs nothing by hand: cargo fetches the Rust dependencies; scripts/torch-env.sh installs the
# pinned Python packages (libtorch 2.13.0 through PyTorch, safetensors, the rerun CLI, MuJoCo)
# into the project venv and exports LIBTORCH / LD_LIBRARY_PATH for tch; scripts/chromium-env.sh
# finds (or installs, Debian package) the headless Chromium the report rendering test uses;
# scripts/lerobot-env.sh makes the LeRobot client's own venv (lerobot 0.6.1, torch 2.11) for the
# export test.
# The build needs only the project venv; the LeRobot venv and Chromium are needed only when the
# tests run, so they are set up in the background while cargo builds (on a new machine the
# downloads then overlap the compilation instead of adding to it).
set -euo pipefail
cd "$(dirname "$0")/.."
setup_log="$(mktemp)"
trap 'rm -f "$setup_log"' EXIT
(
  # shellcheck source=scripts/lerobot-env.sh
  source scripts/lerobot-env.sh
  # shellcheck source=scripts/chromium-env.sh
  source scripts/chromium-env.sh
) >"$setup_log" 2>&1 &
setup_pid=$!
# shellcheck source=scripts/torch-env.sh
source scripts/torch-env.sh
cargo fmt --all -- --check
cargo clippy --workspace --all-targets -- -D warnings
cargo test --workspace --no-run
setup_ok=0
wait "$setup_pid" || setup_ok=$?
cat "$setup_log" >&2
if ((setup_ok != 0)); then
  echo "test.sh: setting up the LeRobot venv or Chromium failed (above)" >&2
  exit "$setup_ok"
fi
# Both are in place now: sourcing only finds them and exports their paths.
# shellcheck source=scripts/chromium-env.sh
source scripts/chromium-env.sh
# shellcheck source=scripts/lerobot-env.sh
source scripts/lerobot-env.sh
# .config/nextest.toml's `priority` needs nextest 0.9.91 or later.
nextest="$(cargo nextest --version 2>/dev/null | head -1 | awk '{print $2}')" || nextest=""
if [[ -n "$nextest" ]] && [[ "$(printf '%s\n' 0.9.91 "$nextest" | sort -V | head -1)" == 0.9.91 ]]; then
  cargo nextest run --workspace
  cargo test --workspace --doc
else
  cargo test --workspace
fi
# The patched rapier3d's own tests (lib and multibody), with its upstream lock file, built in
# the workspace's target directory (not in a second one inside the patch).
(
  export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$PWD/target}"
  cd patches/rapier3d && cargo test --locked --features dim3,f32 --lib --tests
)
