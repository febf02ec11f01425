"""Probe: the FFT paths' per-frequency products split among the engine's pooling threads, BLAS on one thread.

``pool_threads.py`` found the default rotation estimator 1.06-1.37x faster on this machine's two cores than on one,
and its blocks (transposition, inverse FFTs, pooling, run by the pooling threads) 1.22x, where two processes of the
same work scale 1.8-1.9x here. The cause, measured in this probe: each chunk's spectrum is one stack of
per-frequency GEMMs that BLAS ran on every core in the caller's thread; after it OpenBLAS's workers spin for a
while, on the cores the pooling threads then need, and those threads spent about 30 % of their time off the cores
(their CPU time against their wall time while pooling). The variant kept (``NumpyBackend.split_products``): the
stack's planes are split among the pooling threads themselves, each plane one BLAS call on one thread, so no BLAS
worker exists to spin; the same bits as the stack on one BLAS thread (tests/test_pool_threads.py).

In one process, round-robin rounds (best of each), this machine's cores: each estimator on one thread, on every
core with the products on BLAS's threads (the engine before: the back-end's ``split_products`` switched off) and
on every core with the products split. Estimators: the default rotation estimator as a user writes it
(``OrbitFourierFeatures(ImageRotation((28, 28)), n_components=2000)``: cos and sin), the issue #16 probes' two polar
shapes (s = 2000 x 64 angles and Rotated MNIST's s = 7000 x 100, cos only) and GICDF on the full circle (polar path,
500 templates x 64 angles, 50 bins); rotated MNIST digits. Then, for the default estimator in both threaded
variants, the pooling threads' CPU time over their wall time while they pool (``_Deferred.pool_into``). Usage::

    PYTHONPATH=src ORBITKERNELS_DATA=<data folder> python benchmarks/probes/perf/split_products.py

Writes ``results/bench/split_products_probe.json``.
"""
import argparse
import os
import threading
import time

import numpy as np

from orbitkernels.bench import (_capability_rounds, _capability_speedups, _mnist, _numpy_backend_off, _on_threads,
                                _spectral_probe_estimators, _write_probe)
from orbitkernels.features import GroupCDFFeatures, OrbitFourierFeatures, _engine
from orbitkernels.groups import ImageRotation

ROUNDS = 5


def _pool_cpu_share(est, Xe, threads, before):
    """The pooling threads' CPU time over their wall time inside ``_Deferred.pool_into`` during one transform (best
    of ROUNDS), with the products split or (``before``) on BLAS's threads."""
    inner = _engine._Deferred.pool_into
    spent = {}

    def timed(self, *a, **k):
        w, c = time.perf_counter(), time.thread_time()
        try:
            return inner(self, *a, **k)
        finally:
            s = spent.setdefault(threading.get_ident(), [0.0, 0.0])
            s[0] += time.perf_counter() - w
            s[1] += time.thread_time() - c

    best = 0.0
    _engine._Deferred.pool_into = timed
    try:
        for _ in range(ROUNDS):
            spent.clear()
            run = lambda: est.transform(Xe)  # noqa: E731
            _on_threads(threads, _numpy_backend_off("split_products", run) if before else run)()
            best = max(best, sum(c for _, c in spent.values()) / sum(w for w, _ in spent.values()))
    finally:
        _engine._Deferred.pool_into = inner
    return round(best, 3)


def main():
    cores = len(os.sched_getaffinity(0))
    X = _mnist(2048, rotated=True)
    ests = {"user default s=2000 r=64 (cos, sin)": (OrbitFourierFeatures(ImageRotation((28, 28)), n_components=2000,
                                                                         random_state=0).fit(X[:8]), X[:1024])}
    spectral = _spectral_probe_estimators(X[:8])
    ests.update({k: (est, X[:1024] if "s=2000" in k else X[:512]) for k, est in spectral.items()})
    ests["gicdf full circle 500 templates x 64 angles, 50 bins"] = (
        GroupCDFFeatures(ImageRotation((28, 28)), n_templates=500, n_bins=50, dtype="float32",
                         random_state=0).fit(X[:8]), X[:1024])
    paths = {e: est.plan_.path for e, (est, _) in ests.items()}
    assert all(p in ("polar", "fft") for p in paths.values()), paths
    one, before, now = "1 thread", f"{cores} threads, products on BLAS's threads (before)", \
        f"{cores} threads, products split"
    times, outs = _capability_rounds(ests, cores, "split_products", (one, before, now), ROUNDS)
    rows = {e: len(Xe) for e, (_, Xe) in ests.items()}
    default = ests["user default s=2000 r=64 (cos, sin)"]
    over_one, vs_before = _capability_speedups(times, ests, (one, before, now), "products split")
    res = {"cores": cores, "rounds": ROUNDS, "paths": paths,
           "us_per_image": {k: round(t / rows[k.split(" | ")[0]] * 1e6, 1) for k, t in times.items()},
           "speedup_over_1_thread": over_one, "speedup_split_vs_before": vs_before,
           "max_abs_diff_vs_1_thread": {e: float(np.abs(outs[f"{e} | {now}"].astype(np.float64)
                                                       - outs[f"{e} | {one}"]).max()) for e in ests},
           "max_abs_diff_before_vs_1_thread": {e: float(np.abs(outs[f"{e} | {before}"].astype(np.float64)
                                                              - outs[f"{e} | {one}"]).max()) for e in ests},
           "n_images": rows,
           "default_pooling_threads_cpu_over_wall": {
               before: _pool_cpu_share(*default, cores, True), now: _pool_cpu_share(*default, cores, False)}}
    _write_probe(res, "benchmarks/probes/perf/split_products.py", threads=cores)
    print(res["speedup_over_1_thread"], res["default_pooling_threads_cpu_over_wall"])


if __name__ == "__main__":
    argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter).parse_args()
    main()
