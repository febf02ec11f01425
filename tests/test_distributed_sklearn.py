"""DistributedRidge / DistributedRidgeClassifier: scikit-learn's estimator checks on numpy input, and the same
refusals on dask input, where finiteness is counted blockwise on the workers instead of on the client."""

import numpy as np
import pytest
import scipy.sparse
from sklearn.exceptions import DataConversionWarning
from sklearn.linear_model import RidgeClassifier
from sklearn.utils.estimator_checks import parametrize_with_checks

from orbitkernels.models import DistributedRidge, DistributedRidgeClassifier

pytestmark = pytest.mark.timeout(120)


# Every check passes: no expected failures to declare.
@parametrize_with_checks([DistributedRidge(), DistributedRidgeClassifier()])
def test_sklearn_estimator_checks(estimator, check):
    check(estimator)


def test_binary_decision_function_is_ridge_classifiers(rng):
    X, y = rng.normal(size=(60, 5)), np.repeat(["a", "b"], 30)
    ours = DistributedRidgeClassifier(alphas=[0.5]).fit(X, y)
    sk = RidgeClassifier(alpha=0.5).fit(X, y)
    assert ours.coef_.shape == (1, 5)
    np.testing.assert_allclose(ours.decision_function(X), sk.decision_function(X), rtol=1e-10, atol=1e-12)
    np.testing.assert_array_equal(ours.predict(X), sk.predict(X))


def test_validation_set_is_checked_like_the_training_set(rng):
    X, y = rng.normal(size=(40, 5)), rng.normal(size=40)
    grid = [0.1, 1.0]
    with pytest.raises(ValueError, match="X_val and y_val must be given together"):
        DistributedRidge(alphas=grid).fit(X, y, X_val=X[:5])
    with pytest.raises(ValueError, match="X_val has 4 features, but DistributedRidge is expecting 5"):
        DistributedRidge(alphas=grid).fit(X, y, X_val=X[:5, :4], y_val=y[:5])
    with pytest.raises(ValueError, match="inconsistent numbers of samples"):
        DistributedRidge(alphas=grid).fit(X, y, X_val=X[:5], y_val=y[:4])
    with pytest.raises(ValueError, match="Input X_val contains NaN"):
        DistributedRidge(alphas=grid).fit(X, y, X_val=np.where(np.eye(5) > 0, np.nan, X[:5]), y_val=y[:5])
    with pytest.raises(ValueError, match=r"y_val has 2 output\(s\)"):
        DistributedRidge(alphas=grid).fit(X, y, X_val=X[:5], y_val=np.c_[y[:5], y[:5]])


# --------------------------------------------------------------------------- dask
try:
    import dask.array as da
    import distributed
except ImportError:  # the [dask] extra is optional; the estimator checks above do not need it
    da = distributed = None

needs_dask = pytest.mark.skipif(da is None, reason="needs the [dask] extra")


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(120, 6))
    return X, X[:, 0] - 2 * X[:, 3] + 0.1 * rng.normal(size=120)


@needs_dask
def test_nan_inside_one_block_is_found_by_the_workers(client, data):
    X, y = data
    Xbad = X.copy()
    Xbad[95, 2], Xbad[100, 4] = np.nan, np.inf  # both in the fourth block of 30 rows, far from the first
    Xd, yd = da.from_array(Xbad, chunks=(30, -1)), da.from_array(y, chunks=30)
    for alphas in ([1.0], [0.1, 1.0, 10.0]):  # with and without the validation pass
        with pytest.raises(ValueError, match="Input X contains NaN or infinity: 2 non-finite entries"):
            DistributedRidge(alphas=alphas).fit(Xd, yd)
    ybad = y.copy()
    ybad[61] = np.nan
    with pytest.raises(ValueError, match="Input y contains NaN or infinity: 1 non-finite"):
        DistributedRidge().fit(da.from_array(X, chunks=(30, -1)), da.from_array(ybad, chunks=30))
    good = da.from_array(X, chunks=(30, -1))
    with pytest.raises(ValueError, match="Input X_val contains NaN or infinity: 2 non-finite"):
        DistributedRidge(alphas=[0.1, 1.0]).fit(good, da.from_array(y, chunks=30), X_val=Xd, y_val=yd)
    # at predict time the blocks refuse non-finite rows when computed rather than scoring them NaN
    model = DistributedRidgeClassifier(alphas=[1.0]).fit(good, da.from_array(y > 0, chunks=30))
    with pytest.raises(ValueError, match="Input X contains NaN"):
        client.compute(model.predict(Xd)).result(timeout=60)


@needs_dask
def test_mismatched_lengths_and_malformed_dask_input(client, data):
    X, y = data
    Xd, yd = da.from_array(X, chunks=(30, -1)), da.from_array(y, chunks=30)
    match = "inconsistent numbers of samples: X has 120 rows but y has 100"
    with pytest.raises(ValueError, match=match):
        DistributedRidge().fit(Xd, yd[:100])
    with pytest.raises(ValueError, match=match):
        DistributedRidge().fit(X, yd[:100])  # numpy X, dask y
    with pytest.raises(ValueError, match="X_val has 30 rows but y_val has 20"):
        DistributedRidge().fit(Xd, yd, X_val=Xd[:30], y_val=yd[:20])
    with pytest.raises(ValueError, match="X has dtype complex128: complex data is not supported"):
        DistributedRidge().fit(Xd + 1j, yd)
    with pytest.raises(ValueError, match="y has dtype object"):
        DistributedRidge().fit(Xd, yd.astype(object))
    with pytest.raises(ValueError, match="X must be 2-D"):
        DistributedRidge().fit(Xd[:, 0], yd)
    with pytest.raises(ValueError, match=r"0 feature\(s\)"):
        DistributedRidge().fit(Xd[:, :0], yd)
    with pytest.raises(ValueError, match="y has unknown chunk sizes"):
        DistributedRidge().fit(Xd, yd[yd > 0])
    with pytest.raises(TypeError, match="sparse"):
        DistributedRidge().fit(Xd.map_blocks(scipy.sparse.csr_matrix), yd)
    with pytest.raises(ValueError, match="Unknown label type"):
        DistributedRidgeClassifier().fit(Xd, yd)
    with pytest.raises(ValueError, match="requires y to be passed"):
        DistributedRidge().fit(Xd, None)
    model = DistributedRidge(alphas=[1.0]).fit(Xd, yd)
    with pytest.raises(ValueError, match="X has 5 features, but DistributedRidge is expecting 6"):
        model.predict(Xd[:, :5])


@needs_dask
def test_dask_binary_classifier_and_column_y(client, data):
    X, y = data
    labels = np.where(y > 0, "pos", "neg")
    Xd = da.from_array(X, chunks=(30, -1))
    with pytest.warns(DataConversionWarning, match="column-vector y"):
        dist = DistributedRidgeClassifier(alphas=[0.5]).fit(Xd, da.from_array(labels[:, None], chunks=(30, 1)))
    mem = DistributedRidgeClassifier(alphas=[0.5]).fit(X, labels)
    score = dist.decision_function(Xd)
    assert isinstance(score, da.Array) and score.ndim == 1
    np.testing.assert_allclose(client.compute(score).result(timeout=60), mem.decision_function(X), rtol=1e-10)
    np.testing.assert_array_equal(client.compute(dist.predict(Xd)).result(timeout=60), mem.predict(X))
