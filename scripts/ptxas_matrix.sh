#!/usr/bin/env bash
# Prints the ptxas version matrix of issue 5 (no GPU needed): every PTX of
# tests/sass/fixtures compiled by every ptxas under .tools/ptxas/<version>/, then
# disassembled and checked for wgmma register reuse. Installs the tools if
# missing (scripts/install_tools.sh is idempotent) and builds the test binary
# that does the work in build/ (or $LP_BUILD_DIR).
# Usage: scripts/ptxas_matrix.sh
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${LP_BUILD_DIR:-$root/build}"
bash "$root/scripts/install_tools.sh"
if [[ ! -f "$build/build.ninja" && ! -f "$build/Makefile" ]]; then
  cmake -S "$root" -B "$build" -G Ninja
fi
cmake --build "$build" --target sass_ptxas_matrix_test -j2
LP_PTXAS_MATRIX=full "$build/tests/sass/sass_ptxas_matrix_test" --gtest_brief=1
