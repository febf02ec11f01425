"""Probe (issue #16): the FFT paths' per-frequency GEMM block by block (in cache) instead of once per memory chunk.

The polar / cyclic FFT paths compute the correlations' spectrum of a whole memory chunk (s·nf complex values per
row: 52 MB for the 99 digits of one chunk at s = 2000, 64 angles), then invert and pool it a few rows at a time,
so the spectrum goes to memory and comes back. The variant tried here computes the GEMM lazily, a block of rows
of a given size at a time (``CyclicCorrelator.correlate`` on a slice of ``data_spectrum``), so that a block
goes from the GEMM through the inverse FFTs to the pooling while in cache. Default estimator
(``OrbitFourierFeatures(ImageRotation((28, 28)), n_components=2000, output="cos")``, polar path, 64 angles) and
the Rotated MNIST full configuration's shape (s = 7000, 100 angles), 512 MNIST digits, float32, one thread,
round-robin rounds (best of each). Usage::

    OMP_NUM_THREADS=1 PYTHONPATH=src ORBITKERNELS_DATA=<data folder> python benchmarks/probes/perf/correlate_block.py

Writes ``results/bench/correlate_block_probe.json`` (µs per image for each block size; "chunk" is the library's
way). Measured (shared machine, load 3-4, 2026-11-24, with the template spectrum still strided, so every GEMM off
BLAS: ``template_spectrum_layout.py``): s = 2000: 2670 / 1749 / 1381 / 1268 µs per image at 2 / 8 / 16 / 32 MiB
against 1111 per chunk; s = 7000: 77252 / 28118 / 16528 / 11170 against 8947. Again with the contiguous spectrum
(idle core, 2026-11-25): s = 2000: 587 / 504 / 454 / 436 against 417; s = 7000: 3662 / 3961 / 3192 / 2782 against
2558. The GEMM over 33 (51) frequencies with a few rows each costs more than the memory traffic it saves:
reverted.
"""
import argparse
import os

from threadpoolctl import threadpool_limits

import numpy as np

from orbitkernels.bench import _best_interleaved, _mnist, _spectral_probe_estimators
from orbitkernels.features._fft import CyclicCorrelator
from orbitkernels.utils.io import atomic_write_json

SIZES_MB = {"2 MiB": 2, "8 MiB": 8, "16 MiB": 16, "32 MiB": 32, "chunk": None}


def main():
    n = 512
    X = _mnist(n, rotated=True)
    ests = _spectral_probe_estimators(X[:8])

    library_spectrum = CyclicCorrelator.spectrum

    class LazyCorrelations:
        """``C[:, b0:b1]`` computed on demand from the rows' spectrum, ``step`` rows per GEMM, last block kept."""

        def __init__(self, corr, Xh, step):
            self.corr, self.Xh, self.step, self.c0, self.C = corr, Xh, step, 0, None

        def __getitem__(self, key):
            b0, b1 = key[1].start, min(key[1].stop, self.Xh.shape[1])
            if self.C is None or b0 < self.c0 or b1 > self.c0 + self.C.shape[1]:
                self.c0 = b0
                self.C = self.corr.correlate(np.ascontiguousarray(self.Xh[:, b0 : max(b1, b0 + self.step)]))
            return self.C[:, b0 - self.c0 : b1 - self.c0]

    def with_block(est, mb):
        def lazy(corr, Xc):
            per_row = corr.s * corr.nf * corr.Th.dtype.itemsize
            return LazyCorrelations(corr, corr.data_spectrum(Xc), max(1, int(mb * 2**20) // per_row))

        def run():
            if mb is None:
                return est.transform(X)
            CyclicCorrelator.spectrum = lazy
            try:
                return est.transform(X)
            finally:
                CyclicCorrelator.spectrum = library_spectrum
        return run

    fns = {f"{e} | {b}": with_block(est, mb) for e, est in ests.items() for b, mb in SIZES_MB.items()}
    outs = {k: fn() for k, fn in fns.items()}
    for e in ests:  # the variant computes the same features
        ref = outs[f"{e} | chunk"]
        assert all(np.allclose(outs[f"{e} | {b}"], ref, atol=1e-5) for b in SIZES_MB), e
    times, _ = _best_interleaved(fns, repeat=3)
    res = {"us_per_image": {k: round(t / n * 1e6, 1) for k, t in times.items()},
           "load_avg_1min": round(os.getloadavg()[0], 2), "n_images": n, "threads": 1,
           "script": "benchmarks/probes/perf/correlate_block.py"}
    atomic_write_json("results/bench/correlate_block_probe.json", res)
    for k, v in res["us_per_image"].items():
        print(f"{k:45s} {v:9.1f} us/image")


if __name__ == "__main__":
    argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter).parse_args()
    with threadpool_limits(1):
        main()
