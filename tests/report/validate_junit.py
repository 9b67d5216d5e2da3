#!/usr/bin/env python3
"""`loraprobe report --format junit` of every sample report and of an inspect
document, read by two parsers CI systems use (junitparser, xunitparser from PyPI):
the XML loads, and its counts follow the verdicts (FAIL a failure; fault, timeout,
compile_error, incomplete errors; skipped skipped; LATENT skipped, or a failure with
--fail-on latent), each case one testcase named with its id.

    validate_junit.py LORAPROBE SAMPLE_REPORT_DIR INSPECT_JSON
"""

import collections
import glob
import io
import json
import os
import subprocess
import sys

import junitparser
import xunitparser

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import schema_validation  # noqa: E402  (tests/schema_validation.py: report_cases)


def junit(lp, path, *extra):
    r = subprocess.run([lp, "report", path, "--format", "junit", *extra], capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit(f"{path}: loraprobe report exited {r.returncode}: {r.stderr}")
    return r.stdout


def check(name, xml, want, ids, errors):
    suites = junitparser.JUnitXml.fromstring(xml)
    if isinstance(suites, junitparser.TestSuite):
        suites = [suites]
    got = collections.Counter()
    names = []
    for suite in suites:
        for case in suite:
            names.append(case.name)
            kinds = [type(r).__name__ for r in case.result]
            got[kinds[0].lower() if kinds else "passed"] += 1
    if dict(got) != {k: v for k, v in want.items() if v}:
        errors.append(f"{name}: junitparser counts {dict(got)}, the verdicts say {want}")
    missing = [i for i in ids if not any(f"[{i}]" in n for n in names)]
    if missing:
        errors.append(f"{name}: no testcase for case(s) {missing}")
    _, result = xunitparser.parse(io.StringIO(xml))
    x = {"failure": len(result.failures), "error": len(result.errors), "skipped": len(result.skipped),
         "total": result.testsRun}
    if x["failure"] != want["failure"] or x["error"] != want["error"] or x["skipped"] != want["skipped"] \
            or x["total"] != sum(want.values()):
        errors.append(f"{name}: xunitparser counts {x}, the verdicts say {want}")


def main(argv):
    lp, samples, inspect_json = argv
    errors = []
    reports = sorted(glob.glob(os.path.join(samples, "*.json")))
    for path in reports:
        with open(path) as f:
            doc = json.load(f)
        cases = schema_validation.report_cases(doc)
        verdicts = collections.Counter(c["verdict"] for c in cases)
        ids = [c["id"] for c in cases]
        for latent_fails in (False, True):
            want = {"failure": verdicts["FAIL"] + (verdicts["LATENT"] if latent_fails else 0),
                    "error": sum(verdicts[v] for v in ("fault", "timeout", "compile_error", "incomplete")),
                    "skipped": verdicts["skipped"] + (0 if latent_fails else verdicts["LATENT"]),
                    "passed": verdicts["PASS"]}
            extra = ("--fail-on", "latent") if latent_fails else ("--fail-on", "FAIL")
            check(f"{os.path.basename(path)} {' '.join(extra)}", junit(lp, path, *extra), want, ids, errors)
    with open(inspect_json) as f:
        doc = json.load(f)
    status = collections.Counter(i["status"] for i in doc["items"])
    check(os.path.basename(inspect_json), junit(lp, inspect_json),
          {"failure": status["hazard"], "error": status["error"], "skipped": 0, "passed": status["clean"]}, [], errors)
    for e in errors:
        print(e)
    print(f"junit of {len(reports)} report(s) x 2 and 1 inspect document, by junitparser and xunitparser: "
          f"{'FAILED' if errors else 'ok'}")
    return 1 if errors or not reports else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
