"""Mroueh et al. (2015, Fig. 2), draw 0: does RLS factorised per λ need float64 Gram products where RidgePath does not?

``mnist_fig2_draws.py`` runs the CPU probe's pixel-grid rows on a GPU, with the RLS factorised per λ (Cholesky of
``K_c + αI``, :func:`rls_holdout_gram_torch`) instead of ``RidgePath``'s eigendecomposition, which clips negative
eigenvalues at 0. With the Gram matrices from float32 products, as the CPU probe computes them, the device's rows
came out up to 33 test digits below the CPU's on draws 0-6, with the same features; from float64 products they
agree to 6. This probe asks, on the CPU, whether the RLS is the cause:

- the features of draw 0 (the CPU probe's own ``mnist_fig2.features``) and its Gram matrices from float32 and from
  float64 products;
- the spectrum of the centred fitting block (the 8,000 rows of the hold-out fit) of the linear kernel and of the
  Gaussian kernel at the width draw 0's row chose (factor 0.5): its smallest eigenvalue against the λ grid's α
  (where rounding makes the matrix indefinite by more than an α, the two solvers differ);
- both RLS on both Gram matrices: ``rls_fit_predict`` (the CPU probe's, clipped) and ``rls_holdout_gram_torch``
  (the device's, Cholesky, here on the CPU).

    python benchmarks/probes/mroueh2015/gram_precision.py

Writes ``results/mroueh2015/gram_precision_probes.json`` (each finished variant at once, skipped on a rerun).
Needs MNIST (``ORBITKERNELS_DATA``) and torch (CPU); on 2 cores the four variants' fits take 32 minutes together
(their ``seconds``), after one pass computing the features (printed, not stored).
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_limits

from orbitkernels.experiments._mroueh_rls import HOLDOUT_GRID, _holdout_split, rls_fit_predict, rls_holdout_gram_torch
from orbitkernels.experiments.mroueh2015 import _Mnist, mnist_config
from orbitkernels.experiments.report import ProbeFile
from orbitkernels.models.ridge import centre_gram

sys.path.insert(0, str(Path(__file__).resolve().parent))
from mnist_fig2 import GAUSS_FACTORS, SEED, features, median_sq_dist, pixel_grid, sq_distances  # noqa: E402

OUT = Path("results/mroueh2015/gram_precision_probes.json")


def kernels(Ftr, Fte, precision):
    """(train Gram, test Gram, test squared norms) of the linear kernel, products in ``precision``."""
    A, B = (Ftr, Fte) if precision == "float32" else (Ftr.astype(np.float64), Fte.astype(np.float64))
    te_sq = np.einsum("ij,ij->i", Fte, Fte, dtype=np.float64)
    return (A @ A.T).astype(np.float64), (B @ A.T).astype(np.float64), te_sq


def gaussian(Ktr, Kte, te_sq, factor):
    """run_row's Gaussian kernel at ``factor`` / median squared distance."""
    D2tr, D2te = sq_distances(Ktr, Kte, te_sq)
    med = median_sq_dist(D2tr)
    return np.exp(-(factor / med) * D2tr), np.exp(-(factor / med) * D2te)


def spectrum(K):
    """Smallest and largest eigenvalue of the centred fitting block of the hold-out, and the grid's α there."""
    n = len(K)
    Kc = centre_gram(K)[0]
    _, tr = _holdout_split(n, 0.2, SEED)
    block = centre_gram(Kc[np.ix_(tr, tr)])[0]
    with threadpool_limits(1):
        ev = np.linalg.eigvalsh(block)
    alphas = HOLDOUT_GRID * (np.trace(Kc) / n) * len(tr) / n
    return dict(min_eigenvalue=float(ev[0]), max_eigenvalue=float(ev[-1]),
                n_negative_below_minus_alpha_min=int(np.sum(ev < -alphas[0])),
                alpha_min=float(alphas[0]), alpha_max=float(alphas[-1]),
                alphas_below_abs_min_eigenvalue=int(np.sum(alphas < abs(ev[0]))))


def main():
    probes = ProbeFile(OUT, protocol=__doc__.strip().splitlines()[0],
                       script="benchmarks/probes/mroueh2015/gram_precision.py", experiment="mnist", draw=0, n_bins=50,
                       n_templates=500)
    d = _Mnist(mnist_config(False, 0), 0)
    d.group = pixel_grid()
    t0 = time.perf_counter()
    Ftr, Fte = features(d, "qmc", None, centred=True)
    print(f"features {time.perf_counter() - t0:.0f} s", flush=True)
    for precision in ("float32", "float64"):
        Ktr, Kte, te_sq = kernels(Ftr, Fte, precision)
        for factor in (None, GAUSS_FACTORS[0]):  # linear; the width draw 0's Gaussian row chose (0.5)
            name = "linear" if factor is None else f"Gaussian, factor {factor}"
            K, Kt = (Ktr, Kte) if factor is None else gaussian(Ktr, Kte, te_sq, factor)
            key = f"{name}, Gram from {precision} products"
            if probes.has(key):
                continue
            t = time.perf_counter()
            row = spectrum(K)
            for rls_name, fit in (("clipped", rls_fit_predict), ("cholesky", rls_holdout_gram_torch)):
                # "clipped": the CPU probe's RidgePath; "cholesky": the device run's solver, here on the CPU
                kw = dict(kernel=True, seed=SEED) if fit is rls_fit_predict else dict(seed=SEED)
                o = fit(K, d.ytr, Kt, classes=d.classes, **kw)
                row.update({f"{rls_name}_accuracy": d.accuracy(o["pred"]),
                            f"{rls_name}_val_accuracy": o["val_accuracy"], f"{rls_name}_rel_lambda": o["rel_lambda"]})
            row["seconds"] = round(time.perf_counter() - t, 1)
            probes.save(key, row)
            print(key, row, flush=True)


if __name__ == "__main__":
    argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter).parse_args()
    main()
