"""FSCALE / FDROP (Teo et al. 2007, Eq. 10, Algorithm 3): brute force, sparse, training, attack."""
import itertools
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import MaxAbsScaler

from orbitkernels.models import (InvariantLinearClassifier, fscale_worst_case, worst_case_attack,
                                 worst_case_scaling)


def _brute_force_margin(x, y, w, K, l, u):
    """min over the set of Eq. (10) of y <w, x'>: every subset of <= K features, each scaled by l or u
    (the margin is linear in each factor, so an end of [l, u] is optimal)."""
    d = len(x)
    best = y * w @ x
    for k in range(1, min(K, d) + 1):
        for subset in itertools.combinations(range(d), k):
            for factors in itertools.product((l, u), repeat=k):
                a = np.ones(d)
                a[list(subset)] = factors
                best = min(best, y * w @ (a * x))
    return best


CASES = [(K, l, u) for K in (0, 1, 2, 3) for (l, u) in ((0.0, 1.0), (0.5, 2.0), (0.0, 3.0), (1.0, 1.5))]


@pytest.mark.parametrize("K, l, u", CASES)
def test_algorithm3_equals_brute_force(K, l, u):
    rng = np.random.default_rng(K * 10 + int(4 * l + u))
    for trial in range(25):
        d = int(rng.integers(1, 7))
        x = rng.normal(size=d) * (rng.random(d) < 0.8)
        w = rng.normal(size=d)
        y = int(rng.choice([-1, 1]))
        target = _brute_force_margin(x, y, w, K, l, u)
        xs, alpha = fscale_worst_case(x, y, w, K, l, u, return_scaling=True)
        assert y * w @ xs == pytest.approx(target, abs=1e-10)
        assert np.sum(alpha != 1.0) <= K and np.all((alpha >= l) & (alpha <= u))
        # the whole-matrix version, dense and CSR, gives the same optimum row by row
        X = np.vstack([x, -x, 2 * x])
        Y = np.array([y, -y, y])
        Wd = worst_case_scaling(X, Y, w, K, l, u)
        Ws = worst_case_scaling(sp.csr_matrix(X), Y, w, K, l, u)
        assert sp.issparse(Ws)
        for r in range(3):
            t = _brute_force_margin(X[r], Y[r], w, K, l, u)
            assert Y[r] * w @ Wd[r] == pytest.approx(t, abs=1e-10)
            assert Y[r] * w @ Ws.toarray()[r] == pytest.approx(t, abs=1e-10)
        # a sparse single row
        xs_sp = fscale_worst_case(sp.csr_matrix(x[None, :]), y, w, K, l, u)
        assert y * w @ xs_sp.toarray()[0] == pytest.approx(target, abs=1e-10)


def test_worst_case_scaling_large_sparse_matches_dense():
    rng = np.random.default_rng(0)
    X = sp.random(50, 300, density=0.05, format="csr", random_state=1)
    w = rng.normal(size=300)
    y = rng.choice([-1.0, 1.0], size=50)
    A = worst_case_scaling(X, y, w, 7, 0.5, 4.0)
    B = worst_case_scaling(X.toarray(), y, w, 7, 0.5, 4.0)
    np.testing.assert_allclose(y * (A @ w), y * (B @ w), atol=1e-12)
    for i in range(50):
        ref = fscale_worst_case(X[i].toarray()[0], y[i], w, 7, 0.5, 4.0)
        assert y[i] * w @ ref == pytest.approx(y[i] * (A[i] @ w), abs=1e-12)
    assert X.nnz == sp.csr_matrix(X).nnz  # input left untouched
    with pytest.raises(ValueError, match="l must be <= u"):
        worst_case_scaling(X, y, w, 1, 2.0, 1.0)
    with pytest.raises(ValueError, match="K must be >= 0"):
        worst_case_scaling(X, y, w, -1)
    with pytest.raises(ValueError, match="y must contain only -1 and \\+1"):
        worst_case_scaling(X, np.zeros(50), w, 1)


def _text_like(rng, n=400, d=60):
    """Binary bag-of-words: the label is carried redundantly by 20 words, two of them much stronger."""
    y = rng.choice([-1, 1], size=n)
    X = (rng.random((n, d)) < 0.1).astype(float)
    informative = np.arange(20)
    p = np.where(y[:, None] > 0, 0.5, 0.05)
    X[:, informative] = (rng.random((n, 20)) < p).astype(float)
    X[:, :2] = (y[:, None] > 0) * (rng.random((n, 2)) < 0.95)
    return X, y


def test_fdrop_is_robust_to_feature_deletion_where_hinge_is_not():
    rng = np.random.default_rng(0)
    X, y = _text_like(rng)
    Xt, yt = _text_like(np.random.default_rng(1))
    hinge = InvariantLinearClassifier(loss="hinge", lam=1e-3, max_iter=40, random_state=0).fit(X, y)
    fdrop = InvariantLinearClassifier(loss="fdrop", K=4, lam=1e-3, max_iter=40, random_state=0).fit(X, y)
    acc = {}
    for name, m in (("hinge", hinge), ("fdrop", fdrop)):
        Xa = worst_case_attack(m, Xt, 4, mode="drop", y=yt)
        acc[name] = np.mean(m.predict(Xa) == yt)
        # Lemma 2 for the binary case: the invariant loss bounds the 0/1 error under the worst deletion
        bound = InvariantLinearClassifier(loss="fdrop", K=4)
        bound.classes_, bound.coef_, bound.intercept_, bound.n_features_in_ = m.classes_, m.coef_, m.intercept_, 60
        loss = bound.invariant_loss(Xt, yt)
        assert np.all(loss >= (m.predict(Xa) != yt) - 1e-12)
    assert acc["fdrop"] > acc["hinge"] + 0.05
    # FDROP spreads its weight: the largest weights carry less of the total
    w_h, w_f = np.abs(hinge.coef_[0]), np.abs(fdrop.coef_[0])
    assert np.sort(w_f)[-2:].sum() / w_f.sum() < np.sort(w_h)[-2:].sum() / w_h.sum()


def test_k_zero_reduces_to_hinge():
    rng = np.random.default_rng(2)
    X, y = _text_like(rng, n=200)
    h = InvariantLinearClassifier(loss="hinge", lam=1e-2, max_iter=10, random_state=3).fit(X, y)
    for loss in ("fdrop", "fscale"):
        m = InvariantLinearClassifier(loss=loss, K=0, l=0.5, u=2.0, lam=1e-2, max_iter=10, random_state=3).fit(X, y)
        np.testing.assert_allclose(m.coef_, h.coef_)
        np.testing.assert_allclose(m.intercept_, h.intercept_)
    m = InvariantLinearClassifier(loss="fdrop", K=3, lam=1e-2, max_iter=10, random_state=3).fit(X, y)
    assert not np.allclose(m.coef_, h.coef_)


def test_pegasos_objective_decreases_and_sparse_input():
    rng = np.random.default_rng(3)
    X, y = _text_like(rng, n=300)
    lam = 1e-2

    def objective(m):
        return 0.5 * lam * (np.sum(m.coef_ ** 2) + m.intercept_[0] ** 2) + m.invariant_loss(X, y).mean()

    a = InvariantLinearClassifier(loss="fscale", K=3, l=0.5, u=2.0, lam=lam, max_iter=1, random_state=0).fit(X, y)
    b = InvariantLinearClassifier(loss="fscale", K=3, l=0.5, u=2.0, lam=lam, max_iter=30, random_state=0).fit(X, y)
    assert objective(b) < objective(a) < 1.0  # 1.0 is the objective at w = 0
    s = InvariantLinearClassifier(loss="fscale", K=3, l=0.5, u=2.0, lam=lam, max_iter=30,
                                  random_state=0).fit(sp.csr_matrix(X), y)
    np.testing.assert_allclose(s.coef_, b.coef_, atol=1e-10)


def test_attack_uses_true_labels_and_bad_input():
    rng = np.random.default_rng(4)
    X, y = _text_like(rng, n=200)
    labels = np.where(y > 0, "spam", "ham")
    m = InvariantLinearClassifier(loss="hinge", lam=1e-2, max_iter=10, random_state=0).fit(X, labels)
    Xa = worst_case_attack(m, X, 3, mode="drop", y=labels)
    ys = np.where(labels == m.classes_[1], 1, -1)
    assert np.all(ys * m.decision_function(Xa) <= ys * m.decision_function(X) + 1e-12)
    assert np.all((Xa != X).sum(axis=1) <= 3)
    with pytest.raises(ValueError, match="mode must be"):
        worst_case_attack(m, X, 3, mode="insert")
    with pytest.raises(ValueError, match="y has labels outside"):
        worst_case_attack(m, X, 3, y=np.full(200, "eggs"))
    with pytest.raises(ValueError, match="'loss' parameter.*'logistic'"):
        InvariantLinearClassifier(loss="logistic").fit(X, y)
    with pytest.raises(ValueError, match="lam"):
        InvariantLinearClassifier(lam=0).fit(X, y)
    with pytest.raises(ValueError, match="binary"):
        InvariantLinearClassifier().fit(X, np.arange(200) % 3)


def test_sklearn_conformity_pipeline_and_gridsearch():
    from sklearn.utils.estimator_checks import check_estimator

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check_estimator(InvariantLinearClassifier(loss="fscale", K=2, l=0.5, u=2.0, max_iter=5, random_state=0))
    rng = np.random.default_rng(5)
    X, y = _text_like(rng, n=200)
    pipe = make_pipeline(MaxAbsScaler(), InvariantLinearClassifier(loss="fdrop", max_iter=10, random_state=0))
    gs = GridSearchCV(pipe, {"invariantlinearclassifier__K": [0, 3], "invariantlinearclassifier__lam": [1e-3, 1e-2]},
                      cv=3).fit(sp.csr_matrix(X), y)
    assert gs.best_score_ > 0.8
