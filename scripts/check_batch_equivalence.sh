#!/usr/bin/env bash
# Batched disassembly against each cubin's own ELF, over every cubin of every embedded
# kernel set (the CI test checks a fixed sample): tests/inspect/batch_equivalence_test.cpp
# with LP_BATCH_EQUIVALENCE=all. About 6 minutes on 2 cores; needs a build and nvdisasm.
#   scripts/check_batch_equivalence.sh [BUILD_DIR]
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${1:-$repo/build}"
LP_BATCH_EQUIVALENCE=all "$build/tests/inspect/inspect_test" --gtest_filter='BatchEquivalence.*'
