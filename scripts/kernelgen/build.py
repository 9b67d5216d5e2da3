"""Worker side: compile one variant with Triton for sm_90 and describe it.

Runs in the generator's worker processes. Everything returned is plain data
(text, bytes, ints) so the parent alone writes files, in a fixed order.
"""

import hashlib
import importlib
import os
import re
import subprocess
import sys

from . import abi
from .variants import Variant

TARGET = {"backend": "cuda", "arch": 90, "warp_size": 32}
# cudaDevAttrMaxSharedMemoryPerBlockOptin on sm_90 (H100/H200/H20): the
# limit Triton checks when it loads a kernel; on a machine without a GPU it
# never gets that far, so the generator applies the same rule itself.
MAX_SHARED_BYTES = 232448

_state = {}


def triton_dir() -> str:
    import triton
    return os.path.dirname(os.path.abspath(triton.__file__))


def tool_path(name: str) -> str:
    return os.path.join(triton_dir(), "backends", "nvidia", "bin", name)


def _relative_di_paths(llir: str, repo_root: str) -> str:
    # Line info keeps absolute source directories (the checkout, the Python
    # install). Rewriting them in the LLVM IR, before PTX and cubin are
    # made, keeps full line info, keeps the committed PTX exactly what
    # ptxas compiled, and makes the output independent of where things live.
    site = os.path.dirname(triton_dir())

    def fix(match):
        directory = match.group(2)
        for root in (repo_root, site):
            if directory == root or directory.startswith(root + os.sep):
                directory = os.path.relpath(directory, root)
                break
        return f'{match.group(1)}directory: "{directory}"'

    return re.sub(r'(!DIFile\(filename: "[^"]*", )directory: "([^"]*)"', fix, llir)


def _install_stage_hook(header: str, repo_root: str):
    import triton

    def hook(backend=None, stages=None, options=None, language=None, capability=None):
        if stages is None:
            # Triton >= 3.8 also calls the hook with no arguments, for a (key, hash)
            # that enters the compile cache key: what the hook does is fixed by the header.
            digest = hashlib.sha256(f"loraprobe stage hook: {header}".encode()).hexdigest()
            return f"loraprobe-stage-hook-{digest}", digest
        make_llir, make_ptx = stages["llir"], stages["ptx"]
        stages["llir"] = lambda src, md: _relative_di_paths(make_llir(src, md), repo_root)
        # The header goes in before ptxas runs, so the committed PTX is the
        # byte-exact input of the committed cubin.
        stages["ptx"] = lambda src, md: f"// {header}\n" + make_ptx(src, md)

    triton.knobs.runtime.add_stages_inspection_hook = hook


def _ptxas_options(argv: list) -> list:
    """The options of a ptxas command line Triton ran: everything but the
    binary, the input .ptx and `-o OUTPUT` (temporary names)."""
    options, skip = [], False
    for arg in argv[1:]:
        if skip:
            skip = False
        elif arg == "-o":
            skip = True
        elif not arg.endswith(".ptx"):
            options.append(arg)
    return options


def _install_ptxas_recorder():
    """Records the options of every ptxas run Triton makes in this worker
    (make_cubin calls subprocess.run), so the manifest says which options made
    the cubins: they differ between Triton versions (--regAllocOptLevel=2 from 3.7
    on) and are read from the build, never assumed."""
    real_run = subprocess.run

    def run(args, *rest, **kwargs):
        if isinstance(args, (list, tuple)) and args and os.path.basename(str(args[0])).startswith("ptxas") \
                and "-o" in args:
            _state["ptxas_options"] = _ptxas_options([str(a) for a in args])
            _state["ptxas_binary"] = os.path.abspath(str(args[0]))
        return real_run(args, *rest, **kwargs)

    subprocess.run = run


def import_kernels(repo_root: str):
    """Make kernels/triton importable (test_hooks imports lora_expand by name)."""
    kernel_dir = os.path.join(repo_root, "kernels", "triton")
    if kernel_dir not in sys.path:
        sys.path.insert(0, kernel_dir)
    _state["repo_root"] = repo_root


def _apply_worker_env(env: dict):
    # The parent's environment reaches a spawned worker only as it was at
    # spawn time, and anything that runs on re-import could change it again;
    # so set the compile environment here and check that Triton sees it.
    os.environ.update(env)
    from triton import knobs
    seen = {
        "TRITON_CACHE_DIR": knobs.cache.dir,
        "TRITON_ALWAYS_COMPILE": "1" if knobs.compilation.always_compile else "0",
        "TRITON_PTXAS_PATH": knobs.nvidia.ptxas.path,
    }
    wrong = {k: v for k, v in seen.items() if k in env and v != env[k]}
    if wrong:
        raise RuntimeError(f"compile worker: Triton does not see the generator's environment: {wrong} (wanted {env})")


def init_worker(repo_root: str, header: str, env: dict, empty_cwd: str, vllm_ops_dir=None):
    """Per-process setup of a compile worker; env (TRITON_CACHE_DIR,
    TRITON_ALWAYS_COMPILE, TRITON_PTXAS_PATH) is applied and checked, and
    the worker moves into empty_cwd, an empty folder nobody writes to."""
    _apply_worker_env(env)
    import_kernels(repo_root)
    if vllm_ops_dir:
        use_vllm_kernels(vllm_ops_dir)
    _install_stage_hook(header, repo_root)
    _install_ptxas_recorder()
    # Triton runs ptxas in the current directory. ptxas records the mtime
    # and size of every line-info file it can open there, and our relative
    # paths (kernels/triton/..., triton/language/...) open from the repo
    # root: cubins would depend on checkout time and on where the generator
    # was started. From an empty folder nothing resolves and ptxas records
    # 0 and 0, as it already did for triton/language/standard.py.
    if os.listdir(empty_cwd):
        raise RuntimeError(f"compile worker: {empty_cwd} is not empty")
    os.chdir(empty_cwd)


def use_vllm_kernels(ops_dir: str) -> None:
    """From now on kernel_function() returns vLLM's own kernels, lifted from the
    installed vLLM's LoRA ops folder (vllm_source.py) into a temporary folder of this
    process (never the checkout)."""
    import atexit
    import shutil
    import tempfile
    from . import vllm_source
    out_dir = tempfile.mkdtemp(prefix="loraprobe-vllm-")
    atexit.register(shutil.rmtree, out_dir, True)
    _state["vllm_module"] = vllm_source.load_module(vllm_source.write_module(ops_dir, out_dir))
    _state["vllm_ops_dir"] = ops_dir


def kernel_function(v: Variant):
    module, name = abi.kernel_source(v)
    lifted = _state.get("vllm_module")
    if lifted is None:
        return getattr(importlib.import_module(module), name)
    if v.role not in ("kernel", "negative_control"):
        # The controls and test hooks are loraprobe's by definition (a sweep's positive control).
        return getattr(importlib.import_module(module), name)
    fn = getattr(lifted, name, None)
    if fn is None:
        missing = f" (it has no {', '.join(lifted.MISSING_FILES)})" if lifted.MISSING_FILES else ""
        raise LookupError(f"vLLM's LoRA ops at {_state['vllm_ops_dir']} define no @triton.jit {name}{missing}")
    return fn


def _sanitise(text: str) -> str:
    text = text.replace(_state.get("repo_root", "\0") + os.sep, "").replace(triton_dir(), "<triton>")
    return re.sub(r"/tmp/[\w.-]+", "<tmp>", text)


def _reason(exc: BaseException) -> str:
    # Triton wraps the real error in one CompilationError per inlined call
    # ("at line:col" + source excerpt); the innermost cause says what is wrong.
    chain = [exc]
    while chain[-1].__cause__ is not None and len(chain) < 32:
        chain.append(chain[-1].__cause__)
    root = chain[-1]
    lines = [line.strip() for line in str(root).splitlines() if line.strip()]
    if "ptxas" in type(root).__name__.lower():
        # PTXASError: a summary line, then ptxas's own stderr.
        message = " ".join(lines[:4])
    else:
        message = lines[-1] if lines else ""
    where = next((str(e).splitlines()[0] for e in reversed(chain) if str(e).startswith("at ")), "")
    text = f"{type(root).__name__}: {message}" + (f" ({where.rstrip(':')} of the innermost function)" if where else "")
    return _sanitise(text)[:500]


_PARAM_RE = re.compile(r"\.param\s+\.(\w+)(\s+\.ptr[^\n,]*)?\s+(\w+)")


def ptx_entry(ptx: str) -> tuple:
    """(entry name, [PTX type of each parameter]) of the one .entry in ptx."""
    m = re.search(r"\.visible\s+\.entry\s+(\w+)\s*\(([^)]*)\)", ptx)
    if not m:
        raise ValueError("no .visible .entry in PTX")
    return m.group(1), [p.group(1) for p in _PARAM_RE.finditer(m.group(2))]


def resource_usage(cubin_path: str) -> dict:
    out = subprocess.run([tool_path("cuobjdump"), "--dump-resource-usage", cubin_path], check=True,
                         capture_output=True, text=True).stdout
    m = re.search(r"REG:(\d+)\s+STACK:(\d+)\s+SHARED:(\d+)\s+LOCAL:(\d+)", out)
    if not m:
        raise ValueError(f"unexpected cuobjdump output: {out!r}")
    reg, stack, shared, local = (int(x) for x in m.groups())
    return {"registers": reg, "stack_bytes": stack, "static_shared_bytes": shared, "local_bytes": local}


def compile_variant(v: Variant, scratch_dir: str) -> dict:
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    params = None
    lifted = _state.get("vllm_module")
    try:
        fn = kernel_function(v)
        foreign = lifted is not None and getattr(lifted, fn.__name__, None) is fn
        if foreign:
            signature, constexprs, attrs, params = abi.foreign_compile_inputs(v, fn.arg_names)
        else:
            signature, constexprs, attrs = abi.compile_inputs(v, fn.arg_names)
    except (LookupError, ValueError) as exc:
        return {"id": v.id, "status": "rejected", "reason": _sanitise(f"{type(exc).__name__}: {exc}")[:500]}
    src = ASTSource(fn=fn, signature=signature, constexprs=constexprs, attrs=attrs)
    target = GPUTarget(TARGET["backend"], TARGET["arch"], TARGET["warp_size"])
    _state["ptxas_options"] = None
    try:
        kernel = triton.compile(src, target=target, options={"num_warps": v.num_warps, "num_stages": v.num_stages})
    except Exception as exc:  # Triton raises many types; each is a recorded rejection.
        return {"id": v.id, "status": "rejected", "reason": _reason(exc)}

    md = kernel.metadata
    if foreign:
        result_source = {"file": "vllm/lora/ops/triton_ops/" + lifted.LIFTED_FROM[fn.__name__],
                         "function": fn.__name__}
    else:
        result_source = None
    if _state["ptxas_options"] is None:
        raise RuntimeError(f"{v.id}: Triton made a cubin without a ptxas run this worker saw")
    result = {"id": v.id, "status": "ok", "reason": None, "ptxas_options": _state["ptxas_options"],
              "ptxas_binary": _state.get("ptxas_binary"), "source": result_source, "params": params}
    if md.shared > MAX_SHARED_BYTES:
        # Same wording as Triton's OutOfResources at load time.
        result = {
            "id": v.id, "status": "rejected", "reason":
            f"OutOfResources: out of resource: shared memory, Required: {md.shared}, "
            f"Hardware limit: {MAX_SHARED_BYTES}. Reducing block sizes or `num_stages` may help."
        }
        return result

    ptx = kernel.asm["ptx"]
    cubin = kernel.asm["cubin"]
    entry, ptx_types = ptx_entry(ptx)
    cubin_path = os.path.join(scratch_dir, hashlib.sha256(v.id.encode()).hexdigest() + ".cubin")
    with open(cubin_path, "wb") as f:
        f.write(cubin)
    try:
        usage = resource_usage(cubin_path)
    finally:
        os.remove(cubin_path)
    result.update({
        "ptx": ptx,
        "cubin": cubin,
        "entry": entry,
        "ptx_param_types": ptx_types,
        "metadata": {
            "name": md.name,
            "shared": md.shared,
            "global_scratch_size": md.global_scratch_size,
            "global_scratch_align": md.global_scratch_align,
            "profile_scratch_size": md.profile_scratch_size,
            "profile_scratch_align": md.profile_scratch_align,
            "num_warps": md.num_warps,
            "num_stages": md.num_stages,
            "num_ctas": md.num_ctas,
            "ptx_version": md.ptx_version,
            "triton_version": md.triton_version,
        },
        "resource_usage": usage,
    })
    return result
