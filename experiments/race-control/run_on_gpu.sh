#!/usr/bin/env bash
# GPU side of the race-control experiment (docs/race-control.md): runs every
# cubin that build_cubins.sh made and prints the curve.
#
#   experiments/race-control/run_on_gpu.sh CUBIN_DIR OUT_DIR [race_runner options]
#
# OUT_DIR/race.jsonl (one line per cubin), OUT_DIR/race-control.png when matplotlib is there.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
cubins="${1:?usage: run_on_gpu.sh CUBIN_DIR OUT_DIR [options]}"
out="${2:?usage: run_on_gpu.sh CUBIN_DIR OUT_DIR [options]}"
shift 2
runner="${RACE_RUNNER:-$repo/build/experiments/race-control/race_runner}"
mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader | tee "$out/gpu.txt"
# One process per cubin: a kernel that faults leaves its context unusable, and must
# not take the other cubins' results with it.
: >"$out/race.jsonl"
for cubin in "$cubins"/*/race-*.cubin; do
  "$runner" "$@" "$cubin" >>"$out/race.jsonl" || true
done
python3 "$here/plot.py" "$cubins/cubins.json" "$out/race.jsonl" "$out/race-control.png"
