"""Probe: the torch back-end on the CPU against the NumPy back-end, for the GPU check's three estimators.

``backend="torch"`` runs on the CPU when no ``device`` is given. The NumPy back-end on the CPU has what the torch one
lacks there: the fused numba poolings (when numba is installed), the FFT paths' per-frequency products split among
the pooling threads, the cache-sized pooling blocks. This measures what a user who picks torch on a machine without
a GPU gets: each estimator's transform of ``--n`` random MNIST-size float32 images (d = 784) on both back-ends,
interleaved (best of ``--repeat`` rounds), with all of the machine's cores, and the largest difference of the
features. Usage::

    python benchmarks/probes/perf/torch_cpu.py [--n 2048] [--repeat 5]

Writes ``results/bench/torch_cpu_probe.json``.
"""
import argparse
import os

import numpy as np

from orbitkernels.backends import numba_active
from orbitkernels.bench import _best_interleaved, _write_probe, gpu_throughput_estimators


def main(n, repeat):
    import torch

    X = np.random.default_rng(0).random((n, 784), dtype=np.float32)
    rows = []
    for name, make in gpu_throughput_estimators().items():
        est = {bk: make(random_state=0, dtype="float32", backend=bk).fit(X[:8]) for bk in ("numpy", "torch")}
        for f in est.values():
            f.transform(X[:64])  # the per-precision caches, outside the timing
        best, F = _best_interleaved({bk: (lambda f=f: f.transform(X)) for bk, f in est.items()}, repeat)
        row = {"estimator": name, "path": est["numpy"].plan_.path,
               "numpy_images_per_s": n / best["numpy"], "torch_cpu_images_per_s": n / best["torch"],
               "torch_over_numpy": best["numpy"] / best["torch"],
               "max_abs_diff": float(np.abs(F["numpy"] - F["torch"]).max())}
        print(row, flush=True)
        rows.append(row)
    res = {"protocol": __doc__.strip().splitlines()[0], "n_images": n, "repeat": repeat, "dtype": "float32",
           "cpu_count": os.cpu_count(), "torch": torch.__version__, "torch_threads": torch.get_num_threads(),
           "numba": numba_active(), "estimators": rows}
    return _write_probe(res, "benchmarks/probes/perf/torch_cpu.py", threads=os.cpu_count())


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=2048)
    ap.add_argument("--repeat", type=int, default=5)
    a = ap.parse_args()
    main(a.n, a.repeat)
