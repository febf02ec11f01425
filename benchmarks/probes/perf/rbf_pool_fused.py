"""Probe (issue #16): a fused numba kernel for OrbitNystroem's Gaussian orbit mean on the FFT paths.

On the polar / cyclic FFT paths ``OrbitNystroem`` gets k(g x, z) = exp(γ (2<g x, z> - |x|² - |z|²)) from the
correlations S (rows, s, r) and averages over the r group elements (Raj et al. 2017, Eq. 8). Before, that was
``rbf_from_dots`` (separate NumPy passes: scale, two subtractions, γ, exp) and a matrix-vector product; the
LGIKA (Nys) cell of Raj Table 2 at s = 7000, r = 100 took 69 minutes for its features. Three ways, timed in
round-robin rounds (best of each) on one block as the engine pools it (16 rows x 2000 landmarks x 100
rotations, float32):

* ``numpy chain``: the NumPy passes (the back-end's code with the fused kernels off);
* ``fused, scalar math.exp``: one numba loop that reads S once and calls ``math.exp`` per value (the first
  attempt, 2026-11-24: 1.7-2.1x *slower*, the scalar libm exponential does not vectorise: reverted);
* ``fused, library kernel``: ``orbitkernels.backends._fused.rbf_pool``, the kernel the back-end now runs: its own
  exponential (Cody-Waite reduction, a degree-13 polynomial, 2^n from the exponent bits) in loops LLVM vectorises.

Then the estimator: the transform with the fused kernels on and off, and with K_ZZ^{-1/2} applied per pooled block
(the engine before, ``orbitkernels.bench._transform_map_per_block``).

In detail: ``OrbitNystroem`` (2000 landmarks, r = 100 low-variance rotations, polar path) on regenerated
Rotated MNIST (3000 training, 2000 test digits), the transform with the fused kernels on and off, the largest
feature difference, and the test accuracy of the same learner (RidgeClassifierCV) on both, next to the RF
features' transform (1000 frequencies, i.e. 1000 templates) for the cost per template.

Measured (2026-11-25, one thread, beside the QM7 reproduction on the other core), ns per value of the block: NumPy
passes 1.53-1.74, scalar ``math.exp`` 2.51-2.60 (0.6-0.7x), the library kernel 0.66-0.77 (2.2-2.6x), relative
error against float64 4.7e-7 (the NumPy passes 1.8e-7: both are the float32 exponent's rounding). The estimator:
the fused kernel 1.04-1.16x the NumPy passes on the transform (2000 landmarks), 0.98x at 7000 (``--large``: 13.4
against 13.2 ms per image, within the noise: the per-frequency GEMM and the FFTs dominate there), features equal to
1.2e-6 (scale 0.3), test accuracy 0.931 / 0.932. The profile of that transform found the real cost: Nyström's
K_ZZ^{-1/2} (s x s) was applied to every cache-sized pooled block, a row or two of S, so each block read the whole
map: applied once per chunk (one GEMM), the transform is 2.96x faster at 2000 landmarks (24.1 -> 8.1 s) and 5.1x at
7000 (68.8 -> 13.4 ms per image), and Nyström costs 1.8x the RF path per template instead of 3.3x.

Usage::

    OMP_NUM_THREADS=1 ORBITKERNELS_DATA=<data folder> python benchmarks/probes/perf/rbf_pool_fused.py [--large]

Writes ``results/bench/rbf_pool_fused_probe.json``.
"""
import argparse
import math
import os
import time

import numba as nb
import numpy as np
from threadpoolctl import threadpool_limits

from orbitkernels.backends import _fused, get_backend, use_numba
from orbitkernels.bench import _best_interleaved, _transform_map_per_block
from orbitkernels.utils.io import atomic_write_json

OUT = "results/bench/rbf_pool_fused_probe.json"


@nb.njit(fastmath=True, nogil=True)
def _scalar_exp_loop(S, x_sq, t_sq, gamma, w, out):
    n, s, r = S.shape
    for i in range(n):
        for j in range(s):
            base = -(x_sq[i] + t_sq[j])
            acc = np.float32(0.0)
            for k in range(r):
                acc += w[k] * math.exp(gamma * (np.float32(2.0) * S[i, j, k] + base))
            out[i, j] = acc


def block(n=16, s=2000, r=100, rounds=7):
    rng = np.random.default_rng(0)
    S = (0.5 * rng.standard_normal((n, s, r))).astype(np.float32)
    x_sq = (np.abs(rng.standard_normal(n)) + 3).astype(np.float32)
    t_sq = (np.abs(rng.standard_normal(s)) + 3).astype(np.float32)
    w = np.full(r, 1 / r, np.float32)
    gamma = np.float32(0.3)
    out = np.empty((n, s), np.float32)
    bk = get_backend("numpy")

    def numpy_chain():
        with use_numba(False):
            return bk.rbf_pool(S, x_sq, t_sq, gamma, w)

    def scalar():
        _scalar_exp_loop(S, x_sq, t_sq, gamma, w, out)
        return out.copy()

    fns = {"numpy chain": numpy_chain, "fused, scalar math.exp": scalar,
           "fused, library kernel": lambda: _fused.rbf_pool(S, x_sq, t_sq, gamma, w)}
    for f in fns.values():
        f()  # compile / warm
    best, outs = _best_interleaved(fns, repeat=rounds)
    ref = np.exp(float(gamma) * (2 * S.astype(np.float64) - x_sq[:, None, None] - t_sq[None, :, None])) @ w.astype(float)
    return {"shape": {"rows": n, "landmarks": s, "rotations": r, "dtype": "float32"}, "rounds": rounds,
            "ns_per_value": {k: round(v / S.size * 1e9, 3) for k, v in best.items()},
            "speedup_vs_numpy": {k: round(best["numpy chain"] / v, 2) for k, v in best.items()},
            "max_relative_error_vs_float64": {k: float(np.abs(o / ref - 1).max()) for k, o in outs.items()}}


def _runner(nys, X, fused, per_block=False):
    """``nys.transform(X)`` with the fused kernels on or off, and K_ZZ^{-1/2} per chunk (the engine) or per block."""
    def run():
        with use_numba(fused):
            return _transform_map_per_block(nys, X) if per_block else nys.transform(X)
    return run


def estimator(n_train=3000, n_test=2000, s=2000, r=100, gamma=0.02, rounds=2):
    from sklearn.linear_model import RidgeClassifierCV

    from orbitkernels.datasets import load_rotated_mnist
    from orbitkernels.features import OrbitFourierFeatures, OrbitNystroem
    from orbitkernels.groups import ImageRotation

    rm = load_rotated_mnist(source="regenerated", download=False, n_train=n_train, n_valid=0, n_test=n_test)
    Xtr, ytr = rm.x_train.astype(np.float32), rm.y_train
    Xte, yte = rm.x_test.astype(np.float32), rm.y_test
    common = dict(sampling="qmc", gamma=gamma, n_group_samples=r, random_state=0, dtype="float32")
    nys = OrbitNystroem(ImageRotation((28, 28)), n_components=s, **common).fit(Xtr)
    rf = OrbitFourierFeatures(ImageRotation((28, 28)), n_components=s // 2, **common).fit(Xtr)
    X = np.vstack([Xtr, Xte])

    best, outs = _best_interleaved({"OrbitNystroem, fused": _runner(nys, X, True),
                                    "OrbitNystroem, NumPy passes": _runner(nys, X, False),
                                    "OrbitNystroem, fused, map per block (before)": _runner(nys, X, True, True),
                                    "OrbitFourierFeatures (RF), fused": lambda: rf.transform(X)}, repeat=rounds)
    acc = {}
    for k in ("OrbitNystroem, fused", "OrbitNystroem, NumPy passes"):
        F = outs[k]
        clf = RidgeClassifierCV(alphas=np.logspace(-4, 1, 6), cv=3).fit(F[:n_train], ytr)
        acc[k] = float(clf.score(F[n_train:], yte))
    a, b = outs["OrbitNystroem, fused"], outs["OrbitNystroem, NumPy passes"]
    return {"config": {"data": "Rotated MNIST, regenerated", "n_train": n_train, "n_test": n_test,
                       "landmarks": s, "rf_frequencies": s // 2, "rotations": r, "sampling": "qmc", "gamma": gamma,
                       "path": nys.plan_.path, "learner": "RidgeClassifierCV, alpha by 3-fold CV"},
            "transform_s": {k: round(v, 2) for k, v in best.items()},
            "speedup_fused_vs_numpy": round(best["OrbitNystroem, NumPy passes"] / best["OrbitNystroem, fused"], 2),
            "speedup_map_per_chunk_vs_per_block": round(best["OrbitNystroem, fused, map per block (before)"]
                                                        / best["OrbitNystroem, fused"], 2),
            "max_abs_difference_per_block_vs_per_chunk": float(np.abs(
                outs["OrbitNystroem, fused, map per block (before)"] - outs["OrbitNystroem, fused"]).max()),
            "nystroem_vs_rf_time_per_template": round(best["OrbitNystroem, fused"] / best["OrbitFourierFeatures (RF), fused"]
                                                      * (s // 2) / s, 2),
            "max_abs_feature_difference": float(np.abs(a - b).max()),
            "feature_scale": float(np.abs(b).max()),
            "test_accuracy": acc}


def large(n_fit=7000, n_rows=512, s=7000, r=100, gamma=0.02, rounds=2):
    """The LGIKA (Nys) cell's shape (7000 landmarks, r = 100): fused kernels on and off, map per chunk and per block."""
    from orbitkernels.datasets import load_rotated_mnist
    from orbitkernels.features import OrbitNystroem
    from orbitkernels.groups import ImageRotation

    rm = load_rotated_mnist(source="regenerated", download=False, n_train=n_fit, n_valid=0, n_test=n_rows)
    nys = OrbitNystroem(ImageRotation((28, 28)), n_components=s, sampling="qmc", gamma=gamma, n_group_samples=r,
                        random_state=0, dtype="float32").fit(rm.x_train.astype(np.float32))
    X = rm.x_test.astype(np.float32)

    best, outs = _best_interleaved({"fused": _runner(nys, X, True), "NumPy passes": _runner(nys, X, False),
                                    "fused, map per block (before)": _runner(nys, X, True, True)}, repeat=rounds)
    return {"config": {"landmarks": s, "rotations": r, "rows": n_rows, "path": nys.plan_.path},
            "ms_per_image": {k: round(v / n_rows * 1e3, 2) for k, v in best.items()},
            "max_abs_difference_fused_vs_numpy": float(np.abs(outs["fused"] - outs["NumPy passes"]).max())}


def main(with_large=False):
    with threadpool_limits(1):
        res = {"block": block(), "estimator": estimator(), "threads": 1,
               "load_avg_1min": round(os.getloadavg()[0], 2), "script": "benchmarks/probes/perf/rbf_pool_fused.py",
               "measured": time.strftime("%Y-%m-%d")}
        if with_large:
            res["large"] = large()
    atomic_write_json(OUT, res)
    print(res)


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--large", action="store_true",
                    help="also the LGIKA (Nys) cell's shape: 7000 landmarks, r = 100 (the 'large' entry)")
    main(ap.parse_args().large)
