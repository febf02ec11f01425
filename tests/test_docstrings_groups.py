"""The public docstrings of :mod:`orbitkernels.groups` say what the code does.

Every public constructor and function documents each parameter of its signature in its numpydoc
Parameters section, in order, with the signature's default; no Parameters section of a public method
names a parameter its signature lacks. The shapes, dtypes, directions of the actions, exactness and
laws that the docstrings state are checked on tiny runs (the algebra of finite groups, the wrapped
uniform angles and the grid subgroup are tested in test_groups.py, test_groups_audit.py and
test_sampling.py).
"""
from __future__ import annotations

import inspect
import re

import numpy as np
import pytest
from numpydoc.docscrape import NumpyDocString

import orbitkernels.groups as G
from orbitkernels.groups import (BlockPermutation, CoulombPermutation, CyclicShift, Discrete, Group, ImageRotation,
                                 ImageScaling, ImageTranslation, LogNormal, LogUniform, Normal, PitchShift,
                                 PolarRotation, ProductGroup, Rotation3D, TimeWarp, TrivialGroup, Uniform, VonMises,
                                 resolve_elements, unit_points, warp_images)


def _public_callables():
    for name in G.__all__:
        obj = getattr(G, name)
        if inspect.isclass(obj) and "__init__" in vars(obj):
            yield name, obj, obj.__init__
        elif inspect.isfunction(obj):
            yield name, obj, obj


def _documented(doc):
    """``[(name, type text)]`` of a Parameters section; ``low, high : float`` gives both names."""
    out = []
    for p in NumpyDocString(doc)["Parameters"]:
        for name in p.name.split(","):
            out.append((name.strip().lstrip("*"), p.type))
    return out


def _default_text(value):
    return f"default={value!r}".replace("'", '"')


@pytest.mark.parametrize("name, obj, func", list(_public_callables()), ids=lambda v: getattr(v, "__name__", ""))
def test_constructors_and_functions_document_every_parameter_with_its_default(name, obj, func):
    params = [p for p in inspect.signature(func).parameters.values() if p.name != "self"]
    documented = _documented(inspect.getdoc(obj))
    assert [n for n, _ in documented] == [p.name for p in params], f"{name}: Parameters section vs signature"
    for (pname, typ), p in zip(documented, params):
        typ = typ.replace("'", '"')
        if p.default is inspect.Parameter.empty:
            assert "default=" not in typ and "optional" not in typ, f"{name}({pname}) has no default"
        else:
            assert _default_text(p.default) in typ, f"{name}({pname}): the signature's default is {p.default!r}"


PROTOCOL = [Group.sample, Group.act, Group.grid_subgroup, G.Distribution.sample, CoulombPermutation.sorted_permutations]


@pytest.mark.parametrize("method", PROTOCOL, ids=lambda m: m.__qualname__)
def test_protocol_methods_document_their_parameters(method):
    params = [p for p in inspect.signature(method).parameters.values() if p.name != "self"]
    documented = dict(_documented(inspect.getdoc(method)))
    assert list(documented) == [p.name for p in params]
    for p in params:
        if p.default is not inspect.Parameter.empty:
            assert _default_text(p.default) in documented[p.name].replace("'", '"')


def test_no_method_documents_a_parameter_it_lacks():
    stale = []
    for name in G.__all__:
        cls = getattr(G, name)
        if not inspect.isclass(cls):
            continue
        for attr, member in vars(cls).items():
            if attr.startswith("_") or not inspect.isfunction(member) or not member.__doc__:
                continue
            names = {n for n, _ in _documented(inspect.getdoc(member))}
            missing = names - set(inspect.signature(member).parameters)
            if missing:
                stale.append(f"{name}.{attr}: {sorted(missing)}")
    assert not stale


def test_rotation3d_docstring_has_no_prose_parsed_as_parameters():
    # the paragraph on qmc sampling stood after the Parameters section and was read as four parameters
    assert [n for n, _ in _documented(inspect.getdoc(Rotation3D))] == ["n_atoms", "reflections"]


def test_samplings_is_documented():
    assert G.SAMPLINGS == ("iid", "qmc")
    source = inspect.getsource(G.base)
    assert re.search(r'#: .*\n#: .*\nSAMPLINGS = ', source)


# ------------------------------------------------------------------------------- shapes and dtypes
def _groups():
    return [
        TimeWarp(16, LogUniform(0.5, 2.0)), PitchShift(64, Uniform(-400, 400), n_fft=16), ImageRotation((4, 4)),
        PolarRotation((4, 4), 8), CyclicShift(5), CyclicShift((2, 3)), BlockPermutation(3, 2), Rotation3D(2),
        Rotation3D(2, reflections=True), CoulombPermutation(3), CoulombPermutation(3, sampling="montavon"),
        TrivialGroup(), ImageTranslation((4, 4), Normal(1.0)) * ImageScaling((4, 4), LogNormal(0.3)),
        TimeWarp(16, LogUniform(0.5, 2.0)) * PitchShift(16, Uniform(-400, 400), n_fft=8),
    ]


@pytest.mark.parametrize("group", _groups(), ids=repr)
def test_actions_have_the_documented_shapes_and_keep_float32(group):
    """Group.act: "float32 stays float32" (TimeWarp returned float64: its sqrt(a) factor was a float64 scalar)."""
    d = group.n_features or 8
    X = np.random.default_rng(0).random((3, d)).astype(np.float32)
    for sampling in ("iid", "qmc"):
        E = group.sample(2, 0, sampling=sampling)
        assert E.shape == (2, group.n_params) and E.dtype == np.float64
    Y = group.act(X, E)
    assert Y.shape == (2, 3, d) and Y.dtype == np.float32
    Ye = group.act_each(X, group.sample(3, 1))
    assert Ye.shape == (3, d) and Ye.dtype == np.float32
    assert group.act(X.astype(int), E).dtype == np.float64
    if not group.is_data_dependent:
        assert group.identity().shape == (1, group.n_params)
        Yi = group.act_inverse(X, E)
        assert Yi.shape == (2, 3, d) and Yi.dtype == np.float32


def test_montavon_scheme_has_no_identity_inverse_or_act_inverse():
    g = CoulombPermutation(3, sampling="montavon")
    X = np.random.default_rng(0).random((2, 9))
    for call in (g.identity, lambda: g.inverse(g.sample(1, 0)), lambda: g.act_inverse(X, g.sample(1, 0))):
        with pytest.raises(ValueError):
            call()


def test_sorted_permutations_checks_its_arguments_and_has_the_documented_shape():
    g = CoulombPermutation(3, sampling="montavon")
    X = np.random.default_rng(0).random((2, 9))
    assert g.sorted_permutations(X).shape == (1, 2, 3)
    P = g.sorted_permutations(X.tolist(), g.sample(4, 0))
    assert P.shape == (4, 2, 3) and P.dtype == np.int64
    # P[k, i, j] is the atom at position j: permuting molecule i by it is the action
    C = X.reshape(2, 3, 3)
    E = g.sample(1, 1)
    p = g.sorted_permutations(X, E)[0, 0]
    np.testing.assert_array_equal(g.act(X, E)[0, 0].reshape(3, 3), C[0][p][:, p])
    with pytest.raises(ValueError, match="9 features"):
        g.sorted_permutations(X[:, :8])
    with pytest.raises(ValueError, match="NaN"):
        g.sorted_permutations(X, np.full((1, 3), np.nan))
    with pytest.raises(ValueError, match="shape"):
        g.sorted_permutations(X, np.zeros((4, 2)))


def test_unit_points_and_resolve_elements_return_what_they_document():
    U = unit_points(7, 3, 0)
    assert U.shape == (7, 3) and U.dtype == np.float64 and U.min() >= 0 and U.max() < 1
    used, E, w = resolve_elements(ImageTranslation((4, 4), Normal(1.0)), None, 0, default_infinite=5)
    assert E.shape == (5, used.n_params) and w.shape == (5,) and w.dtype == np.float64 and np.isclose(w.sum(), 1)


def test_encode_decode_return_the_documented_dtypes():
    X = G.encode_molecules(np.array([[6, 0]], dtype=np.int32), np.ones((1, 2, 3), dtype=np.float32))
    assert X.shape == (1, 8) and X.dtype == np.float64
    Z, R = G.decode_molecules(X.astype(np.float32))
    assert Z.shape == (1, 2) and R.shape == (1, 2, 3) and Z.dtype == R.dtype == np.float32


# ------------------------------------------------------------------------------- what the actions do
def test_rotation_by_a_quarter_turn_is_rot90_exactly_and_other_angles_interpolate():
    X = np.random.default_rng(0).random((2, 36))
    images = X.reshape(2, 6, 6)
    g = ImageRotation((6, 6), n_angles=4)
    Y = g.act(X, g.elements())
    for k in range(4):
        np.testing.assert_array_equal(Y[k].reshape(2, 6, 6), np.rot90(images, k, axes=(1, 2)))
    turned = ImageRotation((6, 6)).act(X, [[np.pi / 6]])[0]
    assert not np.allclose(np.linalg.norm(turned, axis=1), np.linalg.norm(X, axis=1), rtol=1e-3)


def test_translation_moves_content_down_and_right():
    image = np.zeros((6, 6))
    image[2, 2] = 1.0
    Y = ImageTranslation((6, 6), Normal(1.0)).act(image.reshape(1, -1), [[1.0, 2.0]])[0, 0].reshape(6, 6)
    assert Y[3, 4] == 1.0 and Y.sum() == 1.0


def test_scaling_enlarges_about_the_centre_with_intensities_times_one_over_scale():
    ones = np.ones((1, 81))
    Y = ImageScaling((9, 9), LogNormal(0.3)).act(ones, [[2.0]])[0, 0].reshape(9, 9)
    np.testing.assert_allclose(Y, 0.5)  # the whole frame samples the inner half: 1/s everywhere
    dot = np.zeros((9, 9))
    dot[4, 5] = 1.0  # one pixel right of the centre
    Y = ImageScaling((9, 9), LogNormal(0.3)).act(dot.reshape(1, -1), [[2.0]])[0, 0].reshape(9, 9)
    assert Y[4, 6] == Y.max() and Y[4, 4] == 0.0


def test_warp_images_is_the_documented_map():
    X = np.random.default_rng(0).random((2, 16)).astype(np.float32)
    Y = warp_images(X, (4, 4), np.array([[0.0, -1.0], [1.0, 0.0]]), [0.0, 0.0])
    assert Y.shape == (1, 2, 16) and Y.dtype == np.float32
    np.testing.assert_array_equal(Y[0], ImageRotation((4, 4)).act(X, [[np.pi / 2]])[0])
    with pytest.raises(ValueError, match="singular"):
        warp_images(X, (4, 4), np.zeros((2, 2)), [0.0, 0.0])


def test_cyclic_weights_are_indexed_by_element():
    w = np.arange(1.0, 7.0).reshape(2, 3)
    g = CyclicShift((2, 3), weights=w)
    E, q = g.support()
    for e, qk in zip(E.astype(int), q):
        assert np.isclose(qk, w[tuple(e)] / w.sum())


def test_product_acts_last_factor_first_and_star_builds_it():
    rot, shift = ImageRotation((8, 8)), ImageTranslation((8, 8), Normal(1.0))
    assert isinstance(rot * shift, ProductGroup) and (rot * shift).factors == (rot, shift)
    nested = ProductGroup(rot * shift, ImageScaling((8, 8), LogNormal(0.3)))
    assert len(nested.factors) == 3 and nested.n_params == 4
    image = np.zeros((1, 8, 8))
    image[0, 3:5, 2:4] = 1.0
    X = image.reshape(1, -1)
    E = np.array([[np.pi / 2, 1.0, 0.0]])
    expected = rot.act(shift.act(X, E[:, 1:])[0], E[:, :1])[0]
    np.testing.assert_allclose((rot * shift).act(X, E)[0], expected, atol=1e-12)
    np.testing.assert_allclose((rot * shift).act_inverse(expected, E)[0], X, atol=1e-12)
    with pytest.raises(ValueError, match="act_inverse"):
        ProductGroup(rot, shift).inverse(E)


def test_block_and_coulomb_permutations_move_what_the_docstrings_say():
    X = np.arange(6.0)[None]
    # block p[i] of the input goes to block i of the output
    np.testing.assert_array_equal(BlockPermutation(3, 2).act(X, [[2, 0, 1]])[0, 0], [4, 5, 0, 1, 2, 3])
    C = np.random.default_rng(0).random((3, 3))
    p = np.array([2, 0, 1])
    np.testing.assert_array_equal(CoulombPermutation(3).act(C.reshape(1, -1), p[None])[0, 0],
                                  C[p][:, p].ravel())


def test_time_warp_is_sqrt_a_times_x_of_a_t():
    t = np.arange(32.0)
    ramp = (3.0 + 0.5 * t)[None]  # linear: the interpolation is exact
    for a in (0.5, 0.75):
        y = TimeWarp(32, LogUniform(0.5, 2.0)).act(ramp, [[a]])[0, 0]
        np.testing.assert_allclose(y, np.sqrt(a) * (3.0 + 0.5 * a * t), rtol=1e-12)
    y = TimeWarp(32, LogUniform(0.5, 2.0)).act(ramp, [[2.0]])[0, 0]
    assert np.all(y[16:] == 0.0)  # past the end of the row: zeros


def test_pitch_shift_energy_and_frequency_are_the_documented_measurements():
    doc = " ".join(inspect.getdoc(PitchShift).split())
    assert ("changes the norm by up to about 20% for ±400 cents, the energy by up to a third (0.5 s at 8 kHz, "
            "n_fft=512: the norm of a 440 Hz tone ×0.89 at -400 cents and ×1.03 at +400, of white noise ×0.81 and "
            "×0.94") in doc
    n, rate = 4000, 8000.0
    tone = np.sin(2 * np.pi * 440 * np.arange(n) / rate)[None]
    noise = np.random.default_rng(0).normal(size=(2, n))
    g = PitchShift(n, Uniform(-400, 400))
    for cents, tone_ratio, noise_ratio in ((-400, 0.89, 0.81), (400, 1.03, 0.94)):
        y = g.act(tone, [[cents]])[0, 0]
        assert abs(np.linalg.norm(y) / np.linalg.norm(tone) - tone_ratio) < 0.01
        peak = np.fft.rfftfreq(n, 1 / rate)[np.argmax(np.abs(np.fft.rfft(y)))]
        assert abs(peak - 440 * 2 ** (cents / 1200)) < rate / g.n_fft
        ratios = np.linalg.norm(g.act(noise, [[cents]])[0], axis=1) / np.linalg.norm(noise, axis=1)
        assert np.all(np.abs(ratios - noise_ratio) < 0.015)
        assert np.all(ratios**2 > 2 / 3 - 0.02)  # the energy: "up to a third"


def test_polar_rotation_defaults_and_elements():
    g = PolarRotation((7, 9))
    assert g.n_angles == 64 and g.n_radii == 4 and g.max_radius == 3.5 and g.weights() is None
    np.testing.assert_allclose(g.elements()[:, 0], 2 * np.pi * np.arange(64) / 64)
    law = VonMises(2.0, 1.0)
    w = PolarRotation((8, 8), n_angles=16, angle=law).weights()
    theta = 2 * np.pi * np.arange(16) / 16
    dens = np.exp(law.kappa * np.cos(theta - law.loc))
    np.testing.assert_allclose(w, dens / dens.sum())
    with pytest.raises(TypeError, match="Uniform or VonMises"):
        PolarRotation((8, 8), angle=Normal(1.0))


# ------------------------------------------------------------------------------- the laws
LAWS = [Uniform(-1.0, 2.0), LogUniform(0.5, 2.0), VonMises(2.0, 3.0), VonMises(0.0), Normal(2.0, 1.0),
        LogNormal(0.3, 0.5), Discrete([3, 1, 2], [1, 1, 2])]


@pytest.mark.parametrize("law", LAWS, ids=repr)
def test_laws_sample_and_ppf_shapes(law):
    assert law.sample(5, 0).shape == (5,) and law.sample(5, 0).dtype == np.float64
    assert law.sample((2, 3), 0).shape == (2, 3)
    np.testing.assert_array_equal(law.sample(5, 0), law.sample(5, 0))
    u = np.linspace(0.0, 1.0, 11)[1:-1].reshape(3, 3)
    assert law.ppf(u).shape == (3, 3)


def test_supports_of_the_laws():
    u = np.linspace(0.0, 1.0, 101)[:-1]
    assert np.all((Uniform(-1, 2).ppf(u) >= -1) & (Uniform(-1, 2).ppf(u) < 2))
    assert np.all((LogUniform(0.5, 2).ppf(u) >= 0.5) & (LogUniform(0.5, 2).ppf(u) < 2))
    for law in (VonMises(2.0, 3.0), VonMises(0.0, 1.0)):
        q = law.ppf(u)
        assert np.all((q >= -np.pi) & (q < np.pi))
        s = law.sample(1000, 0)
        assert np.all(np.abs(s) <= np.pi)
    # Quantiles on [loc - π, loc + π), wrapped
    assert np.isclose(VonMises(2.0, 3.0).ppf(0.0), 3.0 - np.pi)
    # Raj et al.'s κ = 0.2, p(θ) ∝ exp(-κ cos θ), has its mode at π
    draws = VonMises(kappa=0.2, loc=np.pi).sample(20000, 0)
    assert abs(abs(np.angle(np.exp(1j * draws).mean())) - np.pi) < 0.2


@pytest.mark.parametrize("law, kinds", [
    (Uniform(-1, 2), {"additive", "circular"}), (Uniform(0.5, 2), {"additive", "multiplicative", "circular"}),
    (LogUniform(0.5, 2), {"multiplicative"}), (VonMises(1.0), {"circular"}),
    (Normal(1.0), {"additive", "circular"}), (LogNormal(0.3), {"multiplicative"}),
    (Discrete([1, 2]), {"additive", "multiplicative", "circular"}),
])
def test_laws_parameterise_the_documented_kinds(law, kinds):
    for kind in ("additive", "multiplicative", "circular"):
        if kind in kinds:
            law.check_kind(kind)
        else:
            with pytest.raises(ValueError):
                law.check_kind(kind)
    with pytest.raises(ValueError, match="kind"):
        law.check_kind("linear")


@pytest.mark.parametrize("law, kind, symmetric", [
    (LogUniform(0.5, 2.0), "multiplicative", True), (LogUniform(0.5, 3.0), "multiplicative", False),
    (LogNormal(0.3), "multiplicative", True), (LogNormal(0.3, mu=0.1), "multiplicative", False),
    (Normal(1.0), "additive", True), (Normal(1.0, mean=0.5), "additive", False),
    (VonMises(0.0, loc=1.0), "circular", True), (VonMises(2.0, loc=np.pi), "circular", True),
    (VonMises(2.0, loc=1.0), "circular", False), (Uniform(-2, 2), "additive", True),
    (Uniform(-1, 2), "additive", False), (Uniform(-np.pi, np.pi), "circular", True),
    (Uniform(0.5, 2), "multiplicative", False),
    (Discrete([0.5, 1.0, 2.0]), "multiplicative", True), (Discrete([-1, 2]), "additive", False),
])
def test_symmetry_of_the_laws(law, kind, symmetric):
    assert law.is_symmetric(kind) is symmetric


def test_discrete_normalises_its_weights_and_ppf_is_systematic():
    law = Discrete([1, 2], weights=[1, 3])
    assert law.weights == (0.25, 0.75)
    v, w = Discrete([5, 7, 9]).support()
    np.testing.assert_array_equal(v, [5, 7, 9])
    np.testing.assert_allclose(w, 1 / 3)
    law = Discrete([3.0, 1.0, 2.0], [0.15, 0.35, 0.5])
    n = 7
    for shift in (0.0, 0.3, 0.99):
        values = law.ppf((np.arange(n) + shift) / n)
        for value, wk in zip(law.values, law.weights):
            assert int(np.sum(values == value)) in (np.floor(n * wk), np.ceil(n * wk))


def test_equal_laws_compare_and_hash_alike():
    assert Normal(1, 0) == Normal(1.0, mean=0.0) and hash(Normal(1, 0)) == hash(Normal(1.0))
    assert Normal(1.0) != LogNormal(1.0) and Uniform(0, 1) != Uniform(0, 2)
    assert len({Discrete([1, 2]), Discrete([1.0, 2.0])}) == 1
