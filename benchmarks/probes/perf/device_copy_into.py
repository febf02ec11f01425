"""Probe: the features' copy from a torch device into the engine's output rows, straight or through a host temporary.

On a device the engine pools each chunk whole and the pooled block leaves the device as the features: about 4,000
numbers per MNIST image for the default rotation estimator, 50,500 for GICDF(50 bins, 500 templates). The block was
copied to a fresh host tensor (``TorchBackend.to_numpy``) and then assigned to the output rows: a second allocation as
large as the features, its pages touched, and a second copy on the host. ``TorchBackend.to_numpy_into`` copies the
block into the output rows' memory. Both ways run here on the same fitted estimators, alternating (the former by
putting the old copy back in ``to_numpy_into``'s place), at MNIST size (d = 784, ``--n`` random images, float32),
for the three estimators of ``benchmarks/gpu_check.py``'s throughput part; each way's best of ``--repeat``
transforms, the device synchronised before the clock starts (the transform's own copy of the features to the host
ends it). Usage::

    python benchmarks/probes/perf/device_copy_into.py --device cuda [--n 8192] [--repeat 7] [--out F]

Writes ``--out`` (default ``results/bench/device_copy_into_probe.json``).
"""
import argparse
import json
import os
import platform
import time
from pathlib import Path

import numpy as np

from orbitkernels.bench import gpu_throughput_estimators


def through_host_temporary(self, a, out):
    """The copy as it was: a host tensor of the block, then an assignment into the output rows."""
    out[...] = self.to_numpy(a)


def main(device, n, repeat, out):
    import torch

    from orbitkernels.backends.torch import TorchBackend

    X = np.random.default_rng(0).random((n, 784), dtype=np.float32)
    straight = TorchBackend.to_numpy_into
    res = {"protocol": __doc__.strip().splitlines()[0], "script": "benchmarks/probes/perf/device_copy_into.py",
           "device": torch.cuda.get_device_name(device) if str(device).startswith("cuda") else str(device),
           "torch": torch.__version__, "cpu_count": os.cpu_count(), "machine": platform.machine(), "n_images": n,
           "repeat": repeat, "dtype": "float32", "estimators": []}
    for name, make in gpu_throughput_estimators().items():
        f = make(random_state=0, dtype="float32", max_memory_mb=4096, backend="torch", device=device).fit(X[:8])
        f.transform(X[:64])  # the per-precision caches, outside the timing
        best = {"straight": np.inf, "host_temporary": np.inf}
        feats = {}
        try:
            for _ in range(repeat):
                for way, copy in (("straight", straight), ("host_temporary", through_host_temporary)):
                    TorchBackend.to_numpy_into = copy
                    if str(device).startswith("cuda"):
                        torch.cuda.synchronize()
                    t = time.perf_counter()
                    feats[way] = f.transform(X)
                    best[way] = min(best[way], time.perf_counter() - t)
        finally:
            TorchBackend.to_numpy_into = straight
        row = {"estimator": name, "path": f.plan_.path, "n_features": int(feats["straight"].shape[1]),
               "straight_s": best["straight"], "host_temporary_s": best["host_temporary"],
               "straight_images_per_s": n / best["straight"], "host_temporary_images_per_s": n / best["host_temporary"],
               "speedup": best["host_temporary"] / best["straight"],
               "same_features": bool(np.array_equal(feats["straight"], feats["host_temporary"]))}
        print(json.dumps(row), flush=True)
        res["estimators"].append(row)
    path = Path(out)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(res, indent=1) + "\n")


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--n", type=int, default=8192)
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--out", default="results/bench/device_copy_into_probe.json")
    a = ap.parse_args()
    main(a.device, a.n, a.repeat, a.out)
