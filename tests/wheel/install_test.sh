#!/usr/bin/env bash
# The pip wheel's test (issue 34), run by scripts/test.sh after ctest: the wheel that
# scripts/build_wheel.sh made is installed with its dependencies from the package
# index into a fresh virtual environment (no system site-packages), and what the
# installed loraprobe prints is checked against the source build's.
#
#   tests/wheel/install_test.sh WHEEL SOURCE_BUILD_LORAPROBE
#
# The environment's nvidia-cuda-nvcc is pinned to the toolkit's version here (13.0.88
# on the CI machine), so `inspect --ptxas toolkit` compiles with the same ptxas on
# both sides and must find the same hazards. The installed loraprobe runs with no
# CUDA_HOME, CUDA_PATH or LP_TOOLS_DIR and /usr/local/cuda off PATH: what it finds is
# the environment's. Exits 1 at the first check that fails, saying which.
set -euo pipefail
wheel="$(realpath "$1")"
source_build="$(realpath "$2")"
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
nvcc_pin="${LP_WHEEL_TEST_NVCC:-13.0.88}"
# Pinned as scripts/install_tools.sh pins it: the same commit tests against the same tools.
nvdisasm_pin="$(sed -n 's/^nvdisasm_version="\(.*\)"$/\1/p' "$repo/scripts/install_tools.sh")"
work="$(mktemp -d "${TMPDIR:-/tmp}/lp-wheel-test-XXXXXX")"
trap 'rm -rf "$work"' EXIT
fail() { echo "wheel test: FAIL: $*" >&2; exit 1; }
say() { echo "wheel test: $*"; }

python3 -m venv "$work/venv"
# The venv's python3 is what `pip install` would use; quiet, but errors show.
"$work/venv/bin/python" -m pip install --quiet --disable-pip-version-check \
  "${wheel}[ptxas]" "nvidia-cuda-nvcc==$nvcc_pin" "nvidia-cuda-nvdisasm==$nvdisasm_pin"
installed="$work/venv/bin/loraprobe"
[[ -x "$installed" ]] || fail "pip did not put loraprobe in the environment's bin/"

# The installed tool in an environment without the toolkit: nothing from /usr/local/cuda.
clean_path="$work/venv/bin:$(printf '%s' "$PATH" | tr ':' '\n' | grep -v '^/usr/local/cuda' | paste -sd:)"
run_installed() {
  (cd "$work" && env -u CUDA_HOME -u CUDA_PATH -u LP_TOOLS_DIR PATH="$clean_path" "$installed" "$@")
}
run_source() { (cd "$work" && "$source_build" "$@"); }

version="$(run_installed version | head -n 1)"
say "installed: $version"
[[ "$version" == "$(run_source version | head -n 1)" ]] || fail "version differs from the source build's: $version"
project_version="$(sed -n 's/^project(loraprobe VERSION \([0-9.]*\).*/\1/p' "$repo/CMakeLists.txt")"
[[ "$wheel" == *"loraprobe-$project_version-"* ]] || fail "the wheel's version is not CMakeLists.txt's $project_version: $wheel"

env_text="$(run_installed env)"
printf '%s\n' "$env_text" | sed 's/^/wheel test:   env: /'
site="$("$work/venv/bin/python" -c 'import site; print(site.getsitepackages()[0])')"
grep -q "^CUDA toolkit: $nvcc_pin at $site/nvidia/.* (from python env $site)" <<<"$env_text" ||
  fail "env: the toolkit is not the environment's nvidia-cuda-nvcc $nvcc_pin"
grep -q "^nvdisasm: .* $site/nvidia/.*/bin/nvdisasm (python env $site)" <<<"$env_text" ||
  fail "env: nvdisasm is not the environment's nvidia-cuda-nvdisasm"

# The dry run: the same plan, line for line.
diff <(run_source sweep --dry-run 2>&1) <(run_installed sweep --dry-run 2>&1) >"$work/dry.diff" ||
  fail "sweep --dry-run differs from the source build's: $(head -c 2000 "$work/dry.diff")"
say "sweep --dry-run: the same plan as the source build's ($(run_installed sweep --dry-run 2>&1 | head -n 1))"

# The static answer, as the README gives it (an embedded config by name, outside a checkout):
# the same findings, item for item, with the same ptxas version.
inspect() {
  local out="$1"; shift
  local rc=0
  "$@" inspect --config seed-48590 --ptxas toolkit --json >"$out" 2>"$out.err" || rc=$?
  echo "$rc"
}
rc_source="$(inspect "$work/source.json" run_source)"
rc_installed="$(inspect "$work/installed.json" run_installed)"
[[ "$rc_source" == "$rc_installed" ]] || fail "inspect exit codes differ: source $rc_source, installed $rc_installed"
python3 "$repo/tests/wheel/same_findings.py" "$work/source.json" "$work/installed.json" ||
  fail "inspect findings differ from the source build's"
# The table a user sees ends with the stack matrix (served from the cache of the run above).
run_installed inspect --config seed-48590 --ptxas toolkit 2>/dev/null | tail -n 6 |
  sed 's/^/wheel test:   inspect: /' || true

# The README's first commands: in the environment vLLM runs in (here: the wheel's, with the
# Triton that vLLM 0.34's torch pins), `loraprobe check` with no option answers for it,
# from outside any checkout, with the python3 beside the executable.
"$work/venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-deps "triton==3.8.0"
rc=0
run_installed check >"$work/check.txt" 2>"$work/check.err" || rc=$?
head -n 1 "$work/check.txt" | sed 's/^/wheel test:   check: /'
[[ "$rc" == 1 ]] || fail "check exited $rc, expected 1 (affected): $(head -c 2000 "$work/check.err")"
head -n 1 "$work/check.txt" | grep -q "^vLLM not installed, torch not installed, Triton 3.8.0, ptxas 12.9.86 (Triton's, for sm_90): AFFECTED. .*(made by ptxas" ||
  fail "check's first line: $(head -n 1 "$work/check.txt")"
grep -q "^  \[verified\] compile with ptxas 13.3.* (beside Triton's ptxas)" "$work/check.txt" ||
  fail "check names no verified ptxas-blackwell remedy"
say "PASS (inspect exit $rc_installed, as the source build's; check exit 1, made by ptxas)"
