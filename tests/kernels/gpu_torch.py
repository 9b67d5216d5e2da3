"""What the GPU scripts of tests/kernels share: torch on a machine with a GPU, or the
CTest skip line ("skipped: no GPU") when there is none."""


def torch_with_gpu():
    """The torch module when it is installed and sees a CUDA device; otherwise None,
    after printing why the caller skips."""
    try:
        import torch
    except ImportError:
        print("skipped: no GPU (torch is not installed)")
        return None
    if not torch.cuda.is_available():
        print("skipped: no GPU")
        return None
    return torch
