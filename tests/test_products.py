"""Products of non-commuting groups on every feature map: act_inverse, templates side = data side.

For a unitary action <g x, t> = <x, g^{-1} t> holds for each sampled element
(Raj et al. 2017, §2.2.1; Mroueh et al. 2015, Remark 2), so the templates-side
similarities must equal the data-side ones up to interpolation, and exactly for
grid-aligned elements (90° turns, integer shifts).
"""
import numpy as np
import pytest

from conftest import smooth_images
from orbitkernels.features import GroupCDFFeatures, OrbitFourierFeatures, OrbitNystroem
from orbitkernels.groups import (
    Discrete, ImageRotation, ImageScaling, ImageTranslation, LogNormal, Normal, ProductGroup, VonMises,
)
from orbitkernels.kernels import HaarKernel

SHAPE = (16, 16)


def _blobs(n, size, rng):
    """Smooth bumps well inside the frame: interpolation and borders matter little."""
    return smooth_images(n, size, rng, spread=6, width=8)


def rot(law=None):
    return ImageRotation(SHAPE, angle=law if law is not None else VonMises(2.0))


def tr(sigma=1.0):
    return ImageTranslation(SHAPE, shift=Normal(sigma))


def sc():
    return ImageScaling(SHAPE, scale=LogNormal(0.1))


PRODUCTS = {
    "rot*tr": lambda: rot() * tr(),
    "tr*rot": lambda: tr() * rot(),
    "rot*sc*tr": lambda: rot() * sc() * tr(),
    "tr*sc*rot": lambda: tr() * sc() * rot(),
    "sc*tr*rot": lambda: sc() * tr() * rot(),
}

MAPS = {
    "gicdf": lambda g, **kw: GroupCDFFeatures(g, n_templates=6, n_bins=5, **kw),
    "fourier": lambda g, **kw: OrbitFourierFeatures(g, gamma=0.05, n_components=20, **kw),
    "nystroem": lambda g, **kw: OrbitNystroem(g, gamma=0.05, n_components=8, **kw),
}


def _maps_on_both_sides(make_map, group, X, **kw):
    side = make_map(group, random_state=0, **kw).fit(X)
    other = "data" if side.action_ == "templates" else "templates"
    data = make_map(group, random_state=0, action=other, **kw).fit(X)
    return side, data


@pytest.mark.parametrize("pname", list(PRODUCTS))
@pytest.mark.parametrize("mname", list(MAPS))
def test_non_commuting_products_fit_and_both_sides_agree(pname, mname, rng):
    group = PRODUCTS[pname]()
    assert isinstance(group, ProductGroup)
    X = _blobs(8, SHAPE[0], rng)
    f, g = _maps_on_both_sides(MAPS[mname], group, X, n_group_samples=6)
    assert {f.action_, g.action_} == {"templates", "data"}
    np.testing.assert_array_equal(f.group_elements_, g.group_elements_)
    Sf, Sg = f.plan_.similarities(X), g.plan_.similarities(X)
    # The templates are white noise, which bilinear interpolation damps: M_g^T t and M_{g^-1} t differ
    # by the interpolation error. Measured relative RMS differences over the 15 cases: 0.025-0.12
    # (seed 0); the discriminating check against the wrong factor order is
    # test_act_inverse_matches_the_data_side, and the exact cases below are tight.
    rel = np.linalg.norm(Sf - Sg) / np.linalg.norm(Sg)
    assert rel < 0.2, rel
    assert f.transform(X).shape == g.transform(X).shape


@pytest.mark.parametrize("order", ["rot*tr", "tr*rot"])
@pytest.mark.parametrize("mname", list(MAPS))
def test_exact_elements_templates_side_equals_data_side_tightly(order, mname, rng):
    # 90° turns and integer shifts map the pixel grid onto itself: the identity is exact
    # (up to the zeros shifted in at the border, kept away by the blobs' support)
    r = ImageRotation(SHAPE, angle=Discrete([0.0, np.pi / 2, np.pi, -np.pi / 2]))
    t = ImageTranslation(SHAPE, shift=Discrete([-1.0, 0.0, 1.0]))
    group = r * t if order == "rot*tr" else t * r
    # content exactly zero beyond radius 5 of the centre: a 1-pixel shift keeps it in the frame, so
    # norms are kept too (the Nyström rbf kernel needs them)
    u = np.indices(SHAPE).reshape(2, -1).T - (SHAPE[0] - 1) / 2
    X = _blobs(10, SHAPE[0], rng) * ((u ** 2).sum(1) < 25)
    f, g = _maps_on_both_sides(MAPS[mname], group, X, n_group_samples=7)
    Sf, Sg = f.plan_.similarities(X), g.plan_.similarities(X)
    np.testing.assert_allclose(Sf, Sg, atol=1e-10 * np.abs(Sg).max())


def test_readme_example_fits_and_transforms(rng):
    group = ImageRotation((28, 28), angle=VonMises(kappa=2.0)) * ImageTranslation((28, 28), shift=Normal(1.0))
    X = rng.random((5, 784))
    f = OrbitFourierFeatures(group, gamma=0.02, n_components=200, n_group_samples=16, random_state=0).fit(X)
    assert f.action_ == "templates"
    assert f.transform(X).shape == (5, 400)


@pytest.mark.parametrize("pname", list(PRODUCTS))
def test_act_inverse_matches_the_data_side(pname, rng):
    group = PRODUCTS[pname]()
    X = _blobs(8, SHAPE[0], rng)
    T = rng.normal(size=(20, X.shape[1]))
    E = group.sample(6, 1)
    data = np.einsum("rnd,sd->nsr", group.act(X, E), T)  # <g x, t>
    templ = np.einsum("nd,rsd->nsr", X, group.act_inverse(T, E))  # <x, g^{-1} t>
    # the factors' inverses in the original order: what a parameter-space inverse would do
    same_order = np.hstack([f.inverse(p) for f, p in zip(group.factors, group.split(E))])
    wrong = np.einsum("nd,rsd->nsr", X, group.act(T, same_order))
    rel = np.linalg.norm(templ - data) / np.linalg.norm(data)
    rel_wrong = np.linalg.norm(wrong - data) / np.linalg.norm(data)
    assert rel < 0.1 and rel_wrong > 2 * rel, (rel, rel_wrong)  # measured 0.04-0.05 against 0.19-0.53


@pytest.mark.parametrize("pname", list(PRODUCTS))
def test_act_inverse_undoes_act(pname, rng):
    group = PRODUCTS[pname]()
    X = _blobs(3, SHAPE[0], rng)
    E = group.sample(4, 0)
    Y = group.act(X, E)
    for k in range(len(E)):
        back = group.act_inverse(Y[k], E[k : k + 1])[0]
        # two bilinear interpolations of 16x16 bumps: measured 0.05-0.11 relative error
        assert np.linalg.norm(back - X) < 0.15 * np.linalg.norm(X)


def test_act_inverse_of_unfused_product_reverses_the_factors(rng):
    # a product that is not fused into one affine warp: the factors' inverses in reverse order
    from orbitkernels.groups import CyclicShift

    a, b = CyclicShift(12), CyclicShift(12)
    group = ProductGroup(a, b)
    X = rng.normal(size=(2, 12))
    E = np.array([[3.0, 5.0]])
    np.testing.assert_allclose(group.act_inverse(group.act(X, E)[0], E)[0], X)


def test_haar_kernel_on_non_commuting_product_runs_and_is_symmetric(rng):
    group = rot() * tr()
    X = _blobs(5, SHAPE[0], rng)
    K = HaarKernel(group, "rbf", gamma=0.05, n_group_samples=6, random_state=0)(X)
    assert K.shape == (5, 5) and np.isfinite(K).all()
    np.testing.assert_allclose(K, K.T, rtol=1e-10)
