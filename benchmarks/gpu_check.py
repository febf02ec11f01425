"""The PyTorch back-end on a GPU: the same features as NumPy, and how fast.

    python benchmarks/gpu_check.py [--out results/bench/gpu.json] [--device cuda]

Needs torch with a CUDA device (run on a lent GPU machine; CI never runs it). Two parts:

1. **Agreement**: every feature map (GICDF, orbit random Fourier, orbit Nyström) on every
   engine path (GEMM on templates, data side, cyclic FFT, polar FFT) fitted with the same
   ``random_state`` on NumPy and on ``backend="torch", device=<device>``; the largest absolute
   difference of the features in float64 and float32 (GICDF: the share of entries that differ,
   since a rounding difference may move a projection across a threshold).
2. **Throughput** at MNIST size (d = 784): images per second of ``transform`` on NumPy (all the
   machine's cores) and on the GPU for the default rotation estimator
   (``OrbitFourierFeatures(ImageRotation((28, 28)), n_components=2000)``: 64 rotations, polar
   path), the bilinear-grid GEMM path (``ImageRotation((28, 28), n_angles=64)``) and GICDF(50
   bins, 500 templates) on rotations × translations (64 samples), float32, best of 3 (the GPU
   synchronised by the copy of the features back to the host, which is included).
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import time
from pathlib import Path

import numpy as np

from orbitkernels import __version__
from orbitkernels.features import GroupCDFFeatures, OrbitFourierFeatures, OrbitNystroem
from orbitkernels.groups import (BlockPermutation, CyclicShift, ImageRotation, ImageScaling, ImageTranslation,
                                 PolarRotation, Uniform)
from orbitkernels.utils.io import atomic_write_json

CASES = {
    "gemm": (BlockPermutation(4, 5), {}),
    "data": (ImageScaling((5, 4), scale=Uniform(0.8, 1.2)), dict(n_group_samples=5)),
    "fft": (CyclicShift((4, 5)), {}),
    "polar": (PolarRotation((8, 8), n_angles=16), {}),
}
MAPS = {
    "fourier": (OrbitFourierFeatures, dict(n_components=12, gamma=0.05)),
    "gicdf": (GroupCDFFeatures, dict(n_templates=4, n_bins=5)),
    "nystroem": (OrbitNystroem, dict(n_components=5, kernel="rbf", gamma=0.05)),
}


def agreement(device):
    rng = np.random.default_rng(0)
    rows = []
    for path, (group, extra) in CASES.items():
        X = rng.normal(size=(64, group.n_features))
        for name, (cls, kw) in MAPS.items():
            if name == "gicdf" and path == "data":
                continue  # GICDF is defined on transformed templates; its data side needs a symmetric q
            for dtype in ("float64", "float32"):
                a = cls(group, random_state=0, dtype=dtype, **extra, **kw).fit(X)
                b = cls(group, random_state=0, dtype=dtype, backend="torch", device=device, **extra, **kw).fit(X)
                Fa, Fb = a.transform(X), b.transform(X)
                row = dict(map=name, path=path, dtype=dtype, engine_path=b.plan_.path,
                           max_abs_diff=float(np.abs(Fa - Fb).max()), share_differing=float(np.mean(Fa != Fb)))
                print(json.dumps(row), flush=True)
                rows.append(row)
    return rows


def _rate(f, X, repeat=3):
    f.transform(X[:64])  # builds the per-precision caches (templates, spectra) outside the timing
    best = np.inf
    for _ in range(repeat):
        t = time.perf_counter()
        f.transform(X)
        best = min(best, time.perf_counter() - t)
    return len(X) / best


def throughput(device, n):
    X = np.random.default_rng(0).random((n, 784), dtype=np.float32)
    local = ImageRotation((28, 28), angle=Uniform(-np.pi / 9, np.pi / 9)) * ImageTranslation((28, 28), Uniform(-3, 3))
    makers = {
        "default ImageRotation((28,28)), s=2000, r=64 (polar)":
            lambda **kw: OrbitFourierFeatures(ImageRotation((28, 28)), gamma=0.02, n_components=2000, **kw),
        "ImageRotation((28,28), n_angles=64), s=2000 (GEMM)":
            lambda **kw: OrbitFourierFeatures(ImageRotation((28, 28), n_angles=64), gamma=0.02, n_components=2000,
                                              **kw),
        "GICDF(50 bins, 500 templates), rotation x translation, 64 samples (GEMM)":
            lambda **kw: GroupCDFFeatures(local, n_templates=500, n_bins=50, n_group_samples=64, **kw),
    }
    rows = []
    for name, make in makers.items():
        cpu = _rate(make(random_state=0, dtype="float32", max_memory_mb=1024).fit(X[:8]), X)
        gpu = _rate(make(random_state=0, dtype="float32", max_memory_mb=4096, backend="torch",
                         device=device).fit(X[:8]), X)
        row = dict(estimator=name, n_images=n, numpy_images_per_s=cpu, torch_gpu_images_per_s=gpu,
                   gpu_over_numpy=gpu / cpu)
        print(json.dumps(row), flush=True)
        rows.append(row)
    return rows


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="results/bench/gpu.json")
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--n", type=int, default=8192, help="images for the throughput part")
    args = ap.parse_args(argv)
    import torch

    if args.device.startswith("cuda") and not torch.cuda.is_available():
        raise SystemExit("no CUDA device: this check runs on a GPU machine")
    from threadpoolctl import threadpool_info

    t0 = time.time()
    res = dict(version=__version__, command="python benchmarks/gpu_check.py", torch=torch.__version__,
               gpu=torch.cuda.get_device_name(0) if args.device.startswith("cuda") else None,
               cpu_count=os.cpu_count(), machine=platform.machine(),
               numpy_blas_threads=max((p.get("num_threads", 1) for p in threadpool_info()), default=1),
               agreement=agreement(args.device), throughput=throughput(args.device, args.n))
    res["wall_seconds"] = time.time() - t0
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    atomic_write_json(args.out, res)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
