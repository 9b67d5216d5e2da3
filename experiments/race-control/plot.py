#!/usr/bin/env python3
"""Joins the GPU results of race_runner (JSON lines) with cubins.json
(describe_cubins.py) and prints the curve as a table; with matplotlib, also
draws it: late-tile fraction against D, one line per ptxas and first-write
distance.

    plot.py CUBINS.json RESULTS.jsonl [PLOT.png]
"""

import json
import sys


def main(argv) -> int:
    # Keyed by "<ptxas version>/<file>", the part of the path that survives moving the results.
    def key_of(path):
        return "/".join(path.split("/")[-2:])

    cubins = {key_of(r["cubin"]): r for r in json.load(open(argv[0]))}
    rows = []
    for line in open(argv[1]):
        result = json.loads(line)
        key = key_of(result["file"])
        row = dict(cubins[key])
        row.update(result)
        rows.append(row)
    rows.sort(key=lambda r: (r["ptxas"], r["first_write_after"] or -1, r["queued"], r["filler"]))
    print(f"{'ptxas':>8} {'D':>3} {'fill':>4} {'hazard':>6} {'1st write':>9} {'tiles':>8} {'late':>8} "
          f"{'fraction':>9} {'unwritten':>9}  values seen")
    for r in rows:
        if "error" in r:
            print(f"{r['ptxas']:>8} {r['queued']:>3} {r['filler']:>4}  error: {r['error']}")
            continue
        hazard = "yes" if r["findings"] else ("ser." if r["serialised_by_ptxas"] else "no")
        first = r["first_write_after"] if r["first_write_after"] is not None else "-"
        values = ", ".join(f"{v} x{n}" for v, n in sorted(r["values"].items(), key=lambda kv: -kv[1])[:4])
        print(f"{r['ptxas']:>8} {r['queued']:>3} {r['filler']:>4} {hazard:>6} {first:>9} {r['tiles']:>8} "
              f"{r['late_tiles']:>8} {r['late_tile_fraction']:>9.2e} {r['unwritten']:>9}  {values}")
    if len(argv) < 3:
        return 0
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("plot.py: no matplotlib here, no plot drawn", file=sys.stderr)
        return 0
    fig, ax = plt.subplots(figsize=(8, 4.5))
    series = {}
    for r in rows:
        if "error" in r or not r["findings"]:
            continue
        series.setdefault((r["ptxas"], r["first_write_after"]), []).append((r["queued"], r["late_tile_fraction"]))
    queued = sorted({r["queued"] for r in rows})
    for (ptxas, first), points in sorted(series.items()):
        points.sort()
        xs = [queued.index(q) for q, _ in points]
        ax.plot(xs, [f for _, f in points], marker="o", label=f"ptxas {ptxas}, first write {first} instr. after")
    ax.set_xticks(range(len(queued)), [str(q) for q in queued])
    ax.set_xlabel("D: shared-memory wgmma m64n256k16 queued ahead of the register-A wgmma")
    ax.set_ylabel("fraction of tiles that read the new A")
    total = sum(r["tiles"] for r in rows if "error" not in r and r["findings"])
    ax.set_title(f"Race control on the H200: {total} hazardous tiles")
    ax.set_ylim(-0.05, 1.05)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(argv[2], dpi=120)
    print(f"plot.py: wrote {argv[2]}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
