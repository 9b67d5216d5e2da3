#!/usr/bin/env bash
# The CPU speed targets of the Triton axis (issue 11), measured with a cold report cache
# (a fresh XDG_CACHE_HOME), on this machine, after the build:
#   1. the main job of scripts/run.sh without a GPU (the seed configuration under every
#      embedded Triton, prebuilt and the toolkit's ptxas): target 60 s;
#   2. inspect --ptxas-matrix over the vLLM default rows of every set and every ptxas in
#      .tools/ptxas: target 300 s.
# A benchmark, not a test: it prints the times and whether each met its target, and
# exits 0 either way.
#   scripts/bench/cpu_targets.sh [BUILD_DIR]
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
lp="${1:-$repo/build}/loraprobe"
cache="$(mktemp -d "${TMPDIR:-/tmp}/loraprobe-bench-XXXXXX")"
trap 'rm -rf "$cache"' EXIT
measure() {  # measure NAME TARGET_S COMMAND...: wall seconds of COMMAND with a cold cache
  local name="$1" target="$2"
  shift 2
  rm -rf "${cache:?}"/*
  local start end rc=0
  start="$(date +%s%N)"
  XDG_CACHE_HOME="$cache" "$@" >"$cache/out.txt" 2>&1 || rc=$?
  end="$(date +%s%N)"
  awk -v n="$name" -v a="$start" -v b="$end" -v t="$target" -v rc="$rc" -v line="$(grep '^inspect: ' "$cache/out.txt" | tail -n 1)" \
    'BEGIN { s = (b - a) / 1e9; printf "bench: %-44s %7.1f s (target %d s: %s), exit %d; %s\n", n, s, t, s <= t ? "met" : "MISSED", rc, line }'
}
echo "bench: $(nproc) cpus, load $(cut -d' ' -f1-3 /proc/loadavg), $("$lp" version | head -n 1)"
measure "run.sh main job (seed config, 4 sets)" 60 "$lp" inspect --config "$repo/configs/seed-48590.json" --ptxas toolkit
measure "ptxas matrix (4 sets x .tools/ptxas)" 300 "$lp" inspect --ptxas-matrix
