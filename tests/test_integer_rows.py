"""Integer and boolean rows (images of uint8, as MNIST stores them) are converted to float64 a block of rows at a
time inside ``transform``: the same features as the rows converted first, float64 out, and no float64 copy of the
whole input beside ``max_memory_mb`` (20000 rows of 28 x 28 uint8 took 129 MB beyond the output at a 16 MB budget
before, the input converted whole)."""
import tracemalloc

import numpy as np
import pytest
from test_memory import _peak_mb

from orbitkernels.features import GroupCDFFeatures, OrbitFourierFeatures, OrbitNystroem
from orbitkernels.groups import ImageRotation, ImageScaling, LogUniform

MAPS = {
    "gicdf": lambda g: GroupCDFFeatures(g, n_templates=6, n_bins=5, random_state=0),
    "fourier": lambda g: OrbitFourierFeatures(g, n_components=20, gamma=1e-4, n_group_samples=8, random_state=0),
    "nystroem": lambda g: OrbitNystroem(g, n_components=10, gamma=1e-4, n_group_samples=8, random_state=0),
}
GROUPS = {
    "rotation": lambda: ImageRotation((10, 10)),
    "scaling": lambda: ImageScaling((10, 10), LogUniform(0.8, 1.25)),
}


@pytest.mark.parametrize("group", sorted(GROUPS))
@pytest.mark.parametrize("name", sorted(MAPS))
@pytest.mark.parametrize("dtype", ["uint8", "int8", "int16", "int64", "bool"])
def test_integer_rows_give_the_features_of_their_float64_values(name, group, dtype):
    rng = np.random.default_rng(0)
    values = rng.integers(-128, 128, (60, 100)) if dtype == "int8" else rng.integers(0, 256, (60, 100))
    X = (values > 128) if dtype == "bool" else values.astype(dtype)
    est = MAPS[name](GROUPS[group]()).fit(X.astype(np.float64))
    F = est.transform(X)
    assert F.dtype == np.float64
    expected = est.transform(X.astype(np.float64))
    np.testing.assert_allclose(F, expected, rtol=0, atol=32 * np.finfo(np.float64).eps * np.abs(expected).max())


def test_gicdf_several_bin_counts_take_integer_rows_too():
    g = ImageRotation((10, 10))
    X = np.random.default_rng(1).integers(0, 256, (40, 100)).astype(np.uint8)
    est = GroupCDFFeatures(g, n_templates=5, n_bins=4, random_state=0).fit(X.astype(float))
    got = est.transform_multi(X, [3, 6])
    want = est.transform_multi(X.astype(float), [3, 6])
    for n in (3, 6):
        assert got[n].dtype == np.float64
        np.testing.assert_allclose(got[n], want[n], rtol=0, atol=1e-12)


@pytest.mark.parametrize("name", sorted(MAPS))
def test_uint8_images_stay_within_the_budget_without_a_float64_copy(name):
    """8000 rows of 28 x 28 uint8 (6 MB): their float64 copy (50 MB) was made whole, beside a 16 MB budget."""
    g = ImageRotation((28, 28))
    X = np.random.default_rng(2).integers(0, 256, (8000, 784)).astype(np.uint8)
    est = MAPS[name](g).set_params(max_memory_mb=16).fit(X[:200].astype(float))
    est.transform(X[:50])  # the moved templates and the warp matrix, outside the measurement
    peak, out = _peak_mb(est, X)
    assert peak - out <= 16 + 0.5


def test_integer_dask_blocks_are_converted_block_by_block():
    da = pytest.importorskip("dask.array")
    g = ImageRotation((10, 10))
    X = np.random.default_rng(3).integers(0, 256, (50, 100)).astype(np.uint8)
    est = MAPS["fourier"](g).fit(X.astype(float))
    out = est.transform(da.from_array(X, chunks=20)).compute()
    assert out.dtype == np.float64
    np.testing.assert_allclose(out, est.transform(X.astype(float)), rtol=0, atol=1e-12)


def test_haar_kernel_takes_integer_rows_block_by_block():
    """HaarKernel converted integer rows whole too: 6000 rows of 28 x 28 uint8 peaked at 54.7 MB at a 16 MB budget,
    as much as float64 rows now (12.7 MB); the same Gram matrix."""
    from orbitkernels.kernels import HaarKernel

    X = np.random.default_rng(4).integers(0, 256, (6000, 784)).astype(np.uint8)
    k = HaarKernel(ImageRotation((28, 28)), gamma=1e-6, n_group_samples=4, max_memory_mb=16, random_state=0)
    k.fit(X[:100].astype(float))
    k(X[:50], X[:20])  # the elements, outside the measurement
    peaks = {}
    for name, rows in (("uint8", X), ("float64", X.astype(np.float64))):
        tracemalloc.start()
        try:
            K = k(rows, rows[:30])
            peaks[name] = (tracemalloc.get_traced_memory()[1] - K.nbytes) / 2**20
        finally:
            tracemalloc.stop()
    assert peaks["uint8"] <= peaks["float64"] + 1.0, peaks
    small = X[:40]
    np.testing.assert_allclose(k(small, small[:7]), k(small.astype(np.float64), small[:7].astype(np.float64)),
                               rtol=0, atol=1e-13)
