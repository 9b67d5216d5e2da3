#!/usr/bin/env python3
"""Build one of loraprobe's embedded kernel sets: AOT-compile our Triton LoRA
kernels (kernels/triton) for sm_90 with one Triton release and its bundled
ptxas, and write kernels/sets/triton-<version>/set.pack.xz (every PTX and
cubin, as xz streams of 4 MiB each) and manifest.json.xz.

The sets under kernels/sets/ are made by this script and only by it;
regenerating with the same Triton (and liblzma) gives the same bytes.
kernels/README.md documents the manifest and the pack, and which matrix each
shipped Triton version has (SHIPPED_SETS below).

    python3 scripts/gen_kernels.py --triton 3.6.0          # the full 3.6.0 set (slow)
    python3 scripts/gen_kernels.py --triton 3.9.0          # the shipped 3.9.0 set (matrix "upgrade")
    python3 scripts/gen_kernels.py --triton 3.8.0 --only block_n=128,num_stages=2 --out /tmp/k
    python3 scripts/gen_kernels.py --verify --out kernels/sets/triton-3.6.0
    python3 scripts/gen_kernels.py --repack                # every shipped set's pack in today's layout
    python3 scripts/gen_kernels.py --list --only shrink
    python3 scripts/gen_kernels.py --stack --ids ids.txt --out /tmp/k   # as `loraprobe check` builds

Standard library + Triton only. Needs no GPU.
"""

import argparse
import os
import shlex
import subprocess
import sys
import tempfile
import time

# Anything that steers Triton, MLIR or LLVM from the environment would make
# the output depend on the shell it ran in: main() drops it before Triton is
# imported.
_ENV_PREFIXES = ("TRITON_", "MLIR_", "LLVM_", "NVPTX_", "AMDGCN_")
_ENV_NAMES = ("DISABLE_PTXAS_OPT", "PTXAS_OPTIONS", "USE_IR_LOC", "DISABLE_LLVM_OPT")
# --stack keeps these: they choose the ptxas the user's Triton runs, which is what
# `loraprobe check` asks about (triton/knobs.py; get_ptxas in backends/nvidia/compiler.py).
STACK_ENV_NAMES = ("TRITON_PTXAS_PATH", "TRITON_PTXAS_BLACKWELL_PATH")

SCRIPT_DIR = os.path.dirname(os.path.abspath(__file__))
REPO_ROOT = os.path.dirname(SCRIPT_DIR)
sys.path.insert(0, SCRIPT_DIR)

from kernelgen import build, manifest  # noqa: E402
from kernelgen.abi import RUNTIME_QUANTITIES  # noqa: E402
from kernelgen.variants import MATRICES, build_matrix, matches, parse_filter, select_matrix  # noqa: E402

PINNED_TRITON = "3.6.0"
# The sets loraprobe embeds, by Triton version, with the matrix each is built with.
SHIPPED_SETS = {"3.6.0": "full", "3.7.1": "upgrade", "3.8.0": "upgrade", "3.9.0": "upgrade"}
SETS_DIR = os.path.join(REPO_ROOT, "kernels", "sets")


def shipped_dir(version: str) -> str:
    return os.path.join(SETS_DIR, f"triton-{version}")


def scrub_environment(keep=()) -> list:
    """Removes every variable that steers Triton, MLIR, LLVM or ptxas from
    os.environ; returns their names, sorted.

    Only main() may call this, never the module's top level: spawned workers
    re-import this file (as __mp_main__), and a scrub there would delete the
    private-cache settings compile_all hands them, so they would compile
    through the shared ~/.triton/cache and reuse whatever it holds."""
    scrubbed = sorted(k for k in os.environ
                      if (k.startswith(_ENV_PREFIXES) or k in _ENV_NAMES) and k not in keep)
    for key in scrubbed:
        del os.environ[key]
    return scrubbed


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", default=None,
                   help="output directory (default: kernels/sets/triton-<version>/ of this repository, for a "
                   "shipped version built with its shipped matrix)")
    p.add_argument("--matrix", choices=MATRICES, default=None,
                   help="which matrix to build: full, or upgrade (vLLM's defaults and their neighbours plus the "
                   "controls); default: the shipped matrix of the Triton version, else full")
    p.add_argument("--only", action="append", default=[],
                   help="build only matching variants: comma-separated terms, all must match; a term is "
                   "key=value on an axis, id, op or role (true/false/null/integers), or a substring of the id. "
                   "Repeat to narrow further. Partial sets must go to an explicit --out.")
    p.add_argument("-j", "--jobs", type=int, default=2, help="worker processes (default 2)")
    p.add_argument("--allow-triton-version", action="store_true",
                   help=f"run with a Triton other than {PINNED_TRITON} (the result is then not the reference set)")
    p.add_argument("--triton", metavar="VERSION",
                   help="build with this Triton release from PyPI, installed (once) into .tools/triton/VERSION/, "
                   "not into your environment; implies --allow-triton-version for a version other than "
                   f"{PINNED_TRITON}")
    p.add_argument("--verify", action="store_true",
                   help="build nothing; re-hash the files of --out against its manifest and re-check every "
                   "variant's parameter list against its kernel signature and specialisation")
    p.add_argument("--repack", action="store_true",
                   help="build nothing; store the pack of --out (default: every shipped set) again in this "
                   "script's pack layout, and update the manifest's stored_bytes and stored_sha256; the "
                   "uncompressed pack and every other field stay as they are")
    p.add_argument("--list", action="store_true", help="print the ids of the (filtered) matrix and exit")
    p.add_argument("--ids", metavar="FILE",
                   help="build exactly the variants whose ids FILE lists, one per line (any matrix's); every id "
                   "must exist. Combines with --only (which narrows further)")
    p.add_argument("--vllm-ops", metavar="DIR",
                   help="with --stack: build vLLM's own kernels, lifted from DIR (an installed "
                   "vllm/lora/ops/triton_ops; scripts/kernelgen/vllm_source.py), instead of kernels/triton")
    p.add_argument("--stack", action="store_true",
                   help="build as the installed Triton would for a user (what `loraprobe check` asks): with the "
                   "ptxas that Triton runs for sm_90, TRITON_PTXAS_PATH and TRITON_PTXAS_BLACKWELL_PATH honoured; "
                   "needs --out; implies --allow-triton-version")
    args = p.parse_args(argv)
    if args.jobs < 1:
        p.error("-j must be at least 1")
    if args.stack and args.out is None:
        p.error("--stack needs --out DIR: a user's stack never replaces a shipped set")
    if args.vllm_ops and not args.stack:
        p.error("--vllm-ops builds a user's stack: it needs --stack")
    if args.stack:
        args.allow_triton_version = True
    return args


def matrix_of(args, triton_version: str) -> str:
    return args.matrix or SHIPPED_SETS.get(triton_version, "full")


def canonical_command(args, triton_version: str) -> str:
    """The command as recorded in every generated file: options that change
    the output, in a fixed order (not -j, which only changes the speed)."""
    words = ["python3", "scripts/gen_kernels.py"]
    if args.out is not None and os.path.realpath(args.out) != os.path.realpath(shipped_dir(triton_version)):
        words += ["--out", args.out]
    if matrix_of(args, triton_version) != "full":
        words += ["--matrix", matrix_of(args, triton_version)]
    for only in args.only:
        words += ["--only", only]
    if args.ids:
        words += ["--ids", os.path.basename(args.ids)]
    if args.stack:
        words.append("--stack")
    if args.vllm_ops:
        words += ["--vllm-ops", "VLLM_OPS"]
    if args.triton:
        words += ["--triton", args.triton]
    elif args.allow_triton_version:
        words.append("--allow-triton-version")
    return shlex.join(words)


TRITON_VERSION_RE = r"^[0-9]+\.[0-9]+\.[0-9]+$"


def triton_site(version: str, log) -> str:
    """The folder that holds Triton `version` (.tools/triton/<version>/), pip-installed
    there without its dependencies on first use; the user's environment is untouched."""
    import re
    if not re.match(TRITON_VERSION_RE, version):
        raise ValueError(f"--triton {version!r}: expected a release such as 3.8.0")
    tools = os.environ.get("LP_TOOLS_DIR", os.path.join(REPO_ROOT, ".tools"))
    site = os.path.join(tools, "triton", version)
    marker = os.path.join(site, f"triton-{version}.dist-info")
    if not os.path.isdir(marker):
        log(f"gen_kernels: installing triton=={version} into {site}")
        subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "--no-deps",
                        "--no-compile", "--target", site, f"triton=={version}"], check=True,
                       env=dict(os.environ, PIP_ROOT_USER_ACTION="ignore"))
        if not os.path.isdir(marker):
            raise RuntimeError(f"pip installed no triton-{version}.dist-info into {site}")
    return site


def reexec_with_triton(args, argv, log) -> int:
    """Runs this script again with .tools/triton/<version> first on the path."""
    site = triton_site(args.triton, log)
    env = dict(os.environ)
    env["PYTHONPATH"] = site + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env["LP_GEN_KERNELS_TRITON_SITE"] = site
    return subprocess.run([sys.executable, os.path.abspath(__file__)] + argv, env=env).returncode


def sm90_ptxas_name() -> str:
    """The bundled ptxas Triton runs for the sm_90 target: "ptxas", or from Triton 3.9
    on "ptxas-blackwell" (a CUDA 13 ptxas; triton/backends/nvidia/compiler.py get_ptxas)."""
    from triton.backends.nvidia import compiler as nvidia
    from triton import knobs
    if hasattr(nvidia, "get_ptxas") and nvidia.get_ptxas(build.TARGET["arch"]) is not knobs.nvidia.ptxas:
        return "ptxas-blackwell"
    return "ptxas"


def stack_ptxas_path() -> str:
    """The ptxas the installed Triton runs for sm_90, with the environment's overrides,
    asked of Triton itself (get_ptxas from 3.8 on; knobs.nvidia.ptxas before)."""
    from triton.backends.nvidia import compiler as nvidia
    from triton import knobs
    if not hasattr(nvidia, "get_ptxas"):
        tool = knobs.nvidia.ptxas
    else:
        try:
            tool = nvidia.get_ptxas(build.TARGET["arch"])
        except TypeError:  # Triton 3.5: get_ptxas() takes no arch
            tool = nvidia.get_ptxas()
    return os.path.abspath(tool.path)


def ptxas_info(stack: bool = False) -> dict:
    if stack:
        path = stack_ptxas_path()
        # Inside the wheel, the wheel's relative path (as a shipped set records it), so
        # that loraprobe finds the binary as it finds any set's bundled ptxas; else the path.
        inside = os.path.relpath(path, os.path.dirname(build.triton_dir()))
        hint = inside if inside.startswith("triton" + os.sep) else path
    else:
        name = sm90_ptxas_name()
        path = build.tool_path(name)
        hint = f"triton/backends/nvidia/bin/{name}"
    text = subprocess.run([path, "--version"], check=True, capture_output=True, text=True).stdout
    version = next((line.strip() for line in text.splitlines() if "compilation tools" in line), text.strip())
    with open(path, "rb") as f:
        digest = manifest.sha256(f.read())
    return {"path_hint": hint, "version": version, "sha256": digest, "path": path}


def read_ids(path: str) -> list:
    with open(path, encoding="utf-8") as f:
        ids = [line.strip() for line in f if line.strip()]
    if not ids:
        raise ValueError(f"{path}: lists no variant id")
    return ids


def select(args, matrix: str):
    if args.ids:
        by_id = {v.id: v for v in build_matrix()}
        ids = read_ids(args.ids)
        unknown = [i for i in ids if i not in by_id]
        if unknown:
            raise ValueError(f"{args.ids}: {len(unknown)} id(s) no matrix has, first {unknown[0]!r}")
        variants = sorted((by_id[i] for i in set(ids)), key=lambda v: v.id)
    else:
        variants = select_matrix(matrix)
    for only in args.only:
        terms = parse_filter(only)
        variants = [v for v in variants if matches(v, terms)]
    return variants


def compile_all(variants, jobs, header, log, stack=False, vllm_ops=None):
    import concurrent.futures
    import multiprocessing

    results = {}
    with tempfile.TemporaryDirectory(prefix="gen_kernels-") as tmp:
        # A private cache that always recompiles: nothing from an earlier
        # run, another Triton or another checkout can leak into the set.
        # The workers get it explicitly (init_worker applies and checks it)
        # rather than through the inherited environment.
        worker_env = {
            "TRITON_CACHE_DIR": os.path.join(tmp, "cache"),
            "TRITON_ALWAYS_COMPILE": "1",
        }
        if not stack:
            worker_env["TRITON_PTXAS_PATH"] = build.tool_path("ptxas")
        # --stack: the workers inherit the user's ptxas variables as their Triton reads them
        # (Triton ignores one that names no file; the manifest names what it really ran).
        # ptxas's working directory (see init_worker): empty, so the line
        # info's relative paths resolve to nothing.
        empty_cwd = os.path.join(tmp, "ptxas-cwd")
        os.mkdir(empty_cwd)
        # spawn, not fork: the parent has imported Triton (LLVM, threads).
        ctx = multiprocessing.get_context("spawn")
        with concurrent.futures.ProcessPoolExecutor(max_workers=jobs, mp_context=ctx, initializer=build.init_worker,
                                                    initargs=(REPO_ROOT, header, worker_env, empty_cwd,
                                                              vllm_ops)) as pool:
            futures = {pool.submit(build.compile_variant, v, tmp): v for v in variants}
            start = time.monotonic()
            for n, fut in enumerate(concurrent.futures.as_completed(futures), 1):
                v = futures[fut]
                res = fut.result()
                results[v.id] = res
                note = "" if res["status"] == "ok" else f": {res['reason']}"
                log(f"[{n}/{len(variants)} {time.monotonic() - start:7.1f}s] {res['status']:8} {v.id}{note}")
    return results


def read_or_none(path):
    try:
        with open(path, "rb") as f:
            return f.read()
    except FileNotFoundError:
        return None


def write_set(out_dir, variants, results, command, triton_version, ptxas, log, stack=False):
    """Writes the pack and the manifest into out_dir; returns how many files
    it (re)wrote."""
    files = {}
    for v in variants:
        res = results[v.id]
        if res["status"] == "ok":
            files[manifest.logical_path("ptx", v.id)] = res["ptx"].encode("utf-8")
            files[manifest.logical_path("cubin", v.id)] = res["cubin"]
    raw, records = manifest.build_pack(files)
    log(f"gen_kernels: compressing {len(files)} files ({len(raw) / 1e6:.1f} MB) into {manifest.PACK_NAME}")
    stored = manifest.compress_pack(raw)
    written = 0
    pack_path = os.path.join(out_dir, manifest.PACK_NAME)
    # Leave an identical pack untouched (mtime, make, git stat).
    if read_or_none(pack_path) != stored:
        manifest.write_atomic(pack_path, stored)
        written += 1
    entries = []
    for v in variants:
        listed = None
        if results[v.id]["status"] == "ok":
            listed = {kind: records[manifest.logical_path(kind, v.id)] for kind in manifest.FILE_KINDS}
        entries.append(manifest.variant_entry(v, results[v.id], ptxas["version"], listed))
    for rel in manifest.remove_format1_files(out_dir):
        log(f"removed older-format file {rel}")
    # Every cubin of a set is made with the same ptxas options; the manifest says which.
    seen = sorted({tuple(r["ptxas_options"]) for r in results.values() if r["status"] == "ok"})
    if len(seen) != 1:
        raise RuntimeError(f"the variants were compiled with {len(seen)} different ptxas option lists: {seen}")
    if stack:
        # The manifest names the ptxas that made the cubins: the one Triton really ran.
        ran = sorted({r["ptxas_binary"] for r in results.values() if r["status"] == "ok"})
        if ran != [ptxas["path"]]:
            raise RuntimeError(f"Triton ran ptxas {ran}, not the {ptxas['path']} it names for sm_90")
    ptxas = dict({k: v for k, v in ptxas.items() if k != "path"}, options=list(seen[0]))
    top = {
        "$comment": f"Generated by {command}; do not edit. Fields: kernels/README.md.",
        "generated_by": command,
        "format_version": manifest.FORMAT_VERSION,
        "triton_version": triton_version,
        "ptxas": ptxas,
        "target": dict(build.TARGET, max_shared_bytes=build.MAX_SHARED_BYTES),
        "line_info": True,
        "grid_quantities": RUNTIME_QUANTITIES,
        "pack": manifest.pack_record(raw, stored),
        "variants": entries,
    }
    text = manifest.compress_manifest(manifest.dumps(top).encode("ascii"))
    manifest_path = os.path.join(out_dir, manifest.MANIFEST_NAME)
    if read_or_none(manifest_path) != text:
        manifest.write_atomic(manifest_path, text)
        written += 1
    return written


def repack(out_dirs, log) -> int:
    """--repack: each set's pack stored again with manifest.compress_pack (its
    uncompressed bytes, and so every file record, unchanged)."""
    for out_dir in out_dirs:
        try:
            top = manifest.read_manifest(out_dir)
        except (OSError, ValueError) as exc:
            log(f"repack: {out_dir}: {exc}")
            return 1
        raw, problems = manifest.verify_pack(out_dir, top)
        if raw is None or problems:
            for p in problems:
                log(f"repack: {out_dir}: {p}")
            return 1
        stored = manifest.compress_pack(raw)
        top["pack"] = manifest.pack_record(raw, stored)
        written = 0
        pack_path = os.path.join(out_dir, manifest.PACK_NAME)
        if read_or_none(pack_path) != stored:
            manifest.write_atomic(pack_path, stored)
            written += 1
        text = manifest.compress_manifest(manifest.dumps(top).encode("ascii"))
        manifest_path = os.path.join(out_dir, manifest.MANIFEST_NAME)
        if read_or_none(manifest_path) != text:
            manifest.write_atomic(manifest_path, text)
            written += 1
        log(f"repack: {out_dir}: {len(raw) / 1e6:.1f} MB stored in {len(stored) / 1e6:.2f} MB; "
            f"{written} file(s) rewritten")
    return 0


def arg_names_of(variant) -> list:
    return build.kernel_function(variant).arg_names


def dir_bytes(out_dir) -> int:
    total = 0
    for root, _, names in os.walk(out_dir):
        total += sum(os.path.getsize(os.path.join(root, n)) for n in names)
    return total


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    args = parse_args(argv)

    def log(msg):
        print(msg, file=sys.stderr, flush=True)

    if args.triton and "LP_GEN_KERNELS_TRITON_SITE" not in os.environ:
        try:
            return reexec_with_triton(args, argv, log)
        except (ValueError, RuntimeError, subprocess.CalledProcessError) as exc:
            log(f"gen_kernels: {exc}")
            return 2
    scrubbed = scrub_environment(keep=STACK_ENV_NAMES if args.stack else ())

    if args.list:
        try:
            variants = select(args, args.matrix or "full")
        except (OSError, ValueError) as exc:
            log(f"gen_kernels: --only/--ids: {exc}")
            return 2
        print("\n".join(v.id for v in variants))
        return 0
    if args.repack:
        return repack([args.out] if args.out else [shipped_dir(v) for v in SHIPPED_SETS], log)
    if args.verify:
        if args.out is None:
            log("gen_kernels: --verify needs --out DIR (for example kernels/sets/triton-3.6.0)")
            return 2
        out_dir = args.out
        build.import_kernels(REPO_ROOT)
        problems = manifest.verify(out_dir, {v.id: v for v in build_matrix()}, arg_names_of)
        for p in problems:
            log(f"verify: {p}")
        log(f"verify: {out_dir}: {'FAILED, %d problems' % len(problems) if problems else 'ok'}")
        return 1 if problems else 0

    import triton
    if args.triton and triton.__version__ != args.triton:
        log(f"gen_kernels: --triton {args.triton}, but Python imported Triton {triton.__version__} from "
            f"{os.path.dirname(triton.__file__)}")
        return 2
    if triton.__version__ != PINNED_TRITON and not (args.allow_triton_version or args.triton):
        log(f"gen_kernels: Triton {triton.__version__} found, the set is pinned to {PINNED_TRITON}; "
            "pass --allow-triton-version to build with it anyway")
        return 2
    version = triton.__version__
    matrix = matrix_of(args, version)
    try:
        variants = select(args, matrix)
    except (OSError, ValueError) as exc:
        log(f"gen_kernels: --only/--ids: {exc}")
        return 2
    if args.out is None:
        if version not in SHIPPED_SETS:
            log(f"gen_kernels: Triton {version} has no shipped set ({', '.join(SHIPPED_SETS)}); pass --out DIR")
            return 2
        if args.only or matrix != SHIPPED_SETS[version]:
            log(f"gen_kernels: a partial set (--only or --matrix) would replace the shipped "
                f"kernels/sets/triton-{version}; pass --out DIR")
            return 2
    out_dir = args.out or shipped_dir(version)
    if not variants:
        log("gen_kernels: no variant matches the filter")
        return 2
    if scrubbed:
        log(f"gen_kernels: ignoring environment: {' '.join(scrubbed)}")

    command = canonical_command(args, version)
    header = f"Generated by {command}; do not edit."
    ptxas = ptxas_info(stack=args.stack)
    log(f"gen_kernels: {len(variants)} variants (matrix {matrix}), Triton {version}, {ptxas['version']}, "
        f"-j {args.jobs}")
    start = time.monotonic()
    results = compile_all(variants, args.jobs, header, log, stack=args.stack, vllm_ops=args.vllm_ops)
    os.makedirs(out_dir, exist_ok=True)
    written = write_set(out_dir, variants, results, command, triton.__version__, ptxas, log, stack=args.stack)
    elapsed = time.monotonic() - start

    build.import_kernels(REPO_ROOT)
    if args.vllm_ops:
        build.use_vllm_kernels(args.vllm_ops)
    problems = manifest.verify(out_dir, {v.id: v for v in variants}, arg_names_of, foreign=bool(args.vllm_ops),
                               stack=args.stack)
    for p in problems:
        log(f"verify: {p}")
    ok = sum(1 for r in results.values() if r["status"] == "ok")
    log(f"gen_kernels: {ok} ok, {len(results) - ok} rejected, {written} files (re)written, "
        f"{dir_bytes(out_dir) / 1e6:.1f} MB in {out_dir}, {elapsed:.0f} s")
    for vid, res in sorted(results.items()):
        if res["status"] != "ok":
            log(f"  rejected {vid}: {res['reason']}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
