#!/usr/bin/env python3
"""Joins what the CPU knows of each race-control cubin into one JSON file:
the kernel's knobs (D queued wgmmas, DIST filler instructions), the ptxas that
built it, whether ptxas serialised the wgmmas itself (warning C7513), the
findings of `loraprobe inspect`, and, from the SASS, how many instructions the
first and the last write of the register-A HGMMA's A registers come after it
(counted around the loop's back-edge).

    describe_cubins.py OUT_DIR        reads OUT_DIR/inspect.json and OUT_DIR/<version>/*.cubin,
                                      writes OUT_DIR/cubins.json
Needs nvdisasm (NVDISASM, else .tools/nvdisasm/nvdisasm). Standard library only.
"""

import json
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
LINE = re.compile(r"/\*([0-9a-f]{4,})\*/\s+(.*?)\s*;")
LABEL = re.compile(r"^(\.L_x_\d+):")


def sass_listing(nvdisasm: str, cubin: str):
    """[(address, text)] and {label: address} of the cubin's only kernel."""
    text = subprocess.run([nvdisasm, "-c", cubin], check=True, capture_output=True, text=True).stdout
    instructions, labels, pending = [], {}, []
    for raw in text.splitlines():
        m = LABEL.match(raw.strip())
        if m:
            pending.append(m.group(1))
            continue
        m = LINE.search(raw)
        if m:
            address = int(m.group(1), 16)
            for label in pending:
                labels[label] = address
            pending = []
            instructions.append((address, m.group(2)))
    return instructions, labels


def write_distances(instructions, labels, hgmma: int, writes):
    """Instructions from the HGMMA at `hgmma` to each address in `writes`, going
    forward to the loop's back-edge branch and on from its target."""
    index = {a: i for i, (a, _) in enumerate(instructions)}
    start = index[hgmma]
    branch = next(i for i in range(start, len(instructions)) if "BRA" in instructions[i][1])
    target = re.search(r"\((\.L_x_\d+)\)", instructions[branch][1]).group(1)
    top = index[labels[target]]
    out = []
    for w in writes:
        at = index[w]
        out.append(at - start if at > start else (branch - start) + 1 + (at - top))
    return out


def main(argv) -> int:
    out_dir = argv[0]
    nvdisasm = os.environ.get("NVDISASM", os.path.join(REPO, ".tools", "nvdisasm", "nvdisasm"))
    doc = json.load(open(os.path.join(out_dir, "inspect.json")))
    rows = []
    for item in doc["items"]:
        path = item["name"]
        version = os.path.basename(os.path.dirname(path))
        m = re.match(r"race-q(\d+)-d(\d+)\.cubin", os.path.basename(path))
        if not m:
            continue
        kernel = item["sass"]["kernels"][0]
        findings = kernel["findings"]
        log = open(os.path.join(out_dir, version, os.path.basename(path)[:-len(".cubin")] + ".log")).read()
        row = {"cubin": os.path.relpath(path, out_dir), "ptxas": version, "queued": int(m.group(1)),
               "filler": int(m.group(2)), "serialised_by_ptxas": "C7513" in log,
               "findings": len(findings), "groups_in_flight": kernel["stats"]["max_groups_in_flight"],
               "first_write_after": None, "last_write_after": None, "first_write": None}
        reg_a = [f for f in findings if f["check"] == "wgmma-a-reg-reuse" and "64x8x16" in f["wgmma"]["instruction"]]
        if reg_a:
            instructions, labels = sass_listing(nvdisasm, path)
            hgmma = int(reg_a[0]["wgmma"]["address"], 16)
            d = write_distances(instructions, labels, hgmma, [int(f["address"], 16) for f in reg_a])
            row["first_write_after"], row["last_write_after"] = min(d), max(d)
            row["first_write"] = reg_a[d.index(min(d))]["instruction"]
        rows.append(row)
    rows.sort(key=lambda r: (r["ptxas"], r["queued"], r["filler"]))
    with open(os.path.join(out_dir, "cubins.json"), "w") as f:
        json.dump(rows, f, indent=1)
    print(f"describe_cubins.py: {len(rows)} cubins, {sum(1 for r in rows if r['findings'])} with the hazard")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
