"""Probe (issue #16): the FFT paths' block pipeline over tiles of templates instead of whole rows.

At the Rotated MNIST full configuration's shape (s = 7000 templates, 100 angles) one row's correlations (2.8 MB) no
longer fit in L2, so a block of one row goes from its transposed copy through the inverse FFTs to the pooling through
the outer caches. The variant tried here cuts each block into tiles of templates (the transposition, inverse FFTs
and fused cosine pooling of ``tile`` templates at a time, in L2) against the engine's whole-row blocks, on a chunk's
spectrum laid out as the engine's workspace lays it (planes an odd number of cache lines apart), one thread, at the
shapes of that configuration (93-digit chunks, 1-row blocks) and of the default rotation estimator (s = 2000, 64
angles, 491-digit chunks, 4-row blocks). Usage::

    OMP_NUM_THREADS=1 PYTHONPATH=src python benchmarks/probes/perf/template_tiles.py

Writes ``results/bench/template_tiles_probe.json`` (µs per image, best of 5 round-robin rounds after a warm-up call of each; the features of every tiling are checked
equal to the whole-row blocks').
"""
import argparse

import numpy as np
import scipy.fft
from threadpoolctl import threadpool_limits

from orbitkernels.backends import _fused
from orbitkernels.bench import _best_interleaved, _write_probe

SHAPES = {"rotated_mnist_full s=7000 r=100": (100, 93, 7000, 1, (250, 500, 1000, 2000)),
          "default s=2000 r=64": (64, 491, 2000, 4, (250, 500, 1000))}


def _spectrum(nf, n, s, rng):
    lines = -(-n * s * 8 // 64)
    lines += lines % 2 == 0
    C = np.empty((nf, lines * 8), np.complex64)[:, : n * s].reshape(nf, n, s)
    C[...] = rng.standard_normal((nf, n, s)) + 1j * rng.standard_normal((nf, n, s))
    return C


def main():
    res = {"us_per_image": {}}
    for label, (r, n, s, bs, tiles) in SHAPES.items():
        rng = np.random.default_rng(0)
        C = _spectrum(r // 2 + 1, n, s, rng)
        w = np.full(r, 1.0 / r, np.float32)
        off = rng.uniform(0, 2 * np.pi, s).astype(np.float32)
        out = np.empty((n, s), np.float32)

        def run(tile):
            def f():
                for a in range(0, n, bs):
                    for j0 in range(0, s, tile):
                        Cb = np.ascontiguousarray(C[:, a : a + bs, j0 : j0 + tile].transpose(1, 2, 0))
                        S = scipy.fft.irfft(Cb, r, axis=-1, workers=1)
                        out[a : a + bs, j0 : j0 + tile] = _fused.trig_pool(S, w, off[j0 : j0 + tile], "nsr")
                return out.copy()
            return f

        fns = {f"{label} | whole rows (the engine)": run(s),
               **{f"{label} | tiles of {tile} templates": run(tile) for tile in tiles}}
        ref = run(s)()
        for k, fn in fns.items():  # every variant once before the timing: the first one to run paid for fresh pages
            assert np.allclose(fn(), ref, atol=1e-6), k
        times, _ = _best_interleaved(fns, repeat=5)
        res["us_per_image"].update({k: round(t / n * 1e6, 1) for k, t in times.items()})
    _write_probe(res, "benchmarks/probes/perf/template_tiles.py")


if __name__ == "__main__":
    argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter).parse_args()
    with threadpool_limits(1):
        main()
