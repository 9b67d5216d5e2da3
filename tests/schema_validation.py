"""Shared by the validators of loraprobe's JSON documents (tests/report/
validate_reports.py, tests/inspect/validate_inspect.py): validate each file
against a JSON Schema with a real validator (jsonschema, Draft 2020-12), then
run the document's own invariants (what a schema cannot express)."""
import json
import pathlib
import sys

import jsonschema


def main(argv, invariants, what):
    """argv: [SCHEMA, FILE|DIR...]; invariants(doc, name) -> [error, ...].
    Returns the exit status: 0 when every file is valid, 1 otherwise."""
    if len(argv) < 2:
        print(f"usage: SCHEMA FILE|DIR... (the {what}s to validate)", file=sys.stderr)
        return 2
    schema = json.loads(pathlib.Path(argv[0]).read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    validator = jsonschema.Draft202012Validator(schema)
    files = []
    for arg in argv[1:]:
        path = pathlib.Path(arg)
        files.extend(sorted(path.glob("*.json")) if path.is_dir() else [path])
    if not files:
        print(f"no {what} files given", file=sys.stderr)
        return 1
    failures = []
    for f in files:
        doc = json.loads(f.read_text())
        for error in validator.iter_errors(doc):
            failures.append(f"{f}: {'/'.join(map(str, error.absolute_path))}: {error.message}")
        failures.extend(invariants(doc, str(f)))
    for line in failures:
        print(line, file=sys.stderr)
    print(f"validated {len(files)} {what}(s): {'FAILED' if failures else 'ok'}")
    return 1 if failures else 0


def report_cases(report):
    """A sweep report's cases as {column: value} dicts, whichever form they take: a
    list of records (--detail full, schema < 4) or the compact table (its columns
    and constants; src/report/compact.hpp). Only the row's own cells, not its group's."""
    cases = report["cases"]
    if isinstance(cases, list):
        return cases
    columns, constants = cases["columns"], cases.get("constants", {})
    return [dict(constants, **dict(zip(columns, row))) for row in cases["rows"]]
