#!/usr/bin/env bash
# Makes tests/ptx/fixtures/: the PTX of vLLM's default expand (fp32 input, bf16
# weights, block_m 64, block_n 128, block_k 32, 4 warps, 2 stages, ADD_INPUTS, EVEN_K)
# as Triton 3.7.1, 3.8.0 and 3.9.0 generate it from kernels/triton/, with
# scripts/gen_kernels.py --triton (each Triton is installed into .tools/triton/).
# Triton 3.6.0's PTX of the same kernel is in the embedded set (kernels/sets/triton-3.6.0).
#   tests/ptx/make_fixtures.sh
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$repo"
id="expand-fp32-bf16-m64n128k32-w4s2-evenk-add-s1"
only="op=expand,input_dtype=fp32,block_n=128,num_stages=2,num_slices=1,block_m=64,block_k=32,weight_dtype=bf16"
only+=",num_warps=4,add_inputs=true,even_k=true,role=kernel"
for version in 3.7.1 3.8.0 3.9.0; do
  out=".tools/ptx-fixtures/$version"
  python3 scripts/gen_kernels.py --triton "$version" --out "$out" --only "$only"
  python3 - "$out" "$id" "tests/ptx/fixtures/triton-$version-$id.ptx" <<'PY'
import json, lzma, sys
out, vid, dest = sys.argv[1:]
manifest = json.loads(lzma.open(f"{out}/manifest.json.xz").read())
pack = lzma.open(f"{out}/{manifest['pack']['path']}").read()
ref = next(v for v in manifest["variants"] if v["id"] == vid)["files"]["ptx"]
open(dest, "wb").write(pack[ref["offset"]:ref["offset"] + ref["bytes"]])
print(f"make_fixtures: {dest} ({ref['bytes']} bytes, Triton {manifest['triton_version']})")
PY
done
