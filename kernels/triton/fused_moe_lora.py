"""Fused-MoE LoRA (shrink and expand in one launch) for loraprobe, written from
docs/problem.md's "fused-MoE LoRA" section.

For every routed pair p = t * top_k + j (token t, its j-th expert e = topk_ids[t, j])
whose token has a LoRA l and whose slice is s:

    tmp[p, :]         = round_W( sum_k x[p // token_mapping_factor, k] * A_s[l, e, :, k] )
    out[p, s*N + n] (+)= round_W( w[p] * sum_r tmp[p, r] * B_s[l, e, n, r] )

with w[p] = topk_weights[p] when MUL_ROUTED_WEIGHT (the down projection, whose x
already has one row per pair) and 1 otherwise (gate/up, whose x has one row per
token: token_mapping_factor = top_k).

The program structure follows vLLM's `_fused_moe_lora_one_shot_kernel`
(vllm/runtime/modeling/lora/ops/triton_ops/fused_moe_lora_op.py, the fast path of
`_fused_moe_lora` whenever the adapters are not fully sharded): grid (M blocks x
NPID_FACTOR, slices, active LoRAs); the early exits on lora_id, adapter_enabled,
num_tokens_post_padded and expert_id; the sorted token gather; the shrink k-loop
with two shared-memory operands; the cast of the fp32 rank tile to the weight
dtype; and the N loop whose `tl.dot` takes that rank tile from registers, the same
register-A operand as the LoRA expand's. Argument names are vLLM's, so a manifest
entry reads side by side with vLLM's launch code. Only the sorted (not the
"naive block assignment") routing is built: vLLM takes the naive one only when
num_tokens * top_k * 8 <= num_experts * max_loras, i.e. for decode batches, and
sends most of those to its GEMV kernel, which has no `tl.dot`.
"""

import triton
import triton.language as tl


@triton.jit
def _fused_moe_lora_one_shot_kernel(
    x_ptr,
    A_ptrs,
    B_ptrs,
    out_ptr,
    topk_weights_ptr,
    sorted_token_ids_ptr,
    expert_ids_ptr,
    num_tokens_post_padded_ptr,
    token_lora_mapping_ptr,
    lora_ids_ptr,
    adapter_enabled_ptr,
    N,
    K,
    num_valid_tokens,
    top_k_num,
    max_loras,
    stride_xm,
    stride_xk,
    stride_A_lora,
    stride_A_expert,
    stride_A_r,
    stride_A_k,
    stride_B_lora,
    stride_B_expert,
    stride_B_n,
    stride_B_r,
    stride_om,
    stride_on,
    stride_tl_,
    stride_el,
    slice_n_offset,
    token_mapping_factor: tl.constexpr,
    naive_block_assignment: tl.constexpr,
    MUL_ROUTED_WEIGHT: tl.constexpr,
    BLOCK_M: tl.constexpr,
    BLOCK_R: tl.constexpr,
    actual_rank: tl.constexpr,
    NPID_FACTOR: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BLOCK_K: tl.constexpr,
    EVEN_K: tl.constexpr,
    ADD_INPUTS: tl.constexpr,
):
    tl.static_assert(not naive_block_assignment, "loraprobe builds the sorted routing only")
    program = tl.program_id(axis=0)
    pid_m = program // NPID_FACTOR
    n_part = program % NPID_FACTOR
    slice_id = tl.program_id(axis=1)
    lora_idx = tl.program_id(axis=2)

    # Which LoRA this program serves; programs of absent, out-of-range or
    # disabled adapters, and M blocks past the LoRA's padded pair count, leave.
    lora_id = tl.load(lora_ids_ptr + lora_idx)
    if lora_id < 0:
        return
    if lora_id >= max_loras:
        return
    if tl.load(adapter_enabled_ptr + lora_id) == 0:
        return
    if pid_m * BLOCK_M >= tl.load(num_tokens_post_padded_ptr + lora_id):
        return
    block_of = lora_id * stride_el + pid_m
    expert_id = tl.load(expert_ids_ptr + block_of, mask=block_of < max_loras * stride_el, other=-1)
    if expert_id < 0:
        return

    # The block's pairs, in expert-sorted order; padding entries hold
    # num_valid_tokens and are masked out of every load and store.
    rows = tl.arange(0, BLOCK_M).to(tl.int64)
    slot = stride_tl_ * lora_id + pid_m * BLOCK_M + rows
    pair = tl.load(sorted_token_ids_ptr + slot, mask=slot < max_loras * stride_tl_, other=num_valid_tokens)
    live = pair < num_valid_tokens

    # This program's share of the N columns (NPID_FACTOR contiguous parts).
    part = tl.cdiv(N, NPID_FACTOR)
    n_begin = n_part * part
    n_end = tl.minimum(n_begin + part, N)
    if n_begin >= N:
        return

    a_base = tl.load(A_ptrs + slice_id).to(tl.pointer_type(out_ptr.dtype.element_ty))
    b_base = tl.load(B_ptrs + slice_id).to(tl.pointer_type(out_ptr.dtype.element_ty))
    a_base += lora_id * stride_A_lora + expert_id * stride_A_expert
    b_base += lora_id * stride_B_lora + expert_id * stride_B_expert

    # Rank lanes past actual_rank read row 0 (masked to zero) so they never
    # address the next expert's weights.
    r = tl.arange(0, BLOCK_R)
    in_rank = r < actual_rank
    r_safe = tl.where(in_rank, r, 0)
    k = tl.arange(0, BLOCK_K)

    # Shrink: tmp[BLOCK_M, BLOCK_R] = x[rows] @ A^T, both operands from memory.
    x_tile = x_ptr + (pair // token_mapping_factor)[:, None] * stride_xm + k[None, :] * stride_xk
    a_tile = a_base + k[:, None] * stride_A_k + r_safe[None, :] * stride_A_r
    tmp = tl.zeros((BLOCK_M, BLOCK_R), dtype=tl.float32)
    for k_start in range(0, K, BLOCK_K):
        if EVEN_K:
            xs = tl.load(x_tile, mask=live[:, None], other=0.0)
            As = tl.load(a_tile, mask=in_rank[None, :], other=0.0)
        else:
            in_k = k < K - k_start
            xs = tl.load(x_tile, mask=live[:, None] & in_k[None, :], other=0.0)
            As = tl.load(a_tile, mask=in_k[:, None] & in_rank[None, :], other=0.0)
        tmp += tl.dot(xs, As)
        x_tile += BLOCK_K * stride_xk
        a_tile += BLOCK_K * stride_A_k
    # The rank tile in the weight dtype: the register A operand of every
    # expand dot below.
    tmp_w = tmp.to(out_ptr.dtype.element_ty)

    if MUL_ROUTED_WEIGHT:
        routed = tl.load(topk_weights_ptr + pair, mask=live, other=0.0).to(tl.float32)

    # Expand: out[rows, n] (+)= tmp_w @ B^T, one BLOCK_N tile per trip.
    out_base = out_ptr + slice_id * slice_n_offset
    for n_start in range(n_begin, n_end, BLOCK_N):
        n = n_start + tl.arange(0, BLOCK_N)
        in_n = (n < N) & (n < n_end)
        Bs = tl.load(b_base + r_safe[:, None] * stride_B_r + n[None, :] * stride_B_n,
                     mask=in_rank[:, None] & in_n[None, :], other=0.0)
        acc = tl.dot(tmp_w, Bs)
        if MUL_ROUTED_WEIGHT:
            acc = acc * routed[:, None]
        dst = out_base + pair[:, None] * stride_om + n[None, :] * stride_on
        keep = live[:, None] & in_n[None, :]
        if ADD_INPUTS:
            before = tl.load(dst, mask=keep, other=0.0)
            tl.store(dst, before + acc.to(out_ptr.dtype.element_ty), mask=keep)
        else:
            tl.store(dst, acc.to(out_ptr.dtype.element_ty), mask=keep)


@triton.jit
def _fused_moe_lora_kernel(
    a_ptr,
    a_desc,
    b_ptr,
    b_desc,
    c_ptr,
    topk_weights_ptr,
    sorted_token_ids_ptr,
    expert_ids_ptr,
    num_tokens_post_padded_ptr,
    token_lora_mapping_ptr,
    N,
    K,
    EM,
    num_valid_tokens,
    num_experts,
    top_k_num,
    lora_ids,
    adapter_enabled,
    max_loras,
    stride_am,
    stride_ak,
    stride_bl,
    stride_be,
    stride_bk,
    stride_bn,
    stride_cm,
    stride_cn,
    stride_tl,
    stride_el,
    slice_a_size,
    slice_c_size,
    num_slice_a: tl.constexpr,
    num_slice_c: tl.constexpr,
    token_mapping_factor: tl.constexpr,
    naive_block_assignment: tl.constexpr,
    MUL_ROUTED_WEIGHT: tl.constexpr,
    ADD_INPUTS: tl.constexpr,
    USE_B_L2_CACHE: tl.constexpr,
    BLOCK_SIZE_M: tl.constexpr,
    BLOCK_SIZE_N: tl.constexpr,
    BLOCK_SIZE_K: tl.constexpr,
    GROUP_SIZE_M: tl.constexpr,
    SPLIT_K: tl.constexpr,
    USE_GDC: tl.constexpr,
    launch_pdl: tl.constexpr,
    IS_PRIMARY: tl.constexpr,
    USE_TMA: tl.constexpr,
    sort_c: tl.constexpr,
):
    """vLLM's two-kernel fused-MoE LoRA (`_fused_moe_lora_kernel`, the path of fully
    sharded adapters, where an all-reduce or all-gather sits between the two
    launches): one kernel, launched as the shrink (x -> the rank cache, sorted rows
    when sort_c) and then as the expand (the cache -> out, ADD_INPUTS). Both
    operands are cast to bf16 before `tl.dot`, a no-op for bf16 models and a
    conversion in registers for fp16 ones. loraprobe builds it without TMA, GDC
    and the naive assignment (the static asserts say so)."""
    tl.static_assert(not naive_block_assignment, "loraprobe builds the sorted routing only")
    tl.static_assert(not USE_TMA and not USE_GDC, "loraprobe builds the pointer path without GDC")
    program = tl.program_id(axis=0)
    slice_id = tl.program_id(axis=1)
    lora_idx = tl.program_id(axis=2)
    k_trips = tl.cdiv(K, BLOCK_SIZE_K * SPLIT_K)

    # Split index fastest, then the grouped (GROUP_SIZE_M) M x N swizzle.
    split = program % SPLIT_K
    tile = program // SPLIT_K
    m_tiles = tl.cdiv(EM, BLOCK_SIZE_M)
    n_tiles = tl.cdiv(N, BLOCK_SIZE_N)
    in_group = GROUP_SIZE_M * n_tiles
    first_m = (tile // in_group) * GROUP_SIZE_M
    group_rows = min(m_tiles - first_m, GROUP_SIZE_M)
    pid_m = first_m + ((tile % in_group) % group_rows)
    pid_n = (tile % in_group) // group_rows

    lora_id = tl.load(lora_ids + lora_idx)
    if lora_id == -1:
        return
    if tl.load(adapter_enabled + lora_id) == 0:
        return
    if lora_id >= max_loras:
        return
    if pid_m * BLOCK_SIZE_M >= tl.load(num_tokens_post_padded_ptr + lora_id):
        return
    block_of = lora_id * stride_el + pid_m
    expert_id = tl.load(expert_ids_ptr + block_of, block_of < max_loras * stride_el, -1)
    if expert_id == -1:
        return

    rows = tl.arange(0, BLOCK_SIZE_M).to(tl.int64)
    slot = stride_tl * lora_id + pid_m * BLOCK_SIZE_M + rows
    pair = tl.load(sorted_token_ids_ptr + slot, slot < max_loras * stride_tl, 0)
    live = pair < num_valid_tokens

    a_base = a_ptr + (slice_id % num_slice_a) * slice_a_size
    b_base = tl.load(b_ptr + slice_id).to(tl.pointer_type(c_ptr.dtype.element_ty))
    c_base = c_ptr + (slice_id % num_slice_c) * slice_c_size

    k = split * BLOCK_SIZE_K + tl.arange(0, BLOCK_SIZE_K)
    n = pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N).to(tl.int32)
    a_tile = a_base + (pair[:, None] // token_mapping_factor * stride_am + k[None, :] * stride_ak)
    b_tile = b_base + lora_id * stride_bl + expert_id * stride_be + k[:, None] * stride_bk + n[None, :] * stride_bn

    acc = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
    for trip in range(0, k_trips):
        k_left = K - trip * (BLOCK_SIZE_K * SPLIT_K)
        # The weights first (prefetched), then the activations, as vLLM does.
        b_mask = (k[:, None] < k_left) & (n[None, :] < N)
        if USE_B_L2_CACHE:
            b = tl.load(b_tile, mask=b_mask, other=0.0, cache_modifier=".ca")
        else:
            b = tl.load(b_tile, mask=b_mask, other=0.0)
        b_tile += BLOCK_SIZE_K * SPLIT_K * stride_bk
        a = tl.load(a_tile, mask=live[:, None] & (k[None, :] < k_left), other=0.0)
        a_tile += BLOCK_SIZE_K * SPLIT_K * stride_ak
        acc += tl.dot(a.to(tl.bfloat16), b.to(tl.bfloat16))

    if MUL_ROUTED_WEIGHT:
        routed = tl.load(topk_weights_ptr + pair, mask=live, other=0.0)
        acc = acc * routed[:, None]
    result = acc.to(c_ptr.dtype.element_ty)
    if sort_c:
        dst = c_base + lora_id * EM * stride_cm + stride_cm * (pid_m * BLOCK_SIZE_M + rows)[:, None] + \
            stride_cn * n[None, :]
    else:
        dst = c_base + stride_cm * pair[:, None] + stride_cn * n[None, :]
    keep = live[:, None] & (n[None, :] < N)
    if SPLIT_K == 1:
        if ADD_INPUTS:
            before = tl.load(dst, mask=keep, other=0.0)
            tl.store(dst, before + result, mask=keep)
        else:
            tl.store(dst, result, mask=keep)
    else:
        tl.atomic_add(dst, result, mask=keep, sem="relaxed")
