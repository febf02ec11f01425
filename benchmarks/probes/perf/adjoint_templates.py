"""Probe: orbit Fourier features over a linear action that is not unitary on the rows (a scaling of images, a time
warp of waveforms), on the data side (``action="data"``) against the frequencies' side by the transposes of the
elements' maps (``action="auto"``: <g x, w> = <x, g^T w>, ``Group.act_adjoint``).

For each case, in this process: the first transform (the frequencies' side moves its s * r frequencies there) and the
best of three later ones, and the largest difference between the two sides' features (rounding only: both are Raj
et al. 2017's Eq. 7 with the same frequencies and elements). One JSON line per case and side. Cases: 28 x 28 and
64 x 64 scalings and 4000-sample time warps with s = 500 frequencies and r = 16 elements; ``scaling128``: 128 x 128
images, s = 40, r = 128 (a float64 warp matrix larger than the warp cache; 100 rows, a 1 GB budget that holds the
moved frequencies).

Usage::

    python benchmarks/probes/perf/adjoint_templates.py [--case scaling28 scaling64 timewarp scaling128] [--rows 2000]
"""
import argparse
import json
import time

import numpy as np


def make(case):
    from orbitkernels.groups import ImageScaling, LogUniform, TimeWarp

    if case == "scaling28":
        return ImageScaling((28, 28), scale=LogUniform(0.8, 1.25)), 784, 500, 16
    if case == "scaling64":
        return ImageScaling((64, 64), scale=LogUniform(0.8, 1.25)), 4096, 500, 16
    if case == "scaling128":
        return ImageScaling((128, 128), scale=LogUniform(0.8, 1.25)), 16384, 40, 128
    return TimeWarp(4000, rate=LogUniform(0.8, 1.25)), 4000, 500, 16


def run(case, n_rows):
    from orbitkernels.features import OrbitFourierFeatures

    group, d, s, r = make(case)
    if case == "scaling128":
        n_rows = min(n_rows, 100)
    X = np.random.default_rng(0).random((n_rows, d)).astype(np.float32)
    out, rows = {}, []
    for action in ("data", "auto"):
        f = OrbitFourierFeatures(group, gamma=1.0 / d, n_components=s, n_group_samples=r, action=action,
                                 max_memory_mb=1024, random_state=0).fit(X[:200])
        t = time.perf_counter()
        F = f.transform(X)
        first = time.perf_counter() - t
        best = np.inf
        for _ in range(3):
            t = time.perf_counter()
            f.transform(X)
            best = min(best, time.perf_counter() - t)
        out[action] = F
        rows.append({"case": case, "action": action, "side": f.action_, "path": f.plan_.path, "rows": n_rows,
                     "first_transform_s": round(first, 3), "transform_s": round(best, 3)})
    diff = float(np.abs(out["auto"] - out["data"]).max())
    for row in rows:
        row["max_abs_diff_between_sides"] = diff
        row["speedup_vs_data"] = round(rows[0]["transform_s"] / row["transform_s"], 2)
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    cases = ["scaling28", "scaling64", "timewarp", "scaling128"]
    parser.add_argument("--case", nargs="+", default=cases[:3], choices=cases)
    parser.add_argument("--rows", type=int, default=2000)
    args = parser.parse_args()
    for case in args.case:
        for row in run(case, args.rows):
            print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main()
