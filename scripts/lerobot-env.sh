#!/usr/bin/env bash
# Source this file: it ensures the LeRobot client's own virtual environment (lerobot 0.6.1 needs
# Python >= 3.12 and torch < 2.12, so it cannot share the project venv's torch 2.13.0) and
# exports COEVOLVE_LEROBOT_PYTHON, the python the LeRobot export test (tests/lerobot.rs) runs
# scripts/lerobot_check.py with. Idempotent: a complete venv is reused as it is.
# The venv lives at $COEVOLVE_LEROBOT_VENV (default <repo>/.venv-lerobot).
_lerobot_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
_lerobot_venv="${COEVOLVE_LEROBOT_VENV:-$_lerobot_root/.venv-lerobot}"
_lerobot_pins=("lerobot[dataset]==0.6.1" "torch==2.11.0" "torchvision==0.26.0")
if ! "$_lerobot_venv/bin/python" -c 'import importlib.metadata as m, sys; import lerobot.datasets; sys.exit(m.version("lerobot") != "0.6.1")' >/dev/null 2>&1; then
  # The first interpreter that runs and is >= 3.12 (pyenv shims exist even where they fail).
  _lerobot_base=""
  for _c in "${LEROBOT_PYTHON:-}" python3.12 "${PYENV_ROOT:-$HOME/.pyenv}"/versions/3.12*/bin/python /root/.pyenv/versions/3.12*/bin/python; do
    if [[ -n "$_c" ]] && "$_c" -c 'import sys; sys.exit(sys.version_info < (3, 12))' >/dev/null 2>&1; then
      _lerobot_base="$_c"
      break
    fi
  done
  if [[ -z "$_lerobot_base" ]]; then
    echo "lerobot-env: no Python >= 3.12 found (lerobot 0.6.1 needs it); set LEROBOT_PYTHON" >&2
    return 1 2>/dev/null || exit 1
  fi
  echo "lerobot-env: installing ${_lerobot_pins[*]} into $_lerobot_venv" >&2
  "$_lerobot_base" -m venv "$_lerobot_venv" >&2
  "$_lerobot_venv/bin/python" -m pip install --disable-pip-version-check --quiet "${_lerobot_pins[@]}" >&2
fi
export COEVOLVE_LEROBOT_PYTHON="$_lerobot_venv/bin/python"
unset _lerobot_root _lerobot_venv _lerobot_pins _lerobot_base _c
