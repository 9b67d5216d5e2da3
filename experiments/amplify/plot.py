#!/usr/bin/env python3
"""The table and the plot of docs/amplify.md from rows.py's raw rows: per variant
(Triton, compiler, block_n, num_stages, input dtype) and D, the wrong elements at
the chosen token count (the worst run of the case, as the report keeps it; over several
sweeps of the same cases, the worst of them, with their runs added up), with NaN
and |x| > 1e30 apart; with matplotlib, a plot of wrong elements against D, one line
per variant (log scale; 0 drawn at the bottom).

    plot.py ROWS.jsonl [--tokens 1024] [PLOT.png]
"""

import json
import sys


def main(argv):
    tokens = 1024
    if "--tokens" in argv:
        i = argv.index("--tokens")
        tokens = int(argv[i + 1])
        del argv[i:i + 2]
    if not argv:
        print(__doc__, file=sys.stderr)
        return 2
    rows = [json.loads(line) for line in open(argv[0]) if line.strip()]
    rows = [r for r in rows if r["tokens"] == tokens]
    # Several sweeps of the same cases: the worst run's counts, and the runs added up.
    variants = {}
    for r in rows:
        key = (r["triton"], r["compiler"], r["block_n"], r["num_stages"], r["input_dtype"])
        by_d = variants.setdefault(key, {})
        seen = by_d.get(r["amplify"])
        if seen is None:
            by_d[r["amplify"]] = dict(r)
            continue
        worst = dict(r) if (r["mismatches"] or 0) > (seen["mismatches"] or 0) else seen
        worst["runs"] = (seen["runs"] or 0) + (r["runs"] or 0)
        worst["failed_runs"] = (seen["failed_runs"] or 0) + (r["failed_runs"] or 0)
        by_d[r["amplify"]] = worst
    ds = sorted({r["amplify"] for r in rows})
    print(f"{tokens} tokens; per D: verdict, wrong elements of the worst run (NaN, |x| > 1e30), failed runs/runs")
    print(f"{'triton':>6} {'compiler':<16} {'bn':>3} {'st':>2} {'in':<4} {'static':>6} | " +
          " | ".join(f"D={d}" for d in ds))
    for key in sorted(variants):
        by_d = variants[key]
        static = next((f"{r['static_findings']}" for r in by_d.values() if r["static_findings"] is not None), "-")
        cells = []
        for d in ds:
            r = by_d.get(d)
            if r is None:
                cells.append("-")
            elif r["mismatches"] is None:
                cells.append(r["verdict"])
            else:
                cells.append(f"{r['verdict']} {r['mismatches']} ({r['nan']} NaN, {r['huge']} >1e30) "
                             f"{r['failed_runs']}/{r['runs']}")
        print(f"{key[0]:>6} {key[1]:<16} {key[2]:>3} {key[3]:>2} {key[4]:<4} {static:>6} | " + " | ".join(cells))
    if len(argv) < 2:
        return 0
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("plot.py: no matplotlib (pip install matplotlib); the table above is the result", file=sys.stderr)
        return 1
    fig, ax = plt.subplots(figsize=(8, 5))
    # Images whose every D gave 0 wrong elements lie on top of each other: one line for them.
    quiet = []
    for key in sorted(variants):
        by_d = variants[key]
        xs = [d for d in ds if d in by_d and by_d[d]["mismatches"] is not None]
        if not xs:
            continue
        ys = [max(by_d[d]["mismatches"], 0.8) for d in xs]
        label = f"t{key[0]} {key[1]} bn{key[2]} s{key[3]} {key[4]}"
        static = next((r["static_findings"] for r in by_d.values() if r["static_findings"] is not None), None)
        if max(by_d[d]["mismatches"] for d in xs) == 0:
            quiet.append(f"{label} (static {static})")
            continue
        ax.plot(xs, ys, marker="o", label=f"{label} (static {static})")
    if quiet:
        ax.plot(ds, [0.8] * len(ds), color="gray", linestyle="--", marker="s",
                label=f"{len(quiet)} images with 0 wrong at every D" +
                      (f", {sum(1 for q in quiet if q.endswith('(static 0)'))} of them statically clean"))
    ax.set_yscale("log")
    ax.set_xlabel("D: dependent wgmma pairs before each register-A wgmma")
    ax.set_ylabel(f"wrong elements (of {rows[0]['elements'] if rows else '?'}; <1 means 0)")
    ax.set_title(f"Amplified LoRA expand on {rows[0]['gpu'] if rows else '?'}, {tokens} tokens")
    ax.legend(fontsize=6, loc="upper left")
    fig.tight_layout()
    fig.savefig(argv[1], dpi=120)
    print(f"plot.py: wrote {argv[1]}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
