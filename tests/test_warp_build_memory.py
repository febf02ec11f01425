"""An image warp's sparse interpolation matrix (the data side of a scaling, HaarKernel over image groups) is built a
block of group elements at a time: the same matrix to the bit as built at once, without the ~200 bytes per element
and pixel of temporaries that building it at once took (210 MB beside a 28 MB matrix for 64 scalings of 128 x 128
float32 images)."""
import tracemalloc

import numpy as np
import pytest
import scipy.sparse as sp

from orbitkernels.groups import ImageRotation, ImageScaling, ImageTranslation, LogUniform, Uniform
from orbitkernels.groups import image as image_module


def _at_once(shape, A, b, normalize, dtype):
    """The construction before: every element's neighbours and weights at once, one COO to CSR conversion."""
    hw = shape[:2]
    d_pix, r = hw[0] * hw[1], len(A)
    idx, w = image_module.bilinear_weights(image_module._source_coords(A, b, hw), hw)
    if normalize:
        w = w * np.abs(np.linalg.det(A))[:, None, None] ** -0.5
    rows = np.repeat(np.arange(r * d_pix), 4)
    M = sp.csr_matrix((w.ravel().astype(dtype), (rows, idx.ravel())), shape=(r * d_pix, d_pix))
    M.eliminate_zeros()
    return M


def _elements(kind, side, r):
    rng = np.random.default_rng(0)
    if kind == "scaling":
        group = ImageScaling((side, side), LogUniform(0.5, 2.0))  # shrinking maps sample outside the frame
        E = group.sample(r, rng)
    elif kind == "rotation":
        group = ImageRotation((side, side))
        E = group.sample(r, rng)
        E[:4, 0] = [0.0, np.pi / 2, np.pi, -np.pi / 2]  # grid-aligned: one neighbour of four
    else:
        group = ImageTranslation((side, side), Uniform(-3.0, 3.0))
        E = np.round(group.sample(r, rng))  # whole pixels
    return group.affine(E)


@pytest.mark.parametrize("kind, side, r", [("scaling", 40, 300), ("rotation", 28, 100), ("translation", 16, 9)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("normalize", [True, False])
def test_the_matrix_built_in_blocks_is_the_matrix_built_at_once(kind, side, r, dtype, normalize, monkeypatch):
    monkeypatch.setattr(image_module, "_WARP_BUILD_BYTES", 2**20)  # several blocks at these sizes
    A, b = _elements(kind, side, r)
    M = image_module._build_warp_matrix((side, side), A, b, normalize, dtype)
    R = _at_once((side, side), A, b, normalize, dtype)
    assert M.shape == R.shape and M.dtype == R.dtype
    np.testing.assert_array_equal(M.indptr, R.indptr)
    np.testing.assert_array_equal(M.indices, R.indices)
    np.testing.assert_array_equal(M.data, R.data)
    X = np.random.default_rng(1).random((5, side * side)).astype(dtype)
    np.testing.assert_array_equal(M @ X.T, R @ X.T)  # and so every warp made with it


def test_building_the_matrix_holds_little_beside_it():
    A, b = _elements("scaling", 128, 64)
    image_module._WARP_CACHE.clear()
    tracemalloc.start()
    try:
        M = image_module._warp_matrix((128, 128), A, b, True, np.float32)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
        image_module._WARP_CACHE.clear()
    size = M.data.nbytes + M.indices.nbytes + M.indptr.nbytes
    # arrays sized for four neighbours of every pixel (trimmed in place), one block's temporaries: measured 43 MB
    # for a 28 MB matrix (built at once: 201 MB)
    upper = 4 * 64 * 128 * 128 * (4 + 4) + M.indptr.nbytes
    assert peak <= upper + 2 * image_module._WARP_BUILD_BYTES, (peak / 2**20, size / 2**20)


def test_a_matrix_over_a_quarter_of_the_cache_is_kept(monkeypatch):
    """It is alive through every chunk's warp anyway; rebuilt for every chunk (a 28 MB matrix, 64 scalings of
    128 x 128 images), it made a 16 MB budget's transform 49 s against 2.2 s kept
    (``benchmarks/probes/perf/budget_fixed_costs.py --case rf_cold``)."""
    A, b = _elements("scaling", 40, 50)
    image_module._WARP_CACHE.clear()
    M = image_module._build_warp_matrix((40, 40), A, b, True, np.float32)
    size = M.data.nbytes + M.indices.nbytes + M.indptr.nbytes
    monkeypatch.setattr(image_module, "_WARP_CACHE_BYTES", 2 * size)
    try:
        first = image_module._warp_matrix((40, 40), A, b, True, np.float32)
        assert image_module._warp_matrix((40, 40), A, b, True, np.float32) is first  # kept, not rebuilt
        A2, b2 = _elements("rotation", 40, 60)  # a larger one evicts it: the cache stays within its bytes
        image_module._warp_matrix((40, 40), A2, b2, True, np.float32)
        held = sum(m.data.nbytes + m.indices.nbytes + m.indptr.nbytes for m in image_module._WARP_CACHE.values())
        assert held <= 2 * size
    finally:
        image_module._WARP_CACHE.clear()


@pytest.mark.parametrize("dtype, most", [(np.float32, 36), (np.float64, 52)])
def test_the_matrix_takes_what_the_readme_says(dtype, most):
    """README, "Memory": at most 36 / 52 bytes per element and pixel (four neighbours of every pixel, an index each,
    and a row pointer), less where pixels leave the frame: 33 / 47 MB for 64 scalings by 0.8-1.2 of 128 x 128
    images."""
    group = ImageScaling((128, 128), Uniform(0.8, 1.2))
    A, b = group.affine(group.sample(64, np.random.default_rng(0)))
    M = image_module._build_warp_matrix((128, 128), A, b, True, dtype)
    size = M.data.nbytes + M.indices.nbytes + M.indptr.nbytes
    assert size <= most * 64 * 128 * 128
    assert round(size / 2**20) == (33 if dtype == np.float32 else 47)
