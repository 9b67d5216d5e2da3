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
# The parsers that read user input (configs, SASS listings, PTX) under libFuzzer with
# ASan and UBSan: the committed corpus replayed, then a fixed-seed, run-bounded
# pass, so the same commit gives the same result every run.
"$repo/scripts/fuzz.sh"
phase "fuzzing (build and gate)"
# The pip wheel (docs/install.md): built for manylinux_2_28 with zig's clang, then
# installed with its dependencies into a fresh virtual environment and held to the
# source build's answers (tests/wheel/install_test.sh).
wheel="$("$repo/scripts/build_wheel.sh" | tail -n 1)"
"$repo/tests/wheel/install_test.sh" "$wheel" "${LORAPROBE_BUILD_DIR:-$repo/build}/loraprobe"
phase "wheel (build and install test)"
