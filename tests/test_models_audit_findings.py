"""Audit findings in the ridge solvers and FSCALE: each test failed before its fix."""
import numpy as np
import pytest

from orbitkernels.models import (DistributedRidge, DistributedRidgeClassifier, RidgePath, cholesky_path,
                                 fscale_worst_case)


def _ridge_data(n=20, d=3, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    return X, X @ np.arange(1.0, d + 1)


# ----------------------------------------------------------------------------- 1. XᵀX overflow
@pytest.mark.parametrize("dtype, scale", [(np.float32, 1e20), (np.float64, 1e160)])
@pytest.mark.parametrize("d", [3, 40])  # primal (D <= n) and dual (D > n)
def test_cholesky_path_refuses_a_gram_matrix_that_overflows(dtype, scale, d):
    """The overflowed Gram matrix gave W = 0 and b = mean(Y) in silence: every prediction the mean."""
    X, Y = _ridge_data(d=d)
    name = np.dtype(dtype).name
    with pytest.raises(ValueError, match=f"X.* overflows {name} for rows of this magnitude.*rescale X"):
        cholesky_path((X * scale).astype(dtype), Y, [1.0])


@pytest.mark.parametrize("d", [3, 40])
def test_ridge_path_refuses_a_gram_matrix_that_overflows(d):
    """numpy's bare 'LinAlgError: Eigenvalues did not converge' is now a ValueError that says what to do."""
    X, Y = _ridge_data(d=d)
    with pytest.raises(ValueError, match="overflows float64 for rows of this magnitude.*rescale X"):
        RidgePath([1.0]).fit(X * 1e200, Y)


def test_ridge_path_from_moments_refuses_overflowed_moments():
    xtx = np.array([[np.inf, 0.0], [0.0, 1.0]])
    with pytest.raises(ValueError, match="xtx .*overflow"):
        RidgePath.from_moments([1.0], n=5, x_mean=np.zeros(2), y_mean=np.zeros(1), xtx=xtx, xty=np.ones((2, 1)))


@pytest.mark.parametrize("alphas", [1.0, [0.1, 1.0, 10.0]])
def test_distributed_ridge_refuses_moments_that_overflow(alphas):
    X, Y = _ridge_data(n=60)
    with pytest.raises(ValueError, match="overflows float64 for rows of this magnitude.*rescale X"):
        DistributedRidge(alphas=alphas).fit(X * 1e200, Y)


def test_distributed_ridge_on_dask_refuses_moments_that_overflow():
    da = pytest.importorskip("dask.array")
    X, Y = _ridge_data(n=60)
    with pytest.raises(ValueError, match="overflows float64 for rows of this magnitude.*rescale X"):
        DistributedRidge(alphas=[0.1, 1.0]).fit(da.from_array(X * 1e200, chunks=(7, 3)), da.from_array(Y, chunks=9))


def test_large_data_that_does_not_overflow_is_solved_as_before():
    """Scaling X by s and α by s² scales W by 1/s: data near the overflow threshold is not refused."""
    X, Y = _ridge_data()
    (W, b), = cholesky_path(X, Y, [1.0])
    for dtype, s in [(np.float64, 1e150), (np.float32, 1e17)]:
        (Ws, bs), = cholesky_path((X * s).astype(dtype), Y, [s * s])
        np.testing.assert_allclose(Ws * s, W, rtol=1e-3 if dtype == np.float32 else 1e-8)
        np.testing.assert_allclose(bs, b, rtol=1e-3 if dtype == np.float32 else 1e-8)
    s = 1e150
    np.testing.assert_allclose(RidgePath([s * s]).fit(X * s, Y).coef(0) * s, W, rtol=1e-8)
    np.testing.assert_allclose(DistributedRidge(alphas=s * s).fit(X * s, Y).coef_[0] * s, W[:, 0], rtol=1e-8)


# ----------------------------------------------------------------------------- 2. FSCALE's scalar label
@pytest.mark.parametrize("y", [np.array([1, -1]), np.array([1]), [1], (-1,), np.array([[1]])])
def test_fscale_worst_case_refuses_labels_that_are_not_a_scalar(y):
    """An array of labels failed in numpy ('truth value ... is ambiguous', 'only 0-dimensional arrays ...')."""
    with pytest.raises(ValueError, match=r"y must be a scalar label -1 or \+1 \(use worst_case_scaling for one "
                                         r"label per row\)"):
        fscale_worst_case(np.array([1.0, 2.0]), y, [1, 1], 1)


@pytest.mark.parametrize("y", [1, -1.0, np.array(1), np.int64(-1), np.float32(1.0)])
def test_fscale_worst_case_still_takes_scalar_labels(y):
    expected = fscale_worst_case(np.array([1.0, 2.0]), int(y), [1, 1], 1)
    np.testing.assert_array_equal(fscale_worst_case(np.array([1.0, 2.0]), y, [1, 1], 1), expected)


# ----------------------------------------------------------------------------- 3. text (and flags) as α
@pytest.mark.parametrize("alphas", ["1.0", ["1.0", 2.0], np.array(["1.0"]), [1.0, True], (2.0, np.bool_(True))])
def test_ridge_path_refuses_text_and_flags_among_alphas(alphas):
    """'1.0' was parsed as α = 1 (and [1.0, True] became [1.0, 1.0])."""
    with pytest.raises(ValueError, match="alphas"):
        RidgePath(alphas)


@pytest.mark.parametrize("alphas", ["1.0", ["1.0", 2.0], np.array(["1.0"]), True, [1.0, True]])
def test_cholesky_path_refuses_text_and_flags_among_alphas(alphas):
    X, Y = _ridge_data()
    with pytest.raises(ValueError, match="alphas"):
        cholesky_path(X, Y, alphas)


@pytest.mark.parametrize("alphas", [["1.0", 2.0], ("0.1", "1"), np.array(["1.0", "2.0"], dtype=object)])
@pytest.mark.parametrize("cls", [DistributedRidge, DistributedRidgeClassifier])
def test_distributed_ridge_refuses_text_among_alphas(cls, alphas):
    X, y = np.random.default_rng(0).normal(size=(40, 3)), np.repeat([0, 1], 20)
    with pytest.raises(ValueError, match="alphas"):
        cls(alphas=alphas).fit(X, y)


@pytest.mark.parametrize("alphas", [1, 2.5, np.float32(0.5), np.int64(3), [1, 2.5], (0.1, 1.0),
                                    np.array([0.1, 1.0]), np.array([1, 2]), np.array([0.5, 2.0], dtype=object)])
def test_numeric_alphas_are_still_taken(alphas):
    X, Y = _ridge_data()
    want = np.atleast_1d(np.asarray(alphas, dtype=float))
    np.testing.assert_array_equal(RidgePath(alphas).alphas, want)
    assert len(cholesky_path(X, Y, alphas)) == len(want)
    np.testing.assert_array_equal(DistributedRidge(alphas=alphas).fit(X, Y).alphas_, want)


# ----------------------------------------------------------------------------- 4. object labels on Dask
def _labels(values, n=60, seed=0):
    rng = np.random.default_rng(seed)
    return rng.normal(size=(n, 4)), np.array(values, dtype=object)[rng.integers(0, len(values), n)]


@pytest.mark.parametrize("values", [["a", "b", "c"], ["no", "yes"]])
def test_distributed_ridge_classifier_takes_object_string_labels_on_dask(values):
    """In memory object-dtype string labels were fitted; on Dask 'y has dtype object: expected a numeric dtype'."""
    da = pytest.importorskip("dask.array")
    X, y = _labels(values)
    a = DistributedRidgeClassifier().fit(X, y)
    b = DistributedRidgeClassifier().fit(da.from_array(X, chunks=7), da.from_array(y, chunks=9))
    np.testing.assert_array_equal(b.classes_, a.classes_)
    assert b.alpha_ == a.alpha_
    np.testing.assert_allclose(b.coef_, a.coef_, rtol=1e-8, atol=1e-10)
    np.testing.assert_array_equal(b.predict(X), a.predict(X))
    np.testing.assert_array_equal(b.predict(da.from_array(X, chunks=7)).compute(), a.predict(X))
    # validation labels given as an object dask array as well
    c = DistributedRidgeClassifier().fit(da.from_array(X[:40], chunks=7), da.from_array(y[:40], chunks=9),
                                         da.from_array(X[40:], chunks=7), da.from_array(y[40:], chunks=9))
    d = DistributedRidgeClassifier().fit(X[:40], y[:40], X[40:], y[40:])
    assert c.alpha_ == d.alpha_
    np.testing.assert_array_equal(c.predict(X), d.predict(X))


@pytest.mark.parametrize("values, err, match", [
    (["a", 1], TypeError, "labels of more than one type"),
    (["a", None], TypeError, "labels of more than one type"),
    ([1, 2, 3], ValueError, "Unknown label type"),
    ([1.5, 2.5], ValueError, "Unknown label type"),
])
def test_distributed_ridge_classifier_refuses_object_labels_that_are_not_all_strings_on_dask(values, err, match):
    """As in memory (where the mixed labels are a TypeError of np.unique), with a message that says why."""
    da = pytest.importorskip("dask.array")
    X, y = _labels(values)
    with pytest.raises(err):
        DistributedRidgeClassifier().fit(X, y)
    with pytest.raises(err, match=match):
        DistributedRidgeClassifier().fit(da.from_array(X, chunks=7), da.from_array(y, chunks=9))


def test_distributed_ridge_keeps_object_targets_out_of_regression_on_dask():
    da = pytest.importorskip("dask.array")
    X, y = _labels(["a", "b"])
    with pytest.raises(ValueError, match="y has dtype object: expected a numeric dtype"):
        DistributedRidge().fit(da.from_array(X, chunks=7), da.from_array(y, chunks=9))


def test_unseen_label_of_another_type_in_dask_validation_labels_is_named():
    """A label the training classes cannot be compared with was numpy's "'<' not supported" from searchsorted."""
    da = pytest.importorskip("dask.array")
    X, y = _labels(["a", "b"])
    y_val = y[40:].copy()
    y_val[0] = 7
    with pytest.raises(ValueError, match="y contains labels not seen in the training targets"):
        DistributedRidgeClassifier().fit(da.from_array(X[:40], chunks=7), da.from_array(y[:40], chunks=9),
                                         da.from_array(X[40:], chunks=7), da.from_array(y_val, chunks=9))
