"""Which path should the default full-circle rotation group take? Accuracy and time on rotated digits.

Train upright, test on digits rotated by uniformly random angles (scipy.ndimage.rotate,
cubic, so that no method shares the test set's interpolation), random Fourier features
of the orbit kernel (OrbitFourierFeatures, output="cos") + ridge classifier (alpha by
leave-one-out on the training set). Rows:

* ``iid``: ImageRotation(shape) with 64 i.i.d. angles (the papers' Monte Carlo; sampling="iid");
* ``grid_bilinear``: ImageRotation(shape, n_angles=64), bilinear warps of the templates (GEMM path);
* ``polar``: PolarRotation(shape, n_angles=64), the polar FFT path (whitener: ``polar_whiten``);
* ``polar_dense_whitener``: the same with the previous dense (P Pᵀ)^{-1/2} whitener;
* ``polar_no_whitener``: the same without whitening;
* ``default``: ImageRotation(shape) as a user writes it (sampling="qmc" by default).

Writes ``results/sampling/rotation_default_<dataset>.json``. Usage (one thread, as the
committed numbers were taken)::

    OMP_NUM_THREADS=1 PYTHONPATH=src ORBITKERNELS_DATA=... python benchmarks/rotation_default.py digits
    OMP_NUM_THREADS=1 PYTHONPATH=src ORBITKERNELS_DATA=... python benchmarks/rotation_default.py mnist
"""
from __future__ import annotations

import argparse
import os
import time

from pathlib import Path

import numpy as np
import scipy.ndimage
from sklearn.linear_model import RidgeClassifierCV

from orbitkernels.datasets import load_mnist
from orbitkernels.features import OrbitFourierFeatures
from orbitkernels.features import _engine
from orbitkernels.groups import ImageRotation, PolarRotation
from orbitkernels.utils.io import atomic_write_json


def load(name, n_train, n_test, seed=0):
    rng = np.random.default_rng(seed)
    if name == "digits":
        from sklearn.datasets import load_digits

        d = load_digits()
        X = np.zeros((len(d.images), 12, 12))
        X[:, 2:10, 2:10] = d.images / 16.0
        y = d.target
        idx = rng.permutation(len(X))
        tr, te = idx[:n_train], idx[n_train : n_train + n_test]
        Xtr, ytr, Xte, yte = X[tr], y[tr], X[te], y[te]
    else:
        d = load_mnist(download=False)  # the data folder: ORBITKERNELS_DATA, else the user's cache
        tr = rng.choice(len(d["x_train"]), n_train, replace=False)
        te = rng.choice(len(d["x_test"]), n_test, replace=False)
        Xtr, ytr = d["x_train"][tr] / 255.0, d["y_train"][tr]
        Xte, yte = d["x_test"][te] / 255.0, d["y_test"][te]
    angles = rng.uniform(-180, 180, len(Xte))
    Xte = np.stack([scipy.ndimage.rotate(x, a, reshape=False, order=3, mode="constant") for x, a in zip(Xte, angles)])
    shape = Xtr.shape[1:]
    f32 = lambda A: A.reshape(len(A), -1).astype(np.float32)
    return f32(Xtr), ytr, f32(Xte), yte, shape


def run(name, Xtr, ytr, Xte, yte, make, sampling="qmc", whitener=None, n_components=2000, gamma=None):
    f = make()
    f.set_params(n_components=n_components, gamma=gamma, output="cos", random_state=0, dtype="float32")
    if "sampling" in f.get_params():
        f.set_params(sampling=sampling)
    else:  # before the estimators had the parameter
        f.sampling = sampling
    saved = _engine.polar_whiten
    if whitener is not None:
        _engine.polar_whiten = whitener
    try:
        t0 = time.perf_counter()
        f.fit(Xtr)
        Ftr = f.transform(Xtr)
        Fte = f.transform(Xte)
        t = time.perf_counter() - t0
    finally:
        _engine.polar_whiten = saved
    clf = RidgeClassifierCV(alphas=np.logspace(-4, 2, 13)).fit(Ftr, ytr)
    acc = float((clf.predict(Fte) == yte).mean())
    print(f"{name:24s} acc {acc:.4f}  time {t:6.1f} s  path {f.plan_.path:6s} group {type(f.plan_.group).__name__}",
          flush=True)
    return acc, t


def dense_whitener(P, T, R, A):
    return _engine._polar_whitener(P) @ T


def no_whitener(P, T, R, A):
    return T


def main(which="digits"):
    n_train, n_test = (1200, 597) if which == "digits" else (3000, 2000)
    Xtr, ytr, Xte, yte, shape = load(which, n_train, n_test)
    # median heuristic for the Gaussian bandwidth, the same for every row
    sub = Xtr[:500].astype(np.float64)
    d2 = ((sub[:, None, :] - sub[None, :, :]) ** 2).sum(-1)
    gamma = 1.0 / float(np.median(d2[d2 > 0]))
    print(f"{which}: {n_train} upright train, {len(Xte)} rotated test, shape {shape}, gamma {gamma:.4g}, "
          f"2000 RFF, 64 angles", flush=True)
    rows = {
        "iid": (lambda: OrbitFourierFeatures(ImageRotation(shape), n_group_samples=64), "iid", None),
        "grid_bilinear": (lambda: OrbitFourierFeatures(ImageRotation(shape, n_angles=64)), "qmc", None),
        "polar": (lambda: OrbitFourierFeatures(PolarRotation(shape, n_angles=64)), "qmc", None),
        "polar_dense_whitener": (lambda: OrbitFourierFeatures(PolarRotation(shape, n_angles=64)), "qmc",
                                 dense_whitener),
        "polar_no_whitener": (lambda: OrbitFourierFeatures(PolarRotation(shape, n_angles=64)), "qmc", no_whitener),
        "default": (lambda: OrbitFourierFeatures(ImageRotation(shape), n_group_samples=64), "qmc", None),
    }
    out = {"dataset": which, "n_train": n_train, "n_test": len(Xte), "gamma": gamma, "n_components": 2000,
           "n_angles": 64, "blas_threads": os.environ.get("OMP_NUM_THREADS"),
           "command": f"OMP_NUM_THREADS=1 python benchmarks/rotation_default.py {which}", "rows": {}}
    for name, (make, sampling, wh) in rows.items():
        acc, t = run(name, Xtr, ytr, Xte, yte, make, sampling, wh, gamma=gamma)
        out["rows"][name] = {"accuracy": acc, "seconds": t}
    path = Path("results") / "sampling" / f"rotation_default_{which}.json"
    atomic_write_json(path, out)
    print(f"wrote {path}")


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dataset", nargs="?", choices=["digits", "mnist"], default="digits",
                    help="scikit-learn's 8x8 digits (default) or MNIST from the data folder")
    main(ap.parse_args().dataset)
