"""Probe (issue #16): two other ways from the rows' spectrum to the pooled LGIKA-RF features on the FFT paths.

After the FFTs, the polar / cyclic paths of ``OrbitFourierFeatures`` spend their time in three stages
(cProfile of the default estimator, 1024 digits, one thread: complex GEMM per frequency 39 %, the transposition
of the correlations' spectrum (nf, rows, s) -> (rows, s, nf) for pocketfft 16 %, inverse real FFTs (c2r) 28 %,
fused cosine pool 8 %). The library's way ("library") is those stages as the engine runs them: one ``matmul``
per frequency over the chunk, then per block of 16 rows the transposition, ``scipy.fft.irfft`` along the
contiguous last axis and :func:`~orbitkernels.backends._fused.trig_pool`. Two variants aim at the transposition
and the inverse FFTs:

* ``numba direct layout``: the per-frequency products accumulated by a numba kernel that writes the
  spectrum straight into the (rows, s, nf) layout c2r reads (tiles of 1024 templates, the templates' real and
  imaginary planes split so the inner loop is plain fused multiply-adds), then c2r and the pool as the library.
* ``real GEMM + DFT GEMM``: the per-frequency product as one real GEMM per frequency on stacked
  [[Re x, -Im x], [Im x, Re x]] rows, written as (nf, 2, rows, s), which for every row is a (2 nf, s) matrix
  at a uniform stride; the inverse real DFT as one (r, 2 nf) GEMM per block of rows (no transposition, no
  c2r), pooled in the "rns" layout.

Shapes: the default estimator's (s = 2000 templates, 14 radii, 64 angles) and the Rotated MNIST full
configuration's (s = 7000, 100 angles), random spectra of 128 rows, float32, one thread, round-robin rounds (best
of 3). Usage::

    OMP_NUM_THREADS=1 PYTHONPATH=src python benchmarks/probes/perf/spectral_layouts.py

Writes ``results/bench/spectral_layouts_probe.json`` (µs per row per way; the variants' largest deviation from
the library's features). Measured (one thread, the other core busy with a reproduction, 2026-11-25): s = 2000:
library 560 µs per row, numba direct layout 600 (0.93x), real GEMM + DFT GEMM 809 (0.69x); s = 7000: 4122, 4844
(0.85x), 5691 (0.72x). The numba kernel does 1/5 of the GEMM's speed on the products (its output stores at a
stride of 2 nf floats cost what the transposition did); the DFT as a GEMM is 5x the FFT's flops and runs at
~70 GFLOP/s, more than c2r and the transposition together. Both reverted: the library keeps cgemm, the blocked
transposition and pocketfft.
"""
import argparse
import os

import numba
import numpy as np
import scipy.fft
from threadpoolctl import threadpool_limits

from orbitkernels.backends._fused import trig_pool
from orbitkernels.bench import _best_interleaved
from orbitkernels.utils.io import atomic_write_json

SHAPES = {"default estimator (s=2000, 64 angles)": (2000, 14, 64),
          "Rotated MNIST full (s=7000, 100 angles)": (7000, 14, 100)}
ROWS, BLOCK, TILE = 128, 16, 1024


@numba.njit(fastmath=True, boundscheck=False)
def _correlate_nsf(Xr, Xi, Tr, Ti, out, tile):
    """out[i, j, 2k] + i·out[i, j, 2k+1] = Σ_b X[k, i, b] T[k, b, j] (X: (nf, n, B), T: (nf, B, s) planes)."""
    nf, n, B = Xr.shape
    s = Tr.shape[2]
    accr = np.empty(tile, Xr.dtype)
    acci = np.empty(tile, Xr.dtype)
    for j0 in range(0, s, tile):
        jn = min(tile, s - j0)
        for i in range(n):
            for k in range(nf):
                for j in range(jn):
                    accr[j] = 0.0
                    acci[j] = 0.0
                for b in range(B):
                    xr = Xr[k, i, b]
                    xi = Xi[k, i, b]
                    tr = Tr[k, b, j0:j0 + jn]  # 1-D views: the loop below vectorises (3-D indexing: 3x slower)
                    ti = Ti[k, b, j0:j0 + jn]
                    for j in range(jn):
                        accr[j] += xr * tr[j] - xi * ti[j]
                        acci[j] += xr * ti[j] + xi * tr[j]
                for j in range(jn):
                    out[i, j0 + j, 2 * k] = accr[j]
                    out[i, j0 + j, 2 * k + 1] = acci[j]


def _irdft_matrix(r, nf):
    """(r, 2 nf): S[θ] = Σ_k A[θ, 2k] Re C_k + A[θ, 2k+1] Im C_k, pocketfft's c2r (1/r, doubled inner terms)."""
    c = np.full(nf, 2.0 / r)
    c[0] = 1.0 / r
    if r % 2 == 0:
        c[-1] = 1.0 / r
    ang = 2 * np.pi * ((np.arange(r)[:, None] * np.arange(nf)[None, :]) % r) / r
    A = np.empty((r, nf, 2))
    A[:, :, 0] = c * np.cos(ang)
    A[:, :, 1] = -c * np.sin(ang)
    A[:, 0, 1] = 0.0
    if r % 2 == 0:
        A[:, -1, 1] = 0.0
    return np.ascontiguousarray(A.reshape(r, 2 * nf), dtype=np.float32)


def main():
    rng = np.random.default_rng(0)
    out = {"rows": ROWS, "block_rows": BLOCK, "threads": 1, "shapes": {}}
    for name, (s, B, r) in SHAPES.items():
        nf = r // 2 + 1
        X = rng.standard_normal((ROWS, B, r))
        T = rng.standard_normal((s, B, r)) / np.sqrt(B * r)
        Xh = np.ascontiguousarray(np.conj(np.fft.rfft(X, axis=2)).transpose(2, 0, 1), dtype=np.complex64)
        Th = np.ascontiguousarray(np.fft.rfft(T, axis=2).transpose(2, 1, 0), dtype=np.complex64)
        w = np.full(r, 1.0 / r, np.float32)
        b = rng.uniform(0, 2 * np.pi, s).astype(np.float32)
        Xr, Xi = np.ascontiguousarray(Xh.real), np.ascontiguousarray(Xh.imag)
        Tr, Ti = np.ascontiguousarray(Th.real), np.ascontiguousarray(Th.imag)
        T2 = np.ascontiguousarray(np.concatenate([Tr, Ti], axis=1))  # (nf, 2B, s)
        A = _irdft_matrix(r, nf)

        def library():
            C = np.matmul(Xh, Th)  # (nf, rows, s)
            res = np.empty((ROWS, s), np.float32)
            for a in range(0, ROWS, BLOCK):
                Cb = np.ascontiguousarray(C[:, a:a + BLOCK].transpose(1, 2, 0))
                res[a:a + BLOCK] = trig_pool(scipy.fft.irfft(Cb, r, axis=2), w, offset=b)
            return res

        def numba_direct():
            Cn = np.empty((ROWS, s, 2 * nf), np.float32)
            _correlate_nsf(Xr, Xi, Tr, Ti, Cn, TILE)
            C = Cn.view(np.complex64)
            res = np.empty((ROWS, s), np.float32)
            for a in range(0, ROWS, BLOCK):
                res[a:a + BLOCK] = trig_pool(scipy.fft.irfft(C[a:a + BLOCK], r, axis=2), w, offset=b)
            return res

        def dft_gemm():
            X2 = np.empty((nf, 2, ROWS, 2 * B), np.float32)
            X2[:, 0, :, :B], X2[:, 0, :, B:] = Xr, -Xi
            X2[:, 1, :, :B], X2[:, 1, :, B:] = Xi, Xr
            M = np.matmul(X2.reshape(nf, 2 * ROWS, 2 * B), T2).reshape(2 * nf, ROWS, s)  # rows (k, re/im)
            res = np.empty((ROWS, s), np.float32)
            for a in range(0, ROWS, BLOCK):
                S = np.matmul(A, M[:, a:a + BLOCK].transpose(1, 0, 2))  # (block, r, s)
                res[a:a + BLOCK] = trig_pool(S.transpose(1, 0, 2), w, offset=b, layout="rns")
            return res

        ways = {"library": library, "numba direct layout": numba_direct, "real GEMM + DFT GEMM": dft_gemm}
        for fn in ways.values():  # compile and warm the heap
            fn()
        best, outs = _best_interleaved(ways, repeat=3)
        us = {k: round(v / ROWS * 1e6, 1) for k, v in best.items()}
        out["shapes"][name] = {
            "s": s, "radii": B, "angles": r, "us_per_row": us,
            "speedup_vs_library": {k: round(best["library"] / v, 3) for k, v in best.items() if k != "library"},
            "max_abs_diff_vs_library": {k: float(np.abs(outs[k] - outs["library"]).max())
                                        for k in ways if k != "library"}}
        print(name, out["shapes"][name], flush=True)
    out["loadavg"] = list(os.getloadavg())
    atomic_write_json("results/bench/spectral_layouts_probe.json", out)


if __name__ == "__main__":
    argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter).parse_args()
    with threadpool_limits(1):
        main()
