"""The GURLS-style RLS of the Mroueh reproduction: λ selection paths and robustness."""
import numpy as np
import pytest

from orbitkernels.experiments._mroueh_rls import gurls_loo_rls, rls_fit_predict


def _blobs(rng, n_per=60, d=5):
    y = np.repeat(np.arange(3), n_per)
    X = rng.normal(size=(len(y), d)) + 3.0 * np.eye(3, d)[y]
    return X, y


def test_holdout_survives_an_indefinite_gram_matrix(rng):
    """A Gram matrix from float32 features can be indefinite by rounding; the smallest λ must not abort the run."""
    X, y = _blobs(rng)
    Xt, yt = _blobs(np.random.default_rng(1))
    K = X @ X.T
    v = rng.normal(size=len(X))
    v /= np.linalg.norm(v)
    K_bad = K - 1e-3 * np.outer(v, v) * np.trace(K) / len(K)  # one clearly negative eigenvalue
    assert np.linalg.eigvalsh(K_bad).min() < 0
    out = rls_fit_predict(K_bad, y, Xt @ X.T, kernel=True, eig_limit=10)  # forces the hold-out path
    assert out["selection"] == "holdout"
    assert np.mean(out["pred"] == yt) > 0.9


def test_primal_dual_and_kernel_forms_agree(rng):
    X, y = _blobs(rng)
    Xt, _ = _blobs(np.random.default_rng(2))
    a = rls_fit_predict(X, y, Xt)  # primal (D < N), exact leave-one-out
    b = rls_fit_predict(X @ X.T, y, Xt @ X.T, kernel=True)  # dual on the linear Gram matrix
    assert a["selection"] == b["selection"] == "loo"
    assert a["rel_lambda"] == b["rel_lambda"]
    np.testing.assert_array_equal(a["pred"], b["pred"])


def test_holdout_matches_a_ridge_fit_by_scikit_learn(rng):
    """The hold-out branch (the ridge-path solver on 80% of the rows, λ by validation accuracy, refit on all)
    against an independent computation with sklearn's Ridge in the same α = N λ convention."""
    from sklearn.linear_model import Ridge

    from orbitkernels.experiments._mroueh_rls import HOLDOUT_GRID

    X, y = _blobs(rng, d=8)
    X = X + 0.8 * rng.normal(size=X.shape)  # overlapping classes, so that λ matters
    Xt, _ = _blobs(np.random.default_rng(3), d=8)
    out = rls_fit_predict(X, y, Xt, eig_limit=2, seed=5)
    assert out["selection"] == "holdout" and out["solver"] == "primal"

    n = len(y)
    Y = np.where(y[:, None] == np.arange(3)[None, :], 1.0, -1.0)
    scale = ((X - X.mean(0)) ** 2).sum() / n
    perm = np.random.default_rng(5).permutation(n)
    va, tr = np.sort(perm[: round(0.2 * n)]), np.sort(perm[round(0.2 * n):])
    keys = []
    for rel in HOLDOUT_GRID:
        p = Ridge(alpha=rel * scale * len(tr) / n).fit(X[tr], Y[tr]).predict(X[va])
        keys.append((-np.mean(p.argmax(1) == y[va]), np.mean((p - Y[va]) ** 2)))
    i = min(range(len(keys)), key=keys.__getitem__)
    assert out["rel_lambda"] == HOLDOUT_GRID[i]
    assert np.isclose(out["val_accuracy"], -keys[i][0])
    ref = Ridge(alpha=HOLDOUT_GRID[i] * scale).fit(X, Y).predict(Xt).argmax(1)
    np.testing.assert_array_equal(out["pred"], ref)


def test_holdout_feature_and_gram_forms_agree(rng):
    X, y = _blobs(rng, d=8)
    Xt, _ = _blobs(np.random.default_rng(4), d=8)
    a = rls_fit_predict(X, y, Xt, eig_limit=2)
    b = rls_fit_predict(X @ X.T, y, Xt @ X.T, kernel=True, eig_limit=2)
    assert a["selection"] == b["selection"] == "holdout"
    assert a["rel_lambda"] == b["rel_lambda"]
    np.testing.assert_array_equal(a["pred"], b["pred"])


def _naive_gurls(K, y, Kt, classes, n_lambda):
    """GURLS's loocvdual + rls_dual written out: the λ grid from the spectrum, leave-one-out by refitting without
    each row, per-class recall, one λ per class, no intercept."""
    n = len(K)
    Y = np.where(y[:, None] == np.asarray(classes)[None, :], 1.0, -1.0)
    ev = np.linalg.eigvalsh(K)
    ev = ev[ev > 200 * np.sqrt(np.finfo(float).eps)]
    lmin, lmax = ev.min() / n, ev.max() / n
    guesses = [lmin * (lmax / lmin) ** (i / n_lambda) for i in range(1, n_lambda + 1)]
    recall = np.zeros((n_lambda, len(classes)))
    for g, lam in enumerate(guesses):
        loo = np.zeros_like(Y)
        for i in range(n):
            keep = np.arange(n) != i
            # the GURLS system on the n rows, with row i's equation removed: the LOO prediction of the full-size
            # regularisation (K + nλI), as GURLS's closed form C / diag(G) computes it
            c = np.linalg.solve(K[np.ix_(keep, keep)] + n * lam * np.eye(n - 1), Y[keep])
            loo[i] = K[i, keep] @ c
        lab = np.asarray(classes)[loo.argmax(1)]
        recall[g] = [np.mean(lab[y == c] == c) for c in classes]
    best = recall.argmax(0)
    scores = np.stack([Kt @ np.linalg.solve(K + n * guesses[b] * np.eye(n), Y[:, t]) for t, b in enumerate(best)], 1)
    return np.asarray(classes)[scores.argmax(1)], np.asarray(guesses)[best], recall


def test_gurls_selection_matches_leave_one_out_by_refitting(rng):
    """Per-class λ by leave-one-out recall on GURLS's spectral grid: the closed form against explicit refits."""
    X, y = _blobs(rng, n_per=15, d=6)
    Xt, yt = _blobs(np.random.default_rng(3), n_per=15, d=6)
    X[:, :3] *= 0.3  # classes that are not equally easy: different λ per class
    K, Kt = np.exp(-0.1 * ((X[:, None] - X[None]) ** 2).sum(-1)), np.exp(-0.1 * ((Xt[:, None] - X[None]) ** 2).sum(-1))
    out = gurls_loo_rls(K, y, Kt, n_lambda=8)
    pred, lambdas, recall = _naive_gurls(K, y, Kt, [0, 1, 2], 8)
    np.testing.assert_allclose(out["loo_recall"], recall)
    np.testing.assert_allclose(out["lambdas"], lambdas)
    assert len(set(out["lambdas"])) > 1  # the classes chose different λ: the per-class rule is what is tested
    np.testing.assert_array_equal(out["pred"], pred)
    assert np.mean(out["pred"] == yt) > 0.8


def test_gurls_selection_validates_and_handles_two_classes(rng):
    X, y = _blobs(rng, n_per=20)
    keep = y < 2
    X, y = X[keep], y[keep]
    out = gurls_loo_rls(X @ X.T, y, X[:7] @ X.T)
    assert out["lambdas"].shape == (1,) and out["loo_recall"].shape == (20, 1)
    assert np.mean(out["pred"] == y[:7]) > 0.8
    with pytest.raises(ValueError, match="K_test must have"):
        gurls_loo_rls(X @ X.T, y, X[:7] @ X[:5].T)
    with pytest.raises(ValueError, match="no eigenvalue"):
        gurls_loo_rls(np.zeros((len(y), len(y))), y, np.zeros((3, len(y))))
