"""PyTorch back-end: the engine's heavy loops on any torch device (CPU, CUDA, MPS).

Imported only when ``backend="torch"`` is asked for; PyTorch is the optional
extra ``orbitkernels[torch]``.
"""
from __future__ import annotations

import numpy as np

from ._common import rbf_pool_passes, trig_pool_passes

__all__: list[str] = []  # reached through orbitkernels.backends.get_backend


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
    #: working bytes per similarity of :meth:`cdf_pool` beyond the block itself: sorted values and their int64
    #: order, and with unequal weights their float64 cumulative sum (the scatter path: int64 bins and weights)
    cdf_work_bytes = 24

    def __init__(self, device=None):
        torch = _import_torch()
        self.torch = torch
        try:
            self.device = torch.device(device if device is not None else "cpu")
        except RuntimeError as exc:
            if isinstance(device, int):  # torch maps an index to the machine's accelerator
                raise RuntimeError(f"device={device!r} asks for an accelerator, and torch sees none here ({exc}); "
                                   "use device='cpu'") from exc
            raise ValueError(f"device={device!r} is not a torch device ({exc}); for example 'cpu', 'cuda', "
                             "'cuda:1' or 'mps'") from exc
        if self.device.type == "cuda" and not torch.cuda.is_available():
            raise RuntimeError(f"device={device!r} was asked for but torch.cuda.is_available() is False")
        if self.device.type == "meta":  # shapes without data: the features could never leave it
            raise ValueError(f"device={device!r} holds no data (torch's meta device); use 'cpu' or an accelerator")
        if self.device.type not in ("cpu", "cuda"):
            # a device this torch build lacks failed at the first array, "xpu" as an AssertionError from torch's insides
            try:
                torch.zeros(0).to(self.device)
            except (RuntimeError, AssertionError) as exc:
                raise RuntimeError(f"device={device!r} was asked for but this torch cannot use it ({exc})") from exc

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

    def to_numpy_into(self, a, out):
        """Copy ``a`` into the NumPy array ``out`` (its shape; a precision change rounds as NumPy's cast does).

        From a device the copy lands in ``out``'s memory: :meth:`to_numpy` then an assignment went through a host
        temporary as large as the features (a fresh allocation, its pages touched, and a second copy).
        """
        torch = self.torch
        if not isinstance(a, torch.Tensor) or a.device.type == "cpu":
            out[...] = self.to_numpy(a)
            return
        if tuple(a.shape) != out.shape:
            raise ValueError(f"cannot copy a block of shape {tuple(a.shape)} into rows of shape {out.shape}")
        torch.from_numpy(out).copy_(a.detach())

    def complex_dtype(self, dtype):
        if isinstance(dtype, self.torch.dtype):
            dtype = str(dtype).replace("torch.", "")
        single = np.dtype(dtype) == np.float32  # np.float32 itself too, as the NumPy back-end takes it
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

    def exp_(self, a):
        """In place (``a`` must be a tensor the caller owns)."""
        return a.exp_()

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
        matrix-vector product. The norms in S's precision and device, as NumPy's takes them (float64 NumPy norms
        made a float64 block, which the float32 weights then refused)."""
        return rbf_pool_passes(self, S, self.asarray(x_sq, S.dtype), self.asarray(t_sq, S.dtype), gamma, weights)

    def row_max_abs(self, S, axis=0):
        """max |S| over every axis but ``axis`` (the rows), as a column (see the NumPy back-end)."""
        other = tuple(a for a in range(S.ndim) if a != axis)
        return self.torch.maximum(S.amax(dim=other), -S.amin(dim=other)).reshape(-1, 1)

    def cdf_pool(self, S, weights, n_bins, value_range, scale=1.0):
        """Weighted CDF over the last axis at thresholds ``value_range·k/n``, times ``scale`` (see the NumPy
        back-end): Mroueh et al. 2015, §2. On a GPU by sorting (:meth:`_cdf_pool_sorted`), on the CPU by a
        scatter-add (:meth:`_cdf_pool_scatter`); with equal weights both count in integers and give NumPy's
        features bit for bit (tested on the CPU, measured on an H100 by ``benchmarks/gpu_check.py``)."""
        if self.device.type == "cpu":
            return self._cdf_pool_scatter(S, weights, n_bins, value_range, scale)
        return self._cdf_pool_sorted(S, weights, n_bins, value_range, scale)

    def _cdf_pool_sorted(self, S, weights, n_bins, value_range, scale=1.0):
        """1{S_k <= range·b/n} <=> ceil(S_k n / range) <= b, as on NumPy. Each row of r projections is sorted
        once; ceil(· n / range) is monotone, so the sorted values stay sorted after it, and the count of
        values at or below each threshold b = -n..n is one binary search (``searchsorted``). Unequal weights
        take the cumulative sum of the weights in sorted order at those counts (float64, like NumPy's weighted
        bincount).

        Measured on an H100 (``results/bench/gpu.json``): the GICDF transform at the same speed as with the
        scatter-add (5150 against 5189 images/s: the copy of its output to the host dominates), the pooling
        alone 0.96x (r = 64) to 0.6x (r = 441) of the scatter's speed with equal weights, 0.45x with unequal
        ones; kept on devices for its integer counts (the scatter-add there added float32 weights: 0.31 of
        GICDF's features differed from NumPy's by an ulp, none do now).
        """
        torch = self.torch
        n = int(n_bins)
        T, order = torch.sort(S, dim=-1)
        T.mul_(n / value_range).ceil_()
        b = torch.arange(-n, n + 1, dtype=S.dtype, device=self.device)
        counts = torch.searchsorted(T, b.expand(*T.shape[:-1], 2 * n + 1).contiguous(), right=True,
                                    out_int32=True)
        del T
        w = np.asarray(weights, dtype=np.float64)
        if np.all(w == w[0]):
            del order
            # integer counts, then the weight and the scale, each rounded into S's precision as on NumPy
            return counts.to(S.dtype).mul_(float(S.new_tensor(w[0]))).mul_(scale)
        cw = self.asarray(w, self.torch.float64)[order].cumsum_(-1)
        del order
        at = (counts.to(torch.long) - 1).clamp_(min=0)
        out = torch.gather(cw, -1, at).mul_(counts > 0)
        return out.to(S.dtype).mul_(scale)

    def _cdf_pool_scatter(self, S, weights, n_bins, value_range, scale=1.0):
        """The bin index of every projection, a scatter-add into 2n + 2 bins per row, then a cumulative sum:
        faster than sorting on a CPU (0.27 against 0.48 s for 256 × 500 × 64 float32 projections on this
        project's 2-core machine). Equal weights add ones (integer counts, exact in floating point) and scale
        once, as NumPy does; unequal ones add the weights in S's precision."""
        torch = self.torch
        n = n_bins
        rows, m, r = S.shape
        nb = 2 * n + 2
        idx = torch.clamp(torch.ceil(S * (n / value_range)), -n, n + 1).to(torch.long) + n
        w = np.asarray(weights, dtype=np.float64)
        counts = torch.zeros((rows, m, nb), dtype=S.dtype, device=self.device)
        if np.all(w == w[0]):
            counts.scatter_add_(2, idx, torch.ones((), dtype=S.dtype, device=self.device).expand(rows, m, r))
            cdf = torch.cumsum(counts, dim=2)[:, :, : 2 * n + 1]
            return cdf.mul_(float(S.new_tensor(w[0]))).mul_(scale)
        wt = self.asarray(w, S.dtype)
        counts.scatter_add_(2, idx, wt.expand(rows, m, r).contiguous())
        return torch.cumsum(counts, dim=2)[:, :, : 2 * n + 1] * scale
