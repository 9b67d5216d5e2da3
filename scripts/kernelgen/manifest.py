"""The manifest (kernels/manifest.json) and the files it lists: assembly,
deterministic writing, and the --verify self-check.

kernels/README.md documents every field; kernels/manifest.schema.json is
the machine-checkable form. Bump FORMAT_VERSION on any incompatible change.
"""

import gzip
import hashlib
import json
import os

from . import abi
from .build import MAX_SHARED_BYTES, TARGET, ptx_entry
from .variants import Variant

FORMAT_VERSION = 1
PTX_DIR = "ptx"
CUBIN_DIR = "cubin"
COMPRESSION = "gzip"

# The PTX type Triton 3.6 emits for each Triton argument type.
PTX_TYPE_OF = {"i32": "u32", "i64": "u64", "fp32": "f32", "global_scratch": "u64", "profile_scratch": "u64"}


def ptx_type_of(triton_type: str) -> str:
    return "u64" if triton_type.startswith("*") else PTX_TYPE_OF[triton_type]


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def compress(data: bytes) -> bytes:
    # mtime=0 and no file name in the header: the same input always gives
    # the same bytes with a given zlib (the uncompressed sha256 is the
    # identity of a file; the compressed one only guards the stored blob).
    return gzip.compress(data, compresslevel=9, mtime=0)


def file_record(rel_path: str, data: bytes, stored: bytes) -> dict:
    return {
        "path": rel_path,
        "compression": COMPRESSION,
        "sha256": sha256(data),
        "bytes": len(data),
        "stored_sha256": sha256(stored),
        "stored_bytes": len(stored),
    }


def variant_entry(v: Variant, result: dict, ptxas_version: str, files: dict) -> dict:
    module, function = abi.kernel_source(v)
    names = [a[0] for a in abi.arguments(v)] + list(abi.kernel_constexprs(v))
    _, constexprs, _ = abi.compile_inputs(v, names)
    entry = {
        "id": v.id,
        "op": v.op,
        "role": v.role,
        "status": result["status"],
        "reason": result["reason"],
        "matrix_rows": list(v.sources),
        "source": {"file": f"kernels/triton/{module}.py", "function": function},
        "axes": v.axes(),
        "constexprs": constexprs,
        "num_warps": v.num_warps,
        "num_stages": v.num_stages,
        "specialization": abi.specialization(v),
        "grid": abi.grid(v),
        "block": [v.num_warps * 32, 1, 1],
    }
    if result["status"] != "ok":
        return entry
    md = result["metadata"]
    params = []
    for index, ((name, ty), ptx_ty) in enumerate(zip(abi.expected_params(v), result["ptx_param_types"])):
        params.append({"index": index, "ptx_type": ptx_ty, "name": name, "type": ty})
    entry.update({
        "entry": result["entry"],
        "params": params,
        "shared_bytes": md["shared"],
        "global_scratch_size": md["global_scratch_size"],
        "global_scratch_align": md["global_scratch_align"],
        "profile_scratch_size": md["profile_scratch_size"],
        "profile_scratch_align": md["profile_scratch_align"],
        "resource_usage": result["resource_usage"],
        "ptxas_version": ptxas_version,
        "files": files,
    })
    return entry


def check_entry_abi(v: Variant, entry: dict, ptx_text: str = None) -> list:
    """Problems (as text) between a manifest entry, the kernel's signature
    and specialisation, and optionally the PTX it points at."""
    problems = []
    want = abi.expected_params(v)
    got = entry.get("params", [])
    if len(got) != len(want):
        problems.append(f"{len(got)} params, expected {len(want)}")
    for i, (p, (name, ty)) in enumerate(zip(got, want)):
        if (p.get("index"), p.get("name"), p.get("type"), p.get("ptx_type")) != (i, name, ty, ptx_type_of(ty)):
            problems.append(f"param {i} is {p}, expected index {i} {name} {ty} .{ptx_type_of(ty)}")
    spec = abi.specialization(v)
    if entry.get("specialization") != spec:
        problems.append(f"specialization {entry.get('specialization')} != {spec}")
    listed = sorted(n for names in spec.values() for n in names)
    if listed != sorted(a[0] for a in abi.arguments(v)):
        problems.append("specialization does not classify every runtime argument exactly once")
    for name in spec[abi.EQUAL_TO_1]:
        if entry.get("constexprs", {}).get(name) != 1:
            problems.append(f"{name} is equal_to_1 but not compiled as the constant 1")
    if ptx_text is not None:
        entry_name, ptx_types = ptx_entry(ptx_text)
        if entry_name != entry.get("entry"):
            problems.append(f"PTX entry {entry_name} != manifest entry {entry.get('entry')}")
        if ptx_types != [p.get("ptx_type") for p in got]:
            problems.append(f"PTX parameter types {ptx_types} != manifest {[p.get('ptx_type') for p in got]}")
    return problems


def _is_leaf(value) -> bool:
    children = value.values() if isinstance(value, dict) else value
    return not any(isinstance(c, (dict, list)) and c for c in children)


def _render(value, depth: int) -> str:
    if not isinstance(value, (dict, list)) or not value or _is_leaf(value):
        return json.dumps(value, sort_keys=True, ensure_ascii=True)
    pad, inner = " " * depth, " " * (depth + 1)
    if isinstance(value, dict):
        items = [f"{inner}{json.dumps(k)}: {_render(value[k], depth + 1)}" for k in sorted(value)]
        return "{\n" + ",\n".join(items) + "\n" + pad + "}"
    items = [inner + _render(v, depth + 1) for v in value]
    return "[\n" + ",\n".join(items) + "\n" + pad + "]"


def dumps(obj) -> str:
    """JSON with sorted keys, one line per innermost object or list (one
    line per parameter, per file record, ...): regenerating gives the same
    bytes, the file stays small, and a variant's change is a short hunk."""
    return _render(obj, 0) + "\n"


def write_atomic(path: str, data: bytes):
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        f.write(data)
    os.replace(tmp, path)


def verify(out_dir: str, variants_by_id: dict, arg_names_of) -> list:
    """Re-hash every file against the manifest and re-check every variant's
    parameter list against its kernel signature (arg_names_of(variant): the
    Triton function's argument names) and specialisation."""
    problems = []
    try:
        with open(os.path.join(out_dir, "manifest.json"), "rb") as f:
            manifest = json.loads(f.read())
    except (OSError, ValueError) as exc:
        return [f"manifest.json: {exc}"]
    if manifest.get("format_version") != FORMAT_VERSION:
        problems.append(f"format_version {manifest.get('format_version')} != {FORMAT_VERSION}")
    if manifest.get("target") != dict(TARGET, max_shared_bytes=MAX_SHARED_BYTES):
        problems.append(f"unexpected target {manifest.get('target')}")
    ids = [e.get("id") for e in manifest.get("variants", [])]
    if ids != sorted(set(ids)):
        problems.append("variant ids are not unique and sorted")
    listed = set()
    for entry in manifest.get("variants", []):
        vid = entry.get("id")
        v = variants_by_id.get(vid)
        if v is None:
            problems.append(f"{vid}: not a variant of the current matrix")
            continue
        if entry.get("axes") != v.axes() or entry.get("op") != v.op or entry.get("role") != v.role:
            problems.append(f"{vid}: axes/op/role differ from the matrix")
        try:
            _, constexprs, _ = abi.compile_inputs(v, arg_names_of(v))
        except ValueError as exc:
            problems.append(f"{vid}: {exc}")
            continue
        if entry.get("constexprs") != constexprs:
            problems.append(f"{vid}: constexprs {entry.get('constexprs')} != {constexprs}")
        if entry.get("status") != "ok":
            if entry.get("status") != "rejected" or not entry.get("reason"):
                problems.append(f"{vid}: status {entry.get('status')} without a reason")
            continue
        texts = {}
        for kind in ("ptx", "cubin"):
            rec = entry["files"][kind]
            listed.add(rec["path"])
            try:
                with open(os.path.join(out_dir, rec["path"]), "rb") as f:
                    stored = f.read()
            except OSError as exc:
                problems.append(f"{vid}: {exc}")
                continue
            if sha256(stored) != rec["stored_sha256"] or len(stored) != rec["stored_bytes"]:
                problems.append(f"{vid}: {rec['path']} stored bytes do not match the manifest")
            try:
                data = gzip.decompress(stored)
            except (OSError, EOFError) as exc:
                problems.append(f"{vid}: {rec['path']}: {exc}")
                continue
            if sha256(data) != rec["sha256"] or len(data) != rec["bytes"]:
                problems.append(f"{vid}: {rec['path']} contents do not match the manifest")
            texts[kind] = data
        if "ptx" in texts:
            ptx = texts["ptx"].decode("utf-8")
            if not ptx.startswith("// Generated by "):
                problems.append(f"{vid}: PTX does not start with its generated-by header")
            problems += [f"{vid}: {p}" for p in check_entry_abi(v, entry, ptx)]
    for sub in (PTX_DIR, CUBIN_DIR):
        folder = os.path.join(out_dir, sub)
        if os.path.isdir(folder):
            for name in sorted(os.listdir(folder)):
                if f"{sub}/{name}" not in listed:
                    problems.append(f"{sub}/{name}: file not listed in the manifest")
    return problems


def stale_files(out_dir: str, keep: set) -> list:
    """Generated files in out_dir that the new manifest does not list."""
    stale = []
    for sub in (PTX_DIR, CUBIN_DIR):
        folder = os.path.join(out_dir, sub)
        if os.path.isdir(folder):
            stale += [f"{sub}/{n}" for n in sorted(os.listdir(folder)) if f"{sub}/{n}" not in keep]
    return stale

