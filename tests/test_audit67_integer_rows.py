"""Audit of the integer-rows feature (0623b26, e7e330f, f7a7887): feature maps' ``transform`` / ``transform_multi``
and ``HaarKernel`` keep integer and boolean rows and convert them to float64 a block at a time. The promise: the
features / Gram matrix of the same rows given as float64 (to rounding), within ``max_memory_mb``.

Findings (fail before their fixes):

* ``HaarKernel(gamma="scale")`` fitted on (or first called with) signed integer rows took max |x| as
  ``np.abs(block).max()``, and ``np.abs`` of a signed integer's minimum is itself (int8: -128): rows of 0 and -128
  gave gamma 1.0 instead of 1 / (d var) (5.0e-05), so every kernel value differed (``utils.validation.scale_gamma``).
* A DataFrame of integer or boolean columns (uint8 pixels) was converted to float64 whole, beside the budget:
  8000 rows of 784 uint8 columns took 52 MB beyond the features at an 8 MB budget (4 MB as an array), and
  HaarKernel's Gram matrix of such a frame likewise (``keeps_integer_rows`` / ``integer_frame_dtype``).

The rest: brute force over dtypes (large values, negative ones), estimators, paths, groups, back-ends and Dask, all
the same as the float64 rows (kept here as regression tests).
"""
import tracemalloc
import warnings

import numpy as np
import pytest
from test_memory import _peak_mb

from orbitkernels.features import GroupCDFFeatures, OrbitFourierFeatures, OrbitNystroem
from orbitkernels.groups import (
    BlockPermutation,
    CoulombPermutation,
    CyclicShift,
    ImageRotation,
    ImageScaling,
    LogUniform,
    PolarRotation,
    TimeWarp,
    TrivialGroup,
)
from orbitkernels.kernels import HaarKernel
from orbitkernels.utils.validation import keeps_integer_rows, scale_gamma

DTYPES = ["uint8", "int8", "int16", "uint16", "int32", "int64", "uint64", "bool"]

GROUPS = {
    "cyclic": (lambda: CyclicShift(16), 16),
    "rotation": (lambda: ImageRotation((6, 6)), 36),
    "polar": (lambda: PolarRotation((6, 6), n_angles=8), 36),
    "scaling": (lambda: ImageScaling((6, 6), LogUniform(0.8, 1.25)), 36),
    "timewarp": (lambda: TimeWarp(16, LogUniform(0.8, 1.25)), 16),
    "blocks": (lambda: BlockPermutation(4, 4), 16),
    "montavon": (lambda: CoulombPermutation(4, sampling="montavon"), 16),
    "product": (lambda: ImageRotation((6, 6)) * ImageScaling((6, 6), LogUniform(0.8, 1.25)), 36),
    "trivial": (lambda: TrivialGroup(), 16),
    "none": (lambda: None, 16),
}

MAPS = {
    "fourier": lambda g, **kw: OrbitFourierFeatures(g, n_components=8, gamma=1e-4, n_group_samples=4,
                                                    random_state=0, **kw),
    "fourier_cos_sin": lambda g, **kw: OrbitFourierFeatures(g, n_components=8, gamma=1e-4, output="cos_sin",
                                                            n_group_samples=4, random_state=0, **kw),
    "nystroem": lambda g, **kw: OrbitNystroem(g, n_components=6, gamma=1e-4, n_group_samples=4, random_state=0,
                                              **kw),
    "nystroem_linear": lambda g, **kw: OrbitNystroem(g, kernel="linear", n_components=6, n_group_samples=4,
                                                     random_state=0, **kw),
    "gicdf": lambda g, **kw: GroupCDFFeatures(g, n_templates=4, n_bins=5, n_group_samples=4, random_state=0, **kw),
    "gicdf_raw": lambda g, **kw: GroupCDFFeatures(g, n_templates=4, n_bins=5, normalize=False, value_range="auto",
                                                  n_group_samples=4, random_state=0, **kw),
}


def _rows(dtype, n, d, seed=0, large=False):
    rng = np.random.default_rng(seed)
    if dtype == "bool":
        return rng.integers(0, 2, (n, d)).astype(bool)
    if large:  # the dtype's whole range: int64 near 2**62, uint64 above 2**63, negative minima
        if dtype == "int64":
            return rng.integers(-(2**62), 2**62, (n, d), dtype=np.int64)
        if dtype == "uint64":
            return rng.integers(0, 2**62, (n, d)).astype(np.uint64) + np.uint64(2**63)
        info = np.iinfo(dtype)
        return rng.integers(info.min, info.max, (n, d), endpoint=True, dtype=dtype)
    info = np.iinfo(dtype)
    return rng.integers(max(info.min, -200), min(info.max, 255), (n, d), endpoint=True).astype(dtype)


def _same(got, want, what):
    if isinstance(want, Exception) or isinstance(got, Exception):
        assert type(got) is type(want) and str(got) == str(want), (what, want, got)
        return
    assert got.dtype == np.float64 and got.shape == want.shape, what
    scale = max(float(np.abs(want).max()), 1e-300)
    assert float(np.abs(got - want).max()) <= 1e-10 * scale, (what, float(np.abs(got - want).max()) / scale)


def _call(f, *args):
    try:
        return f(*args)
    except (ValueError, TypeError) as e:
        return e


# ------------------------------------------------------------------ findings
@pytest.mark.parametrize("dtype, low", [("int8", -128), ("int16", -(2**15)), ("int64", -(2**63))])
def test_haar_gamma_scale_of_signed_integer_rows_holding_the_minimum(dtype, low):
    """np.abs(-128 as int8) is -128: max |x| came out 0 and gamma="scale" 1.0 (5.0e-05 for the float64 rows)."""
    X = np.zeros((6, 8), dtype)
    X[::2, ::3] = low
    want = HaarKernel(CyclicShift(8), gamma="scale").fit(X.astype(np.float64))
    got = HaarKernel(CyclicShift(8), gamma="scale").fit(X)
    assert got.gamma_ == pytest.approx(want.gamma_, rel=1e-12)
    called = HaarKernel(CyclicShift(8), gamma="scale")  # resolved on the first call, from the integer rows
    np.testing.assert_allclose(called(X), want(X.astype(np.float64)), rtol=1e-12, atol=0)
    assert scale_gamma(X) == pytest.approx(scale_gamma(X.astype(np.float64)), rel=1e-12)


def test_feature_maps_keep_a_dataframe_of_uint8_columns_within_the_budget():
    """8000 rows of 784 uint8 columns: converted whole (50 MB of float64) beside an 8 MB budget, 52 MB measured."""
    pd = pytest.importorskip("pandas")
    X = np.random.default_rng(2).integers(0, 256, (8000, 784)).astype(np.uint8)
    frame = pd.DataFrame(X, columns=[f"p{i}" for i in range(784)])
    est = OrbitFourierFeatures(ImageRotation((28, 28)), n_components=20, gamma=1e-6, n_group_samples=8,
                               random_state=0, max_memory_mb=8).fit(frame.iloc[:200].astype(float))
    est.transform(frame.iloc[:50])  # the moved templates, outside the measurement
    peak, out = _peak_mb(est, frame)
    assert peak - out <= 8 + 0.5
    np.testing.assert_allclose(est.transform(frame.iloc[:300]), est.transform(frame.iloc[:300].astype(np.float64)),
                               rtol=0, atol=1e-13)


def test_haar_kernel_keeps_a_dataframe_of_uint8_columns_within_the_budget():
    """Converted whole by np.asarray + float64 before the blocks: the float64 copy of the frame beside the budget."""
    pd = pytest.importorskip("pandas")
    X = np.random.default_rng(4).integers(0, 256, (6000, 784)).astype(np.uint8)
    frame = pd.DataFrame(X)
    k = HaarKernel(ImageRotation((28, 28)), gamma=1e-6, n_group_samples=4, max_memory_mb=16, random_state=0)
    k.fit(X[:100].astype(float))
    k(X[:50], X[:20])  # the elements, outside the measurement
    tracemalloc.start()
    try:
        K = k(frame, frame.iloc[:30])
        peak = (tracemalloc.get_traced_memory()[1] - K.nbytes) / 2**20
    finally:
        tracemalloc.stop()
    assert peak <= 16 + 3.0, peak  # 12.9 MB, as the uint8 array (a 36 MB float64 copy before)
    np.testing.assert_allclose(k(frame.iloc[:40], frame.iloc[:7]), k(X[:40].astype(float), X[:7].astype(float)),
                               rtol=0, atol=1e-13)


def test_dataframes_of_mixed_integer_and_boolean_columns_give_the_float64_features():
    pd = pytest.importorskip("pandas")
    from orbitkernels.utils.validation import integer_frame_dtype  # the fix's helper
    rng = np.random.default_rng(5)
    X = rng.integers(0, 256, (30, 36))
    frame = pd.DataFrame({"a": X[:, 0].astype(np.uint8), "b": X[:, 1] > 100,
                          **{f"c{i}": X[:, i].astype(np.int16) - 100 for i in range(2, 36)}})
    assert integer_frame_dtype(frame) == np.int16 and keeps_integer_rows(frame)
    as_float = frame.astype(np.float64)
    for name in ("fourier", "nystroem", "gicdf"):
        est = MAPS[name](ImageRotation((6, 6))).fit(as_float)
        _same(est.transform(frame), est.transform(as_float), name)
    k = HaarKernel(ImageRotation((6, 6)), gamma=1e-4, n_group_samples=3, random_state=0).fit(as_float)
    _same(k(frame, frame.iloc[:5]), k(as_float.to_numpy(), as_float.iloc[:5].to_numpy()), "haar")


def test_integer_frame_dtype_leaves_what_it_cannot_keep_to_the_float_path():
    pd = pytest.importorskip("pandas")
    from orbitkernels.utils.validation import integer_frame_dtype  # the fix's helper
    ints = pd.DataFrame({"a": np.array([1, 2], np.int64), "b": np.array([2**63 + 5, 3], np.uint64)})
    assert integer_frame_dtype(ints) is None  # common type float64
    assert integer_frame_dtype(pd.DataFrame({"a": [1, 2]}).astype("Int64")) is None  # nullable: may hold NA
    assert integer_frame_dtype(pd.DataFrame({"a": [1, 2], "b": [0.5, 1.0]})) is None
    assert integer_frame_dtype(np.zeros((2, 2), np.uint8)) is None and keeps_integer_rows(np.zeros((2, 2), np.uint8))
    est = OrbitFourierFeatures(CyclicShift(4), n_components=4, random_state=0).fit(np.ones((3, 4)))
    nullable = pd.DataFrame(np.ones((2, 4), int)).astype("Int64")
    nullable.iloc[1, 0] = pd.NA
    with pytest.raises(ValueError, match="NaN"):  # refused as before, not taken as integers
        est.transform(nullable)


# ------------------------------------------------------------------ brute force (all the same before the fixes)
@pytest.mark.parametrize("group", sorted(GROUPS))
@pytest.mark.parametrize("large", [False, True])
def test_every_map_path_and_dtype_gives_the_float64_features(group, large):
    make, d = GROUPS[group]
    fitted = []
    for name, mk in MAPS.items():
        for kw in ({}, {"fast_path": "gemm"}, {"fast_path": "fft"}, {"fast_path": "polar"}, {"fast_path": "none"},
                   {"action": "data"}, {"action": "templates"}, {"dtype": "float32"}, {"dtype": "float64"}):
            try:
                fitted.append((f"{name} {kw}", mk(make(), **kw).fit(_rows("int16", 30, d, 1).astype(float))))
            except (ValueError, TypeError):  # a path or side this group does not have
                pass
    assert len(fitted) > len(MAPS)
    for dtype in DTYPES:
        X = _rows(dtype, 25, d, large=large)
        for what, est in fitted:
            _same(_call(est.transform, X), _call(est.transform, X.astype(np.float64)), (what, dtype))


@pytest.mark.parametrize("group", ["rotation", "scaling", "montavon", "none"])
def test_torch_back_end_gives_the_float64_features(group):
    pytest.importorskip("torch")
    make, d = GROUPS[group]
    for name in ("fourier", "nystroem", "gicdf"):
        for dtype_opt in ("auto", "float32"):
            est = MAPS[name](make(), backend="torch", dtype=dtype_opt).fit(_rows("int16", 30, d, 1).astype(float))
            for dtype in DTYPES:
                X = _rows(dtype, 20, d)
                _same(_call(est.transform, X), _call(est.transform, X.astype(np.float64)), (name, dtype_opt, dtype))


@pytest.mark.parametrize("dtype", DTYPES)
def test_fit_and_gamma_scale_on_integer_rows_give_the_float64_model(dtype):
    makes = [
        lambda g: OrbitFourierFeatures(g, n_components=8, gamma="scale", n_group_samples=4, random_state=0),
        lambda g: OrbitNystroem(g, n_components=5, gamma="scale", n_group_samples=4, random_state=0),
        lambda g: OrbitNystroem(g, n_components=5, landmarks="orbit", n_group_samples=4, random_state=0),
        lambda g: GroupCDFFeatures(g, n_templates=4, n_bins=3, template_sampling="data", value_range="auto",
                                   n_group_samples=4, random_state=0),
    ]
    for large in (False, True):
        X = _rows(dtype, 30, 36, large=large)
        for mk in makes:
            got = _call(lambda A: mk(ImageRotation((6, 6))).fit(A).transform(A), X)
            want = _call(lambda A: mk(ImageRotation((6, 6))).fit(A).transform(A), X.astype(np.float64))
            _same(got, want, (dtype, large))


def test_transform_multi_and_dask_take_every_integer_dtype():
    da = pytest.importorskip("dask.array")
    g = ImageRotation((6, 6))
    est = GroupCDFFeatures(g, n_templates=4, n_bins=4, n_group_samples=4, random_state=0)
    est.fit(_rows("int16", 30, 36, 1).astype(float))
    for dtype in DTYPES:
        X = _rows(dtype, 40, 36)
        got, want = est.transform_multi(X, [2, 5]), est.transform_multi(X.astype(np.float64), [2, 5])
        for n in (2, 5):
            _same(got[n], want[n], (dtype, n))
        _same(est.transform(da.from_array(X, chunks=17)).compute(), est.transform(X.astype(np.float64)), dtype)
        fit_int = OrbitFourierFeatures(g, n_components=8, gamma=1e-4, n_group_samples=4, random_state=0)
        fit_int.fit(da.from_array(X, chunks=17))
        fit_flt = OrbitFourierFeatures(g, n_components=8, gamma=1e-4, n_group_samples=4, random_state=0)
        fit_flt.fit(da.from_array(X.astype(np.float64), chunks=17))
        _same(fit_int.transform(da.from_array(X, chunks=17)).compute(), fit_flt.transform(X.astype(np.float64)),
              dtype)


@pytest.mark.parametrize("group", ["cyclic", "rotation", "scaling", "montavon", "product", "none"])
def test_haar_kernel_of_integer_rows_is_the_float64_gram_matrix(group):
    make, d = GROUPS[group]
    computed = 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for kernel in ("rbf", "linear", "poly", "laplacian", "cosine"):
            for gamma in (1e-4, "scale", None):
                if gamma == "scale" and kernel == "cosine":
                    continue
                for dtype in DTYPES:
                    for large in (False, True):
                        X, Y = _rows(dtype, 9, d, large=large), _rows(dtype, 7, d, 5, large=large)
                        Xf, Yf = X.astype(np.float64), Y.astype(np.float64)

                        def gram(A, B, fit_on):
                            k = HaarKernel(make(), kernel, gamma=gamma, n_group_samples=3, random_state=0)
                            k.fit(fit_on)
                            return np.concatenate([k(A, B), k(A, Yf)], axis=1)

                        want = _call(gram, Xf, Yf, Xf)
                        computed += not isinstance(want, Exception)
                        _same(_call(gram, X, Y, X), want, (kernel, gamma, dtype, large))
                        _same(_call(gram, X, Y, Xf), want, (kernel, gamma, dtype, large))
    assert computed > 100  # most Gram matrices are computed, not refused alike


@pytest.mark.parametrize("layout", ["fortran", "strided", "big_endian"])
def test_integer_rows_in_any_layout(layout):
    X = np.random.default_rng(6).integers(0, 256, (40, 72)).astype(np.uint8)
    A = {"fortran": np.asfortranarray(X[:, :36]), "strided": X[::2, ::2], "big_endian": X[:, :36].astype(">i4")}[layout]
    Af = np.ascontiguousarray(A, dtype=np.float64)
    fit_rows = _rows("int16", 30, 36, 1).astype(float)
    for name in ("fourier", "nystroem", "gicdf"):
        est = MAPS[name](ImageRotation((6, 6))).fit(fit_rows)
        _same(est.transform(A), est.transform(Af), name)
    k = HaarKernel(ImageRotation((6, 6)), gamma=1e-4, n_group_samples=3, random_state=0).fit(fit_rows)
    _same(k(A, A[:5]), k(Af, Af[:5]), "haar")
