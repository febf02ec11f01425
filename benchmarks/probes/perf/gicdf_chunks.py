"""Probe (issue #16): GICDF's transform in one chunk against two, the chunking its memory accounting decides.

``GroupCDFFeatures.transform`` computes the similarities of a chunk of rows by one GEMM against all templates'
transformed copies, so every chunk streams the 100 MB of templates (500 x 64 x 784 float32) through the GEMM once
more, and a smaller GEMM runs further from the peak. Its chunk size comes from ``max_memory_mb`` (default 256) and
the memory a row needs. That count used to charge every row with the pooling's temporaries (a block of pooled
features, the CDF's int64 bin indices), which the NumPy back-end holds for one cache-sized block at a time, and the
estimator's blocks of rows charged every row with its output features, which the engine pools straight into the
output rows: 1024 digits took two GEMMs at the default budget (581 + 443 rows before the first fix, 576 + 448 after
it in this probe's first run, 785 + 239 before the second). ``ProjectionPlan.pool_bytes`` now counts those
temporaries once per block, ``OrbitFeaturesBase._map`` leaves the output rows out of the working memory where they
are pooled in place, and the same transform is one GEMM.

The benchmark's shape (``orbitkernels bench --name gemm_peak``: 1024 MNIST digits, 500 templates x 64 rotations,
50 bins, float32, one thread), with a warm heap (``mallopt``: freed outputs' pages are reused, see
``gicdf_warm_heap.py``): a same-shape sgemm, the transform at the default budget (one chunk) and at 80 MB (two
chunks), in round-robin rounds (best of each); ``gemm_rows_per_transform`` records the GEMMs each one made. Usage::

    ORBITKERNELS_DATA=<data folder> python benchmarks/probes/perf/gicdf_chunks.py [--sittings 3]

Writes ``results/bench/gicdf_chunks_probe.json``.
"""
import argparse
import os

from threadpoolctl import threadpool_limits

from orbitkernels.backends import numpy as numpy_backend
from orbitkernels.bench import _best_interleaved, _gemm_peak_gicdf, _gemm_peak_operand, _mnist, _warm_heap
from orbitkernels.utils.io import atomic_write_json

OUT = "results/bench/gicdf_chunks_probe.json"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sittings", type=int, default=3, help="measurements (each best of --rounds)")
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args(argv)
    assert _warm_heap() == "warm", "needs glibc and ORBITKERNELS_BENCH_WARM_HEAP not 0"
    X = _mnist(1024)
    B = _gemm_peak_operand()
    gemms = []
    matmul = numpy_backend.NumpyBackend.matmul

    def counted(self, a, b, **kw):
        gemms.append(len(a))
        return matmul(self, a, b, **kw)

    numpy_backend.NumpyBackend.matmul = counted
    ests, rows = {}, {}
    for name, mb in (("one chunk (256 MB, the default)", 256), ("two chunks (80 MB)", 80)):
        est = _gemm_peak_gicdf(max_memory_mb=mb).fit(X[:8])
        est.transform(X[:8])
        gemms.clear()
        est.transform(X)
        ests[name], rows[name] = est, list(gemms)
    fns = {"sgemm": lambda: X @ B, **{k: (lambda e=e: e.transform(X)) for k, e in ests.items()}}
    sittings = []
    for _ in range(args.sittings):
        times, _ = _best_interleaved(fns, args.rounds)
        sittings.append({"ms": {k: round(1e3 * v, 1) for k, v in times.items()},
                         "share_of_sgemm": {k: round(times["sgemm"] / v, 3) for k, v in times.items() if k != "sgemm"}})
        print(sittings[-1], flush=True)
    res = {"gemm_rows_per_transform": rows, "sittings": sittings, "n_images": 1024, "threads": 1,
           "rounds": args.rounds, "heap": "warm (mallopt)", "load_avg_1min": round(os.getloadavg()[0], 2),
           "script": "benchmarks/probes/perf/gicdf_chunks.py"}
    atomic_write_json(OUT, res)


if __name__ == "__main__":
    with threadpool_limits(1):
        main()
