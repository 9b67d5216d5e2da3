"""Compiles vLLM's default fp32 expand twice with the Triton of this interpreter: as vLLM's
JIT specialises a real launch (pointers and 16-multiple ints carry tt.divisibility 16,
strides equal to 1 are constants: scripts/kernelgen/abi.py), and with none of that. The
two are different programs (registers, PTX, SASS), which is why loraprobe check compiles
the first: the second hides the hazard (shared/DESIGN.md: 247 registers, no finding).

Usage: python specialisation.py REPO   (exit 0 when the two differ as expected)
"""

import os
import sys
import tempfile

repo = sys.argv[1]
sys.path.insert(0, os.path.join(repo, "scripts"))
from kernelgen import abi, build  # noqa: E402
from kernelgen.variants import build_matrix  # noqa: E402

import triton  # noqa: E402
from triton.backends.compiler import GPUTarget  # noqa: E402
from triton.compiler import ASTSource  # noqa: E402

ID = "expand-fp32-bf16-m64n128k32-w4s2-evenk-add-s1"


def compile_one(v, specialised: bool, scratch: str) -> dict:
    fn = build.kernel_function(v)
    signature, constexprs, attrs = abi.compile_inputs(v, fn.arg_names)
    if not specialised:
        attrs = {}
        for name, spec in ((n, s) for n, _, s in abi.arguments(v)):
            if spec == abi.EQUAL_TO_1:  # a runtime int, as a launch with a stride != 1 would have it
                signature[name] = "i32"
                del constexprs[name]
    src = ASTSource(fn=fn, signature=signature, constexprs=constexprs, attrs=attrs)
    kernel = triton.compile(src, target=GPUTarget("cuda", 90, 32),
                            options={"num_warps": v.num_warps, "num_stages": v.num_stages})
    path = os.path.join(scratch, f"{specialised}.cubin")
    with open(path, "wb") as f:
        f.write(kernel.asm["cubin"])
    usage = build.resource_usage(path)
    return {"ptx": kernel.asm["ptx"], "cubin": kernel.asm["cubin"], "registers": usage["registers"]}


def main() -> int:
    build.import_kernels(repo)
    v = next(x for x in build_matrix() if x.id == ID)
    with tempfile.TemporaryDirectory() as scratch:
        os.environ["TRITON_CACHE_DIR"] = os.path.join(scratch, "cache")
        jit = compile_one(v, True, scratch)
        plain = compile_one(v, False, scratch)
    print(f"specialisation: {ID}, Triton {triton.__version__}: as the JIT specialises it "
          f"{jit['registers']} registers, unspecialised {plain['registers']}")
    problems = []
    if jit["cubin"] == plain["cubin"]:
        problems.append("the cubins are identical")
    if jit["ptx"].count(".param") == plain["ptx"].count(".param"):
        problems.append("the stride-1 constants did not leave the parameter list")
    if jit["registers"] == plain["registers"]:
        problems.append("the register counts are equal")
    for p in problems:
        print(f"specialisation: FAIL: {p}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
