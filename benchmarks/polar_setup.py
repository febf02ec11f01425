"""Setup cost of the polar path and fit memory / pickle size of the GEMM path.

1. Polar whitener: time and traced peak memory of the dense (P Pᵀ)^{-1/2} reference
   (``_engine._polar_whitener``, what the polar path ran before) against the per-angular-frequency
   whitener (``_engine.polar_whiten``), and the first transform of a fitted polar model
   (setup included), at 28x28/64, 48x48/128 and 64x64/128 angles.
2. OrbitFourierFeatures(ImageRotation((28, 28)), n_components=500, n_group_samples=64) on the
   bilinear GEMM path (sampling="iid", as the earlier measurement): traced peak during fit and
   the first float32 transform, memory kept, pickle size.

Usage: OMP_NUM_THREADS=1 PYTHONPATH=src python benchmarks/polar_setup.py
"""
from __future__ import annotations

import argparse
import pickle
import time
import tracemalloc

import numpy as np

from orbitkernels.features import OrbitFourierFeatures
from orbitkernels.features import _engine
from orbitkernels.features._polar import polar_matrix
from orbitkernels.groups import ImageRotation, PolarRotation


def traced(fn):
    tracemalloc.start()
    tracemalloc.reset_peak()
    t0 = time.perf_counter()
    out = fn()
    dt = time.perf_counter() - t0
    cur, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return out, dt, peak / 2**20, cur / 2**20


def whiteners(size, n_angles, s=200, dense=True):
    g = PolarRotation((size, size), n_angles=n_angles)
    P = polar_matrix(g)
    T = np.random.default_rng(0).normal(size=(P.shape[1], s))
    Tp = np.asarray(P @ T)
    _, t_fft, m_fft, _ = traced(lambda: _engine.polar_whiten(P, Tp, g.n_radii, g.n_angles))
    line = f"{size}x{size}, {n_angles} angles (R·A = {P.shape[0]}): per-frequency {t_fft:.3f} s, {m_fft:.1f} MB"
    if dense:
        _, t_d, m_d, _ = traced(lambda: _engine._polar_whitener(P) @ Tp)
        line += f"; dense {t_d:.2f} s, {m_d:.0f} MB"
    print(line, flush=True)
    X = np.random.default_rng(1).random((10, size * size)).astype(np.float32)
    f = OrbitFourierFeatures(g, n_components=500, gamma=0.01, random_state=0).fit(X)
    _, t_first, m_first, _ = traced(lambda: f.transform(X))
    _, t_again, _, _ = traced(lambda: f.transform(X))
    print(f"    first transform (setup included) {t_first:.2f} s, {m_first:.1f} MB peak; next {t_again:.3f} s; "
          f"pickle {len(pickle.dumps(f)) / 2**20:.2f} MB", flush=True)


def gemm_memory():
    X = np.random.default_rng(0).random((100, 784)).astype(np.float32)
    f = OrbitFourierFeatures(ImageRotation((28, 28)), n_components=500, n_group_samples=64, gamma=0.02,
                             random_state=0)
    if "sampling" in f.get_params():
        f.set_params(sampling="iid")
    else:
        f.sampling = "iid"
    _, t_fit, peak_fit, kept_fit = traced(lambda: f.fit(X))
    tracemalloc.start()
    f.transform(X[:10])
    cur, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    print(f"28x28 gemm, 500 x 64: fit {t_fit:.2f} s, peak {peak_fit:.1f} MB, kept {kept_fit:.1f} MB; "
          f"first float32 transform peak {peak / 2**20:.1f} MB, kept {cur / 2**20:.1f} MB; "
          f"pickle {len(pickle.dumps(f)) / 2**20:.2f} MB (path {f.plan_.path})", flush=True)


if __name__ == "__main__":
    argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter).parse_args()
    whiteners(28, 64)
    whiteners(48, 128)
    whiteners(64, 128)
    gemm_memory()
