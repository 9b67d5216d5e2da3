#!/usr/bin/env python3
"""kernels/triton/fused_moe_lora.py against a NumPy reference of docs/problem.md's
fused-MoE LoRA, run through Triton's JIT on a GPU (torch and Triton needed; the
Triton interpreter needs torch too, which the CPU machines do not have).

Each case routes T tokens to top_k of E experts with seeded weights, spreads the
tokens over L adapters (some with none), sorts and pads every adapter's pairs by
expert as vLLM's moe_lora_align_block_size does, launches the kernel and checks:
  - every pair of a token with an adapter is within the documented bound of the
    reference (below), and nothing is NaN or Inf;
  - every other output element is bit-for-bit what it held before the launch
    (a poison pattern), so a stray or missing store shows.

The bound: the kernel rounds the fp32 rank tile to the weight dtype before the
expand, and its fp32 sums run in another order than NumPy's, so one tile entry may
round to the neighbouring value: |out - ref| <= 2 * eps_W * (|tmp| @ |B|^T) * |w|
+ 2 * eps_W * |ref| (eps_W = 2^-8 for bf16, 2^-11 for fp16), plus the final
rounding of the stored value.

    fused_moe_numerics.py REPO_ROOT  # exit 0 when every case passes and a sabotaged launch is caught;
                                     # prints "skipped: no GPU" without one
"""

import os
import sys

try:
    import numpy as np
except ImportError:  # a CPU machine without the GPU stack: main() says "skipped: no GPU" first
    np = None

CASES = [
    # name, tokens, experts, top_k, loras, rank, K, N, slices, proj, block_m, block_n, block_k, npid, warps, stages,
    # add_inputs, dtype
    ("w13-default", 300, 16, 8, 1, 64, 2048, 512, 2, "w13", 64, 128, 128, 1, 4, 3, True, "bf16"),
    ("w2-default", 300, 16, 8, 1, 64, 512, 2048, 1, "w2", 64, 128, 128, 1, 4, 3, True, "bf16"),
    ("w13-3-loras-npid4", 257, 32, 8, 3, 16, 1024, 384, 2, "w13", 16, 128, 128, 4, 8, 3, True, "bf16"),
    ("w2-rank8-maskk", 129, 8, 2, 2, 8, 320, 256, 1, "w2", 32, 64, 128, 1, 4, 2, False, "bf16"),
    ("w13-fp16-rank128", 64, 8, 4, 1, 128, 256, 640, 2, "w13", 64, 128, 64, 1, 4, 3, True, "fp16"),
    ("w2-bn256-noadd", 500, 64, 8, 2, 32, 512, 1024, 1, "w2", 128, 256, 128, 1, 4, 3, False, "bf16"),
]


def round_to(values, dtype):
    """fp32 -> dtype -> fp32, round to nearest even (NumPy has fp16, not bf16)."""
    v = np.asarray(values, dtype=np.float32)
    if dtype == "fp16":
        return v.astype(np.float16).astype(np.float32)
    bits = v.view(np.uint32).astype(np.uint64)
    rounded = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16) << 16
    out = rounded.astype(np.uint32).view(np.float32)
    return np.where(np.isnan(v), v, out)


def align(topk_ids, lora_of, loras, experts, block_m, top_k):
    """vLLM's moe_lora_align_block_size for the sorted routing: per adapter, its pairs
    grouped by expert (ascending), each group padded to block_m with num_valid."""
    tokens = topk_ids.shape[0]
    num_valid = tokens * top_k
    max_padded = num_valid + experts * (block_m - 1)
    max_padded = -(-max_padded // block_m) * block_m
    sorted_ids = np.full((loras, max_padded), num_valid, dtype=np.int32)
    expert_ids = np.full((loras, max_padded // block_m), -1, dtype=np.int32)
    post_padded = np.zeros(loras, dtype=np.int32)
    for lora in range(loras):
        at = 0
        for e in range(experts):
            pairs = [t * top_k + j for t in range(tokens) if lora_of[t] == lora for j in range(top_k)
                     if topk_ids[t, j] == e]
            if not pairs:
                continue
            sorted_ids[lora, at:at + len(pairs)] = pairs
            blocks = -(-len(pairs) // block_m)
            expert_ids[lora, at // block_m:at // block_m + blocks] = e
            at += blocks * block_m
        post_padded[lora] = at
    return sorted_ids, expert_ids, post_padded


def run_case(case, torch, kernel, rng, sabotage=False):
    (name, T, E, top_k, L, R, K, N, S, proj, bm, bn, bk, npid, nw, ns, add, dt) = case
    eps = 2.0**-8 if dt == "bf16" else 2.0**-11
    torch_dtype = torch.bfloat16 if dt == "bf16" else torch.float16
    routed = proj == "w2"
    factor = 1 if routed else top_k
    x_rows = T * top_k if routed else T

    lora_of = np.array([(t % (L + 1)) - 1 if L > 1 else 0 for t in range(T)], dtype=np.int32)
    rng.shuffle(lora_of)
    topk_ids = np.stack([rng.choice(E, size=top_k, replace=False) for _ in range(T)]).astype(np.int32)
    topk_w = rng.uniform(0.05, 1.0, size=(T, top_k)).astype(np.float32)
    x = round_to(rng.uniform(-1, 1, size=(x_rows, K)), dt)
    A = [round_to(rng.uniform(-1, 1, size=(L, E, R, K)) / np.sqrt(K), dt) for _ in range(S)]
    B = [round_to(rng.uniform(-1, 1, size=(L, E, N, R)) / np.sqrt(R), dt) for _ in range(S)]
    sorted_ids, expert_ids, post_padded = align(topk_ids, lora_of, L, E, bm, top_k)
    pairs = T * top_k
    before = round_to(rng.uniform(-4, 4, size=(pairs, S * N)), dt) if add else np.full((pairs, S * N), np.nan,
                                                                                        dtype=np.float32)

    ref = before.copy()
    bound = np.zeros_like(before)
    for p in range(pairs):
        t, lora = p // top_k, lora_of[p // top_k]
        if lora < 0:
            continue
        e = topk_ids[t, p % top_k]
        w = topk_w[t, p % top_k] if routed else 1.0
        for s in range(S):
            tmp_exact = A[s][lora, e].astype(np.float64) @ x[p // factor].astype(np.float64)
            tmp = round_to(tmp_exact, dt)
            acc = (B[s][lora, e].astype(np.float64) @ tmp.astype(np.float64)) * w
            cols = slice(s * N, (s + 1) * N)
            delta = round_to(acc, dt)
            ref[p, cols] = round_to(delta + before[p, cols], dt) if add else delta
            spread = (np.abs(B[s][lora, e]).astype(np.float64) @ np.abs(tmp_exact)) * abs(w)
            bound[p, cols] = 2 * eps * spread + 2 * eps * (np.abs(ref[p, cols]) + np.abs(acc)) + 1e-6

    dev = torch.device("cuda")
    as_dev = lambda a, ty: torch.from_numpy(np.ascontiguousarray(a)).to(dev).to(ty)  # noqa: E731
    x_d = as_dev(x, torch_dtype)
    A_d = [as_dev(a, torch_dtype) for a in A]
    B_d = [as_dev(b, torch_dtype) for b in B]
    out_d = as_dev(before, torch_dtype)
    # What the output holds before the launch, read back: the GPU's conversion of the
    # NaN poison has its own bit pattern (bf16 0x7fff), which the kernel must keep.
    held = out_d.float().cpu().numpy()
    A_ptrs = torch.tensor([a.data_ptr() for a in A_d], dtype=torch.uint64, device=dev)
    B_ptrs = torch.tensor([b.data_ptr() for b in B_d], dtype=torch.uint64, device=dev)
    i32 = lambda a: as_dev(a, torch.int32)  # noqa: E731
    grid = (-(-sorted_ids.shape[1] // bm) * npid, S, L)
    kernel[grid](
        x_d, A_ptrs, B_ptrs, out_d, as_dev(topk_w, torch.float32), i32(sorted_ids), i32(expert_ids),
        i32(post_padded), i32(lora_of), i32(np.arange(L)), i32(np.ones(L + 1)),
        N, K, pairs, top_k, L,
        x_d.stride(0), x_d.stride(1), A_d[0].stride(0), A_d[0].stride(1), A_d[0].stride(2), A_d[0].stride(3),
        B_d[0].stride(0), B_d[0].stride(1), B_d[0].stride(2), B_d[0].stride(3), out_d.stride(0), out_d.stride(1),
        sorted_ids.shape[1], expert_ids.shape[1], N,
        token_mapping_factor=factor, naive_block_assignment=False, MUL_ROUTED_WEIGHT=routed != sabotage, BLOCK_M=bm,
        BLOCK_R=max(16, 1 << (R - 1).bit_length()), actual_rank=R, NPID_FACTOR=npid, BLOCK_N=bn, BLOCK_K=bk,
        EVEN_K=K % bk == 0, ADD_INPUTS=add, num_warps=nw, num_stages=ns)
    torch.cuda.synchronize()
    got = out_d.float().cpu().numpy()

    live = np.repeat(lora_of >= 0, top_k)
    problems = []
    bad_value = ~np.isfinite(got[live])
    if bad_value.any():
        problems.append(f"{int(bad_value.sum())} NaN/Inf in written rows")
    diff = np.abs(got[live] - ref[live])
    over = diff > bound[live]
    if over.any():
        i = np.argwhere(over)[0]
        problems.append(f"{int(over.sum())} elements over the bound (first: row {i[0]} col {i[1]}, "
                        f"got {got[live][tuple(i)]}, want {ref[live][tuple(i)]}, bound {bound[live][tuple(i)]:.3g})")
    kept = got[~live].view(np.uint32) == held[~live].view(np.uint32)
    if not kept.all():
        problems.append(f"{int((~kept).sum())} elements of rows without an adapter changed")
    worst = float(np.max(diff / np.maximum(bound[live], 1e-30))) if live.any() else 0.0
    print(f"{'FAIL' if problems else 'ok  '} {name}{' (sabotaged)' if sabotage else ''}: {int(live.sum())} live pairs of {pairs}, "
          f"max |diff|/bound {worst:.3f}" + ("; " + "; ".join(problems) if problems else ""))
    return not problems


SHARDED_CASES = [
    # name, tokens, experts, top_k, loras, rank, K, N, slices, proj, block_n (shrink), block_k (expand), stages, dtype
    ("two-kernel-w13-bf16", 200, 16, 8, 2, 64, 1024, 256, 2, "w13", 64, 32, 3, "bf16"),
    ("two-kernel-w2-fp16", 150, 8, 4, 1, 16, 256, 512, 1, "w2", 16, 16, 2, "fp16"),
]


def run_sharded_case(case, torch, kernel, rng):
    """vLLM's two-kernel path (fully sharded adapters): the shrink into a W rank cache,
    then the expand adding into out. Both launches cast their operands to bf16 before
    tl.dot, so the reference rounds x, A, the cache and B to bf16 first (an fp16
    model loses 3 mantissa bits there)."""
    (name, T, E, top_k, L, R, K, N, S, proj, bn_shrink, bk_expand, ns, dt) = case
    eps = 2.0**-8 if dt == "bf16" else 2.0**-11
    torch_dtype = torch.bfloat16 if dt == "bf16" else torch.float16
    routed = proj == "w2"
    factor = 1 if routed else top_k
    pairs = T * top_k
    bm = 64
    lora_of = np.array([(t % (L + 1)) - 1 if L > 1 else 0 for t in range(T)], dtype=np.int32)
    rng.shuffle(lora_of)
    topk_ids = np.stack([rng.choice(E, size=top_k, replace=False) for _ in range(T)]).astype(np.int32)
    topk_w = rng.uniform(0.05, 1.0, size=(T, top_k)).astype(np.float32)
    x = round_to(rng.uniform(-1, 1, size=(pairs if routed else T, K)), dt)
    A = [round_to(rng.uniform(-1, 1, size=(L, E, R, K)) / np.sqrt(K), dt) for _ in range(S)]
    B = [round_to(rng.uniform(-1, 1, size=(L, E, N, R)) / np.sqrt(R), dt) for _ in range(S)]
    before = round_to(rng.uniform(-4, 4, size=(pairs, S * N)), dt)
    sorted_ids, expert_ids, post_padded = align(topk_ids, lora_of, L, E, bm, top_k)
    EM = sorted_ids.shape[1]

    ref = before.copy()
    bound = np.zeros_like(before)
    bf = lambda a: round_to(a, "bf16").astype(np.float64)  # noqa: E731
    for p in range(pairs):
        lora = lora_of[p // top_k]
        if lora < 0:
            continue
        e = topk_ids[p // top_k, p % top_k]
        w = topk_w[p // top_k, p % top_k] if routed else 1.0
        for s in range(S):
            tmp = round_to(bf(A[s][lora, e]) @ bf(x[p // factor]), dt)
            acc = (bf(B[s][lora, e]) @ bf(tmp)) * w
            cols = slice(s * N, (s + 1) * N)
            ref[p, cols] = round_to(round_to(acc, dt) + before[p, cols], dt)
            spread = (np.abs(bf(B[s][lora, e])) @ np.abs(bf(tmp))) * abs(w)
            bound[p, cols] = 4 * 2.0**-8 * spread + 2 * eps * (np.abs(ref[p, cols]) + np.abs(acc)) + 1e-6

    dev = torch.device("cuda")
    as_dev = lambda a, ty: torch.from_numpy(np.ascontiguousarray(a)).to(dev).to(ty)  # noqa: E731
    i32 = lambda a: as_dev(a, torch.int32)  # noqa: E731
    x_d = as_dev(x, torch_dtype)
    A_d = [as_dev(a, torch_dtype) for a in A]
    B_d = [as_dev(b, torch_dtype) for b in B]
    out_d = as_dev(before, torch_dtype)
    cache = torch.zeros((S, pairs, R), dtype=torch_dtype, device=dev)
    A_ptrs = torch.tensor([a.data_ptr() for a in A_d], dtype=torch.uint64, device=dev)
    B_ptrs = torch.tensor([b.data_ptr() for b in B_d], dtype=torch.uint64, device=dev)
    common = dict(naive_block_assignment=False, USE_B_L2_CACHE=True, BLOCK_SIZE_M=bm, GROUP_SIZE_M=8, SPLIT_K=1,
                  USE_GDC=False, launch_pdl=False, USE_TMA=False, sort_c=False, num_warps=4, num_stages=ns)
    routing = (as_dev(topk_w, torch.float32), i32(sorted_ids), i32(expert_ids), i32(post_padded), i32(lora_of))
    kernel[(-(-EM // bm) * -(-R // bn_shrink), S, L)](
        x_d, None, A_ptrs, None, cache, *routing, R, K, EM, pairs, E, top_k, i32(np.arange(L)), i32(np.ones(L + 1)), L,
        x_d.stride(0), x_d.stride(1), A_d[0].stride(0), A_d[0].stride(1), A_d[0].stride(3), A_d[0].stride(2),
        cache.stride(-2), cache.stride(-1), EM, expert_ids.shape[1], x_d.numel(), cache.numel() // S,
        num_slice_a=1, num_slice_c=S, token_mapping_factor=factor, MUL_ROUTED_WEIGHT=False, ADD_INPUTS=False,
        BLOCK_SIZE_N=bn_shrink, BLOCK_SIZE_K=32, IS_PRIMARY=True, **common)
    flat = cache.view(-1, R)
    kernel[(-(-EM // bm) * -(-N // 64), S, L)](
        flat, None, B_ptrs, None, out_d, *routing, N, R, EM, pairs, E, top_k, i32(np.arange(L)), i32(np.ones(L + 1)),
        L, flat.stride(0), flat.stride(1), B_d[0].stride(0), B_d[0].stride(1), B_d[0].stride(3), B_d[0].stride(2),
        out_d.stride(0), out_d.stride(1), EM, expert_ids.shape[1], flat.numel() // S, N,
        num_slice_a=S, num_slice_c=S, token_mapping_factor=1, MUL_ROUTED_WEIGHT=routed, ADD_INPUTS=True,
        BLOCK_SIZE_N=64, BLOCK_SIZE_K=bk_expand, IS_PRIMARY=False, **common)
    torch.cuda.synchronize()
    got = out_d.float().cpu().numpy()
    held = as_dev(before, torch_dtype).float().cpu().numpy()
    live = np.repeat(lora_of >= 0, top_k)
    problems = []
    if (~np.isfinite(got[live])).any():
        problems.append(f"{int((~np.isfinite(got[live])).sum())} NaN/Inf in written rows")
    over = np.abs(got[live] - ref[live]) > bound[live]
    if over.any():
        problems.append(f"{int(over.sum())} elements over the bound")
    if not (got[~live].view(np.uint32) == held[~live].view(np.uint32)).all():
        problems.append("rows without an adapter changed")
    worst = float(np.max(np.abs(got[live] - ref[live]) / np.maximum(bound[live], 1e-30))) if live.any() else 0.0
    print(f"{'FAIL' if problems else 'ok  '} {name}: {int(live.sum())} live pairs of {pairs}, max |diff|/bound "
          f"{worst:.3f}" + ("; " + "; ".join(problems) if problems else ""))
    return not problems


def main(argv):
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from gpu_torch import torch_with_gpu
    torch = torch_with_gpu()
    if torch is None:
        return 0
    if np is None:
        print("FAIL: a GPU and torch but no NumPy, which this check needs")
        return 1
    sys.path.insert(0, argv[0] + "/kernels/triton")
    import triton
    from fused_moe_lora import _fused_moe_lora_kernel as two_kernel
    from fused_moe_lora import _fused_moe_lora_one_shot_kernel as kernel
    print(f"Triton {triton.__version__}, {torch.cuda.get_device_name()}")
    rng = np.random.default_rng(20261204)
    results = [run_case(case, torch, kernel, rng) for case in CASES]
    results += [run_sharded_case(case, torch, two_kernel, rng) for case in SHARDED_CASES]
    print(f"{sum(results)} of {len(results)} cases pass (one-shot and two-kernel)")
    # The check must be able to fail: the down projection launched without its
    # routing weights has to be caught.
    caught = not run_case(CASES[1], torch, kernel, rng, sabotage=True)
    print("the sabotaged launch was " + ("caught" if caught else "NOT caught: the check is too weak"))
    return 0 if all(results) and caught else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:] or ["."]))
