"""Probe: does OrbitNystroem's automatic precision keep float32 rows' features within 1e-3 of exact?

Under ``dtype=None`` float32 rows are mapped in float32 unless ``OrbitNystroem._auto_precision``'s bound,
u · sqrt(s / S_min) · sqrt(k_max) (the kernel values' float32 rounding amplified by L = K_ZZ^{-1/2}), exceeds
``FLOAT32_TOLERANCE`` (1e-3). This maps Coulomb-shaped rows (23 atoms, d = 529, Montavon sortings, r = 10, orbit
landmarks) rounded to float32, for several numbers of landmarks s, and compares the features with the float64
features of the same rounded rows: the precision chosen, the bound, and the error of each row relative to its norm
(largest, 99th percentile, median), on the data side's product form (``DataPath``) and on scikit-learn's float64
kernel values (the former path). Montavon's sortings depend on the rows' norms, so a float32 row can be sorted
otherwise than its float64 value where two noisy norms nearly tie (a different moved copy, not an arithmetic error):
the rows where any of the r sortings differs are counted, and the errors are also given over the other rows, and for
``dtype="float64"`` (the rows moved and compared in float64, the sortings then the float64 rows' own).
Usage::

    python benchmarks/probes/perf/nystroem_float32_rows.py [--rows 600] [--landmarks 50 100 200 300 400]

Writes ``--out`` (default ``results/bench/nystroem_float32_rows_probe.json``).
"""
import argparse
import json
from pathlib import Path

import numpy as np
import scipy.linalg

from orbitkernels.features import OrbitNystroem
from orbitkernels.groups import CoulombPermutation

from data_path_rbf import coulomb_like


def row_errors(F, ref, same=None):
    rel = np.linalg.norm(F - ref, axis=1) / np.linalg.norm(ref, axis=1)
    out = {"max": float(rel.max()), "p99": float(np.quantile(rel, 0.99)), "median": float(np.median(rel))}
    if same is not None:
        out["max_same_sortings"] = float(rel[same].max())
    return out


def main(rows, sizes, out):
    rng = np.random.default_rng(0)
    X32 = coulomb_like(rows, rng).astype(np.float32)
    X = X32.astype(np.float64)
    gamma = 1.0 / np.median(((X[:200, None] - X[None, :200]) ** 2).sum(-1))
    group = CoulombPermutation(23, sampling="montavon", noise=1.0)
    res = {"protocol": __doc__.strip().splitlines()[0], "script": "benchmarks/probes/perf/nystroem_float32_rows.py",
           "rows": rows, "gamma": gamma, "tolerance": OrbitNystroem.FLOAT32_TOLERANCE, "sizes": {}}
    for s in sizes:
        kw = dict(kernel="rbf", gamma=gamma, n_components=s, landmarks="orbit", n_group_samples=10, random_state=0)
        ref = OrbitNystroem(group, **kw).fit(X).transform(X)
        new = OrbitNystroem(group, **kw).fit(X32)
        old = OrbitNystroem(group, **kw).fit(X32)
        old.plan_.strategy.dots_kernels = False  # scikit-learn's float64 kernel values, rounded to float32
        E = new.group_elements_
        same = (group.sorted_permutations(X32, E) == group.sorted_permutations(X, E)).all(axis=(0, 2))
        K = new._kernel(new.components_, new.components_)
        S = scipy.linalg.svdvals(K)
        bound = float(np.finfo(np.float32).eps * np.sqrt(len(S) / S.min()) * np.sqrt(np.abs(np.diag(K)).max()))
        res["sizes"][str(s)] = {"precision": new.precision_, "bound": bound, "s_min": float(S.min()),
                                "rows_sorted_otherwise": int((~same).sum()),
                                "product_form": row_errors(new.transform(X32), ref, same),
                                "sklearn_kernel": row_errors(old.transform(X32), ref, same),
                                "dtype_float64": row_errors(OrbitNystroem(group, dtype="float64", **kw).fit(X32)
                                                            .transform(X32), ref)}
        print(s, res["sizes"][str(s)], flush=True)
    Path(out).parent.mkdir(parents=True, exist_ok=True)
    Path(out).write_text(json.dumps(res, indent=1) + "\n")


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=int, default=600)
    ap.add_argument("--landmarks", type=int, nargs="+", default=[50, 100, 200, 300, 400])
    ap.add_argument("--out", default="results/bench/nystroem_float32_rows_probe.json")
    a = ap.parse_args()
    main(a.rows, a.landmarks, a.out)
