"""The variant matrix: which (op, dtypes, constexprs, num_warps, num_stages)
combinations are built, their ids, roles and the --only filter.

The matrix is issue 3's minimum plus the neighbours of vLLM's defaults. It is
data, not logic: adding a row here is how the set grows.
"""

import json
from dataclasses import dataclass, field
from pathlib import Path
from itertools import product
from typing import Optional

# Roles: what a variant is for. "kernel" variants are the LoRA ops; the
# negative control is also a normal kernel (the bf16-input expand at vLLM's
# default config), singled out so the sweep can insist it passes.
ROLES = ("kernel", "positive_control", "negative_control", "test_skip_tile", "test_trap", "test_spin",
         "test_oob_write")

# HOOK constexpr of kernels/triton/test_hooks.py for each test role.
TEST_HOOKS = {"test_skip_tile": 1, "test_trap": 2, "test_spin": 3, "test_oob_write": 4}

# Flat axes, in manifest order. None where an axis does not apply to the op.
AXES = ("input_dtype", "weight_dtype", "block_m", "block_n", "block_k", "num_warps", "num_stages", "even_k",
        "add_inputs", "num_slices", "same_stride", "split_k", "group_size_m")
# The fused-MoE kernel's own axes, after AXES in its manifest entries (expand and
# shrink entries do not have them): the LoRA rank (its actual_rank constexpr), the
# routed pairs per token its x rows are shared by (token_mapping_factor: top_k for
# gate/up, 1 for down), whether it multiplies by the routing weight, and how many
# programs share one M block's N columns (NPID_FACTOR).
MOE_AXES = ("rank", "top_k", "mul_routed_weight", "npid_factor")
# vLLM's two-kernel fused-MoE LoRA (fully sharded adapters): one kernel launched as
# the shrink and then as the expand. Its rank is a runtime size, its K always masked.
SHARDED_MOE_OPS = ("fused_moe_shrink", "fused_moe_expand")
MOE_OPS = ("fused_moe", ) + SHARDED_MOE_OPS
# Expand and shrink's dual-stream axes, after AXES in their manifest entries: vLLM's
# USE_GDC (and launch_pdl, always equal to it), and the shrink's TAIL_NS (loraprobe's
# slow-tail producer for the PDL chain; null for the expand).
PDL_AXES = ("gdc", "tail_ns")
# The FP8 (w8a8) kernels' axis, after AXES in their manifest entries: the block-wise
# scales' group, group_n = group_k (vLLM's block quantization, weight_block_size
# [128, 128]), or 0 for per-tensor scales. Their input_dtype is fp8e4m3; weight_dtype
# is what the expand writes (its B is fp8e4m3) and fp8e4m3 for the shrink (A).
FP8_OPS = ("shrink_fp8", "expand_fp8")
FP8_AXES = ("scale_group", )
FP8 = "fp8e4m3"
FP8_SCALE_GROUPS = (0, 128)
# The 16-bit expand's width axes, after AXES and PDL_AXES in its manifest entries: the
# specialisation Triton's JIT gives the slice width N (and output_hs_ptr, which equals
# it) and the output's row stride (output_d0_stride, the sum of the slices' widths), by
# their values: 1 becomes the constant 1, a multiple of 16 is marked divisible by 16,
# any other value is passed as it is. vLLM's projections are multiples of 16 but for a
# model's narrow ones: Qwen3.6-35B-A3B's shared_expert_gate (N = 1) and in_proj_ba at
# --tp 4 (two slices of 8) or 8 (two of 4).
WIDTH_AXES = ("n_spec", "out_stride_spec")
EQUAL_TO_1 = "equal_to_1"
DIVISIBLE_BY_16 = "divisible_by_16"
UNSPECIALIZED = "unspecialized"
WIDTH_SPECS = (DIVISIBLE_BY_16, EQUAL_TO_1, UNSPECIALIZED)
_WIDTH_ID = {DIVISIBLE_BY_16: "16", EQUAL_TO_1: "1", UNSPECIALIZED: "any"}
# The spin between the shrink's launch_dependents and its store in the chain's producer
# variants: long against an expand's start-up (a few microseconds on an H200), short
# against a sweep.
CHAIN_TAIL_NS = 100_000
# Parameters a kernel reads that the previous grid of vLLM's dual-stream chain writes:
# the expand reads the shrink's rank buffer; the shrink reads x, which nothing in its
# launch chain produces (vLLM's shrink never waits).
PRODUCED = {"expand": ["input_ptr"], "shrink": []}


@dataclass(frozen=True)
class Variant:
    op: str  # "expand" | "shrink" | "fused_moe" | "fused_moe_shrink" | "fused_moe_expand" | FP8_OPS
    input_dtype: str
    weight_dtype: str
    block_m: int
    block_n: int
    block_k: int
    num_warps: int
    num_stages: int
    even_k: bool
    num_slices: int
    add_inputs: Optional[bool] = None  # expand only
    same_stride: Optional[bool] = None  # expand only (shrink slices always share strides)
    split_k: Optional[int] = None  # shrink only
    group_size_m: Optional[int] = None  # shrink only
    rank: Optional[int] = None  # fused_moe only, and MOE_AXES below
    top_k: Optional[int] = None
    mul_routed_weight: Optional[bool] = None
    npid_factor: Optional[int] = None
    gdc: Optional[bool] = None  # expand and shrink: USE_GDC and launch_pdl
    tail_ns: Optional[int] = None  # shrink: TAIL_NS
    scale_group: Optional[int] = None  # FP8_OPS only: group_n = group_k, 0 per tensor
    n_spec: Optional[str] = None  # expand only: WIDTH_AXES
    out_stride_spec: Optional[str] = None
    role: str = "kernel"
    sources: tuple = field(default=(), compare=False)  # which matrix rows asked for it

    @property
    def id(self) -> str:
        tiles = f"m{self.block_m}n{self.block_n}k{self.block_k}-w{self.num_warps}s{self.num_stages}"
        k = "evenk" if self.even_k else "maskk"
        if self.op == "expand":
            parts = ["expand", self.input_dtype, self.weight_dtype, tiles, k, "add" if self.add_inputs else "noadd",
                     f"s{self.num_slices}"]
            if self.num_slices > 1:
                parts.append("samestride" if self.same_stride else "perslice")
            if (self.n_spec, self.out_stride_spec) != (DIVISIBLE_BY_16, DIVISIBLE_BY_16):
                parts.append(f"n{_WIDTH_ID[self.n_spec]}")
                if self.out_stride_spec != self.n_spec:
                    parts.append(f"out{_WIDTH_ID[self.out_stride_spec]}")
        elif self.op == "fused_moe":
            parts = ["fusedmoe", self.weight_dtype, f"r{self.rank}", f"topk{self.top_k}",
                     "routedw" if self.mul_routed_weight else "noroutedw", tiles, f"p{self.npid_factor}", k,
                     "add" if self.add_inputs else "noadd"]
        elif self.op in SHARDED_MOE_OPS:
            parts = ["fusedmoe2", self.op.rsplit("_", 1)[1], self.weight_dtype, f"topk{self.top_k}",
                     "routedw" if self.mul_routed_weight else "noroutedw", f"s{self.num_slices}", tiles,
                     f"sk{self.split_k}", f"g{self.group_size_m}"]
        elif self.op == "expand_fp8":
            parts = ["expandfp8", self.weight_dtype, self._scales(), tiles, k, "add" if self.add_inputs else "noadd"]
        elif self.op == "shrink_fp8":
            parts = ["shrinkfp8", self._scales(), tiles, f"sk{self.split_k}", f"g{self.group_size_m}", k]
        else:
            parts = ["shrink", self.input_dtype, tiles, f"sk{self.split_k}", f"g{self.group_size_m}", k,
                     f"s{self.num_slices}"]
        if self.gdc:
            parts.append("gdc")
        if self.tail_ns:
            parts.append(f"tail{self.tail_ns // 1000}us")
        suffix = {
            "positive_control": "rawbits",
            "test_skip_tile": "hook-skiptile",
            "test_trap": "hook-trap",
            "test_spin": "hook-spin",
            "test_oob_write": "hook-oobwrite",
        }.get(self.role)
        if suffix:
            parts.append(suffix)
        return "-".join(parts)

    def _scales(self) -> str:
        return f"block{self.scale_group}" if self.scale_group else "tensor"

    def axes(self) -> dict:
        names = AXES + MOE_AXES if self.op in MOE_OPS else AXES + FP8_AXES if self.op in FP8_OPS else AXES + PDL_AXES
        if self.op == "expand":
            names += WIDTH_AXES
        return {name: getattr(self, name) for name in names}

    @property
    def block_r(self) -> int:
        """fused_moe's BLOCK_R: the rank padded to a power of two, at least 16
        (vLLM's `max(triton.next_power_of_2(rank), 16)`)."""
        return max(16, 1 << (self.rank - 1).bit_length())

    @property
    def cast_type(self) -> bool:
        # docs/problem.md: cast_W whenever the buffer dtype differs from W.
        # vLLM only ever meets the fp32 case (its buffer is fp32 or W).
        return self.op == "expand" and self.input_dtype != self.weight_dtype


def _expand(input_dtype, weight_dtype, bm, bn, bk, nw, ns, even_k, add, slices=1, same=True, role="kernel",
            gdc=False, widths=(DIVISIBLE_BY_16, DIVISIBLE_BY_16), source=""):
    return Variant("expand", input_dtype, weight_dtype, bm, bn, bk, nw, ns, even_k, slices, add_inputs=add,
                   same_stride=same, gdc=gdc, n_spec=widths[0], out_stride_spec=widths[1], role=role,
                   sources=(source, ))


def _shrink(dtype, bm, bn, bk, nw, ns, even_k, split_k, slices=1, group_size_m=None, gdc=False, tail_ns=0,
            source=""):
    return Variant("shrink", dtype, dtype, bm, bn, bk, nw, ns, even_k, slices, split_k=split_k,
                   group_size_m=SHRINK_GROUP_SIZE_M if group_size_m is None else group_size_m, gdc=gdc,
                   tail_ns=tail_ns, sources=(source, ))


def _expand_fp8(out_dtype, group, bn, ns, even_k, add, bk=None, source="expand-fp8"):
    # vLLM's expand knobs (get_lora_op_configs, as the 16-bit expand's) around its default.
    d = EXPAND_DEFAULT
    return Variant("expand_fp8", FP8, out_dtype, d["bm"], bn, bk or d["bk"], d["nw"], ns, even_k, 1, add_inputs=add,
                   same_stride=True, scale_group=group, sources=(source, ))


def _shrink_fp8(group, bk, split_k, ns, even_k, source="shrink-fp8"):
    # vLLM's shrink knobs for either batch regime; the output is the fp32 buf.
    return Variant("shrink_fp8", FP8, FP8, 32, 16, bk, 4, ns, even_k, 1, split_k=split_k,
                   group_size_m=SHRINK_GROUP_SIZE_M, scale_group=group, sources=(source, ))


def _fused_moe(dtype, rank, proj, bm, bn, bk, nw, ns, npid, even_k=True, add=True, source=""):
    # proj "w13" (gate/up: x has a row per token, shared by its top_k pairs) or
    # "w2" (down: x has a row per pair, scaled by its routing weight).
    top_k = MOE_TOP_K if proj == "w13" else 1
    return Variant("fused_moe", dtype, dtype, bm, bn, bk, nw, ns, even_k, None, add_inputs=add, rank=rank,
                   top_k=top_k, mul_routed_weight=proj == "w2", npid_factor=npid, sources=(source, ))


def _sharded_moe(op, dtype, proj, bm, bn, bk, nw, ns, split_k=1, source=""):
    # proj as _fused_moe's. The shrink writes the rank cache (x rows shared by a token's
    # pairs for gate/up); the expand reads it (one row per pair), adds into out, and
    # applies the routing weight for down.
    slices = 2 if proj == "w13" else 1
    routed = proj == "w2"
    shrink = op == "fused_moe_shrink"
    return Variant(op, dtype, dtype, bm, bn, bk, nw, ns, False, slices, add_inputs=None if shrink else True,
                   split_k=split_k, group_size_m=SHARDED_MOE["group_size_m"],
                   top_k=(1 if routed else MOE_TOP_K) if shrink else 1, mul_routed_weight=routed and not shrink,
                   sources=(source, ))


EXPAND_DTYPES = [(i, w) for i in ("fp32", "bf16", "fp16") for w in ("bf16", "fp16")]
# fp32 -> W is vLLM's lora_linear path (the bug); W -> W is the plain expand.
MULTI_SLICE_DTYPES = [("fp32", "bf16"), ("fp32", "fp16"), ("bf16", "bf16"), ("fp16", "fp16")]
TRUE_FALSE = (True, False)

# vLLM's defaults: configs/vllm/defaults.json, the one source loraprobe's plan and its
# ptxas matrix read too (tests/kernels/test_vllm_defaults.py checks they agree).
# Expand: block_m 64, block_n 128 for one slice (64 for more), num_warps 4,
# num_stages 2; block_k is 32 in some vLLM versions and 16 in others (see
# kernels/README.md), so both are built.
VLLM_DEFAULTS = json.loads((Path(__file__).resolve().parents[2] / "configs" / "vllm" / "defaults.json").read_text())


def _knobs(cfg: dict) -> dict:
    return dict(bm=cfg["block_m"], bn=cfg["block_n"], bk=cfg["block_k"], nw=cfg["num_warps"], ns=cfg["num_stages"])


EXPAND_DEFAULT = _knobs(VLLM_DEFAULTS["expand"]["one_slice"])
EXPAND_MULTI_SLICE_DEFAULT = _knobs(VLLM_DEFAULTS["expand"]["more_slices"])
EXPAND_BLOCK_K_NEWER = VLLM_DEFAULTS["expand"]["block_k_newer"]
# Shrink: block_m 32, block_n 16, num_warps 4, num_stages 2, group_size_m 8;
# block_k 256 / split_k 64 for batch < 128, block_k 32 / split_k 8 otherwise.
_SHRINK = VLLM_DEFAULTS["shrink"]
SHRINK_DEFAULTS = {
    f"batch<{_SHRINK['small_batch_below']}": dict(bk=_SHRINK["small_batch"]["block_k"], sk=_SHRINK["small_batch"]["split_k"]),
    f"batch>={_SHRINK['small_batch_below']}": dict(bk=_SHRINK["large_batch"]["block_k"], sk=_SHRINK["large_batch"]["split_k"]),
}
SHRINK_GROUP_SIZE_M = _SHRINK["group_size_m"]
# Fused-MoE LoRA fast path: block_n 128, 3 stages, 4 warps (8 when NPID_FACTOR > 1),
# block_k 128 (64 for a narrow K with few pairs per expert), block_m the MoE
# layer's (64 by default, 16 for small batches in vLLM's default MoE configs).
FUSED_MOE = VLLM_DEFAULTS["fused_moe"]
# The gate/up kernel's token_mapping_factor is top_k, a constexpr: the sets carry
# top_k 8 (Qwen3.5/3.6-35B-A3B, Qwen3-30B-A3B: num_experts_per_tok 8).
MOE_TOP_K = 8
MOE_RANKS = (16, 32, 64, 128)
# The two-kernel path's knobs: the MoE layer's config (vLLM's default bf16 config:
# block_m 64, block_n 64, block_k 32, group_size_m 8, 4 warps, 3 stages), with the
# shrink's block_n min(64, next_pow2(rank)) and the expand's block_k
# max(16, min(32, next_pow2(rank))) (try_get_optimal_moe_lora_config).
SHARDED_MOE = FUSED_MOE["sharded"]


def build_matrix() -> list:
    """Every variant, deduplicated by id (a variant asked for by several rows
    keeps the list of rows in `sources`), sorted by id."""
    rows = []
    d = EXPAND_DEFAULT

    for (i, w), bn, ns, nw, even, add in product(EXPAND_DTYPES, (16, 32, 64, 128, 256), (1, 2, 3, 4), (4, 8),
                                                 TRUE_FALSE, TRUE_FALSE):
        rows.append(_expand(i, w, 64, bn, 32, nw, ns, even, add, source="expand-single-slice"))

    # Multi-slice as vLLM runs it: EVEN_K (ranks are multiples of block_k) and
    # ADD_INPUTS (the LoRA delta is added into the base layer output).
    for slices, same, bn, ns, (i, w) in product((2, 3), TRUE_FALSE, (32, 64, 128), (1, 2, 3), MULTI_SLICE_DTYPES):
        rows.append(_expand(i, w, 64, bn, 32, 4, ns, True, True, slices, same, source="expand-multi-slice"))
    # vLLM's newer multi-slice default: block_n 64, block_k 16.
    m = EXPAND_MULTI_SLICE_DEFAULT
    for slices, same, (i, w) in product((2, 3), TRUE_FALSE, [("fp32", "bf16"), ("bf16", "bf16")]):
        rows.append(_expand(i, w, m["bm"], m["bn"], EXPAND_BLOCK_K_NEWER, m["nw"], m["ns"], True, True, slices, same,
                            source="expand-multi-slice-default"))

    # What a model preset plans (sweep --model): vLLM's default expand for every
    # projection shape (1 to 3 slices, shared or per-slice strides), ranks below block_k
    # (EVEN_K false) too, fp32 and bf16 input, each with the two field remedies that
    # --remedies runs beside it (block_n 32, num_stages 1).
    for slices, same, (i, w), even in product((1, 2, 3), TRUE_FALSE, [("fp32", "bf16"), ("bf16", "bf16")], TRUE_FALSE):
        if slices == 1 and not same:
            continue  # one slice has one stride
        k = d if slices == 1 else m
        for bn, ns in ((k["bn"], k["ns"]), (32, k["ns"]), (k["bn"], 1)):
            rows.append(_expand(i, w, k["bm"], bn, k["bk"], k["nw"], ns, even, True, slices, same,
                                source="expand-model"))
            # A narrow projection's widths (WIDTH_AXES), as the JIT specialises them: one
            # slice of width 1 or of any other width (its row stride is its width); two
            # same-width slices narrower than 16, whose row stride (their sum) is a
            # multiple of 16 or not. No preset has a narrow three-slice projection.
            if not same:
                continue
            narrow = {1: [(EQUAL_TO_1, EQUAL_TO_1), (UNSPECIALIZED, UNSPECIALIZED)],
                      2: [(UNSPECIALIZED, DIVISIBLE_BY_16), (UNSPECIALIZED, UNSPECIALIZED)],
                      3: []}[slices]
            for widths in narrow:
                rows.append(_expand(i, w, k["bm"], bn, k["bk"], k["nw"], ns, even, True, slices, same, widths=widths,
                                    source="expand-model"))

    # Tile shape neighbours of the default, one axis at a time.
    for (i, w), even, add in product(EXPAND_DTYPES, TRUE_FALSE, TRUE_FALSE):
        for bm in (16, 32):
            rows.append(_expand(i, w, bm, d["bn"], d["bk"], d["nw"], d["ns"], even, add, source="expand-block-m"))
        for bk in (16, 64):
            rows.append(_expand(i, w, d["bm"], d["bn"], bk, d["nw"], d["ns"], even, add, source="expand-block-k"))

    for dt, bn, ns, sk, even, bk in product(("bf16", "fp16"), (16, 32, 64), (1, 2, 3), (1, 8, 64), TRUE_FALSE,
                                            (32, 256)):
        rows.append(_shrink(dt, 32, bn, bk, 4, ns, even, sk, source="shrink-grid"))
    for (name, cfg), dt, even in product(SHRINK_DEFAULTS.items(), ("bf16", "fp16"), TRUE_FALSE):
        rows.append(_shrink(dt, 32, 16, cfg["bk"], 4, 2, even, cfg["sk"], source=f"shrink-default-{name}"))
    # Multi-slice at both defaults, EVEN_K or not: a model's hidden width is seldom a
    # multiple of the small-batch block_k x split_k (256 x 64).
    for (name, cfg), dt, slices, even in product(SHRINK_DEFAULTS.items(), ("bf16", "fp16"), (2, 3), TRUE_FALSE):
        rows.append(_shrink(dt, 32, 16, cfg["bk"], 4, 2, even, cfg["sk"], slices,
                            source=f"shrink-default-{name}-multi-slice"))

    # vLLM's dual-stream path (VLLM_LORA_ENABLE_DUAL_STREAM on sm_90): USE_GDC and
    # launch_pdl on, the expand without ADD_INPUTS (its tuned file is _EXPAND_FALSE), at
    # vLLM's one- and multi-slice defaults (both block_k of the one-slice default), with
    # the remedies measured beside them: 1 stage, and block_n 32 for the register hazard.
    # The shrink at its two default regimes, as the chain's producer (with and without
    # loraprobe's slow tail).
    for (i, w), bk, ns in product([("fp32", "bf16"), ("fp32", "fp16"), ("bf16", "bf16")], (d["bk"], EXPAND_BLOCK_K_NEWER),
                                  (1, d["ns"])):
        rows.append(_expand(i, w, d["bm"], d["bn"], bk, d["nw"], ns, True, False, gdc=True, source="expand-dual-stream"))
    for (i, w) in [("fp32", "bf16"), ("bf16", "bf16")]:
        rows.append(_expand(i, w, d["bm"], 32, d["bk"], d["nw"], d["ns"], True, False, gdc=True,
                            source="expand-dual-stream"))
    for slices, same, (i, w), ns in product((2, 3), TRUE_FALSE, [("fp32", "bf16"), ("bf16", "bf16")], (1, m["ns"])):
        rows.append(_expand(i, w, m["bm"], m["bn"], EXPAND_BLOCK_K_NEWER, m["nw"], ns, True, False, slices, same,
                            gdc=True, source="expand-dual-stream"))
    for (name, cfg), dt, slices, tail in product(SHRINK_DEFAULTS.items(), ("bf16", "fp16"), (1, 2, 3), (0, CHAIN_TAIL_NS)):
        rows.append(_shrink(dt, 32, 16, cfg["bk"], 4, 2, True, cfg["sk"], slices, gdc=True, tail_ns=tail,
                            source=f"shrink-dual-stream-{name}"))

    # Fused-MoE LoRA as vLLM's fast path launches it, for gate/up and down, every
    # rank it takes, block_m 16 and 64, one program per M block or two or four
    # sharing its N columns (2: the down projection of a 128-expert model at a few
    # hundred tokens); then one axis at a time around rank 64, block_m 64.
    f = FUSED_MOE
    # block_m is the MoE layer's BLOCK_SIZE_M (vLLM's get_default_config: 16, 32, 64 or
    # 128 by the batch); NPID_FACTOR up to 4 is what the presets' projections reach.
    for proj, rank, bm, npid in product(("w13", "w2"), MOE_RANKS, (16, 32, f["block_m"], 128), (1, 2, 3, 4)):
        nw = f["num_warps"] if npid == 1 else f["num_warps_split_n"]
        rows.append(_fused_moe("bf16", rank, proj, bm, f["block_n"], f["block_k_wide"], nw, f["num_stages"], npid,
                               source="fused-moe-fast-path"))
    # The down projection's K is the experts' width per rank (Qwen3-30B-A3B at --tp 8:
    # 768 / 8 = 96): block_k 64 for a narrow K with few pairs per expert, and K not a
    # multiple of block_k, at every rank and block_m (NPID_FACTOR 1: a model's grid is
    # wide once vLLM's max_loras + 1 adapter programs multiply it).
    for rank, bm, (bk, even) in product(MOE_RANKS, (16, 32, f["block_m"], 128),
                                        ((f["block_k_wide"], False), (f["block_k_narrow"], True),
                                         (f["block_k_narrow"], False))):
        rows.append(_fused_moe("bf16", rank, "w2", bm, f["block_n"], bk, f["num_warps"], f["num_stages"], 1,
                               even_k=even, source="fused-moe-narrow-k"))
    for proj in ("w13", "w2"):
        base = dict(dtype="bf16", rank=64, proj=proj, bm=f["block_m"], bn=f["block_n"], bk=f["block_k_wide"],
                    nw=f["num_warps"], ns=f["num_stages"], npid=1)
        neighbours = [dict(bk=f["block_k_narrow"]), dict(ns=2), dict(ns=4), dict(bn=64), dict(bn=256), dict(bm=32),
                      dict(bm=128), dict(dtype="fp16"), dict(add=False), dict(even_k=False),
                      dict(npid=f["max_npid_factor"], nw=f["num_warps_split_n"])]
        for change in neighbours:
            rows.append(_fused_moe(**{**base, **change}, source="fused-moe-neighbours"))

    # The two-kernel path: shrink and expand, gate/up and down, bf16 and fp16 (whose
    # cast to bf16 before tl.dot happens in registers), rank 16 and 64, 2 and 3 stages.
    sh = SHARDED_MOE
    for dtype, proj, rank, ns in product(("bf16", "fp16"), ("w13", "w2"), (16, 64), (2, 3)):
        rows.append(_sharded_moe("fused_moe_shrink", dtype, proj, sh["block_m"], min(sh["block_n"], rank),
                                 sh["block_k"], sh["num_warps"], ns, source="fused-moe-sharded"))
        rows.append(_sharded_moe("fused_moe_expand", dtype, proj, sh["block_m"], sh["block_n"],
                                 max(16, min(sh["block_k"], rank)), sh["num_warps"], ns, source="fused-moe-sharded"))

    # vLLM's FP8 (w8a8) LoRA shrink and expand (lora_shrink_fp8_op.py, lora_expand_fp8_op.py),
    # per-tensor and block-wise scales, at vLLM's configs and the expand's block_n and
    # stage neighbours (block_n 128 with 2 stages is where the 16-bit expand's hazard is).
    for w, group, bn, ns, even, add in product(("bf16", "fp16"), FP8_SCALE_GROUPS, (32, 64, 128, 256), (1, 2, 3),
                                               TRUE_FALSE, TRUE_FALSE):
        rows.append(_expand_fp8(w, group, bn, ns, even, add))
    # split_k 1 too: vLLM's default under VLLM_BATCH_INVARIANT (--vllm-batch-invariant).
    for group, cfg, split, ns, even in product(FP8_SCALE_GROUPS, SHRINK_DEFAULTS.values(), ("vllm", 1), (1, 2, 3),
                                               TRUE_FALSE):
        rows.append(_shrink_fp8(group, cfg["bk"], cfg["sk"] if split == "vllm" else 1, ns, even))

    # Controls and test hooks, all at the default expand config.
    rows.append(_expand("fp32", "bf16", d["bm"], d["bn"], d["bk"], d["nw"], d["ns"], True, True,
                        role="positive_control", source="positive-control"))
    for role in TEST_HOOKS:
        # test_skip_tile without ADD_INPUTS: loraprobe poisons y before the
        # launch and counts what stays poisoned, which it cannot do when the
        # kernel reads y back. The other hooks fault or hang either way.
        add = role != "test_skip_tile"
        rows.append(_expand("bf16", "bf16", d["bm"], d["bn"], d["bk"], d["nw"], d["ns"], True, add, role=role,
                            source=role.replace("_", "-")))

    negative_id = _expand("bf16", "bf16", d["bm"], d["bn"], d["bk"], d["nw"], d["ns"], True, True).id
    by_id = {}
    for v in rows:
        if v.role == "kernel" and v.id == negative_id:
            v = Variant(**{**v.__dict__, "role": "negative_control"})
        if v.id in by_id:
            old = by_id[v.id]
            v = Variant(**{**old.__dict__, "sources": tuple(sorted(set(old.sources + v.sources)))})
        by_id[v.id] = v
    return [by_id[k] for k in sorted(by_id)]


# The matrices a set can be built with. "full" is the whole matrix above (the
# Triton 3.6.0 set); "upgrade" is what the sets of the newer Tritons ship: vLLM's
# defaults and their neighbours, for expand and shrink, plus the controls and test
# hooks, which is what configs/default.json, seed-48590, ci-gate and upgrade-gate
# plan (kernels/README.md lists it).
MATRICES = ("full", "upgrade")


def in_upgrade_matrix(v: Variant) -> bool:
    """Whether the "upgrade" matrix keeps v: bf16 weights; every fused-MoE row; the dual-stream
    (gdc) rows; every FP8 shrink and the FP8 expands that write bf16; expand with fp32 or
    bf16 input at block_m 64, 4 warps, block_k 32 (16 at block_n 128), block_n
    32..256, 1-3 stages, and the multi-slice defaults (2 and 3 slices, block_n
    64, block_k 16 or 32, 2 stages), and every expand-model row (what sweep --model
    plans); shrink at block_m 32 with
    vLLM's (block_k, split_k) pairs, block_n 16..64, 1-3 stages; every control and
    hook."""
    if v.role != "kernel":
        return True
    if v.gdc:
        return v.weight_dtype == "bf16"  # the dual-stream rows
    if v.op == "fused_moe":
        return v.weight_dtype == "bf16"
    if v.op in SHARDED_MOE_OPS:
        return True  # fp16 is the case that casts in registers
    if v.op == "expand_fp8":
        return v.weight_dtype == "bf16" and v.num_stages <= 3
    if v.op == "shrink_fp8":
        return True
    if v.weight_dtype != "bf16" or v.num_warps != 4:
        return False
    if v.op == "expand":
        if "expand-model" in v.sources:
            return True
        if v.input_dtype not in ("fp32", "bf16") or v.block_m != 64 or v.num_stages > 3:
            return False
        if v.num_slices > 1:
            # vLLM's multi-slice defaults: block_n 64 with block_k 16 (newer) or 32 (older), 2 stages.
            return v.block_n == 64 and v.num_stages == 2 and v.block_k in (16, 32) and v.add_inputs and v.even_k
        return v.block_n in (32, 64, 128, 256) and (v.block_k == 32 or (v.block_k == 16 and v.block_n == 128))
    pairs = {(cfg["bk"], cfg["sk"]) for cfg in SHRINK_DEFAULTS.values()}
    return (v.block_m == 32 and (v.block_k, v.split_k) in pairs and v.block_n in (16, 32, 64)
            and v.num_stages <= 3 and (v.num_slices == 1 or any(s.startswith("shrink-default") for s in v.sources)))


def select_matrix(name: str) -> list:
    """The variants of matrix `name` (one of MATRICES), sorted by id."""
    variants = build_matrix()
    if name == "upgrade":
        return [v for v in variants if in_upgrade_matrix(v)]
    if name != "full":
        raise ValueError(f"unknown matrix {name!r}; matrices: {', '.join(MATRICES)}")
    return variants


def _render(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return "null" if value is None else str(value)


def parse_filter(text: str) -> list:
    """`--only` syntax: comma-separated terms, all of which must match. A
    term `key=value` compares an axis (or id, op, role) by its JSON
    rendering (true/false/null, plain integers); any other term is a
    substring of the id."""
    terms = []
    for raw in text.split(","):
        raw = raw.strip()
        if not raw:
            raise ValueError(f"empty term in filter {text!r}")
        if "=" in raw:
            key, value = (s.strip() for s in raw.split("=", 1))
            keys = AXES + MOE_AXES + PDL_AXES + FP8_AXES + WIDTH_AXES + ("id", "op", "role")
            if key not in keys:
                raise ValueError(f"unknown filter key {key!r}; keys: {', '.join(keys)}")
            terms.append((key, value))
        else:
            terms.append((None, raw))
    return terms


def matches(variant: Variant, terms: list) -> bool:
    for key, value in terms:
        if key is None:
            if value not in variant.id:
                return False
        elif _render(getattr(variant, key)) != value:
            return False
    return True
