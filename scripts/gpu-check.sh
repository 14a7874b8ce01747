#!/usr/bin/env bash
# GPU check: builds the CLI, trains the `base` model (rgbd mode, one 64×64 camera, batch 256)
# on CUDA for a fixed number of steps under bf16 autocast, and prints samples/s, peak GPU
# memory and model FLOP utilisation (MFU) as one JSON object. Budget: < 5 minutes on one H200
# (the build dominates on a fresh machine; the timed training itself is well under a minute).
#
# Usage: scripts/gpu-check.sh [steps]        (default 300)
#        PEAK_TFLOPS=989 scripts/gpu-check.sh  (dense bf16 peak of the GPU, H200 by default)
set -euo pipefail
cd "$(dirname "$0")/.."
steps="${1:-300}"
# shellcheck source=scripts/torch-env.sh
source scripts/torch-env.sh
cargo build --release --bin coevolve
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader
# Sample the GPU memory in use every 100 ms while the benchmark runs.
mem_log="$(mktemp)"
nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits -lms 100 >"$mem_log" &
smi_pid=$!
trap 'kill $smi_pid 2>/dev/null || true; rm -f "$mem_log"' EXIT
result="$(./target/release/coevolve bench train --size base --obs rgbd --device cuda \
  --steps "$steps" --batch-size 256 --json)"
kill "$smi_pid" 2>/dev/null || true
peak_mib="$(sort -n "$mem_log" | tail -1)"
"$COEVOLVE_PYTHON" - "$result" "$peak_mib" "${PEAK_TFLOPS:-989}" <<'PY'
import json, sys
r = json.loads(sys.argv[1])
peak_mib = float(sys.argv[2] or 0)
peak_tflops = float(sys.argv[3])
achieved = r["samples_per_sec"] * r["train_flops_per_sample"] / 1e12
r["peak_gpu_memory_mib"] = peak_mib
r["achieved_tflops"] = achieved
r["mfu"] = achieved / peak_tflops
print(json.dumps(r))
PY
