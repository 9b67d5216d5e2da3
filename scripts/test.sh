#!/usr/bin/env bash
# Sets up and builds loraprobe, then runs every test. Tests labelled `gpu` print
# "skipped: no GPU" on hosts without one; CPU tests always run; then the fuzzers.
# Each phase prints its wall time, so a slow CI run says where the time went.
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
phase_start=$SECONDS
phase() { echo "test.sh: $1 took $((SECONDS - phase_start)) s"; phase_start=$SECONDS; }
"$repo/scripts/setup.sh" --with-browser
phase "setup and build"
# Every test has a bound (tests/CMakeLists.txt sets tighter ones where a test needs less).
(cd "${LORAPROBE_BUILD_DIR:-$repo/build}" && ctest --output-on-failure --timeout 600 -j "$(nproc)" "$@")
phase "ctest"
# Two phases side by side, each into its own log, printed in this order when both end:
# the wheel's configure, packaging and install test run on one core, and the fuzzers'
# build and gate take the other's idle time (both took 285 s at edac020; one after the
# other they took 177 s and 174 s at 3069741, with a longer fuzz gate).
#  - The fuzzers: the parsers that read user input (configs, SASS listings, PTX) under
#    libFuzzer with ASan and UBSan: the committed corpus replayed, then a fixed-seed,
#    run-bounded pass, so the same commit gives the same result every run, however
#    loaded the machine is.
#  - The pip wheel (docs/install.md): built for manylinux_2_28 with zig's clang, then
#    installed with its dependencies into a fresh virtual environment and held to the
#    source build's answers (tests/wheel/install_test.sh).
logs="$(mktemp -d "${TMPDIR:-/tmp}/lp-test-logs-XXXXXX")"
# An interrupted test.sh stops the phase beside it (a fuzzer or compiler it already
# started ends on its own) and leaves no logs behind. `|| true`: with no job left, kill
# fails, and under set -e that failure would become test.sh's exit status (it did: 2).
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$logs"' EXIT
timed() {  # timed NAME COMMAND...: runs it into $logs/NAME.log, its status and seconds beside
  local start=$SECONDS rc=0
  "${@:2}" >"$logs/$1.log" 2>&1 || rc=$?
  echo "$rc $((SECONDS - start))" >"$logs/$1.end"
}
wheel_test() {
  local wheel
  wheel="$("$repo/scripts/build_wheel.sh" | tail -n 1)" || return 1
  "$repo/tests/wheel/install_test.sh" "$wheel" "${LORAPROBE_BUILD_DIR:-$repo/build}/loraprobe"
}
timed fuzz "$repo/scripts/fuzz.sh" &
timed wheel wheel_test
wait
status=0
for part in "fuzz:fuzzing (build and gate)" "wheel:wheel (build and install test)"; do
  name="${part%%:*}"
  cat "$logs/$name.log"
  read -r rc seconds <"$logs/$name.end"
  echo "test.sh: ${part#*:} took $seconds s (beside the other)"
  [[ "$rc" == 0 ]] || { echo "test.sh: ${part#*:} FAILED (exit $rc)" >&2; status=1; }
done
phase "fuzzing and wheel together"
exit $status
