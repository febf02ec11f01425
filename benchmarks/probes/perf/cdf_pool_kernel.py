"""Probe (issue #16): GICDF's CDF pooling alone, the fused kernel against the NumPy pooling and two variants.

The GICDF transform's share of sgemm (``orbitkernels bench --name gemm_peak``) moves by 10 points from one process
to the next on this machine, so it cannot say which pooling is faster: the pooling is a sixth of the transform.
This probe times the pooling alone, as the engine runs it (the benchmark's shape: 500 templates x 64 rotations,
50 bins, float32 similarities of MNIST digits, pooled one image row at a time into the rows of a (rows, 500·101)
output), in round-robin rounds (best of each), and checks that all give the same features bit for bit:

* ``numpy``: the NumPy back-end's pooling (bin index, ``np.bincount``, ``np.cumsum``; fused kernels off);
* ``fused``: the library's numba kernel (``_cdf_pool_equal``: the bin index in a called function, the histogram
  adding a constant 1 in the kernel's own loop), called as the variants are;
* ``fused, before``: the kernel before (bin index and histogram in one called function shared with the weighted
  kernel, fed int64 weights of ones);
* ``fused, table``: a variant that reads each cumulated count's feature from an (r+1)-entry table instead of a
  conversion and two products per threshold;
* ``fused, through cdf_pool``: the library's kernel through ``_fused.cdf_pool``, the back-end's entry point,
  with its checks (about 10 µs a call, one call per image row here).

Measured (2026-11-24, AVX-512 core, one other process on the second core, three runs): ms per 1024 images,
the fused kernel 55.1 / 55.2 / 55.0 against 67.7 / 68.1 / 68.3 before (1.24x: kept), the table 56.5 / 56.8 / 57.4
(reverted), the NumPy pooling 176.2 / 176.2 / 176.8: the fused kernel is 3.2x the NumPy pooling on this CPU too,
so which of the two a ``gemm_peak`` run measures ahead is noise of the transform around it. Through the entry
point: 61 ms (73.6 once).

Usage::

    OMP_NUM_THREADS=1 ORBITKERNELS_DATA=<data folder> python benchmarks/probes/perf/cdf_pool_kernel.py [--n 256]

Writes ``results/bench/cdf_pool_kernel_probe.json`` (ms per 1024 images and ns per similarity).
"""
import argparse
import os

import numba
import numpy as np
from threadpoolctl import threadpool_limits

from orbitkernels.backends import _fused, use_numba
from orbitkernels.backends.numpy import NumpyBackend
from orbitkernels.bench import _best_interleaved, _gemm_peak_gicdf, _mnist
from orbitkernels.utils.io import atomic_write_json

OUT = "results/bench/cdf_pool_kernel_probe.json"


@numba.njit(cache=False, nogil=True)
def _bins(S, i, j, factor, n_bins, idx):
    lo, hi = S.dtype.type(-n_bins), S.dtype.type(n_bins + 1)
    for k in range(S.shape[2]):
        t = np.ceil(S[i, j, k] * factor)
        idx[k] = np.int64(min(max(t, lo), hi)) + n_bins


@numba.njit(cache=False, nogil=True)
def _histogram(S, i, j, factor, n_bins, w, idx, counts):
    _bins(S, i, j, factor, n_bins, idx)
    for k in range(S.shape[2]):
        counts[idx[k]] += w[k]


@numba.njit(cache=False, nogil=True)
def _before_kernel(S, n_bins, factor, w0, scale, out):
    """The kernel before (commit 793ec21): bin index and histogram in one called function, shared with the
    weighted kernel, fed int64 weights of ones."""
    ones = np.ones(S.shape[2], np.int64)
    idx = np.empty(S.shape[2], np.int64)
    counts = np.zeros(2 * n_bins + 2, np.int64)
    for i in range(S.shape[0]):
        for j in range(S.shape[1]):
            _histogram(S, i, j, factor, n_bins, ones, idx, counts)
            c = 0
            for b in range(2 * n_bins + 1):
                c += counts[b]
                counts[b] = 0
                out[i, j, b] = (S.dtype.type(c) * w0) * scale
            counts[2 * n_bins + 1] = 0


@numba.njit(cache=False, nogil=True)
def _table_kernel(S, n_bins, factor, w0, scale, out):
    """Variant (reverted): a cumulated count is one of r + 1 integers, so its feature (c·w0)·scale is read from a
    table made by the same two roundings instead of a conversion and two products per threshold."""
    r = S.shape[2]
    idx = np.empty(r, np.int64)
    counts = np.zeros(2 * n_bins + 2, np.int64)
    table = np.empty(r + 1, S.dtype)
    for c in range(r + 1):
        table[c] = (S.dtype.type(c) * w0) * scale
    for i in range(S.shape[0]):
        for j in range(S.shape[1]):
            _bins(S, i, j, factor, n_bins, idx)
            for k in range(r):
                counts[idx[k]] += 1
            c = 0
            for b in range(2 * n_bins + 1):
                c += counts[b]
                out[i, j, b] = table[c]
            counts[:] = 0


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=256, help="digits whose similarities are pooled per round")
    ap.add_argument("--rounds", type=int, default=7)
    args = ap.parse_args(argv)
    X = _mnist(args.n)
    est = _gemm_peak_gicdf().fit(X[:8])
    n_bins, s, r = est.n_bins_, est.n_templates_, est.n_group_samples
    S = np.ascontiguousarray(est.plan_.similarities(X), dtype=np.float32)  # (n, s, r)
    w, vr = est.group_weights_, est.range_
    scale = 0.1
    factor = np.asarray(n_bins / vr, dtype=np.float32)[()]
    bk = NumpyBackend()
    names = ("numpy", "fused", "fused, before", "fused, table", "fused, through cdf_pool")
    outs = {k: np.zeros((args.n, s, 2 * n_bins + 1), np.float32) for k in names}

    def numpy_pool():
        o = outs["numpy"]
        with use_numba(False):
            for i in range(args.n):
                bk.cdf_pool(S[i : i + 1], w, n_bins, vr, scale, out=o[i : i + 1])
        return o

    def kernel(name, fn):
        def run():
            o = outs[name]
            for i in range(args.n):
                fn(S[i : i + 1], n_bins, factor, np.float32(w[0]), np.float32(scale), o[i : i + 1])
            return o
        return run

    def fused():  # the library's kernel through the back-end's entry point (its checks cost ~10 µs a call)
        o = outs["fused, through cdf_pool"]
        for i in range(args.n):
            _fused.cdf_pool(S[i : i + 1], w, n_bins, vr, scale, out=o[i : i + 1])
        return o

    fns = {"numpy": numpy_pool, "fused": kernel("fused", _fused._cdf_pool_equal),
           "fused, before": kernel("fused, before", _before_kernel),
           "fused, table": kernel("fused, table", _table_kernel), "fused, through cdf_pool": fused}
    for fn in fns.values():
        fn()  # compile, and touch the outputs
    times, res = _best_interleaved(fns, args.rounds)
    for k in names[1:]:
        np.testing.assert_array_equal(res[k], res["numpy"])
    per = 1024 / args.n
    out = {"ms_per_1024_images": {k: round(1e3 * v * per, 1) for k, v in times.items()},
           "ns_per_similarity": {k: round(1e9 * v / S.size, 3) for k, v in times.items()},
           "speedup_vs_numpy": {k: round(times["numpy"] / v, 2) for k, v in times.items()},
           "features_identical": True, "shape": {"templates": s, "rotations": r, "bins": n_bins, "images": args.n},
           "rounds": args.rounds, "threads": 1, "load_avg_1min": round(os.getloadavg()[0], 2),
           "script": "benchmarks/probes/perf/cdf_pool_kernel.py"}
    print(out)
    atomic_write_json(OUT, out)


if __name__ == "__main__":
    with threadpool_limits(1):
        main()
