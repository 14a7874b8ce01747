#!/usr/bin/env bash
# Create (if missing) the project's Python virtual environment at <repo>/.venv and install the
# pinned packages that are not already importable. Idempotent: a second run installs nothing.
# Prints the venv's python path on stdout (everything else goes to stderr).
#
# Usage: scripts/python-env.sh            # ensure the venv, print its python
#        PYTHON=python3.11 scripts/python-env.sh
set -euo pipefail

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="${COEVOLVE_VENV:-$repo_root/.venv}"
base_python="${PYTHON:-python3}"

# Pinned packages, one per line: "distribution==version|import name". Add new ones here
# (e.g. "torch==X.Y.Z|torch"); an entry is installed only when it is not importable at its pin.
packages=(
  "mujoco==4.0.0|mujoco"
  "numpy==2.4.6|numpy"
  "rerun-sdk==0.36.3|rerun"
  # libtorch for the `policy` crate (tch 0.26 needs exactly 2.13.0) and the reference loop.
  "torch==2.13.0|torch"
  "safetensors==0.8.0|safetensors"
  # The bridge's protocol test from Python (bridge/tests/python/estop.py).
  "eclipse-zenoh==1.10.2|zenoh"
  # An independent CDR implementation and RIHS01 hashes for the ROS 2 interop test.
  "rosbags==0.11.9|rosbags"
)

if [[ ! -x "$venv/bin/python" ]]; then
  echo "python-env: creating $venv with $base_python" >&2
  "$base_python" -m venv "$venv"
fi
py="$venv/bin/python"

missing=()
for entry in "${packages[@]}"; do
  requirement="${entry%%|*}"
  module="${entry##*|}"
  dist="${requirement%%==*}"
  wanted_version="${requirement##*==}"
  # Already importable at the pinned version: nothing to do.
  if "$py" - "$module" "$dist" "$wanted_version" >/dev/null 2>&1 <<'PY'
import importlib, importlib.metadata, sys
module, dist, wanted = sys.argv[1:4]
importlib.import_module(module)
sys.exit(0 if importlib.metadata.version(dist) == wanted else 1)
PY
  then
    continue
  fi
  missing+=("$requirement")
done

if ((${#missing[@]} > 0)); then
  echo "python-env: installing ${missing[*]}" >&2
  "$py" -m pip install --disable-pip-version-check --quiet "${missing[@]}" >&2
fi

echo "$py"
