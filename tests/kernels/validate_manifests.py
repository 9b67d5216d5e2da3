#!/usr/bin/env python3
"""Validates every shipped kernel set's manifest (kernels/sets/triton-*/manifest.json.xz)
against kernels/manifest.schema.json, and checks what the schema cannot: each set's
folder names the Triton its manifest records, and a newer Triton's set is the
"upgrade" matrix (kernels/README.md).

    validate_manifests.py REPO_ROOT
"""

import glob
import json
import lzma
import os
import sys

import jsonschema


def main(argv):
    root = argv[0]
    with open(os.path.join(root, "kernels", "manifest.schema.json")) as f:
        schema = json.load(f)
    folders = sorted(glob.glob(os.path.join(root, "kernels", "sets", "triton-*")))
    errors = []
    if not folders:
        errors.append("no kernels/sets/triton-*/ folder")
    for folder in folders:
        name = os.path.relpath(folder, root)
        with lzma.open(os.path.join(folder, "manifest.json.xz")) as f:
            manifest = json.loads(f.read())
        for e in jsonschema.Draft202012Validator(schema).iter_errors(manifest):
            errors.append(f"{name}: {'/'.join(str(p) for p in e.absolute_path)}: {e.message}")
        version = os.path.basename(folder)[len("triton-"):]
        if manifest.get("triton_version") != version:
            errors.append(f"{name}: records Triton {manifest.get('triton_version')}")
        command = manifest.get("generated_by", "")
        if f"--triton {version}" not in command:
            errors.append(f"{name}: generated_by {command!r} does not name --triton {version}")
        if version != "3.6.0" and "--matrix upgrade" not in command:
            errors.append(f"{name}: a newer Triton's set is the upgrade matrix, generated_by is {command!r}")
        print(f"{name}: {len(manifest.get('variants', []))} variants, valid" if not errors else f"{name}: checked")
    for e in errors:
        print(e, file=sys.stderr)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
