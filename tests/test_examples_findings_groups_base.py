"""Bugs found while writing the docstring examples of orbitkernels.groups (base, cyclic, permutation,
distributions), each with the test that shows it."""
from __future__ import annotations

import numpy as np
import pytest

from orbitkernels.groups import ImageRotation, VonMises


@pytest.mark.parametrize("loc", [10.0, -10.0, 20.0, 7 * np.pi])
@pytest.mark.parametrize("kappa", [2e6, 1e9])
def test_von_mises_draws_lie_in_minus_pi_pi_for_every_loc_and_kappa_with_a_generator(loc, kappa):
    """The docstring says the draws lie in [-π, π]. Above kappa = 1e6 NumPy's Generator draws the wrapped normal
    loc + N(0, 1/kappa) and wraps it once only, so a loc beyond ±3π gave draws outside (10 - 2π ≈ 3.72 for
    loc = 10); the RandomState path and smaller kappa were wrapped."""
    q = VonMises(kappa, loc=loc)
    theta = q.sample(1000, np.random.default_rng(0))
    assert np.all((theta >= -np.pi) & (theta <= np.pi))
    assert np.abs(np.angle(np.exp(1j * (theta - loc)))).max() < 1e-2  # still concentrated on loc (mod 2π)
    # the draws the group makes through it too
    E = ImageRotation((8, 8), angle=q).sample(50, np.random.default_rng(1))
    assert np.all(np.abs(E) <= np.pi)


def test_von_mises_draws_in_range_keep_their_bits():
    """The wrap touches only the draws NumPy left outside [-π, π]: the others are NumPy's own, bit for bit."""
    for kappa, loc in [(0.2, np.pi), (4.0, 1.0), (2e6, 0.5), (3.0, 10.0)]:
        expected = np.random.default_rng(0).vonmises(loc, kappa, size=500)
        got = VonMises(kappa, loc=loc).sample(500, np.random.default_rng(0))
        inside = (expected >= -np.pi) & (expected <= np.pi)
        assert np.array_equal(got[inside], expected[inside])
        if kappa <= 1e6:  # above, a RandomState draws the wrapped normal itself (its legacy sampler stalls)
            expected = np.random.RandomState(0).vonmises(loc, kappa, size=500)
            assert np.array_equal(VonMises(kappa, loc=loc).sample(500, 0), expected)
