"""Groups and laws are scikit-learn parameters: ``get_params`` / ``set_params`` / ``clone``, nested names.

Raj et al. (2017, §4.2-4.3) choose the von Mises concentration over rotations on held-out data; a scikit-learn user
writes it as a grid over ``group__angle__kappa``, which failed ("'ImageRotation' object has no attribute
'set_params'"). An estimator's ``set_params(group__...)`` gives it a new group: the object given (shared, or fitted
as ``group_``) stays as it was.
"""
import pickle

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.linear_model import RidgeClassifierCV
from sklearn.model_selection import GridSearchCV, KFold, cross_val_score
from sklearn.pipeline import make_pipeline

from orbitkernels.features import GroupCDFFeatures, MolecularOrbitFeatures, OrbitFourierFeatures, OrbitNystroem
from orbitkernels.groups import (BlockPermutation, CoulombPermutation, CyclicShift, Discrete, FiniteRotation3D,
                                 ImageRotation, ImageScaling, ImageTranslation, LogNormal, LogUniform, Normal,
                                 PitchShift, PolarRotation, ProductGroup, Rotation3D, TimeWarp, TrivialGroup, Uniform,
                                 VonMises)
from orbitkernels.kernels import HaarKernel
from orbitkernels.models import InvariantSVC

S = (8, 8)


def _digits(n=90, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.random((n, 64))
    return X, (X[:, :8].sum(1) > 4).astype(int)


GROUPS = [
    lambda: ImageRotation(S), lambda: ImageRotation(S, VonMises(2)), lambda: ImageRotation(S, n_angles=8),
    lambda: ImageTranslation(S, Normal(1)), lambda: ImageTranslation(S, (Normal(1.0), Uniform(-1, 1))),
    lambda: ImageScaling(S, LogNormal(0.1)), lambda: PolarRotation(S), lambda: PolarRotation(S, n_angles=16),
    lambda: CyclicShift(8), lambda: CyclicShift((4, 4)), lambda: CyclicShift(4, weights=[0.1, 0.2, 0.3, 0.4]),
    lambda: BlockPermutation(5, 8), lambda: CoulombPermutation(5, sampling="montavon"),
    lambda: TimeWarp(64, LogUniform(0.9, 1.1)), lambda: PitchShift(64, Normal(50.0), n_fft=16),
    lambda: Rotation3D(), lambda: FiniteRotation3D("O"), lambda: TrivialGroup(),
    lambda: ImageRotation(S) * ImageTranslation(S, Normal(1.0)),
]
LAWS = [Uniform(0, 1), LogUniform(0.5, 2), VonMises(2), Normal(1), LogNormal(0.2), Discrete([0, 1], [0.3, 0.7])]


@pytest.mark.parametrize("make", GROUPS)
def test_every_group_is_built_again_from_its_params(make):
    g = make()
    again = type(g)(*g.get_params(deep=False)["factors"]) if isinstance(g, ProductGroup) \
        else type(g)(**g.get_params(deep=False))
    assert repr(again) == repr(g)
    copied = clone(g)
    assert copied is not g and repr(copied) == repr(g)
    assert repr(g.set_params(**g.get_params(deep=False))) == repr(make())
    assert repr(pickle.loads(pickle.dumps(g)).get_params(deep=False)) == repr(g.get_params(deep=False))
    for key, value in g.get_params(deep=True).items():  # every nested name can be set to what it holds
        assert repr(clone(g).set_params(**{key: value})) == repr(g), key


@pytest.mark.parametrize("law", LAWS, ids=repr)
def test_every_law_is_built_again_from_its_params(law):
    params = law.get_params()
    assert type(law)(**params) == law and clone(law) == law and clone(law) is not law
    assert law.set_params(**params) == law


def test_the_params_are_the_arguments_as_given():
    """Not what the constructor made of them: n_angles stays n_angles (its Discrete angle is derived)."""
    g = ImageRotation([8, 8], n_angles=8)
    assert g.get_params(deep=False) == {"image_shape": [8, 8], "angle": None, "n_angles": 8}
    assert g.set_params(n_angles=16).order == 16 and len(g.elements()) == 16  # derived state follows
    with pytest.raises(ValueError, match="not both"):  # the constructor's own check
        g.set_params(angle=VonMises(1.0))


def test_nested_names_reach_laws_and_factors():
    shift = Normal(1.0)
    p = ImageRotation(S, VonMises(2)) * ImageTranslation(S, shift) * CyclicShift(64)
    names = p.get_params(deep=True)
    assert names["factors__0__angle__kappa"] == 2.0 and names["factors__1__shift__sigma"] == 1.0
    p.set_params(factors__1__shift__sigma=3.0, factors__0__angle__kappa=5.0)
    assert p.factors[1].shift == (Normal(3.0), Normal(3.0)) and p.factors[0].angle == VonMises(5.0)
    assert shift == Normal(1.0)  # the law given is copied, not changed
    per_axis = ImageTranslation(S, (Normal(1.0), Normal(2.0)))
    assert per_axis.get_params()["shift__1__sigma"] == 2.0
    assert per_axis.set_params(shift__1__sigma=3.0).shift == (Normal(1.0), Normal(3.0))


@pytest.mark.parametrize("key, message", [
    ("angel", r"Invalid parameter 'angel' for ImageRotation.*valid parameters are \['angle', 'image_shape'"),
    ("angle__kapa", r"Invalid parameter 'kapa' for VonMises"),
    ("image_shape__0", r"image_shape is \(8, 8\), which has no parameters to set \(image_shape__0\)"),
    ("n_angles__x", r"n_angles is None, which has no parameters to set \(n_angles__x\)"),
])
def test_bad_names_are_named(key, message):
    with pytest.raises(ValueError, match=message):
        ImageRotation(S, VonMises(2)).set_params(**{key: 1})
    with pytest.raises(ValueError, match=r"shift holds 2 items: no item '2' \(from shift__2__sigma\)"):
        ImageTranslation(S, (Normal(1.0), Normal(2.0))).set_params(shift__2__sigma=1.0)


def test_a_law_left_to_its_default_says_to_give_one():
    """ImageRotation(shape) holds angle=None (the uniform default): a search over angle__kappa needs a law first."""
    est = OrbitFourierFeatures(ImageRotation(S), n_components=4)
    with pytest.raises(ValueError, match=r"^group__angle is None, which has no parameters to set "
                                         r"\(group__angle__kappa\); set group__angle itself, or give it a value "
                                         r"that has them first \(angle=VonMises\(1.0\) before angle__kappa\)"):
        est.set_params(group__angle__kappa=2.0)


def test_a_bad_value_fails_as_in_the_constructor():
    with pytest.raises(ValueError, match="kappa must be >= 0"):
        ImageRotation(S, VonMises(2)).set_params(angle__kappa=-1.0)


def test_grid_search_over_the_von_mises_concentration():
    """Each candidate's score is the score of a pipeline built with that law by hand."""
    X, y = _digits()
    group = ImageRotation(S, VonMises(1.0))
    pipe = make_pipeline(OrbitFourierFeatures(group, n_components=32, n_group_samples=8, random_state=0),
                         RidgeClassifierCV())
    cv = KFold(3)
    search = GridSearchCV(pipe, {"orbitfourierfeatures__group__angle__kappa": [0.5, 4.0]}, cv=cv).fit(X, y)
    for kappa, score in zip([0.5, 4.0], search.cv_results_["mean_test_score"]):
        by_hand = make_pipeline(OrbitFourierFeatures(ImageRotation(S, VonMises(kappa)), n_components=32,
                                                     n_group_samples=8, random_state=0), RidgeClassifierCV())
        assert score == pytest.approx(cross_val_score(by_hand, X, y, cv=cv).mean(), abs=1e-12)
    best = search.best_params_["orbitfourierfeatures__group__angle__kappa"]
    assert search.best_estimator_[0].group.angle == VonMises(best)
    assert group.angle == VonMises(1.0)  # the user's group is untouched


@pytest.mark.parametrize("make", [
    lambda g: OrbitFourierFeatures(g, n_components=8, n_group_samples=4, random_state=0),
    lambda g: OrbitNystroem(g, n_components=6, n_group_samples=4, random_state=0),
    lambda g: GroupCDFFeatures(g, n_templates=3, n_bins=4, n_group_samples=4, random_state=0),
])
def test_set_params_after_fit_changes_nothing_until_the_next_fit(make):
    X, _ = _digits(20)
    group = ImageRotation(S, VonMises(2.0))
    est, other = make(group), make(group)  # one group object shared by two estimators
    F = est.fit(X).transform(X)
    est.set_params(group__angle__kappa=0.1)
    assert est.group.angle == VonMises(0.1) and est.group is not group
    assert group.angle == VonMises(2.0) and other.group is group and est.group_ is group
    np.testing.assert_array_equal(est.transform(X), F)
    refit = est.fit(X).transform(X)
    np.testing.assert_array_equal(refit, make(ImageRotation(S, VonMises(0.1))).fit(X).transform(X))
    assert not np.array_equal(refit, F)


def test_haar_kernel_svm_and_molecules_take_nested_group_params():
    X, y = _digits(30)
    k = HaarKernel(CyclicShift(64), n_group_samples=4, random_state=0).set_params(group__shape=(8, 8))
    assert k.group.shape == (8, 8)
    svm = InvariantSVC(transformations=ImageTranslation(S, Normal(1.0)), n_transformations=2, random_state=0)
    svm.set_params(transformations__shift__sigma=0.5)
    assert svm.transformations.shift == (Normal(0.5), Normal(0.5))
    assert svm.fit(X, y).transformations.shift == (Normal(0.5), Normal(0.5))
    mol = MolecularOrbitFeatures(group=Rotation3D(), random_state=0).set_params(group__reflections=True)
    assert mol.group.reflections is True and "group__reflections" in mol.get_params()


def test_a_users_group_records_its_own_arguments():
    class Turns(ImageRotation):
        def __init__(self, side, kappa=1.0):
            super().__init__((side, side), VonMises(kappa))
            self.side, self.kappa = side, kappa

    g = Turns(6, kappa=3.0)
    assert g.get_params(deep=False) == {"side": 6, "kappa": 3.0}
    assert clone(g).set_params(kappa=0.5).angle == VonMises(0.5)
    X, _ = _digits(10)
    X = X[:, :36]
    est = OrbitFourierFeatures(g, n_components=4, n_group_samples=3, random_state=0)
    searched = clone(est).set_params(group__side=6, group__kappa=3.0)
    np.testing.assert_array_equal(searched.fit(X).transform(X), est.fit(X).transform(X))


def test_a_group_pickled_before_its_arguments_were_recorded_still_clones():
    """Its attributes are not its arguments (ImageRotation(n_angles=8) holds the Discrete law it derived): it shows
    no parameters, clones as a copy, and says why it cannot be set."""
    g = ImageRotation(S, n_angles=8)
    del g.__dict__["_init_params"]
    assert g.get_params() == {} and repr(clone(g)) == repr(g)
    est = OrbitFourierFeatures(g, n_components=4)
    assert repr(clone(est).group) == repr(g) and est.get_params()["group"] is g
    with pytest.raises(ValueError, match="unpickled from an orbitkernels version that did not record"):
        g.set_params(n_angles=4)
