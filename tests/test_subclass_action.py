"""A group subclass with its own action (``_act``) is computed through that action everywhere.

What a group derives from its action (the inverse by parameters, the per-row gather, the transpose, the rows as
columns, one warp for a product, the cyclic / polar FFT structure, a permutation's exact single sum) was inherited
by a subclass that acts otherwise, and the engine computed the parent's action through it: the features of a user's
rotation of column-major images were those of the library's bilinear warp of row-major ones. ``Group.__init_subclass__``
takes those back to :class:`Group`'s (computed through ``_act`` and ``inverse``, or declared absent) unless the
subclass defines them beside its ``_act``.
"""
import numpy as np
import pytest

from orbitkernels.features import OrbitFourierFeatures, OrbitNystroem
from orbitkernels.groups import (CyclicShift, Group, ImageRotation, ImageScaling, LogUniform,
                                 PolarRotation, TimeWarp, Uniform)
from orbitkernels.kernels import HaarKernel

SHAPE = (7, 5)


class ColumnMajorRotation(ImageRotation):
    """Rotations of images flattened column by column (Fortran's and MATLAB's order)."""

    def _act(self, X, E):
        H, W = self.image_shape
        Xc = X.reshape(len(X), W, H).transpose(0, 2, 1).reshape(len(X), -1)
        Y = super()._act(Xc, E)
        return Y.reshape(len(E), len(X), H, W).transpose(0, 1, 3, 2).reshape(len(E), len(X), -1)


class NegatedShift(CyclicShift):
    """Cyclic shifts that also flip the sign of every value: no permutation of coordinates."""

    def _act(self, X, E):
        return -super()._act(X, E)


class ReversedTimeWarp(TimeWarp):
    """A time warp of the waveform played backwards."""

    def _act(self, X, E):
        return super()._act(X[:, ::-1], E)[:, :, ::-1]


class ColumnMajorPolar(PolarRotation):
    def _act(self, X, E):
        H, W = self.image_shape
        Xc = X.reshape(len(X), W, H).transpose(0, 2, 1).reshape(len(X), -1)
        Y = ImageRotation._act(self, Xc, E)
        return Y.reshape(len(E), len(X), H, W).transpose(0, 1, 3, 2).reshape(len(E), len(X), -1)


def column_major(X, shape=SHAPE):
    return X.reshape(len(X), *shape).transpose(0, 2, 1).reshape(len(X), -1)


def fourier_by_hand(est, g, X):
    """Raj et al. 2017, Eq. 7 over the group's own action: [Re, Im] of sum_k w_k exp(i <omega_j, g_k x>) / sqrt(s)."""
    P = np.einsum("knd,sd->kns", g.act(X, est.group_elements_), est.templates_)
    Z = np.einsum("k,kns->ns", est.group_weights_, np.exp(1j * P))
    return np.hstack([Z.real, Z.imag]) / np.sqrt(est.n_components_)


def test_the_subclass_declares_nothing_its_parent_derived_from_the_warp():
    g = ColumnMajorRotation(SHAPE, Uniform(-0.6, 0.6))
    assert not g.has_adjoint and not g._makes_columns and not g.is_polar and g.cyclic_shape is None
    assert ColumnMajorRotation(SHAPE).grid_subgroup(8) is None  # not PolarRotation: the library's action
    with pytest.raises(NotImplementedError, match="has_adjoint is False"):
        g.act_adjoint(np.ones((1, 35)), [[0.1]])
    # what it keeps: the laws, the parameters and the claims about the action it did not change
    assert g.is_unitary and g.is_symmetric and g.n_params == 1
    # the library's own groups keep all of it
    assert ImageRotation(SHAPE).has_adjoint and ImageRotation(SHAPE)._makes_columns
    assert isinstance(ImageRotation(SHAPE).grid_subgroup(8), PolarRotation)
    assert PolarRotation((8, 8)).is_polar and not ColumnMajorPolar((8, 8)).is_polar
    assert CyclicShift(6).cyclic_shape == (6,) and CyclicShift(6).permutes_coordinates
    assert NegatedShift(6).cyclic_shape is None and not NegatedShift(6).permutes_coordinates
    assert TimeWarp(30, LogUniform(0.8, 1.25)).has_adjoint
    assert not ReversedTimeWarp(30, LogUniform(0.8, 1.25)).has_adjoint


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_its_inverse_and_per_row_actions_are_its_own(dtype):
    g = ColumnMajorRotation(SHAPE, Uniform(-0.6, 0.6))
    rng = np.random.default_rng(0)
    X = rng.normal(size=(6, 35)).astype(dtype)
    E = g.sample(6, rng)
    Y = g.act(X, E)
    # the user's action is not the library's warp of these rows
    assert np.abs(Y - ImageRotation(SHAPE).act(X, E)).max() > 0.1
    np.testing.assert_array_equal(g.act_inverse(X, E), g.act(X, g.inverse(E)))
    np.testing.assert_array_equal(g.act_each(X, E), np.stack([Y[i, i] for i in range(6)]))
    np.testing.assert_array_equal(g._act_inverse_each(X, E), g.act_each(X, g.inverse(E)))


def test_a_product_with_a_library_warp_is_not_fused_into_one_warp():
    rot, cm = ImageRotation(SHAPE, Uniform(-0.6, 0.6)), ColumnMajorRotation(SHAPE, Uniform(-0.6, 0.6))
    rng = np.random.default_rng(1)
    X = rng.normal(size=(4, 35))
    for product in (rot * cm, cm * rot, ImageScaling(SHAPE, LogUniform(0.8, 1.25)) * cm):
        a, b = product.factors
        E = product.sample(3, rng)
        Ea, Eb = product.split(E)
        expected = np.stack([a.act(b.act(X, Eb[k:k + 1])[0], Ea[k:k + 1])[0] for k in range(3)])
        np.testing.assert_array_equal(product.act(X, E), expected)
        assert not product.has_adjoint and not product._makes_columns


@pytest.mark.parametrize("action", ["data", "auto"])
def test_orbit_fourier_features_are_eq7_over_its_action(action):
    g = ColumnMajorRotation(SHAPE, Uniform(-0.6, 0.6))
    X = np.random.default_rng(2).normal(size=(9, 35))
    est = OrbitFourierFeatures(g, gamma=0.05, n_components=12, n_group_samples=5, action=action, sampling="iid",
                               random_state=0).fit(X)
    F = est.transform(X)
    if est.action_ == "data":
        np.testing.assert_allclose(F, fourier_by_hand(est, g, X), rtol=0, atol=1e-12)
    else:  # unitary and symmetric: the action moved to the templates by the subclass's own inverse
        moved = g.act(est.templates_, g.inverse(est.group_elements_))
        W = np.einsum("k,kns->ns", est.group_weights_, np.exp(1j * np.einsum("nd,ksd->kns", X, moved)))
        np.testing.assert_allclose(F, np.hstack([W.real, W.imag]) / np.sqrt(12), rtol=0, atol=1e-12)


def test_the_default_sampling_keeps_the_subclass():
    g = ColumnMajorRotation((8, 8))  # the full circle: the library's own class would become PolarRotation
    X = np.random.default_rng(3).normal(size=(5, 64))
    est = OrbitFourierFeatures(g, n_components=6, n_group_samples=8, action="data", random_state=0).fit(X)
    assert est.group_ is g and est.plan_.path == "data"
    np.testing.assert_allclose(est.transform(X), fourier_by_hand(est, g, X), rtol=0, atol=1e-12)


def nystroem_by_hand(est, g, X):
    """Raj et al. 2017, Eq. 8's Nystrom map over the group's own action: sum_k w_k k(g_k x, z_j), then K_zz^{-1/2}."""
    E, Z = est.group_elements_, est.components_
    if est.action_ == "data":  # k(g x, z)
        sq = ((g.act(X, E)[:, :, None, :] - Z[None, None, :, :]) ** 2).sum(-1)
    else:  # a unitary action moves to the landmarks: k(x, g^{-1} z), by the subclass's own inverse
        sq = ((X[None, :, None, :] - g.act(Z, g.inverse(E))[:, None, :, :]) ** 2).sum(-1)
    return np.einsum("k,knj->nj", est.group_weights_, np.exp(-est.gamma_ * sq)) @ est.normalization_.T


@pytest.mark.parametrize("group", [ImageRotation(SHAPE, Uniform(-0.6, 0.6)),
                                   ColumnMajorRotation(SHAPE, Uniform(-0.6, 0.6))], ids=["library", "subclass"])
def test_nystroem_is_eq8_over_its_action(group):
    X = np.random.default_rng(4).normal(size=(8, 35))
    est = OrbitNystroem(group, kernel="rbf", gamma=0.05, n_components=8, n_group_samples=4, random_state=0).fit(X)
    # float32 products (precision_) against float64 by hand
    np.testing.assert_allclose(est.transform(X), nystroem_by_hand(est, group, X), rtol=0, atol=2e-5)


def test_a_cyclic_subclass_takes_no_fft_and_no_single_sum():
    g = NegatedShift(6)
    X = np.random.default_rng(5).normal(size=(7, 6))
    est = OrbitFourierFeatures(g, gamma=0.3, n_components=10, random_state=0).fit(X)
    assert est.plan_.path != "fft"
    np.testing.assert_allclose(est.transform(X), fourier_by_hand(est, g, X), rtol=0, atol=1e-12)
    # the Haar kernel: -x is no permutation of x's coordinates, so no single sum; the double sum is Eq. (3)'s
    assert HaarKernel(CyclicShift(6), gamma=0.3).fit(X).single_sum_
    k = HaarKernel(g, gamma=0.3).fit(X)
    assert not k.single_sum_
    E = g.elements()
    moved = g.act(X, E)  # (6, 7, 6)
    sq = ((moved[:, None, :, None, :] - moved[None, :, None, :, :]) ** 2).sum(-1)  # (g, g', x, y)
    np.testing.assert_allclose(k(X), np.exp(-0.3 * sq).mean(axis=(0, 1)), rtol=0, atol=1e-12)


def test_a_time_warp_subclass_stays_on_the_data_side():
    g = ReversedTimeWarp(30, LogUniform(0.8, 1.25))
    X = np.random.default_rng(6).normal(size=(6, 30))
    est = OrbitFourierFeatures(g, gamma=0.05, n_components=8, n_group_samples=4, random_state=0).fit(X)
    assert est.action_ == "data"
    np.testing.assert_allclose(est.transform(X), fourier_by_hand(est, g, X), rtol=0, atol=1e-12)


class DeclaredAdjoint(ColumnMajorRotation):
    """A subclass that says its own transpose keeps it."""

    def _act(self, X, E):
        return super()._act(X, E)

    def _act_adjoint(self, X, E):
        H, W = self.image_shape
        Xc = column_major(X, (W, H))
        Y = ImageRotation._act_adjoint(self, Xc, E)
        return Y.reshape(len(E), len(X), H, W).transpose(0, 1, 3, 2).reshape(len(E), len(X), -1)

    has_adjoint = True


def test_a_subclass_may_vouch_for_what_it_defines():
    g = DeclaredAdjoint(SHAPE, Uniform(-0.6, 0.6))
    assert g.has_adjoint and not g._makes_columns
    rng = np.random.default_rng(7)
    X, T = rng.normal(size=(3, 35)), rng.normal(size=(2, 35))
    E = g.sample(4, rng)
    # <g x, t> = <x, g^T t>: the declared transpose is the action's
    np.testing.assert_allclose(np.einsum("knd,td->knt", g.act(X, E), T),
                               np.einsum("nd,ktd->knt", X, g.act_adjoint(T, E)), rtol=0, atol=1e-12)


def test_the_list_names_what_group_defines():
    for name in Group._FROM_ACTION:
        assert name in Group.__dict__
