"""Findings of an audit of the memory budgets (stop 64), each a test that fails on the code before its fix: what a
transform derives from the fitted state (an image warp's interpolation matrix, Nystroem's L map in float32, the
moved templates) was rebuilt per chunk or per transform outside max_memory_mb, or kept once per precision."""
import tracemalloc

import numpy as np

from orbitkernels.features import OrbitFourierFeatures, OrbitNystroem
from orbitkernels.groups import ImageRotation, ImageScaling, Uniform
from orbitkernels.groups import image as image_module
from orbitkernels.kernels import HaarKernel


def _count_builds(monkeypatch):
    calls = []
    real = image_module.bilinear_weights

    def counting(*args, **kwargs):
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(image_module, "bilinear_weights", counting)
    image_module._WARP_CACHE.clear()
    return calls


def test_a_chunked_data_side_transform_builds_its_warp_once(monkeypatch):
    """The data side of a scaling rebuilt the (r d, d) interpolation matrix for every chunk: on 128 x 128 images
    5.6 s and 50 MB at an 8 MB budget against 0.6 s and 12 MB now (tests measure counts, benchmarks time)."""
    X = np.random.default_rng(0).random((400, 256)).astype(np.float32)
    f = OrbitFourierFeatures(ImageScaling((16, 16), scale=Uniform(0.8, 1.2)), n_components=50, n_group_samples=16,
                             max_memory_mb=1.0, action="data", random_state=0).fit(X[:50])
    assert f.action_ == "data" and f.plan_.chunk_rows(400, 256, 4) < 100  # several chunks
    whole = OrbitFourierFeatures(**{**f.get_params(deep=False), "max_memory_mb": 256.0}).fit(X[:50]).transform(X)
    calls = _count_builds(monkeypatch)
    F = f.transform(X)
    assert len(calls) == 1
    # another chunking changes rounding only (README: at most 32 ulps of the features' scale)
    np.testing.assert_allclose(F, whole, rtol=0, atol=32 * np.finfo(np.float32).eps * np.abs(whole).max())


def test_haar_kernel_blocks_share_one_warp_per_side(monkeypatch):
    """HaarKernel re-warped every block of Y for every block of X, rebuilding the matrix each time: 124 s at 8 MB
    against 11 s at 128 MB for a 200 x 300 Gram of 28 x 28 images (18 s and 7 s now)."""
    rng = np.random.default_rng(1)
    X, Y = rng.random((60, 64)), rng.random((80, 64))
    k = HaarKernel(ImageScaling((8, 8), scale=Uniform(0.9, 1.1)), "rbf", gamma=1 / 64, n_group_samples=8,
                   max_memory_mb=0.05, random_state=0)
    ref = HaarKernel(**{**k.get_params(deep=False), "max_memory_mb": 256.0})
    calls = _count_builds(monkeypatch)
    K = k(X, Y)
    assert len(calls) <= 2  # one set of elements, built once per call side at most
    np.testing.assert_allclose(K, ref(X, Y), rtol=0, atol=1e-14)


def test_float32_nystroem_casts_its_map_once_per_fit_not_per_transform():
    """A float32 transform cast K_ZZ^{-1/2} (s x s) afresh at every call, outside the budget: 46 MB of working
    memory at 16 MB for 3000 landmarks. Here 1000 landmarks: a 4 MB cast against a 2 MB budget."""
    X = np.random.default_rng(2).random((1200, 64)).astype(np.float32)
    f = OrbitNystroem(ImageRotation((8, 8), n_angles=4), n_components=1000, gamma=0.05, max_memory_mb=2.0,
                      fast_path="gemm", random_state=0).fit(X[:1000])
    first = f.transform(X[-200:])  # builds what the plan keeps
    tracemalloc.start()
    try:
        F = f.transform(X[-200:])
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    np.testing.assert_array_equal(F, first)
    assert (peak - F.nbytes) / 2**20 <= 1.5 * 2.0 + 1.0


def test_the_moved_templates_are_kept_in_one_precision_at_a_time():
    """A float64 transform after a float32 one kept both copies of the s r moved templates (1163 MB instead of
    397 MB for 2000 frequencies x 64 rotations of 28 x 28 images)."""
    X = np.random.default_rng(3).random((30, 64))
    f = OrbitFourierFeatures(ImageRotation((8, 8), n_angles=8), n_components=20, fast_path="gemm",
                             random_state=0).fit(X)
    a32 = f.transform(X.astype(np.float32))
    a64 = f.transform(X)
    assert list(f.plan_.strategy._cache) == ["float64"]
    np.testing.assert_array_equal(f.transform(X.astype(np.float32)), a32)  # rebuilt the same
    assert list(f.plan_.strategy._cache) == ["float32"] and a64.dtype == np.float64
