#!/usr/bin/env bash
# LP_REQUIRE_GPU=1 turns a GPU test's skip into a failure (tests/support/gpu.hpp;
# scripts/gpu_acceptance.sh sets it), so a GPU run cannot pass by skipping.
#   require_gpu_test.sh GPU_TEST_BINARY
# On a host without a GPU the binary must skip without it ("skipped: no GPU (<why>)",
# exit 0) and fail with it (non-zero, naming LP_REQUIRE_GPU=1). On a host with a GPU
# there is nothing to skip: exit 77, which CTest reports as skipped.
set -uo pipefail
bin="$1"
plain="$(env -u LP_REQUIRE_GPU "$bin" 2>&1)"
plain_rc=$?
if ! grep -q "skipped: no GPU (" <<<"$plain"; then
  if [ "$plain_rc" -eq 0 ]; then
    echo "a GPU is here: no skip to turn into a failure"
    exit 77
  fi
  echo "FAIL: without LP_REQUIRE_GPU, $bin neither skipped with 'skipped: no GPU (<why>)' nor passed:"
  echo "$plain"
  exit 1
fi
if [ "$plain_rc" -ne 0 ]; then
  echo "FAIL: a skip must exit 0, $bin exited $plain_rc:"
  echo "$plain"
  exit 1
fi
required="$(LP_REQUIRE_GPU=1 "$bin" 2>&1)"
required_rc=$?
if [ "$required_rc" -eq 0 ] || ! grep -q "LP_REQUIRE_GPU=1 and no GPU (" <<<"$required"; then
  echo "FAIL: with LP_REQUIRE_GPU=1, $bin exited $required_rc (expected a failure naming LP_REQUIRE_GPU=1):"
  echo "$required"
  exit 1
fi
echo "ok: skipped without LP_REQUIRE_GPU, failed (exit $required_rc) with it"
