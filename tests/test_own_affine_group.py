"""A user's image group written on :class:`~orbitkernels.groups.AffineImageGroup` says whether it is unitary.

AffineImageGroup declared ``is_unitary = True`` for every affine map, so a user's zoom of the grid (A = s I, which
changes areas by s^2) inherited the claim, and the maps' default moved its action to the templates: the features
were <x, g^-1 t> where Raj et al. (2017, Eq. 7) have <g x, t>. The claim now sits on the groups that keep areas
(rotations, translations); a subclass of the base that does not say fails at ``fit`` naming what to define, and
one that says False gets Eq. 7 on the data side. What every Group subclass must define is named when it is missing.
"""
import numpy as np
import pytest

from orbitkernels.features import GroupCDFFeatures, OrbitFourierFeatures, OrbitNystroem
from orbitkernels.groups import (AffineImageGroup, Group, ImageRotation, ImageScaling, ImageTranslation, LogUniform,
                                 Normal, PolarRotation, Uniform)

from test_subclass_action import fourier_by_hand

SHAPE = (9, 9)


class Zoom(AffineImageGroup):
    """Zooms about the centre, A = s I (|det A| = s^2): not unitary on the grid nor on the continuous image."""

    kind = "multiplicative"

    def __init__(self, image_shape, low=0.7, high=1.4):
        super().__init__(image_shape)
        self.low, self.high = low, high

    def affine(self, E):
        E = np.asarray(E, dtype=float).reshape(-1, 1)
        return E[:, :, None] * np.eye(2)[None], np.zeros((len(E), 2))

    def inverse(self, E):
        return 1.0 / np.asarray(E, dtype=float).reshape(-1, 1)

    def identity(self):
        return np.ones((1, 1))

    def _sample(self, n, rng):
        return np.exp(rng.uniform(np.log(self.low), np.log(self.high), size=(n, 1)))

    def distribution_symmetric(self):
        return bool(np.isclose(self.low * self.high, 1.0))


class DeclaredZoom(Zoom):
    is_unitary = False


def _rows(n=6, seed=0):
    return np.random.default_rng(seed).random((n, SHAPE[0] * SHAPE[1]))


def test_an_undeclared_affine_subclass_is_refused_naming_what_to_define():
    zoom = Zoom(SHAPE, 1 / 1.4, 1.4)  # symmetric law: with the inherited claim, "auto" took the templates side
    with pytest.raises(NotImplementedError, match=r"Zoom does not define is_unitary: .*'Your own group'"):
        OrbitFourierFeatures(zoom, n_components=8, n_group_samples=4, random_state=0).fit(_rows())


@pytest.mark.parametrize("low", [1 / 1.4, 0.7])
def test_a_declared_zoom_gets_eq_7_over_its_own_action(low):
    zoom = DeclaredZoom(SHAPE, low, 1.4)
    X = _rows()
    est = OrbitFourierFeatures(zoom, n_components=16, n_group_samples=5, gamma=0.05, random_state=0).fit(X)
    np.testing.assert_allclose(est.transform(X), fourier_by_hand(est, zoom, X), atol=1e-12)
    # Nyström's kernel of g x and GICDF's <x, g t> run on it too
    OrbitNystroem(zoom, n_components=4, n_group_samples=3, random_state=0).fit(X).transform(X)
    GroupCDFFeatures(zoom, n_templates=3, n_bins=4, n_group_samples=3, random_state=0).fit(X).transform(X)


def test_the_library_groups_keep_their_claims():
    assert ImageRotation(SHAPE).is_unitary and PolarRotation(SHAPE).is_unitary
    assert ImageTranslation(SHAPE, Normal(1.0)).is_unitary
    scaling = ImageScaling(SHAPE, LogUniform(0.8, 1.25))
    assert not scaling.is_unitary and scaling.is_unitary_in_continuum
    rotation = ImageRotation(SHAPE, Uniform(-0.3, 0.3))
    assert (rotation * ImageTranslation(SHAPE, Normal(1.0))).is_unitary
    assert not (rotation * scaling).is_unitary and (rotation * scaling).is_unitary_in_continuum


class Bare(Group):
    """A group that defines nothing."""


@pytest.mark.parametrize("call, name", [
    (lambda g: g.is_unitary, "is_unitary"),
    (lambda g: g.is_symmetric, "is_symmetric"),
    (lambda g: g.identity(), r"identity\(\)"),
    (lambda g: g.inverse(np.zeros((1, 1))), r"inverse\(E\)"),
    (lambda g: g.act(np.zeros((1, 3)), np.zeros((1, 1))), r"_act\(X, E\)"),
    (lambda g: g.sample(2, random_state=0), r"_sample\(n, rng\)"),
])
def test_what_a_group_does_not_define_is_named(call, name):
    with pytest.raises(NotImplementedError, match=rf"^Bare does not define {name}: "):
        call(Bare())
