"""The estimators as a scikit-learn user combines them: pipelines, unions, column transformers, model
selection (in worker processes too), clone / pickle / deepcopy, pandas output and metadata routing.

Tiny data throughout: each test runs in about a second (the n_jobs=2 ones start loky workers: ``slow``).
"""
import copy
import io
import warnings

import joblib
import numpy as np
import pandas as pd
import pytest
import sklearn
from sklearn.base import clone
from sklearn.compose import ColumnTransformer
from sklearn.kernel_approximation import Nystroem
from sklearn.kernel_ridge import KernelRidge
from sklearn.linear_model import LogisticRegression, RidgeClassifier
from sklearn.model_selection import GridSearchCV, cross_val_score, cross_validate
from sklearn.pipeline import FeatureUnion, make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC
from sklearn.utils import estimator_html_repr

from orbitkernels.features import GroupCDFFeatures, OrbitFourierFeatures, OrbitNystroem
from orbitkernels.groups import CyclicShift, ImageRotation, VonMises
from orbitkernels.kernels import HaarKernel
from orbitkernels.models import DistributedRidgeClassifier, InvariantSVC


def _maps(d):
    return [GroupCDFFeatures(CyclicShift(d), n_templates=3, n_bins=2, random_state=0),
            OrbitFourierFeatures(CyclicShift(d), n_components=4, random_state=0),
            OrbitNystroem(CyclicShift(d), n_components=4, random_state=0)]


@pytest.fixture
def data(rng):
    X = rng.normal(size=(40, 6))
    return X, (X[:, 0] + X[:, 3] > 0).astype(int)


# ---------------------------------------------------------------- HaarKernel where a kernel gets single rows
@pytest.mark.parametrize("make", [lambda k: KernelRidge(kernel=k), lambda k: Nystroem(kernel=k, n_components=4)])
def test_haar_kernel_called_per_pair_of_rows_names_the_cause(data, make):
    # pairwise_kernels (KernelRidge, Nystroem, KernelPCA) calls a callable on single rows: the error was
    # "X must be 2-D ... Reshape a single sample", about an X the user never passed
    X, y = data
    with pytest.raises(ValueError, match="precomputed"):
        make(HaarKernel(CyclicShift(6), gamma=0.5)).fit(X, y)


def test_haar_kernel_gram_matrices_in_kernel_ridge(data):
    X, y = data
    k = HaarKernel(CyclicShift(6), gamma=0.5)
    model = KernelRidge(kernel="precomputed", alpha=0.1).fit(k(X[:30]), y[:30])
    pred = model.predict(k(X[30:], X[:30]))
    assert pred.shape == (10,) and np.isfinite(pred).all()
    # a shifted copy of the test rows gets the same predictions: the kernel is invariant
    np.testing.assert_allclose(model.predict(k(np.roll(X[30:], 2, axis=1), X[:30])), pred, atol=1e-10)


# ---------------------------------------------------------------- InvariantSVC with a HaarKernel
def test_invariant_svc_set_params_of_its_kernel_after_fit_changes_no_prediction(data):
    X, y = data
    clf = InvariantSVC(kernel=HaarKernel(CyclicShift(6), gamma=0.1), max_iter=20).fit(X, y)
    before = clf.decision_function(X)
    clf.set_params(kernel__gamma=10.0)  # the HaarKernel dropped what it had resolved: predictions moved
    np.testing.assert_array_equal(clf.decision_function(X), before)


def test_invariant_svc_refit_resolves_its_kernel_again(data):
    X, y = data
    clf = InvariantSVC(kernel=HaarKernel(CyclicShift(6), gamma="scale"), max_iter=20)
    clf.fit(X, y).fit(10 * X, y)  # the second fit kept gamma="scale" of the first X
    fresh = InvariantSVC(kernel=HaarKernel(CyclicShift(6), gamma="scale"), max_iter=20).fit(10 * X, y)
    np.testing.assert_allclose(clf.decision_function(10 * X), fresh.decision_function(10 * X), rtol=1e-10)
    assert clf._kernel_fitted.gamma_ == pytest.approx(fresh._kernel_fitted.gamma_)


def test_invariant_svc_keeps_a_kernel_resolved_on_purpose(data):
    X, y = data
    k = HaarKernel(CyclicShift(6), gamma="scale").fit(100 * X)
    clf = InvariantSVC(kernel=k, max_iter=5).fit(X, y)
    assert clf._kernel_fitted.gamma_ == k.gamma_  # a copy, not a clone: the caller's fit stays


# ---------------------------------------------------------------- what works (kept working)
@pytest.mark.parametrize("i", range(3))
def test_map_in_pipelines_with_sklearn_models(data, i):
    X, y = data
    for last in (RidgeClassifier(), LogisticRegression(), SVC()):
        model = make_pipeline(StandardScaler(), _maps(6)[i], last).fit(X, y)
        assert 0.0 <= model.score(X, y) <= 1.0


def test_pandas_output_through_column_transformer_and_union(data):
    X, _ = data
    df = pd.DataFrame(X, columns=list("abcdef"), index=np.arange(100, 140))
    df["z"] = 1.0
    ct = ColumnTransformer([(f"m{i}", m, list("abcdef")) for i, m in enumerate(_maps(6))], remainder="passthrough")
    out = ct.set_output(transform="pandas").fit_transform(df)
    assert isinstance(out, pd.DataFrame) and out.columns.is_unique
    assert list(out.index) == list(df.index) and out.columns[-1] == "remainder__z"
    union = FeatureUnion([("a", _maps(6)[1]), ("b", clone(_maps(6)[1]).set_params(random_state=1))])
    assert union.set_output(transform="pandas").fit_transform(df[list("abcdef")]).columns.is_unique
    with sklearn.config_context(transform_output="pandas"):
        out = _maps(6)[0].fit_transform(df[list("abcdef")].astype(np.float32))
    assert isinstance(out, pd.DataFrame) and (out.dtypes == np.float32).all()


def test_clone_pickle_deepcopy_of_fitted_pipeline(data):
    X, y = data
    model = make_pipeline(OrbitFourierFeatures(ImageRotation((12, 12), angle=VonMises(2.0)), n_components=4,
                                               random_state=0), RidgeClassifier())
    Xi = np.abs(np.resize(X, (40, 144)))
    model.fit(Xi, y)
    buf = io.BytesIO()
    joblib.dump(model, buf)
    buf.seek(0)
    np.testing.assert_array_equal(joblib.load(buf).decision_function(Xi), model.decision_function(Xi))
    np.testing.assert_array_equal(copy.deepcopy(model).decision_function(Xi), model.decision_function(Xi))
    assert not hasattr(clone(model)[0], "plan_")
    assert "OrbitFourierFeatures" in estimator_html_repr(model)


def test_grid_search_over_map_and_group_parameters(data):
    X, y = data
    pipe = make_pipeline(OrbitFourierFeatures(CyclicShift(6), n_components=4, random_state=0), RidgeClassifier())
    grid = {"orbitfourierfeatures__gamma": [0.1, 1.0],
            "orbitfourierfeatures__group": [CyclicShift(6), None]}
    gs = GridSearchCV(pipe, grid, cv=2, error_score="raise").fit(X, y)
    assert set(gs.best_params_) == set(grid)


def test_metadata_routing_refuses_sample_weight_clearly(data):
    X, y = data
    with sklearn.config_context(enable_metadata_routing=True):
        with pytest.raises(TypeError, match="sample_weight"):
            make_pipeline(_maps(6)[1], DistributedRidgeClassifier()).fit(X, y, sample_weight=np.ones(len(y)))
        # params={}: scikit-learn 1.6 (the oldest pins) unpacks params=None with ** when routing is on (a TypeError
        # inside cross_validate, whatever the estimator)
        assert cross_val_score(make_pipeline(_maps(6)[1], DistributedRidgeClassifier()), X, y, cv=2,
                               params={}).shape == (2,)


@pytest.mark.slow
def test_model_selection_in_worker_processes(data):
    X, y = data
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # InvariantSVC's ConvergenceWarning at max_iter=5
        for est in (make_pipeline(_maps(6)[0], RidgeClassifier()), make_pipeline(_maps(6)[2], RidgeClassifier()),
                    SVC(kernel=HaarKernel(CyclicShift(6), gamma=0.5)),
                    InvariantSVC(kernel=HaarKernel(CyclicShift(6), gamma=0.5), max_iter=5)):
            one = cross_validate(est, X, y, cv=2, n_jobs=1)["test_score"]
            two = cross_validate(est, X, y, cv=2, n_jobs=2, return_estimator=True)
            np.testing.assert_array_equal(two["test_score"], one)
        gs = GridSearchCV(SVC(kernel=HaarKernel(CyclicShift(6))), {"kernel__gamma": [0.1, 1.0]}, cv=2, n_jobs=2)
        assert gs.fit(X, y).best_params_["kernel__gamma"] in (0.1, 1.0)
