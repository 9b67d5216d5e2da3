#!/usr/bin/env python3
"""A Triton cache made on the GPU by vLLM's dual-stream expand, inspected by loraprobe.

Runs kernels/triton/lora_expand.py's `_lora_expand_kernel` as vLLM's dual-stream path
launches it (USE_GDC=True, launch_pdl=True, no ADD_INPUTS, fp32 input and bf16
weights, vLLM's one-slice default: block_m 64, block_n 128, 4 warps, 2 stages) through
Triton's JIT with TRITON_CACHE_DIR set, for block_k 32 and 16, checks each result
against torch, then runs `loraprobe inspect CACHE --json` on the cache the JIT wrote
(cubin, PTX and the .ttir that names the parameters) and checks that:
  - every cubin of the kernel has a gdc-early-read finding, all of them reads of
    input_ptr (the shrink's buffer) before the ACQBULK of griddepcontrol.wait;
  - no finding names lora_ptr: the weight prefetch before the wait is no finding;
  - with --produced lora_ptr the prefetch is what is found (the check reads the
    contract, not the kernel's name).
With Triton 3.9 or newer (which leave a loop that waits unpipelined) the first check
is inverted: no finding at all.

    gdc_triton_cache.py REPO_ROOT LORAPROBE [CACHE_DIR]
        # exit 0 when every check holds; prints "skipped: no GPU" without one
"""

import json
import os
import subprocess
import sys
import tempfile


def inspect(loraprobe, cache, extra=()):
    r = subprocess.run([loraprobe, "inspect", cache, "--json", *extra], capture_output=True, text=True, timeout=600)
    if r.returncode not in (0, 1):
        raise SystemExit(f"loraprobe inspect exited {r.returncode}: {r.stderr}")
    return json.loads(r.stdout)


def cubin_items(doc):
    return [i for i in doc["items"] if i["compiler"] == "file" and i["name"].endswith("_lora_expand_kernel.cubin")]


def early_reads(item):
    return [e for k in (item["sass"] or {}).get("kernels", []) for e in k["early_reads"]]


def main(argv):
    if len(argv) < 2:
        raise SystemExit(__doc__)
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from gpu_torch import torch_with_gpu
    torch = torch_with_gpu()
    if torch is None:
        return 0
    if len(argv) > 2:
        return run(torch, argv[0], argv[1], argv[2])
    with tempfile.TemporaryDirectory(prefix="lp-gdc-cache-") as cache:  # nothing left behind in /tmp
        return run(torch, argv[0], argv[1], cache)


def run(torch, repo, loraprobe, cache):
    os.environ["TRITON_CACHE_DIR"] = cache
    sys.path.insert(0, repo + "/kernels/triton")
    import triton
    from lora_expand import _lora_expand_kernel

    print(f"Triton {triton.__version__}, {torch.cuda.get_device_name()}, cache {cache}")
    tokens, hidden, rank = 256, 4096, 64
    gen = torch.Generator(device="cuda").manual_seed(48590)
    buf = torch.randn((1, tokens, rank), generator=gen, device="cuda", dtype=torch.float32)
    weights = (torch.randn((1, hidden, rank), generator=gen, device="cuda", dtype=torch.float32) * 0.05).bfloat16()
    rows = torch.arange(tokens, device="cuda", dtype=torch.int32)
    counts = torch.tensor([tokens], device="cuda", dtype=torch.int32)
    starts = torch.tensor([0, tokens], device="cuda", dtype=torch.int32)
    lora_ids = torch.tensor([0], device="cuda", dtype=torch.int32)
    expected = (buf[0].bfloat16().float() @ weights[0].float().T)
    for block_k in (32, 16):
        out = torch.full((tokens, hidden), float("nan"), device="cuda", dtype=torch.bfloat16)
        grid = (triton.cdiv(tokens, 64) * triton.cdiv(hidden, 128), 1, 1)
        _lora_expand_kernel[grid](buf, weights, out, tokens, hidden, rank, rows, counts, starts, lora_ids, 0,
                                  buf.stride(0), buf.stride(1), buf.stride(2), weights.stride(0), weights.stride(1),
                                  weights.stride(2), out.stride(0), out.stride(1), hidden, BLOCK_M=64, BLOCK_N=128,
                                  BLOCK_K=block_k, EVEN_K=True, ADD_INPUTS=False, CAST_TYPE=True, SLICE_NUM=1,
                                  SAME_STRIDE=True, USE_GDC=True, launch_pdl=True, RAW_A_BITS=False, num_warps=4,
                                  num_stages=2)
        torch.cuda.synchronize()
        worst = (out.float() - expected).abs().max().item()
        bound = 0.02 * expected.abs().max().item()
        print(f"block_k {block_k}: max |out - torch| = {worst:.3g} (bound {bound:.3g})")
        if not worst <= bound:
            print("FAIL: the dual-stream expand launched alone is wrong")
            return 1

    failures = []
    doc = inspect(loraprobe, cache)
    items = cubin_items(doc)
    if len(items) != 2:
        failures.append(f"expected the two cubins of the kernel in the cache, found {len(items)}")
    pipelines_waiting_loops = tuple(int(x) for x in triton.__version__.split(".")[:2]) < (3, 9)
    for item in items:
        reads = early_reads(item)
        params = sorted({e["param"] for e in reads})
        print(f"{item['name']}: {len(reads)} gdc-early-read ({', '.join(params) or 'none'}), made by "
              f"{item['early_read_attribution']}; first: {reads[0]['address'] + ' ' + reads[0]['instruction'] if reads else '-'}")
        if pipelines_waiting_loops and not reads:
            failures.append(f"{item['name']}: no early read of the shrink's buffer")
        if not pipelines_waiting_loops and reads:
            failures.append(f"{item['name']}: Triton {triton.__version__} should leave the waiting loop unpipelined")
        if any(e["param"] != "input_ptr" or e["wait"]["instruction"] != "ACQBULK" for e in reads):
            failures.append(f"{item['name']}: an early read that is not input_ptr before ACQBULK: {reads}")
    prefetch = [e for item in cubin_items(inspect(loraprobe, cache, ["--produced", "lora_ptr"]))
                for e in early_reads(item)]
    print(f"--produced lora_ptr: {len(prefetch)} weight loads before the wait")
    if not prefetch or any(e["param"] != "lora_ptr" for e in prefetch):
        failures.append("--produced lora_ptr did not find the weight prefetch")
    for f in failures:
        print("FAIL: " + f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
