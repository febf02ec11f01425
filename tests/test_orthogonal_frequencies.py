"""Orthogonal random frequencies for OrbitFourierFeatures (Yu et al. 2016): the same law per frequency, orthogonal
within blocks of d, an unbiased and lower-variance estimate of the orbit kernel (Raj et al. 2017, Eq. 3 / 7)."""
import numpy as np
import pytest

from orbitkernels.features import OrbitFourierFeatures
from orbitkernels.features._frequencies import orthogonal_gaussian
from orbitkernels.groups import CyclicShift, ImageRotation
from orbitkernels.groups.base import TrivialGroup
from orbitkernels.kernels import HaarKernel


@pytest.mark.parametrize("s", [5, 12, 30])
def test_orthogonal_frequencies_are_orthogonal_within_blocks_of_d(s):
    d, gamma = 12, 0.3
    f = OrbitFourierFeatures(gamma=gamma, n_components=s, frequencies="orthogonal", random_state=0)
    W = f.fit(np.random.default_rng(0).normal(size=(20, d))).templates_
    assert W.shape == (s, d) and f.frequencies_ == "orthogonal"
    for a in range(0, s, d):
        G = W[a:a + d] @ W[a:a + d].T
        np.testing.assert_allclose(G - np.diag(np.diag(G)), 0, atol=1e-10)


def test_each_orthogonal_frequency_has_the_gaussian_law_of_iid_ones():
    """Marginally ω ~ N(0, 2γ I): E||ω||² = 2γd, every coordinate mean 0, variance 2γ."""
    d, gamma = 8, 0.5
    X = np.zeros((3, d))
    W = OrbitFourierFeatures(gamma=gamma, n_components=6000, frequencies="orthogonal", random_state=1).fit(X).templates_
    assert np.mean((W ** 2).sum(1)) == pytest.approx(2 * gamma * d, rel=0.03)
    assert np.mean(W[:, 0]) == pytest.approx(0, abs=0.05)
    assert np.var(W[:, 3]) == pytest.approx(2 * gamma, rel=0.06)


def _spread(group, X, exact, gamma, s, law, draws=300):
    vals = np.array([(lambda F: F[0] @ F[1])(OrbitFourierFeatures(
        group, gamma=gamma, n_components=s, frequencies=law, random_state=seed).fit_transform(X))
        for seed in range(draws)])
    assert abs(vals.mean() - exact) < 4 * vals.std() / np.sqrt(draws), law  # unbiased with either law
    return vals.std()


def test_base_kernel_estimate_is_unbiased_and_spreads_half_as_much_as_with_iid_frequencies():
    """Without a group the features estimate the Gaussian kernel; with s = 2d orthogonal frequencies its spread
    over draws is about half that of i.i.d. ones (Yu et al. 2016, Fig. 1)."""
    X = np.random.default_rng(2).normal(size=(2, 8)) * 0.2
    exact = np.exp(-0.5 * np.sum((X[0] - X[1]) ** 2))
    iid, orth = (_spread(None, X, exact, 0.5, 16, law) for law in ("iid", "orthogonal"))
    assert orth < 0.65 * iid, (iid, orth)


def test_orbit_kernel_gram_error_on_rotated_digits_is_about_half_that_of_iid_frequencies():
    """With a group (12 rotations of 12×12 digits), the Gram matrix of the orbit features is also about twice as
    close to the exact orbit kernel with orthogonal frequencies at s = d (why "auto" takes them with a group too)."""
    from sklearn.datasets import load_digits

    X = np.pad(load_digits().images[:60] / 16.0, ((0, 0), (2, 2), (2, 2))).reshape(60, -1)
    g = ImageRotation((12, 12), n_angles=12)
    err = {}
    for law in ("iid", "orthogonal"):
        e = []
        for seed in range(8):
            f = OrbitFourierFeatures(g, gamma=0.02, n_components=144, frequencies=law, random_state=seed,
                                     fast_path="gemm").fit(X)
            K = HaarKernel(g, "rbf", gamma=0.02, elements=f.group_elements_)(X)
            F = f.transform(X)
            e.append(np.linalg.norm(F @ F.T - K) / np.linalg.norm(K))
        err[law] = np.mean(e)
    assert err["orthogonal"] < 0.75 * err["iid"], err


def test_orbit_kernel_estimate_is_unbiased_with_a_group_and_spreads_no_more_than_with_iid_frequencies():
    """Cyclic shifts of Gaussian vectors: each feature averages cos over many differences g x - g' x', and here
    the spread is the i.i.d. one (the least the option gives), never larger."""
    g = CyclicShift(8)
    X = np.random.default_rng(2).normal(size=(2, 8)) * 0.3
    exact = HaarKernel(g, "rbf", gamma=0.5)(X)[0, 1]
    iid, orth = (_spread(g, X, exact, 0.5, 16, law) for law in ("iid", "orthogonal"))
    assert orth < 1.1 * iid, (iid, orth)


def test_orthogonal_features_stay_exactly_invariant_on_a_finite_group():
    g = CyclicShift(10)
    X = np.random.default_rng(3).normal(size=(4, 10))
    f = OrbitFourierFeatures(g, gamma=0.2, n_components=25, frequencies="orthogonal", random_state=0).fit(X)
    np.testing.assert_allclose(f.transform(np.roll(X, 3, axis=1)), f.transform(X), atol=1e-12)


def test_auto_is_orthogonal_for_the_gaussian_kernel_and_iid_for_the_laplacian():
    X = np.random.default_rng(4).normal(size=(6, 5))
    assert OrbitFourierFeatures(n_components=7, random_state=0).fit(X).frequencies_ == "orthogonal"
    assert OrbitFourierFeatures(TrivialGroup(), n_components=7, random_state=0).fit(X).frequencies_ == "orthogonal"
    assert OrbitFourierFeatures(CyclicShift(5), n_components=7, random_state=0).fit(X).frequencies_ == "orthogonal"
    assert OrbitFourierFeatures(kernel="laplacian", n_components=7, random_state=0).fit(X).frequencies_ == "iid"
    with pytest.raises(ValueError, match="frequencies='orthogonal' needs kernel='rbf'"):
        OrbitFourierFeatures(kernel="laplacian", frequencies="orthogonal").fit(X)
    with pytest.raises(ValueError, match="frequencies"):
        OrbitFourierFeatures(frequencies="sobol").fit(X)


def test_iid_frequencies_are_the_draw_every_recorded_result_used():
    """frequencies="iid" draws exactly what OrbitFourierFeatures drew before the option existed (the reproductions
    pin it, so their stored cells stay reproducible bit for bit)."""
    X = np.random.default_rng(5).normal(size=(6, 9))
    f = OrbitFourierFeatures(gamma=0.7, n_components=11, frequencies="iid", random_state=42).fit(X)
    expected = np.random.RandomState(42).normal(scale=np.sqrt(1.4), size=(11, 9))
    np.testing.assert_array_equal(f.templates_, expected)


def test_orthogonal_gaussian_draws_any_number_of_columns():
    rng = np.random.default_rng(6)
    assert orthogonal_gaussian(5, 0, rng).shape == (5, 0)
    Z = orthogonal_gaussian(5, 13, rng)
    assert Z.shape == (5, 13)
    assert np.linalg.matrix_rank(Z[:, 10:]) == 3


def test_reproduction_rows_draw_the_papers_iid_frequencies_unless_a_row_says_otherwise():
    """Every Raj row was recorded with i.i.d. frequencies; "auto" now draws orthogonal ones, so every row pins its
    own (``Method.frequencies``, default the paper's)."""
    import dataclasses

    from orbitkernels.experiments import raj2017

    cfg = raj2017.CONFIGS["rotated_mnist"]["quick"]
    X = np.random.default_rng(7).normal(size=(5, 784))
    fm = raj2017._image_feature_map("orig_rf", None, 20, 0.01, 4, cfg, 0).fit(X)
    assert fm.frequencies_ == "iid"
    row = dataclasses.replace(raj2017.METHODS["orig_rf"], name="orig_rf_orthogonal", frequencies="orthogonal")
    assert raj2017._image_feature_map(row, None, 20, 0.01, 4, cfg, 0).fit(X).frequencies_ == "orthogonal"
    assert all(m.frequency_sampling == "iid" for m in raj2017.METHODS.values())


def test_molecular_features_take_the_same_frequencies_option():
    """MolecularOrbitFeatures draws its frequencies on z like OrbitFourierFeatures: orthogonal by default for the
    Gaussian kernel (blocks of z's dimension), i.i.d. for the Laplacian or on request (the QM7 cells' draw)."""
    from orbitkernels.features import MolecularOrbitFeatures
    from orbitkernels.groups import FiniteRotation3D, encode_molecules

    X = encode_molecules(np.array([[8, 1, 1]]), np.array([[[0, 0, 0.12], [0, 0.76, -0.47], [0, -0.76, -0.47]]]))
    kw = dict(species=(1, 8), n_wavevectors=4, n_components=20, random_state=0)
    f = MolecularOrbitFeatures(FiniteRotation3D("T"), **kw).fit(X)
    W = f.templates_
    d = W.shape[1]  # 2 channels x 2 x 4 wavevectors = 16
    assert f.frequencies_ == "orthogonal" and d == 16
    G = W[:d] @ W[:d].T
    np.testing.assert_allclose(G - np.diag(np.diag(G)), 0, atol=1e-10)
    assert MolecularOrbitFeatures(kernel="laplacian", **kw).fit(X).frequencies_ == "iid"
    iid = MolecularOrbitFeatures(frequencies="iid", **kw).fit(X)
    rng = np.random.RandomState(0)
    rng.normal(size=(4, 3))  # the wavevectors come first
    np.testing.assert_array_equal(iid.templates_, rng.normal(size=(20, 16)))
    with pytest.raises(ValueError, match="frequencies='orthogonal' needs kernel='rbf'"):
        MolecularOrbitFeatures(kernel="laplacian", frequencies="orthogonal", **kw).fit(X)
