"""Exact Haar-integration / orbit kernels as Gram matrices (the ground truth of the features)."""
from .haar import HaarKernel

__all__ = ["HaarKernel"]
