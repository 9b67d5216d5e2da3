"""Expand-shaped kernels that misbehave on purpose, for the tool's own tests.

Each takes exactly the arguments of `_lora_expand_kernel` (so the launcher
needs no special case) plus the constexpr HOOK that picks the misbehaviour.
They prove that the sweep notices what it claims to notice: unwritten
output, a device-side trap, a kernel that never finishes, an illegal
address. None of them is a LoRA kernel; the manifest marks them test_*.
"""

import triton
import triton.language as tl

from lora_expand import _lora_expand_kernel

HOOK_SKIP_TILE = tl.constexpr(1)
HOOK_TRAP = tl.constexpr(2)
HOOK_SPIN = tl.constexpr(3)
HOOK_OOB_WRITE = tl.constexpr(4)

# 2**40 elements past the start of y: terabytes beyond any real allocation,
# still a canonical device address, so the store faults instead of
# corrupting some neighbouring buffer.
OOB_ELEMENTS = tl.constexpr(1 << 40)


@triton.jit
def _lora_expand_test_hook_kernel(
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
    RAW_A_BITS: tl.constexpr,
    HOOK: tl.constexpr,
):
    lora_idx = tl.program_id(axis=2)
    if HOOK == HOOK_TRAP:
        # Declared impure so that it survives dead-code elimination although
        # its (dummy) result is unused.
        tl.inline_asm_elementwise("trap; mov.b32 $0, $1;", "=r,r", [lora_idx], dtype=tl.int32, is_pure=False,
                                  pack=1)
    elif HOOK == HOOK_SPIN:
        # Volatile loads cannot be hoisted, so this really re-reads a value
        # that nothing ever changes: the kernel runs until it is killed.
        first = tl.load(lora_ids + lora_idx, volatile=True)
        while tl.load(lora_ids + lora_idx, volatile=True) == first:
            pass
    elif HOOK == HOOK_OOB_WRITE:
        tl.store(out_ptr + OOB_ELEMENTS, tl.zeros((), dtype=out_ptr.dtype.element_ty))
    elif HOOK == HOOK_SKIP_TILE:
        # Skipped: the first M tile and first N tile of slice 0, for every
        # entry of lora_ids, i.e. min(BLOCK_M, n_j) x min(BLOCK_N, H_0)
        # elements of y per LoRA j that has tokens.
        if (tl.program_id(axis=0) == 0) & (tl.program_id(axis=1) == 0):
            return

    _lora_expand_kernel(input_ptr, lora_ptr, out_ptr, M, N, K, token_indices_sorted_by_lora_ids, num_tokens_per_lora,
                        lora_token_start_loc, lora_ids, slice_start_loc, input_d0_stride, input_d1_stride,
                        input_d2_stride, ls_d0_ptr, ls_d1_ptr, ls_d2_ptr, output_d0_stride, output_d1_stride,
                        output_hs_ptr, BLOCK_M, BLOCK_N, BLOCK_K, EVEN_K, ADD_INPUTS, CAST_TYPE, SLICE_NUM,
                        SAME_STRIDE, False, False, RAW_A_BITS)
