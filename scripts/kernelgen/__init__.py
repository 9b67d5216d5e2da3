"""Helpers of scripts/gen_kernels.py: the variant matrix, the launch ABI of
our Triton kernels, compilation, and the manifest. Standard library + Triton."""
