"""FP8 (w8a8) LoRA shrink and expand for loraprobe, written from docs/problem.md
("FP8 w8a8 shrink and expand").

    shrink_fp8:  buf[t, r] = scale * sum_h deq(x)[t, h] * deq(A)[lora_of[t], r, h]
    expand_fp8:  y[t, n] (+)= round_W(sum_r deq(buf)[t, r] * deq(B)[lora_of[t], n, r])

x, A, buf and B are float8 e4m3 (Triton's fp8e4nv); deq() multiplies by their
scales. Two scale layouts, chosen by the group_n / group_k constexprs:
- per tensor (group_n = group_k = 0): one fp32 scale for the activation and one
  per adapter for the weights; the k-loop accumulates the raw fp8 products and the
  scales multiply the accumulator once after it;
- block-wise (group_n, group_k > 0): the activation has a scale per row and group
  of group_k columns ([T, cdiv(K, group_k)]), the weights one per adapter and
  group_n x group_k block ([L, cdiv(N, group_n), cdiv(K, group_k)]); every trip
  of the k-loop scales its own tile's product before adding it.

The structure follows vLLM's `_lora_shrink_kernel_fp8`, `_lora_expand_kernel_fp8`
and `fp8_kernel_utils.py` (vllm 0.33.0 and 0.34.0): the same grid decomposition,
token gather and early exits as the 16-bit kernels, the k-loop with its three
branches (a trip wholly past K does nothing, a whole block loads unmasked, the
partial tail loads masked), the scales as above, and the same argument names, so a
manifest entry reads beside vLLM's launch code. As in vLLM, the expand's A operand
is loaded as fp8 and never cast (CAST_TYPE is False), so no A operand of either
kernel passes through registers on its way to the tensor cores: the register-A
hazard of the 16-bit expand has no site here, which is what loraprobe's static
check is asked to confirm on these kernels' SASS.

vLLM's kernels also take an unquantized path (use_fp8_w8a8 False) and per-channel
scales; loraprobe builds the w8a8 per-tensor and block-wise kernels only, with one slice,
so those branches are not written here; the constexprs keep vLLM's names and the
values loraprobe builds (use_fp8_w8a8 True, per_channel_quant False, SLICE_NUM 1).
vLLM 0.34.0 launches both with USE_GDC and launch_pdl False ("We disable PDL
temporarily", lora_expand_fp8_op.py), so the PDL waits are not written either, and
nothing in vLLM 0.34.0 calls these ops outside its tests.
"""

import triton
import triton.language as tl


@triton.jit
def _fp8_dot_scaled(tile_a, tile_b, acc, a_scale_ptr, b_scale_ptr, a_scale_k_stride, b_scale_k_stride, k_start,
                    group_n: tl.constexpr, group_k: tl.constexpr):
    # Block-wise: this trip's K group scales its own product, per row of A and per
    # column of B. Per tensor: accumulate the raw product; the caller scales once.
    if group_k > 0 and group_n > 0:
        group = k_start // group_k
        a_scale = tl.load(a_scale_ptr + group * a_scale_k_stride)
        b_scale = tl.load(b_scale_ptr + group * b_scale_k_stride)
        acc += tl.dot(tile_a, tile_b) * a_scale[:, None] * b_scale[None, :]
    else:
        acc = tl.dot(tile_a, tile_b, acc=acc)
    return acc


@triton.jit
def _fp8_mm_k(
    a_ptr,  # [BLOCK_M, BLOCK_K] pointers into the fp8 activation, offset by base_k
    b_ptr,  # [BLOCK_K, BLOCK_N] pointers into the fp8 weights, offset by base_k
    a_scale_ptr,  # block-wise: [BLOCK_M] row scale pointers; per tensor: unused
    b_scale_ptr,  # block-wise: [BLOCK_N] column scale pointers; per tensor: unused
    ak_stride,
    bk_stride,
    a_scale_k_stride,
    b_scale_k_stride,
    K,
    base_k,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BLOCK_K: tl.constexpr,
    EVEN_K: tl.constexpr,
    SPLIT_K: tl.constexpr,
    group_n: tl.constexpr,
    group_k: tl.constexpr,
):
    # Split pid_sk owns K blocks base_k / BLOCK_K, + SPLIT_K, ...; the expand
    # passes SPLIT_K 1 and base_k 0.
    step_k: tl.constexpr = BLOCK_K * SPLIT_K
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(tl.cdiv(K, step_k)):
        k_start = k * step_k + base_k
        if not EVEN_K and k_start >= K:
            # This split's block of the last trip lies wholly past K.
            pass
        elif EVEN_K or k_start + BLOCK_K <= K:
            tile_b = tl.load(b_ptr)
            tile_a = tl.load(a_ptr)
            acc = _fp8_dot_scaled(tile_a, tile_b, acc, a_scale_ptr, b_scale_ptr, a_scale_k_stride,
                                  b_scale_k_stride, k_start, group_n, group_k)
        else:
            # The partial tail: zero-fill past K on both operands.
            in_k = k_start + tl.arange(0, BLOCK_K) < K
            tile_b = tl.load(b_ptr, mask=in_k[:, None], other=0.0)
            tile_a = tl.load(a_ptr, mask=in_k[None, :], other=0.0)
            acc = _fp8_dot_scaled(tile_a, tile_b, acc, a_scale_ptr, b_scale_ptr, a_scale_k_stride,
                                  b_scale_k_stride, k_start, group_n, group_k)
        a_ptr += step_k * ak_stride
        b_ptr += step_k * bk_stride
    return acc


@triton.jit
def _fp8_scaled_mm(a_ptr, b_ptr, a_scale_ptr, b_scale_ptr, ram, rbn, pid_n, lora_id, ak_stride, bk_stride,
                   a_scale_m_stride, a_scale_k_stride, b_scale_l_stride, b_scale_n_stride, b_scale_k_stride, K,
                   base_k, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                   EVEN_K: tl.constexpr, SPLIT_K: tl.constexpr, group_n: tl.constexpr, group_k: tl.constexpr):
    # The k-loop with the scales of either layout applied; returns the fp32 tile.
    if group_k > 0 and group_n > 0:
        # Row scale pointers of A, and B's column scale pointers with the adapter
        # and the N group of each column folded in (the loop adds the K group).
        mm_a_scale_ptr = a_scale_ptr + ram * a_scale_m_stride
        n_groups = (pid_n * BLOCK_N + tl.arange(0, BLOCK_N)) // group_n
        mm_b_scale_ptr = b_scale_ptr + lora_id * b_scale_l_stride + n_groups * b_scale_n_stride
        acc = _fp8_mm_k(a_ptr, b_ptr, mm_a_scale_ptr, mm_b_scale_ptr, ak_stride, bk_stride, a_scale_k_stride,
                        b_scale_k_stride, K, base_k, BLOCK_M, BLOCK_N, BLOCK_K, EVEN_K, SPLIT_K, group_n, group_k)
    else:
        a_scale = tl.load(a_scale_ptr)
        b_scale = tl.load(b_scale_ptr + lora_id * b_scale_l_stride)
        acc = _fp8_mm_k(a_ptr, b_ptr, a_scale_ptr, b_scale_ptr, ak_stride, bk_stride, a_scale_k_stride,
                        b_scale_k_stride, K, base_k, BLOCK_M, BLOCK_N, BLOCK_K, EVEN_K, SPLIT_K, group_n, group_k)
        acc = acc * a_scale * b_scale
    return acc


@triton.jit
def _lora_shrink_kernel_fp8(
    input_ptr,
    lora_ptr,
    out_ptr,
    a_scale_ptr,
    b_scale_ptr,
    M,
    N,
    K,
    token_indices_sorted_by_lora_ids,
    num_tokens_per_lora,
    lora_token_start_loc,
    lora_ids,
    scaling,
    input_d0_stride,
    input_d1_stride,
    lora_d0_stride,
    lora_d1_stride,
    lora_d2_stride,
    a_scale_m_stride,
    a_scale_k_stride,
    b_scale_l_stride,
    b_scale_n_stride,
    b_scale_k_stride,
    output_d0_stride,
    output_d1_stride,
    output_d2_stride,
    group_n: tl.constexpr,
    group_k: tl.constexpr,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BLOCK_K: tl.constexpr,
    EVEN_K: tl.constexpr,
    SPLIT_K: tl.constexpr,
    GROUP_SIZE_M: tl.constexpr,
    SLICE_NUM: tl.constexpr,
    USE_GDC: tl.constexpr,
    use_fp8_w8a8: tl.constexpr,
    per_channel_quant: tl.constexpr,
    launch_pdl: tl.constexpr,
):
    # The 16-bit shrink's grid: split-K index fastest, then GROUP_SIZE_M swizzled
    # M/N tiles; axis 1 the slice, axis 2 the entry of lora_ids.
    tl.static_assert(use_fp8_w8a8 and not per_channel_quant, "loraprobe builds the w8a8 per-tensor/block kernels")
    tl.static_assert(SLICE_NUM == 1, "loraprobe builds the one-slice FP8 kernels")
    tl.static_assert(not USE_GDC and not launch_pdl, "vLLM launches its FP8 kernels without PDL")
    cta_n_num = tl.cdiv(N, BLOCK_N)
    cta_m_num = tl.cdiv(M, BLOCK_M)
    pid_sk_m_n = tl.program_id(axis=0)
    pid_sk = pid_sk_m_n % SPLIT_K
    pid_m_n = pid_sk_m_n // SPLIT_K
    num_pid_in_group = GROUP_SIZE_M * cta_n_num
    group_id = pid_m_n // num_pid_in_group
    first_pid_m = group_id * GROUP_SIZE_M
    group_size_m = min(cta_m_num - first_pid_m, GROUP_SIZE_M)
    pid_m = first_pid_m + ((pid_m_n % num_pid_in_group) % group_size_m)
    pid_n = (pid_m_n % num_pid_in_group) // group_size_m
    lora_idx = tl.program_id(axis=2)

    lora_id = tl.load(lora_ids + lora_idx)
    if lora_id == -1:
        return
    lora_m_size = tl.load(num_tokens_per_lora + lora_idx)
    cta_m_offset = pid_m * BLOCK_M
    if cta_m_offset >= lora_m_size:
        return
    cta_m_len = min(BLOCK_M, lora_m_size - cta_m_offset)
    lora_m_start = tl.load(lora_token_start_loc + lora_idx)
    tile_tokens = token_indices_sorted_by_lora_ids + lora_m_start + cta_m_offset
    offset_m = tl.arange(0, BLOCK_M) % cta_m_len
    ram = tl.load(tile_tokens + offset_m)

    # Columns past N (the rank) wrap; the store mask drops them.
    offset_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rbn = tl.max_contiguous(tl.multiple_of(offset_n % N, BLOCK_N), BLOCK_N)
    offset_k = pid_sk * BLOCK_K + tl.arange(0, BLOCK_K)
    a_ptr = input_ptr + ram[:, None] * input_d0_stride + offset_k[None, :] * input_d1_stride
    b_ptr = lora_ptr + lora_d0_stride * lora_id + rbn[None, :] * lora_d1_stride + offset_k[:, None] * lora_d2_stride
    acc = _fp8_scaled_mm(a_ptr, b_ptr, a_scale_ptr, b_scale_ptr, ram, rbn, pid_n, lora_id, input_d1_stride,
                         lora_d2_stride, a_scale_m_stride, a_scale_k_stride, b_scale_l_stride, b_scale_n_stride,
                         b_scale_k_stride, K, pid_sk * BLOCK_K, BLOCK_M, BLOCK_N, BLOCK_K, EVEN_K, SPLIT_K, group_n,
                         group_k)
    acc *= scaling

    offset_cn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offset_cm = tl.arange(0, BLOCK_M)
    c_ptr = out_ptr + ram[:, None] * output_d1_stride + offset_cn[None, :] * output_d2_stride
    c_mask = (offset_cm[:, None] < cta_m_len) & (offset_cn[None, :] < N)
    acc = acc.to(out_ptr.dtype.element_ty)
    if SPLIT_K == 1:
        tl.store(c_ptr, acc, mask=c_mask)
    else:
        tl.atomic_add(c_ptr, acc, mask=c_mask, sem="relaxed")


@triton.jit
def _lora_expand_kernel_fp8(
    input_ptr,
    lora_ptr,
    out_ptr,
    a_scale_ptr,
    b_scale_ptr,
    M,
    N,
    K,
    token_indices_sorted_by_lora_ids,
    num_tokens_per_lora,
    lora_token_start_loc,
    lora_ids,
    slice_start_loc,
    input_d0_stride,
    input_d1_stride,
    input_d2_stride,
    ls_d0_ptr,
    ls_d1_ptr,
    ls_d2_ptr,
    a_scale_m_stride,
    a_scale_k_stride,
    b_scale_l_stride,
    b_scale_n_stride,
    b_scale_k_stride,
    output_d0_stride,
    output_d1_stride,
    output_hs_ptr,
    group_n: tl.constexpr,
    group_k: tl.constexpr,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BLOCK_K: tl.constexpr,
    EVEN_K: tl.constexpr,
    ADD_INPUTS: tl.constexpr,
    CAST_TYPE: tl.constexpr,
    SLICE_NUM: tl.constexpr,
    SAME_STRIDE: tl.constexpr,
    USE_GDC: tl.constexpr,
    use_fp8_w8a8: tl.constexpr,
    per_channel_quant: tl.constexpr,
    launch_pdl: tl.constexpr,
):
    # The 16-bit expand's grid: axis 0 the (M tile, N tile) pairs with M fastest,
    # axis 1 the slice, axis 2 the entry of lora_ids; surplus programs exit.
    tl.static_assert(use_fp8_w8a8 and not per_channel_quant, "loraprobe builds the w8a8 per-tensor/block kernels")
    tl.static_assert(SLICE_NUM == 1 and SAME_STRIDE, "loraprobe builds the one-slice FP8 kernels")
    tl.static_assert(not CAST_TYPE, "vLLM's FP8 expand never casts its A operand")
    tl.static_assert(not USE_GDC and not launch_pdl, "vLLM launches its FP8 kernels without PDL")
    cta_n_num = tl.cdiv(N, BLOCK_N)
    cta_m_num = tl.cdiv(M, BLOCK_M)
    pid_mn = tl.program_id(axis=0)
    pid_m = pid_mn % cta_m_num
    pid_n = (pid_mn // cta_m_num) % cta_n_num
    lora_idx = tl.program_id(axis=2)

    lora_id = tl.load(lora_ids + lora_idx)
    if lora_id == -1:
        return
    lora_m_size = tl.load(num_tokens_per_lora + lora_idx)
    cta_m_offset = pid_m * BLOCK_M
    if cta_m_offset >= lora_m_size:
        return
    if pid_n * BLOCK_N >= N:
        return
    cta_m_len = min(BLOCK_M, lora_m_size - cta_m_offset)
    lora_m_start = tl.load(lora_token_start_loc + lora_idx)
    tile_tokens = token_indices_sorted_by_lora_ids + lora_m_start + cta_m_offset
    offset_m = tl.arange(0, BLOCK_M) % cta_m_len
    ram = tl.load(tile_tokens + offset_m)

    # One slice: the strides are the ls_d*_ptr values themselves.
    offset_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rbn = tl.max_contiguous(tl.multiple_of(offset_n % N, BLOCK_N), BLOCK_N)
    offset_k = tl.arange(0, BLOCK_K)
    a_ptr = input_ptr + ram[:, None] * input_d1_stride + offset_k[None, :] * input_d2_stride
    b_ptr = lora_ptr + ls_d0_ptr * lora_id + offset_k[:, None] * ls_d2_ptr + rbn[None, :] * ls_d1_ptr
    acc = _fp8_scaled_mm(a_ptr, b_ptr, a_scale_ptr, b_scale_ptr, ram, rbn, pid_n, lora_id, input_d2_stride,
                         ls_d2_ptr, a_scale_m_stride, a_scale_k_stride, b_scale_l_stride, b_scale_n_stride,
                         b_scale_k_stride, K, 0, BLOCK_M, BLOCK_N, BLOCK_K, EVEN_K, 1, group_n, group_k)

    tile_c = acc.to(out_ptr.dtype.element_ty)
    offset_cn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N) + slice_start_loc
    offset_cm = tl.arange(0, BLOCK_M)
    # int64 row offset: T * H overflows int32 at long prompts.
    c_ptr = out_ptr + ram[:, None].to(tl.int64) * output_d0_stride + offset_cn[None, :] * output_d1_stride
    c_mask = (offset_cm[:, None] < cta_m_len) & (offset_cn[None, :] < slice_start_loc + N)
    if ADD_INPUTS:
        tile_c += tl.load(c_ptr, mask=c_mask)
    tl.store(c_ptr, tile_c, mask=c_mask)
