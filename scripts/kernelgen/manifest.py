"""The manifest (manifest.json.xz) and the pack of PTX and cubins it lists
(set.pack.xz) of one kernel set (kernels/sets/triton-<version>/):
assembly, deterministic writing, and the --verify self-check.

kernels/README.md documents every field; kernels/manifest.schema.json is
the machine-checkable form. Bump FORMAT_VERSION on any incompatible change.
"""

import hashlib
import json
import lzma
import os

from . import abi
from .build import MAX_SHARED_BYTES, TARGET, ptx_entry
from .variants import PRODUCED, Variant

# Format 3: the manifest is stored xz-compressed (the JSON of the full set is
# larger than its pack) and records the ptxas options Triton ran.
FORMAT_VERSION = 3
PACK_NAME = "set.pack.xz"
MANIFEST_NAME = "manifest.json.xz"
# Format 2's uncompressed manifest; a generator run removes it.
FORMAT2_MANIFEST_NAME = "manifest.json"
PACK_COMPRESSION = "xz"
FILE_KINDS = ("ptx", "cubin")
# Format 1 kept one .gz per file in these folders; a generator run removes
# them and --verify flags them.
FORMAT1_DIRS = ("ptx", "cubin")
# xz -9e: the PTX and cubins of neighbouring variants differ in a few
# constants, so xz stores the set in about a tenth of what per-file gzip
# needed.
XZ_PRESET = 9 | lzma.PRESET_EXTREME
XZ_CHECK = lzma.CHECK_CRC64
# The pack is xz streams laid end to end, each of PACK_STREAM_BYTES of the
# uncompressed pack (the last of what is left): loraprobe decodes only the
# streams of the files it uses, several at once. One solid stream stores the
# full 3.6.0 set in 2.2 MB but takes 0.4 s to decode whole; 4 MiB streams
# store it in 4.8 MB and decode in parallel.
PACK_STREAM_BYTES = 4 << 20

# The PTX type Triton 3.6 emits for each Triton argument type.
PTX_TYPE_OF = {"i32": "u32", "i64": "u64", "fp32": "f32", "global_scratch": "u64", "profile_scratch": "u64"}


def ptx_type_of(triton_type: str) -> str:
    return "u64" if triton_type.startswith("*") else PTX_TYPE_OF[triton_type]


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def logical_path(kind: str, vid: str) -> str:
    """The name of a variant's file inside the pack: "ptx/<id>.ptx", "cubin/<id>.cubin"."""
    return f"{kind}/{vid}.{kind}"


def build_pack(files: dict) -> tuple:
    """(uncompressed pack, {logical path: file record}) of files ({logical
    path: bytes}): the files concatenated in sorted path order, so the pack
    depends on nothing but the file contents."""
    parts, records, offset = [], {}, 0
    for path in sorted(files):
        data = files[path]
        records[path] = {"path": path, "sha256": sha256(data), "bytes": len(data), "offset": offset}
        parts.append(data)
        offset += len(data)
    return b"".join(parts), records


def _xz(raw: bytes) -> bytes:
    # Single-threaded liblzma, one stream, no file name or time anywhere in
    # the format: the same input gives the same bytes with a given liblzma.
    return lzma.compress(raw, format=lzma.FORMAT_XZ, check=XZ_CHECK, preset=XZ_PRESET)


def compress_pack(raw: bytes) -> bytes:
    """The stored pack: one xz stream per PACK_STREAM_BYTES of raw, laid end
    to end with no padding. The uncompressed sha256 is the pack's identity;
    the stored one only guards the blob (another xz could compress
    differently and be right)."""
    chunks = [raw[i:i + PACK_STREAM_BYTES] for i in range(0, len(raw), PACK_STREAM_BYTES)] or [b""]
    return b"".join(_xz(chunk) for chunk in chunks)


def pack_record(raw: bytes, stored: bytes) -> dict:
    return {
        "path": PACK_NAME,
        "compression": PACK_COMPRESSION,
        "bytes": len(raw),
        "sha256": sha256(raw),
        "stored_bytes": len(stored),
        "stored_sha256": sha256(stored),
    }


def compress_manifest(text: bytes) -> bytes:
    """The stored manifest: one xz stream, made like each of the pack's."""
    return _xz(text)


def read_manifest(out_dir: str) -> dict:
    """The manifest of the set in out_dir; raises OSError or ValueError."""
    with open(os.path.join(out_dir, MANIFEST_NAME), "rb") as f:
        return json.loads(decompress_pack(f.read()))


def decompress_pack(stored: bytes) -> bytes:
    """The uncompressed pack; raises ValueError unless stored is xz streams
    laid end to end with nothing between or after them (as the C++ reader,
    kernels/xz.hpp, requires)."""
    parts = []
    rest = stored
    while True:
        decoder = lzma.LZMADecompressor(format=lzma.FORMAT_XZ)
        try:
            parts.append(decoder.decompress(rest))
        except lzma.LZMAError as exc:
            raise ValueError(f"corrupt xz data: {exc}") from exc
        if not decoder.eof:
            raise ValueError("corrupt xz data: truncated")
        rest = decoder.unused_data
        if not rest:
            return b"".join(parts)


def variant_entry(v: Variant, result: dict, ptxas_version: str, files: dict) -> dict:
    module, function = abi.kernel_source(v)
    _, constexprs, _ = abi.compile_inputs(v, abi.signature_names(v))
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
    if v.op in PRODUCED:
        # The PDL contract: parameters the previous grid writes, which must not be read
        # before griddepcontrol.wait (loraprobe's gdc-early-read check).
        entry["produced"] = PRODUCED[v.op]
    if result["status"] != "ok":
        return entry
    if result.get("source"):
        entry["source"] = result["source"]  # vLLM's own kernel (gen_kernels.py --vllm-ops)
    md = result["metadata"]
    params = []
    # vLLM's own kernels (gen_kernels.py --vllm-ops) list their own parameters.
    declared = result.get("params") or abi.expected_params(v)
    if len(declared) != len(result["ptx_param_types"]):
        raise ValueError(f"{v.id}: {len(result['ptx_param_types'])} PTX parameters, {len(declared)} declared")
    for index, ((name, ty), ptx_ty) in enumerate(zip(declared, result["ptx_param_types"])):
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


def verify_pack(out_dir: str, manifest: dict) -> tuple:
    """(uncompressed pack or None, problems): the stored pack against the
    manifest's pack record."""
    rec = manifest.get("pack")
    if not isinstance(rec, dict):
        return None, ["manifest has no pack record"]
    problems = []
    if rec.get("path") != PACK_NAME or rec.get("compression") != PACK_COMPRESSION:
        problems.append(f"pack is {rec.get('path')} ({rec.get('compression')}), expected {PACK_NAME} (xz)")
    try:
        with open(os.path.join(out_dir, PACK_NAME), "rb") as f:
            stored = f.read()
    except OSError as exc:
        return None, problems + [f"{PACK_NAME}: {exc}"]
    if sha256(stored) != rec.get("stored_sha256") or len(stored) != rec.get("stored_bytes"):
        problems.append(f"{PACK_NAME}: stored bytes do not match the manifest")
    try:
        raw = decompress_pack(stored)
    except ValueError as exc:
        return None, problems + [f"{PACK_NAME}: {exc}"]
    if sha256(raw) != rec.get("sha256") or len(raw) != rec.get("bytes"):
        problems.append(f"{PACK_NAME}: uncompressed contents do not match the manifest")
        return None, problems
    return raw, problems


def check_layout(records: list, pack_bytes: int) -> list:
    """Problems with how the file records tile the pack: they must cover it
    exactly once, in sorted path order (nothing unlisted, no overlap, no gap)."""
    problems = []
    paths = [r.get("path") for r in records]
    if len(set(paths)) != len(paths):
        problems.append("a file path is listed twice")
    placed = []
    for r in records:
        if isinstance(r.get("offset"), int) and isinstance(r.get("bytes"), int) and isinstance(r.get("path"), str):
            placed.append(r)
        else:
            problems.append(f"{r.get('path')}: path, offset or bytes missing")
    placed.sort(key=lambda r: (r["offset"], r["path"]))
    end = 0
    for r in placed:
        if r["offset"] < end:
            problems.append(f"{r['path']}: offset {r['offset']} overlaps the file before it (ends at {end})")
        elif r["offset"] > end:
            problems.append(f"{r['path']}: {r['offset'] - end} unlisted bytes at pack offset {end}")
        end = max(end, r["offset"] + r["bytes"])
    if end != pack_bytes:
        problems.append(f"files end at pack offset {end}, the pack has {pack_bytes} bytes")
    if [r["path"] for r in placed] != sorted(r["path"] for r in placed):
        problems.append("files are not packed in sorted path order")
    return problems


def verify(out_dir: str, variants_by_id: dict, arg_names_of, foreign: bool = False, stack: bool = False) -> list:
    """Re-hash the pack and every file in it against the manifest, check that
    the files tile the pack, and re-check every variant's parameter list
    against its kernel signature (arg_names_of(variant): the Triton
    function's argument names) and specialisation. foreign: the kernels are vLLM's
    own (abi.compile_inputs), and the manifest records the constexprs of our ABI.
    stack: a user's stack (gen_kernels.py --stack), whose PTX is kept as their Triton
    made it: a Triton without the stage hook (3.5) writes no header line into it."""
    try:
        manifest = read_manifest(out_dir)
    except (OSError, ValueError) as exc:
        return [f"{MANIFEST_NAME}: {exc}"]
    if manifest.get("format_version") != FORMAT_VERSION:
        # Nothing else can be read with this version's rules.
        return [f"{MANIFEST_NAME}: format_version {manifest.get('format_version')} != {FORMAT_VERSION}; "
                "regenerate with scripts/gen_kernels.py"]
    problems = []
    options = (manifest.get("ptxas") or {}).get("options")
    if not isinstance(options, list) or not all(isinstance(o, str) for o in options):
        problems.append(f"ptxas.options {options!r} is not a list of strings")
    # Every PTX was made by the command the manifest names (a stale compile
    # cache once slipped in PTX of earlier partial runs).
    header = f"// Generated by {manifest.get('generated_by')}; do not edit.\n"
    if manifest.get("target") != dict(TARGET, max_shared_bytes=MAX_SHARED_BYTES):
        problems.append(f"unexpected target {manifest.get('target')}")
    raw, pack_problems = verify_pack(out_dir, manifest)
    problems += pack_problems
    ids = [e.get("id") for e in manifest.get("variants", [])]
    if ids != sorted(set(ids)):
        problems.append("variant ids are not unique and sorted")
    records = []
    for entry in manifest.get("variants", []):
        vid = entry.get("id")
        for kind in FILE_KINDS:
            rec = (entry.get("files") or {}).get(kind)
            if rec is not None:
                records.append(rec)
                if rec.get("path") != logical_path(kind, vid):
                    problems.append(f"{vid}: {kind} path {rec.get('path')} != {logical_path(kind, vid)}")
        v = variants_by_id.get(vid)
        if v is None:
            problems.append(f"{vid}: not a variant of the current matrix")
            continue
        if entry.get("axes") != v.axes() or entry.get("op") != v.op or entry.get("role") != v.role:
            problems.append(f"{vid}: axes/op/role differ from the matrix")
        if entry.get("produced") != PRODUCED.get(v.op):
            problems.append(f"{vid}: produced {entry.get('produced')} != {PRODUCED.get(v.op)}")
        if foreign and entry.get("status") == "rejected" and entry.get("reason"):
            continue  # vLLM's kernel did not fit the ABI: the reason says how
        try:
            if foreign:
                abi.foreign_compile_inputs(v, arg_names_of(v))
                _, constexprs, _ = abi.compile_inputs(v, abi.signature_names(v))
            else:
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
        if raw is None:
            continue
        texts = {}
        for kind in FILE_KINDS:
            rec = entry["files"][kind]
            offset, size = rec.get("offset"), rec.get("bytes")
            inside = isinstance(offset, int) and isinstance(size, int) and 0 <= offset <= offset + size <= len(raw)
            data = raw[offset:offset + size] if inside else None
            if data is None:
                problems.append(f"{vid}: {rec.get('path')} lies outside the pack")
                continue
            if sha256(data) != rec.get("sha256"):
                problems.append(f"{vid}: {rec['path']} contents do not match the manifest")
            texts[kind] = data
        if "ptx" in texts:
            ptx = texts["ptx"].decode("utf-8")
            if not stack and not ptx.startswith(header):
                problems.append(f"{vid}: PTX does not start with the manifest's header {header.strip()!r}")
            if not foreign:  # vLLM's own kernels list their own parameters
                problems += [f"{vid}: {p}" for p in check_entry_abi(v, entry, ptx)]
    if raw is not None:
        problems += check_layout(records, len(raw))
    for sub in FORMAT1_DIRS:
        if os.path.exists(os.path.join(out_dir, sub)):
            problems.append(f"{sub}/: left over from format 1; every file now lives in {PACK_NAME}")
    if os.path.exists(os.path.join(out_dir, FORMAT2_MANIFEST_NAME)):
        problems.append(f"{FORMAT2_MANIFEST_NAME}: left over from format 2; the manifest is {MANIFEST_NAME}")
    return problems


def remove_format1_files(out_dir: str) -> list:
    """Deletes format 1's per-file .gz files (and their folders once empty)
    from out_dir; returns what it removed. Anything else there is left for
    --verify to flag."""
    removed = []
    for sub in FORMAT1_DIRS:
        folder = os.path.join(out_dir, sub)
        if not os.path.isdir(folder):
            continue
        for name in sorted(os.listdir(folder)):
            if name.endswith(f".{sub}.gz"):
                os.remove(os.path.join(folder, name))
                removed.append(f"{sub}/{name}")
        if not os.listdir(folder):
            os.rmdir(folder)
    if os.path.exists(os.path.join(out_dir, FORMAT2_MANIFEST_NAME)):
        os.remove(os.path.join(out_dir, FORMAT2_MANIFEST_NAME))
        removed.append(FORMAT2_MANIFEST_NAME)
    return removed
