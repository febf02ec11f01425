"""transform never holds N x r x d or N x s x r beyond max_memory_mb (tracemalloc sees NumPy's buffers)."""
import subprocess
import sys
import tracemalloc

import numpy as np
import pytest

from orbitkernels.features import GroupCDFFeatures, OrbitFourierFeatures
from orbitkernels.groups import CyclicShift, ImageRotation, ImageScaling, Uniform
from orbitkernels.groups.polar import PolarRotation


def _peak_mb(f, X):
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        F = f.transform(X)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    return peak / 2**20, F.nbytes / 2**20


CASES = [
    ("gemm", lambda: OrbitFourierFeatures(ImageRotation((16, 16)), n_components=100, n_group_samples=32,
                                          fast_path="gemm")),
    ("data", lambda: OrbitFourierFeatures(ImageScaling((16, 16), scale=Uniform(0.9, 1.2)), n_components=100,
                                          n_group_samples=32)),
    ("fft", lambda: GroupCDFFeatures(CyclicShift((16, 16)), n_templates=40, n_bins=10)),
    ("polar", lambda: OrbitFourierFeatures(PolarRotation((16, 16), n_angles=32), n_components=100)),
]


@pytest.mark.parametrize("path, make", CASES, ids=[c[0] for c in CASES])
def test_transform_peak_memory_is_bounded_by_the_budget(path, make, rng):
    budget = 4.0
    X = rng.random((12000, 256)).astype(np.float32)
    f = make().set_params(max_memory_mb=budget, random_state=0).fit(X[:50])
    assert f.plan_.path == path
    f.transform(X[:10])  # per-precision template caches are built once, outside the measurement
    peaks = []
    assert f.plan_.chunk_rows(3000, 256, 4) < 3000  # both sizes below need several chunks
    for n in (3000, 12000):
        peak, out = _peak_mb(f, X[:n])
        # input-sized copies (GICDF's unit-norm scaling of X) are allowed: they are O(N d), not O(N r d)
        out += X[:n].nbytes / 2**20 if isinstance(f, GroupCDFFeatures) else 0.0
        peaks.append(peak - out)
        # what a naive transform would hold: N x r x d copies or the N x s x r similarities
        naive = n * max(f.plan_.n_elements * 256, f.plan_.n_templates * f.plan_.n_elements) * 4 / 2**20
        assert peak - out <= 1.5 * budget + 1.0, (n, peak, out)
        assert naive > 4 * budget
    assert peaks[1] <= peaks[0] * 1.3 + 0.5  # flat in N


def test_torch_is_imported_only_when_asked():
    code = ("import sys, numpy as np; from orbitkernels.features import OrbitFourierFeatures; "
            "from orbitkernels.groups import CyclicShift; "
            "OrbitFourierFeatures(CyclicShift(8), n_components=4).fit(np.ones((3, 8))).transform(np.ones((3, 8))); "
            "print('torch' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == "False"
