#!/usr/bin/env python3
"""Validates report JSON files against configs/schema/report.schema.json with a
real validator (jsonschema, Draft 2020-12). Usage: validate_reports.py SCHEMA FILE|DIR...

Also checks invariants the schema cannot express: summary counts add up to the
number of cases, case ids are unique, first/minimal failure point at real cases.
"""
import json
import pathlib
import sys

import jsonschema


def invariants(report, name):
    errors = []
    cases = report["cases"]
    if sum(report["summary"]["counts"].values()) != len(cases):
        errors.append(f"{name}: summary counts {report['summary']['counts']} do not add up to {len(cases)} cases")
    ids = [c["id"] for c in cases]
    if len(set(ids)) != len(ids):
        errors.append(f"{name}: case ids are not unique")
    for key in ("first_failure", "minimal_failure", "first_latent"):
        ref = report["summary"].get(key)
        if ref is not None and ref["id"] not in ids:
            errors.append(f"{name}: summary.{key} names case {ref['id']} which is not in cases")
    return errors


def main():
    schema = json.loads(pathlib.Path(sys.argv[1]).read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    validator = jsonschema.Draft202012Validator(schema)
    files = []
    for arg in sys.argv[2:]:
        path = pathlib.Path(arg)
        files.extend(sorted(path.glob("*.json")) if path.is_dir() else [path])
    if not files:
        print("no report files given", file=sys.stderr)
        return 1
    failures = []
    for f in files:
        report = json.loads(f.read_text())
        for error in validator.iter_errors(report):
            failures.append(f"{f}: {'/'.join(map(str, error.absolute_path))}: {error.message}")
        failures.extend(invariants(report, str(f)))
    for line in failures:
        print(line, file=sys.stderr)
    print(f"validated {len(files)} report(s): {'FAILED' if failures else 'ok'}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
