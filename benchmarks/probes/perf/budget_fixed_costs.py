"""Probe: time and traced peak of transforms whose fixed costs the memory budget did not see (an audit, stop 64).

Three cases, each in this process, printed as one JSON line per budget:

* ``rf``: ``OrbitFourierFeatures`` over ``ImageScaling((128, 128))`` (the data side), 300 float32 rows, r = 16,
  after a warm-up transform of 5 rows: the image warp's sparse interpolation matrix was rebuilt for every chunk;
* ``haar``: a 200 x 300 ``HaarKernel`` Gram of 28 x 28 scalings, r = 64: the same, for every block pair;
* ``nystroem``: a float32 ``OrbitNystroem`` with 3000 landmarks on the GEMM path, 400 rows at 16 MB: the L map cast to
  float32 at every transform;
* ``rf_cold``: the ``rf`` case with r = 64 scalings and no warm-up (the warp matrices' cache emptied): the first
  transform builds the interpolation matrix, whose construction took ~200 bytes per element and pixel at once.

Run it at a commit and at its parent (``git worktree add``) to compare; the values (the sum of |features|) must agree.
Usage::

    python benchmarks/probes/perf/budget_fixed_costs.py [--case rf haar nystroem] [--budgets 8 64]
"""
import argparse
import json
import time
import tracemalloc

import numpy as np


def run(case, budget):
    from orbitkernels.features import OrbitFourierFeatures, OrbitNystroem
    from orbitkernels.groups import ImageRotation, ImageScaling, Uniform
    from orbitkernels.kernels import HaarKernel

    rng = np.random.default_rng(0)
    if case == "rf_cold":
        from orbitkernels.groups import image

        X = rng.random((300, 128 * 128)).astype(np.float32)
        f = OrbitFourierFeatures(ImageScaling((128, 128), scale=Uniform(0.8, 1.2)), n_components=100, gamma=1e-4,
                                 n_group_samples=64, max_memory_mb=budget, action="data", random_state=0).fit(X[:50])
        image._WARP_CACHE.clear()
        work = lambda: f.transform(X)  # noqa: E731
    elif case == "rf":
        X = rng.random((300, 128 * 128)).astype(np.float32)
        f = OrbitFourierFeatures(ImageScaling((128, 128), scale=Uniform(0.8, 1.2)), n_components=100, gamma=1e-4,
                                 n_group_samples=16, max_memory_mb=budget, action="data", random_state=0).fit(X[:50])
        f.transform(X[:5])
        work = lambda: f.transform(X)  # noqa: E731
    elif case == "haar":
        X = rng.random((500, 784))
        k = HaarKernel(ImageScaling((28, 28), scale=Uniform(0.9, 1.1)), "rbf", gamma=1 / 784, n_group_samples=64,
                       max_memory_mb=budget, random_state=0)
        work = lambda: k(X[:200], X[200:])  # noqa: E731
    else:
        X = rng.random((3500, 784)).astype(np.float32)
        f = OrbitNystroem(ImageRotation((28, 28), n_angles=8), n_components=3000, gamma=0.02, max_memory_mb=budget,
                          fast_path="gemm", random_state=0).fit(X[:3000])
        f.transform(X[-400:-390])
        work = lambda: f.transform(X[-400:])  # noqa: E731
    tracemalloc.start()
    t = time.perf_counter()
    F = work()
    seconds = time.perf_counter() - t
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return {"case": case, "max_memory_mb": budget, "seconds": round(seconds, 2), "peak_mb": round(peak / 2**20, 1),
            "output_mb": round(F.nbytes / 2**20, 1), "sum_abs": float(np.abs(F).sum())}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    cases = ["rf", "haar", "nystroem", "rf_cold"]
    parser.add_argument("--case", nargs="+", default=cases, choices=cases)
    parser.add_argument("--budgets", nargs="+", type=float, default=None,
                        help="MB (default: 8 and 64 for rf, 16 and 64 for rf_cold, 8 and 128 for haar, 16 for "
                             "nystroem)")
    args = parser.parse_args()
    defaults = {"rf": [8, 64], "haar": [8, 128], "nystroem": [16], "rf_cold": [16, 64]}
    for case in args.case:
        for budget in args.budgets or defaults[case]:
            print(json.dumps(run(case, float(budget))), flush=True)


if __name__ == "__main__":
    main()
