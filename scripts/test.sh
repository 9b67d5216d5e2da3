#!/usr/bin/env bash
# Sets up and builds loraprobe, then runs every test. Tests labelled `gpu` print
# "skipped: no GPU" on hosts without one; CPU tests always run; then the fuzzers.
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$repo/scripts/setup.sh"
(cd "${LORAPROBE_BUILD_DIR:-$repo/build}" && ctest --output-on-failure -j "$(nproc)" "$@")
# The parsers that read user input (configs, SASS listings) under libFuzzer with
# ASan and UBSan: the committed corpus replayed, then a fixed-seed, run-bounded
# pass, so the same commit gives the same result every run.
"$repo/scripts/fuzz.sh"
