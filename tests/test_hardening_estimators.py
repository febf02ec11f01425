"""Regression tests for defects found by running the estimators (features, HaarKernel, models).

Each test failed on the code before the fix: garbage from accepted parameters,
finite extreme inputs, silent coercion of text / byte order, ``set_params`` after
``fit`` leaking into ``transform``, HaarKernel not behaving as an estimator, and the
public ``sampling`` / ``gamma="scale"`` parameters.
"""
import numpy as np
import pytest
from sklearn.base import clone
from sklearn.svm import SVC

import orbitkernels.features._base as features_base
import orbitkernels.kernels.haar as haar_module
from orbitkernels.features import GroupCDFFeatures, OrbitFourierFeatures, OrbitNystroem
from orbitkernels.groups import BlockPermutation, CyclicShift, ImageRotation
from orbitkernels.kernels import HaarKernel
from orbitkernels.models import InvariantLinearClassifier, InvariantSVC

RNG = np.random.default_rng(0)
X = RNG.normal(size=(40, 16))
Y = (X[:, 0] > 0).astype(int)
ROT = ImageRotation((4, 4))
ERR = (ValueError, TypeError)

MAPS = {
    "gicdf": lambda **kw: GroupCDFFeatures(**{"group": ROT, "n_templates": 3, "n_bins": 5, "n_group_samples": 4,
                                              "random_state": 0, **kw}),
    "fourier": lambda **kw: OrbitFourierFeatures(**{"group": ROT, "n_components": 6, "n_group_samples": 4,
                                                    "gamma": 0.1, "random_state": 0, **kw}),
    "nystroem": lambda **kw: OrbitNystroem(**{"group": ROT, "n_components": 5, "n_group_samples": 4,
                                              "gamma": 0.1, "random_state": 0, **kw}),
}


# --------------------------------------------------------------------------- B: sampling, gamma="scale"
@pytest.mark.parametrize("name", list(MAPS))
def test_sampling_is_public_and_the_plan_uses_the_group_returned(name, monkeypatch):
    seen = {}
    grid = ImageRotation((4, 4), n_angles=8)  # what a low-variance scheme may substitute for the full circle

    def fake(group, n, rng, *, sampling="qmc", default_infinite=64):
        seen["sampling"] = sampling
        return grid, grid.elements(), np.full(8, 1 / 8)

    monkeypatch.setattr(features_base, "resolve_elements", fake)
    f = MAPS[name]()
    assert f.get_params()["sampling"] == "qmc"
    f.fit(X)
    assert seen["sampling"] == "qmc"
    assert f.group_ is grid and f.plan_.group is grid
    MAPS[name](sampling="iid").fit(X)
    assert seen["sampling"] == "iid"


def test_haar_kernel_sampling_reaches_resolve_elements(monkeypatch):
    seen = {}
    grid = ImageRotation((4, 4), n_angles=8)

    def fake(group, n, rng, *, sampling="qmc", default_infinite=64):
        seen["sampling"] = sampling
        return grid, grid.elements(), np.full(8, 1 / 8)

    monkeypatch.setattr(haar_module, "resolve_elements", fake)
    k = HaarKernel(ROT, gamma=0.1, sampling="iid").fit()
    assert seen["sampling"] == "iid" and k.group_ is grid and len(k.elements_) == 8


def _scale(X):
    return 1.0 / (X.shape[1] * X.var())


@pytest.mark.parametrize("name", ["fourier", "nystroem"])
def test_gamma_scale_in_feature_maps(name):
    f = MAPS[name](gamma="scale").fit(X)
    assert np.isclose(f.gamma_, _scale(X))
    g = MAPS[name](gamma=f.gamma_).fit(X)
    np.testing.assert_allclose(f.transform(X), g.transform(X), rtol=1e-12, atol=1e-14)


def test_gamma_scale_in_haar_kernel_and_invariant_svc():
    k = HaarKernel(ROT, gamma="scale", n_group_samples=3, random_state=0)
    K = k(X)
    assert np.isclose(k.gamma_, _scale(X))
    np.testing.assert_allclose(K, HaarKernel(ROT, gamma=k.gamma_, n_group_samples=3, random_state=0)(X))
    assert np.isclose(InvariantSVC(gamma="scale", max_iter=3).fit(X, Y).gamma_, _scale(X))
    assert np.isclose(InvariantSVC(gamma="auto", max_iter=3).fit(X, Y).gamma_, 1 / 16)


# --------------------------------------------------------------------------- C: HaarKernel as an estimator
def test_haar_kernel_get_set_params_and_clone():
    k = HaarKernel(ROT, "rbf", gamma=0.1, n_group_samples=3, random_state=0)
    p = k.get_params()
    assert p["gamma"] == 0.1 and p["group"] is ROT and p["kernel_params"] is None
    c = clone(k)
    np.testing.assert_array_equal(c(X), k(X))
    assert clone(k.set_params(gamma=0.2)).get_params()["gamma"] == 0.2


@pytest.mark.parametrize("kwargs", [{"n_group_sample": 3}, {"random_stat": 0}, {"gama": 0.1}])
def test_haar_kernel_misspelled_keywords_raise(kwargs):
    with pytest.raises(TypeError, match=list(kwargs)[0]):
        HaarKernel(ROT, **kwargs)


def test_haar_kernel_kernel_params_are_checked():
    K = HaarKernel(BlockPermutation(4, 4), "poly", kernel_params={"degree": 2, "coef0": 1.0})(X)
    np.testing.assert_allclose(K, HaarKernel(BlockPermutation(4, 4), "poly", degree=2, coef0=1.0)(X))
    with pytest.raises(ValueError, match="kernel_params.*'gama'"):
        HaarKernel(ROT, kernel_params={"gama": 1.0})(X)
    with pytest.raises(ValueError, match="kernel_params\\['gamma'\\]"):
        HaarKernel(ROT, kernel_params={"gamma": -1.0})(X)
    with pytest.raises(ValueError, match="'gamma' parameter.*-1"):
        HaarKernel(ROT, gamma=-1)(X)


def test_haar_kernel_set_params_takes_effect_and_calls_are_deterministic():
    k = HaarKernel(ROT, gamma=0.1, n_group_samples=3)  # random_state=None: drawn once, then fixed
    K1 = k(X)
    np.testing.assert_array_equal(k(X), K1)
    k.set_params(gamma=0.5, random_state=1)
    np.testing.assert_array_equal(k(X), HaarKernel(ROT, gamma=0.5, n_group_samples=3, random_state=1)(X))
    k.set_params(n_group_samples=5)
    assert len(k.fit().elements_) == 5


def test_haar_kernel_inside_svc_clones_and_predicts():
    g = BlockPermutation(4, 4)
    clf = SVC(kernel=HaarKernel(g, gamma=0.1))
    a = clone(clf).fit(X, Y).decision_function(X)
    np.testing.assert_allclose(clf.fit(X, Y).decision_function(X), a)


# --------------------------------------------------------------------------- D: garbage from accepted parameters
def test_nystroem_poly_degree_must_be_a_positive_integer():
    for bad in (2.5, 1e-300, 0, -1):
        with pytest.raises(ERR, match="degree"):
            OrbitNystroem(ROT, kernel="poly", degree=bad, n_components=5).fit(X)
    F = OrbitNystroem(ROT, kernel="poly", degree=2, n_components=5, random_state=0).fit_transform(X)
    assert np.isfinite(F).all()


@pytest.mark.parametrize("params", [{"gamma": -1}, {"gamma": 0}, {"coef0": True}, {"gamma": np.nan},
                                    {"gamma": "3"}, {"kernel_params": "abc"}])
def test_nystroem_kernel_parameters_named(params):
    name = list(params)[0]
    with pytest.raises(ERR, match=name):
        OrbitNystroem(ROT, kernel="poly", n_components=5).set_params(**params).fit(X)


@pytest.mark.filterwarnings("error::RuntimeWarning")  # the refusal says it all: no overflow warning too
def test_nystroem_never_returns_non_finite_features():
    # degree 60 of <x, z> + 1e6 overflows float64: refused with a message, never NaN/inf features
    with pytest.raises(ValueError, match="kernel"):
        OrbitNystroem(ROT, kernel="poly", degree=60, coef0=1e6, n_components=5, random_state=0).fit_transform(X)
    f = OrbitNystroem(ROT, kernel="poly", degree=20, n_components=5, random_state=0).fit(X)
    with pytest.raises(ValueError, match="overflow|non-finite"):
        f.transform(X * 1e20)


@pytest.mark.parametrize("params", [{"kernel": "poly", "degree": 2.5}, {"gamma": None}, {"degree": 0},
                                    {"coef0": np.inf}])
def test_invariant_svc_refuses_kernel_parameters_that_give_nan(params):
    with pytest.raises(ERR, match=[k for k in params if k != "kernel"][0]):
        InvariantSVC(max_iter=3, **params).fit(X, Y)


@pytest.mark.filterwarnings("error::RuntimeWarning")  # the refusal says it all: no overflow warning too
def test_invariant_svc_never_decides_on_nan_scores():
    clf = InvariantSVC(kernel="poly", degree=3, max_iter=3).fit(X, Y)
    with pytest.raises(ValueError, match="overflowed"):
        clf.decision_function(X * 1e120)
    with pytest.raises(ValueError, match="overflowed"):
        clf.predict(X * 1e120)


# --------------------------------------------------------------------------- F: finite extreme inputs
@pytest.mark.parametrize("c, dtype", [(1e-25, np.float32), (1e20, np.float32), (1e-200, np.float64),
                                      (1e200, np.float64)])
def test_gicdf_normalize_is_scale_invariant_at_extreme_scales(c, dtype):
    Xd = X.astype(dtype)
    f = MAPS["gicdf"]().fit(Xd)
    ref = f.transform(Xd)
    got = f.transform((X * c).astype(dtype))
    assert np.isfinite(got).all()
    # equal but for a projection rounding across a bin edge now and then
    assert np.mean(np.abs(got - ref) > 1e-6) < 0.01


def test_rbf_kernels_refuse_inputs_whose_distances_are_noise():
    X32 = (X * 1e19).astype(np.float32)
    with pytest.raises(ValueError, match="rescale X"):
        OrbitNystroem(ROT, n_components=5, random_state=0).fit(X32)
    f = OrbitNystroem(ROT, n_components=5, random_state=0).fit(X.astype(np.float32))
    with pytest.raises(ValueError, match="rescale X"):
        f.transform(X32)
    with pytest.raises(ValueError, match="rescale X"):
        HaarKernel(ROT, gamma=0.1, n_group_samples=3, random_state=0)(X32)
    with pytest.raises(ValueError, match="rescale X"):  # random Fourier phases of 1e19 radians are noise
        OrbitFourierFeatures(ROT, n_components=5, random_state=0).fit(X.astype(np.float32)).transform(X32)
    # gamma="scale" adapts to the data's scale, so the same data are fine: k(x, x) = 1 on the landmarks
    g = OrbitNystroem(None, n_components=5, gamma="scale", random_state=0).fit(X32)
    assert g.precision_ == "float64"  # the Gaussian from float32 dot products would overflow: mapped in float64
    np.testing.assert_allclose((g.transform(g.components_.astype(np.float32)) ** 2).sum(1), 1.0, rtol=1e-3)


# --------------------------------------------------------------------------- G: silent coercion
def _consumers():
    yield "gicdf-fit", lambda Z: MAPS["gicdf"]().fit(Z)
    yield "fourier-transform", lambda Z: MAPS["fourier"]().fit(X).transform(Z)
    yield "nystroem-fit", lambda Z: MAPS["nystroem"]().fit(Z)
    yield "haar", lambda Z: HaarKernel(ROT, gamma=0.1, n_group_samples=3, random_state=0)(Z)
    yield "svc-fit", lambda Z: InvariantSVC(max_iter=3).fit(Z, Y)
    yield "svc-predict", lambda Z: InvariantSVC(max_iter=3).fit(X, Y).predict(Z)
    yield "linear-fit", lambda Z: InvariantLinearClassifier(max_iter=2).fit(Z, Y)


@pytest.mark.parametrize("how", ["str", "bytes", "object-str"])
@pytest.mark.parametrize("name, use", list(_consumers()), ids=[n for n, _ in _consumers()])
def test_text_is_refused_everywhere_with_a_type_error_naming_X(name, use, how):
    Z = {"str": X.astype(str), "bytes": X.astype(str).astype(bytes), "object-str": X.astype(str).astype(object)}[how]
    with pytest.raises(TypeError, match="X"):
        use(Z)


@pytest.mark.parametrize("name", list(MAPS))
def test_object_arrays_of_numbers_are_exact_and_haar_agrees(name):
    f = MAPS[name]().fit(X)
    np.testing.assert_array_equal(f.transform(X.astype(object)), f.transform(X))
    k = HaarKernel(ROT, gamma=0.1, n_group_samples=3, random_state=0)
    np.testing.assert_array_equal(k(X.astype(object)), k(X))


@pytest.mark.parametrize("name", list(MAPS))
@pytest.mark.parametrize("dtype", [">f4", "<f4", ">f8"])
def test_byte_order_does_not_change_the_output_dtype(name, dtype):
    f = MAPS[name]().fit(X)
    Z = X.astype(dtype)
    native = X.astype(np.dtype(dtype).newbyteorder("="))
    out = f.transform(Z)
    assert out.dtype == native.dtype
    np.testing.assert_array_equal(out, f.transform(native))
    assert MAPS[name]().fit_transform(Z).dtype == native.dtype


@pytest.mark.parametrize("name", list(MAPS))
@pytest.mark.parametrize("param", ["n_group_samples", "n_components", "n_templates", "n_bins"])
def test_huge_counts_are_refused_naming_the_parameter(name, param):
    f = MAPS[name]()
    if param not in f.get_params():
        pytest.skip(f"{name} has no {param}")
    with pytest.raises(ValueError, match=param):
        f.set_params(**{param: 10**30}).fit(X)


# --------------------------------------------------------------------------- H: set_params after fit
CHANGES = {
    "gicdf": {"n_bins": 7, "n_templates": 1, "normalize": False, "value_range": 2.0, "epsilon": 0.9,
              "template_sampling": "sphere", "n_group_samples": 2, "sampling": "iid", "random_state": 5,
              "group": CyclicShift(16), "dtype": "float32", "action": "data"},
    "fourier": {"n_components": 2, "output": "cos", "gamma": 3.0, "kernel": "laplacian", "n_group_samples": 2,
                "random_state": 5, "sampling": "iid", "group": CyclicShift(16), "dtype": "float32", "action": "data"},
    "nystroem": {"n_components": 2, "gamma": 3.0, "kernel": "poly", "degree": 5, "coef0": 2.0,
                 "kernel_params": {"gamma": 0.5}, "landmarks": "orbit", "n_group_samples": 2, "random_state": 5,
                 "sampling": "iid", "group": CyclicShift(16), "dtype": "float32", "action": "data"},
}


@pytest.mark.parametrize("name, param", [(n, p) for n in CHANGES for p in CHANGES[n]])
def test_set_params_after_fit_changes_nothing_until_refit(name, param):
    f = MAPS[name]().fit(X)
    F, names = f.transform(X), f.get_feature_names_out()
    f.set_params(**{param: CHANGES[name][param]})
    np.testing.assert_array_equal(f.transform(X), F)
    np.testing.assert_array_equal(f.get_feature_names_out(), names)


def test_gicdf_n_bins_change_after_fit_keeps_the_fitted_width():
    f = GroupCDFFeatures(ROT, n_templates=3, n_bins=5, n_group_samples=4, random_state=0).fit(X)
    assert f.transform(X).shape[1] == 33
    f.set_params(n_bins=7)
    assert f.transform(X).shape[1] == 33  # was 45 before the fix
    assert f.fit(X).transform(X).shape[1] == 45  # and a refit uses the new value


@pytest.mark.parametrize("change", [{"kernel": "linear"}, {"gamma": 5.0}, {"degree": 2}, {"coef0": 3.0}])
def test_invariant_svc_set_params_after_fit_does_not_change_predictions(change):
    clf = InvariantSVC(kernel="poly", degree=3, coef0=1.0, gamma=0.1, max_iter=5).fit(X, Y)
    D = clf.decision_function(X)
    clf.set_params(**change)
    np.testing.assert_array_equal(clf.decision_function(X), D)
