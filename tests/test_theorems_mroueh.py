"""Theorems 1 and 2 of Mroueh, Voinea & Poggio (2015) on small cases."""
import math

import numpy as np
import pytest

from orbitkernels.experiments.mroueh2015 import (
    exact_cdf_kernel,
    expected_kernel_sphere,
    orbit_distance,
    theorem1_bounds,
)
from orbitkernels.features import GroupCDFFeatures
from orbitkernels.groups import BlockPermutation


def _unit(rng, n, d):
    X = rng.normal(size=(n, d))
    return X / np.linalg.norm(X, axis=1, keepdims=True)


def test_orbit_distance_single_sum_equals_double_sum(rng):
    G = BlockPermutation(4, 3)
    X, Z = _unit(rng, 5, 12), _unit(rng, 4, 12)
    single = orbit_distance(G, X, Z)
    double = orbit_distance(G, X, Z, elements=G.elements())
    np.testing.assert_allclose(single, double, rtol=1e-10, atol=1e-12)
    # invariant in both arguments
    E = G.sample(5, rng)
    np.testing.assert_allclose(orbit_distance(G, G.act_each(X, E), Z), single, atol=1e-12)


def test_features_are_exactly_invariant_for_the_full_group(rng):
    G = BlockPermutation(4, 3)
    X = _unit(rng, 6, 12)
    f = GroupCDFFeatures(G, n_templates=7, n_bins=9, random_state=0, normalize=False).fit(X)
    gx = G.act_each(X, G.sample(len(X), rng))
    np.testing.assert_allclose(f.transform(gx), f.transform(X), atol=1e-12)


def test_bins_converge_to_the_exact_integral_like_one_over_n(rng):
    G = BlockPermutation(4, 3)
    X = _unit(rng, 6, 12)
    errs = []
    for n in (10, 100, 1000):
        f = GroupCDFFeatures(G, n_templates=5, n_bins=n, random_state=1, normalize=False).fit(X)
        F = f.transform(X)
        S = f.plan_.similarities(X)
        ref = exact_cdf_kernel(S, S, f.range_)
        errs.append(np.abs(F @ F.T - ref).max())
        assert errs[-1] <= f.range_ / n + 1e-12  # a Riemann sum of a monotone step function
    assert errs[2] < errs[0] / 20


def test_theorem1_sphere_templates_match_the_closed_form(rng):
    G = BlockPermutation(4, 3)
    X = _unit(rng, 8, 12)
    s = 1.5
    f = GroupCDFFeatures(G, n_templates=3000, n_bins=300, template_sampling="sphere", random_state=2,
                         normalize=False).fit(X)
    F = f.transform(X)
    K = expected_kernel_sphere(G, X, s=s)
    # Monte Carlo over 3000 templates (std of one template's integral < 0.3) plus the bins' bias s/n
    assert np.abs(F @ F.T - K).max() < 0.03


def test_theorem1_gaussian_templates_within_eq3_bounds(rng):
    G = BlockPermutation(5, 8)
    d, eps = 40, 0.5
    X, Z = _unit(rng, 10, d), _unit(rng, 10, d)
    f = GroupCDFFeatures(G, n_templates=2000, n_bins=200, epsilon=eps, random_state=3, normalize=False).fit(X)
    dot = (f.transform(X) * f.transform(Z)).sum(1)
    dG = np.diag(orbit_distance(G, X, Z))
    d1, d2 = theorem1_bounds(d, eps)
    dev = dot - (1 + eps - dG)
    assert np.all(dev >= -d2 - 0.02) and np.all(dev <= d1 + 0.02)


def test_theorem1_bounds_shrink_with_dimension():
    d1a, d2a = theorem1_bounds(40, 0.5)
    d1b, d2b = theorem1_bounds(4000, 0.5)
    assert d1b < d1a and d2b < d2a and d2b < 1e-2
    assert d2a == pytest.approx(math.exp(-40 * 0.25 / 16) / math.sqrt(40) + 1.5 * math.exp(-40 * 0.25 / 8))


def test_template_error_decays_with_m(rng):
    G = BlockPermutation(4, 3)
    X = _unit(rng, 8, 12)
    K = expected_kernel_sphere(G, X, s=1.5)
    errs = []
    for m in (10, 1000):
        e = []
        for seed in range(3):
            f = GroupCDFFeatures(G, n_templates=m, n_bins=200, template_sampling="sphere", random_state=seed,
                                 normalize=False).fit(X)
            F = f.transform(X)
            e.append(np.abs(F @ F.T - K).max())
        errs.append(np.mean(e))
    assert errs[1] < errs[0] / 4  # 1/sqrt(m) predicts a factor 10
