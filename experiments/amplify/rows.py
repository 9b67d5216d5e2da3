#!/usr/bin/env python3
"""Turns sweep reports into the raw rows of docs/amplify.md: one JSON line per expand
case (Triton, compiler, variant knobs, amplify D, tokens, what the runs and the SASS
said). Reports must be full (`loraprobe report R --format json --detail full -o F`
expands a compact one).

    rows.py REPORT.json [REPORT.json ...] > rows.jsonl
"""

import json
import sys


def rows_of(path):
    report = json.load(open(path))
    cases = report["cases"]
    if not isinstance(cases, list):
        sys.exit(f"{path}: a compact report; expand it with 'loraprobe report {path} --format json --detail full'")
    gpu = report.get("environment", {}).get("gpu", {}).get("name", "?")
    for c in cases:
        a = c["axes"]
        if a.get("op") != "expand":
            continue
        m = c.get("metrics") or {}
        amp = c.get("amplification") or {}
        yield {
            "gpu": gpu,
            "triton": a.get("triton"),
            "compiler": a.get("compiler"),
            "input_dtype": a.get("input_dtype"),
            "block_n": a.get("block_n"),
            "num_stages": a.get("num_stages"),
            "rank": a.get("rank"),
            "hidden": a.get("hidden"),
            "tokens": a.get("tokens"),
            "amplify": a.get("amplify", 0),
            "verdict": c["verdict"],
            "runs": c.get("runs"),
            "failed_runs": c.get("failed_runs"),
            "elements": m.get("elements"),
            "nan": m.get("nan"),
            "inf": m.get("inf"),
            "huge": m.get("huge"),
            "mismatches": m.get("mismatches"),
            "max_abs_dev": m.get("max_abs_dev"),
            "static_findings": c.get("static_findings"),
            "unamplified_findings": amp.get("unamplified_findings"),
            "serialised": amp.get("serialised"),
            "void_reason": amp.get("void_reason"),
            "kernel_ms": (c.get("timing") or {}).get("kernel_ms"),
            "source": path.split("/")[-1],
        }


def main(argv):
    if not argv:
        print(__doc__, file=sys.stderr)
        return 2
    for path in argv:
        for row in rows_of(path):
            print(json.dumps(row, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
