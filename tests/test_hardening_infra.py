"""Regressions found by running the library: each test failed before its fix."""
from __future__ import annotations

import numpy as np
import pytest
from sklearn.linear_model import Ridge
from sklearn.utils._param_validation import InvalidParameterError

from orbitkernels.distributed import DistributedRidge, DistributedRidgeClassifier

pytestmark = pytest.mark.timeout(120)


# ----------------------------------------------------------------------------- 1. DistributedRidge parameters
@pytest.mark.parametrize("alphas", [[np.nan], [1.0, np.nan], [np.inf], [-1.0], [], "abc", [[1.0, 2.0]]])
@pytest.mark.parametrize("cls", [DistributedRidge, DistributedRidgeClassifier])
def test_non_finite_or_negative_alphas_are_refused(cls, alphas, rng):
    X, y = rng.normal(size=(40, 3)), np.repeat([0, 1], 20)
    with pytest.raises(ValueError, match="alphas"):
        cls(alphas=alphas).fit(X, y)


@pytest.mark.parametrize("params", [{"fit_intercept": "no"}, {"validation_fraction": "0.5"},
                                    {"validation_fraction": 1.0}, {"validation_fraction": np.nan},
                                    {"refit": "yes"}, {"split_every": 1}, {"split_every": 2.5},
                                    {"random_state": "seed"}])
@pytest.mark.parametrize("cls", [DistributedRidge, DistributedRidgeClassifier])
def test_parameters_are_validated_at_fit_like_scikit_learn(cls, params, rng):
    X, y = rng.normal(size=(40, 3)), np.repeat([0, 1], 20)
    name = next(iter(params))
    with pytest.raises(InvalidParameterError, match=f"'{name}' parameter of {cls.__name__}"):
        cls(alphas=[0.1, 1.0], **params).fit(X, y)


@pytest.mark.parametrize("random_state", [np.random.RandomState(3), np.random.default_rng(3), None, 7])
def test_random_state_may_be_a_random_source(random_state, rng):
    X = rng.normal(size=(60, 4))
    y = X @ np.arange(1.0, 5.0) + 0.1 * rng.normal(size=60)
    model = DistributedRidge(alphas=[0.01, 1.0, 100.0], random_state=random_state).fit(X, y)
    assert np.isfinite(model.coef_).all() and model.alpha_ in (0.01, 1.0, 100.0)


def test_alpha_zero_on_collinear_columns_is_the_minimum_norm_solution(rng):
    X = rng.normal(size=(50, 4))
    y = X @ np.array([1.0, -2.0, 0.5, 3.0]) + 1.5
    Xc = np.hstack([X, X])  # rank 4 of 8 columns: the Gram matrix is singular
    ours = DistributedRidge(alphas=[0.0]).fit(Xc, y)
    sk = Ridge(alpha=0.0).fit(Xc, y)
    assert np.isfinite(ours.coef_).all() and ours.alpha_ == 0.0
    np.testing.assert_allclose(ours.predict(Xc), y, atol=1e-8)
    np.testing.assert_allclose(ours.predict(Xc), sk.predict(Xc), atol=1e-8)
    # the minimum-norm solution splits each weight equally between the two copies of a column
    coef = ours.coef_.ravel()
    np.testing.assert_allclose(coef[:4], coef[4:], atol=1e-8)
    clf = DistributedRidgeClassifier(alphas=[0.0, 1.0]).fit(Xc, (y > np.median(y)).astype(int))
    assert np.isfinite(clf.decision_function(Xc)).all()


# ----------------------------------------------------------------------------- 2. invariance_error on labels
def test_invariance_error_of_predict_with_string_labels(rng):
    from sklearn.linear_model import LogisticRegression

    from orbitkernels.diagnostics import invariance_error
    from orbitkernels.groups import ImageRotation

    X = rng.random((40, 36))
    y = np.where(X[:, 0] > 0.5, "cat", "dog")
    model = LogisticRegression().fit(X, y)
    group = ImageRotation((6, 6), n_angles=4)
    out = invariance_error(model, X, group, n_elements=None, method="predict")
    assert out["method"] == "predict" and 0.0 <= out["mean"] <= out["max"] <= 1.0
    # for labels the relative change is the share of changed predictions: 1 - agreement
    assert out["mean"] == pytest.approx(1.0 - out["agreement"])
    numeric = LogisticRegression().fit(X, (y == "cat").astype(int))
    num = invariance_error(numeric, X, group, n_elements=None, method="predict")
    assert np.isfinite(num["mean"])
