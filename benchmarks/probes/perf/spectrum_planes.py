"""Probe (issue #16): the FFT paths' chunk spectrum, its planes' spacing and the chunk's size.

The polar / cyclic paths keep a chunk's correlation spectrum as (nf, n, s) complex planes, one per frequency, and
invert it a cache-sized block of rows at a time: the block is gathered from every plane (a transposition to
(rows, s, nf)), inverted by pocketfft along the contiguous last axis and pooled. Two things were found here:

1. **planes**: with the planes packed (n·s values apart), a chunk of 64 or 128 digits at s = 2000 puts them a multiple
   of 4 KiB apart, so the gather's nf streams fall in the same cache sets. Part 1 times the block pipeline alone
   (transposition, inverse FFTs, fused cosine pooling) on a chunk's spectrum with packed planes and with planes an
   odd number of 64-byte lines apart (the engine's workspace since, ``CyclicFFTPath._spectrum_out``), for several
   chunk sizes of the default estimator's shape (s = 2000, 64 angles, 4-row blocks) and the Rotated MNIST full
   configuration's (s = 7000, 100 angles, 1-row blocks).
2. **chunk size**: the engine sized an FFT path's chunk as if each row held its similarities three times over and
   its spectrum twice, although on the CPU only the spectrum is per row (a block's correlations and temporaries are
   a fixed reserve): 17 digits per chunk at s = 7000 under the default 256 MB, so the per-frequency GEMM streamed
   the 40 MB template spectrum once per 17 digits. Part 2 times both estimators (4096 digits, glibc's default
   allocator, round-robin rounds) with the chunks of the old count (``CyclicCorrelator.row_bytes`` of before,
   patched in) and of the engine's count.

Usage::

    OMP_NUM_THREADS=1 PYTHONPATH=src ORBITKERNELS_DATA=<data folder> python benchmarks/probes/perf/spectrum_planes.py

Writes ``results/bench/spectrum_planes_probe.json`` (µs per image; the features of every variant are checked equal).
"""
import argparse

import numpy as np
import scipy.fft
from threadpoolctl import threadpool_limits

from orbitkernels.backends import _fused
from orbitkernels.bench import _best_interleaved, _mnist, _spectral_probe_estimators, _write_probe
from orbitkernels.features._fft import CyclicCorrelator

SHAPES = {"default s=2000 r=64": (2000, 64, 4, (32, 64, 99, 128, 480)),
          "rotated_mnist_full s=7000 r=100": (7000, 100, 1, (17, 48, 64, 87, 128))}


def _old_row_bytes(self, itemsize, blocks=False):
    """The count before: spectrum twice, similarities three times, whatever the pooling."""
    c = 2 * itemsize
    return self.s * self.nf * c * 2 + self.B * self.nf * c * 2 + self.s * self.r * itemsize * 3


def block_pipeline(s, r, n, bs, padded, rng):
    """µs per image of the engine's block loop over one chunk's spectrum, and its features."""
    nf = r // 2 + 1
    stride = n * s
    if padded:  # an odd number of 64-byte lines (8 complex64 values)
        lines = -(-stride // 8)
        stride = 8 * (lines + (lines % 2 == 0))
    C = np.empty((nf, stride), np.complex64)[:, : n * s].reshape(nf, n, s)
    C[...] = (rng.standard_normal((nf, n, s)) + 1j * rng.standard_normal((nf, n, s))).astype(np.complex64)
    w = np.full(r, 1.0 / r, np.float32)
    off = rng.uniform(0, 2 * np.pi, s).astype(np.float32)
    out = np.empty((n, s), np.float32)

    def run():
        for a in range(0, n, bs):
            Cb = np.ascontiguousarray(C[:, a : a + bs].transpose(1, 2, 0))
            out[a : a + bs] = _fused.trig_pool(scipy.fft.irfft(Cb, r, axis=-1, workers=1), w, off, "nsr")
        return out.copy()
    return run


def main():
    res = {"block_pipeline_us_per_image": {}, "estimator_us_per_image": {}, "chunk_rows": {}}
    for label, (s, r, bs, ns) in SHAPES.items():
        for n in ns:
            fns = {f"{label} | {n} rows | planes packed": block_pipeline(s, r, n, bs, False, np.random.default_rng(n)),
                   f"{label} | {n} rows | planes an odd number of lines apart": block_pipeline(
                       s, r, n, bs, True, np.random.default_rng(n))}
            times, outs = _best_interleaved(fns, repeat=3)
            a, b = outs.values()
            assert np.array_equal(a, b)
            res["block_pipeline_us_per_image"].update({k: round(t / n * 1e6, 1) for k, t in times.items()})
    X = _mnist(4096, rotated=True)
    new_row_bytes = CyclicCorrelator.row_bytes
    for label, est in _spectral_probe_estimators(X[:8]).items():
        def with_count(count, est=est):
            def run():
                CyclicCorrelator.row_bytes = count
                try:
                    return est.transform(X)
                finally:
                    CyclicCorrelator.row_bytes = new_row_bytes
            return run
        fns = {f"{label} | chunks of the old count": with_count(_old_row_bytes),
               f"{label} | chunks of the engine's count": with_count(new_row_bytes)}
        for k, fn in fns.items():
            CyclicCorrelator.row_bytes = _old_row_bytes if "old" in k else new_row_bytes
            res["chunk_rows"][k] = est.plan_.chunk_rows(len(X), X.shape[1], 4)
            CyclicCorrelator.row_bytes = new_row_bytes
        times, outs = _best_interleaved(fns, repeat=3)
        a, b = outs.values()
        assert np.allclose(a, b, atol=1e-5), label
        res["estimator_us_per_image"].update({k: round(t / len(X) * 1e6, 1) for k, t in times.items()})
    res["allocator"] = "glibc default (no mallopt)"
    _write_probe(res, "benchmarks/probes/perf/spectrum_planes.py")
    for part in ("block_pipeline_us_per_image", "estimator_us_per_image", "chunk_rows"):
        for k, v in res[part].items():
            print(f"{k:90s} {v}")


if __name__ == "__main__":
    argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter).parse_args()
    with threadpool_limits(1):
        main()
