#!/usr/bin/env bash
# Renders every committed report (test fixtures, the report fuzzer's corpus, and the
# sample reports tests/report writes) through every converter and diff, into OUTDIR.
# Run it with the loraprobe before a change and after it: `diff -r BEFORE AFTER` must
# print nothing. Timestamps (the samples are written now) read TIMESTAMP.
# Usage: scripts/golden-reports.sh BUILD_DIR OUTDIR
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="$(cd "$1" && pwd)"
mkdir -p "$2/in"
cd "$2"
lp="$build/loraprobe"
"$build/tests/report/write_sample_reports" in >/dev/null
for f in "$repo"/tests/report/fixtures/*.json "$repo"/fuzz/corpus/report/*.json; do
  cp "$f" "in/$(basename "$(dirname "$f")")-$(basename "$f")"
done
run() {  # run OUTFILE ARGS...: stdout and stderr, and a non-zero exit, into OUTFILE
  local to="$1"
  shift
  "$lp" "$@" >"$to" 2>&1 || echo "exit $?" >>"$to"
}
for f in in/*.json; do
  name="$(basename "$f" .json)"
  for format in summary md html junit json; do
    run "$name.$format" report "$f" --format "$format"
  done
  run "$name.full.json" report "$f" --format json --detail full
  for new in in/fixtures-seed-h200-3.0.0.json in/all-verdicts.json; do
    run "diff-$name--$(basename "$new" .json).txt" diff "$f" "$new"
    run "diff-$name--$(basename "$new" .json).json" diff --json "$f" "$new"
  done
done
sed -i -E 's/20[0-9]{2}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z/TIMESTAMP/g' ./*.* in/*.json
