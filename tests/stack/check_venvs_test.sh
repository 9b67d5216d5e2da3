#!/usr/bin/env bash
# loraprobe check against real Triton wheels, no GPU (issue 52's CI criteria):
#   triton==3.8.0, loraprobe's kernels: exit 1, the hazard made by ptxas, the ptxas-blackwell
#     beside Triton's ptxas named as a verified remedy; with TRITON_PTXAS_PATH set to it: exit 0;
#   triton==3.9.0: exit 0;
#   an environment without Triton: exit 3 with one line on stderr saying so.
# Also: --json validates against configs/schema/check.schema.json, --markdown opens with
# the answer, --junit counts the failure, and a kernel compiled with and without the JIT's
# specialisation differs (scripts/kernelgen; tests/stack/specialisation.py).
# The environments live in $LP_TOOLS_DIR/check-venvs (default <repo>/.tools), made once;
# pip's own cache serves the wheels to a fresh clone.
set -euo pipefail
lp="$(realpath "$1")"
repo="$2"
tools="${LP_TOOLS_DIR:-$repo/.tools}"
venvs="$tools/check-venvs"
fail() { echo "check_venvs_test: FAIL: $*" >&2; exit 1; }

make_venv() {  # make_venv NAME [PIP SPEC]
  local dir="$venvs/$1"
  if [[ ! -x "$dir/bin/python" ]] || { [[ -n "${2:-}" ]] && ! "$dir/bin/python" -c "import triton" 2>/dev/null; }; then
    rm -rf "$dir"
    python3 -m venv "$dir"
    if [[ -n "${2:-}" ]]; then
      "$dir/bin/python" -m pip install --quiet --disable-pip-version-check --no-deps "$2" >&2
    fi
  fi
  echo "$dir/bin/python"
}

run() {  # run EXPECTED_EXIT OUT ARGS...: loraprobe check, its exit code checked
  local want="$1" out="$2"
  shift 2
  local rc=0
  "$lp" check "$@" >"$out.out" 2>"$out.err" || rc=$?
  [[ "$rc" == "$want" ]] || { cat "$out.out" "$out.err" >&2; fail "check $* exited $rc, expected $want"; }
}

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
export XDG_CACHE_HOME="$work/cache"  # the inspect cache of this test only
py38="$(make_venv triton-3.8.0 triton==3.8.0)"
py39="$(make_venv triton-3.9.0 triton==3.9.0)"
none="$(make_venv no-triton)"

# Triton 3.8.0: affected, made by ptxas, the fix beside it.
run 1 "$work/38" --python "$py38" --kernels loraprobe --json --markdown "$work/38.md" --junit "$work/38.xml"
python3 - "$work/38.out" "$repo/configs/schema/check.schema.json" <<'PY' || fail "the Triton 3.8.0 answer"
import json, sys
import jsonschema
doc = json.load(open(sys.argv[1]))
jsonschema.validate(doc, json.load(open(sys.argv[2])))
assert doc["verdict"] == "affected" and doc["exit_code"] == 1, doc["verdict"]
assert doc["headline"].startswith("vLLM not installed, torch not installed, Triton 3.8.0, ptxas 12.9.86 (Triton's, for sm_90): AFFECTED."), doc["headline"]
hazard = [k for k in doc["kernels"] if k["findings"] > 0]
assert [k["variant"] for k in hazard] == ["expand-fp32-bf16-m64n128k32-w4s2-evenk-add-s1"], hazard
assert hazard[0]["made_by"] == "ptxas", hazard[0]
beside = [r for r in doc["remedies"] if r["id"] == "ptxas_beside_triton"]
assert beside and beside[0]["status"] == "verified", doc["remedies"]
assert beside[0]["how"].startswith("export TRITON_PTXAS_PATH=") and beside[0]["how"].endswith("/ptxas-blackwell"), beside
print(beside[0]["how"].split("=", 1)[1])
PY
blackwell="$(python3 -c 'import json,sys; print([r for r in json.load(open(sys.argv[1]))["remedies"] if r["id"]=="ptxas_beside_triton"][0]["how"].split("=",1)[1])' "$work/38.out")"
head -n 1 "$work/38.md" | grep -qx '# loraprobe check: AFFECTED' || fail "the Markdown does not open with the answer"
grep -q 'failures="1"' "$work/38.xml" || fail "the JUnit has no failure"
echo "check_venvs_test: Triton 3.8.0: exit 1, made by ptxas, remedy: TRITON_PTXAS_PATH=$blackwell"

# The remedy it named, applied: clean.
TRITON_PTXAS_PATH="$blackwell" run 0 "$work/38fixed" --python "$py38" --kernels loraprobe
head -n 1 "$work/38fixed.out" | grep -q "Triton 3.8.0, ptxas 13.3.* (TRITON_PTXAS_PATH, for sm_90): CLEAN" \
  || fail "with TRITON_PTXAS_PATH: $(head -n 1 "$work/38fixed.out")"
echo "check_venvs_test: Triton 3.8.0 with TRITON_PTXAS_PATH=ptxas-blackwell: exit 0"

# Triton 3.9.0: clean.
run 0 "$work/39" --python "$py39" --kernels loraprobe
head -n 1 "$work/39.out" | grep -q "Triton 3.9.0, ptxas 13.4.59 (Triton's, for sm_90): CLEAN" || fail "3.9.0: $(head -n 1 "$work/39.out")"
echo "check_venvs_test: Triton 3.9.0: exit 0"

# No Triton: cannot tell, one line on stderr.
run 3 "$work/none" --python "$none"
[[ "$(wc -l <"$work/none.err")" == 1 ]] || fail "no Triton: stderr is not one line: $(cat "$work/none.err")"
grep -q "^loraprobe check: cannot tell: no Triton is installed for this Python" "$work/none.err" \
  || fail "no Triton: $(cat "$work/none.err")"
echo "check_venvs_test: no Triton: exit 3: $(cat "$work/none.err")"

# An interpreter that does not exist: cannot tell too, not an internal error.
run 3 "$work/missing" --python "$work/no-such-python"
# One whose stdout is not only the probe's (a sitecustomize that prints): cannot tell, not bad input.
printf '#!/bin/sh\necho hello from sitecustomize\nexec "%s" "$@"\n' "$py38" >"$work/chatty-python"
chmod +x "$work/chatty-python"
run 3 "$work/chatty" --python "$work/chatty-python"
grep -q "did not answer as the probe does" "$work/chatty.err" || fail "chatty interpreter: $(cat "$work/chatty.err")"
# An output that is no regular file is refused before any work, with exit 2.
run 2 "$work/outdir" --python "$py38" -o "$work"
# A TRITON_PTXAS_PATH that names no file is ignored by Triton, which runs its own: affected as
# before. The same run (one kernel build fewer) keeps its set under a --keep relative to where
# loraprobe runs (the generator runs in a folder of its own).
(cd "$work" && TRITON_PTXAS_PATH=/nonexistent/ptxas run 1 "$work/keep" --python "$py38" --kernels loraprobe --keep kept)
grep -q "Triton 3.8.0, ptxas 12.9.86 (Triton's, for sm_90): AFFECTED" "$work/keep.out" \
  || fail "an ignored TRITON_PTXAS_PATH: $(head -n 1 "$work/keep.out")"
[[ -f "$work/kept/manifest.json.xz" ]] || fail "--keep kept: no kernel set in $work/kept"
echo "check_venvs_test: hostile interpreters, outputs, ignored TRITON_PTXAS_PATH and a relative --keep: as expected"

# vLLM's ops folder of an older release, without some files: each kernel of a missing file is
# 'not built' with why, not the whole build (scripts/kernelgen/vllm_source.py).
mkdir -p "$work/ops-empty"
"$py38" - "$repo/scripts" "$work/ops-empty" "$work/lifted" <<'PY' || fail "lifting from an ops folder without files"
import sys
sys.path.insert(0, sys.argv[1])
from kernelgen import vllm_source
module = vllm_source.load_module(vllm_source.write_module(sys.argv[2], sys.argv[3]))
assert module.MISSING_FILES == list(vllm_source.SOURCE_FILES), module.MISSING_FILES
assert not hasattr(module, "_lora_expand_kernel")
PY

# The JIT's specialisation decides the program: compiled without it, the same kernel differs.
"$py38" "$repo/tests/stack/specialisation.py" "$repo" || fail "specialisation"
echo "check_venvs_test: PASS"
