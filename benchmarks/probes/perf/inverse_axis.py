"""Probe (reverted variant of issue #16): the polar / 1-D cyclic paths' inverse FFTs along the spectrum's first axis.

The FFT paths keep a chunk's correlations as their spectrum C (nf, rows, s) and invert it block by block, each block
transposed first to (rows, s, nf) so that the inverse FFTs run along the contiguous last axis
(``np.ascontiguousarray``: 44 of 263 ms of the default rotation estimator on 512 digits, cProfile). The variant
inverts along the first axis as the block lies (pocketfft transforms strided columns) and hands the pooling the
"rns" layout, which both poolings take; same bits. The default estimator's shape (s = 2000 templates, 64 angles,
complex64, 99 rows per chunk), round-robin rounds (best of each), one thread. Usage::

    OMP_NUM_THREADS=1 python benchmarks/probes/perf/inverse_axis.py

Writes ``results/bench/inverse_axis_probe.json``. Measured (2026-11-24, AVX-512 core, one other process on the
second core): on a contiguous block the variant wins (0.40 against 0.44 ms per image at 4 rows, 0.28 against
0.37 at 16), but a block of the chunk's spectrum, the engine's case, has its frequencies a chunk apart, and there it
does not (0.43 against 0.42). In the estimator (``orbitkernels bench --name rotations_rf``, two runs) the default
fell from 2218 to 2157 / 2153 images/s (c2r 144 ms against 74 + 44 for the transposition and c2r, 512 digits):
reverted.
"""

import argparse
import os
import time

import numpy as np
import scipy.fft
from threadpoolctl import threadpool_limits

from orbitkernels.utils.io import atomic_write_json

OUT = "results/bench/inverse_axis_probe.json"


def main(A=64, s=2000, chunk=99, rounds=5):
    rng = np.random.default_rng(0)
    C_chunk = (rng.normal(size=(A // 2 + 1, chunk, s)) + 1j * rng.normal(size=(A // 2 + 1, chunk, s))).astype(np.complex64)
    res = {}
    for label, rows, whole in (("a contiguous block", 4, True), ("a contiguous block", 16, True),
                               ("a block of the chunk's spectrum (the engine's case)", 4, False)):
        def blocks(f):
            if whole:
                C = np.ascontiguousarray(C_chunk[:, :rows])
                return lambda: [f(C) for _ in range(chunk // rows)]
            return lambda: [f(C_chunk[:, b : b + rows]) for b in range(0, chunk, rows)]

        fns = {"transposed, last axis (before)": blocks(lambda C: scipy.fft.irfftn(
                   np.ascontiguousarray(C.transpose(1, 2, 0)), s=(A,), axes=(2,), workers=1)),
               "first axis, untransposed": blocks(lambda C: scipy.fft.irfftn(C, s=(A,), axes=(0,), workers=1))}
        best = {k: np.inf for k in fns}
        for _ in range(rounds):
            for k, f in fns.items():
                t0 = time.perf_counter()
                f()
                best[k] = min(best[k], time.perf_counter() - t0)
        n_images = (chunk // rows) * rows if whole else chunk
        key = f"{label}, {rows} rows"
        res[key] = {k: round(1e3 * v / n_images, 3) for k, v in best.items()}
        print(key, res[key])
    C = C_chunk[:, :4]
    np.testing.assert_array_equal(scipy.fft.irfftn(np.ascontiguousarray(C.transpose(1, 2, 0)), s=(A,), axes=(2,)),
                                  scipy.fft.irfftn(C, s=(A,), axes=(0,)).transpose(1, 2, 0))
    atomic_write_json(OUT, {"ms_per_image": res, "same_bits": True, "shape": {"angles": A, "templates": s,
                                                                               "chunk_rows": chunk},
                            "rounds": rounds, "threads": 1, "load_avg_1min": round(os.getloadavg()[0], 2),
                            "script": "benchmarks/probes/perf/inverse_axis.py"})


if __name__ == "__main__":
    argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter).parse_args()
    with threadpool_limits(1):
        main()
