#!/usr/bin/env python3
"""Fidelity of loraprobe's kernels to vLLM's: the same configurations of our Triton
kernels (the embedded sets) and of vLLM's own (its @triton.jit functions lifted from a
vLLM wheel by scripts/kernelgen/vllm_source.py, compiled through scripts/gen_kernels.py
--vllm-ops with the same Triton, ABI and specialisation), compared on what loraprobe's
checks read in the PTX: the wgmma instructions and how many take A from registers,
the wgmma.wait_group sequence, the global loads before the first griddepcontrol.wait,
the mma.sync shapes, and ptxas's register count.

    scripts/fidelity_vllm.py                         # vLLM 0.34.0, every embedded Triton
    scripts/fidelity_vllm.py --vllm-ops DIR --triton 3.6.0

Downloads the vLLM wheel (about 340 MB, `pip download vllm==VERSION --no-deps`) into a
cache folder unless --vllm-ops names an unpacked vllm/lora/ops/triton_ops. Needs no GPU
and no vLLM install; not a test (the wheel is large): a script to run when vLLM or
Triton changes. Prints a table (family x Triton: same, or what differs) and exits 1
when any configuration differs or fails to build.
"""

import argparse
import json
import lzma
import os
import re
import subprocess
import sys
import tempfile
import zipfile

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SETS = os.path.join(REPO, "kernels", "sets")

# One family each: what the sweep and the checks rest on, at vLLM's defaults (and the
# masked-K form, whose loop vLLM writes with three branches and ours with two).
FAMILIES = {
    "expand fp32 (hazard)": ["expand-fp32-bf16-m64n128k32-w4s2-evenk-add-s1",
                             "expand-fp32-bf16-m64n128k32-w4s2-maskk-add-s1"],
    "expand bf16": ["expand-bf16-bf16-m64n128k32-w4s2-evenk-add-s1"],
    "expand multi-slice": ["expand-fp32-bf16-m64n64k16-w4s2-evenk-add-s3-samestride"],
    # A model's narrow projections: N folded to 1 (shared_expert_gate), two slices of 8.
    "expand narrow": ["expand-fp32-bf16-m64n128k32-w4s2-evenk-add-s1-n1",
                      "expand-fp32-bf16-m64n64k32-w4s2-evenk-add-s2-samestride-nany-out16"],
    "expand dual-stream": ["expand-fp32-bf16-m64n128k32-w4s2-evenk-noadd-s1-gdc"],
    "shrink": ["shrink-bf16-m32n16k256-w4s2-sk64-g8-evenk-s1", "shrink-bf16-m32n16k32-w4s2-sk8-g8-maskk-s1"],
    "shrink dual-stream": ["shrink-bf16-m32n16k32-w4s2-sk8-g8-evenk-s1-gdc"],
    "fused_moe": ["fusedmoe-bf16-r64-topk8-noroutedw-m64n128k128-w4s3-p1-evenk-add",
                  "fusedmoe-bf16-r64-topk1-routedw-m64n128k128-w4s3-p1-evenk-add"],
    "fused_moe two-kernel": ["fusedmoe2-shrink-bf16-topk8-noroutedw-s2-m64n64k32-w4s3-sk1-g8",
                             "fusedmoe2-expand-bf16-topk1-noroutedw-s2-m64n64k32-w4s3-sk1-g8"],
    "expand_fp8": ["expandfp8-bf16-tensor-m64n128k32-w4s2-evenk-add",
                   "expandfp8-bf16-block128-m64n128k32-w4s2-maskk-add"],
    "shrink_fp8": ["shrinkfp8-tensor-m32n16k32-w4s2-sk8-g8-evenk",
                   "shrinkfp8-block128-m32n16k256-w4s2-sk64-g8-evenk"],
}


def read_set(folder):
    """{id: (manifest entry, PTX text)} of a set folder (manifest.json.xz, set.pack.xz)."""
    with lzma.open(os.path.join(folder, "manifest.json.xz")) as f:
        manifest = json.load(f)
    with lzma.open(os.path.join(folder, "set.pack.xz")) as f:
        pack = f.read()
    out = {}
    for v in manifest["variants"]:
        ref = v["files"].get("ptx")
        ptx = pack[ref["offset"]:ref["offset"] + ref["bytes"]].decode() if ref and v["status"] == "ok" else None
        out[v["id"]] = (v, ptx)
    return out


def features(entry, ptx):
    """What the checks read, from one PTX and its manifest entry."""
    lines = [line.strip() for line in ptx.splitlines()]
    wgmma = [line for line in lines if line.startswith("wgmma.mma_async")]
    first_wait = next((i for i, line in enumerate(lines) if line.startswith("griddepcontrol.wait")), None)
    early = None
    if first_wait is not None:
        early = sum(1 for line in lines[:first_wait] if line.startswith(("ld.global", "cp.async")))
    return {
        "wgmma": len(wgmma),
        # A from registers: the A operand is a brace list, not a descriptor.
        "register_a": sum(1 for line in wgmma if re.search(r"\}\s*,\s*\{", line)),
        "waits": " ".join(line.split()[-1].rstrip(";") for line in lines if line.startswith("wgmma.wait_group")),
        "loads_before_wait": early,
        "mma_sync": " ".join(sorted({line.split()[0] for line in lines if line.startswith("mma.sync")})),
        "registers": entry.get("resource_usage", {}).get("registers"),
    }


def vllm_ops_dir(version, cache):
    """vllm/lora/ops/triton_ops of the vLLM wheel `version`, downloaded once into `cache`."""
    target = os.path.join(cache, f"vllm-{version}")
    ops = os.path.join(target, "vllm", "lora", "ops", "triton_ops")
    if os.path.isdir(ops):
        return ops
    os.makedirs(cache, exist_ok=True)
    subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--disable-pip-version-check",
                    "-d", cache, f"vllm=={version}"], check=True)
    wheel = next(os.path.join(cache, n) for n in os.listdir(cache) if n.startswith(f"vllm-{version}-") and
                 n.endswith(".whl"))
    with zipfile.ZipFile(wheel) as z:
        for name in z.namelist():
            if name.startswith("vllm/lora/ops/triton_ops/") and name.endswith(".py"):
                z.extract(name, target)
    return ops


def compare_triton(version, ops, work, log):
    """[(family, verdict)] for one Triton: same, what differs, or why it did not build."""
    ours = read_set(os.path.join(SETS, f"triton-{version}"))
    ids = [i for family in FAMILIES.values() for i in family if i in ours]
    ids_file = os.path.join(work, f"ids-{version}.txt")
    with open(ids_file, "w", encoding="utf-8") as f:
        f.write("\n".join(ids) + "\n")
    out_dir = os.path.join(work, f"vllm-{version}")
    built = subprocess.run([sys.executable, os.path.join(REPO, "scripts", "gen_kernels.py"), "--triton", version,
                            "--stack", "--ids", ids_file, "--vllm-ops", ops, "--out", out_dir],
                           capture_output=True, text=True)
    log.write(built.stdout + built.stderr)
    theirs = read_set(out_dir) if built.returncode == 0 else {}
    rows = []
    for family, family_ids in FAMILIES.items():
        present = [i for i in family_ids if i in ours]
        if not present:
            rows.append((family, "not in this set"))
            continue
        differences = []
        for i in present:
            if i not in theirs or theirs[i][1] is None:
                differences.append(f"{i}: vLLM's did not build (see the log)")
                continue
            a, b = features(*ours[i]), features(*theirs[i])
            for key in a:
                if a[key] != b[key]:
                    differences.append(f"{i}: {key} ours {a[key]} vLLM {b[key]}")
        rows.append((family, "same" if not differences else "; ".join(differences)))
    return rows


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--vllm-version", default="0.34.0")
    p.add_argument("--vllm-ops", help="an unpacked vllm/lora/ops/triton_ops (no download)")
    p.add_argument("--triton", action="append", help="Triton versions (default: every embedded set)")
    p.add_argument("--cache", default=os.path.join(os.path.expanduser("~"), ".cache", "loraprobe", "vllm"))
    args = p.parse_args(argv)
    versions = args.triton or sorted(n.split("-", 1)[1] for n in os.listdir(SETS) if n.startswith("triton-"))
    ops = args.vllm_ops or vllm_ops_dir(args.vllm_version, args.cache)
    failed = False
    with tempfile.TemporaryDirectory(prefix="lp-fidelity-") as work, \
            open(os.path.join(work, "build.log"), "w", encoding="utf-8") as log:
        print(f"| family | {' | '.join('Triton ' + v for v in versions)} |")
        print("|---" * (len(versions) + 1) + "|")
        table = {v: dict(compare_triton(v, ops, work, log)) for v in versions}
        for family in FAMILIES:
            cells = [table[v][family] for v in versions]
            failed = failed or any(c not in ("same", "not in this set") for c in cells)
            print(f"| {family} | {' | '.join(cells)} |")
        if failed:
            log.flush()
            sys.stderr.write(f"fidelity_vllm: differences; vLLM's kernels from {ops}\n")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
