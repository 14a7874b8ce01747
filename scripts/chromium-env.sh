#!/usr/bin/env bash
# Source this file: makes sure a headless Chromium is there for the report rendering test
# (tests/evolve.rs) and exports COEVOLVE_CHROMIUM. Uses one on PATH; otherwise installs the
# Debian `chromium` package when apt-get can (root, or passwordless sudo).
for _b in chromium chromium-browser google-chrome headless_shell; do
  if command -v "$_b" >/dev/null 2>&1; then
    COEVOLVE_CHROMIUM="$(command -v "$_b")"
    break
  fi
done
if [ -z "${COEVOLVE_CHROMIUM:-}" ] && command -v apt-get >/dev/null 2>&1; then
  _sudo=""
  if [ "$(id -u)" != 0 ]; then _sudo="sudo -n"; fi
  echo "chromium-env: installing chromium (headless report test)" >&2
  if $_sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends chromium >/dev/null 2>&1 ||
    { $_sudo apt-get update >/dev/null 2>&1 &&
      $_sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends chromium >/dev/null 2>&1; }; then
    COEVOLVE_CHROMIUM="$(command -v chromium || true)"
  fi
  unset _sudo
fi
if [ -n "${COEVOLVE_CHROMIUM:-}" ]; then
  export COEVOLVE_CHROMIUM
else
  echo "chromium-env: no Chromium found or installable; the report rendering test will fail" >&2
fi
unset _b
