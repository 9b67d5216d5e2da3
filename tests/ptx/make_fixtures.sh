#!/usr/bin/env bash
# Makes tests/ptx/fixtures/, with scripts/gen_kernels.py --triton (each Triton is
# installed into .tools/triton/):
# - the PTX of vLLM's default expand (fp32 input, bf16 weights, block_m 64, block_n
#   128, block_k 32, 4 warps, 2 stages, ADD_INPUTS, EVEN_K) as Triton 3.7.1, 3.8.0 and
#   3.9.0 generate it from kernels/triton/ (Triton 3.6.0's is in the embedded set);
# - the PTX of vLLM's dual-stream expand (the same without ADD_INPUTS, with USE_GDC and
#   launch_pdl) as Triton 3.6.0, 3.7.1, 3.8.0 and 3.9.0 generate it, for the
#   gdc-early-read check (tests/ptx/early_read_test.cpp).
#   tests/ptx/make_fixtures.sh
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$repo"
default="op=expand,input_dtype=fp32,block_n=128,num_stages=2,num_slices=1,block_m=64,block_k=32,weight_dtype=bf16"
default+=",num_warps=4,even_k=true,role=kernel"
make_fixture() {  # version id only
  local version="$1" id="$2" only="$3"
  local out=".tools/ptx-fixtures/$version/$id"
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
}
for version in 3.7.1 3.8.0 3.9.0; do
  make_fixture "$version" "expand-fp32-bf16-m64n128k32-w4s2-evenk-add-s1" "$default,add_inputs=true,gdc=false"
done
for version in 3.6.0 3.7.1 3.8.0 3.9.0; do
  make_fixture "$version" "expand-fp32-bf16-m64n128k32-w4s2-evenk-noadd-s1-gdc" "$default,add_inputs=false,gdc=true"
done
