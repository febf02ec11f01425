"""Probe (issue #16): would a fused numba loop speed up OrbitNystroem's Gaussian pooling on the FFT paths?

On the polar / cyclic FFT paths ``OrbitNystroem`` gets k(g x, z) = exp(γ (2<g x, z> - |x|² - |z|²)) from the
correlations S (rows, s, r) by ``rbf_from_dots`` (separate NumPy passes: scale, two subtractions, γ, exp) and then
averages over the r group elements. The LGIKA (Nys) cell of Raj Table 2 at s = 7000, r = 100 spends most of its
69 minutes there. This probe first times both estimators' transforms on the polar path (3000 random 28 × 28
images, r = 100 equispaced rotations, Nyström with 2000 landmarks against RF with 1000 frequencies, i.e. 2000 and
1000 templates), then, on one block of S (16 rows × 2000 landmarks × 100 rotations, float32), the NumPy chain against a
single fused numba loop that reads S once and calls ``math.exp`` per value.

Measured (2026-11-25, one thread, three runs beside one other job): NumPy chain 5.05 / 4.55 / 4.67 ms
(1.42-1.58 ns per value), fused loop 10.86 / 8.30 / 8.02 ms (2.50-3.39 ns per value), largest difference 7e-8. The
fused loop is 1.7-2.1× slower:
the scalar exponential does not vectorise (NumPy's float32 exp is SIMD), so a fused Nyström pooling needs a
polynomial exponential, as the RF path has a polynomial cosine. Not adopted. Transforms (one thread): Nyström
9.76 s, RF 1.49 s, i.e. 3.3× the RF path's time per template. Usage::

    OMP_NUM_THREADS=1 PYTHONPATH=src python benchmarks/probes/perf/rbf_pool_fused.py
"""
import math
import time

import numba as nb
import numpy as np

from orbitkernels.utils.kernels import rbf_from_dots


@nb.njit(fastmath=True, nogil=True)
def fused(S, x_sq, t_sq, gamma, w, out):
    n, s, r = S.shape
    for i in range(n):
        for j in range(s):
            base = -(x_sq[i] + t_sq[j])
            acc = np.float32(0.0)
            for k in range(r):
                acc += w[k] * math.exp(gamma * (np.float32(2.0) * S[i, j, k] + base))
            out[i, j] = acc


def transforms():
    from orbitkernels.features import OrbitFourierFeatures, OrbitNystroem
    from orbitkernels.groups import ImageRotation

    X = np.random.default_rng(0).random((3000, 784)).astype(np.float32)
    g = ImageRotation((28, 28))
    common = dict(sampling="qmc", gamma=0.01, n_group_samples=100, random_state=0, max_memory_mb=512)
    for name, est in (("OrbitNystroem, 2000 landmarks", OrbitNystroem(g, n_components=2000, **common)),
                      ("OrbitFourierFeatures, 1000 frequencies", OrbitFourierFeatures(g, n_components=1000, **common))):
        est.fit(X[:2500])
        t0 = time.perf_counter()
        est.transform(X)
        print(f"{name}: transform {time.perf_counter() - t0:.2f} s on the {est.plan_.path} path")


def main(n=16, s=2000, r=100, repeats=10):
    transforms()
    rng = np.random.default_rng(0)
    S = rng.standard_normal((n, s, r)).astype(np.float32)
    x_sq = (np.abs(rng.standard_normal(n)) + 3).astype(np.float32)
    t_sq = (np.abs(rng.standard_normal(s)) + 3).astype(np.float32)
    w = np.full(r, 1 / r, np.float32)
    gamma = np.float32(0.3)
    out = np.empty((n, s), np.float32)

    def numpy_chain():
        return rbf_from_dots(S, x_sq.reshape(-1, 1, 1), t_sq.reshape(1, -1, 1), gamma, np.exp) @ w

    def fused_loop():
        fused(S, x_sq, t_sq, gamma, w, out)
        return out

    for name, f in (("numpy chain", numpy_chain), ("fused numba loop", fused_loop)):
        f()  # compile / warm
        t0 = time.perf_counter()
        for _ in range(repeats):
            f()
        dt = (time.perf_counter() - t0) / repeats
        print(f"{name}: {dt * 1e3:.2f} ms ({dt / S.size * 1e9:.2f} ns per value)")
    print("largest difference:", float(np.abs(numpy_chain() - fused_loop()).max()))


if __name__ == "__main__":
    main()
