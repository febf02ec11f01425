"""pandas inputs and outputs, as a scikit-learn user passes them: DataFrames in, ``set_output(transform="pandas")``
out, feature names checked, Series targets. scikit-learn's own estimator checks run their pandas cases too when
pandas is installed (the test extras install it)."""
import numpy as np
import pytest

from orbitkernels.features import GroupCDFFeatures, MolecularOrbitFeatures, OrbitFourierFeatures, OrbitNystroem
from orbitkernels.groups import CyclicShift, FiniteRotation3D, encode_molecules
from orbitkernels.models import (DistributedRidge, DistributedRidgeClassifier, InvariantLinearClassifier,
                                 InvariantSVC)

pd = pytest.importorskip("pandas")


def _maps():
    g = CyclicShift(12)
    return [OrbitFourierFeatures(g, n_components=5, random_state=0), GroupCDFFeatures(g, n_templates=3, random_state=0),
            OrbitNystroem(g, n_components=5, random_state=0)]


@pytest.fixture
def frame():
    rng = np.random.default_rng(0)
    return pd.DataFrame(rng.normal(size=(25, 12)), columns=[f"x{i}" for i in range(12)])


@pytest.mark.parametrize("est", _maps(), ids=lambda e: type(e).__name__)
def test_feature_maps_take_frames_and_give_frames(est, frame):
    plain = est.fit(frame.to_numpy()).transform(frame.to_numpy())
    out = est.set_output(transform="pandas").fit(frame).transform(frame)
    assert isinstance(out, pd.DataFrame) and list(out.index) == list(frame.index)
    assert list(out.columns) == list(est.get_feature_names_out())
    np.testing.assert_array_equal(out.to_numpy(), plain)
    assert list(est.feature_names_in_) == list(frame.columns)
    with pytest.raises(ValueError, match="feature names should match"):
        est.transform(frame.rename(columns={"x0": "y0"}))


@pytest.mark.parametrize("est", _maps(), ids=lambda e: type(e).__name__)
def test_feature_maps_refuse_non_numeric_columns_by_name(est, frame):
    with pytest.raises(TypeError, match=r"non-numeric columns \['x3'\]"):
        est.fit(frame.assign(x3=pd.Categorical(["a"] * len(frame))))


def test_molecular_features_take_a_frame():
    rng = np.random.default_rng(0)
    X = encode_molecules(np.array([[6, 1, 1, 1, 1]] * 4), rng.normal(size=(4, 5, 3)))
    frame = pd.DataFrame(X, columns=[f"a{i}" for i in range(X.shape[1])])
    est = MolecularOrbitFeatures(FiniteRotation3D("T"), species=(1, 6), n_components=6, random_state=0)
    plain = est.fit_transform(X)
    out = est.set_output(transform="pandas").fit_transform(frame)
    assert isinstance(out, pd.DataFrame) and list(out.columns) == list(est.get_feature_names_out())
    np.testing.assert_array_equal(out.to_numpy(), plain)


@pytest.mark.parametrize("model", [InvariantSVC(transformations=CyclicShift(12)), DistributedRidge(),
                                   DistributedRidgeClassifier(), InvariantLinearClassifier()],
                         ids=lambda m: type(m).__name__)
def test_models_take_frames_and_series(model, frame):
    y = pd.Series(np.where(frame["x0"] > 0, 1, -1), index=frame.index)
    numbers = model.fit(frame.to_numpy(), y.to_numpy()).predict(frame.to_numpy())
    model.fit(frame, y)
    np.testing.assert_array_equal(model.predict(frame), numbers)
    assert list(model.feature_names_in_) == list(frame.columns)


def test_the_test_extras_bring_pandas():
    """README, "Tests and data": the test extras install pandas, so these tests and scikit-learn's pandas checks
    run wherever the README's test command runs."""
    import re
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    test_extra = re.search(r"^test = \[(.*?)^\]", (root / "pyproject.toml").read_text(), re.S | re.M).group(1)
    assert '"pandas>=' in test_extra and '"dask[' in test_extra and '"numba>=' in test_extra
    assert "The test extras bring dask, numba and pandas" in " ".join((root / "README.md").read_text().split())
