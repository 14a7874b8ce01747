#!/usr/bin/env bash
# Source this file: it ensures the project venv (scripts/python-env.sh, which installs
# torch==2.13.0 when missing) and exports what tch's build and the binaries need:
#   LIBTORCH          the `torch` package folder of the venv (headers + lib/)
#   LD_LIBRARY_PATH   its lib/ folder prepended (the binaries also carry an rpath to it)
#   COEVOLVE_PYTHON   the venv's python (Python reference benchmark and safetensors test)
#   COEVOLVE_RERUN    the venv's rerun CLI (replay tests)
# Usage: source scripts/torch-env.sh
_coevolve_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
COEVOLVE_PYTHON="$("$_coevolve_root/scripts/python-env.sh")"
export COEVOLVE_PYTHON
LIBTORCH="$("$COEVOLVE_PYTHON" -c 'import os, torch; print(os.path.dirname(torch.__file__))')"
export LIBTORCH
export LD_LIBRARY_PATH="$LIBTORCH/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export COEVOLVE_RERUN="$(dirname "$COEVOLVE_PYTHON")/rerun"
unset _coevolve_root
