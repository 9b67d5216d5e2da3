"""LoRA expand (punica "B" op) for loraprobe, written from docs/problem.md.

    y[t, off_s + n] (+)= sum_r cast_W(buf[s, t, r]) * B_s[lora_of[t], n, r]

The program structure deliberately follows vLLM's `_lora_expand_kernel` and
`do_expand_kernel` (grid layout, token gather, early exits, slice handling,
the k-loop with its EVEN_K fast path and masked tail, CAST_TYPE before the
dot): the Hopper miscompile we hunt is made by ptxas from exactly this shape,
so a "cleaner" kernel would not reproduce it. Argument names match vLLM's so
that a manifest entry can be read side by side with vLLM's launch code.

`USE_GDC` and `launch_pdl` are vLLM's dual-stream switches
(`VLLM_LORA_ENABLE_DUAL_STREAM` on sm_90): with USE_GDC every trip of the
k-loop waits for the previous grid (`griddepcontrol.wait`) after loading its
weight tile and before loading its activation tile, as vLLM's `mm_k` does, and
the launch carries programmatic stream serialization. `launch_pdl` changes no
code; vLLM passes it so that Triton's launcher sets that attribute.

`RAW_A_BITS` is not in vLLM: it turns this kernel into the positive control
(see `_raw_bits_as_bf16_pairs`). It is False in every other variant.
"""

import triton
import triton.language as tl


@triton.jit
def _raw_bits_as_bf16_pairs(a_ptr, ak_stride, BLOCK_K: tl.constexpr):
    # What the miscompiled HGMMA computes with: registers that should hold
    # packed bf16x2 A operands hold fp32 words instead, so each 32-bit word is
    # read as two bf16 values (low half = even k, high half = odd k). We load
    # BLOCK_K // 2 fp32 words of the row and expand them to BLOCK_K bf16.
    # Low halves are mantissa bits whose exponent field is effectively random,
    # so the products include values up to ~3e38 and NaN/Inf: the control must
    # fail on any GPU, with or without the ptxas bug.
    half_k = tl.arange(0, BLOCK_K // 2)
    words = tl.load(a_ptr + half_k[None, :] * ak_stride).to(tl.uint32, bitcast=True)
    lo = (words & 0xFFFF).to(tl.uint16).to(tl.bfloat16, bitcast=True)
    hi = (words >> 16).to(tl.uint16).to(tl.bfloat16, bitcast=True)
    return tl.reshape(tl.join(lo, hi), (lo.shape[0], BLOCK_K))


@triton.jit
def _expand_mm_k(
    a_ptr,  # [BLOCK_M, BLOCK_K] pointers into buf
    b_ptr,  # [BLOCK_K, BLOCK_N] pointers into B
    a_row_ptr,  # [BLOCK_M, 1] row starts of buf, only used by RAW_A_BITS
    ak_stride,
    bk_stride,
    K,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BLOCK_K: tl.constexpr,
    EVEN_K: tl.constexpr,
    CAST_TYPE: tl.constexpr,
    RAW_A_BITS: tl.constexpr,
    USE_GDC: tl.constexpr,
    b_dtype: tl.constexpr,
):
    # vLLM's mm_k with SPLIT_K = 1 (expand never splits K: K is the rank).
    # The loop trip count is a runtime value and the loads of iteration k+1
    # are independent of the dot of iteration k; that is what lets Triton's
    # pipeliner keep one wgmma group in flight across the back-edge.
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(tl.cdiv(K, BLOCK_K)):
        k_start = k * BLOCK_K
        if EVEN_K:
            # Weights first, then activations, the order vLLM uses.
            tile_b = tl.load(b_ptr)
            if USE_GDC:
                # The activations are the previous grid's output; the weights
                # above are not, so vLLM prefetches them before the wait.
                tl.extra.cuda.gdc_wait()
            if RAW_A_BITS:
                tile_a = _raw_bits_as_bf16_pairs(a_row_ptr + k_start * ak_stride, ak_stride, BLOCK_K)
            else:
                tile_a = tl.load(a_ptr)
                if CAST_TYPE:
                    tile_a = tile_a.to(b_dtype)
            acc += tl.dot(tile_a, tile_b)
        else:
            # vLLM's three branches: a block wholly past K (only a split of the shrink
            # meets one; kept for the same control flow), a whole block, the partial tail.
            if k_start >= K:
                pass
            elif k_start + BLOCK_K <= K:
                # Whole block inside K: no masks, same as the EVEN_K body.
                tile_b = tl.load(b_ptr)
                if USE_GDC:
                    tl.extra.cuda.gdc_wait()
                tile_a = tl.load(a_ptr)
                if CAST_TYPE:
                    tile_a = tile_a.to(b_dtype)
                acc += tl.dot(tile_a, tile_b)
            else:
                # The last, partial block: zero-fill past K on both operands.
                in_k = k_start + tl.arange(0, BLOCK_K) < K
                tile_b = tl.load(b_ptr, mask=in_k[:, None], other=0.0)
                if USE_GDC:
                    tl.extra.cuda.gdc_wait()
                tile_a = tl.load(a_ptr, mask=in_k[None, :], other=0.0)
                if CAST_TYPE:
                    tile_a = tile_a.to(b_dtype)
                acc += tl.dot(tile_a, tile_b)
        a_ptr += BLOCK_K * ak_stride
        b_ptr += BLOCK_K * bk_stride
    return acc


@triton.jit
def do_expand_kernel(
    pid_n,
    lora_id,
    slice_id,
    input_ptr,
    lora_ptr,
    out_ptr,
    N,
    K,
    M_LEN,
    ram,
    slice_start_loc,
    input_d0_stride,
    input_d1_stride,
    input_d2_stride,
    ls_d0_ptr,
    ls_d1_ptr,
    ls_d2_ptr,
    output_d0_stride,
    output_d1_stride,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BLOCK_K: tl.constexpr,
    SAME_STRIDE: tl.constexpr,
    SLICE_NUM: tl.constexpr,
    EVEN_K: tl.constexpr,
    CAST_TYPE: tl.constexpr,
    ADD_INPUTS: tl.constexpr,
    RAW_A_BITS: tl.constexpr,
    USE_GDC: tl.constexpr,
):
    # With SAME_STRIDE the ls_d*_ptr arguments are the strides themselves;
    # otherwise they point at one int64 stride per slice.
    if SAME_STRIDE:
        b_d0_stride = ls_d0_ptr
        b_d1_stride = ls_d1_ptr
        b_d2_stride = ls_d2_ptr
    else:
        b_d0_stride = tl.load(ls_d0_ptr + slice_id)
        b_d1_stride = tl.load(ls_d1_ptr + slice_id)
        b_d2_stride = tl.load(ls_d2_ptr + slice_id)

    if SLICE_NUM == 1:
        slice_input_ptr = input_ptr
        slice_lora_ptr = lora_ptr
    else:
        # lora_ptr is a device array of uint64 addresses, one per slice tensor.
        slice_input_ptr = input_ptr + slice_id * input_d0_stride
        slice_lora_ptr = tl.load(lora_ptr + slice_id).to(tl.pointer_type(out_ptr.dtype.element_ty))

    # Columns past N wrap instead of being masked: the loads stay in bounds and
    # the store mask drops the duplicates. multiple_of/max_contiguous keep the
    # B loads vectorised, as in vLLM.
    offset_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rbn = tl.max_contiguous(tl.multiple_of(offset_n % N, BLOCK_N), BLOCK_N)

    offset_k = tl.arange(0, BLOCK_K)
    a_row_ptr = slice_input_ptr + ram[:, None] * input_d1_stride
    a_ptr = a_row_ptr + offset_k[None, :] * input_d2_stride
    b_ptr = (slice_lora_ptr + b_d0_stride * lora_id + offset_k[:, None] * b_d2_stride +
             rbn[None, :] * b_d1_stride)

    acc = _expand_mm_k(a_ptr, b_ptr, a_row_ptr, input_d2_stride, b_d2_stride, K, BLOCK_M, BLOCK_N, BLOCK_K,
                       EVEN_K, CAST_TYPE, RAW_A_BITS, USE_GDC, slice_lora_ptr.dtype.element_ty)

    tile_c = acc.to(slice_lora_ptr.dtype.element_ty)
    if SLICE_NUM == 1:
        slice_start = slice_start_loc
    else:
        slice_start = tl.load(slice_start_loc + slice_id)

    offset_cn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N) + slice_start
    offset_cm = tl.arange(0, BLOCK_M)
    # int64 row offset: T * H_tot overflows int32 at long prompts.
    c_ptr = out_ptr + ram[:, None].to(tl.int64) * output_d0_stride + offset_cn[None, :] * output_d1_stride
    c_mask = (offset_cm[:, None] < M_LEN) & (offset_cn[None, :] < slice_start + N)
    if ADD_INPUTS:
        # round_W(acc) + y_in, as two W values, rounded once more by the store.
        tile_c += tl.load(c_ptr, mask=c_mask)
    tl.store(c_ptr, tile_c, mask=c_mask)


@triton.jit
def _lora_expand_kernel(
    input_ptr,
    lora_ptr,
    out_ptr,
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
    output_d0_stride,
    output_d1_stride,
    output_hs_ptr,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BLOCK_K: tl.constexpr,
    EVEN_K: tl.constexpr,
    ADD_INPUTS: tl.constexpr,
    CAST_TYPE: tl.constexpr,
    SLICE_NUM: tl.constexpr,
    SAME_STRIDE: tl.constexpr,
    USE_GDC: tl.constexpr,
    launch_pdl: tl.constexpr,
    RAW_A_BITS: tl.constexpr,
):
    # Axis 0 enumerates (M tile, N tile) pairs with M fastest, axis 1 the slice,
    # axis 2 the entry of lora_ids. The grid is sized for the worst case
    # (every token in one LoRA, the widest slice); surplus programs exit.
    cta_n_num = tl.cdiv(N, BLOCK_N)
    cta_m_num = tl.cdiv(M, BLOCK_M)
    pid_mn = tl.program_id(axis=0)
    pid_m = pid_mn % cta_m_num
    pid_n = (pid_mn // cta_m_num) % cta_n_num
    slice_id = tl.program_id(axis=1)
    lora_idx = tl.program_id(axis=2)

    lora_id = tl.load(lora_ids + lora_idx)
    if lora_id == -1:
        # Tokens without a LoRA: their rows of y are left untouched.
        return

    lora_m_size = tl.load(num_tokens_per_lora + lora_idx)
    cta_m_offset = pid_m * BLOCK_M
    if cta_m_offset >= lora_m_size:
        return

    # Slices of different widths (GQA's qkv) read their own width.
    curr_N = N if SAME_STRIDE else tl.load(output_hs_ptr + slice_id)
    if pid_n * BLOCK_N >= curr_N:
        return

    cta_m_len = min(BLOCK_M, lora_m_size - cta_m_offset)
    lora_m_start = tl.load(lora_token_start_loc + lora_idx)
    tile_tokens = token_indices_sorted_by_lora_ids + lora_m_start + cta_m_offset
    # Rows past cta_m_len repeat valid tokens (so every load is in bounds);
    # the store mask keeps them from being written twice.
    offset_m = tl.arange(0, BLOCK_M) % cta_m_len
    ram = tl.load(tile_tokens + offset_m)

    do_expand_kernel(pid_n, lora_id, slice_id, input_ptr, lora_ptr, out_ptr, curr_N, K, cta_m_len, ram,
                     slice_start_loc, input_d0_stride, input_d1_stride, input_d2_stride, ls_d0_ptr, ls_d1_ptr,
                     ls_d2_ptr, output_d0_stride, output_d1_stride, BLOCK_M, BLOCK_N, BLOCK_K, SAME_STRIDE,
                     SLICE_NUM, EVEN_K, CAST_TYPE, ADD_INPUTS, RAW_A_BITS, USE_GDC)
