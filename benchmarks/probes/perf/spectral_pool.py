"""Probe (reverted variant of issue #16): the LGIKA-RF cosine pool fused with the inverse FFT of the
cyclic/polar paths, i.e. S[i, j, :] = irfft(C[:, i, j]) as a real DFT computed per (i, j) straight from
the spectrum (nf, rows, m), against what the engine does (transposition + pocketfft c2r + the fused pool).

Measured (one thread, shared machine, 2026-11-24, nf=33, A=64, s=2000): 524 ns per (image, template)
fused against 246 ns for transposition + c2r + fused pool; the real DFT is 4x the flops of the FFT and
reads C at a stride of rows·m, so the variant was reverted. Usage::

    OMP_NUM_THREADS=1 PYTHONPATH=src python benchmarks/probes/perf/spectral_pool.py
"""
import argparse
import time

import numba
import numpy as np
import scipy.fft

from orbitkernels.backends import _fused as F


def irdft_matrices(n, dtype):
    """(Mr, Mi), each (n//2 + 1, n): ``irfft(c, n)[k] = Σ_f Re c_f Mr[f, k] + Im c_f Mi[f, k]``.

    The inverse real DFT as pocketfft's c2r defines it: weight 1 for the constant term and (n even)
    the Nyquist term, 2 for the others, 1/n normalisation; the imaginary parts of those two terms
    are ignored (their sines vanish).
    """
    n = int(n)
    f = np.arange(n // 2 + 1)[:, None]
    k = np.arange(n)[None, :]
    c = np.full((n // 2 + 1, 1), 2.0)
    c[0] = 1.0
    if n % 2 == 0:
        c[-1] = 1.0
    phase = 2 * np.pi * ((f * k) % n) / n  # exact integer reduction before the angle
    Mr = c * np.cos(phase) / n
    Mi = -c * np.sin(phase) / n
    Mi[0] = 0.0
    if n % 2 == 0:
        Mi[-1] = 0.0
    return np.ascontiguousarray(Mr, dtype=dtype), np.ascontiguousarray(Mi, dtype=dtype)


def trig_pool_spectrum(C, n, weights, offset=None):
    """:func:`trig_pool` of ``S[i, j, :] = irfft(C[:, i, j], n)``, straight from the spectrum C (nf, rows, m).

    The cyclic and polar paths' correlations (Raj et al. 2017, Eq. 7, with S from the FFT
    correlation of :mod:`orbitkernels.features._fft`) are pooled without their inverse FFT
    and transposition: per (i, j) the n values of S are one small real DFT in registers.
    Returns what :func:`trig_pool` returns, in C's real precision.
    """
    C = np.asarray(C)
    if C.dtype not in (np.complex64, np.complex128):
        raise TypeError(f"the spectrum must be complex64 or complex128; got {C.dtype}")
    n = int(n)
    if C.shape[0] != n // 2 + 1:
        raise ValueError(f"a real spectrum of length {n} has {n // 2 + 1} frequencies; got {C.shape[0]}")
    dt = np.dtype(np.float32 if C.dtype == np.complex64 else np.float64)
    Mr, Mi = irdft_matrices(n, dt)
    rows, m = C.shape[1], C.shape[2]
    w = np.ascontiguousarray(weights, dtype=dt)
    if len(w) != n:
        raise ValueError(f"one weight per shift: {n} shifts, {len(w)} weights")
    off = np.zeros(0, dt) if offset is None else np.ascontiguousarray(offset, dtype=dt)
    out_c = np.empty((rows, m), dt)
    out_s = np.empty((rows, m) if offset is None else (0, 0), dt)
    spectral_cos_pool(C, Mr, Mi, w, F._constants(dt), off, out_c, out_s)
    return out_c if offset is not None else (out_c, out_s)


@numba.njit(fastmath={"reassoc", "contract", "nsz"})
def spectral_cos_pool(C, Mr, Mi, w, cf, off, out_c, out_s):
    # S[i, j, :] = irfft(C[:, i, j]) as a real DFT (2·nf x A multiply-adds, vectorised over the
    # A angles), then the cosine pool of _cos_pool_nsr / _cossin_pool_nsr on it; C is read
    # where the spectral product left it, (nf, rows, m), with no transposition or inverse FFT
    nf, rows, m = C.shape
    A = Mr.shape[1]
    inv = cf[0]
    q = cf[2]
    has_off = off.shape[0] > 0
    sk = np.empty(A, Mr.dtype)
    for i in range(rows):
        for j in range(m):
            sk[:] = 0.0
            for f in range(nf):
                c = C[f, i, j]
                a = c.real
                b = c.imag
                for k in range(A):
                    sk[k] += a * Mr[f, k] + b * Mi[f, k]
            if has_off:
                bj = off[j]
                acc = Mr.dtype.type(0.0)
                for k in range(A):
                    acc += w[k] * F._cos_turns((sk[k] + bj) * inv, cf)
                out_c[i, j] = acc
            else:
                ac = Mr.dtype.type(0.0)
                as_ = Mr.dtype.type(0.0)
                for k in range(A):
                    y = sk[k] * inv
                    ac += w[k] * F._cos_turns(y, cf)
                    as_ += w[k] * F._cos_turns(y - q, cf)
                out_c[i, j] = ac
                out_s[i, j] = as_


def main():
    rng = np.random.default_rng(0)
    n, s, A = 4, 2000, 64
    S = rng.normal(0, 7, (n, s, A)).astype(np.float32)
    C = np.ascontiguousarray(np.fft.rfft(S, axis=2).astype(np.complex64).transpose(2, 0, 1))
    w = np.full(A, 1 / A)
    off = rng.uniform(0, 6, s)
    fused = trig_pool_spectrum(C, A, w, off)
    print("max |fused - reference|", float(np.abs(fused - F.trig_pool(S, w, off)).max()))

    def engine():
        Sb = scipy.fft.irfft(np.ascontiguousarray(C.transpose(1, 2, 0)), n=A, axis=-1)
        return F.trig_pool(Sb, w, off)

    for name, fn in [("fused spectral", lambda: trig_pool_spectrum(C, A, w, off)),
                     ("transpose + c2r + fused pool", engine), ("fused pool alone", lambda: F.trig_pool(S, w, off))]:
        best = np.inf
        for _ in range(20):
            t = time.perf_counter()
            fn()
            best = min(best, time.perf_counter() - t)
        print(f"{name}: {best / (n * s) * 1e9:.0f} ns per (image, template)")


if __name__ == "__main__":
    argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter).parse_args()
    main()
