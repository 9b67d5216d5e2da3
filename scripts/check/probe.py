"""loraprobe check's probe: the Python stack vLLM runs in, as one JSON object on stdout.

Run by `loraprobe check` (and `loraprobe env`) with the interpreter of the user's
environment (--python). It reads versions from the installed distributions' metadata and
locates vLLM's LoRA ops without importing vllm or torch: both take seconds, and importing
them may need a GPU. It imports Triton's NVIDIA backend, which needs no GPU, to ask Triton
itself which ptxas it runs for sm_90 (TRITON_PTXAS_PATH honoured as Triton honours it).
Standard library only; Python 3.8 and later. Nothing it prints is obeyed: loraprobe reads
it through its bounded JSON reader and checks every path it runs.
"""

import importlib.metadata
import importlib.util
import json
import os
import platform
import sys

# The environment variables that decide which LoRA kernels vLLM builds and which ptxas
# Triton runs (vllm/envs.py, vllm/lora/ops/triton_ops/utils.py, triton/knobs.py).
ENV_NAMES = ("VLLM_LORA_ENABLE_DUAL_STREAM", "VLLM_LORA_DISABLE_PDL", "VLLM_TUNED_CONFIG_FOLDER",
             "VLLM_BATCH_INVARIANT", "TRITON_PTXAS_PATH", "TRITON_PTXAS_BLACKWELL_PATH")
SM90 = 90


def version_of(dist):
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return None


def package_dir(name):
    """The folder of a top-level package, found without importing it."""
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    return os.path.abspath(list(spec.submodule_search_locations)[0])


def vllm_flag(name):
    """vLLM reads these as bool(int(value)): "" or unset is False; a non-integer makes vLLM raise."""
    raw = os.environ.get(name)
    if raw is None:
        return {"set": False, "value": None, "on": False, "error": None}
    try:
        return {"set": True, "value": raw, "on": bool(int(raw)), "error": None}
    except ValueError:
        return {"set": True, "value": raw, "on": False, "error": f"vLLM would raise: int({raw!r}) is no integer"}


def call_get_ptxas(nvidia, knobs):
    """get_ptxas(arch) from Triton 3.6 on; get_ptxas() in 3.5; the knob before that."""
    if not hasattr(nvidia, "get_ptxas"):
        return knobs.nvidia.ptxas
    try:
        return nvidia.get_ptxas(SM90)
    except TypeError:
        return nvidia.get_ptxas()


def sm90_tool(nvidia, knobs):
    """(the ptxas tool Triton runs for sm_90, the variable that overrides it). Which knob
    get_ptxas reads is seen, not guessed: each ptxas descriptor of Triton's knobs class is
    wrapped for the call and records that it was read (Triton 3.8 reads `ptxas` below
    sm_100, 3.9 `ptxas_blackwell` from sm_90 on; the override of each is its descriptor's
    key)."""
    cls = type(knobs.nvidia)
    names = [n for n in ("ptxas", "ptxas_blackwell") if n in cls.__dict__]
    read = []

    class Spy:
        def __init__(self, name, inner):
            self.name, self.inner = name, inner

        def __get__(self, obj, objtype=None):
            read.append(self.name)
            return self.inner.__get__(obj, objtype)

    originals = {n: cls.__dict__[n] for n in names}
    try:
        for n in names:
            setattr(cls, n, Spy(n, originals[n]))
        tool = call_get_ptxas(nvidia, knobs)
    finally:
        for n, d in originals.items():
            setattr(cls, n, d)
    knob = getattr(originals.get(read[-1]) if read else None, "key", None) or "TRITON_PTXAS_PATH"
    return tool, knob


def triton_ptxas(triton_dir):
    """Which ptxas Triton runs for sm_90, asked of Triton itself."""
    bin_dir = os.path.join(triton_dir, "backends", "nvidia", "bin")
    out = {"bin_dir": bin_dir if os.path.isdir(bin_dir) else None, "sm90_path": None, "sm90_knob": None,
           "error": None, "bundled": {},
           "imported_version": None}
    for name in ("ptxas", "ptxas-blackwell", "nvdisasm"):
        path = os.path.join(bin_dir, name)
        out["bundled"][name] = path if os.path.isfile(path) else None
    try:
        import triton
        from triton.backends.nvidia import compiler as nvidia
        from triton import knobs
        out["imported_version"] = triton.__version__
        tool, knob = sm90_tool(nvidia, knobs)
        out["sm90_path"] = os.path.abspath(tool.path)
        out["sm90_knob"] = knob
    except Exception as exc:  # a broken install says why; loraprobe reports it, never guesses
        out["error"] = f"{type(exc).__name__}: {exc}"[:500]
    return out


def utf8(value):
    """value with every str made valid UTF-8: a file name's undecodable bytes (Python holds
    them as lone surrogates, which JSON readers refuse) are written as backslash escapes."""
    if isinstance(value, str):
        return value.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    if isinstance(value, dict):
        return {utf8(k): utf8(v) for k, v in value.items()}
    if isinstance(value, list):
        return [utf8(v) for v in value]
    return value


def main():
    vllm_dir = package_dir("vllm")
    ops = os.path.join(vllm_dir, "lora", "ops", "triton_ops") if vllm_dir else None
    triton_dir = package_dir("triton")
    report = {
        "probe_version": 1,
        "python": {"executable": sys.executable, "version": platform.python_version(), "prefix": sys.prefix},
        "vllm": {"version": version_of("vllm"), "dir": vllm_dir,
                 "lora_ops_dir": ops if ops and os.path.isdir(ops) else None},
        "torch": {"version": version_of("torch")},
        "triton": {"version": version_of("triton") or version_of("pytorch-triton"), "dir": triton_dir},
        "env": {name: os.environ.get(name) for name in ENV_NAMES},
        "vllm_flags": {name: vllm_flag(name) for name in
                       ("VLLM_LORA_ENABLE_DUAL_STREAM", "VLLM_LORA_DISABLE_PDL", "VLLM_BATCH_INVARIANT")},
        "ptxas": triton_ptxas(triton_dir) if triton_dir else None,
    }
    json.dump(utf8(report), sys.stdout, sort_keys=True)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
