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
   synchronised by the copy of the features back to the host, which is included); GICDF also with
   the scatter-add pooling (the CPU's) in place of the sorted one, in the same run.
3. **Pooling**: the torch back-end's two CDF poolings (Mroueh Eq. 3) alone on device blocks of
   projections: sorting each row and one binary search per threshold (the default on a device)
   against a scatter-add of the weights into the bins (the default on the CPU), r = 64 and 441
   group elements, equal and unequal weights; the same numbers, and the time of each.
4. **Rotated MNIST, full configuration** (``bench.bench_rotated_mnist_full``, issue 16's "end to end
   in 2 minutes"), its features on the device, when MNIST is in ``ORBITKERNELS_DATA``.

``--parts`` runs some of them (default: all).
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
from orbitkernels.bench import gpu_throughput_estimators
from orbitkernels.features import GroupCDFFeatures, OrbitFourierFeatures, OrbitNystroem
from orbitkernels.groups import BlockPermutation, CyclicShift, ImageScaling, PolarRotation, Uniform
from orbitkernels.utils.io import atomic_write_json

CASES = {
    "gemm": (BlockPermutation(4, 5), {}),
    "data": (ImageScaling((5, 4), scale=Uniform(0.8, 1.2)), dict(n_group_samples=5, action="data")),
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


def _device_time(fn, device, repeat=5):
    """Best of ``repeat`` wall times of ``fn()``, the device synchronised before the clock stops."""
    import torch

    sync = torch.cuda.synchronize if str(device).startswith("cuda") else (lambda: None)
    fn()
    sync()
    best = np.inf
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        sync()
        best = min(best, time.perf_counter() - t)
    return best


def pooling(device, shapes=((2048, 64), (256, 441))):
    """The sorted pooling against the scatter-add one on device blocks (rows, 500 templates, r), float32."""
    from orbitkernels.backends import get_backend

    bk = get_backend("torch", device=device)
    rng = np.random.default_rng(0)
    rows = []
    for n_rows, r in shapes:
        # projections of unit rows on Gaussian templates in d = 784: a narrow band around 0 (std ~ 1/sqrt(d))
        S = bk.asarray(rng.normal(scale=784 ** -0.5, size=(n_rows, 500, r)).astype(np.float32))
        for weights in ("equal", "unequal"):
            w = np.full(r, 1 / r) if weights == "equal" else rng.uniform(0.5, 1.5, r) / r
            a = bk._cdf_pool_sorted(S, w, 50, 0.2, 0.1)
            b = bk._cdf_pool_scatter(S, w, 50, 0.2, 0.1)
            t_sorted = _device_time(lambda: bk._cdf_pool_sorted(S, w, 50, 0.2, 0.1), device)
            t_scatter = _device_time(lambda: bk._cdf_pool_scatter(S, w, 50, 0.2, 0.1), device)
            n_val = n_rows * 500 * r
            row = dict(shape=[n_rows, 500, r], weights=weights, n_bins=50, sorted_s=t_sorted, scatter_s=t_scatter,
                       sorted_gvalues_per_s=n_val / t_sorted / 1e9, scatter_gvalues_per_s=n_val / t_scatter / 1e9,
                       scatter_over_sorted=t_scatter / t_sorted,
                       max_abs_diff=float((a - b).abs().max()), share_differing=float((a != b).float().mean()))
            print(json.dumps(row), flush=True)
            rows.append(row)
    return rows


def throughput(device, n):
    X = np.random.default_rng(0).random((n, 784), dtype=np.float32)
    makers = gpu_throughput_estimators()
    rows = []
    for name, make in makers.items():
        cpu = _rate(make(random_state=0, dtype="float32", max_memory_mb=1024).fit(X[:8]), X)
        gpu = _rate(make(random_state=0, dtype="float32", max_memory_mb=4096, backend="torch",
                         device=device).fit(X[:8]), X)
        row = dict(estimator=name, n_images=n, numpy_images_per_s=cpu, torch_gpu_images_per_s=gpu,
                   gpu_over_numpy=gpu / cpu)
        if name.startswith("GICDF"):
            # the same estimator with the CPU's pooling (scatter-add) on the device, in the same run
            from orbitkernels.backends.torch import TorchBackend

            sorted_pool = TorchBackend.cdf_pool
            TorchBackend.cdf_pool = TorchBackend._cdf_pool_scatter
            try:
                before = _rate(make(random_state=0, dtype="float32", max_memory_mb=4096, backend="torch",
                                    device=device).fit(X[:8]), X)
            finally:
                TorchBackend.cdf_pool = sorted_pool
            row.update(torch_gpu_scatter_pooling_images_per_s=before, sorted_over_scatter=gpu / before)
        print(json.dumps(row), flush=True)
        rows.append(row)
    return rows


def rotated_mnist_full(device):
    """bench.bench_rotated_mnist_full with its features on the device; None without MNIST."""
    from orbitkernels.bench import bench_rotated_mnist_full
    from orbitkernels.datasets import DatasetNotFoundError, load_mnist

    try:
        load_mnist(download=False)
    except DatasetNotFoundError as exc:
        print(f"rotated_mnist_full skipped: {exc}", flush=True)
        return None
    t = time.perf_counter()
    res = bench_rotated_mnist_full(backend="torch", device=device)
    res["wall_s_with_data"] = time.perf_counter() - t
    print(json.dumps(res["measured"]), flush=True)
    return res


PARTS = ["agreement", "throughput", "pooling", "rotated_mnist_full"]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default="results/bench/gpu.json")
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--n", type=int, default=8192, help="images for the throughput part")
    ap.add_argument("--parts", nargs="+", default=PARTS, choices=PARTS)
    args = ap.parse_args(argv)
    import torch

    if args.device.startswith("cuda") and not torch.cuda.is_available():
        raise SystemExit("no CUDA device: this check runs on a GPU machine")
    from threadpoolctl import threadpool_info

    t0 = time.time()
    command = "python benchmarks/gpu_check.py" + ("" if args.parts == PARTS else " --parts " + " ".join(args.parts))
    res = dict(version=__version__, command=command, torch=torch.__version__,
               gpu=torch.cuda.get_device_name(0) if args.device.startswith("cuda") else None,
               cpu_count=os.cpu_count(), machine=platform.machine(),
               numpy_blas_threads=max((p.get("num_threads", 1) for p in threadpool_info()), default=1))
    parts = {"pooling": lambda: pooling(args.device), "agreement": lambda: agreement(args.device),
             "throughput": lambda: throughput(args.device, args.n),
             "rotated_mnist_full": lambda: rotated_mnist_full(args.device)}
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    for name in args.parts:  # each part written as it ends: a run stopped later keeps it
        t = time.time()
        res[name] = parts[name]()
        print(f"{name}: {time.time() - t:.1f} s", flush=True)
        atomic_write_json(args.out, dict(res, wall_seconds=time.time() - t0))
    res["wall_seconds"] = time.time() - t0
    atomic_write_json(args.out, res)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
