"""Fitted estimators survive pickle / joblib bit for bit, and refuse pickles of another library version."""
import importlib
import io
import pickle

import joblib
import numpy as np
import pytest

import orbitkernels.utils.persistence as persistence
from orbitkernels.features import GroupCDFFeatures, OrbitFourierFeatures, OrbitNystroem
from orbitkernels.groups import BlockPermutation, CyclicShift, ImageRotation, ImageTranslation, Normal, VonMises
from orbitkernels.kernels import HaarKernel
from orbitkernels.utils.persistence import VERSION_KEY, IncompatibleVersionError, VersionedPickleMixin

RNG = np.random.default_rng(0)
X = RNG.normal(size=(24, 16))
Y = (X[:, :8].sum(1) > 0).astype(int)
ROT = ImageRotation((4, 4), angle=VonMises(2.0, loc=np.pi))  # asymmetric q: data-side action

FEATURES = {
    "gicdf-finite": lambda: GroupCDFFeatures(CyclicShift((4, 4)), n_templates=3, n_bins=4, value_range="auto",
                                             random_state=0),
    "gicdf-rotation": lambda: GroupCDFFeatures(ImageRotation((4, 4)), n_templates=3, n_bins=4, n_group_samples=5,
                                               random_state=0),
    "fourier-templates": lambda: OrbitFourierFeatures(ImageRotation((4, 4)), gamma=0.1, n_components=6,
                                                      n_group_samples=5, random_state=0),
    "fourier-data": lambda: OrbitFourierFeatures(ROT, gamma=0.1, n_components=6, n_group_samples=5, random_state=0),
    "fourier-cos-product": lambda: OrbitFourierFeatures(
        # action="data": the templates side fails at fit for this product (ProductGroup.inverse refuses
        # non-commuting factors although can_move_to_templates is True; reported, not fixed here)
        ImageRotation((4, 4)) * ImageTranslation((4, 4), shift=Normal(0.5)), output="cos", gamma=0.1,
        n_components=6, n_group_samples=4, action="data", random_state=0),
    "nystroem-orbit": lambda: OrbitNystroem(ImageRotation((4, 4)), gamma=0.1, n_components=5, landmarks="orbit",
                                            n_group_samples=4, random_state=0),
    "nystroem-block": lambda: OrbitNystroem(BlockPermutation(4, 4), kernel="laplacian", gamma=0.1, n_components=5,
                                            random_state=0),
}


def _roundtrips(obj):
    yield "pickle", pickle.loads(pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL))
    buf = io.BytesIO()
    joblib.dump(obj, buf)
    buf.seek(0)
    yield "joblib", joblib.load(buf)


def _dump_as_version(obj, version, monkeypatch):
    with monkeypatch.context() as m:
        m.setattr(persistence, "__version__", version)
        return pickle.dumps(obj)


@pytest.mark.parametrize("name", list(FEATURES))
def test_feature_maps_roundtrip_bit_identical(name):
    f = FEATURES[name]().fit(X)
    ref = f.transform(X)
    for how, g in _roundtrips(f):
        np.testing.assert_array_equal(g.transform(X), ref, err_msg=how)
        np.testing.assert_array_equal(g.transform(X.astype(np.float32)), f.transform(X.astype(np.float32)))
        assert g.get_params().keys() == f.get_params().keys()


@pytest.mark.parametrize("name", ["gicdf-finite", "fourier-data", "nystroem-orbit"])
def test_feature_maps_refuse_other_versions(name, monkeypatch):
    f = FEATURES[name]().fit(X)
    for version in ("0.0.9", "1.1.0", "0.2.0"):
        blob = _dump_as_version(f, version, monkeypatch)
        with pytest.raises(IncompatibleVersionError, match=f"saved by orbitkernels {version}.*refit"):
            pickle.loads(blob)
    # a patch release keeps fitted state compatible
    major, minor = persistence.__version__.split(".")[:2]
    same = pickle.loads(_dump_as_version(f, f"{major}.{minor}.99", monkeypatch))
    np.testing.assert_array_equal(same.transform(X), f.transform(X))
    # a pickle with no stamp at all (made before versions were stamped) is refused too
    state = f.__getstate__()
    state.pop(VERSION_KEY)
    fresh = type(f).__new__(type(f))
    with pytest.raises(IncompatibleVersionError, match="unknown version"):
        fresh.__setstate__(state)
    assert issubclass(IncompatibleVersionError, ValueError)


def test_unfitted_estimators_roundtrip_params():
    for make in FEATURES.values():
        f = make()
        g = pickle.loads(pickle.dumps(f))
        assert repr(g) == repr(f)


def test_haar_kernel_roundtrip_and_version_check(monkeypatch):
    for k in (HaarKernel(CyclicShift((4, 4)), gamma=0.1),
              HaarKernel(ImageRotation((4, 4)), gamma=0.1, n_group_samples=3, random_state=0)):
        ref = k(X[:7], X[7:12])
        for how, k2 in _roundtrips(k):
            np.testing.assert_array_equal(k2(X[:7], X[7:12]), ref, err_msg=how)
        with pytest.raises(IncompatibleVersionError, match="HaarKernel was saved by orbitkernels 9.0.0"):
            pickle.loads(_dump_as_version(k, "9.0.0", monkeypatch))


def test_svc_with_haar_kernel_roundtrips():
    from sklearn.svm import SVC
    clf = SVC(kernel=HaarKernel(BlockPermutation(4, 4), gamma=0.1)).fit(X, Y)
    for how, c2 in _roundtrips(clf):
        np.testing.assert_array_equal(c2.decision_function(X), clf.decision_function(X), err_msg=how)


def test_pipeline_roundtrip_and_nested_version_check(monkeypatch):
    from sklearn.kernel_approximation import RBFSampler
    from sklearn.linear_model import RidgeClassifier
    from sklearn.pipeline import make_pipeline
    pipe = make_pipeline(FEATURES["fourier-templates"](), RBFSampler(n_components=20, random_state=0),
                         RidgeClassifier()).fit(X, Y)
    for how, p2 in _roundtrips(pipe):
        np.testing.assert_array_equal(p2.decision_function(X), pipe.decision_function(X), err_msg=how)
    with pytest.raises(IncompatibleVersionError):
        pickle.loads(_dump_as_version(pipe, "0.0.1", monkeypatch))


# --------------------------------------------------------------------------- models (other modules)
def _model(modname, clsname, **params):
    try:
        mod = importlib.import_module(modname)
    except ImportError as exc:  # pragma: no cover
        pytest.skip(f"{modname} not importable: {exc}")
    if not hasattr(mod, clsname):  # pragma: no cover
        pytest.skip(f"{modname}.{clsname} does not exist")
    return getattr(mod, clsname)(**params)


MODELS = {
    "InvariantSVC": lambda: _model("orbitkernels.models.invariant_svm", "InvariantSVC", kernel="linear",
                                   max_iter=5, transformations=[_mirror]),
    "InvariantSVC-pegasos": lambda: _model("orbitkernels.models.invariant_svm", "InvariantSVC", kernel="linear",
                                           solver="pegasos", max_iter=3, random_state=0),
    "InvariantLinearClassifier": lambda: _model("orbitkernels.models.feature_scaling", "InvariantLinearClassifier",
                                                loss="fdrop", K=2, max_iter=3, random_state=0),
    "DistributedRidge": lambda: _model("orbitkernels.distributed", "DistributedRidge"),
    "DistributedRidgeClassifier": lambda: _model("orbitkernels.distributed", "DistributedRidgeClassifier"),
}


def _mirror(A):  # module level: a lambda would not pickle
    return A[:, ::-1].copy()


def _outputs(model, X_):
    for method in ("decision_function", "predict"):
        if hasattr(model, method):
            return np.asarray(getattr(model, method)(X_))


@pytest.mark.parametrize("name", list(MODELS))
def test_models_roundtrip_bit_identical(name):
    model = MODELS[name]()
    yy = Y.astype(float) if name == "DistributedRidge" else (2 * Y - 1 if "Linear" in name else Y)
    model.fit(X, yy)
    ref = _outputs(model, X)
    for how, m2 in _roundtrips(model):
        np.testing.assert_array_equal(_outputs(m2, X), ref, err_msg=f"{name} via {how}")


@pytest.mark.parametrize("name", list(MODELS))
def test_models_refuse_other_versions(name, monkeypatch):
    model = MODELS[name]()
    assert isinstance(model, VersionedPickleMixin), f"{type(model).__name__} pickles would load under any version"
    yy = Y.astype(float) if name == "DistributedRidge" else (2 * Y - 1 if "Linear" in name else Y)
    model.fit(X, yy)
    with pytest.raises(IncompatibleVersionError, match=f"{type(model).__name__} was saved by orbitkernels 0.0.1"):
        pickle.loads(_dump_as_version(model, "0.0.1", monkeypatch))
