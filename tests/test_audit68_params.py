"""Audit of f22fe5d (groups and laws as scikit-learn parameters): get_params / set_params / clone of every group and
law under many argument forms, user subclasses, products, estimators holding them, warnings and errors.

Each test states behaviour that must hold; 24 of them failed on f22fe5d (their docstrings say how), fixed since.
"""
import copy
import pickle
import warnings

import numpy as np
import pytest
from scipy.stats import loguniform
from sklearn.base import clone
from sklearn.linear_model import RidgeClassifier
from sklearn.model_selection import GridSearchCV, KFold, RandomizedSearchCV, cross_val_score
from sklearn.pipeline import make_pipeline
from sklearn.svm import SVC
from sklearn.utils.estimator_checks import check_estimator

from orbitkernels.features import GroupCDFFeatures, MolecularOrbitFeatures, OrbitFourierFeatures, OrbitNystroem
from orbitkernels.groups import (BlockPermutation, CoulombPermutation, CyclicShift, Discrete, FiniteRotation3D, Group,
                                 ImageRotation, ImageScaling, ImageTranslation, LogNormal, LogUniform, Normal,
                                 NotAGroupWarning, PitchShift, PolarRotation, ProductGroup, Rotation3D, TimeWarp,
                                 TrivialGroup, Uniform, VonMises, encode_molecules)
from orbitkernels.kernels import HaarKernel
from orbitkernels.models import InvariantSVC

S = (8, 8)


def _quiet(make):
    """``make()`` with NotAGroupWarning silenced (products of non-commuting factors warn by design)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NotAGroupWarning)
        return make()


def _data(n=30, d=64, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.random((n, d))
    return X, (X[:, :8].sum(1) > 4).astype(int)


def _width(g):
    return 12 if g.n_features is None else g.n_features  # Rotation3D(n_atoms=None): 3 atoms; TrivialGroup: any


def _assert_same_group(a, b, what=""):
    """Same repr, same draws (i.i.d. and qmc) for a seed, same action of those draws on random rows."""
    assert type(a) is type(b), what
    assert repr(a) == repr(b), what
    Ea, Eb = a.sample(5, random_state=3), b.sample(5, random_state=3)
    np.testing.assert_array_equal(Ea, Eb, err_msg=what)
    np.testing.assert_array_equal(a.sample(6, random_state=4, sampling="qmc"),
                                  b.sample(6, random_state=4, sampling="qmc"), err_msg=what)
    X = np.random.default_rng(5).random((3, _width(a)))
    np.testing.assert_array_equal(a.act(X, Ea), b.act(X, Eb), err_msg=what)


# constructor argument forms that tests/test_group_params.py does not build: numpy scalars and arrays, lists, all
# arguments by keyword or by position, 3 factors, products of products, per-axis laws of different kinds
FORMS = {
    "cyclic-npint": lambda: CyclicShift(np.int64(8)),
    "cyclic-array-shape": lambda: CyclicShift(np.array([2, 4])),
    "cyclic-2d-float32-weights": lambda: CyclicShift((np.int32(2), 4), weights=np.arange(1, 9, dtype=np.float32)
                                                     .reshape(2, 4)),
    "cyclic-list-weights": lambda: CyclicShift([6], [1, 2, 3, 4, 5, 6]),
    "rotation-array-shape": lambda: ImageRotation(np.array([8, 8]), n_angles=np.int64(4)),
    "rotation-kw-all": lambda: ImageRotation(image_shape=[8, 8], angle=Uniform(-1, 1), n_angles=None),
    "rotation-rgb-vm-loc": lambda: ImageRotation((8, 8, 3), VonMises(1.0, loc=np.pi)),
    "translation-list-mixed": lambda: ImageTranslation([8, 8], [Uniform(-1, 1), Normal(np.float32(1.5))]),
    "translation-discrete-arrays": lambda: ImageTranslation(np.array([8, 8, 3]), Discrete(np.array([-1, 0, 1]),
                                                                                         weights=np.array([1, 2, 1]))),
    "scaling-discrete": lambda: ImageScaling((8, 8, 2), Discrete([0.5, 2.0])),
    "scaling-loguniform": lambda: ImageScaling(S, scale=LogUniform(0.8, 1.25)),
    "block-small-ints": lambda: BlockPermutation(np.int8(4), block_size=np.uint8(2)),
    "rotation3d-np": lambda: Rotation3D(np.int64(3), reflections=np.bool_(True)),
    "rotation3d-none": lambda: Rotation3D(),
    "finite3d-kw": lambda: FiniteRotation3D(n_atoms=2, kind="T"),
    "polar-positional-all": lambda: PolarRotation(np.array([8, 8]), np.int64(8), np.int64(3),
                                                  VonMises(np.float32(2.0)), np.float64(3.5)),
    "polar-uniform-arc": lambda: PolarRotation(S, n_angles=12, angle=Uniform(-1.0, 2.0)),
    "pitch-discrete": lambda: PitchShift(64, Discrete([-100, 0, 100]), 16),
    "timewarp-kw": lambda: TimeWarp(n_samples=32, rate=Discrete((0.9, 1.1), (1, 1))),
    "coulomb-montavon-0": lambda: CoulombPermutation(4, "montavon", noise=0),
    "coulomb-montavon-f32": lambda: CoulombPermutation(n_atoms=4, sampling="montavon", noise=np.float32(0.5)),
    "coulomb-uniform": lambda: CoulombPermutation(3),
    "trivial": lambda: TrivialGroup(),
    "product-list": lambda: ProductGroup([CyclicShift(4), CyclicShift(4)]),
    "product-3": lambda: ImageRotation(S) * ImageTranslation(S, Normal(1.0)) * ImageScaling(S, LogNormal(0.1)),
    "product-tuple-times": lambda: ProductGroup((ImageRotation(S), ImageTranslation(S, Normal(1.0)))) * ImageScaling(
        S, LogNormal(0.1)),
    "product-of-products": lambda: (ImageRotation(S) * ImageTranslation(S, (Normal(1.0), Uniform(-2, 2))))
    * (ImageScaling(S, LogNormal(0.1)) * ImageRotation(S, VonMises(1.0))),
    "product-finite-weighted": lambda: CyclicShift(4, weights=[1, 2, 3, 4]) * BlockPermutation(4),
    "product-not-a-group": lambda: CyclicShift(8) * BlockPermutation(4, 2),
    "product-trivial": lambda: TrivialGroup() * Rotation3D(reflections=True),
}


@pytest.mark.parametrize("name", list(FORMS))
def test_clone_pickle_deepcopy_and_rebuild_act_alike(name):
    g = _quiet(FORMS[name])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NotAGroupWarning)
        _assert_same_group(g, clone(g), "clone")
        _assert_same_group(g, clone(pickle.loads(pickle.dumps(g))), "pickle then clone")
        _assert_same_group(g, copy.deepcopy(g), "deepcopy")
        _assert_same_group(g, clone(copy.deepcopy(g)), "deepcopy then clone")
        params = g.get_params(deep=False)
        again = type(g)(*params["factors"]) if isinstance(g, ProductGroup) else type(g)(**params)
        _assert_same_group(g, again, "rebuilt from get_params(deep=False)")
        for key, value in g.get_params(deep=True).items():
            _assert_same_group(g, clone(g).set_params(**{key: value}), key)
        _assert_same_group(g, clone(g).set_params(**g.get_params(deep=True)), "all at once")


SET_CASES = [
    # (make, new params, the same group built directly)
    (lambda: CyclicShift(8), {"shape": (2, 4), "weights": np.ones((2, 4))},
     lambda: CyclicShift((2, 4), np.ones((2, 4)))),
    (lambda: CyclicShift(4, weights=[1, 2, 3, 4]), {"weights": None}, lambda: CyclicShift(4)),
    (lambda: ImageRotation(S, VonMises(2.0)), {"angle": None, "n_angles": 6}, lambda: ImageRotation(S, n_angles=6)),
    (lambda: ImageRotation(S, n_angles=6), {"n_angles": None}, lambda: ImageRotation(S)),
    (lambda: ImageRotation(S, VonMises(2.0, loc=1.0)), {"angle__kappa": np.float64(0.5)},
     lambda: ImageRotation(S, VonMises(0.5, loc=1.0))),
    (lambda: ImageTranslation(S, Normal(1.0)), {"shift": [Normal(1.0), Uniform(-2, 2)]},
     lambda: ImageTranslation(S, (Normal(1.0), Uniform(-2, 2)))),
    (lambda: ImageTranslation(S, (Normal(1.0), Uniform(-2, 2))), {"shift__1__high": 3, "shift__0": Normal(0.5)},
     lambda: ImageTranslation(S, (Normal(0.5), Uniform(-2, 3)))),
    (lambda: ImageTranslation(S, Discrete([-1, 0, 1])), {"shift__weights": [1, 2, 1]},
     lambda: ImageTranslation(S, Discrete([-1, 0, 1], [1, 2, 1]))),
    (lambda: ImageScaling(S, LogNormal(0.1)), {"scale": Discrete([0.5, 2.0]), "image_shape": (6, 6)},
     lambda: ImageScaling((6, 6), Discrete([0.5, 2.0]))),
    (lambda: PolarRotation(S), {"n_angles": 12, "angle": VonMises(3.0), "max_radius": 3.0},
     lambda: PolarRotation(S, n_angles=12, angle=VonMises(3.0), max_radius=3.0)),
    (lambda: PolarRotation(S, angle=VonMises(1.0)), {"angle__kappa": 5.0},
     lambda: PolarRotation(S, angle=VonMises(5.0))),
    (lambda: CoulombPermutation(4), {"sampling": "montavon", "noise": 0.3},
     lambda: CoulombPermutation(4, sampling="montavon", noise=0.3)),
    (lambda: CoulombPermutation(4, sampling="montavon"), {"sampling": "uniform"}, lambda: CoulombPermutation(4)),
    (lambda: Rotation3D(), {"n_atoms": 3, "reflections": True}, lambda: Rotation3D(3, reflections=True)),
    (lambda: FiniteRotation3D("I"), {"kind": "T", "n_atoms": 2}, lambda: FiniteRotation3D("T", 2)),
    (lambda: TimeWarp(32, LogUniform(0.9, 1.1)), {"rate__low": 0.8, "n_samples": 16},
     lambda: TimeWarp(16, LogUniform(0.8, 1.1))),
    (lambda: PitchShift(64, Normal(50.0), n_fft=16), {"cents__mean": 10.0, "n_fft": 32},
     lambda: PitchShift(64, Normal(50.0, mean=10.0), n_fft=32)),
    (lambda: BlockPermutation(4, 2), {"block_size": 3}, lambda: BlockPermutation(4, 3)),
    (lambda: ImageRotation(S, VonMises(1.0)) * ImageTranslation(S, Normal(1.0)) * CyclicShift(64),
     {"factors__0__angle__kappa": 4.0, "factors__1__shift__sigma": 2.0, "factors__2": CyclicShift((8, 8))},
     lambda: ImageRotation(S, VonMises(4.0)) * ImageTranslation(S, Normal(2.0)) * CyclicShift((8, 8))),
    (lambda: ImageRotation(S) * ImageTranslation(S, Normal(1.0)),
     {"factors": [ImageScaling(S, LogNormal(0.2)), ImageRotation(S, n_angles=4), ImageTranslation(S, Normal(3.0))]},
     lambda: ImageScaling(S, LogNormal(0.2)) * ImageRotation(S, n_angles=4) * ImageTranslation(S, Normal(3.0))),
]


@pytest.mark.parametrize("make, params, expected", SET_CASES)
def test_set_params_equals_a_fresh_construction(make, params, expected):
    g = make()
    out = g.set_params(**params)
    assert out is g
    _assert_same_group(g, expected(), str(params))
    _assert_same_group(clone(make()).set_params(**params), expected(), "on a clone")


def test_a_failed_set_params_leaves_the_group_as_it_was():
    cases = [(lambda: ImageRotation(S, VonMises(2.0)), {"angle__kappa": -1.0}),
             (lambda: ImageRotation(S, VonMises(2.0)), {"n_angles": 4}),
             (lambda: ImageTranslation(S, (Normal(1.0), Normal(2.0))), {"shift__1__sigma": 0.0}),
             (lambda: CyclicShift(4, weights=[1, 2, 3, 4]), {"shape": 5}),
             (lambda: ImageRotation(S) * ImageTranslation(S, Normal(1.0)), {"factors__1__image_shape": (4, 4)}),
             (lambda: ImageRotation(S) * ImageTranslation(S, Normal(1.0)),
              {"factors__0": CoulombPermutation(8, sampling="montavon")})]
    for make, bad in cases:
        g = make()
        params = g.get_params(deep=True)
        with pytest.raises((ValueError, TypeError)):
            g.set_params(**bad)
        assert repr(g.get_params(deep=True)) == repr(params), bad
        _assert_same_group(g, make(), str(bad))


def test_bad_names_and_values_are_value_or_type_errors():
    """Never an AttributeError / KeyError / IndexError from inside (the messages themselves: test_group_params)."""
    p = ImageRotation(S, VonMises(2.0)) * ImageTranslation(S, (Normal(1.0), Normal(2.0)))
    bad = [{"factors__2": CyclicShift(64)}, {"factors__-1": CyclicShift(64)}, {"factors__x__angle": None},
           {"factors__0__angle__kappa__x": 1}, {"factors__0__angle__": 1}, {"factors__1__shift__2__sigma": 1},
           {"factors__1__shift__0__sigma__0": 1}, {"factors__1__shift__0__mean": "a"}, {"factors__0": 3},
           {"factors": [CyclicShift(64)]}, {"factors": 1}, {"factors__0__angle": "vm"}, {"__x": 1}, {"": 1},
           {"factors__1__shift": (Normal(1.0),)}, {"factors__0__n_angles": 2.5}]
    for params in bad:
        with pytest.raises((ValueError, TypeError)):
            clone(p).set_params(**params)
    for law, params in [(VonMises(1.0), {"kapa": 1}), (VonMises(1.0), {"kappa__x": 1}),
                        (Discrete([1, 2]), {"values__0": 3}), (Discrete([1, 2], [1, 3]), {"values": [1, 2, 3]}),
                        (Uniform(0, 1), {"low": 2})]:
        with pytest.raises((ValueError, TypeError)):
            law.set_params(**params)
    est = OrbitFourierFeatures(ImageRotation(S, VonMises(2.0)))
    for params in [{"group__angel": 1}, {"group__angle__kappa__x": 1}, {"grop__angle": 1}, {"group__angle__kappa": -1}]:
        with pytest.raises((ValueError, TypeError)):
            est.set_params(**params)
    assert est.group.angle == VonMises(2.0)


# ---------------------------------------------------------------------------------------------------- user groups

class _Doubled(CyclicShift):
    """Own constructor, other arguments than the parent's."""

    def __init__(self, n, scale=2):
        super().__init__(n * scale)
        self.scale = scale


class _DoubledNoInit(_Doubled):
    pass


class _DoubledAgain(_Doubled):
    def __init__(self, m, extra=0):
        super().__init__(m, scale=1)
        self.extra = extra


class _PositionalOnly(CyclicShift):
    def __init__(self, n, /, weights=None):
        super().__init__(n, weights)


class _KeywordsOnly(CyclicShift):
    def __init__(self, **kw):
        super().__init__(**kw)


class _KwOnlyNoStar(CyclicShift):
    def __init__(self, n, *, weights=None):
        super().__init__(n, weights=weights)


class _StarOnly(CyclicShift):
    def __init__(self, *shape):
        super().__init__(shape)


class _PlainProduct(ProductGroup):
    pass


class _CentredNormal(Normal):
    """A user's law with its own constructor (its argument kept as an attribute)."""

    def __init__(self, sigma):
        super().__init__(sigma)


class _SignFlip(Group):
    """A user's finite group of any row length with a law among its arguments (for check_estimator)."""

    is_finite = True
    is_unitary = True
    is_symmetric = True

    def __init__(self, law=None, *, p=0.5):
        self.law = law
        self.p = p

    def elements(self):
        return np.array([[1.0], [-1.0]])

    def weights(self):
        return np.array([self.p, 1 - self.p])

    def identity(self):
        return np.ones((1, 1))

    def inverse(self, E):
        return np.asarray(E, dtype=float)

    def _act(self, X, E):
        return E[:, 0, None, None] * X[None]


@pytest.mark.parametrize("make, params, expected", [
    (lambda: _Doubled(3), {"scale": 3}, lambda: _Doubled(3, 3)),
    (lambda: _DoubledNoInit(3, scale=3), {"n": 2}, lambda: _DoubledNoInit(2, 3)),
    (lambda: _DoubledAgain(5, extra=7), {"m": 4}, lambda: _DoubledAgain(4, 7)),
    (lambda: _PositionalOnly(4, [1, 1, 1, 2]), {"weights": None}, lambda: _PositionalOnly(4)),
    (lambda: _KeywordsOnly(shape=4, weights=[1, 2, 3, 4]), {"kw": {"shape": 3}}, lambda: _KeywordsOnly(shape=3)),
    (lambda: _KwOnlyNoStar(4, weights=[1, 2, 3, 4]), {"n": 4}, lambda: _KwOnlyNoStar(4, weights=[1, 2, 3, 4])),
    (lambda: _SignFlip(Normal(1.0), p=0.25), {"law__sigma": 2.0, "p": 0.75}, lambda: _SignFlip(Normal(2.0), p=0.75)),
    (lambda: _StarOnly(2, 4), {"shape": (4, 2)}, lambda: _StarOnly(4, 2)),
    (lambda: _PlainProduct(CyclicShift(4), CyclicShift(4)), {"factors__1__weights": [1, 2, 3, 4]},
     lambda: _PlainProduct(CyclicShift(4), CyclicShift(4, weights=[1, 2, 3, 4]))),
    (lambda: ImageTranslation(S, _CentredNormal(1.0)), {"shift__sigma": 2.0},
     lambda: ImageTranslation(S, _CentredNormal(2.0))),
])
def test_user_subclasses_clone_and_set_like_fresh_ones(make, params, expected):
    g = make()
    _assert_same_group(g, clone(g), "clone")
    assert repr(g.get_params(deep=False)) == repr(make().get_params(deep=False))
    _assert_same_group(g.set_params(**params), expected(), str(params))
    fresh = expected()
    assert vars(g).keys() == vars(fresh).keys()  # the user's own attributes follow (extra, scale, p)
    assert {k: v for k, v in vars(g).items() if np.isscalar(v)} == {k: v for k, v in vars(fresh).items()
                                                                    if np.isscalar(v)}


class _Star(CyclicShift):
    """A user's constructor taking the axis lengths as *args and the weights by keyword only."""

    def __init__(self, *shape, weights=None):
        super().__init__(shape, weights=weights)


class _SignMixin:
    """The usual cooperative mixin: its own keyword, everything else passed on."""

    def __init__(self, *args, sign=1.0, **kwargs):
        self.sign = sign
        super().__init__(*args, **kwargs)


class _Signed(_SignMixin, CyclicShift):
    pass


@pytest.mark.parametrize("make", [lambda: _Star(2, 2, weights=np.arange(1.0, 5.0).reshape(2, 2)),
                                  lambda: _Signed(4, sign=-1.0),
                                  lambda: _Signed(4, weights=[1, 2, 3, 4], sign=-1.0)],
                         ids=["star-args-then-keyword-only", "mixin-sign", "mixin-sign-and-weights"])
def test_keyword_only_arguments_after_star_args_clone(make):
    """Was wrong (f22fe5d): utils/params.py _construct passes every named parameter positionally once the signature
    has *args, the keyword-only ones after *args included (weights became a second axis length, sign a positional
    weights)."""
    g = make()
    c = clone(g)
    _assert_same_group(g, c)
    assert getattr(c, "sign", None) == getattr(g, "sign", None)
    assert g.set_params(**g.get_params(deep=False)) is g


class _Pair(ProductGroup):
    """A user's product with its own constructor."""

    def __init__(self, n):
        super().__init__(CyclicShift(n), CyclicShift(n))
        self.n = n


def test_a_product_subclass_with_its_own_constructor_clones():
    """Was wrong (f22fe5d): ProductGroup._params_now returns {'factors': ...} for every subclass, ignoring the
    arguments the subclass's own constructor recorded: clone -> TypeError "missing 1 required positional argument:
    'n'"."""
    g = _Pair(4)
    assert g.get_params(deep=False) == {"n": 4}
    _assert_same_group(g, clone(g))
    _assert_same_group(g.set_params(n=3), _Pair(3))


# -------------------------------------------------------------------------------------------- old pickles

OLD = {
    "rotation-n_angles": lambda: ImageRotation(S, n_angles=8),
    "cyclic": lambda: CyclicShift(4),
    "cyclic-weights": lambda: CyclicShift(4, weights=[1, 2, 3, 4]),
    "polar-default": lambda: PolarRotation(S, n_angles=8),
    "product-with-cyclic": lambda: CyclicShift(64) * ImageRotation(S, n_angles=4),
}


def _as_old(g):
    """``g`` as unpickled from a version that did not record the constructor's arguments."""
    old = pickle.loads(pickle.dumps(g))
    for part in (old, *getattr(old, "factors", ())):
        del part.__dict__["_init_params"]
    return old


@pytest.mark.parametrize("name", list(OLD))
def test_a_group_pickled_before_recording_still_clones(name):
    """Was wrong (f22fe5d): Parametrized.__sklearn_clone__ falls back to a deep copy only when the attributes give
    no parameter at all; otherwise it rebuilds from same-named attributes, which are not the arguments:
    ImageRotation(n_angles=8) holds angle=Uniform (ValueError 'not both'), CyclicShift's 'weights' is its method
    (TypeError), PolarRotation's 'angle' is ImageRotation's Uniform (another group: weights, repr)."""
    g = _quiet(OLD[name])
    old = _as_old(g)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NotAGroupWarning)
        _assert_same_group(g, clone(old))
        est = OrbitFourierFeatures(old, n_components=4, n_group_samples=3, random_state=0)
        assert repr(clone(est).group) == repr(g)  # a saved model's clone (a grid search over a loaded model)
    assert not any(callable(v) and not isinstance(v, Group) for v in old.get_params(deep=False).values())


# ------------------------------------------------------------------------- parts changed after construction

def _factor_changed():
    c = CyclicShift(64)
    p = _quiet(lambda: c * CyclicShift(64))
    c.set_params(shape=(8, 8))  # the public API on an object the product holds
    return p


def _law_changed():
    law = VonMises(2.0)
    g = PolarRotation(S, n_angles=8, angle=law)
    law.set_params(kappa=0.1)
    return g


def _array_changed():
    w = np.arange(1.0, 5.0)
    g = CyclicShift(4, weights=w)
    w[:] = 1.0
    return g


def _list_changed():
    shape = [8, 8]
    g = ImageRotation(shape, n_angles=4)
    shape[0] = 4
    return g


@pytest.mark.parametrize("make", [_factor_changed, _law_changed, _array_changed, _list_changed],
                         ids=["product-factor-set_params", "polar-law-set_params", "cyclic-weights-array",
                              "rotation-shape-list"])
def test_get_params_describes_the_group_after_its_arguments_change_in_place(make):
    """Was wrong (f22fe5d): a group records its arguments by reference (recording_init) while its derived state (a
    product's n_params / _splits / is_finite, PolarRotation's grid weights, CyclicShift's normalised weights,
    image_shape) was computed once: set_params on a factor or law it holds (now public API), or a change to the
    array or list given, leaves get_params / clone describing another group than the one that acts; a product then
    cannot act on its own samples (ValueError: elements must have shape (n, 2); got (3, 3))."""
    g = make()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NotAGroupWarning)
        X = np.random.default_rng(0).random((2, g.n_features))
        g.act(X, g.sample(3, random_state=0))  # the group still works
        _assert_same_group(g, clone(g))


# ---------------------------------------------------------------------------------------------------- warnings

def _not_a_group():
    return _quiet(lambda: CyclicShift(8) * BlockPermutation(4, 2))


def _est():
    return OrbitFourierFeatures(_not_a_group(), n_components=4, n_group_samples=3, random_state=0)


WARN_CALLS = {  # name: (call, whether it must warn: a clone may stay silent, the original warned already)
    "mul": (lambda: CyclicShift(8) * BlockPermutation(4, 2), True),
    "ProductGroup": (lambda: ProductGroup(CyclicShift(8), BlockPermutation(4, 2)), True),
    "group.set_params": (lambda: _not_a_group().set_params(factors__1__block_size=2), True),
    "group.__sklearn_clone__": (lambda: _not_a_group().__sklearn_clone__(), False),
    "estimator.set_params": (lambda: _est().set_params(group__factors__1__block_size=2), True),
    "clone(group)": (lambda: clone(_not_a_group()), False),
    "clone(estimator)": (lambda: clone(_est()), False),
    "pipeline.set_params": (lambda: make_pipeline(_est()).set_params(
        orbitfourierfeatures__group__factors__1__block_size=2), True),
}


@pytest.mark.parametrize("call", list(WARN_CALLS))
def test_not_a_group_warning_points_at_the_users_line(call):
    """Was wrong (f22fe5d) for clone(...) and pipeline.set_params: groups/base.py _stacklevel_outside passes over
    orbitkernels' own files only, so a warning raised under scikit-learn's clone / BaseEstimator.set_params names
    sklearn/base.py."""
    make, must_warn = WARN_CALLS[call]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        make()
    found = [w for w in caught if issubclass(w.category, NotAGroupWarning)]
    assert found or not must_warn, "no NotAGroupWarning"
    assert {w.filename for w in found} <= {__file__}, [(w.filename, w.lineno) for w in found]


def test_one_estimator_set_params_warns_once():
    """Was wrong (f22fe5d): ReplacesNestedParams builds the new product twice (_with_nested: __sklearn_clone__, then
    set_params), and each construction warns: one call, two identical NotAGroupWarnings."""
    est = _est()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        est.set_params(group__factors__1__block_size=2)
    assert len([w for w in caught if issubclass(w.category, NotAGroupWarning)]) == 1


# ----------------------------------------------------------------------------------------- estimators' errors

@pytest.mark.parametrize("make, key", [
    (lambda: OrbitFourierFeatures(), "group__shape"),
    (lambda: OrbitNystroem(None), "group__angle__kappa"),
    (lambda: HaarKernel(), "group__shape"),
    (lambda: InvariantSVC(), "transformations__shape"),
    (lambda: InvariantSVC(transformations={0: CyclicShift(6)}), "transformations__0__shape"),
], ids=["fourier-None", "nystroem-None", "haar-None", "svc-None", "svc-dict"])
def test_a_nested_name_on_an_estimator_value_without_params_is_a_value_error(make, key):
    """Was wrong (f22fe5d): ReplacesNestedParams passes these to BaseEstimator.set_params, whose
    `valid_params[key].set_params` fails with AttributeError: 'NoneType' (or 'dict') object has no attribute
    'set_params'; a group answers the same mistake with "group is None, which has no parameters to set
    (group__shape)"."""
    with pytest.raises(ValueError, match=key.partition("__")[0]):
        make().set_params(**{key: 3})


def test_factors_set_to_a_non_sequence_names_the_parameter():
    """Was wrong (f22fe5d): _construct extends the *factors arguments with the value as it is: TypeError "'int'
    object is not iterable" / "'CyclicShift' object is not iterable", naming neither factors nor ProductGroup."""
    p = ImageRotation(S) * ImageTranslation(S, Normal(1.0))
    for value in (1, CyclicShift(64)):
        with pytest.raises((TypeError, ValueError), match="factors|ProductGroup"):
            clone(p).set_params(factors=value)


def test_setting_a_group_and_its_nested_params_together_leaves_the_given_group_unchanged():
    """Was wrong (f22fe5d): when the estimator held no group (None), ReplacesNestedParams leaves both names to
    scikit-learn, which sets group=G and then calls G.set_params(shape=4) in place: the user's G changes (with a
    group already held, the same call copies G, as the mixin promises)."""
    for start in (CyclicShift(3), None):
        G = CyclicShift(8)
        est = OrbitFourierFeatures(start).set_params(group=G, group__shape=4)
        assert est.group.shape == (4,)
        assert G.shape == (8,), f"starting from group={start!r}"


# ------------------------------------------------------------------------------------------ estimators at work

def test_grid_search_in_two_processes_over_product_params_matches_one_process():
    X, y = _data(36)
    group = ImageRotation(S, VonMises(1.0)) * ImageTranslation(S, (Normal(1.0), Uniform(-1, 1)))
    pipe = make_pipeline(OrbitFourierFeatures(group, n_components=16, n_group_samples=4, random_state=0),
                         RidgeClassifier())
    grid = {"orbitfourierfeatures__group__factors__0__angle__kappa": [0.5, 4.0],
            "orbitfourierfeatures__group__factors__1__shift__1__high": [1.0, 2.0]}
    one = GridSearchCV(pipe, grid, cv=KFold(3)).fit(X, y)
    two = GridSearchCV(pipe, grid, cv=KFold(3), n_jobs=2).fit(X, y)
    np.testing.assert_array_equal(one.cv_results_["mean_test_score"], two.cv_results_["mean_test_score"])
    params, score = one.cv_results_["params"][3], one.cv_results_["mean_test_score"][3]
    by_hand = ImageRotation(S, VonMises(4.0)) * ImageTranslation(S, (Normal(1.0), Uniform(-1, 2.0)))
    hand = make_pipeline(OrbitFourierFeatures(by_hand, n_components=16, n_group_samples=4, random_state=0),
                         RidgeClassifier())
    assert params == {"orbitfourierfeatures__group__factors__0__angle__kappa": 4.0,
                      "orbitfourierfeatures__group__factors__1__shift__1__high": 2.0}
    assert score == pytest.approx(cross_val_score(hand, X, y, cv=KFold(3)).mean(), abs=1e-12)
    _assert_same_group(two.best_estimator_[0].group, _quiet(lambda: clone(one.best_estimator_[0].group)))
    assert repr(group) == repr(ImageRotation(S, VonMises(1.0)) * ImageTranslation(S, (Normal(1.0), Uniform(-1, 1))))


def test_randomized_search_draws_numpy_floats_into_a_law():
    X, y = _data(30)
    pipe = make_pipeline(OrbitNystroem(ImageRotation(S, VonMises(1.0)), n_components=8, n_group_samples=4,
                                       random_state=0), RidgeClassifier())
    search = RandomizedSearchCV(pipe, {"orbitnystroem__group__angle__kappa": loguniform(0.1, 10)}, n_iter=3,
                                cv=KFold(2), random_state=0).fit(X, y)
    best = search.best_params_["orbitnystroem__group__angle__kappa"]
    assert isinstance(best, np.floating)
    assert search.best_estimator_[0].group.angle == VonMises(float(best))
    assert pipe[0].group.angle == VonMises(1.0)


def test_check_estimator_with_a_users_group_holding_a_law():
    """scikit-learn's own checks (get_params invariance, set_params, params not overwritten by fit, clone, pickle)
    on maps whose group has nested parameters (a law, a product of user groups)."""
    for est in [OrbitFourierFeatures(_SignFlip(Normal(1.0), p=0.3), n_components=8, random_state=0),
                OrbitNystroem(_SignFlip(Normal(1.0)) * _SignFlip(p=0.2), n_components=4, random_state=0),
                GroupCDFFeatures(_SignFlip(Discrete([1, 2])), n_templates=3, n_bins=4, random_state=0)]:
        assert any(k.startswith("group__") and k.count("__") >= 2 for k in est.get_params())
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            check_estimator(est)


def test_svc_with_a_haar_kernel_reaches_the_group_through_kernel_names():
    X, y = _data(24)
    group = CyclicShift(64)
    kernel = HaarKernel(group, n_group_samples=3, random_state=0)
    svc = SVC(kernel=kernel)
    names = svc.get_params(deep=True)
    assert names["kernel__group"] is group and names["kernel__group__shape"] == 64
    svc.set_params(kernel__group__shape=(8, 8))
    assert group.shape == (64,) and kernel.group is not group and kernel.group.shape == (8, 8)
    fresh = SVC(kernel=HaarKernel(CyclicShift((8, 8)), n_group_samples=3, random_state=0)).fit(X, y)
    np.testing.assert_array_equal(clone(svc).fit(X, y).decision_function(X), fresh.decision_function(X))
    search = GridSearchCV(SVC(kernel=HaarKernel(CyclicShift(64), n_group_samples=3, random_state=0)),
                          {"kernel__group__shape": [(64,), (8, 8)]}, cv=KFold(2)).fit(X, y)
    assert search.best_estimator_.kernel.group.shape in {(64,), (8, 8)}


def test_invariant_svc_list_of_groups_and_molecular_features_after_fit():
    X, y = _data(24)
    svm = InvariantSVC(transformations=[CyclicShift(64), BlockPermutation(8, 8)])
    shared = svm.transformations
    svm.set_params(transformations__1__block_size=4, transformations__1__n_blocks=16)
    assert svm.transformations[1].n_blocks == 16 and shared[1].n_blocks == 8 and isinstance(svm.transformations, list)
    g = ImageTranslation(S, Normal(1.0))
    svm = InvariantSVC(transformations=g, n_transformations=2, random_state=0).fit(X, y)
    d = svm.decision_function(X)
    svm.set_params(transformations__shift__sigma=3.0)
    np.testing.assert_array_equal(svm.decision_function(X), d)  # nothing changes until the next fit
    assert g.shift == (Normal(1.0), Normal(1.0))
    refit = InvariantSVC(transformations=ImageTranslation(S, Normal(3.0)), n_transformations=2, random_state=0)
    np.testing.assert_array_equal(svm.fit(X, y).decision_function(X), refit.fit(X, y).decision_function(X))

    rng = np.random.default_rng(0)
    Xm = encode_molecules(np.array([[6, 1, 1, 8]] * 10), rng.normal(size=(10, 4, 3)))
    kw = dict(species=(1, 6, 8), n_components=8, n_group_samples=4, random_state=0)
    mol = MolecularOrbitFeatures(group=FiniteRotation3D("O"), **kw).fit(Xm)
    F = mol.transform(Xm)
    mol.set_params(group__kind="T")
    np.testing.assert_array_equal(mol.transform(Xm), F)
    np.testing.assert_array_equal(mol.fit(Xm).transform(Xm),
                                  MolecularOrbitFeatures(group=FiniteRotation3D("T"), **kw).fit(Xm).transform(Xm))


def test_reprs_html_pandas_output_and_clone_of_a_fitted_map():
    X, _ = _data(20)
    group = ImageRotation(S, VonMises(2.0)) * ImageTranslation(S, (Normal(1.0), Uniform(-1, 1)))
    est = OrbitFourierFeatures(group, n_components=8, n_group_samples=4, random_state=0)
    pipe = make_pipeline(est, RidgeClassifier())
    assert "VonMises" in repr(pipe) and "VonMises" in pipe._repr_html_()
    assert "weights=..." in OrbitFourierFeatures(CyclicShift(4, weights=np.arange(1.0, 5.0)))._repr_html_()
    fitted = clone(est).set_output(transform="pandas").fit(X)
    F = fitted.transform(X)
    copied = clone(fitted)
    assert not hasattr(copied, "group_") and copied.group is not fitted.group
    copied.set_params(group__factors__0__angle__kappa=2.0)  # the same value: the same features
    G = copied.fit(X).transform(X)
    assert type(G).__name__ == "DataFrame" and list(G.columns) == list(F.columns)
    np.testing.assert_array_equal(G.to_numpy(), F.to_numpy())
