"""Probe (issue #16): the FFT paths' template spectrum, C-contiguous (the library since 2026-11-25) or strided (before).

``CyclicCorrelator`` keeps the templates' spectrum as an (nf, B, s) array for the per-frequency GEMM
``(nf, n, B) @ (nf, B, s)``. It used to be a transposed view's copy with the (s, B, nf) strides of the FFT's output
(``np.asarray(..., dtype=complex64)`` keeps the strides), so each (B, s) operand had neither unit stride, and
NumPy's matmul left BLAS for its own loop. This probe times the default estimator
(``OrbitFourierFeatures(ImageRotation((28, 28)), n_components=2000, output="cos")``, polar path, 64 angles, B = 14
radii) and the Rotated MNIST full configuration's (s = 7000, 100 angles) with the library's contiguous spectrum
and with the same values in the former strided layout, 512 regenerated Rotated MNIST digits, float32, one thread,
warm heap, round-robin rounds (best of each); the two layouts give the same features to float32 rounding.

    OMP_NUM_THREADS=1 ORBITKERNELS_DATA=<data folder> python benchmarks/probes/perf/template_spectrum_layout.py

Writes ``results/bench/template_spectrum_layout_probe.json`` (µs per image, and the ratio strided / contiguous).
"""
import argparse
import os

import numpy as np
from threadpoolctl import threadpool_limits

from orbitkernels.bench import _best_interleaved, _mnist, _spectral_probe_estimators, _warm_heap
from orbitkernels.utils.io import atomic_write_json


def _correlator(est):
    """The fitted estimator's CyclicCorrelator (float32), built by one transform."""
    plan = est.plan_
    path = plan.strategy
    return path._correlator(path.prepared(plan, np.float32))


def main():
    heap = _warm_heap()
    n = 512
    X = _mnist(n, rotated=True)
    ests = _spectral_probe_estimators(X[:8])
    fns = {}
    for name, est in ests.items():
        est.transform(X[:8])
        corr = _correlator(est)
        contiguous = corr.Th
        assert contiguous.flags.c_contiguous
        # the same values with the strides the FFT's (s, B, nf) output had
        strided = np.ascontiguousarray(contiguous.transpose(2, 1, 0)).transpose(2, 1, 0)
        assert not strided.flags.c_contiguous and np.array_equal(strided, contiguous)

        def run(corr=corr, Th=contiguous, est=est):
            corr.Th = Th
            return est.transform(X)

        fns[f"{name} | contiguous"] = run
        fns[f"{name} | strided"] = lambda run=run, Th=strided: run(Th=Th)
    outs = {k: fn() for k, fn in fns.items()}
    for name in ests:
        np.testing.assert_allclose(outs[f"{name} | strided"], outs[f"{name} | contiguous"], atol=1e-5)
    times, _ = _best_interleaved(fns, repeat=3)
    us = {k: round(t / n * 1e6, 1) for k, t in times.items()}
    res = {"us_per_image": us,
           "strided_over_contiguous": {e: round(us[f"{e} | strided"] / us[f"{e} | contiguous"], 2) for e in ests},
           "load_avg_1min": round(os.getloadavg()[0], 2), "n_images": n, "threads": 1, "heap": heap,
           "script": "benchmarks/probes/perf/template_spectrum_layout.py"}
    atomic_write_json("results/bench/template_spectrum_layout_probe.json", res)
    for k, v in us.items():
        print(f"{k:45s} {v:9.1f} us/image")
    print(res["strided_over_contiguous"])


if __name__ == "__main__":
    argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter).parse_args()
    with threadpool_limits(1):
        main()
