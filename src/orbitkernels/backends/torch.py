"""PyTorch back-end: the engine's heavy loops on any torch device (CPU, CUDA, MPS).

Imported only when ``backend="torch"`` is asked for; PyTorch is the optional
extra ``orbitkernels[torch]``.
"""
from __future__ import annotations

import numpy as np

from ._common import rbf_pool_passes, trig_pool_passes

__all__ = ["TorchBackend"]


def _import_torch():
    try:
        import torch
    except ImportError as exc:  # pragma: no cover - exercised when torch is absent
        raise ImportError(
            "backend='torch' needs PyTorch, which is an optional dependency of orbitkernels: "
            "install it with `pip install orbitkernels[torch]` (or a torch build for your device)"
        ) from exc
    return torch


_DTYPES = {"float32": "float32", "float64": "float64", "complex64": "complex64", "complex128": "complex128"}


class TorchBackend:
    name = "torch"
    #: whole chunks are pooled at once: on a GPU the kernels want large blocks
    prefers_cache_blocks = False
    #: pooled blocks live on the device: the engine copies them into its NumPy output
    pools_into_numpy = False
    #: PyTorch's caching allocator keeps the device's freed blocks: the engine allocates per chunk
    reuses_buffers = False

    def __init__(self, device=None):
        torch = _import_torch()
        self.torch = torch
        self.device = torch.device(device if device is not None else "cpu")
        if self.device.type == "cuda" and not torch.cuda.is_available():
            raise RuntimeError(f"device={device!r} was asked for but torch.cuda.is_available() is False")

    def __reduce__(self):
        return (TorchBackend, (str(self.device),))

    # conversion ------------------------------------------------------------
    def dtype(self, name):
        return getattr(self.torch, np.dtype(name).name)

    def asarray(self, a, dtype=None):
        torch = self.torch
        if dtype is not None and not isinstance(dtype, torch.dtype):
            dtype = self.dtype(dtype)
        if isinstance(a, torch.Tensor):
            return a.to(device=self.device, dtype=dtype or a.dtype)
        a = np.asarray(a)
        if dtype is None:
            dtype = self.dtype(a.dtype)
        return torch.as_tensor(np.ascontiguousarray(a), device=self.device).to(dtype)

    def to_numpy(self, a):
        if isinstance(a, self.torch.Tensor):
            return a.detach().to("cpu").numpy()
        return np.asarray(a)

    def complex_dtype(self, dtype):
        single = np.dtype(str(dtype).replace("torch.", "")) == np.float32
        return self.torch.complex64 if single else self.torch.complex128

    def empty(self, shape, dtype):
        return self.torch.empty(shape, dtype=self.asarray(np.zeros(0), dtype).dtype, device=self.device)

    def permute(self, a, axes):
        return a.permute(*axes)

    def contiguous(self, a):
        return a.contiguous()

    def concatenate(self, arrays, axis):
        return self.torch.cat(arrays, dim=axis)

    def sparse(self, M, dtype):
        """A SciPy sparse matrix as a dense tensor: the polar matrices are small, and dense GEMMs
        run on every device (sparse kernels do not)."""
        return self.asarray(M.toarray(), dtype)

    # algebra ---------------------------------------------------------------
    def matmul(self, a, b, out=None):
        return self.torch.matmul(a, b) if out is None else self.torch.matmul(a, b, out=out)

    def multiply(self, a, b, out=None):
        return self.torch.mul(a, b) if out is None else self.torch.mul(a, b, out=out)

    def sparse_matmul(self, P, X):
        """``P`` (from :meth:`sparse`) applied to every row of ``X``: ``X @ P.T``."""
        return self.torch.matmul(X, P.T)

    def conj(self, a):
        return self.torch.conj(a).resolve_conj()

    def cos(self, a):
        return self.torch.cos(a)

    def cos_(self, a):
        """In place (``a`` must be a tensor the caller owns)."""
        return a.cos_()

    def add_(self, a, b):
        """``a += b`` in place, broadcasting ``b``."""
        return a.add_(b)

    def sin(self, a):
        return self.torch.sin(a)

    def exp(self, a):
        return self.torch.exp(a)

    def rfftn(self, a, axes):
        return self.torch.fft.rfftn(a, dim=tuple(axes))

    def irfftn(self, a, shape, axes):
        return self.torch.fft.irfftn(a, s=tuple(shape), dim=tuple(axes))

    def take(self, a, idx, axis):
        idx = self.torch.as_tensor(np.asarray(idx), device=self.device, dtype=self.torch.long)
        return self.torch.index_select(a, axis % a.ndim, idx)

    def trig_pool(self, S, weights, offset=None, layout="nsr"):
        """Raj et al. 2017, Eq. 7 (see the NumPy back-end): phase and cosine in place in ``S``, then one
        matrix-vector product per output; ``(cos, sin)`` sums without an offset."""
        return trig_pool_passes(self, S, weights, offset, layout)

    def rbf_pool(self, S, x_sq, t_sq, gamma, weights):
        """Raj et al. 2017, Eq. 8 (see the NumPy back-end): Gaussian values from the dot products, then one
        matrix-vector product."""
        return rbf_pool_passes(self, S, x_sq, t_sq, gamma, weights)

    def cdf_pool(self, S, weights, n_bins, value_range, scale=1.0):
        """Weighted CDF over the last axis at thresholds ``value_range·k/n``, times ``scale`` (see the NumPy
        back-end)."""
        torch = self.torch
        n = n_bins
        rows, m, r = S.shape
        nb = 2 * n + 2
        idx = torch.clamp(torch.ceil(S * (n / value_range)), -n, n + 1).to(torch.long) + n
        w = self.asarray(np.asarray(weights, dtype=np.float64), S.dtype)
        counts = torch.zeros((rows, m, nb), dtype=S.dtype, device=self.device)
        counts.scatter_add_(2, idx, w.expand(rows, m, r).contiguous())
        return torch.cumsum(counts, dim=2)[:, :, : 2 * n + 1] * scale
