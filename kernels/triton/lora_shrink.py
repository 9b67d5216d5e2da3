"""LoRA shrink (punica "A" op) for loraprobe, written from docs/problem.md.

    buf[s, t, r] = scale * sum_h x[t, h] * A_s[lora_of[t], r, h]

Structure follows vLLM's `_lora_shrink_kernel` / `do_shrink_kernel`: the same
grid decomposition (split-K index fastest, then a GROUP_SIZE_M swizzle of the
M/N tiles), token gather, early exits and split-K write-back with atomics, so
that its code generation matches what vLLM ships. Argument names are vLLM's.

`USE_GDC` and `launch_pdl` are vLLM's dual-stream switches: with USE_GDC the
shrink signals `griddepcontrol.launch_dependents` once its k-loop is done and
before it writes buf, so the expand launched after it with programmatic
dependent launch may start early and must wait before it reads buf. The
shrink itself never waits (vLLM passes USE_GDC=False to its `mm_k`).

`TAIL_NS` is not in vLLM and is 0 in every kernel variant. Above 0, every
program spins that many nanoseconds of %globaltimer between the signal and its
store: the producer of loraprobe's dual-stream chain, whose long tail gives an
expand that reads buf before its wait the time to see buf still unwritten.
"""

import triton
import triton.language as tl


@triton.jit
def _global_time_ns():
    # %globaltimer, in nanoseconds. Impure, so each read is a new read.
    return tl.inline_asm_elementwise("mov.u64 $0, %globaltimer;", "=l", [], dtype=tl.int64, is_pure=False, pack=1)


@triton.jit
def _shrink_mm_k(
    a_ptr,  # [BLOCK_M, BLOCK_K] pointers into x, already offset by base_k
    b_ptr,  # [BLOCK_K, BLOCK_N] pointers into A_s, already offset by base_k
    ak_stride,
    bk_stride,
    K,
    base_k,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BLOCK_K: tl.constexpr,
    EVEN_K: tl.constexpr,
    SPLIT_K: tl.constexpr,
):
    # Split pid_sk owns K blocks pid_sk, pid_sk + SPLIT_K, ... (interleaved,
    # not contiguous), which is why every step advances by BLOCK_K * SPLIT_K.
    # cdiv(K, BLOCK_K * SPLIT_K) trips cover every block of every split; in
    # the last trip a split can meet a partial block or one wholly past K.
    step_k: tl.constexpr = BLOCK_K * SPLIT_K
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(tl.cdiv(K, step_k)):
        k_start = k * step_k + base_k
        if EVEN_K:
            # EVEN_K here means K % (BLOCK_K * SPLIT_K) == 0: no split ever
            # sees a partial or empty block.
            tile_b = tl.load(b_ptr)
            tile_a = tl.load(a_ptr)
            acc += tl.dot(tile_a, tile_b)
        else:
            # vLLM's three branches: a split's block wholly past K, a whole block, the
            # partial tail.
            if k_start >= K:
                pass
            elif k_start + BLOCK_K <= K:
                tile_b = tl.load(b_ptr)
                tile_a = tl.load(a_ptr)
                acc += tl.dot(tile_a, tile_b)
            else:
                in_k = k_start + tl.arange(0, BLOCK_K) < K
                tile_b = tl.load(b_ptr, mask=in_k[:, None], other=0.0)
                tile_a = tl.load(a_ptr, mask=in_k[None, :], other=0.0)
                acc += tl.dot(tile_a, tile_b)
        a_ptr += step_k * ak_stride
        b_ptr += step_k * bk_stride
    return acc


@triton.jit
def do_shrink_kernel(
    pid_n,
    pid_sk,
    slice_id,
    lora_id,
    input_ptr,
    lora_ptr,
    out_ptr,
    N,
    K,
    M_LEN,
    ram,
    input_d0_stride,
    input_d1_stride,
    lora_d0_stride,
    lora_d1_stride,
    lora_d2_stride,
    output_d0_stride,
    output_d1_stride,
    output_d2_stride,
    scaling,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BLOCK_K: tl.constexpr,
    EVEN_K: tl.constexpr,
    SPLIT_K: tl.constexpr,
    SLICE_NUM: tl.constexpr,
    USE_GDC: tl.constexpr,
    TAIL_NS: tl.constexpr,
):
    if SLICE_NUM == 1:
        slice_lora_ptr = lora_ptr
    else:
        # One uint64 address per slice tensor; all slices share x and strides.
        slice_lora_ptr = tl.load(lora_ptr + slice_id).to(tl.pointer_type(input_ptr.dtype.element_ty))

    # Rank columns past N wrap (loads stay in bounds); the store mask drops them.
    offset_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rbn = tl.max_contiguous(tl.multiple_of(offset_n % N, BLOCK_N), BLOCK_N)

    base_k = pid_sk * BLOCK_K
    offset_k = base_k + tl.arange(0, BLOCK_K)
    # int64 row offset: T * H overflows int32 at long prompts.
    a_ptr = input_ptr + ram[:, None].to(tl.int64) * input_d0_stride + offset_k[None, :] * input_d1_stride
    b_ptr = (slice_lora_ptr + lora_d0_stride * lora_id + rbn[None, :] * lora_d1_stride +
             offset_k[:, None] * lora_d2_stride)

    acc = _shrink_mm_k(a_ptr, b_ptr, input_d1_stride, lora_d2_stride, K, base_k, BLOCK_M, BLOCK_N, BLOCK_K, EVEN_K,
                       SPLIT_K)
    if USE_GDC:
        # The dependent grid may launch once every program got here (or exited).
        tl.extra.cuda.gdc_launch_dependents()
    if TAIL_NS > 0:
        start = _global_time_ns()
        while _global_time_ns() - start < TAIL_NS:
            pass

    offset_cn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offset_cm = tl.arange(0, BLOCK_M)
    slice_out_ptr = out_ptr if SLICE_NUM == 1 else out_ptr + slice_id * output_d0_stride
    c_ptr = slice_out_ptr + ram[:, None] * output_d1_stride + offset_cn[None, :] * output_d2_stride
    c_mask = (offset_cm[:, None] < M_LEN) & (offset_cn[None, :] < N)
    acc *= scaling
    if SPLIT_K == 1:
        tl.store(c_ptr, acc, mask=c_mask)
    else:
        # Partial sums of the K splits meet in buf, which must start at zero.
        tl.atomic_add(c_ptr, acc, mask=c_mask, sem="relaxed")


@triton.jit
def _lora_shrink_kernel(
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
    scaling,
    input_d0_stride,
    input_d1_stride,
    lora_d0_stride,
    lora_d1_stride,
    lora_d2_stride,
    output_d0_stride,
    output_d1_stride,
    output_d2_stride,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BLOCK_K: tl.constexpr,
    EVEN_K: tl.constexpr,
    SPLIT_K: tl.constexpr,
    GROUP_SIZE_M: tl.constexpr,
    SLICE_NUM: tl.constexpr,
    USE_GDC: tl.constexpr,
    launch_pdl: tl.constexpr,
    TAIL_NS: tl.constexpr,
):
    cta_n_num = tl.cdiv(N, BLOCK_N)
    cta_m_num = tl.cdiv(M, BLOCK_M)

    # Axis 0 = SPLIT_K * (M tiles) * (N tiles), split index fastest. The M/N
    # tile index is then swizzled in groups of GROUP_SIZE_M M tiles, column
    # major inside a group, so neighbouring programs share rows of x.
    pid_sk_m_n = tl.program_id(axis=0)
    pid_sk = pid_sk_m_n % SPLIT_K
    pid_m_n = pid_sk_m_n // SPLIT_K
    num_pid_in_group = GROUP_SIZE_M * cta_n_num
    group_id = pid_m_n // num_pid_in_group
    first_pid_m = group_id * GROUP_SIZE_M
    group_size_m = min(cta_m_num - first_pid_m, GROUP_SIZE_M)
    pid_m = first_pid_m + ((pid_m_n % num_pid_in_group) % group_size_m)
    pid_n = (pid_m_n % num_pid_in_group) // group_size_m

    slice_id = tl.program_id(axis=1)
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
    # Rows past cta_m_len repeat valid tokens; the store mask skips them.
    offset_m = tl.arange(0, BLOCK_M) % cta_m_len
    ram = tl.load(tile_tokens + offset_m)

    do_shrink_kernel(pid_n, pid_sk, slice_id, lora_id, input_ptr, lora_ptr, out_ptr, N, K, cta_m_len, ram,
                     input_d0_stride, input_d1_stride, lora_d0_stride, lora_d1_stride, lora_d2_stride,
                     output_d0_stride, output_d1_stride, output_d2_stride, scaling, BLOCK_M, BLOCK_N, BLOCK_K,
                     EVEN_K, SPLIT_K, SLICE_NUM, USE_GDC, TAIL_NS)
