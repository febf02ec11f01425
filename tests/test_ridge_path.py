"""The one ridge-path solver (models/ridge.py): scikit-learn's Ridge(alpha) for every α of the grid,
primal and dual, multi-output, exact leave-one-out, and the same solution from moments."""
import numpy as np
import pytest
from sklearn.linear_model import Ridge

from orbitkernels.models.ridge import RidgePath

ALPHAS = [1e-3, 0.1, 1.0, 10.0]


@pytest.mark.parametrize("n,d", [(40, 8), (15, 30)])  # primal (D <= n), dual (D > n)
@pytest.mark.parametrize("intercept", [True, False])
def test_equals_sklearn_ridge(n, d, intercept):
    rng = np.random.RandomState(0)
    X, Y, Xt = rng.randn(n, d) + 2, rng.randn(n, 3), rng.randn(7, d)
    path = RidgePath(ALPHAS, fit_intercept=intercept).fit(X, Y)
    assert path.dual_ == (d > n)
    P = path.predict(Xt)
    for i, a in enumerate(ALPHAS):
        ref = Ridge(alpha=a, fit_intercept=intercept, solver="svd").fit(X, Y)
        np.testing.assert_allclose(P[i], ref.predict(Xt), rtol=1e-8, atol=1e-10)
        np.testing.assert_allclose(path.coef(i), ref.coef_.T, rtol=1e-8, atol=1e-10)
        np.testing.assert_allclose(path.intercept(i), np.broadcast_to(ref.intercept_, (3,)), rtol=1e-8, atol=1e-10)
        np.testing.assert_allclose(path.predict(Xt, i), P[i])


@pytest.mark.parametrize("n,d", [(25, 6), (12, 20)])
def test_loo_is_exact(n, d):
    rng = np.random.RandomState(1)
    X, Y = rng.randn(n, d), rng.randn(n, 2)
    path = RidgePath(ALPHAS).fit(X, Y)
    for i, a in enumerate(ALPHAS):
        brute = np.array([Y[j] - Ridge(alpha=a, solver="svd").fit(np.delete(X, j, 0), np.delete(Y, j, 0))
                          .predict(X[j:j + 1])[0] for j in range(n)])
        np.testing.assert_allclose(path.loo_residuals(i), brute, rtol=1e-7, atol=1e-9)


def test_from_moments_equals_fit():
    rng = np.random.RandomState(2)
    X, Y, Xt = rng.randn(50, 5) * 3 + 10, rng.randn(50, 2), rng.randn(4, 5)
    mx, my = X.mean(0), Y.mean(0)
    Xc, Yc = X - mx, Y - my
    a = RidgePath(ALPHAS).fit(X, Y)
    b = RidgePath.from_moments(ALPHAS, n=50, x_mean=mx, y_mean=my, xtx=Xc.T @ Xc, xty=Xc.T @ Yc)
    np.testing.assert_allclose(b.predict(Xt), a.predict(Xt), rtol=1e-10)
    with pytest.raises(ValueError, match="moments"):
        b.loo_residuals(0)


def test_gram_dual_and_collinear_columns():
    rng = np.random.RandomState(3)
    X, y = rng.randn(20, 4), rng.randn(20)
    Xc = X - X.mean(0)
    g = RidgePath(ALPHAS).fit_gram(Xc @ Xc.T, y)
    f = RidgePath(ALPHAS).fit(X, y)
    Xt = rng.randn(3, 4)
    np.testing.assert_allclose(g.predict_gram((Xt - X.mean(0)) @ Xc.T), f.predict(Xt), rtol=1e-9)
    # α = 0 on collinear columns: the minimum-norm solution, as Ridge(alpha=0), not NaN
    Z = np.c_[X, X[:, :1]]
    p = RidgePath([0.0]).fit(Z, y)
    np.testing.assert_allclose(p.predict(Z)[0, :, 0], Ridge(alpha=0.0, solver="svd").fit(Z, y).predict(Z), atol=1e-8)


@pytest.mark.parametrize("n,d", [(300, 200), (50, 200)])  # primal, dual
def test_predict_in_blocks_is_predict_at_once_and_bounded_in_memory(n, d, monkeypatch):
    import tracemalloc

    rng = np.random.RandomState(4)
    X, Y = rng.randn(n, d), rng.randn(n, 3)
    path = RidgePath(ALPHAS).fit(X, Y)
    Xt = rng.randn(5000, d).astype(np.float32)
    whole = path.predict(Xt)
    # 7 rows per block: 714 full blocks and a last one of 2 rows
    monkeypatch.setattr(RidgePath, "PREDICT_BLOCK_BYTES", 7 * 8 * d)
    np.testing.assert_allclose(path.predict(Xt), whole, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(path.predict(Xt, 2), whole[2], rtol=1e-12, atol=1e-12)
    tracemalloc.start()
    path.predict(Xt)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    # the predictions (n_α · m · k float64, twice: the block output and the α-major result), W and one
    # block, not a float64 copy of every row (8 MB here, what predict held before)
    bound = 2 * 8 * len(ALPHAS) * 5000 * 3 + 2 * 8 * d * len(ALPHAS) * 3 + 2 * 7 * 8 * d + 65536
    assert peak < bound < 5000 * d * 8 / 3


@pytest.mark.parametrize("n", [60, 9])  # primal (D <= n), dual (D > n)
@pytest.mark.parametrize("intercept", [True, False])
@pytest.mark.parametrize("dtype,rtol", [(np.float64, 1e-9), (np.float32, 2e-3)])
def test_cholesky_path_equals_sklearn_ridge(n, intercept, dtype, rtol):
    from orbitkernels.models.ridge import cholesky_path

    rng = np.random.RandomState(3)
    X, Y = (rng.randn(n, 12) + 2).astype(dtype), rng.randn(n, 3).astype(dtype)
    path = cholesky_path(X, Y, ALPHAS, fit_intercept=intercept)
    assert len(path) == len(ALPHAS)
    for (W, b), a in zip(path, ALPHAS):
        ref = Ridge(alpha=a, fit_intercept=intercept, solver="svd").fit(X.astype(float), Y.astype(float))
        assert W.dtype == dtype and W.shape == (12, 3) and b.shape == (3,)
        np.testing.assert_allclose(W, ref.coef_.T, rtol=rtol, atol=rtol * np.abs(ref.coef_).max())
        np.testing.assert_allclose(X @ W + b, ref.predict(X.astype(float)), rtol=rtol, atol=rtol)
    # one output as a vector
    (w, b0), = cholesky_path(X, Y[:, 0], [1.0], fit_intercept=intercept)
    np.testing.assert_allclose(w[:, 0], cholesky_path(X, Y, [1.0], fit_intercept=intercept)[0][0][:, 0], rtol=rtol,
                               atol=rtol * 1e-2)


def test_cholesky_path_rejects_bad_input():
    from orbitkernels.models.ridge import cholesky_path

    X, Y = np.ones((5, 2)), np.ones(5)
    for alphas in ([0.0], [-1.0], [np.nan]):
        with pytest.raises(ValueError, match="alphas must be positive"):
            cholesky_path(X, Y, alphas)
    with pytest.raises(ValueError, match="finite"):
        cholesky_path(np.array([[np.nan, 1.0]] * 5), Y, [1.0])
    with pytest.raises(ValueError, match="2-D"):
        cholesky_path(np.ones(5), Y, [1.0])
    with pytest.raises(ValueError, match="at least one row"):
        cholesky_path(np.ones((0, 2)), np.ones(0), [1.0])
    with pytest.raises(ValueError, match="Y must be"):
        cholesky_path(X, np.ones(4), [1.0])
    with pytest.raises(ValueError, match="Y must be"):
        cholesky_path(X, np.ones((5, 1, 1)), [1.0])


@pytest.mark.parametrize("n,d", [(40, 8), (15, 30)])
def test_fit_leaves_the_callers_rows_alone_and_copies_float32_once(n, d):
    """float64 rows are centred in a copy (the caller's array is untouched); float32 rows are converted once and
    centred in that copy, with the same solution as their float64 twin."""
    rng = np.random.RandomState(4)
    X, Y, Xt = rng.randn(n, d) + 3, rng.randn(n, 2), rng.randn(5, d)
    X32 = X.astype(np.float32)
    before64, before32 = X.copy(), X32.copy()
    p64 = RidgePath(ALPHAS).fit(X, Y)
    p32 = RidgePath(ALPHAS).fit(X32, Y)
    np.testing.assert_array_equal(X, before64)
    np.testing.assert_array_equal(X32, before32)
    assert not np.shares_memory(p64.Xc_, X)
    np.testing.assert_allclose(p32.Xc_, X32.astype(np.float64) - X32.astype(np.float64).mean(0), rtol=0, atol=0)
    np.testing.assert_allclose(p32.Xc_.mean(0), 0.0, atol=1e-12)
    np.testing.assert_allclose(p32.predict(Xt), RidgePath(ALPHAS).fit(X32.astype(np.float64), Y).predict(Xt),
                               rtol=0, atol=0)


def test_fit_of_float32_rows_holds_one_float64_copy():
    """The dual fit of wide float32 features (GICDF's 80k+ columns on QM7) holds one float64 copy of them, not a
    converted copy and a centred one beside it (which ran a 3200-template probe out of memory)."""
    import tracemalloc

    rng = np.random.RandomState(5)
    X, Y = rng.randn(100, 20000).astype(np.float32), rng.randn(100)
    copy_bytes = X.size * 8
    tracemalloc.start()
    try:
        path = RidgePath(ALPHAS).fit(X, Y)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert path.dual_
    assert copy_bytes <= peak < 1.5 * copy_bytes


def test_a_centred_gram_matrix_gives_the_features_leave_one_out_at_small_penalties():
    """fit_gram(..., centred=True): the constant vector is the centred Gram matrix's null direction exactly, so
    the leave-one-out residuals are the centred features' down to α near the centred matrix's own rounding.
    Left at its rounding (here 3e-11: features far from the origin), that direction counted the intercept twice
    once α reached it: a leave-one-out RMSE of 3e7 instead of 0.29."""
    rng = np.random.RandomState(4)
    X = rng.standard_normal((90, 120))
    X[:, 60:] *= 1e-4  # small eigenvalues: 1 - H_ii is small at small α
    X += 5.0
    y = X[:, 0] * 3 + rng.normal(0, 0.1, 90)
    K = X @ X.T
    col = K.mean(0)
    Kc = K - col[None, :] - col[:, None] + col.mean()
    alphas = [1e-10, 1e-8, 1e-6, 1.0]
    rmse = lambda p, i: np.sqrt(np.mean(p.loo_residuals(i) ** 2))  # noqa: E731
    feats = RidgePath(alphas).fit(X, y)
    gram = RidgePath(alphas).fit_gram(Kc, y, centred=True)
    plain = RidgePath(alphas).fit_gram(Kc, y)
    assert rmse(gram, 0) == pytest.approx(rmse(feats, 0), rel=0.02)
    assert rmse(plain, 0) > 100 * rmse(feats, 0)
    for i in (1, 2, 3):
        assert rmse(gram, i) == pytest.approx(rmse(feats, i), rel=1e-3)
    # the predictions do not depend on that direction
    np.testing.assert_allclose(gram.predict_gram(Kc[:5]), plain.predict_gram(Kc[:5]), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_dual_leave_one_out_is_exact_where_the_ridge_interpolates(seed):
    """D > n with an intercept: the centred rows' Gram matrix has the constant vector in its null space, and eigh
    returns that eigenvalue at its rounding (~1e-13 here), not 0. Kept, it added ~rounding / (n α) to every H_ii,
    more than the true 1 - H_ii (~α / λ_j) once α is small: leave-one-out residuals wrong by a factor of 100
    (seed 0: 470 against 3.2) at the interpolating end of a λ grid, which biased the choice towards larger λ."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((40, 100)) * 3 + 5  # far from the origin: the centring removes a large mean
    Y = np.eye(3)[rng.integers(0, 3, 40)]
    alphas = [1e-9, 1e-7, 1e-3]
    path = RidgePath(alphas).fit(X, Y)
    assert path.dual_
    for i, a in enumerate(alphas):
        brute = np.array([Y[j] - Ridge(alpha=a, solver="svd").fit(np.delete(X, j, 0), np.delete(Y, j, 0))
                          .predict(X[j:j + 1])[0] for j in range(len(X))])
        np.testing.assert_allclose(path.loo_residuals(i), brute, atol=0.02 * np.abs(brute).max())


def _min_norm_refits(X, Y, intercept):
    """Leave-one-out residuals of minimum-norm least squares (α = 0) refitted on the other rows."""
    out = []
    for j in range(len(X)):
        Xa, Ya = np.delete(X, j, 0), np.delete(Y, j, 0)
        xm, ym = (Xa.mean(0), Ya.mean(0)) if intercept else (0.0, 0.0)
        out.append(Y[j] - ((X[j] - xm) @ np.linalg.pinv(Xa - xm) @ (Ya - ym) + ym))
    return np.array(out)


@pytest.mark.parametrize("intercept", [False, True])
@pytest.mark.parametrize("n,d,leverage", [(6, 12, False), (30, 30, False), (12, 4, True)])
def test_leave_one_out_at_alpha_zero_refits_the_interpolated_rows(n, d, leverage, intercept):
    """At α = 0 an interpolated row has 0 / 0 in (y - ŷ) / (1 - H_ii): both were rounding noise, floored at 1e-12,
    and the residuals came out near 1e-4 where refitting without the row gives units, so α = 0 won any
    leave-one-out selection whose grid held it. Dual (D > n), D = n, and the primal with a row alone in its
    feature (H_ii = 1 with D < n); the Gram matrix path too."""
    rng = np.random.default_rng(n + d)
    X, Y = rng.standard_normal((n, d)), rng.standard_normal((n, 2))
    if leverage:
        X[:, -1] = 0.0
        X[0, -1] = 1.0
    brute = _min_norm_refits(X, Y, intercept)
    path = RidgePath([0.0, 1e-3], fit_intercept=intercept).fit(X, Y)
    np.testing.assert_allclose(path.loo_residuals(0), brute, atol=1e-8 * np.abs(brute).max())
    if not intercept:
        gram = RidgePath([0.0], fit_intercept=False).fit_gram(X @ X.T, Y)
        np.testing.assert_allclose(gram.loo_residuals(0), brute, atol=1e-8 * np.abs(brute).max())


def test_leave_one_out_of_one_row_is_refused():
    path = RidgePath([0.0, 1.0]).fit(np.ones((1, 3)), np.ones(1))
    with pytest.raises(ValueError, match="at least 2 training rows; got 1"):
        path.loo_residuals(1)


def test_ridge_path_refuses_bad_input_by_name():
    """RidgePath took an empty, negative or NaN α grid, NaN targets and a target of the wrong length (numpy's
    'cannot reshape array of size 5') without a word; each is now an error naming what is wrong."""
    from sklearn.exceptions import NotFittedError

    rng = np.random.RandomState(6)
    X, y = rng.randn(30, 5), rng.randn(30)
    for alphas in ([], [-1.0], [np.nan], [1.0, np.inf], [[1.0, 2.0]], "abc"):
        with pytest.raises(ValueError, match="alphas must be a non-empty 1-D sequence of finite numbers >= 0"):
            RidgePath(alphas)
    RidgePath([0.0]).fit(X, y)  # α = 0: the minimum-norm solution, allowed
    with pytest.raises(ValueError, match="Y contains NaN"):
        RidgePath(ALPHAS).fit(X, np.where(y > 0, np.nan, y))
    with pytest.raises(ValueError, match=r"Y must be \(n,\) or \(n, k\) with n = 30 rows .* got shape \(5,\)"):
        RidgePath(ALPHAS).fit(X, y[:5])
    with pytest.raises(TypeError, match="Y must hold real numbers .*encode class labels"):
        RidgePath(ALPHAS).fit(X, np.where(y > 0, "a", "b"))
    with pytest.raises(ValueError, match="X contains NaN"):
        RidgePath(ALPHAS).fit(np.where(X > 1, np.nan, X), y)
    with pytest.raises(ValueError, match="K must be a square Gram matrix"):
        RidgePath(ALPHAS).fit_gram(X @ X[:10].T, y)
    with pytest.raises(NotFittedError, match="before predict"):
        RidgePath(ALPHAS).predict(X)
    path = RidgePath(ALPHAS).fit(X, y)
    with pytest.raises(ValueError, match="X must be 2-D with 5 features; got shape \\(2, 4\\)"):
        path.predict(X[:2, :4])
    with pytest.raises(ValueError, match="X contains NaN or inf"):
        path.predict(np.full((2, 5), np.inf))
    with pytest.raises(ValueError, match="predict_gram needs a dual solution"):
        path.predict_gram(X[:2] @ X.T)
    gram = RidgePath(ALPHAS).fit_gram(X @ X.T, y)
    with pytest.raises(ValueError, match="fitted on a Gram matrix .* predict_gram"):
        gram.predict(X[:2])
    with pytest.raises(ValueError, match="K_new must be 2-D with 30 columns"):
        gram.predict_gram(X[:2] @ X[:29].T)
