#!/usr/bin/env bash
# On a Hopper GPU: times `loraprobe sweep` on scripts/bench/expand-1008.json (1008 expand
# cases, 3 repeats, with its static inspection and controls) against what a user would
# write instead, scripts/bench/python_loop.py (the same cases JIT-compiled with the
# installed Triton and compared with torch). Both cold: a fresh Triton cache and a fresh
# loraprobe report cache. A benchmark, not a test (target: loraprobe at least 10x faster).
#   scripts/bench/gpu_vs_python.sh [BUILD_DIR]
set -uo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
lp="${1:-$repo/build}/loraprobe"
scratch="$(mktemp -d "${TMPDIR:-/tmp}/loraprobe-bench-XXXXXX")"
trap 'rm -rf "$scratch"' EXIT
t0="$(date +%s%N)"
XDG_CACHE_HOME="$scratch/lp-cache" "$lp" sweep --quiet --config "$repo/scripts/bench/expand-1008.json" \
  --out "$scratch/bench.json" | grep '^cases:'
t1="$(date +%s%N)"
if ! TRITON_CACHE_DIR="$scratch/triton-cache" python3 "$repo/scripts/bench/python_loop.py"; then
  echo "bench: the python loop failed (above); no ratio" >&2
  exit 1
fi
t2="$(date +%s%N)"
# awk, not bc: the GPU machine has no bc.
awk -v a="$t0" -v b="$t1" -v c="$t2" 'BEGIN { l = (b - a) / 1e9; p = (c - b) / 1e9;
  printf "bench: loraprobe sweep %.1f s, python loop %.1f s: %.1fx\n", l, p, p / l }'
