"""Probe (issue #16): GICDF's pooling written straight into the output rows instead of through temporaries.

GICDF(50 bins) makes 101 features per template from r = 64 similarities, so its output is 1.6x the block it
pools. Pooled into a temporary, scaled into a second one and copied into the output (the engine's way before,
still the way of a device back-end: ``pools_into_numpy = False``), the output is written three times; with
``CDFPool.pool_into`` the fused kernel writes each feature once, scaled, into its place. The benchmark's
configuration (``orbitkernels bench --name gemm_peak``: 500 templates x 64 rotations, float32, one thread),
``n`` MNIST digits, as a share of a same-shape numpy sgemm, all in round-robin rounds (best of each); also
the GEMM alone (the similarities of the same rows, as the benchmark's ``gemm_only``). Usage::

    OMP_NUM_THREADS=1 ORBITKERNELS_DATA=<data folder> python benchmarks/probes/perf/cdf_direct_output.py [--n 1024]

Writes ``results/bench/cdf_direct_output_probe.json``.
"""
import argparse
import os

import numpy as np
from threadpoolctl import threadpool_limits

from orbitkernels.bench import (GEMM_PEAK_SHAPE, _best_interleaved, _gemm_peak_gicdf, _gemm_peak_operand, _mnist,
                               _numpy_backend_off)
from orbitkernels.utils.io import atomic_write_json

OUT = "results/bench/cdf_direct_output_probe.json"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=1024, help="digits transformed per round")
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args(argv)
    d = GEMM_PEAK_SHAPE[0]
    X = _mnist(args.n)
    est = _gemm_peak_gicdf().fit(X[:8])
    est.transform(X[:8])
    plan = est.plan_
    rows = plan.chunk_rows(args.n, d, 4)
    A, B = X.copy(), _gemm_peak_operand()

    copied = _numpy_backend_off("pools_into_numpy", lambda: est.transform(X))

    fns = {"sgemm": lambda: A @ B,
           "gemm only": lambda: [plan._similarities(X[a : a + rows], np.dtype(np.float32))
                                 for a in range(0, args.n, rows)],
           "direct into the output rows": lambda: est.transform(X),
           "temporary, scaled copy, copy (previous engine)": copied}
    times, outs = _best_interleaved(fns, args.rounds)
    np.testing.assert_array_equal(outs["direct into the output rows"],
                                  outs["temporary, scaled copy, copy (previous engine)"])
    res = {"share_of_sgemm": {k: round(times["sgemm"] / v, 3) for k, v in times.items() if k != "sgemm"},
           "ms": {k: round(1e3 * v, 1) for k, v in times.items()},
           "features_identical": True, "n_images": args.n, "rounds": args.rounds, "threads": 1,
           "load_avg_1min": round(os.getloadavg()[0], 2), "script": "benchmarks/probes/perf/cdf_direct_output.py"}
    print(res)
    atomic_write_json(OUT, res)


if __name__ == "__main__":
    with threadpool_limits(1):
        main()
