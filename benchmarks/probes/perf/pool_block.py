"""Probe (issue #16): the direct paths' pooling block (``_engine.POOL_BLOCK_BYTES_DIRECT``) with the fused kernels.

The block was sized for the NumPy poolings, whose temporaries should stay in L2; the fused kernels have
none, so larger blocks were tried (fewer calls). GICDF(50 bins) and LGIKA-RF transforms of 512 MNIST
digits (500 templates x 64 rotations, float32) as a share of a same-shape numpy sgemm, all in
round-robin rounds. Measured (one thread, shared machine, load ~4.6, 2026-11-24): GICDF 0.80 / 0.79 /
0.73 / 0.73 and LGIKA-RF 0.91 / 0.94 / 0.93 / 0.93 at 128 KiB / 512 KiB / 2 MiB / 8 MiB: no block
beats the 128 KiB one for GICDF by more than the noise, so it was kept. Usage::

    OMP_NUM_THREADS=1 PYTHONPATH=src ORBITKERNELS_DATA=<data folder> python benchmarks/probes/perf/pool_block.py
"""

import argparse

from orbitkernels.bench import _best_interleaved, _gemm_peak_gicdf, _gemm_peak_operand, _mnist
from orbitkernels.features import OrbitFourierFeatures, _engine
from orbitkernels.groups import ImageRotation


def main():
    X = _mnist(512)
    g = ImageRotation((28, 28))
    G = _gemm_peak_gicdf().fit(X[:8])
    L = OrbitFourierFeatures(g, gamma=0.02, n_components=500, n_group_samples=64, sampling="iid", dtype="float32",
                             random_state=0).fit(X[:8])
    G.transform(X[:8]), L.transform(X[:8])
    A = X.copy()
    B = _gemm_peak_operand()

    def with_block(est, b):
        def run():
            old = _engine.POOL_BLOCK_BYTES_DIRECT
            _engine.POOL_BLOCK_BYTES_DIRECT = b
            try:
                est.transform(X)
            finally:
                _engine.POOL_BLOCK_BYTES_DIRECT = old
        return run

    fns = {"peak": lambda: A @ B}
    for b in (128 * 1024, 512 * 1024, 2 * 2**20, 8 * 2**20):
        fns[f"gicdf {b >> 10} KiB"] = with_block(G, b)
        fns[f"lgika {b >> 10} KiB"] = with_block(L, b)
    times, _ = _best_interleaved(fns, 3)
    for k, v in times.items():
        print(f"{k}: {times['peak'] / v:.3f} of sgemm")


if __name__ == "__main__":
    argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter).parse_args()
    main()
