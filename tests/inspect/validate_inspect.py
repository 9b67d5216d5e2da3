#!/usr/bin/env python3
"""Validates `loraprobe inspect --json` documents against
configs/schema/inspect.schema.json with a real validator (jsonschema, Draft
2020-12). Usage: validate_inspect.py SCHEMA FILE...

Also checks invariants the schema cannot express: the summary adds up, each
item's finding count is its report's, a compile and its report name the same
cubin, items use the compilers the document lists, the matrix covers the items.
"""
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent))
import schema_validation  # noqa: E402  (tests/schema_validation.py)


def invariants(doc, name):
    errors = []
    items = doc["items"]
    summary = doc["summary"]
    statuses = [item["status"] for item in items]
    for key in ("clean", "hazard", "error"):
        if summary[key] != statuses.count(key):
            errors.append(f"{name}: summary.{key} is {summary[key]}, items say {statuses.count(key)}")
    if summary["items"] != len(items):
        errors.append(f"{name}: summary.items is {summary['items']} for {len(items)} items")
    if summary["findings"] != sum(item["finding_count"] for item in items):
        errors.append(f"{name}: summary.findings does not add up")
    all_incompatible = len(items) > 0 and summary.get("incompatible", 0) == len(items)
    expected_exit = 1 if summary["hazard"] + summary["error"] > 0 else 3 if all_incompatible else 0
    if summary["exit_code"] != expected_exit:
        errors.append(f"{name}: summary.exit_code {summary['exit_code']} does not follow the counts")
    labels = {c["name"] for c in doc["compilers"]}
    for i, item in enumerate(items):
        where = f"{name}: items/{i} ({item['name']}, {item['compiler']})"
        if item["compiler"] not in labels:
            errors.append(f"{where}: compiler not listed in compilers")
        sass = item["sass"]
        if sass is not None:
            found = sum(len(k["findings"]) for k in sass["kernels"])
            if not item["finding_count"] == sass["finding_count"] == found:
                errors.append(f"{where}: finding_count {item['finding_count']}, report {sass['finding_count']}, "
                              f"kernels {found}")
            compile_record = item["compile"]
            if compile_record is not None and compile_record.get("cubin_sha256") not in (None, sass["cubin_sha256"]):
                errors.append(f"{where}: compile and report name different cubins")
    present = {(item["triton"], item["variant"], item["compiler"]) for item in items}
    for matrix in doc["matrix"] or []:
        triton = matrix["triton_version"]
        columns = [c["compiler"] for c in matrix["columns"]]
        for row in matrix["rows"]:
            if [cell["compiler"] for cell in row["cells"]] != columns:
                errors.append(f"{name}: matrix row {row['variant']} has cells for other columns")
            for cell in row["cells"]:
                if cell["status"] != "missing" and (triton, row["variant"], cell["compiler"]) not in present:
                    errors.append(f"{name}: Triton {triton} matrix cell {row['variant']} x {cell['compiler']} has no "
                                  "item")
    return errors


if __name__ == "__main__":
    sys.exit(schema_validation.main(sys.argv[1:], invariants, "inspect document"))
