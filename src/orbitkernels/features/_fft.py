"""All cyclic shifts at once: circular cross-correlation by real FFTs.

For a cyclic group acting on axes of length L = (L_1[, L_2]) of an array (with
an extra axis B that is only summed over, e.g. the radii of a polar grid), the
similarities with every shift k are one correlation:

    <g_k x, t> = Σ_b Σ_m x[b, m] t[b, m + k]   ->   FFT: Σ_b conj(x̂[b, f]) t̂[b, f]
    <x, g_k t> = Σ_b Σ_m x[b, m + k] t[b, m]   ->   FFT: Σ_b x̂[b, f] conj(t̂[b, f])

((g_k x)[m] = x[m - k], the convention of :class:`~orbitkernels.groups.CyclicShift`).
For N rows, s templates and r = ΠL shifts this costs O(N s r log r) instead of the
N s r d multiply-adds of r transformed copies (d = B r). With B = 1 the
frequency product is elementwise; with B > 1 it is one complex GEMM per
frequency (N x B times B x s), which is where the polar path spends its time.
"""
from __future__ import annotations

import numpy as np

__all__ = ["CyclicCorrelator"]


class CyclicCorrelator:
    """``S[i, j, k]`` for every cyclic shift k, from templates reshaped to (s, B, *L).

    Parameters
    ----------
    templates : (s, B, *L) array
    convention : {"data", "templates"}
        "data": ``S_k = <g_k x, t>`` (LGIKA, Raj Eq. 7); "templates":
        ``S_k = <x, g_k t>`` (GICDF, Mroueh §2).
    backend, dtype : where and in which precision the correlations run.
    """

    def __init__(self, templates, convention, backend, dtype):
        if convention not in ("data", "templates"):
            raise ValueError(f"convention must be 'data' or 'templates'; got {convention!r}")
        self.convention = convention
        self.bk = backend
        self.s, self.B = templates.shape[:2]
        self.L = tuple(templates.shape[2:])
        self.r = int(np.prod(self.L))
        self.axes = tuple(range(2, 2 + len(self.L)))
        bk = backend
        Th = bk.rfftn(bk.asarray(templates, dtype), self.axes)  # (s, B, *F)
        if convention == "templates":
            Th = bk.conj(Th)
        self.F = tuple(Th.shape[2:])
        nf = int(np.prod(self.F))
        if self.B == 1:
            self.Th = Th.reshape(1, self.s, *self.F)
        else:
            # (nf, B, s): one complex GEMM per frequency
            self.Th = bk.contiguous(bk.permute(Th.reshape(self.s, self.B, nf), (2, 1, 0)))
        self.nf = nf

    def row_bytes(self, itemsize):
        """Working memory of one row (complex spectra, the real correlations, pooling headroom)."""
        c = 2 * itemsize
        return self.s * self.nf * c * 2 + self.B * self.nf * c + self.s * self.r * itemsize * 3

    def __call__(self, Xc):
        """Xc: (n, B, *L) backend array -> (n, s, r)."""
        bk = self.bk
        n = Xc.shape[0]
        Xh = bk.rfftn(Xc, self.axes)  # (n, B, *F)
        if self.convention == "data":
            Xh = bk.conj(Xh)
        if self.B == 1:
            C = Xh.reshape(n, 1, *self.F) * self.Th  # (n, s, *F)
        else:
            Xf = Xh.reshape(n, self.B, self.nf)
            C = bk.matmul(bk.contiguous(bk.permute(Xf, (2, 0, 1))), self.Th)  # (nf, n, B) @ (nf, B, s)
            C = bk.contiguous(bk.permute(C, (1, 2, 0))).reshape(n, self.s, *self.F)
        S = bk.irfftn(C, self.L, tuple(range(2, 2 + len(self.L))))
        return S.reshape(n, self.s, self.r)
