#!/usr/bin/env bash
# loraprobe check against vLLM's own LoRA kernels (issue 52): installs vllm==0.34.0 (no
# dependencies: its kernels are read, not imported) and the Triton its torch pins
# (torch 2.14.0 pins triton~=3.8.0) into a scratch virtual environment, then runs
#   loraprobe check --python <that venv> --model qwen3.6-35b-a3b
# A benchmark-like check, not a test: the vLLM wheel is about 340 MB.
#   scripts/check_vllm.sh [LORAPROBE] [extra check options...]
# Env: LP_CHECK_VLLM (default 0.34.0), LP_CHECK_TRITON (3.8.0), LP_CHECK_VENV (a folder to
# keep the environment in; default a temporary one).
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
lp="${1:-$repo/build/loraprobe}"
shift || true
vllm="${LP_CHECK_VLLM:-0.34.0}"
triton="${LP_CHECK_TRITON:-3.8.0}"
venv="${LP_CHECK_VENV:-}"
if [[ -z "$venv" ]]; then
  venv="$(mktemp -d "${TMPDIR:-/tmp}/lp-check-vllm-XXXXXX")"
  trap 'rm -rf "$venv"' EXIT
fi
if ! "$venv/bin/python" -c "import importlib.metadata as m; assert m.version('vllm') == '$vllm'" 2>/dev/null; then
  python3 -m venv "$venv"
  echo "check_vllm: installing vllm==$vllm and triton==$triton (no dependencies) into $venv" >&2
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-deps "vllm==$vllm" "triton==$triton"
fi
exec "$lp" check --python "$venv/bin/python" --kernels vllm --model qwen3.6-35b-a3b "$@"
