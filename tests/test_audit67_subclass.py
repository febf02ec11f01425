"""Audit of the subclass-action change (``Group.__init_subclass__``): a user's subclass of a library group with its
own action is computed through that action everywhere, or refused with a clear error.

Findings (each test below failed before its fix):

* the library's claims about other groups test their class (``isinstance``): ``ImageRotation.commutes_with`` and
  ``CyclicShift.commutes_with`` said True of a subclass that acts otherwise, and ``ImageTranslation``'s
  ``law_invariant_under`` stayed with a subclass of it that acts otherwise; a product of the two then took its
  inverse by parameters, was called symmetric and its features went to the templates by the wrong inverses;
* a subclass of an image group with its own ``affine`` (not ``_act``) kept what the library derived from the form
  of its map: the default sampling swapped the library's PolarRotation in for it, a PolarRotation subclass took the
  polar FFT of plain rotations;
* MolecularOrbitFeatures turns its wavevectors by ``group.matrices`` and never calls ``act``: a Rotation3D subclass
  with its own ``_act`` got its parent's features bit for bit;
* an ``_act`` brought by a mixin before the library class was not seen, and a mixin that is no group made the class
  definition fail (AttributeError).

The brute-force tests compare, for every library group, a subclass acting by the parent's action conjugated by a
fixed coordinate permutation (P^{-1} g P: as unitary, as symmetric, visibly another action) with Raj et al. 2017,
Eq. 7 by hand over ``group.act``, or with the same estimator on a group that has only Group's generic paths.
"""
import itertools
import pickle
import warnings

import numpy as np
import pytest
from sklearn.base import clone

from orbitkernels.features import GroupCDFFeatures, MolecularOrbitFeatures, OrbitFourierFeatures, OrbitNystroem
from orbitkernels.groups import (BlockPermutation, CoulombPermutation, CyclicShift, FiniteRotation3D, Group,
                                 ImageRotation, ImageScaling, ImageTranslation, LogUniform, Normal, NotAGroupWarning,
                                 PitchShift, PolarRotation, ProductGroup, Rotation3D, TimeWarp, TrivialGroup, Uniform,
                                 encode_molecules)
from orbitkernels.groups.image import AffineImageGroup, _warp
from orbitkernels.kernels import HaarKernel
from test_subclass_action import fourier_by_hand  # Raj et al. 2017, Eq. 7 by hand over g's own action


def _perm(d):
    p = np.random.default_rng(d).permutation(d)
    return p, np.argsort(p)


def conjugated(cls, name):
    """``cls`` acting as P^{-1} g P for a fixed permutation P of the coordinates (named ``name``: pickled by it)."""

    class Conjugated(cls):
        def _act(self, X, E):
            p, ip = _perm(X.shape[1])
            return super()._act(X[:, p], E)[:, :, ip]

    Conjugated.__name__ = Conjugated.__qualname__ = name
    return Conjugated


PermutedRotation = conjugated(ImageRotation, "PermutedRotation")
PermutedPolar = conjugated(PolarRotation, "PermutedPolar")
PermutedScaling = conjugated(ImageScaling, "PermutedScaling")
PermutedTranslation = conjugated(ImageTranslation, "PermutedTranslation")
PermutedShift = conjugated(CyclicShift, "PermutedShift")
PermutedTimeWarp = conjugated(TimeWarp, "PermutedTimeWarp")
PermutedPitch = conjugated(PitchShift, "PermutedPitch")
PermutedBlocks = conjugated(BlockPermutation, "PermutedBlocks")
PermutedCoulomb = conjugated(CoulombPermutation, "PermutedCoulomb")
PermutedRotation3D = conjugated(Rotation3D, "PermutedRotation3D")
PermutedFinite3D = conjugated(FiniteRotation3D, "PermutedFinite3D")


class ReversedProduct(ProductGroup):
    """A product acting with its first factor first (the library's acts with its last first)."""

    def _act(self, X, E):
        (f, p), *rest = zip(self.factors, self.split(E))
        Y = f._act(X, p)
        for f, p in rest:
            Y = f._act_each(Y.reshape(len(E) * len(X), -1), np.repeat(p, len(X), axis=0)).reshape(Y.shape)
        return Y


class NegatedTrivial(TrivialGroup):
    def _act(self, X, E):
        return -super()._act(X, E)


def _quietly(cls, *args):
    with warnings.catch_warnings():  # shifts and block swaps: no group (NotAGroupWarning), as intended here
        warnings.simplefilter("ignore", NotAGroupWarning)
        return cls(*args)


SHAPE = (6, 6)

GROUPS = {
    "rotation": lambda: PermutedRotation(SHAPE, Uniform(-0.6, 0.6)),
    "rotation_haar": lambda: PermutedRotation(SHAPE),
    "polar": lambda: PermutedPolar(SHAPE, n_angles=8),
    "scaling": lambda: PermutedScaling(SHAPE, LogUniform(0.8, 1.25)),
    "translation": lambda: PermutedTranslation(SHAPE, Normal(1.0)),
    "cyclic": lambda: PermutedShift(12),
    "cyclic2d": lambda: PermutedShift((3, 4)),
    "time_warp": lambda: PermutedTimeWarp(24, LogUniform(0.8, 1.25)),
    "pitch": lambda: PermutedPitch(64, Uniform(-1200, 1200), n_fft=32),
    "blocks": lambda: PermutedBlocks(4, block_size=3),
    "coulomb": lambda: PermutedCoulomb(3),
    "coulomb_montavon": lambda: PermutedCoulomb(3, sampling="montavon"),
    "rotation3d": lambda: PermutedRotation3D(n_atoms=3),
    "finite_rotation3d": lambda: PermutedFinite3D("T", n_atoms=3),
    "product": lambda: _quietly(ReversedProduct, CyclicShift(6), BlockPermutation(3, block_size=2)),
    "trivial": lambda: NegatedTrivial(),
}


def rows_for(group, n=7, seed=0):
    rng = np.random.default_rng(seed)
    d = group.n_features or 10
    if isinstance(group, CoulombPermutation):  # symmetric matrices (Montavon's sort reads row norms)
        A = rng.normal(size=(n, 3, 3))
        return (A + A.transpose(0, 2, 1)).reshape(n, 9)
    return rng.normal(size=(n, d))


def fourier_on_templates_by_hand(est, g, X):
    """The same with the action moved to the templates by g's own inverses: <x, g_k^{-1} omega_j>."""
    moved = g.act_inverse(est.templates_, est.group_elements_)
    W = np.einsum("k,kns->ns", est.group_weights_, np.exp(1j * np.einsum("nd,ksd->kns", X, moved)))
    return np.hstack([W.real, W.imag]) / np.sqrt(est.n_components_)


class Opaque(Group):
    """Another group's action, law and flags through Group's generic paths alone (no structure, no fast path)."""

    def __init__(self, inner):
        self.inner = inner
        self.n_params, self.is_finite = inner.n_params, inner.is_finite
        self.is_data_dependent = inner.is_data_dependent

    n_features = property(lambda self: self.inner.n_features)
    is_unitary = property(lambda self: self.inner.is_unitary)
    is_unitary_in_continuum = property(lambda self: self.inner.is_unitary_in_continuum)
    is_symmetric = property(lambda self: self.inner.is_symmetric)

    def _check_elements(self, E, name="elements"):
        return self.inner._check_elements(E, name)

    def sample(self, n, random_state=None, *, sampling="iid"):
        return self.inner.sample(n, random_state, sampling=sampling)

    def support(self):
        return self.inner.support()

    def elements(self):
        return self.inner.elements()

    def weights(self):
        return self.inner.weights()

    def identity(self):
        return self.inner.identity()

    def inverse(self, E):
        return self.inner.inverse(E)

    def _act(self, X, E):
        return self.inner._act(X, E)


# --------------------------------------------------------------------------------------------------- the findings
def test_library_claims_of_commuting_do_not_cover_a_subclass_that_acts_otherwise():
    # P^{-1} S P does not commute with S, yet CyclicShift.commutes_with said True (isinstance): the product took its
    # inverse by parameters (2.2 from act_inverse), was called symmetric, and was said to be a group whose averages
    # are invariant to both factors (no NotAGroupWarning), where the features of shifted rows move by 0.05
    a, b = CyclicShift(8), PermutedShift(8)
    x = np.arange(8.0)[None]
    assert not np.array_equal(a.act(b.act(x, [[1]])[0], [[1]]), b.act(a.act(x, [[1]])[0], [[1]]))
    with pytest.warns(NotAGroupWarning):
        product = a * b
    assert not product._commutes() and not product.is_symmetric
    assert product.invariant_factors() == [b]
    with pytest.raises(ValueError, match="non-commuting"):
        product.inverse([[1, 2]])
    X = np.random.default_rng(0).normal(size=(5, 8))
    est = OrbitFourierFeatures(product, gamma=0.3, n_components=8, random_state=0).fit(X)  # all 64 products
    assert est.action_ == "data"
    np.testing.assert_allclose(est.transform(X), fourier_by_hand(est, product, X), rtol=0, atol=1e-12)
    assert np.abs(est.transform(np.roll(X, 1, axis=1)) - est.transform(X)).max() > 0.02  # not invariant to a
    # images: a rotation of permuted pixels and the library's rotation
    rot = ImageRotation((7, 5), Uniform(-0.6, 0.6)) * PermutedRotation((7, 5), Uniform(-0.6, 0.6))
    assert not rot._commutes() and not rot.is_symmetric
    # the library's own claims stand
    assert (CyclicShift(6) * CyclicShift(6))._commutes()
    assert (ImageRotation(SHAPE) * ImageScaling(SHAPE, LogUniform(0.8, 1.25)))._commutes()


def test_a_translation_subclass_drops_the_law_kept_under_rotations():
    # ImageTranslation.law_invariant_under (an isotropic Gaussian shift keeps its law under rotations) was
    # inherited by a translation of permuted pixels, and ImageTranslation's said it of a permuted rotation
    for product in (PermutedTranslation(SHAPE, Normal(1.0)) * ImageRotation(SHAPE, Uniform(-0.6, 0.6)),
                    ImageTranslation(SHAPE, Normal(1.0)) * PermutedRotation(SHAPE, Uniform(-0.6, 0.6))):
        assert not product._commutes(conjugation_ok=True) and not product.is_symmetric
        X = np.random.default_rng(1).normal(size=(5, 36))
        est = OrbitFourierFeatures(product, gamma=0.05, n_components=8, n_group_samples=6, random_state=0).fit(X)
        assert est.action_ == "data"
        np.testing.assert_allclose(est.transform(X), fourier_by_hand(est, product, X), rtol=0, atol=1e-12)
    # the library's pair keeps it
    assert (ImageTranslation(SHAPE, Normal(1.0)) * ImageRotation(SHAPE)).is_symmetric


def _off_centre(A, o=np.array([1.0, 1.0])):
    """(A, b) of A about the point o pixels from the centre: g(u) = A (u - c - o) + c + o."""
    return A, o[None, :] - np.einsum("nij,j->ni", A, o)


class OffCentreRotation(ImageRotation):
    """Rotations about the point one pixel down and right of the centre: only the affine map changes."""

    def affine(self, E):
        return _off_centre(super().affine(E)[0])


class OffCentrePolar(PolarRotation):
    def affine(self, E):
        return _off_centre(super().affine(E)[0])


def test_an_affine_subclass_keeps_its_own_map_under_the_default_sampling():
    g = OffCentreRotation((8, 8))  # the full circle: the library's class becomes its PolarRotation grid
    assert g.grid_subgroup(8) is None
    X = np.random.default_rng(2).normal(size=(5, 64))
    est = OrbitFourierFeatures(g, gamma=0.05, n_components=8, n_group_samples=8, action="data", random_state=0).fit(X)
    assert est.group_ is g  # was the library's PolarRotation: 0.3 from Eq. 7 by hand
    np.testing.assert_allclose(est.transform(X), fourier_by_hand(est, g, X), rtol=0, atol=1e-12)


def test_a_polar_subclass_with_its_own_affine_map_takes_no_polar_fft():
    p = OffCentrePolar((8, 8), n_angles=8)
    assert not p.is_polar
    X = np.random.default_rng(3).normal(size=(5, 64))
    est = OrbitFourierFeatures(p, gamma=0.05, n_components=8, action="data", random_state=0).fit(X)
    assert est.plan_.path != "polar"  # was "polar": rotations about the centre, 0.3 from Eq. 7 by hand
    np.testing.assert_allclose(est.transform(X), fourier_by_hand(est, p, X), rtol=0, atol=1e-12)
    with pytest.raises(ValueError, match="fast_path='polar' applies to polar groups"):
        OrbitFourierFeatures(p, n_components=4, fast_path="polar", random_state=0).fit(X)
    # an off-centre rotation does not commute with the library's: no claim of it either
    assert not (ImageRotation((8, 8)) * OffCentreRotation((8, 8)))._commutes()


def test_an_affine_subclass_keeps_the_fast_warp_paths():
    g = OffCentreRotation(SHAPE, Uniform(-0.6, 0.6))
    assert g.has_adjoint and g._makes_columns and g.grid_subgroup(8) is None  # its claims go, not its warps
    rng = np.random.default_rng(4)
    X, T = rng.normal(size=(3, 36)), rng.normal(size=(2, 36))
    E = g.sample(4, rng)
    # <g x, t> = <x, g^T t> through its own map, and its columns are its own warps
    np.testing.assert_allclose(np.einsum("knd,td->knt", g.act(X, E), T),
                               np.einsum("nd,ktd->knt", X, g.act_adjoint(T, E)), rtol=0, atol=1e-12)
    np.testing.assert_allclose(g._act_columns(X, E), g.act(X, E).transpose(0, 2, 1), rtol=0, atol=1e-12)
    # one warp for a product with a library warp, composed through its map
    product = ImageScaling(SHAPE, LogUniform(0.8, 1.25)) * g
    assert product._makes_columns and product.has_adjoint
    Ep = product.sample(3, rng)
    Es, Eg = product.split(Ep)
    (A1, b1), (A2, b2) = product.factors[0].affine(Es), g.affine(Eg)
    # g1 g2: u -> A1 A2 (u - c) + A1 b2 + b1 + c, one bilinear warp of the composed map
    by_hand = _warp(X, SHAPE, A1 @ A2, np.einsum("nij,nj->ni", A1, b2) + b1, True)
    np.testing.assert_allclose(product.act(X, Ep), by_hand, rtol=0, atol=1e-12)
    est = OrbitFourierFeatures(g, gamma=0.05, n_components=8, n_group_samples=5, action="data", random_state=0).fit(X)
    np.testing.assert_allclose(est.transform(X), fourier_by_hand(est, g, X), rtol=0, atol=1e-12)


MIRROR = np.array([1.0, 1.0, 1.0, -1.0])  # z -> -z on [Z, x, y, z]


class MirroredRotation3D(Rotation3D):
    """Rotations seen in the mirror z -> -z: M R M, the rotation of quaternion (-x, -y, z, w)."""

    def _act(self, X, E):
        A = (X.reshape(len(X), -1, 4) * MIRROR).reshape(len(X), -1)
        return (super()._act(A, E).reshape(len(E), len(X), -1, 4) * MIRROR).reshape(len(E), len(X), -1)


class VouchedMirror(MirroredRotation3D):
    def _act(self, X, E):
        return super()._act(X, E)

    def matrices(self, E):
        M = np.diag(MIRROR[1:])
        return M @ super().matrices(E) @ M


def _molecules():
    rng = np.random.default_rng(5)
    return encode_molecules(np.array([[8, 1, 1, 6], [6, 1, 1, 0]]), rng.normal(size=(2, 4, 3)))


def test_the_molecular_map_refuses_a_rotation_subclass_it_cannot_follow():
    X = _molecules()
    g = MirroredRotation3D(n_atoms=4)
    E = g.sample(3, 0)
    np.testing.assert_allclose(g.act(X, E), Rotation3D(n_atoms=4).act(X, E * [-1, -1, 1, 1]), rtol=0, atol=1e-12)
    # it turned the wavevectors by the parent's matrices: the parent's features bit for bit, 0.24 from its own
    with pytest.raises(ValueError, match="acts by its own _act"):
        MolecularOrbitFeatures(g, n_wavevectors=8, n_components=16, n_group_samples=6, species=(1, 6, 8),
                               random_state=0).fit(X)


def test_the_molecular_map_follows_a_subclass_that_defines_its_matrices():
    X = _molecules()
    kw = dict(n_wavevectors=8, n_components=16, n_group_samples=6, species=(1, 6, 8), random_state=0)
    est = MolecularOrbitFeatures(VouchedMirror(n_atoms=4), **kw).fit(X)
    ref = MolecularOrbitFeatures(Rotation3D(n_atoms=4), **kw).fit(X)
    np.testing.assert_array_equal(ref.group_elements_, est.group_elements_)
    ref.group_elements_ = est.group_elements_ * [-1, -1, 1, 1]  # the same rotations, M R M
    np.testing.assert_allclose(est.transform(X), ref.transform(X), rtol=0, atol=1e-12)
    # the library's own rotations are not refused
    MolecularOrbitFeatures(FiniteRotation3D("T", n_atoms=4), **{**kw, "n_group_samples": None}).fit(X)


class NegatingMixin:
    def _act(self, X, E):
        return -super()._act(X, E)


class Describing:
    """A mixin that is no group."""

    def describe(self):
        return repr(self)


def test_an_action_from_a_mixin_is_seen_and_a_plain_mixin_does_not_break_the_class():
    class NegatedShift(NegatingMixin, CyclicShift):  # _act from the mixin, not the class body
        pass

    class Logged(Describing, CyclicShift):  # was AttributeError: 'Describing' has no attribute '_act'
        def _act(self, X, E):
            return -super()._act(X, E)

    for cls in (NegatedShift, Logged):
        assert cls._acts_itself
        g = cls(6)
        assert g.cyclic_shape is None and not g.permutes_coordinates
        X = np.random.default_rng(6).normal(size=(5, 6))
        est = OrbitFourierFeatures(g, gamma=0.3, n_components=8, random_state=0).fit(X)
        assert est.plan_.path != "fft"
        np.testing.assert_allclose(est.transform(X), fourier_by_hand(est, g, X), rtol=0, atol=1e-12)
        assert not HaarKernel(g, gamma=0.3).fit(X).single_sum_
    # a plain mixin beside an unchanged action keeps every fast path
    class Plain(Describing, CyclicShift):
        pass

    assert Plain(6).cyclic_shape == (6,) and Plain(6).permutes_coordinates and not Plain._acts_itself


# ----------------------------------------------------------------------------------------------------- brute force
@pytest.mark.parametrize("name", sorted(GROUPS))
def test_orbit_fourier_features_are_eq7_over_the_subclass_action_on_every_path(name):
    g = GROUPS[name]()
    X = rows_for(g)
    # visibly another action than the parent's
    parent = type(g).__mro__[1]
    E = g.sample(8, 0)
    assert np.abs(g.act(X, E) - parent._act(g, g._check_X(X), E)).max() > 0.1
    r = None if g.is_finite else 5
    for fast_path, action, sampling, dtype in itertools.product(("auto", "gemm", "fft", "polar", "none"),
                                                                ("auto", "data", "templates"), ("iid", "qmc"),
                                                                (None, "float32")):
        est = OrbitFourierFeatures(g, gamma=0.05, n_components=6, n_group_samples=r, action=action, sampling=sampling,
                                   fast_path=fast_path, dtype=dtype, random_state=0)
        try:
            est.fit(X)
        except ValueError as e:  # refused: a structure it does not have, or a side its action does not allow
            assert fast_path in ("fft", "polar") or action == "templates", (fast_path, action, e)
            assert "applies to" in str(e) or "does not qualify" in str(e) or "cannot give" in str(e), str(e)
            continue
        assert est.group_ is g and est.plan_.path in ("gemm", "data")
        F = est.transform(X)
        ref = fourier_by_hand(est, g, X) if est.action_ == "data" else fourier_on_templates_by_hand(est, g, X)
        np.testing.assert_allclose(F, ref, rtol=0, atol=2e-5 if dtype else 1e-10,
                                   err_msg=f"{fast_path} {action} {sampling} {dtype}")


@pytest.mark.parametrize("name", ["rotation", "polar", "scaling", "cyclic", "time_warp", "blocks", "coulomb_montavon",
                                  "rotation3d", "product"])
def test_nystroem_gicdf_and_haar_kernel_match_the_generic_paths(name):
    g = GROUPS[name]()
    o = Opaque(g)
    X = rows_for(g)
    r = None if g.is_finite else 5
    for action, dtype in itertools.product(("auto", "data", "templates"), (None, "float32")):
        for Est, kw in ((OrbitNystroem, dict(kernel="rbf", gamma=0.05, n_components=5)),
                        (OrbitNystroem, dict(kernel="laplacian", gamma=0.05, n_components=5)),
                        (GroupCDFFeatures, dict(n_templates=4, n_bins=5, action="data" if action == "data" else
                                                "templates"))):
            kw = {"action": action, **kw}
            outs = []
            for grp in (g, o):
                try:
                    est = Est(grp, n_group_samples=r, dtype=dtype, random_state=0, **kw).fit(X)
                    outs.append((est.transform(X), est.plan_.path))
                except ValueError as e:
                    outs.append(str(e).replace(repr(o), repr(g)))
            if isinstance(outs[0], str) or isinstance(outs[1], str):
                assert outs[0] == outs[1]
                continue
            assert outs[0][1] == outs[1][1]
            np.testing.assert_allclose(outs[0][0], outs[1][0], rtol=0, atol=1e-5 if dtype else 1e-10)
    for base_kernel, single_sum in itertools.product(("rbf", "linear"), ("auto", False)):
        K = [HaarKernel(grp, base_kernel=base_kernel, gamma=0.05, n_group_samples=r, single_sum=single_sum,
                        random_state=0).fit(X)(X) for grp in (g, o)]
        np.testing.assert_allclose(K[0], K[1], rtol=0, atol=1e-10)


@pytest.mark.parametrize("name", ["rotation", "cyclic", "scaling", "rotation3d"])
def test_the_torch_backend_computes_the_subclass_action(name):
    pytest.importorskip("torch")
    g = GROUPS[name]()
    X = rows_for(g)
    for action in ("auto", "data"):
        est = OrbitFourierFeatures(g, gamma=0.05, n_components=6, n_group_samples=None if g.is_finite else 5,
                                   action=action, backend="torch", random_state=0).fit(X)
        ref = fourier_by_hand(est, g, X) if est.action_ == "data" else fourier_on_templates_by_hand(est, g, X)
        np.testing.assert_allclose(est.transform(X), ref, rtol=0, atol=1e-10)


def test_a_product_subclass_without_inverses_is_refused_at_fit():
    # its own action (the first factor first) of non-commuting factors has no inverse by parameters: action=
    # "templates" was fitted, then the first transform failed inside act_inverse, advising to use act_inverse
    g = GROUPS["product"]()
    X = rows_for(g)
    for Est, action in ((OrbitFourierFeatures, "templates"), (OrbitNystroem, "templates"), (GroupCDFFeatures, "data")):
        with pytest.raises(ValueError, match=f"action='{action}' applies the inverses .* cannot give"):
            Est(g, action=action, n_components=4, random_state=0).fit(X) if Est is not GroupCDFFeatures \
                else Est(g, action=action, random_state=0).fit(X)
    # the other side is computed, over its own action
    est = OrbitFourierFeatures(g, gamma=0.3, n_components=6, random_state=0).fit(X)
    assert est.action_ == "data"
    np.testing.assert_allclose(est.transform(X), fourier_by_hand(est, g, X), rtol=0, atol=1e-12)


def test_pickle_clone_and_params_keep_the_subclass():
    g = PermutedRotation(SHAPE, Uniform(-0.6, 0.6))
    X = rows_for(g)
    est = OrbitFourierFeatures(g, gamma=0.05, n_components=6, n_group_samples=5, random_state=0).fit(X)
    again = pickle.loads(pickle.dumps(est))
    assert type(again.group_) is PermutedRotation and not again.group_.has_adjoint
    np.testing.assert_array_equal(again.transform(X), est.transform(X))
    cloned = clone(est)
    assert type(cloned.get_params()["group"]) is PermutedRotation
    np.testing.assert_array_equal(cloned.fit(X).transform(X), est.transform(X))


def test_no_library_group_is_reset_or_marked():
    seen, todo = set(), [Group]
    while todo:
        for sub in todo.pop().__subclasses__():
            if sub.__module__.startswith("orbitkernels.") and sub not in seen:
                seen.add(sub)
                todo.append(sub)
    assert {ImageRotation, PolarRotation, FiniteRotation3D, ProductGroup, AffineImageGroup} <= seen
    for cls in seen:
        assert not cls._acts_itself, cls
        for name in Group._FROM_ACTION + AffineImageGroup._FROM_AFFINE:
            value = cls.__dict__.get(name)
            if callable(value) or isinstance(value, property):
                assert value is not Group.__dict__[name], (cls, name)
    # what the flags say of the library's groups
    assert PolarRotation((8, 8)).is_polar and CyclicShift(6).cyclic_shape == (6,)
    assert isinstance(ImageRotation((8, 8)).grid_subgroup(8), PolarRotation)
    assert (ImageRotation(SHAPE) * ImageTranslation(SHAPE, Normal(1.0)))._makes_columns


def test_warnings_stay_quiet_for_library_products():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        CyclicShift(6) * CyclicShift(6)
        ImageRotation(SHAPE, n_angles=4) * ImageScaling(SHAPE, LogUniform(0.8, 1.25))
