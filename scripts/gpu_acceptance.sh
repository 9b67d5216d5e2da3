#!/usr/bin/env bash
# The checks that need a Hopper GPU, in one go (what a developer runs on an H100/H200
# box before calling a GPU feature done). Each step runs even when an earlier one
# failed; the last lines are a summary, and the script exits 1 when any step did not
# exit 0 (every step's expected code). Logs and reports go to OUT (default ./gpu-acceptance).
#   scripts/gpu_acceptance.sh [BUILD_DIR]
# Steps: environment, GPU test binaries, the seed-48590 and default sweeps over every
# embedded Triton set under every compile path (prebuilt, driver, toolkit ptxas, and each
# set's bundled ptxas when installed), the upgrade gate, schema validation.
set -uo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${1:-$repo/build}"
out="${OUT:-$repo/gpu-acceptance}"
mkdir -p "$out"
lp="$build/loraprobe"
summary=()
failed=()

step() {  # step NAME TIMEOUT_S COMMAND...
  local name="$1" limit="$2"; shift 2
  local start=$SECONDS
  echo "=== $name: $*" | tee -a "$out/steps.log"
  timeout "$limit" "$@" >"$out/$name.log" 2>&1
  local rc=$?
  tail -n 25 "$out/$name.log"
  summary+=("$(printf '%-28s rc=%-3s %4ss' "$name" "$rc" "$((SECONDS - start))")")
  # Every step here exits 0 when all is well: the sweeps fail only on FAIL, fault, timeout or
  # compile_error (a LATENT case and an incompatible pairing are not failures).
  [ "$rc" -eq 0 ] || failed+=("$name")
}

step env 60 "$lp" env
# A GPU test that finds no GPU fails here instead of skipping (tests/support/gpu.hpp): this
# script runs on a GPU box, and a driver that cannot initialise must not read as a pass.
export LP_REQUIRE_GPU=1
# LP_ACCEPTANCE_SKIP: names of test binaries to leave out (kernels_gpu_test JIT-loads the
# PTX of every set and takes about 3 minutes).
for t in cuda/cuda_gpu_test cuda/cuda_fault_test verify/verify_gpu_test kernels/kernels_gpu_test sweep/race_control_gpu_test \
         sweep/sweep_gpu_test; do
  case " ${LP_ACCEPTANCE_SKIP:-} " in *" $(basename "$t") "*) continue ;; esac
  [ -x "$build/tests/$t" ] && step "$(basename "$t")" 900 "$build/tests/$t"
done
compilers=(--compiler prebuilt --compiler driver --compiler ptxas=toolkit)
# ptxas=triton is each Triton set's bundled ptxas: only where scripts/install_tools.sh triton-ptxas put them.
if [ -d "${LP_TOOLS_DIR:-$repo/.tools}/triton-ptxas" ]; then compilers+=(--compiler ptxas=triton); fi
step sweep-seed-48590 900 "$lp" sweep --quiet --config "$repo/configs/seed-48590.json" "${compilers[@]}" --out "$out/seed-48590.json"
step sweep-default 1200 "$lp" sweep --quiet "${compilers[@]}" --out "$out/default.json"
step sweep-upgrade-gate 600 "$lp" sweep --quiet --config "$repo/configs/upgrade-gate.json" --out "$out/upgrade-gate.json"
if python3 -c 'import jsonschema' 2>/dev/null; then
  step schema 120 python3 "$repo/tests/report/validate_reports.py" "$repo/configs/schema/report.schema.json" \
    "$out/seed-48590.json" "$out/default.json" "$out/upgrade-gate.json"
fi
# Only the newest few files travel back from some machines: one archive of everything.
tar -C "$out" -czf "$out/../acceptance-logs.tgz" . 2>/dev/null
echo "=== summary"
printf '%s\n' "${summary[@]}" | tee "$out/summary.txt"
if [ "${#failed[@]}" -gt 0 ]; then
  echo "FAILED: ${failed[*]}" | tee -a "$out/summary.txt"
  exit 1
fi
echo "all ${#summary[@]} steps passed" | tee -a "$out/summary.txt"
