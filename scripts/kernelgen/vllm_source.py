"""vLLM's own LoRA Triton kernels, lifted out of an installed vLLM without importing it.

`loraprobe check --kernels vllm` builds the kernels the user's vLLM ships, not ours.
Importing vllm's ops modules pulls in torch and vLLM's platform detection (seconds, and
a GPU on some platforms), so this module reads the files instead: every function
decorated with `triton.jit` (bare or called with options) is copied, with that
decorator, into one module that imports only triton; `triton.heuristics` decorators
are dropped (they compute launch-time constexprs such as EVEN_K, which the generator
passes itself). The kernels then compile exactly as vLLM's JIT would compile them,
through the same ABI table (abi.py), whose argument names are vLLM's.

Nothing is executed from vLLM's files but the bodies of those kernel functions, which
Triton compiles and never runs in Python.
"""

import ast
import importlib.util
import os
import sys

# The files of vllm/lora/ops/triton_ops/ whose @triton.jit functions are lifted: the
# kernels loraprobe's matrix has a counterpart of, and the helpers they call.
SOURCE_FILES = ("kernel_utils.py", "lora_expand_op.py", "lora_shrink_op.py", "fused_moe_lora_op.py",
                "fp8_kernel_utils.py", "lora_expand_fp8_op.py", "lora_shrink_fp8_op.py")
MODULE_NAME = "vllm_lora_kernels"

# Constexprs vLLM's kernels have and loraprobe's do not, with the value vLLM passes on
# CUDA (vllm 0.34.0: lora_shrink_op.py passes the partials only under batch
# invariance; fused_moe_lora_op.py sets FP32_ADD_INPUTS for XPU only).
VLLM_ONLY_CONSTEXPRS = {"STORE_PARTIALS": False, "PARTIAL_N": 0, "PARTIAL_K": 0, "FP32_ADD_INPUTS": False}


def _is_triton_call(node, attr: str) -> bool:
    target = node.func if isinstance(node, ast.Call) else node
    return isinstance(target, ast.Attribute) and target.attr == attr and \
        isinstance(target.value, ast.Name) and target.value.id == "triton"


def lift_functions(source: str, path: str) -> list:
    """(name, text) of every @triton.jit function of one file, its decorators but
    triton.jit dropped, in file order."""
    tree = ast.parse(source, filename=path)
    lines = source.splitlines()
    lifted = []
    for node in tree.body:
        if not isinstance(node, ast.FunctionDef):
            continue
        jit = [d for d in node.decorator_list if _is_triton_call(d, "jit")]
        if not jit:
            continue
        decorator = "@" + ast.get_source_segment(source, jit[0])
        body = "\n".join(lines[node.lineno - 1:node.end_lineno])
        lifted.append((node.name, decorator + "\n" + body))
    return lifted


def write_module(ops_dir: str, out_dir: str) -> str:
    """Writes out_dir/vllm_lora_kernels.py from the files of ops_dir; returns its path.
    A file ops_dir lacks is listed in MISSING_FILES; ValueError for a name defined twice."""
    parts = ["# Lifted by loraprobe (scripts/kernelgen/vllm_source.py) from vLLM's LoRA ops at",
             f"# {ops_dir}; only the @triton.jit functions, unchanged.",
             "import triton", "import triton.language as tl", ""]
    seen = {}
    missing = []
    for name in SOURCE_FILES:
        path = os.path.join(ops_dir, name)
        if not os.path.isfile(path):
            missing.append(name)  # an older vLLM: its kernels are not built, each saying why
            continue
        with open(path, encoding="utf-8") as f:
            source = f.read()
        for fn, text in lift_functions(source, path):
            if fn in seen:
                raise ValueError(f"{path}: {fn} is also defined in {seen[fn]}")
            seen[fn] = name
            parts += [f"# from {name}", text, ""]
    parts.append(f"LIFTED_FROM = {dict(sorted(seen.items()))!r}")
    parts.append(f"MISSING_FILES = {missing!r}")
    os.makedirs(out_dir, exist_ok=True)
    out = os.path.join(out_dir, MODULE_NAME + ".py")
    with open(out, "w", encoding="utf-8") as f:
        f.write("\n".join(parts) + "\n")
    return out


def load_module(path: str):
    """Imports the lifted module from its file (Triton reads kernel source from it)."""
    spec = importlib.util.spec_from_file_location(MODULE_NAME, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[MODULE_NAME] = module
    spec.loader.exec_module(module)
    return module
