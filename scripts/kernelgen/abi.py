"""The launch ABI of our Triton kernels: for each runtime argument its
Triton type, the specialisation it is compiled under, and the grid.

This is what vLLM's JIT would see for typical shapes: every tensor from the
caching allocator is 16-byte aligned; rank, hidden sizes and row strides are
multiples of 16; the innermost strides of contiguous tensors are 1 (Triton
turns an integer argument equal to 1 into a constant and drops it from the
PTX parameters). The token count M is deliberately left unspecialised so one
binary serves any number of tokens.

Meanings of the arguments, for the launcher, are tabulated in
kernels/README.md; the names are vLLM's.
"""

from .variants import DIVISIBLE_BY_16, EQUAL_TO_1, TEST_HOOKS, UNSPECIALIZED, Variant

# Specialisation classes, as the manifest names them (the width ones in variants.py,
# whose WIDTH_AXES take them as values).
ALIGNED_16 = "aligned_16"
SPECIALIZATIONS = (EQUAL_TO_1, DIVISIBLE_BY_16, ALIGNED_16, UNSPECIALIZED)

# Runtime quantities the grid is written in (docs/problem.md sizes).
RUNTIME_QUANTITIES = {
    "num_tokens": "T, the number of tokens (rows of x / of buf's slices / of y)",
    "rank": "R, the LoRA rank",
    "hidden_size": "H, width of x (shrink's K)",
    "max_hidden_size": "max over slices of H_s (expand's N)",
    "num_slices": "S, the number of slices (equals SLICE_NUM)",
    "num_lora_ids": "J, the length of lora_ids",
    "padded_pairs": "fused_moe: EM, the length of each LoRA's row of sorted_token_ids (its pairs sorted by expert, "
                    "every expert's run padded to BLOCK_M)",
}

INDEX_ARRAYS = ("token_indices_sorted_by_lora_ids", "num_tokens_per_lora", "lora_token_start_loc", "lora_ids")


# Triton's name of a dtype where it is not loraprobe's (float8 e4m3fn is Triton's fp8e4nv).
TRITON_DTYPES = {"fp8e4m3": "fp8e4nv"}


def _ptr(dtype):
    return ("*" + TRITON_DTYPES.get(dtype, dtype), ALIGNED_16)


_I32_D16 = ("i32", DIVISIBLE_BY_16)
_ONE = ("constexpr", EQUAL_TO_1)


def _width(spec):
    """An i32 width compiled under `spec` (one of variants.WIDTH_SPECS)."""
    return _ONE if spec == EQUAL_TO_1 else ("i32", spec)


def expand_arguments(v: Variant) -> list:
    """(name, triton type, specialisation) for each runtime argument of
    _lora_expand_kernel, in signature order."""
    multi = v.num_slices > 1
    per_slice = multi and not v.same_stride
    # With one slice the B tensor itself is passed; with several, a device
    # array of their uint64 addresses. Per-slice strides and widths are int64
    # device arrays (torch.tensor of Python ints), slice offsets uint64.
    args = [
        ("input_ptr", _ptr(v.input_dtype)),
        ("lora_ptr", _ptr("u64") if multi else _ptr(v.weight_dtype)),
        ("out_ptr", _ptr(v.weight_dtype)),
        ("M", ("i32", UNSPECIALIZED)),
        ("N", _width(v.n_spec)),
        ("K", _I32_D16),
    ]
    args += [(name, _ptr("i32")) for name in INDEX_ARRAYS]
    args += [
        # Single slice: the column offset off_0, which is 0 (divisible by 16).
        ("slice_start_loc", _ptr("u64") if multi else _I32_D16),
        ("input_d0_stride", _I32_D16),
        ("input_d1_stride", _I32_D16),
        ("input_d2_stride", _ONE),
        ("ls_d0_ptr", _ptr("i64") if per_slice else _I32_D16),
        ("ls_d1_ptr", _ptr("i64") if per_slice else _I32_D16),
        ("ls_d2_ptr", _ptr("i64") if per_slice else _ONE),
        ("output_d0_stride", _width(v.out_stride_spec)),
        ("output_d1_stride", _ONE),
        ("output_hs_ptr", _ptr("i64") if per_slice else _width(v.n_spec)),
    ]
    return [(name, ty, spec) for name, (ty, spec) in args]


def shrink_arguments(v: Variant) -> list:
    args = [
        ("input_ptr", _ptr(v.input_dtype)),
        ("lora_ptr", _ptr("u64") if v.num_slices > 1 else _ptr(v.weight_dtype)),
        ("out_ptr", _ptr("fp32")),
        ("M", ("i32", UNSPECIALIZED)),
        ("N", _I32_D16),
        ("K", _I32_D16),
    ]
    args += [(name, _ptr("i32")) for name in INDEX_ARRAYS]
    args += [
        # Triton never specialises float arguments.
        ("scaling", ("fp32", UNSPECIALIZED)),
        ("input_d0_stride", _I32_D16),
        ("input_d1_stride", _ONE),
        ("lora_d0_stride", _I32_D16),
        ("lora_d1_stride", _I32_D16),
        ("lora_d2_stride", _ONE),
        ("output_d0_stride", _I32_D16),
        ("output_d1_stride", _I32_D16),
        ("output_d2_stride", _ONE),
    ]
    return [(name, ty, spec) for name, (ty, spec) in args]


_I32_ANY = ("i32", UNSPECIALIZED)

# The scales' strides of the FP8 kernels, as vLLM's JIT specialises them for the shapes it
# meets (lora_*_fp8_op.py, vllm 0.34.0). Per tensor: 0 for the activation's two and the
# weights' K stride, 1 for the weights' L stride (the [L] tensor's stride) and N stride
# (vLLM passes 1 for a 1-D scale tensor). Block-wise, the contiguous [T, cdiv(K, g)] and
# [L, cdiv(N, g), cdiv(K, g)] tensors' strides: K strides 1; a stride of cdiv(H, 128)
# groups is divisible by 16 for H a multiple of 2048 (Qwen3.6-35B-A3B's 2048, 4096, ...);
# the expand's K is the rank, at most 128 in one group, so its row and N strides are 1.
_FP8_SCALE_STRIDES = ("a_scale_m_stride", "a_scale_k_stride", "b_scale_l_stride", "b_scale_n_stride",
                      "b_scale_k_stride")
_ZERO = ("i32", DIVISIBLE_BY_16)  # 0 is divisible by 16
_FP8_SCALE_SPECS = {
    ("shrink_fp8", False): (_ZERO, _ZERO, _ONE, _ONE, _ZERO),
    ("expand_fp8", False): (_ZERO, _ZERO, _ONE, _ONE, _ZERO),
    ("shrink_fp8", True): (_I32_D16, _ONE, _I32_D16, _I32_D16, _ONE),
    ("expand_fp8", True): (_ONE, _ONE, _I32_D16, _ONE, _ONE),
}


def _fp8_scale_arguments(v: Variant) -> list:
    return list(zip(_FP8_SCALE_STRIDES, _FP8_SCALE_SPECS[(v.op, bool(v.scale_group))]))


def shrink_fp8_arguments(v: Variant) -> list:
    """_lora_shrink_kernel_fp8, one slice: fp8 x and A, their fp32 scales, the fp32 buf."""
    args = [
        ("input_ptr", _ptr(v.input_dtype)),
        ("lora_ptr", _ptr(v.weight_dtype)),
        ("out_ptr", _ptr("fp32")),
        ("a_scale_ptr", _ptr("fp32")),
        ("b_scale_ptr", _ptr("fp32")),
        ("M", ("i32", UNSPECIALIZED)),
        ("N", _I32_D16),
        ("K", _I32_D16),
    ]
    args += [(name, _ptr("i32")) for name in INDEX_ARRAYS]
    args += [
        ("scaling", ("fp32", UNSPECIALIZED)),
        ("input_d0_stride", _I32_D16),
        ("input_d1_stride", _ONE),
        ("lora_d0_stride", _I32_D16),
        ("lora_d1_stride", _I32_D16),
        ("lora_d2_stride", _ONE),
    ]
    args += _fp8_scale_arguments(v)
    args += [("output_d0_stride", _I32_D16), ("output_d1_stride", _I32_D16), ("output_d2_stride", _ONE)]
    return [(name, ty, spec) for name, (ty, spec) in args]


def expand_fp8_arguments(v: Variant) -> list:
    """_lora_expand_kernel_fp8, one slice: the fp8 buf and B, their fp32 scales, y in W."""
    args = [
        ("input_ptr", _ptr(v.input_dtype)),
        ("lora_ptr", _ptr(v.input_dtype)),
        ("out_ptr", _ptr(v.weight_dtype)),
        ("a_scale_ptr", _ptr("fp32")),
        ("b_scale_ptr", _ptr("fp32")),
        ("M", ("i32", UNSPECIALIZED)),
        ("N", _I32_D16),
        ("K", _I32_D16),
    ]
    args += [(name, _ptr("i32")) for name in INDEX_ARRAYS]
    args += [
        ("slice_start_loc", _I32_D16),
        ("input_d0_stride", _I32_D16),
        ("input_d1_stride", _I32_D16),
        ("input_d2_stride", _ONE),
        ("ls_d0_ptr", _I32_D16),
        ("ls_d1_ptr", _I32_D16),
        ("ls_d2_ptr", _ONE),
    ]
    args += _fp8_scale_arguments(v)
    args += [("output_d0_stride", _I32_D16), ("output_d1_stride", _ONE), ("output_hs_ptr", _I32_D16)]
    return [(name, ty, spec) for name, (ty, spec) in args]


def fused_moe_arguments(v: Variant) -> list:
    """_fused_moe_lora_one_shot_kernel. The weights of every slice are passed as a
    device array of their uint64 addresses (vLLM's _get_ptr), the routing as int32
    tensors; the innermost strides are 1. Counts that vary with the batch
    (num_valid_tokens, the sorted rows' strides) and max_loras (1 for most users,
    which Triton's JIT would fold to a constant) stay unspecialised so one binary
    serves every batch and adapter count; top_k_num is 8, never a multiple of 16."""
    args = [
        ("x_ptr", _ptr(v.input_dtype)),
        ("A_ptrs", _ptr("u64")),
        ("B_ptrs", _ptr("u64")),
        ("out_ptr", _ptr(v.weight_dtype)),
        ("topk_weights_ptr", _ptr("fp32")),
        ("sorted_token_ids_ptr", _ptr("i32")),
        ("expert_ids_ptr", _ptr("i32")),
        ("num_tokens_post_padded_ptr", _ptr("i32")),
        ("token_lora_mapping_ptr", _ptr("i32")),
        ("lora_ids_ptr", _ptr("i32")),
        ("adapter_enabled_ptr", _ptr("i32")),
        ("N", _I32_D16),
        ("K", _I32_D16),
        ("num_valid_tokens", _I32_ANY),
        ("top_k_num", _I32_ANY),
        ("max_loras", _I32_ANY),
        ("stride_xm", _I32_D16),
        ("stride_xk", _ONE),
        ("stride_A_lora", _I32_D16),
        ("stride_A_expert", _I32_D16),
        ("stride_A_r", _I32_D16),
        ("stride_A_k", _ONE),
        ("stride_B_lora", _I32_D16),
        ("stride_B_expert", _I32_D16),
        ("stride_B_n", _I32_D16),
        ("stride_B_r", _ONE),
        ("stride_om", _I32_D16),
        ("stride_on", _ONE),
        ("stride_tl_", _I32_ANY),
        ("stride_el", _I32_ANY),
        ("slice_n_offset", _I32_D16),
    ]
    return [(name, ty, spec) for name, (ty, spec) in args]


def sharded_moe_arguments(v: Variant) -> list:
    """_fused_moe_lora_kernel, launched as the shrink (a = x, b = A, c = the rank
    cache) or the expand (a = the cache, b = B, c = out). a_desc and b_desc are None
    (no TMA): Triton makes them constexprs, absent from the PTX (NONE_ARGUMENTS).
    vLLM's do_not_specialize list (num_valid_tokens, EM, the sorted rows' strides,
    the slice sizes) stays unspecialised, as do num_experts, top_k_num and
    max_loras; the weights' and the output's innermost strides are 1."""
    args = [
        ("a_ptr", _ptr(v.input_dtype)),
        ("b_ptr", _ptr("u64")),
        ("c_ptr", _ptr(v.weight_dtype)),
        ("topk_weights_ptr", _ptr("fp32")),
        ("sorted_token_ids_ptr", _ptr("i32")),
        ("expert_ids_ptr", _ptr("i32")),
        ("num_tokens_post_padded_ptr", _ptr("i32")),
        ("token_lora_mapping_ptr", _ptr("i32")),
        ("N", _I32_D16),
        ("K", _I32_D16),
        ("EM", _I32_ANY),
        ("num_valid_tokens", _I32_ANY),
        ("num_experts", _I32_ANY),
        ("top_k_num", _I32_ANY),
        ("lora_ids", _ptr("i32")),
        ("adapter_enabled", _ptr("i32")),
        ("max_loras", _I32_ANY),
        ("stride_am", _I32_D16),
        ("stride_ak", _ONE),
        ("stride_bl", _I32_D16),
        ("stride_be", _I32_D16),
        ("stride_bk", _ONE),
        ("stride_bn", _I32_D16),
        ("stride_cm", _I32_D16),
        ("stride_cn", _ONE),
        ("stride_tl", _I32_ANY),
        ("stride_el", _I32_ANY),
        ("slice_a_size", _I32_ANY),
        ("slice_c_size", _I32_ANY),
    ]
    return [(name, ty, spec) for name, (ty, spec) in args]


# Arguments passed as None, which Triton compiles in as constexprs, by kernel op: each
# with the runtime argument it follows in the signature.
_DESCRIPTORS = (("a_desc", "a_ptr"), ("b_desc", "b_ptr"))
NONE_ARGUMENTS = {"fused_moe_shrink": _DESCRIPTORS, "fused_moe_expand": _DESCRIPTORS}


def signature_names(v: Variant) -> list:
    """Every parameter of the kernel in signature order: the runtime arguments with
    the None ones in their places, then the constexprs."""
    after = {previous: name for name, previous in NONE_ARGUMENTS.get(v.op, ())}
    names = []
    for name, _, _ in arguments(v):
        names.append(name)
        if name in after:
            names.append(after[name])
    return names + list(kernel_constexprs(v))


def arguments(v: Variant) -> list:
    if v.op in ("fused_moe_shrink", "fused_moe_expand"):
        return sharded_moe_arguments(v)
    if v.op == "fused_moe":
        return fused_moe_arguments(v)
    if v.op == "shrink_fp8":
        return shrink_fp8_arguments(v)
    if v.op == "expand_fp8":
        return expand_fp8_arguments(v)
    return expand_arguments(v) if v.op == "expand" else shrink_arguments(v)


def kernel_constexprs(v: Variant) -> dict:
    """The tl.constexpr parameters of the kernel, by name."""
    if v.op in ("fused_moe_shrink", "fused_moe_expand"):
        shrink = v.op == "fused_moe_shrink"
        return {
            "num_slice_a": 1 if shrink else v.num_slices,
            "num_slice_c": v.num_slices,
            "token_mapping_factor": v.top_k,
            "naive_block_assignment": False,
            "MUL_ROUTED_WEIGHT": bool(v.mul_routed_weight),
            "ADD_INPUTS": not shrink,
            "USE_B_L2_CACHE": True,
            "BLOCK_SIZE_M": v.block_m,
            "BLOCK_SIZE_N": v.block_n,
            "BLOCK_SIZE_K": v.block_k,
            "GROUP_SIZE_M": v.group_size_m,
            "SPLIT_K": v.split_k,
            "USE_GDC": False,
            "launch_pdl": False,
            "IS_PRIMARY": shrink,
            "USE_TMA": False,
            "sort_c": False,
        }
    if v.op == "fused_moe":
        return {
            "token_mapping_factor": v.top_k,
            "naive_block_assignment": False,
            "MUL_ROUTED_WEIGHT": v.mul_routed_weight,
            "BLOCK_M": v.block_m,
            "BLOCK_R": v.block_r,
            "actual_rank": v.rank,
            "NPID_FACTOR": v.npid_factor,
            "BLOCK_N": v.block_n,
            "BLOCK_K": v.block_k,
            "EVEN_K": v.even_k,
            "ADD_INPUTS": v.add_inputs,
        }
    if v.op in ("shrink_fp8", "expand_fp8"):
        fp8 = {"group_n": v.scale_group, "group_k": v.scale_group, "BLOCK_M": v.block_m, "BLOCK_N": v.block_n,
               "BLOCK_K": v.block_k, "EVEN_K": v.even_k}
        if v.op == "shrink_fp8":
            fp8.update({"SPLIT_K": v.split_k, "GROUP_SIZE_M": v.group_size_m, "SLICE_NUM": 1})
        else:
            fp8.update({"ADD_INPUTS": v.add_inputs, "CAST_TYPE": False, "SLICE_NUM": 1, "SAME_STRIDE": True})
        fp8.update({"USE_GDC": False, "use_fp8_w8a8": True, "per_channel_quant": False, "launch_pdl": False})
        return fp8
    if v.op == "shrink":
        return {
            "BLOCK_M": v.block_m,
            "BLOCK_N": v.block_n,
            "BLOCK_K": v.block_k,
            "EVEN_K": v.even_k,
            "SPLIT_K": v.split_k,
            "GROUP_SIZE_M": v.group_size_m,
            "SLICE_NUM": v.num_slices,
            "USE_GDC": bool(v.gdc),
            "launch_pdl": bool(v.gdc),
            "TAIL_NS": v.tail_ns or 0,
        }
    ce = {
        "BLOCK_M": v.block_m,
        "BLOCK_N": v.block_n,
        "BLOCK_K": v.block_k,
        "EVEN_K": v.even_k,
        "ADD_INPUTS": v.add_inputs,
        "CAST_TYPE": v.cast_type,
        "SLICE_NUM": v.num_slices,
        "SAME_STRIDE": v.same_stride,
    }
    if v.role not in TEST_HOOKS:
        # The test hooks' kernel calls the expand with both off.
        ce.update({"USE_GDC": bool(v.gdc), "launch_pdl": bool(v.gdc)})
    ce["RAW_A_BITS"] = v.role == "positive_control"
    if v.role in TEST_HOOKS:
        ce["HOOK"] = TEST_HOOKS[v.role]
    return ce


def kernel_source(v: Variant) -> tuple:
    """(module, function) under kernels/triton that builds this variant."""
    if v.role in TEST_HOOKS:
        return ("test_hooks", "_lora_expand_test_hook_kernel")
    if v.op == "expand":
        return ("lora_expand", "_lora_expand_kernel")
    if v.op == "fused_moe":
        return ("fused_moe_lora", "_fused_moe_lora_one_shot_kernel")
    if v.op == "shrink_fp8":
        return ("lora_fp8", "_lora_shrink_kernel_fp8")
    if v.op == "expand_fp8":
        return ("lora_fp8", "_lora_expand_kernel_fp8")
    if v.op in ("fused_moe_shrink", "fused_moe_expand"):
        return ("fused_moe_lora", "_fused_moe_lora_kernel")
    return ("lora_shrink", "_lora_shrink_kernel")


# Constexprs of loraprobe's kernels that vLLM's do not have, with the value at which
# ours compile to vLLM's code (kernels/README.md).
OURS_ONLY_CONSTEXPRS = {"RAW_A_BITS": False, "TAIL_NS": 0}
# Runtime parameters vLLM's kernels have and loraprobe's do not, as vLLM's JIT types them
# for the value it passes on CUDA: lora_shrink_op.py (vllm 0.34.0) leaves
# output_split_stride at its default 0 outside batch invariance, and 0 is divisible by 16.
VLLM_ONLY_RUNTIME = {"output_split_stride": ("i32", DIVISIBLE_BY_16)}


def foreign_compile_inputs(v: Variant, arg_names: list) -> tuple:
    """compile_inputs for a kernel of the same ABI but another source (vLLM's own), and
    its PTX parameter list [(name, type)]: our runtime arguments and constexprs where it
    has them, vLLM's launch values for its own (vllm_source.py, VLLM_ONLY_RUNTIME); a
    constexpr of ours it lacks must be at the value that compiles to vLLM's code."""
    from .vllm_source import VLLM_ONLY_CONSTEXPRS
    ours = kernel_constexprs(v)
    by_name = {name: (ty, spec) for name, ty, spec in arguments(v)}
    by_name.update(VLLM_ONLY_RUNTIME)
    none_args = {name for name, _ in NONE_ARGUMENTS.get(v.op, ())}
    for name, value in ours.items():
        if name not in arg_names and OURS_ONLY_CONSTEXPRS.get(name, object()) != value:
            raise ValueError(f"{v.id}: the kernel has no parameter {name} (= {value!r} in this variant)")
    missing = [name for name, _, _ in arguments(v) if name not in arg_names]
    extra = [n for n in arg_names if n not in ours and n not in by_name and n not in none_args
             and n not in VLLM_ONLY_CONSTEXPRS]
    if missing or extra:
        raise ValueError(f"the kernel's parameters differ from loraprobe's ABI of {v.op}: it has "
                         f"{', '.join(extra) or 'nothing'} more and {', '.join(missing) or 'nothing'} less")
    signature, constexprs, attrs, params = {}, {}, {}, []
    for index, name in enumerate(arg_names):
        if name in ours or name in VLLM_ONLY_CONSTEXPRS or name in none_args:
            signature[name] = "constexpr"
            constexprs[name] = None if name in none_args else ours.get(name, VLLM_ONLY_CONSTEXPRS.get(name))
            continue
        ty, spec = by_name[name]
        signature[name] = ty
        if spec == EQUAL_TO_1:
            constexprs[name] = 1
            continue
        if spec in (DIVISIBLE_BY_16, ALIGNED_16):
            attrs[(index, )] = [["tt.divisibility", 16]]
        params.append((name, ty))
    params += [("global_scratch", "global_scratch"), ("profile_scratch", "profile_scratch")]
    return signature, constexprs, attrs, params


def compile_inputs(v: Variant, arg_names: list) -> tuple:
    """signature, constexprs and attrs for triton.compiler.ASTSource, i.e.
    exactly what Triton's JIT would build for this specialisation."""
    args = arguments(v)
    ce = kernel_constexprs(v)
    none_args = [name for name, _ in NONE_ARGUMENTS.get(v.op, ())]
    expected = signature_names(v)
    if list(arg_names) != expected:
        raise ValueError(f"kernel signature {list(arg_names)} does not match the ABI table {expected}")
    declared = expected[:len(expected) - len(ce)]
    by_name = {name: (ty, spec) for name, ty, spec in args}
    signature, constexprs, attrs = {}, {}, {}
    for index, name in enumerate(declared):
        if name in none_args:
            signature[name] = "constexpr"
            constexprs[name] = None
            continue
        ty, spec = by_name[name]
        signature[name] = ty
        if spec == EQUAL_TO_1:
            constexprs[name] = 1
        elif spec in (DIVISIBLE_BY_16, ALIGNED_16):
            attrs[(index, )] = [["tt.divisibility", 16]]
    for name, value in ce.items():
        signature[name] = "constexpr"
        constexprs[name] = value
    return signature, constexprs, attrs


def specialization(v: Variant) -> dict:
    out = {key: [] for key in SPECIALIZATIONS}
    for name, _, spec in arguments(v):
        out[spec].append(name)
    return out


def expected_params(v: Variant) -> list:
    """The PTX parameter list Triton 3.6 produces: the non-constexpr
    arguments in order, then the global and profile scratch pointers."""
    params = [(name, ty) for name, ty, spec in arguments(v) if spec != EQUAL_TO_1]
    return params + [("global_scratch", "global_scratch"), ("profile_scratch", "profile_scratch")]


def grid(v: Variant) -> list:
    """Three dimensions, each a product of factors: an integer, a runtime
    quantity name, or "cdiv:<quantity>:<constexpr>" = ceil(quantity / value
    of that constexpr)."""
    if v.op == "fused_moe":
        # vLLM: (cdiv(EM, BLOCK_M) * NPID_FACTOR, num_slices, active LoRAs).
        return [["cdiv:padded_pairs:BLOCK_M", v.npid_factor], ["num_slices"], ["num_lora_ids"]]
    if v.op in ("fused_moe_shrink", "fused_moe_expand"):
        # vLLM: (SPLIT_K * cdiv(EM, BLOCK_SIZE_M) * cdiv(N, BLOCK_SIZE_N), num_slices, active LoRAs);
        # N is the rank for the shrink, the slice width for the expand.
        n = "rank" if v.op == "fused_moe_shrink" else "max_hidden_size"
        return [[v.split_k, "cdiv:padded_pairs:BLOCK_SIZE_M", f"cdiv:{n}:BLOCK_SIZE_N"], ["num_slices"],
                ["num_lora_ids"]]
    if v.op in ("expand", "expand_fp8"):
        x = ["cdiv:num_tokens:BLOCK_M", "cdiv:max_hidden_size:BLOCK_N"]
    else:
        x = [v.split_k, "cdiv:num_tokens:BLOCK_M", "cdiv:rank:BLOCK_N"]
    return [x, ["num_slices"], ["num_lora_ids"]]
