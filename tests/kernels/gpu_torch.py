"""What the GPU scripts of tests/kernels share: torch on a machine with a GPU, or the
CTest skip line ("skipped: no GPU (<why>)") when there is none. With LP_REQUIRE_GPU=1
(scripts/gpu_acceptance.sh) an absence fails instead, as tests/support/gpu.hpp does."""

import os
import sys


def _no_gpu(why):
    """Says why there is no GPU: a skip, or with LP_REQUIRE_GPU=1 a failure (exit 1)."""
    if os.environ.get("LP_REQUIRE_GPU") == "1":
        print(f"LP_REQUIRE_GPU=1 and no GPU ({why})")
        sys.exit(1)
    print(f"skipped: no GPU ({why})")


def torch_with_gpu():
    """The torch module when it is installed and sees a CUDA device; otherwise None,
    after printing why the caller skips."""
    try:
        import torch
    except ImportError:
        _no_gpu("torch is not installed")
        return None
    if not torch.cuda.is_available():
        _no_gpu("torch sees no CUDA device")
        return None
    return torch
