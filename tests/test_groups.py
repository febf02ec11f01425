"""Group actions: algebra, unitarity (Raj et al. 2017, Lemma 2.1), symmetry flags, bad input."""
import numpy as np
import pytest

from orbitkernels.groups import (
    BlockPermutation, CoulombPermutation, CyclicShift, Discrete, ImageRotation, ImageScaling, ImageTranslation,
    LogNormal, LogUniform, Normal, PitchShift, ProductGroup, TimeWarp, Uniform, VonMises, can_move_to_templates,
)


def smooth_images(n, h, w, rng, c=None):
    """Smooth blobs well inside the frame, so interpolation and borders matter little."""
    yy, xx = np.mgrid[0:h, 0:w]
    out = []
    for _ in range(n):
        img = np.zeros((h, w))
        for _ in range(3):
            cy, cx = rng.uniform(0.35, 0.65) * h, rng.uniform(0.35, 0.65) * w
            s = rng.uniform(0.08, 0.14) * h
            img += rng.normal() * np.exp(-((yy - cy) ** 2 + (xx - cx) ** 2) / (2 * s * s))
        out.append(img if c is None else np.repeat(img[:, :, None], c, axis=2) * rng.uniform(0.5, 1.5, size=c))
    return np.array(out).reshape(n, -1)


@pytest.mark.parametrize("group", [BlockPermutation(4, 3), CyclicShift(7), CyclicShift((3, 4)),
                                   ImageRotation((5, 5), n_angles=4), CoulombPermutation(4)])
def test_finite_group_algebra_and_exact_unitarity(group, rng):
    X = rng.normal(size=(5, group.n_features))
    E = group.elements()
    Y = group.act(X, E)
    assert Y.shape == (len(E), 5, group.n_features)
    # Lemma 2.1 holds exactly for coordinate permutations: <gx, gz> = <x, z>
    np.testing.assert_allclose(np.einsum("rnd,rmd->rnm", Y, Y), np.broadcast_to(X @ X.T, (len(E), 5, 5)), atol=1e-10)
    # g^{-1} g = e
    Einv = group.inverse(E)
    for k in range(len(E)):
        back = group.act(Y[k], Einv[k : k + 1])[0]
        np.testing.assert_allclose(back, X, atol=1e-10)
    np.testing.assert_allclose(group.act(X, group.identity())[0], X)
    # act_each agrees with act
    idx = rng.integers(0, len(E), size=5)
    np.testing.assert_allclose(group.act_each(X, E[idx]), Y[idx, np.arange(5)], atol=1e-12)
    assert group.is_unitary and group.is_symmetric and can_move_to_templates(group)


def test_block_permutation_moves_blocks():
    g = BlockPermutation(3, 2)
    x = np.array([[0, 1, 10, 11, 20, 21.0]])
    out = g.act(x, np.array([[2, 0, 1]]))[0, 0]
    np.testing.assert_array_equal(out, [20, 21, 0, 1, 10, 11])
    assert g.order == 6 and len(np.unique(g.elements(), axis=0)) == 6


def test_cyclic_shift_is_roll(rng):
    g = CyclicShift((4, 5))
    X = rng.normal(size=(2, 20))
    out = g.act(X, np.array([[1, 3]]))[0].reshape(2, 4, 5)
    np.testing.assert_allclose(out, np.roll(X.reshape(2, 4, 5), (1, 3), axis=(1, 2)))


def test_rotation_by_90_degrees_is_exact_turn(rng):
    g = ImageRotation((6, 6), n_angles=4)
    X = rng.normal(size=(3, 36))
    Y = g.act(X, g.elements())
    turns = [np.rot90(X.reshape(3, 6, 6), k, axes=(1, 2)).reshape(3, 36) for k in range(4)]
    for k in range(4):
        assert any(np.allclose(Y[k], t, atol=1e-12) for t in turns)
    assert len({tuple(np.round(Y[k, 0], 9)) for k in range(4)}) == 4


@pytest.mark.parametrize("make", [
    lambda s: ImageRotation(s),
    lambda s: ImageTranslation(s, shift=Uniform(-2.5, 2.5)),
    lambda s: ImageScaling(s, scale=LogUniform(0.8, 1.25)),
    lambda s: ImageRotation(s) * ImageScaling(s, scale=LogNormal(0.1)) * ImageTranslation(s, shift=Normal(1.0)),
])
def test_lemma_2_1_image_actions_preserve_inner_products(make, rng):
    # to interpolation accuracy: bilinear sampling of smooth images (scaling included thanks to |J|^(-1/2))
    shape = (32, 32)
    g = make(shape)
    X = smooth_images(6, 32, 32, rng)
    E = g.sample(8, rng)
    Y = g.act(X, E)
    G0 = X @ X.T
    for k in range(len(E)):
        rel = np.abs(Y[k] @ Y[k].T - G0).max() / np.abs(G0).max()
        assert rel < 0.03, (k, E[k], rel)


def test_scaling_without_jacobian_factor_would_not_be_unitary(rng):
    from orbitkernels.groups import warp_images
    X = smooth_images(3, 32, 32, rng)
    A = 1.2 * np.eye(2)[None]
    raw = warp_images(X, (32, 32), A, np.zeros((1, 2)), normalize=False)[0]
    fixed = warp_images(X, (32, 32), A, np.zeros((1, 2)))[0]
    n0 = np.linalg.norm(X, axis=1)
    assert np.all(np.abs(np.linalg.norm(raw, axis=1) / n0 - 1.2) < 0.05)
    assert np.all(np.abs(np.linalg.norm(fixed, axis=1) / n0 - 1.0) < 0.03)


def test_color_images_are_rotated_channelwise(rng):
    g = ImageRotation((8, 8, 3), n_angles=4)
    X = rng.normal(size=(2, 8 * 8 * 3))
    Y = g.act(X, np.array([[np.pi / 2]]))[0].reshape(2, 8, 8, 3)
    ref = X.reshape(2, 8, 8, 3)
    assert any(np.allclose(Y, np.rot90(ref, k, axes=(1, 2)), atol=1e-12) for k in (1, 3))


def test_product_of_image_groups_is_one_warp(rng):
    s = (16, 16)
    rot, tr = ImageRotation(s, n_angles=4), ImageTranslation(s, shift=Discrete([-1.0, 0.0, 1.0]))
    p = rot * tr
    X = rng.normal(size=(2, 256))
    E = np.array([[np.pi / 2, 1.0, 0.0]])
    fused = p.act(X, E)[0]
    sequential = rot.act(tr.act(X, E[:, 1:])[0], E[:, :1])[0]
    np.testing.assert_allclose(fused, sequential, atol=1e-12)


def test_symmetry_flags():
    s = (8, 8)
    assert ImageRotation(s).is_symmetric
    assert ImageRotation(s, angle=VonMises(2.0)).is_symmetric
    assert ImageRotation(s, angle=VonMises(0.2, loc=np.pi)).is_symmetric  # Raj's sign convention
    assert not ImageRotation(s, angle=VonMises(2.0, loc=0.5)).is_symmetric
    assert not ImageRotation(s, angle=Uniform(0, 0.5)).is_symmetric
    assert ImageScaling(s, scale=LogNormal(0.3)).is_symmetric
    assert not ImageScaling(s, scale=Uniform(0.8, 1.2)).is_symmetric  # 1/a is not uniform
    assert ImageScaling(s, scale=LogUniform(0.8, 1.25)).is_symmetric
    # rotation and an isotropic Gaussian translation: the inverse has the same law
    assert (ImageRotation(s) * ImageTranslation(s, shift=Normal(1.0))).is_symmetric
    # rotation and a uniform square of shifts: it does not
    assert not (ImageRotation(s) * ImageTranslation(s, shift=Uniform(-3, 3))).is_symmetric
    assert not CoulombPermutation(4, sampling="montavon").is_unitary
    assert not can_move_to_templates(CoulombPermutation(4, sampling="montavon"))
    assert CyclicShift(5, weights=[3, 2, 1, 1, 2]).is_symmetric
    assert not CyclicShift(5, weights=[3, 2, 1, 0, 0]).is_symmetric


def test_sampling_follows_distribution():
    g = ImageRotation((4, 4), angle=VonMises(4.0))
    a = g.sample(20000, 0)[:, 0]
    assert abs(np.mean(np.cos(a)) - 0.8635) < 0.01  # I1(4)/I0(4)
    t = ImageTranslation((4, 4), shift=(Uniform(-3, 3), Normal(0.5))).sample(20000, 1)
    assert abs(t[:, 0].std() - np.sqrt(3)) < 0.05 and abs(t[:, 1].std() - 0.5) < 0.02
    np.testing.assert_array_equal(g.sample(5, 3), g.sample(5, 3))


def test_montavon_sampling_is_permutation_invariant_and_near_sorted(rng):
    a = 6
    g = CoulombPermutation(a, sampling="montavon", noise=0.5)
    Z = rng.uniform(1, 8, size=a)
    R = rng.normal(size=(a, 3)) * 2
    D = np.linalg.norm(R[:, None] - R[None], axis=2)
    C = np.where(np.eye(a, dtype=bool), 0.5 * Z ** 2.4, np.outer(Z, Z) / np.where(D > 0, D, 1))
    x = C.ravel()[None]
    perm = rng.permutation(a)
    x_relabelled = C[perm][:, perm].ravel()[None]
    E = g.sample(10, 0)
    np.testing.assert_allclose(g.act(x, E), g.act(x_relabelled, E), atol=1e-12)
    sorted_x = g.sort(x)
    norms = np.linalg.norm(sorted_x.reshape(a, a), axis=1)
    assert np.all(np.diff(norms) <= 1e-12)
    zero_noise = CoulombPermutation(a, sampling="montavon", noise=0.0)
    np.testing.assert_allclose(zero_noise.act(x, zero_noise.sample(2, 0))[0], sorted_x)


def test_audio_groups_shape_and_energy(rng):
    n = 4000
    t = np.arange(n) / 8000.0
    tone = np.sin(2 * np.pi * 440 * t)[None]
    ps = PitchShift(n, cents=Uniform(-400, 400))
    y = ps.act(tone, np.array([[400.0]]))[0, 0]
    f = np.fft.rfftfreq(n, 1 / 8000)[np.argmax(np.abs(np.fft.rfft(y)))]
    assert abs(f - 440 * 2 ** (400 / 1200)) < 8000 / ps.n_fft + 2
    assert abs(np.linalg.norm(y) / np.linalg.norm(tone) - 1) < 0.05
    tw = TimeWarp(n, rate=LogUniform(0.5, 2.0))
    y2 = tw.act(tone, np.array([[0.5]]))[0, 0]
    f2 = np.fft.rfftfreq(n, 1 / 8000)[np.argmax(np.abs(np.fft.rfft(y2)))]
    assert abs(f2 - 220) < 5
    assert tw.is_symmetric and not TimeWarp(n, rate=Uniform(0.5, 2)).is_symmetric
    assert not ps.is_unitary


@pytest.mark.parametrize("make, match", [
    (lambda: VonMises(-1.0), "kappa"),
    (lambda: Normal(0.0), "sigma"),
    (lambda: LogNormal(-0.1), "sigma"),
    (lambda: Uniform(2, 1), "low < high"),
    (lambda: BlockPermutation(0, 3), "n_blocks"),
    (lambda: ImageRotation((28,)), "image_shape"),
    (lambda: ImageRotation((28, 28), angle=Normal(1.0), n_angles=4), "either"),
    (lambda: ImageScaling((8, 8), scale=Normal(1.0)), "LogNormal"),
    (lambda: CoulombPermutation(5, sampling="sorted"), "sampling"),
    (lambda: CyclicShift((2, 3, 4)), "1-D or 2-D"),
    (lambda: PitchShift(100, Uniform(-1, 1), n_fft=512), "n_fft"),
])
def test_bad_parameters_are_named(make, match):
    with pytest.raises((ValueError, TypeError), match=match):
        make()


def test_bad_inputs_to_actions(rng):
    g = ImageRotation((28, 28))
    with pytest.raises(ValueError, match="784"):
        g.act(rng.normal(size=(2, 780)), g.sample(1, 0))
    with pytest.raises(ValueError, match="NaN"):
        g.act(np.full((1, 784), np.nan), g.sample(1, 0))
    with pytest.raises(ValueError, match="2-D"):
        g.act(np.zeros(784), g.sample(1, 0))
    with pytest.raises(ValueError, match="empty"):
        g.act(np.zeros((0, 784)), g.sample(1, 0))
    with pytest.raises(TypeError, match="complex"):
        g.act(np.zeros((1, 784), dtype=complex), g.sample(1, 0))
    with pytest.raises(ValueError, match="shape"):
        g.act(np.zeros((1, 784)), np.zeros((2, 3)))
    with pytest.raises(ValueError, match="one element per row"):
        g.act_each(np.zeros((3, 784)), g.sample(2, 0))
    with pytest.raises(ValueError, match="not finite"):
        ImageRotation((4, 4)).elements()
    with pytest.raises(ValueError, match="permutations"):
        BlockPermutation(3, 1).act(np.zeros((1, 3)), np.array([[0, 0, 1]]))


def test_product_rejects_mismatched_shapes():
    with pytest.raises(ValueError, match="different lengths"):
        ProductGroup(ImageRotation((8, 8)), ImageRotation((9, 9)))
    with pytest.raises(TypeError):
        ProductGroup(ImageRotation((8, 8)), "rotation")
