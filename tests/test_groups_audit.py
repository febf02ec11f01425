"""Defects found by auditing the groups, the Haar kernel and the invariance diagnostic (one test each)."""
import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from orbitkernels.diagnostics import invariance_error
from orbitkernels.groups import (
    BlockPermutation, CoulombPermutation, CyclicShift, Discrete, ImageRotation, ImageScaling, LogUniform, PolarRotation,
    Rotation3D, TimeWarp, Uniform, VonMises, resolve_elements, unit_points,
)
from orbitkernels.kernels import HaarKernel

HUGE = 10**30


@pytest.mark.parametrize("reflections", [False, True])
@pytest.mark.parametrize("sampling", ["iid", "qmc"])
def test_rotation3d_samples_from_a_numpy_generator(reflections, sampling):
    # check_random_state passes Generators through; Rotation3D called RandomState.randint on them
    g = Rotation3D(2, reflections=reflections)
    E = g.sample(64, np.random.default_rng(0), sampling=sampling)
    assert E.shape == (64, 5 if reflections else 4)
    np.testing.assert_allclose(np.linalg.norm(E[:, :4], axis=1), 1.0)
    np.testing.assert_array_equal(E, g.sample(64, np.random.default_rng(0), sampling=sampling))
    if reflections:
        assert set(np.unique(E[:, 4])) == {-1.0, 1.0}
    X = np.hstack([np.ones((3, 1)), np.random.default_rng(1).normal(size=(3, 3))] * 2)
    assert invariance_error(_Norms(), X, g, random_state=np.random.default_rng(2))["max"] < 1e-12


def test_rotation3d_iid_draws_of_a_seed_are_unchanged():
    seed = np.random.RandomState(5).randint(0, 2**31 - 1)
    ref = Rotation.random(10, random_state=np.random.default_rng(seed)).as_quat()
    np.testing.assert_array_equal(Rotation3D().sample(10, 5), ref)


class _Norms:
    """Per-atom distances to the origin: invariant under every rotation and inversion."""

    def transform(self, X):
        return np.linalg.norm(X.reshape(len(X), -1, 4)[:, :, 1:], axis=2)


def test_unit_points_takes_a_seed_and_checks_k():
    np.testing.assert_array_equal(unit_points(16, 2, 3), unit_points(16, 2, np.random.RandomState(3)))
    assert unit_points(16, 3, np.random.default_rng(0)).shape == (16, 3)
    with pytest.raises(ValueError, match="k must be >= 1; got 0"):
        unit_points(5, 0, 0)


@pytest.mark.parametrize("call, match", [
    (lambda: Uniform(0, 1).sample(HUGE), "size must be <= 2147483647"),
    (lambda: Uniform(0, 1).sample((2, HUGE)), "size must be <= 2147483647"),
    (lambda: ImageRotation((4, 4)).sample(HUGE), "n must be <= 2147483647"),
    (lambda: ImageRotation((4, 4)).sample(10**12, sampling="qmc"), "n must be <= 2147483647"),
    (lambda: CyclicShift(5).sample(HUGE), "n must be <= 2147483647"),
    (lambda: BlockPermutation(3).sample(HUGE), "n must be <= 2147483647"),
    (lambda: CoulombPermutation(3, sampling="montavon").sample(HUGE), "n must be <= 2147483647"),
    (lambda: unit_points(HUGE, 2, 0), "n must be <= 2147483647"),
    (lambda: invariance_error(_Norms(), np.ones((2, 5)), CyclicShift(5), n_elements=HUGE),
     "n_elements must be <= 2147483647"),
])
def test_huge_counts_are_refused_naming_the_parameter(call, match):
    # were numpy's OverflowError / "Maximum allowed dimension exceeded" / a 7 TiB MemoryError
    with pytest.raises(ValueError, match=match):
        call()


@pytest.mark.parametrize("values", [[-1.0, 2.0], [0.0, 2.0]])
def test_time_warp_refuses_non_positive_discrete_rates(values):
    # accepted before: sample() then drew rates that act() refused, and is_symmetric divided by zero
    with pytest.raises(ValueError, match=r"rate values must be positive"):
        TimeWarp(64, rate=Discrete(values))
    assert TimeWarp(64, rate=Discrete([0.5, 2.0])).is_symmetric


def test_cyclic_shift_refuses_fractional_shifts():
    g = CyclicShift(5)
    x = np.arange(5.0)[None]
    for call in (lambda: g.act(x, [[0.5]]), lambda: g.act_each(x, [[1.4]]), lambda: g.inverse([[2.5]]),
                 lambda: g.shift_index([[0.3]]), lambda: CyclicShift((2, 3)).act(np.ones((1, 6)), [[1, 0.5]])):
        with pytest.raises(ValueError, match="whole numbers"):
            call()
    np.testing.assert_array_equal(g.act(x, [[2.0], [-1.0], [7.0]])[:, 0], [np.roll(x[0], k) for k in (2, -1, 7)])


def _wrapped_density(low, high, theta):
    """Density of Uniform(low, high) wrapped onto the circle, at the angles theta (counted cover)."""
    j = np.arange(-5, 6)[:, None]
    return ((theta[None] + 2 * np.pi * j >= low) & (theta[None] + 2 * np.pi * j < high)).sum(0) / (high - low)


@pytest.mark.parametrize("low, high, symmetric, haar", [
    (-np.pi, 1.5 * np.pi, False, False),   # 1.25 turns: the arc [π, 1.5π] is covered twice
    (0.0, 2.5 * np.pi, False, False),      # extra arc [0, π/2], centred on π/4
    (-2.25 * np.pi, 2.25 * np.pi, True, False),  # extra arc centred on 0
    (0.5 * np.pi, 1.5 * np.pi, True, False),     # centred on π: θ -> -θ keeps it
    (-np.pi, np.pi, True, True),
    (0.0, 4 * np.pi, True, True),
    (-0.3, 0.3, True, False),
    (0.0, 0.5, False, False),
])
def test_uniform_angles_wrap_onto_the_circle(low, high, symmetric, haar):
    theta = np.linspace(-np.pi, np.pi, 3601)[:-1] + 1e-4
    dens = _wrapped_density(low, high, theta)
    truth_symmetric = np.allclose(dens, _wrapped_density(low, high, -theta))
    truth_haar = np.allclose(dens, dens[0])
    assert truth_symmetric == symmetric and truth_haar == haar
    law = Uniform(low, high)
    assert law.is_symmetric("circular") == symmetric
    g = ImageRotation((8, 8), angle=law)
    assert g.is_symmetric == symmetric and g.is_haar() == haar
    assert (g.grid_subgroup(16) is not None) == haar


def test_rotation_by_uniform_over_more_than_a_turn_keeps_its_law():
    # was resolved to the uniform 8-angle grid (is_haar was width >= 2π), i.e. another q than asked
    g = ImageRotation((8, 8), angle=Uniform(-np.pi, 1.5 * np.pi))
    used, E, _ = resolve_elements(g, 8, np.random.RandomState(0), sampling="qmc")
    assert used is g
    assert HaarKernel(g, n_group_samples=8, random_state=0).fit().group_ is g
    # on the polar grid, q_k is the wrapped density at 2πk/A: the arc [π, 1.5π] twice as likely
    A = 8
    w = PolarRotation((8, 8), n_angles=A, angle=Uniform(-np.pi, 1.5 * np.pi)).weights()
    np.testing.assert_allclose(w * 11, [1, 1, 1, 1, 2, 2, 2, 1])
    np.testing.assert_allclose(PolarRotation((8, 8), n_angles=A, angle=Uniform(-2 * np.pi, 2 * np.pi)).weights(),
                               np.full(A, 1 / A))
    assert PolarRotation((8, 8), n_angles=A, angle=VonMises(1.0)).is_symmetric


def test_haar_kernel_refuses_empty_elements():
    X = np.random.default_rng(0).normal(size=(3, 6))
    with pytest.raises(ValueError, match=r"elements is empty \(shape \(0, 1\)\)"):
        HaarKernel(CyclicShift(6), elements=np.zeros((0, 1))).fit(X)


def test_order_of_large_finite_groups_is_counted():
    # was ValueError "too many to enumerate" from S_11 on (and slow enumeration below)
    assert BlockPermutation(13).order == 6227020800
    assert CoulombPermutation(12).order == 479001600
    assert CoulombPermutation(4, sampling="montavon").order is None
    assert (CyclicShift(4000) * CyclicShift(4000)).order == 16_000_000
    assert (BlockPermutation(3) * CyclicShift(3)).order == len((BlockPermutation(3) * CyclicShift(3)).elements())
    assert (ImageRotation((4, 4)) * ImageRotation((4, 4), n_angles=4)).order is None


def test_polar_rotation_repr_shows_a_non_default_radius():
    assert "max_radius=2.0" in repr(PolarRotation((8, 8), max_radius=2.0))
    assert "max_radius" not in repr(PolarRotation((8, 8)))
    assert repr(PolarRotation((8, 8), max_radius=2.0)) != repr(PolarRotation((8, 8)))


@pytest.mark.parametrize("make, error, match", [
    (lambda: Discrete(["1", "2"]), TypeError, r"Discrete values must be real numbers; got \['1', '2'\]"),
    (lambda: Discrete([True, False]), TypeError, "Discrete values must be real numbers.*bool"),
    (lambda: Discrete([1, True]), TypeError, "Discrete values must be real numbers, not booleans"),
    (lambda: Discrete((2.0, np.bool_(True))), TypeError, "Discrete values must be real numbers, not booleans"),
    (lambda: Discrete([1.0, 2.0], weights=[True, 2]), TypeError, "Discrete weights must be real numbers, not bool"),
    (lambda: Discrete([1.0, 2.0], weights=["1", "3"]), TypeError, "Discrete weights must be real numbers"),
    (lambda: Discrete(["a"]), TypeError, "Discrete values must be real numbers"),
    (lambda: Discrete([1j]), TypeError, "Discrete values must be real numbers"),
    (lambda: Discrete([[1.0], [2.0, 3.0]]), ValueError, "Discrete values must be a 1-D sequence"),
])
def test_discrete_refuses_non_numbers_instead_of_converting_them(make, error, match):
    # Discrete(["1", "2"]) and Discrete([True, False]) were converted to (1.0, 2.0) and (1.0, 0.0)
    with pytest.raises(error, match=match):
        make()
    assert Discrete(np.array([1, 2], dtype=np.int32), weights=np.array([1, 3])).weights == (0.25, 0.75)


def test_polar_rotation_names_a_missing_n_angles():
    # was "unsupported operand type(s) for -: 'NoneType' and 'int'"
    with pytest.raises(TypeError, match="n_angles must be an integer; got None"):
        PolarRotation((8, 8), n_angles=None)


@pytest.mark.parametrize("n, sampling, error, match", [
    (8.0, "qmc", TypeError, "n_group_samples must be an integer; got 8.0"),  # was "n_angles must be ..."
    (0, "iid", ValueError, "n_group_samples must be >= 1; got 0"),          # was "n must be ..."
    (HUGE, "qmc", ValueError, "n_group_samples must be <= 2147483647"),     # was "Maximum allowed size exceeded"
])
def test_resolve_elements_names_n_group_samples(n, sampling, error, match):
    with pytest.raises(error, match=match):
        resolve_elements(ImageRotation((4, 4)), n, np.random.RandomState(0), sampling=sampling)


@pytest.mark.parametrize("group, E, match", [
    (ImageRotation((4, 4)) * ImageScaling((4, 4), scale=LogUniform(0.5, 2.0)), [[0.0, -1.0]],
     "ImageScaling factor: scale factors must be positive"),   # acted as a rotation by π
    (CyclicShift(16) * TimeWarp(16, rate=LogUniform(0.5, 2.0)), [[1.0, -1.0]],
     "TimeWarp factor: rates must be positive"),               # gave NaN
    (CyclicShift(16) * TimeWarp(16, rate=LogUniform(0.5, 2.0)), [[0.5, 1.0]],
     "CyclicShift factor: cyclic shifts must be whole numbers"),  # was rounded
])
def test_products_check_each_factors_elements(group, E, match):
    X = np.random.default_rng(0).normal(size=(2, 16))
    for call in (lambda: group.act(X, E), lambda: group.act_each(X[:1], E), lambda: group.act_inverse(X, E)):
        with pytest.raises(ValueError, match=match):
            call()
    with pytest.raises(ValueError, match=match):
        HaarKernel(group, elements=E).fit(X)
    assert np.isfinite(group.act(X, group.sample(3, 0))).all()


@pytest.mark.parametrize("low, high", [(1, 3), (1.0, 3.0), (-1.0, 1.0)])
def test_invariance_error_counts_changed_numeric_class_labels(low, high):
    """A classifier's numeric labels are labels, integers or floats: a prediction moving from 3 to 1 is one change,
    not |3 - 1| / 1, and the same predictions give the same error whatever the labels' dtype."""
    from sklearn.base import BaseEstimator, ClassifierMixin

    class FirstEntry(ClassifierMixin, BaseEstimator):
        """Predicts ``high`` or ``low`` from the sign of the first entry: a shift changes some predictions."""

        def fit(self, X, y):
            self.classes_ = np.array([low, high])
            return self

        def predict(self, X):
            return np.where(np.asarray(X)[:, 0] > 0, high, low)

    X = np.random.default_rng(0).normal(size=(50, 6))
    model = FirstEntry().fit(X, np.ones(50))
    out = invariance_error(model, X, CyclicShift(6), n_elements=None, method="predict")
    assert 0.0 < out["mean"] <= out["max"] <= 1.0
    assert out["mean"] == pytest.approx(1.0 - out["agreement"])
    changed = np.mean([(np.roll(X, s, axis=1)[:, 0] > 0) != (X[:, 0] > 0) for s in range(6)])
    assert out["mean"] == pytest.approx(changed)
