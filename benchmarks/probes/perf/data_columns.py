"""Probe: the engine's data side over image warps, with the moved rows as columns against the rows' layout.

On the data side (``DataPath``: a scaling, which is no unitary action, so OrbitNystroem moves the rows; an orbit
Fourier map with ``action="data"``) each chunk of rows is moved by the r sampled elements. An image warp makes the
moved rows as the columns of one sparse product (the stacked interpolation matrix times the rows as columns, (r, d,
n)); the engine took them in the rows' layout (r, n, d) through a transposition of all r n d values, then copied them
once more beside two columns for the Gaussian (-1, -|g x|²/2). Now it takes the columns (``Group._act_columns``) and
makes each element's dot products with the templates as one product of the transposed columns, the Gaussian's norms
added afterwards.

Both ways run here in this process on the same fitted map (the former by turning the group's ``_makes_columns``
off), interleaved, best of ``--repeat`` transforms each, float32 rows; the traced peak of one transform each
(tracemalloc, NumPy's arrays) and the largest difference of the features relative to their largest entry. Cases:
``nys28`` / ``nys64`` (OrbitNystroem, 500 orbit landmarks, 28 x 28 / 64 x 64 images, r = 16 scalings by 0.8-1.25),
``rf28`` / ``rf64`` (OrbitFourierFeatures, 500 frequencies, action="data"), ``rf64rgb`` (32 x 32 x 3 images).
Usage::

    python benchmarks/probes/perf/data_columns.py [--case nys28 nys64 rf28 rf64 rf64rgb] [--rows 2000] [--repeat 5]

One JSON line per case.
"""
import argparse
import json
import time
import tracemalloc

import numpy as np

CASES = ["nys28", "nys64", "rf28", "rf64", "rf64rgb"]


def make(case, X_fit):
    from orbitkernels.features import OrbitFourierFeatures, OrbitNystroem
    from orbitkernels.groups import ImageScaling, LogUniform

    shape = {"28": (28, 28), "64": (64, 64), "64rgb": (32, 32, 3)}[case[3:] if case.startswith("nys") else case[2:]]
    group = ImageScaling(shape, scale=LogUniform(0.8, 1.25))
    d = int(np.prod(shape))
    if case.startswith("nys"):
        est = OrbitNystroem(group, kernel="rbf", gamma=1.0 / d, n_components=500, n_group_samples=16,
                            max_memory_mb=1024, random_state=0)
    else:
        est = OrbitFourierFeatures(group, gamma=1.0 / d, n_components=500, n_group_samples=16, action="data",
                                   max_memory_mb=1024, random_state=0)
    return est.fit(X_fit), group, d


def timed(est, X):
    t = time.perf_counter()
    F = est.transform(X)
    return F, time.perf_counter() - t


def peak(est, X):
    tracemalloc.start()
    est.transform(X)
    top = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return top / 2**20


def run(case, rows, repeat):
    rng = np.random.default_rng(0)
    shape_d = {"28": 784, "64": 4096, "64rgb": 3072}[case[3:] if case.startswith("nys") else case[2:]]
    X = rng.random((rows, shape_d)).astype(np.float32)
    est, group, d = make(case, X[:500])
    sides = {"columns": True, "rows": False}
    best = {k: np.inf for k in sides}
    feats = {}
    for k, flag in sides.items():  # a first transform each: the warp matrix and the templates are made
        group._makes_columns = flag
        feats[k] = timed(est, X)[0]
    for _ in range(repeat):
        for k, flag in sides.items():
            group._makes_columns = flag
            best[k] = min(best[k], timed(est, X)[1])
    peaks = {}
    for k, flag in sides.items():
        group._makes_columns = flag
        peaks[k] = peak(est, X)
    scale = float(np.abs(feats["rows"]).max())
    return {"case": case, "rows": rows, "estimator": type(est).__name__, "d": d, "path": est.plan_.path,
            "rows_layout_s": round(best["rows"], 4), "columns_s": round(best["columns"], 4),
            "speedup": round(best["rows"] / best["columns"], 2),
            "rows_layout_peak_mb": round(peaks["rows"], 1), "columns_peak_mb": round(peaks["columns"], 1),
            "max_rel_diff": float(np.abs(feats["columns"] - feats["rows"]).max()) / scale}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--case", nargs="+", default=CASES, choices=CASES)
    parser.add_argument("--rows", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    for case in args.case:
        print(json.dumps(run(case, args.rows, args.repeat)), flush=True)


if __name__ == "__main__":
    main()
