#!/usr/bin/env python3
"""Exit 0 when two `loraprobe inspect --json` documents found the same thing: the
same items (Triton set, variant, compiler), each with the same status, finding
counts, attributions and findings (PTX and SASS, instruction by instruction), and
the same stack matrix. Paths, times and cache state may differ. Used by
tests/wheel/install_test.sh to hold the pip wheel's answer to the source build's."""
import json
import sys


def findings(report):
    if not isinstance(report, dict):
        return report
    return [{"name": f.get("name"), "findings": f.get("findings"), "early_reads": f.get("early_reads")}
            for f in report.get("functions", [])]


def items(doc):
    out = {}
    for it in doc["items"]:
        key = (it.get("triton"), it.get("name"), json.dumps(it.get("compiler"), sort_keys=True))
        if key in out:
            sys.exit(f"same_findings: item {key} twice in one document")
        out[key] = {k: it.get(k) for k in ("status", "finding_count", "attribution", "early_read_count",
                                              "early_read_attribution", "skipped")}
        out[key]["ptx"] = findings(it.get("ptx"))
        out[key]["sass"] = findings(it.get("sass"))
    return out


def main():
    a, b = (json.load(open(path)) for path in sys.argv[1:3])
    ia, ib = items(a), items(b)
    if ia.keys() != ib.keys():
        print(f"items only in {sys.argv[1]}: {sorted(ia.keys() - ib.keys())[:5]}; "
              f"only in {sys.argv[2]}: {sorted(ib.keys() - ia.keys())[:5]}")
        return 1
    differ = [k for k in ia if ia[k] != ib[k]]
    for k in differ[:5]:
        print(f"{k}: {json.dumps(ia[k])[:300]} != {json.dumps(ib[k])[:300]}")
    if a.get("matrix") != b.get("matrix"):
        print("the stack matrices differ")
        return 1
    hazards = sum(1 for v in ia.values() if v["status"] == "hazard")
    print(f"same_findings: {len(ia)} items, {hazards} with the hazard, identical")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
