#!/usr/bin/env python3
"""Validates report JSON files against configs/schema/report.schema.json with a
real validator (jsonschema, Draft 2020-12). Usage: validate_reports.py SCHEMA FILE|DIR...

Also checks invariants the schema cannot express: summary counts add up to the
number of cases, case ids are unique (in either form of the cases), first/minimal failure point at real cases.
"""
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent))
import schema_validation  # noqa: E402  (tests/schema_validation.py)


def invariants(report, name):
    errors = []
    cases = schema_validation.report_cases(report)
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


if __name__ == "__main__":
    sys.exit(schema_validation.main(sys.argv[1:], invariants, "report"))
