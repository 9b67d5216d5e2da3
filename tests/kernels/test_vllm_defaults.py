#!/usr/bin/env python3
"""vLLM's defaults have one source, configs/vllm/defaults.json; this checks that the
kernel side agrees with it (tests/plan/vllm_defaults_test.cpp checks the plan and
the ptxas matrix):
  - scripts/kernelgen/variants.py builds its matrix around the file's numbers;
  - every shipped kernel set (kernels/sets/triton-*/) has an ok variant for each
    default (expand with one and more slices, fp32 and bf16 input; shrink at both
    batch sizes);
  - the full matrix and the set built from it (Triton 3.6.0) have every default row
    of the ptxas matrix (the "upgrade" sets ship 1-3 stages only; inspect names the
    rows they lack).

    test_vllm_defaults.py REPO_ROOT
"""

import glob
import itertools
import json
import lzma
import os
import sys


def expand_rows(group, common):
    lists = ["block_k", "num_slices", "block_n", "num_stages"]
    fixed = {k: v for k, v in group.items() if k not in lists}
    for values in itertools.product(*(group[k] for k in lists)):
        yield {**common, **fixed, **dict(zip(lists, values))}


def main(argv):
    root = argv[0]
    sys.path.insert(0, os.path.join(root, "scripts"))
    from kernelgen import variants  # noqa: E402  (the generator, as gen_kernels.py imports it)

    with open(os.path.join(root, "configs", "vllm", "defaults.json")) as f:
        d = json.load(f)
    errors = []
    one, more, shrink = d["expand"]["one_slice"], d["expand"]["more_slices"], d["shrink"]
    # The generator's constants are the file's.
    if variants.EXPAND_DEFAULT != dict(bm=one["block_m"], bn=one["block_n"], bk=one["block_k"],
                                       nw=one["num_warps"], ns=one["num_stages"]):
        errors.append(f"variants.EXPAND_DEFAULT {variants.EXPAND_DEFAULT} is not configs/vllm/defaults.json's")
    pairs = {(c["bk"], c["sk"]) for c in variants.SHRINK_DEFAULTS.values()}
    wanted_pairs = {(shrink[k]["block_k"], shrink[k]["split_k"]) for k in ("small_batch", "large_batch")}
    if pairs != wanted_pairs:
        errors.append(f"variants.SHRINK_DEFAULTS {pairs} is not {wanted_pairs}")

    wanted = []
    for cfg, slices in ((one, 1), (more, 2), (more, 3)):
        for input_dtype in ("fp32", "bf16"):
            wanted.append(("expand", {"input_dtype": input_dtype, "weight_dtype": "bf16", "num_slices": slices,
                                      **{k: cfg[k] for k in ("block_m", "block_n", "block_k", "num_warps",
                                                             "num_stages")}}))
    for key in ("small_batch", "large_batch"):
        cfg = shrink[key]
        wanted.append(("shrink", {"input_dtype": "bf16", "weight_dtype": "bf16", "group_size_m": shrink["group_size_m"],
                                  **{k: cfg[k] for k in ("block_m", "block_n", "block_k", "num_warps", "num_stages",
                                                         "split_k")}}))
    # The fused-MoE fast path: gate/up and down at every rank it takes, NPID_FACTOR 1
    # (4 warps) and above (8 warps), block_k 128, at its default block_m.
    f = d["fused_moe"]
    if variants.FUSED_MOE is not f and variants.FUSED_MOE != f:
        errors.append("variants.FUSED_MOE is not configs/vllm/defaults.json's fused_moe")
    for rank in variants.MOE_RANKS:
        if rank > f["max_rank"]:
            errors.append(f"variants.MOE_RANKS has rank {rank}, over the fast path's max_rank {f['max_rank']}")
        for routed, npid in itertools.product((False, True), (1, 2)):
            wanted.append(("fused_moe", {"weight_dtype": "bf16", "rank": rank, "mul_routed_weight": routed,
                                         "top_k": 1 if routed else variants.MOE_TOP_K, "block_m": f["block_m"],
                                         "block_n": f["block_n"], "block_k": f["block_k_wide"],
                                         "num_stages": f["num_stages"], "npid_factor": npid,
                                         "num_warps": f["num_warps"] if npid == 1 else f["num_warps_split_n"]}))
    # The two-kernel path (fully sharded adapters) at the MoE layer's default config, in
    # both dtypes: fp16 is the one that casts to bf16 in registers before tl.dot.
    sh = f["sharded"]
    if variants.SHARDED_MOE != sh:
        errors.append("variants.SHARDED_MOE is not configs/vllm/defaults.json's fused_moe.sharded")
    for dtype, rank in itertools.product(("bf16", "fp16"), (16, 64)):
        common = {"weight_dtype": dtype, "block_m": sh["block_m"], "num_warps": sh["num_warps"],
                  "num_stages": sh["num_stages"], "group_size_m": sh["group_size_m"]}
        wanted.append(("fused_moe_shrink", {**common, "block_n": min(sh["block_n"], rank), "block_k": sh["block_k"]}))
        wanted.append(("fused_moe_expand", {**common, "block_n": sh["block_n"],
                                            "block_k": max(16, min(sh["block_k"], rank))}))
    matrix = d["ptxas_matrix"]
    matrix_rows = []
    for group in matrix["rows"]:
        for row in expand_rows(group, matrix["common"]):
            matrix_rows.append((row["op"], {k: v for k, v in row.items() if k != "op"}))

    def has(candidates, op, axes):
        return any(c["op"] == op and all(c.get(k) == v for k, v in axes.items()) for c in candidates)

    upgrade = [v.axes() | {"op": v.op} for v in variants.select_matrix("upgrade")]
    full = [v.axes() | {"op": v.op} for v in variants.select_matrix("full")]
    folders = sorted(glob.glob(os.path.join(root, "kernels", "sets", "triton-*")))
    sets = {}
    for folder in folders:
        with lzma.open(os.path.join(folder, "manifest.json.xz")) as f:
            m = json.loads(f.read())
        sets[os.path.basename(folder)] = [v["axes"] | {"op": v["op"]} for v in m["variants"] if v["status"] == "ok"]
    for op, axes in wanted:
        if not has(upgrade, op, axes):
            errors.append(f"the upgrade matrix of variants.py has no {op} {axes}")
        for name, candidates in sets.items():
            if not has(candidates, op, axes):
                errors.append(f"kernels/sets/{name} has no ok {op} {axes}")
    for op, axes in matrix_rows:
        if not has(full, op, axes):
            errors.append(f"the full matrix of variants.py has no ptxas-matrix row {op} {axes}")
        if "triton-3.6.0" in sets and not has(sets["triton-3.6.0"], op, axes):
            errors.append(f"kernels/sets/triton-3.6.0 has no ok ptxas-matrix row {op} {axes}")
    for e in errors:
        print(e)
    print(f"checked {len(wanted)} defaults and {len(matrix_rows)} ptxas-matrix rows against variants.py and "
          f"{len(sets)} kernel sets: "
          f"{'FAILED' if errors else 'ok'}")
    return 1 if errors or not sets else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
