"""Probe: the memory order of the moved rows that ``CyclicShift`` and ``TimeWarp`` make, and what it cost downstream.

``act`` returns (r, n, d); every consumer of the data side (``DataPath`` of the feature maps, ``HaarKernel``'s
blocks) reshapes it into (r n, d). ``CyclicShift`` returned the transposed view of one gather (n, r, d) and
``TimeWarp`` stacked interpolations that a column gather had made in Fortran order: neither was C-contiguous, so that
reshape copied all r n d values, a copy beside the budget's row count (OrbitNystroem over 64 time warps of 784
samples at 8 MB: 9.6 MB beyond its output). Both now fill an (r, n, d) array element by element.

Here the former way (written out below, as it was) against ``group._act``, both followed by the reshape every
consumer does, best of ``--repeat`` each, on the same rows and elements; the moved rows must be equal bit for bit.
Then the traced peak of ``OrbitNystroem.transform`` over 64 time warps at an 8 MB budget (the current code only).
Usage::

    python benchmarks/probes/perf/act_layout.py [--repeat 5]

One JSON line per case.
"""
import argparse
import json
import time
import tracemalloc

import numpy as np

from orbitkernels.features import OrbitNystroem
from orbitkernels.groups import CyclicShift, LogUniform, TimeWarp
from orbitkernels.groups.audio import _interp_rows


def former_cyclic(g, X, E):
    return X[:, g._index(E)].transpose(1, 0, 2)


def former_time_warp(g, X, E):
    t = np.arange(g.n_samples, dtype=float)
    return np.stack([X.dtype.type(np.sqrt(a)) * _interp_rows(X, a * t) for a in E[:, 0]])


CASES = [
    ("cyclic, d = 784, r = 64, n = 500", lambda: CyclicShift(784), former_cyclic, 500),
    ("cyclic, all 64 shifts of d = 64, n = 2000", lambda: CyclicShift(64), former_cyclic, 2000),
    ("time warp, d = 784, r = 64, n = 500", lambda: TimeWarp(784, LogUniform(0.8, 1.25)), former_time_warp, 500),
]


def best(f, repeat):
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        f()
        times.append(time.perf_counter() - t)
    return min(times)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    for name, make, former, n in CASES:
        g = make()
        d = g.n_features
        E = g.elements()[:64] if g.is_finite else g.sample(64, rng)
        for dtype in (np.float64, np.float32):
            X = rng.normal(size=(n, d)).astype(dtype)
            a, b = former(g, X, E), g._act(X, E)
            assert np.array_equal(a, b) and a.dtype == b.dtype
            t_former = best(lambda: former(g, X, E).reshape(len(E) * n, d), args.repeat)
            t_now = best(lambda: g._act(X, E).reshape(len(E) * n, d), args.repeat)
            print(json.dumps({"case": name, "dtype": np.dtype(dtype).name, "former_contiguous": a.flags.c_contiguous,
                              "former_s": round(t_former, 4), "now_s": round(t_now, 4),
                              "speedup": round(t_former / t_now, 2)}), flush=True)
    X = rng.random((4000, 784))
    est = OrbitNystroem(TimeWarp(784, LogUniform(0.8, 1.25)), n_components=100, max_memory_mb=8,
                        random_state=0).fit(X[:200])
    est.transform(X[:50])
    tracemalloc.start()
    F = est.transform(X)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    print(json.dumps({"case": "OrbitNystroem, 64 time warps of 784 samples, 4000 rows, max_memory_mb=8",
                      "peak_beyond_output_mb": round((peak - F.nbytes) / 2**20, 2)}), flush=True)


if __name__ == "__main__":
    main()
