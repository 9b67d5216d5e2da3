#!/usr/bin/env bash
# The memory bound of a plan (issue 12): a plan at the 5-million-case cap, printed by
# `sweep --dry-run` as a table and as JSON, stays under 2 GiB resident. Both print as
# they go; a planned case keeps no JSON (its axes are computed when asked for).
# A benchmark, not a test: it prints the peak resident size and wall time of each and
# whether the bound held, and exits 0 either way.
#   scripts/bench/plan_memory.sh [BUILD_DIR]
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
lp="${1:-$repo/build}/loraprobe"
work="$(mktemp -d "${TMPDIR:-/tmp}/loraprobe-bench-XXXXXX")"
trap 'rm -rf "$work"' EXIT
# 4096 token counts x 1220 ranks: 4,997,120 cases, just under the cap of 5,000,000
# (plan/plan.hpp k_max_combinations; an axis holds at most 4096 values).
cat > "$work/plan-5m.json" <<'JSON'
{"name": "plan-5m", "axes": {"triton": ["3.6.0"], "tokens": {"from": 1, "to": 4096, "step": 1},
 "rank": {"from": 1, "to": 1220, "step": 1}}}
JSON
bound_kb=$((2 * 1024 * 1024))
measure() {  # measure NAME ARGS...
  local name="$1"
  shift
  /usr/bin/time -f "%M %e" -o "$work/time.txt" "$lp" sweep --config "$work/plan-5m.json" --dry-run "$@" > "$work/out.txt"
  read -r kb seconds < "$work/time.txt"
  awk -v n="$name" -v kb="$kb" -v s="$seconds" -v bound="$bound_kb" -v lines="$(wc -l < "$work/out.txt")" \
    'BEGIN { printf "bench: %-28s %7.0f MiB peak resident (bound 2048 MiB: %s), %6.1f s, %d lines\n", n, kb / 1024, kb <= bound ? "held" : "EXCEEDED", s, lines }'
}
echo "bench: $(nproc) cpus, load $(cut -d' ' -f1-3 /proc/loadavg), $("$lp" version | head -n 1)"
measure "dry run, 4997120 cases, table"
measure "dry run, 4997120 cases, --json" --json
