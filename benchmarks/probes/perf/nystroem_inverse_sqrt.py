"""Probe: OrbitNystroem's K_ZZ^{-1/2}, by NumPy's SVD on the CPU and by the torch back-end's eigendecomposition.

fit forms L = U S^{-1/2} V^T from the SVD of the landmarks' kernel matrix K_ZZ (s x s, float64), scikit-learn's
``Nystroem`` recipe; on ``backend="torch"`` it forms the same matrix from the symmetric eigendecomposition on the
device (``OrbitNystroem._inverse_sqrt``). Raj et al. (2017, §4.1) use s = 10k landmarks, where this one cubic step
is fit's cost. For s in ``--sizes`` this times both on a Gaussian K_ZZ of s random points (d = 529, QM7's Coulomb
matrices; γ = 1/d: well conditioned, so that the two L can be compared entry by entry) with all of the machine's
cores for NumPy, and reports the largest difference relative to L's largest entry. Usage::

    python benchmarks/probes/perf/nystroem_inverse_sqrt.py --device cuda [--sizes 2000 5700 10000] [--out F]

Writes ``--out`` (default ``results/bench/nystroem_inverse_sqrt_probe.json``) after each size.
"""
import argparse
import json
import os
import platform
import time
from pathlib import Path

import numpy as np
from sklearn.metrics.pairwise import rbf_kernel

from orbitkernels.features import OrbitNystroem


def main(sizes, device, out):
    import torch

    res = {"protocol": __doc__.strip().splitlines()[0], "script": "benchmarks/probes/perf/nystroem_inverse_sqrt.py",
           "device": torch.cuda.get_device_name(0) if device == "cuda" else "cpu", "torch": torch.__version__,
           "numpy": np.__version__, "cpu_count": os.cpu_count(), "machine": platform.machine(), "sizes": {}}
    rng = np.random.default_rng(0)
    a = OrbitNystroem(backend="numpy")
    b = OrbitNystroem(backend="torch", device=device)
    b._inverse_sqrt(np.eye(8))  # the device's solver library loads once, outside the timings
    for s in sizes:
        Z = rng.normal(size=(s, 529))
        K = rbf_kernel(Z, gamma=1.0 / 529)
        t0 = time.perf_counter()
        La, Sa = a._inverse_sqrt(K)
        t1 = time.perf_counter()
        Lb, Sb = b._inverse_sqrt(K)  # returns host arrays: the copy waits for the device
        t2 = time.perf_counter()
        res["sizes"][str(s)] = {"numpy_svd_s": round(t1 - t0, 3), "torch_eigh_s": round(t2 - t1, 3),
                                "ratio": round((t1 - t0) / (t2 - t1), 2),
                                "max_rel_diff": float(np.abs(La - Lb).max() / np.abs(La).max()),
                                "singular_values_rel_diff": float(np.abs(Sa - Sb).max() / Sa.max())}
        print(s, res["sizes"][str(s)], flush=True)
        Path(out).parent.mkdir(parents=True, exist_ok=True)
        Path(out).write_text(json.dumps(res, indent=1) + "\n")


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", type=int, nargs="+", default=[2000, 5700, 10000])
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--out", default="results/bench/nystroem_inverse_sqrt_probe.json")
    a = ap.parse_args()
    main(a.sizes, a.device, a.out)
