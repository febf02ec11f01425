"""All cyclic shifts at once: circular cross-correlation by real FFTs.

For a cyclic group acting on axes of length L = (L_1[, L_2]) of an array (with
an extra axis B that is only summed over, e.g. the radii of a polar grid), the
similarities with every shift k are one correlation:

    <g_k x, t> = Σ_b Σ_m x[b, m] t[b, m + k]   ->   FFT: Σ_b conj(x̂[b, f]) t̂[b, f]
    <x, g_k t> = Σ_b Σ_m x[b, m + k] t[b, m]   ->   FFT: Σ_b x̂[b, f] conj(t̂[b, f])

((g_k x)[m] = x[m - k], the convention of :class:`~orbitkernels.groups.CyclicShift`).
For N rows, s templates and r = ΠL shifts this costs O(N s r log r) instead of the
N s r d multiply-adds of r transformed copies (d = B r).

Layout: the frequencies are the leading (batch) axis, so with B = 1 the
frequency product is one broadcast multiply and with B > 1 it is one complex
GEMM per frequency (cgemm measured 2x faster than the equivalent real GEMM
with interleaved real/imaginary columns at these small inner sizes). The inverse FFTs run per cache-sized
block of rows along the contiguous last axis (an inverse FFT along a strided leading axis measured 7x
slower in pocketfft).
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
        templates = np.asarray(templates, dtype=float)
        self.convention = convention
        self.bk = bk = backend
        self.s, self.B = templates.shape[:2]
        self.L = tuple(templates.shape[2:])
        self.r = int(np.prod(self.L))
        nd = len(self.L)
        Th = np.fft.rfftn(templates, axes=tuple(range(2, 2 + nd)))  # (s, B, *F), float64 once at fit
        self.F = tuple(Th.shape[2:])
        self.nf = nf = int(np.prod(self.F))
        Th = Th.reshape(self.s, self.B, nf).transpose(2, 1, 0)  # (nf, B, s)
        spec = Th if convention == "data" else np.conj(Th)
        # contiguous: a strided (B, s) operand would take NumPy's matmul off BLAS (1.7 against 1.0 ms per image)
        self.Th = bk.contiguous(bk.asarray(spec, bk.complex_dtype(dtype)))  # (nf, B, s)

    def row_bytes(self, itemsize, blocks=False):
        """Working memory of one row: spectra (complex), correlations and pooling headroom.

        ``blocks``: the correlations are inverted and pooled a cache-sized block of rows at a time (the engine
        on the CPU), so a row holds only its spectrum (the block's transposed copy, correlations and pooling
        temporaries are the engine's fixed reserve); else the whole chunk's are inverted at once.
        """
        c = 2 * itemsize
        spectra = self.s * self.nf * c + self.B * self.nf * c * 2
        if blocks:
            return spectra
        return spectra + self.s * self.nf * c + self.s * self.r * itemsize * 3

    def data_spectrum(self, Xc):
        """Xc: (n, B, *L) back-end array -> the rows' spectrum Xh: (nf, n, B) complex (conjugated for "data").

        Small (B·nf per row, against s·nf for the correlations): the engine keeps it for a whole chunk
        and correlates it with the templates block by block (:meth:`correlate`).
        """
        bk = self.bk
        n = Xc.shape[0]
        Xh = bk.rfftn(Xc, tuple(range(2, 2 + len(self.L))))  # (n, B, *F)
        Xh = bk.permute(Xh.reshape(n, self.B, self.nf), (2, 0, 1))  # (nf, n, B)
        if self.convention == "data":
            Xh = bk.conj(Xh)
        return bk.contiguous(Xh)

    def correlate(self, Xh, out=None):
        """Xh: (nf, n, B) rows' spectrum (or a block of its rows) -> the correlations' spectrum C: (nf, n, s).

        ``out``: an (nf, n, s) complex array of the back-end to write C into (the engine's workspace).
        """
        if self.B == 1:
            return self.bk.multiply(Xh, self.Th, out=out)  # (nf, n, s): a broadcast product
        return self.bk.matmul(Xh, self.Th, out=out)  # (nf, n, B) @ (nf, B, s): one complex GEMM per frequency

    def spectrum(self, Xc, out=None):
        """Xc: (n, B, *L) back-end array -> the correlations' spectrum C: (nf, n, s) complex (into ``out``)."""
        return self.correlate(self.data_spectrum(Xc), out=out)

    def inverse(self, C):
        """C: (nf, n, s) spectrum (or a block of its rows) -> S: (n, s, r).

        The transposition to (n, s, nf) is done on cache-sized row blocks by the
        engine, so that the inverse FFTs run along the contiguous last axis.
        """
        bk = self.bk
        n = C.shape[1]
        nd = len(self.L)
        Cb = bk.contiguous(bk.permute(C, (1, 2, 0))).reshape(n, self.s, *self.F)
        return bk.irfftn(Cb, self.L, tuple(range(2, 2 + nd))).reshape(n, self.s, self.r)

    def __call__(self, Xc):
        """Xc: (n, B, *L) -> S: (n, s, r)."""
        return self.inverse(self.spectrum(Xc))
