#!/usr/bin/env python3
"""What a user writes instead of `loraprobe sweep` (the baseline of
scripts/bench/gpu_vs_python.sh): JIT-compile our kernels/triton expand with the
installed Triton, run the cases of scripts/bench/expand-1008.json with the same
repeats, and compare each run with a torch reference (fp32 matmul), with the same
poisoned output for non-ADD_INPUTS cases and a NaN check. Prints one summary line.

    python3 scripts/bench/python_loop.py [--repeats 3]

Needs a CUDA GPU, torch and Triton. It checks numbers only: no static inspection,
so a LATENT case reads as PASS here, which is the point of the comparison.
"""

import argparse
import itertools
import os
import sys
import time

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(REPO, "kernels", "triton"))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--repeats", type=int, default=3)
    args = p.parse_args()
    start = time.monotonic()
    import torch
    import triton
    from lora_expand import _lora_expand_kernel

    dev = torch.device("cuda")
    torch.manual_seed(48590)
    tokens = [128 * 2**i for i in range(7)]
    cases = list(itertools.product([2048, 4096], [64, 128], [32, 64, 128], [1, 2, 3], ["fp32", "bf16"], [True, False],
                                   tokens))
    dtypes = {"fp32": torch.float32, "bf16": torch.bfloat16}
    counts = {"PASS": 0, "FAIL": 0}
    worst = 0.0
    for hidden, rank, block_n, stages, in_name, add, T in cases:
        x = torch.randn(1, T, rank, device=dev, dtype=torch.float32).to(dtypes[in_name]) * 0.5
        w = (torch.randn(1, hidden, rank, device=dev, dtype=torch.float32) * 0.1).to(torch.bfloat16)
        base = torch.randn(T, hidden, device=dev, dtype=torch.float32).to(torch.bfloat16)
        ref = x[0].float() @ w[0].float().t() + (base.float() if add else 0.0)
        meta = [torch.arange(T, device=dev, dtype=torch.int32), torch.tensor([T], device=dev, dtype=torch.int32),
                torch.tensor([0, T], device=dev, dtype=torch.int32), torch.tensor([0], device=dev, dtype=torch.int32)]
        hs = torch.tensor([hidden], device=dev, dtype=torch.int32)
        grid = (triton.cdiv(T, 64) * triton.cdiv(hidden, block_n), 1, 1)
        ok = True
        for _ in range(args.repeats):
            y = base.clone() if add else torch.full((T, hidden), float("nan"), device=dev, dtype=torch.bfloat16)
            _lora_expand_kernel[grid](x, w, y, T, hidden, rank, *meta, 0, x.stride(0), x.stride(1), x.stride(2),
                                      w.stride(0), w.stride(1), w.stride(2), y.stride(0), y.stride(1), hs,
                                      BLOCK_M=64, BLOCK_N=block_n, BLOCK_K=32, EVEN_K=rank % 32 == 0, ADD_INPUTS=add,
                                      CAST_TYPE=in_name != "bf16", SLICE_NUM=1, SAME_STRIDE=True, USE_GDC=False,
                                      launch_pdl=False, RAW_A_BITS=False,
                                      num_warps=4, num_stages=stages)
            dev_ = (y.float() - ref).abs()
            tol = 1e-2 + 1e-2 * ref.abs()
            finite = bool(torch.isfinite(y).all())
            ratio = float((dev_ / tol).max()) if finite else float("inf")
            worst = max(worst, ratio if finite else 0.0)
            ok = ok and finite and ratio <= 1.0
        counts["PASS" if ok else "FAIL"] += 1
    torch.cuda.synchronize()
    print(f"python_loop: {len(cases)} cases x {args.repeats} repeats: {counts['PASS']} PASS, {counts['FAIL']} FAIL, "
          f"worst deviation {worst:.3f} of tolerance; Triton {triton.__version__}, torch {torch.__version__}; "
          f"{time.monotonic() - start:.1f} s")


if __name__ == "__main__":
    main()
