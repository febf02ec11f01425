"""Group.act_adjoint: the transpose of a linear action's map, <g x, t> = <x, g^T t> exactly, unitary or not; orbit
Fourier features move a scaling or a time warp to their frequencies with it (Raj et al. 2017, Eq. 7 exactly, where
the g^{-1} shortcut of §4.3 is far from it on the grid)."""
import pickle

import numpy as np
import pytest

from orbitkernels.features import GroupCDFFeatures, OrbitFourierFeatures, OrbitNystroem
from orbitkernels.groups import (BlockPermutation, CyclicShift, ImageRotation, ImageScaling, ImageTranslation,
                                 LogUniform, Normal, PitchShift, TimeWarp, Uniform)

GROUPS = {
    "scaling": lambda: ImageScaling((12, 10), LogUniform(0.6, 1.6)),
    "scaling-rgb": lambda: ImageScaling((8, 8, 3), LogUniform(0.7, 1.4)),
    "rotation": lambda: ImageRotation((9, 9)),
    "scaling-x-shift-x-rotation": lambda: (ImageScaling((12, 12), LogUniform(0.7, 1.4))
                                           * ImageTranslation((12, 12), Normal(1.0)) * ImageRotation((12, 12))),
    "time-warp": lambda: TimeWarp(50, LogUniform(0.5, 2.0)),
}


@pytest.mark.parametrize("name", sorted(GROUPS))
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_the_adjoint_moves_the_action_across_the_inner_product(name, dtype):
    g = GROUPS[name]()
    assert g.has_adjoint
    rng = np.random.default_rng(0)
    X = rng.normal(size=(5, g.n_features)).astype(dtype)
    T = rng.normal(size=(4, g.n_features)).astype(dtype)
    E = g.sample(6, rng)
    moved = g.act_adjoint(T, E)
    assert moved.shape == (6, 4, g.n_features) and moved.dtype == dtype
    lhs = np.einsum("kid,jd->kij", g.act(X, E).astype(np.float64), T.astype(np.float64))
    rhs = np.einsum("id,kjd->kij", X.astype(np.float64), moved.astype(np.float64))
    np.testing.assert_allclose(rhs, lhs, rtol=0, atol=1e-12 if dtype == np.float64 else 2e-5)
    if not g.is_unitary:  # where g^{-1} is no transpose: the shortcut's error, which the adjoint removes
        inverse = np.einsum("id,kjd->kij", X.astype(np.float64), g.act_inverse(T, E).astype(np.float64))
        assert np.abs(inverse - lhs).max() > 0.1


@pytest.mark.parametrize("group", [CyclicShift(6), BlockPermutation(2, 3), PitchShift(64, Uniform(-100, 100), n_fft=32),
                                   CyclicShift(6) * BlockPermutation(2, 3)], ids=repr)
def test_groups_without_a_known_map_say_so(group):
    assert not group.has_adjoint
    with pytest.raises(NotImplementedError, match="has_adjoint is False"):
        group.act_adjoint(np.ones((1, group.n_features)), group.sample(1, 0))


def test_act_adjoint_checks_its_inputs_as_act_does():
    g = GROUPS["scaling"]()
    with pytest.raises(ValueError, match="120"):
        g.act_adjoint(np.ones((2, 7)), [[1.0]])
    with pytest.raises(ValueError):
        g.act_adjoint(np.ones((2, 120)), [[-1.0]])  # a scale must be positive
    with pytest.raises(ValueError, match="NaN"):
        g.act_adjoint(np.full((2, 120), np.nan), [[1.0]])


@pytest.mark.parametrize("name", ["scaling", "scaling-x-shift-x-rotation", "time-warp"])
def test_orbit_fourier_features_move_a_non_unitary_action_by_its_transpose(name):
    g = GROUPS[name]()
    X = np.random.default_rng(1).normal(size=(20, g.n_features))
    kw = dict(gamma=0.5 / g.n_features, n_components=40, n_group_samples=8, random_state=0)
    auto = OrbitFourierFeatures(g, **kw).fit(X)
    data = OrbitFourierFeatures(g, action="data", **kw).fit(X)
    shortcut = OrbitFourierFeatures(g, action="templates", **kw).fit(X)
    assert (auto.action_, auto.plan_.path, data.action_, shortcut.action_) == ("templates", "gemm", "data",
                                                                              "templates")
    Fa, Fd = auto.transform(X), data.transform(X)
    np.testing.assert_allclose(Fa, Fd, rtol=0, atol=1e-12)  # Eq. 7 itself, on the other side
    assert np.abs(shortcut.transform(X) - Fd).max() > 1e-3  # the explicit g^{-1} shortcut is not
    # in float32, to its rounding; and after a pickle round trip
    F32 = OrbitFourierFeatures(g, dtype="float32", **kw).fit(X).transform(X.astype(np.float32))
    np.testing.assert_allclose(F32, Fd, rtol=0, atol=1e-4)
    np.testing.assert_allclose(pickle.loads(pickle.dumps(auto)).transform(X), Fa, rtol=0, atol=1e-15)


def test_kernels_of_g_x_and_gicdf_keep_their_sides():
    g = GROUPS["scaling"]()
    X = np.random.default_rng(2).normal(size=(6, g.n_features))
    # a Gaussian kernel of g x needs |g x|, which the transpose does not give
    assert OrbitNystroem(g, n_components=4, n_group_samples=4, random_state=0).fit(X).action_ == "data"
    # GICDF is defined through <x, g t>: its templates move by g itself, as ever
    cdf = GroupCDFFeatures(g, n_templates=3, n_bins=4, n_group_samples=4, random_state=0).fit(X)
    assert cdf.action_ == "templates" and not cdf.plan_._template_adjoint and not cdf.plan_._template_inverse


def test_a_plan_pickled_before_the_adjoint_existed_still_moves_by_the_inverse():
    """Plans pickled by an earlier version have no ``_template_adjoint``: the class default keeps them working."""
    g = ImageRotation((8, 8))
    X = np.random.default_rng(3).normal(size=(5, 64))
    f = OrbitFourierFeatures(g, n_components=6, n_group_samples=4, random_state=0).fit(X)
    ref = f.transform(X)
    state = pickle.loads(pickle.dumps(f))
    state.plan_.__dict__.pop("_template_adjoint", None)
    state.plan_.__dict__.pop("_cache", None)
    np.testing.assert_allclose(state.transform(X), ref, rtol=0, atol=1e-15)


def test_the_transposes_are_taken_only_where_the_moved_frequencies_fit_the_budget():
    """The s·r moved frequencies are the fitted model's, outside max_memory_mb: "auto" takes the transposes only
    where they fit it, so a small budget keeps the data side's small footprint (an audit: 448 MB of moved
    frequencies against a 58 MB peak on the data side at 16 MB)."""
    g = GROUPS["scaling"]()  # 120 pixels
    X = np.random.default_rng(4).normal(size=(10, 120))
    kw = dict(n_components=100, n_group_samples=10, random_state=0)  # 100 x 10 x 120 x 8 bytes = 0.92 MB
    assert OrbitFourierFeatures(g, max_memory_mb=0.9, **kw).fit(X).action_ == "data"
    assert OrbitFourierFeatures(g, max_memory_mb=1.0, **kw).fit(X).action_ == "templates"
    # float32 moved frequencies take half of it
    assert OrbitFourierFeatures(g, max_memory_mb=0.5, dtype="float32", **kw).fit(X).action_ == "templates"
    assert OrbitFourierFeatures(g, max_memory_mb=0.4, dtype="float32", **kw).fit(X).action_ == "data"
