import importlib.util
import logging
import os
from pathlib import Path

import numpy as np
import pytest

os.environ.setdefault("MPLBACKEND", "Agg")
os.environ.setdefault("ORBITKERNELS_QUIET", "1")


@pytest.fixture
def rng():
    return np.random.default_rng(0)


def smooth_images(n, size, rng, *, bumps=3, spread=4, width=10, random_amplitude=True):
    """n square images of sums of Gaussian bumps of width size/width, centred within ±size/spread of the middle.

    Smooth images inside the frame: bilinear interpolation and the borders matter little, so
    interpolated group actions are close to exact on them. Each bump draws its centre, then
    (with ``random_amplitude``) an amplitude in [0.5, 1), from ``rng``.
    """
    u = np.indices((size, size)).reshape(2, -1).T - (size - 1) / 2
    X = np.zeros((n, size * size))
    for i in range(n):
        for _ in range(bumps):
            c = rng.uniform(-size / spread, size / spread, 2)
            a = rng.uniform(0.5, 1) if random_amplitude else 1.0
            X[i] += a * np.exp(-((u - c) ** 2).sum(1) / (2 * (size / width) ** 2))
    return X


def probe_module(rel):
    """A committed probe script (``benchmarks/probes/...``, a path from the repository root) loaded as a module."""
    path = Path(__file__).resolve().parents[1] / rel
    spec = importlib.util.spec_from_file_location(path.stem, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def shared_data_dir():
    """The folder of real data files (CI points ORBITKERNELS_DATA at ../shared/data), or None."""
    env = os.environ.get("ORBITKERNELS_DATA")
    if env and Path(env).is_dir():
        return Path(env)
    here = Path(__file__).resolve().parents[2] / "shared" / "data"
    return here if here.is_dir() else None


def torch_devices():
    """The torch devices the back-end tests run on: the CPU, and CUDA where torch sees a GPU.

    CI has no GPU, so there the CUDA cases are not generated at all (rather than skipped one by one);
    ``test_backends.py::test_cuda_cases_ran`` is the one skip that says they did not run. On a lent GPU
    machine the same tests run on the device: ``pytest tests/test_backends.py tests/test_fastpaths.py``.
    """
    try:
        import torch
    except ImportError:
        return ["cpu"]
    return ["cpu", "cuda"] if torch.cuda.is_available() else ["cpu"]


@pytest.fixture(scope="module")
def client():
    """A real dask.distributed cluster of 2 worker processes on the loopback (one per test module)."""
    distributed = pytest.importorskip("distributed")
    # the dashboard on a free port: None is distributed's 8787, which CI's suites running side by side both asked for
    # ("Port 8787 is already in use", a warning in the suite that came second)
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                                       dashboard_address=":0", silence_logs=logging.ERROR)
    c = distributed.Client(cluster, timeout="60s")
    c.wait_for_workers(2, timeout=60)
    try:
        yield c
    finally:
        c.close(timeout=20)
        cluster.close(timeout=20)


def engine_cases():
    """One small group per engine path, (path, group, extra estimator parameters), and the feature maps
    (class, parameters) that run on each: the back-end and fused-kernel tests sweep the same grid."""
    from orbitkernels.features import GroupCDFFeatures, OrbitFourierFeatures, OrbitNystroem
    from orbitkernels.groups import BlockPermutation, CyclicShift, ImageScaling, Uniform
    from orbitkernels.groups.polar import PolarRotation

    cases = [
        ("gemm", BlockPermutation(4, 5), {}),
        # a scaling: orbit Fourier features would move it to the frequencies by its transpose ("auto")
        ("data", ImageScaling((5, 4), scale=Uniform(0.8, 1.2)), dict(n_group_samples=5, action="data")),
        ("fft", CyclicShift((4, 5)), {}),
        ("polar", PolarRotation((8, 8), n_angles=16), {}),
    ]
    maps = [
        (OrbitFourierFeatures, dict(n_components=12, gamma=0.05)),
        (OrbitFourierFeatures, dict(n_components=12, gamma=0.05, output="cos")),
        (GroupCDFFeatures, dict(n_templates=4, n_bins=5)),
        (OrbitNystroem, dict(n_components=5, kernel="rbf", gamma=0.05)),
    ]
    return cases, maps
