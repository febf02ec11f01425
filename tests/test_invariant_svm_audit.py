"""Findings of an audit of InvariantSVC (stop 64), each a test that fails on the code before its fix."""
import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning
from sklearn.metrics.pairwise import rbf_kernel

from orbitkernels.models import InvariantSVC


def _separable(m=40, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(m, 2))
    y = (X[:, 0] + X[:, 1] > 0).astype(int)
    X[y == 1] += 1
    X[y == 0] -= 1
    return X, y


def _fit(**kw):
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        return InvariantSVC(**kw)


@pytest.mark.parametrize("scale", [100.0, 1000.0, 1e-2])
def test_a_linear_fit_does_not_depend_on_the_datas_units(scale):
    """The block QPs were scaled by diag Q alone: on rows of norm ~1e3 (raw pixels) the objective was ~1e-13,
    under clarabel's absolute tolerances, and the fit "converged" at w 100 times too large in another direction
    (dual objective -8.7e-4) or 58 % above the optimum. f(x) = <w, x> is the same function of the data whatever
    their units: with C / scale^2 (the same problem) w scales as 1 / scale and the objective as 1 / scale^2; with
    the same C too on separable data at scale > 1 (no weight reaches C)."""
    X, y = _separable(seed=1)
    ref = _fit(C=0.05, kernel="linear").fit(X, y)
    assert (ref.dual_coef_ != 0).any() and 0 < ref.primal_objective_
    est = _fit(C=0.05 / scale**2, kernel="linear").fit(X * scale, y)
    assert est.converged_
    np.testing.assert_allclose(est.decision_function(X * scale), ref.decision_function(X), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(est.primal_objective_ * scale**2, ref.primal_objective_, rtol=1e-3)
    assert est.dual_objective_ > 0 and est.dual_objective_ <= est.primal_objective_ * (1 + 1e-9)
    np.testing.assert_allclose(est.dual_objective_, est.primal_objective_, rtol=1e-2)
    if scale > 1:
        hard = _fit(C=1.0, kernel="linear")
        np.testing.assert_allclose(hard.fit(X * scale, y).decision_function(X * scale),
                                   hard.fit(X, y).decision_function(X), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("kernel, params", [("linear", {}), ("rbf", {"gamma": 1.0})])
def test_a_large_C_gives_the_hard_margin_solution_not_zero(kernel, params):
    """Weights below 1e-7 C were snapped to 0: at C = 1e7 every weight was, the fit returned f = 0 (45 % on
    separable training data) after 20 s of passes that could add nothing. On separable data any C above the
    largest weight of the hard-margin solution gives that solution."""
    X, y = _separable()
    hard = _fit(C=1e3, kernel=kernel, **params).fit(X, y)
    big = _fit(C=1e7, kernel=kernel, **params).fit(X, y)
    assert big.converged_ and big.score(X, y) == 1.0
    np.testing.assert_allclose(big.decision_function(X), hard.decision_function(X), rtol=1e-3, atol=1e-3)


def _ops(A):
    return [A, np.roll(A, 1, axis=1), -A, 0.8 * A]


def _oracle(model, x, label):
    best = None
    ci = list(model.classes_).index(label)
    for xs in _ops(x[None, :]):
        S = model.class_scores(xs)[0]
        for c2, lab in enumerate(model.classes_):
            H = S[c2] - S[ci] + (lab != label)
            if best is None or H > best[0]:
                best = (H, xs[0], lab)
    return best[1], best[2]


@pytest.mark.parametrize("max_iter", [1, 2])
def test_an_oracle_fit_stopped_by_max_iter_reports_the_primal_of_the_model_it_returns(max_iter):
    """The loss of each example was the oracle's answer of the last pass, before the later block steps and the
    union's re-optimisation moved the model: 135.9 reported against 128.8 at the returned model."""
    rng = np.random.default_rng(3)
    X, y = rng.normal(size=(40, 4)), rng.integers(0, 3, 40)
    C, gamma = 2.0, 0.3
    with pytest.warns(ConvergenceWarning):
        est = InvariantSVC(C=C, gamma=gamma, oracle=_oracle, max_iter=max_iter).fit(X, y)
    assert not est.converged_
    yi = np.searchsorted(est.classes_, y)
    scores = [est.class_scores(A) for A in _ops(X)]
    loss = np.max([np.max(S - S[np.arange(40), yi][:, None] + (np.arange(3)[None, :] != yi[:, None]), axis=1)
                   for S in scores], axis=0)
    Kv = rbf_kernel(est.support_vectors_, est.support_vectors_, gamma=gamma)
    primal = 0.5 * np.einsum("vc,vu,uc->", est.dual_coef_, Kv, est.dual_coef_) + C * np.maximum(loss, 0).sum()
    np.testing.assert_allclose(est.primal_objective_, primal, rtol=1e-9)


def test_a_negative_cost_is_refused():
    """A negative Delta(y, y, s) was taken: the dual (whose zero-loss slack assumes a loss >= 0) solved another
    problem, and the fit reported a primal objective of -16.2 below its dual 3.7, as converged."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 4))
    y = (X[:, 0] > 0).astype(int)
    with pytest.raises(ValueError, match=r"cost\(0, 0, s\) returned -1.0: Delta must be non-negative"):
        InvariantSVC(kernel="linear", cost=lambda a, b, s: -1.0 if a == b else 1.0).fit(X, y)
