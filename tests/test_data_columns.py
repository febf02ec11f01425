"""The data side over image warps takes the moved rows as columns (``Group._act_columns``): the same moved rows as
``act`` / ``act_inverse`` bit for bit, the same features (Raj et al. 2017's Eq. 7 and the Nyström map over the moved
rows) to rounding, as accurate against float64, and without the two copies of the moved rows the rows' layout took
(``benchmarks/probes/perf/data_columns.py``)."""
import contextlib
import tracemalloc

import numpy as np
import pytest

from orbitkernels.features import OrbitFourierFeatures, OrbitNystroem
from orbitkernels.groups import image
from orbitkernels.groups import (ImageRotation, ImageScaling, ImageTranslation, LogUniform, Normal, TimeWarp,
                                 Uniform)

GROUPS = {
    "scaling": lambda: ImageScaling((12, 10), LogUniform(0.6, 1.6)),
    "scaling-rgb": lambda: ImageScaling((8, 6, 3), LogUniform(0.7, 1.4)),
    "rotation": lambda: ImageRotation((9, 9)),
    "translation-rgb": lambda: ImageTranslation((7, 7, 2), Uniform(-2.0, 2.0)),
    "scaling-x-shift-x-rotation": lambda: (ImageScaling((12, 12), LogUniform(0.7, 1.4))
                                           * ImageTranslation((12, 12), Normal(1.0)) * ImageRotation((12, 12))),
}


@pytest.mark.parametrize("name", sorted(GROUPS))
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("inverse", [False, True])
def test_columns_are_the_moved_rows_bit_for_bit(name, dtype, inverse):
    g = GROUPS[name]()
    assert g._makes_columns
    rng = np.random.default_rng(1)
    X = rng.normal(size=(7, g.n_features)).astype(dtype)
    E = g.sample(5, rng)
    Z = g._act_columns(X, E, inverse)
    Y = (g.act_inverse if inverse else g.act)(X, E)
    assert Z.shape == (5, g.n_features, 7) and Z.dtype == dtype
    assert np.array_equal(Z, Y.transpose(0, 2, 1))
    fused = g.factors[0].fuse_product(g) if hasattr(g, "factors") else g
    A, b = fused.inverse_affine(E) if inverse else fused.affine(E)
    assert np.array_equal(image._warp_columns(X, fused.image_shape, A, b, True),
                          image._warp(X, fused.image_shape, A, b, True).transpose(0, 2, 1))


def test_groups_that_make_rows_say_so():
    assert not TimeWarp(40, LogUniform(0.8, 1.25))._makes_columns
    # a product that is no single warp (a time warp beside nothing to fuse with) has no columns either
    assert not (TimeWarp(40, LogUniform(0.8, 1.25)) * TimeWarp(40, LogUniform(0.9, 1.1)))._makes_columns


@contextlib.contextmanager
def layout(group, columns):
    """The engine's data side with the moved rows as columns (the default for warps) or in act's (r, n, d): the
    group's class says which (a product's is a property), put back after."""
    cls = type(group)
    saved = cls.__dict__.get("_makes_columns")
    cls._makes_columns = columns
    try:
        yield
    finally:
        if saved is None:
            del cls._makes_columns
        else:
            cls._makes_columns = saved


def _both_layouts(est, group, X):
    out = {}
    for flag in (True, False):
        with layout(group, flag):
            out[flag] = est.transform(X)
    return out[True], out[False]


@pytest.mark.parametrize("name", ["scaling", "scaling-rgb", "scaling-x-shift-x-rotation"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_orbit_fourier_data_side_is_the_same_in_either_layout(name, dtype):
    g = GROUPS[name]()
    X = np.random.default_rng(2).random((40, g.n_features))
    est = OrbitFourierFeatures(g, gamma=1.0 / g.n_features, n_components=30, n_group_samples=6, action="data",
                               dtype=np.dtype(dtype).name, random_state=0).fit(X)
    assert est.plan_.path == "data"
    cols, rows = _both_layouts(est, g, X.astype(dtype))
    tol = 1e-12 if dtype == np.float64 else 2e-5
    np.testing.assert_allclose(cols, rows, rtol=0, atol=tol)


@pytest.mark.parametrize("name", ["scaling", "scaling-rgb", "scaling-x-shift-x-rotation"])
def test_nystroem_gaussian_over_columns_is_as_accurate_as_over_rows(name):
    """OrbitNystroem over a scaling is on the data side (it needs |g x|): the Gaussian's norms are added after the
    products now, within float32's rounding of the float64 kernel values as the augmented product was."""
    g = GROUPS[name]()
    rng = np.random.default_rng(3)
    X = rng.random((60, g.n_features))
    est = OrbitNystroem(g, kernel="rbf", gamma=1.0 / g.n_features, n_components=25, n_group_samples=6,
                        random_state=0).fit(X)
    assert est.plan_.path == "data"
    plan = est.plan_
    with layout(g, False):
        reference = np.asarray(plan.similarities(X))  # float64 through the rows' layout
        rows32 = np.asarray(plan.similarities(X.astype(np.float32)))
    cols64 = np.asarray(plan.similarities(X))
    cols32 = np.asarray(plan.similarities(X.astype(np.float32)))
    np.testing.assert_allclose(cols64, reference, rtol=0, atol=1e-13)
    err_rows = np.abs(rows32 - reference).max()
    err_cols = np.abs(cols32 - reference).max()
    assert err_cols <= max(2 * err_rows, 4 * np.finfo(np.float32).eps)
    F_cols, F_rows = _both_layouts(est, g, X)
    np.testing.assert_allclose(F_cols, F_rows, rtol=0, atol=1e-10 * np.abs(F_rows).max())


def test_torch_back_end_takes_the_columns_too():
    pytest.importorskip("torch")
    g = GROUPS["scaling"]()
    X = np.random.default_rng(4).random((30, g.n_features))
    kw = dict(kernel="rbf", gamma=1.0 / g.n_features, n_components=20, n_group_samples=5, random_state=0)
    numpy_map = OrbitNystroem(g, **kw).fit(X)
    torch_map = OrbitNystroem(g, backend="torch", **kw).fit(X)
    np.testing.assert_allclose(np.asarray(torch_map.transform(X)), numpy_map.transform(X), rtol=0, atol=1e-10)
    fourier = dict(gamma=1.0 / g.n_features, n_components=20, n_group_samples=5, action="data", random_state=0)
    np.testing.assert_allclose(np.asarray(OrbitFourierFeatures(g, backend="torch", **fourier).fit(X).transform(X)),
                               OrbitFourierFeatures(g, **fourier).fit(X).transform(X), rtol=0, atol=1e-10)


def test_the_columns_hold_fewer_copies_of_the_moved_rows():
    """The rows' layout held the moved rows twice at its peak (the product's and its transposed copy, then that
    and the Gaussian's copy with two more columns); the columns once, beside the similarities."""
    g = ImageScaling((32, 32), LogUniform(0.8, 1.25))
    X = np.random.default_rng(5).random((400, g.n_features)).astype(np.float32)
    est = OrbitNystroem(g, kernel="rbf", gamma=1e-3, n_components=50, n_group_samples=8, max_memory_mb=1024,
                        random_state=0).fit(X[:100])
    peaks = {}
    for flag in (False, True):
        with layout(g, flag):
            est.transform(X)  # the warp matrix and the templates are made outside the measurement
            tracemalloc.start()
            est.transform(X)
            peaks[flag] = tracemalloc.get_traced_memory()[1]
            tracemalloc.stop()
    moved = 8 * 400 * g.n_features * 4  # r n d float32 values
    assert peaks[False] - peaks[True] > 0.8 * moved


@pytest.mark.parametrize("kind", ["nystroem", "fourier"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("budget", [8, 16])
def test_the_columns_count_what_they_hold_within_the_budget(kind, dtype, budget):
    """The data side over columns counts a row as its column, its r moved columns and its similarities (half the
    rows' layout's count): the transform's peak beyond its output stays within max_memory_mb."""
    g = ImageScaling((40, 40), LogUniform(0.8, 1.25))
    X = np.random.default_rng(6).random((1500, g.n_features)).astype(dtype)
    kw = dict(n_components=200, n_group_samples=12, max_memory_mb=budget, dtype=dtype, random_state=0)
    est = (OrbitNystroem(g, kernel="rbf", gamma=1e-3, **kw) if kind == "nystroem"
           else OrbitFourierFeatures(g, gamma=1e-3, action="data", **kw)).fit(X[:200])
    assert est.plan_.path == "data"
    assert est.plan_.chunk_rows(len(X), g.n_features, X.itemsize) < len(X)  # several chunks
    est.transform(X[:300])  # the warp matrix and the templates, outside the measurement
    tracemalloc.start()
    F = est.transform(X)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert (peak - F.nbytes) / 2**20 <= budget + 0.5


def test_a_products_rotation_is_the_same_from_a_strided_column_of_its_elements():
    """A product's angles are a strided column of its elements: NumPy 1.24's cos took its scalar loop there, another
    last bit than for the same angles contiguous (610 of 1000), and for a few angles chose by the result's address,
    so the same elements moved the images by another ulp in one run of this file's first test in ~40 under
    .ci/oldest.txt. The rotation takes its angles contiguous (NumPy 2 gives the same bits either way)."""
    g = ImageScaling((6, 6), LogUniform(0.8, 1.25)) * ImageTranslation((6, 6), Normal(1.0)) * ImageRotation((6, 6))
    rng = np.random.default_rng(0)
    E = np.column_stack([np.ones(1000), np.zeros((1000, 2)), rng.uniform(-np.pi, np.pi, 1000)])
    angles = g.split(g._check_elements(E))[2]
    assert angles[:, 0].strides == (32,)
    rotation = g.factors[2]
    for a, b in zip(rotation.affine(angles), rotation.affine(np.ascontiguousarray(angles))):
        assert np.array_equal(a, b)
