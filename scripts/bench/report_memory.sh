#!/usr/bin/env bash
# The memory of reading a report (issue 30): compact reports of about 50 MB read by
# each converter and `diff`; prints the peak resident size of each as a multiple of
# the file's size (the goal: at most 4x). Two shapes: the sample report's rows (few
# axes per group), and the H200 seed report's (tests/report/fixtures, every axis of a
# real sweep), each repeated with its own index and id. Each copy of the rows is a
# configuration of its own by its rank and LoRA count (1 to 4096, then the next count),
# and keeps the report's token counts, as a large sweep has many configurations and a handful of token counts
# (until 2026-12-04 each row got tokens of its own, which made the verdict map a grid
# of 80 rows by 655,360 token columns that no sweep produces). A benchmark, not a
# test: it exits 0 either way.
#   scripts/bench/report_memory.sh [BUILD_DIR] [MEGABYTES]
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
build="${1:-$repo/build}"
lp="$build/loraprobe"
megabytes="${2:-50}"
work="$(mktemp -d "${TMPDIR:-/tmp}/loraprobe-bench-XXXXXX")"
trap 'rm -rf "$work"' EXIT
"$build/tests/report/write_sample_reports" "$work" >/dev/null
"$lp" report "$repo/tests/report/fixtures/seed-h200-3.0.0.json" --format json -o "$work/seed.json"
grow() {  # grow SOURCE OUT: SOURCE's rows repeated to about $megabytes MB
python3 - "$1" "$2.tmp" "$megabytes" <<'PY'
import json, sys
report = json.load(open(sys.argv[1]))
table = report["cases"]
rows = table["rows"]
id_col = table["columns"].index("id")
index_col = table["columns"].index("index")
# The rank and the LoRA count columns (constants of the source reports), one pair per
# copy of the rows: distinct configurations, so that diff pairs them.
for axis in ("rank", "num_loras"):
    table["constants"].pop(axis, None)
    table["columns"].append(axis)
target = int(sys.argv[3]) * 1024 * 1024
row_bytes = len(json.dumps(rows[0])) + 14
n = max(1, target // row_bytes)
out = []
for i in range(n):
    row = list(rows[i % len(rows)])
    row[index_col] = i
    row[id_col] = f"{i:012x}"
    copy = i // len(rows)
    row.append(copy % 4096 + 1)
    row.append(copy // 4096 + 1)
    out.append(row)
table["rows"] = out
report["meta"]["plan"]["cases"] = n
report["summary"]["first_failure"] = None
report["summary"]["minimal_failure"] = None
report["summary"]["first_latent"] = None
with open(sys.argv[2], "w") as f:
    f.write(json.dumps(report))
PY
# In the layout loraprobe writes (indented, a row per line): the size a user's file has.
"$lp" report "$2.tmp" --format json -o "$2" 2>/dev/null || true
rm -f "$2.tmp"
}
measure() {  # measure NAME ARGS...
  local name="$1"
  shift
  local rc=0
  /usr/bin/time -f "%M %e" -o "$work/time.txt" "$lp" "$@" > "$work/out.txt" 2>"$work/err.txt" || rc=$?
  read -r kb seconds < <(tail -n 1 "$work/time.txt")
  [ "$rc" -le 1 ] || sed 's/^/bench:   /' "$work/err.txt" | head -n 2
  awk -v n="$name" -v kb="$kb" -v s="$seconds" -v size="$size_kb" -v rc="$rc" \
    'BEGIN { printf "bench: %-24s %7.0f MiB peak resident, %5.1fx the file (goal 4x: %s), %6.1f s, exit %d\n", n, kb / 1024, kb / size, kb <= 4 * size ? "held" : "exceeded", s, rc }'
}
echo "bench: $(nproc) cpus, $("$lp" version | head -n 1)"
for shape in all-verdicts seed; do
  grow "$work/$shape.json" "$work/big.json"
  size_kb=$(( $(stat -c %s "$work/big.json") / 1024 ))
  echo "bench: the $shape report's rows, $(python3 -c "import json,sys; print(len(json.load(open(sys.argv[1]))['cases']['rows']))" "$work/big.json") cases, $((size_kb / 1024)) MiB"
  measure "report --format summary" report "$work/big.json"
  measure "report --format json" report "$work/big.json" --format json
  measure "json --detail full" report "$work/big.json" --format json --detail full
  measure "report --format md" report "$work/big.json" --format md
  measure "report --format html" report "$work/big.json" --format html
  measure "report --format junit" report "$work/big.json" --format junit
  measure "diff (the file twice)" diff "$work/big.json" "$work/big.json"
done
