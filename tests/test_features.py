"""Orbit feature maps: invariance, agreement with the papers' kernels, scikit-learn behaviour."""
import pickle
import warnings

import numpy as np
import pytest
from sklearn.kernel_approximation import RBFSampler
from sklearn.linear_model import RidgeClassifier
from sklearn.pipeline import make_pipeline

from orbitkernels.features import GroupCDFFeatures, OrbitFourierFeatures, OrbitNystroem
from orbitkernels.groups import (
    BlockPermutation, CoulombPermutation, CyclicShift, ImageRotation, ImageScaling, Uniform,
)
from orbitkernels.kernels import HaarKernel

MAPS = [
    (GroupCDFFeatures, dict(n_templates=6, n_bins=8)),
    (OrbitFourierFeatures, dict(n_components=30, gamma=0.05)),
    (OrbitFourierFeatures, dict(n_components=30, gamma=0.05, kernel="laplacian")),
    (OrbitNystroem, dict(n_components=8, gamma=0.05)),
]


def _data(group, n, rng):
    return rng.normal(size=(n, group.n_features))


@pytest.mark.parametrize("cls, kw", MAPS)
@pytest.mark.parametrize("group", [BlockPermutation(5, 8), CyclicShift((5, 8)), ImageRotation((8, 8), n_angles=4)],
                         ids=["S5", "Z5xZ8", "C4-rot"])
def test_exact_invariance_for_finite_groups(cls, kw, group, rng):
    X = _data(group, 12, rng)
    f = cls(group, random_state=0, **kw).fit(X)
    F = f.transform(X)
    for E in group.elements():
        np.testing.assert_allclose(f.transform(group.act(X, E[None])[0]), F, atol=1e-5)


@pytest.mark.parametrize("cls, kw", MAPS)
def test_templates_and_data_side_agree_for_unitary_symmetric(cls, kw, rng):
    group = BlockPermutation(5, 8)
    X = _data(group, 10, rng)
    a = cls(group, random_state=1, action="templates", **kw).fit(X)
    b = cls(group, random_state=1, action="data", **kw).fit(X)
    assert a.action_ == "templates" and b.action_ == "data"
    np.testing.assert_allclose(a.transform(X), b.transform(X), atol=1e-10)


def test_auto_falls_back_to_data_side_and_templates_is_refused(rng):
    g = ImageScaling((6, 6), scale=Uniform(0.8, 1.2))  # unitary in the continuum only, and q is not symmetric
    X = rng.normal(size=(5, 36))
    f = OrbitFourierFeatures(g, n_components=10, n_group_samples=4, random_state=0, action="data").fit(X)
    assert f.action_ == "data"
    # "auto" moves the scalings to the frequencies by their transposes (act_adjoint): the data side's similarities
    a = OrbitFourierFeatures(g, n_components=10, n_group_samples=4, random_state=0).fit(X)
    assert a.action_ == "templates"
    np.testing.assert_allclose(a.plan_.similarities(X), f.plan_.similarities(X), rtol=0, atol=1e-12)
    # a Gaussian kernel of g x needs |g x|, which the transpose does not give: Nystroem stays on the data
    assert OrbitNystroem(g, n_components=3, n_group_samples=4, random_state=0).fit(X).action_ == "data"
    # asked for explicitly, the templates side is the identity <g x, t> = <x, g^{-1} t> for the
    # sampled elements themselves (act_inverse), which needs a unitary action, not a symmetric q
    t = OrbitFourierFeatures(g, n_components=10, n_group_samples=4, random_state=0, action="templates").fit(X)
    assert t.action_ == "templates"
    St, Sd = t.plan_.similarities(X), f.plan_.similarities(X)
    assert np.linalg.norm(St - Sd) < 0.3 * np.linalg.norm(Sd)  # bilinear interpolation of white-noise frequencies
    m = CoulombPermutation(3, sampling="montavon")
    f = OrbitNystroem(m, n_components=3, n_group_samples=4, random_state=0).fit(rng.normal(size=(5, 9)))
    assert f.action_ == "data"
    with pytest.raises(ValueError, match="unitary"):
        OrbitNystroem(m, n_components=3, n_group_samples=4, action="templates").fit(rng.normal(size=(5, 9)))
    # for GICDF the templates side is the definition; the data side needs a unitary, data-free action
    with pytest.raises(ValueError, match="unitary"):
        GroupCDFFeatures(m, action="data", n_group_samples=3).fit(rng.normal(size=(5, 9)))
    # a Laplacian base kernel moves to the landmarks for a permutation group only
    assert OrbitNystroem(BlockPermutation(3, 3), kernel="laplacian", n_components=3).fit(
        rng.normal(size=(5, 9))).action_ == "templates"
    s = ImageRotation((3, 3), n_angles=4)
    assert OrbitNystroem(s, kernel="laplacian", n_components=3).fit(rng.normal(size=(5, 9))).action_ == "data"


def test_statistical_invariance_improves_with_group_samples(rng):
    g = ImageRotation((12, 12))  # Haar on the circle, sampled
    X = rng.normal(size=(20, 144)) * np.exp(-((np.mgrid[0:12, 0:12] - 5.5) ** 2).sum(0) / 20).ravel()
    Xr = g.act_each(X, g.sample(20, 7))
    errs = []
    for r in (2, 32, 256):
        f = OrbitFourierFeatures(g, n_components=200, gamma=0.05, n_group_samples=r, random_state=0).fit(X)
        errs.append(np.linalg.norm(f.transform(Xr) - f.transform(X)) / np.linalg.norm(f.transform(X)))
    assert errs[0] > errs[1] > errs[2]
    assert errs[2] < 0.5 * errs[0]


def test_mroueh_theorem_1_inner_products_approach_s_minus_dG(rng):
    """<Φ(x), Φ(z)> → s − d_G(x, z), d_G = (2πd)^{-1/2} E||g x − g' z|| (Mroueh et al. 2015, Theorem 1)."""
    g = BlockPermutation(5, 8)
    d = 40
    X = rng.normal(size=(8, d))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    E = g.elements()
    GX = g.act(X, E)  # (120, 8, d)
    pairs = [(0, 1), (2, 3), (4, 5), (6, 7), (0, 5)]
    eps = 0.9

    def err(m, n, seed):
        f = GroupCDFFeatures(g, n_templates=m, n_bins=n, epsilon=eps, random_state=seed).fit(X)
        F = f.transform(X)
        out = []
        for i, j in pairs:
            dG = np.linalg.norm(GX[:, i][:, None] - GX[:, j][None], axis=2).mean() / np.sqrt(2 * np.pi * d)
            out.append(abs(F[i] @ F[j] - (1 + eps - dG)))
        return np.mean(out)

    coarse = np.mean([err(10, 5, s) for s in range(3)])
    fine = np.mean([err(1500, 150, s) for s in range(3)])
    assert fine < 0.02
    assert fine < coarse / 3


def test_raj_fourier_features_converge_to_exact_orbit_kernel_like_one_over_sqrt_s(rng):
    g = ImageRotation((8, 8))
    X = rng.normal(size=(10, 64))
    errs = {}
    for s in (100, 1600):
        e = []
        for seed in range(4):
            # fast_path="gemm": the bilinear warps HaarKernel uses (the default full-circle group runs on
            # the 6-angle grid, whose polar FFT path estimates the polar-resampled kernel instead)
            f = OrbitFourierFeatures(g, n_components=s, gamma=0.02, n_group_samples=6, random_state=seed,
                                     fast_path="gemm").fit(X)
            K = HaarKernel(g, "rbf", gamma=0.02, elements=f.group_elements_)(X)
            F = f.transform(X)
            e.append(np.abs(F @ F.T - K).max())
        errs[s] = np.mean(e)
    ratio = errs[100] / errs[1600]  # 1/sqrt(s): expect sqrt(16) = 4
    assert 2.5 < ratio < 6.5, errs


def test_laplacian_fourier_features_converge_to_the_laplacian_orbit_kernel(rng):
    """Cauchy frequencies estimate E k(gx, g'x') for k = exp(-gamma ||x - y||_1), at the 1/sqrt(s) rate."""
    from sklearn.metrics.pairwise import laplacian_kernel

    g = BlockPermutation(4, 3)
    X = rng.normal(size=(8, 12))
    errs = {}
    for s in (100, 6400):
        e = []
        for seed in range(3):
            f = OrbitFourierFeatures(g, kernel="laplacian", n_components=s, gamma=0.3, n_group_samples=5,
                                     random_state=seed).fit(X)
            K = HaarKernel(g, "laplacian", gamma=0.3, elements=f.group_elements_)(X)
            F = f.transform(X)
            e.append(np.abs(F @ F.T - K).max())
        errs[s] = np.mean(e)
    assert errs[6400] < 0.05 and 4 < errs[100] / errs[6400] < 12, errs  # sqrt(64) = 8
    # no group: the plain Laplacian kernel, which the Gaussian frequencies do not estimate
    X = 0.2 * X  # close points, where the two kernels differ (Laplacian ~0.45, Gaussian ~0.75)
    lap = OrbitFourierFeatures(None, kernel="laplacian", n_components=20000, gamma=0.3, random_state=0).fit(X)
    rbf = OrbitFourierFeatures(None, n_components=20000, gamma=0.3, random_state=0).fit(X)
    K = laplacian_kernel(X, gamma=0.3)
    assert np.abs(lap.transform(X) @ lap.transform(X).T - K).max() < 0.03
    assert np.abs(rbf.transform(X) @ rbf.transform(X).T - K).max() > 0.15
    with pytest.raises(ValueError, match="'kernel' parameter.*'cosine'"):
        OrbitFourierFeatures(kernel="cosine").fit(X)


def test_nystroem_is_exact_when_landmarks_span_the_orbits(rng):
    """With every orbit point as a landmark, K_{gx,Z} K_ZZ^+ K_{Z,g'x'} = k(gx, g'x'), so Eq. 8 gives k_G exactly."""
    g = BlockPermutation(4, 3)
    X = rng.normal(size=(3, 12))
    orbit = g.act(X, g.elements()).reshape(-1, 12)  # 72 points
    f = OrbitNystroem(g, n_components=len(orbit), gamma=0.1, random_state=0).fit(orbit)
    F = f.transform(X)
    K = HaarKernel(g, "rbf", gamma=0.1)(X)
    np.testing.assert_allclose(F @ F.T, K, atol=1e-6)


def test_landmarks_from_orbits_and_montavon_groups(rng):
    g = CoulombPermutation(4, sampling="montavon", noise=0.3)
    X = np.abs(rng.normal(size=(12, 16)))
    f = OrbitNystroem(g, n_components=5, landmarks="orbit", n_group_samples=7, random_state=0).fit(X)
    assert f.transform(X).shape == (12, 5)
    f2 = OrbitNystroem(g, n_components=5, landmarks="orbit", n_group_samples=7, random_state=0).fit(X)
    np.testing.assert_array_equal(f.transform(X), f2.transform(X))


def test_orbit_landmarks_may_outnumber_the_training_rows(rng):
    """Raj §4.1 uses 10k Nyström landmarks on QM7's 5.7k training molecules: only the orbits hold that many points.
    Past n rows each row is drawn again, every copy moved by its own group element; up to n the draw is unchanged."""
    g = CyclicShift(16)
    X = rng.normal(size=(6, 16))
    f = OrbitNystroem(g, gamma=0.05, n_components=15, landmarks="orbit", n_group_samples=4, random_state=0).fit(X)
    Z = f.components_
    assert f.transform(X).shape == (6, 15) and Z.shape == (15, 16)
    assert len({z.tobytes() for z in Z}) > 6  # more distinct landmarks than training rows
    # each landmark is a cyclic shift of a training row (the same values in another order)
    owners = [[i for i in range(6) if np.array_equal(np.sort(z), np.sort(X[i]))] for z in Z]
    assert all(len(o) == 1 for o in owners)
    owners = [o[0] for o in owners]
    assert max(owners.count(i) for i in range(6)) <= 3  # ceil(15 / 6) copies of a row at most
    # the first n landmarks come from one permutation of the rows, as a draw of n landmarks does
    g6 = OrbitNystroem(g, gamma=0.05, n_components=6, landmarks="orbit", n_group_samples=4, random_state=0).fit(X)
    assert sorted(owners[:6]) == list(range(6)) and g6.components_.shape == (6, 16)
    with pytest.raises(ValueError, match="landmarks='orbit'"):
        OrbitNystroem(g, gamma=0.05, n_components=15, n_group_samples=4).fit(X)


def test_gicdf_value_range_and_output_layout(rng):
    g = CyclicShift(16)
    X = rng.normal(size=(20, 16))
    f = GroupCDFFeatures(g, n_templates=3, n_bins=4, random_state=0).fit(X)
    F = f.transform(X)
    assert F.shape == (20, 3 * 9) and f.range_ == 1.5
    cdf = F.reshape(20, 3, 9) / np.sqrt(1.5 / (4 * 3))
    assert np.all(np.diff(cdf, axis=2) >= -1e-12) and cdf.max() <= 1 + 1e-12  # CDFs are non-decreasing, <= 1
    auto = GroupCDFFeatures(g, n_templates=3, n_bins=4, value_range="auto", random_state=0).fit(X)
    assert auto.range_ < 1.0
    np.testing.assert_allclose(auto.transform(X).reshape(20, 3, 9)[:, :, -1] / np.sqrt(auto.range_ / 12), 1.0)


def test_chunking_and_memory_budget_do_not_change_features(rng):
    g = BlockPermutation(5, 8)
    X = rng.normal(size=(64, 40))
    f = OrbitFourierFeatures(g, n_components=50, random_state=3).fit(X)
    F = f.transform(X)
    f.set_params(max_memory_mb=0.2)
    # equal up to rounding: BLAS sums a 1-row block (GEMV) in another order than a 64-row GEMM
    np.testing.assert_allclose(f.transform(X), F, rtol=0, atol=1e-14)
    assert f.plan_.chunk_rows(64, 40, 8) < 64  # the budget really forced several chunks
    with pytest.raises(ValueError, match="max_memory_mb"):
        f.set_params(max_memory_mb=1e-4).transform(X)


def test_float32_in_float32_out(rng):
    g = BlockPermutation(5, 8)
    X = rng.normal(size=(10, 40))
    for cls, kw in MAPS:
        f = cls(g, random_state=0, **kw).fit(X)
        F32 = f.transform(X.astype(np.float32))
        assert F32.dtype == np.float32
        np.testing.assert_allclose(F32, f.transform(X), atol=2e-3)


def test_determinism_and_different_seeds(rng):
    g = ImageRotation((6, 6))
    X = rng.normal(size=(7, 36))
    a = OrbitFourierFeatures(g, n_components=20, n_group_samples=5, random_state=4).fit_transform(X)
    b = OrbitFourierFeatures(g, n_components=20, n_group_samples=5, random_state=4).fit_transform(X)
    c = OrbitFourierFeatures(g, n_components=20, n_group_samples=5, random_state=5).fit_transform(X)
    np.testing.assert_array_equal(a, b)
    assert not np.allclose(a, c)


def test_second_layer_is_rbfsampler_in_a_pipeline(rng):
    """Raj et al. 2017, Remark 3: a Gaussian hyperkernel on orbit embeddings, approximated by RFF."""
    g = CyclicShift(12)
    base = rng.normal(size=(2, 12))
    X = np.vstack([np.roll(base[i % 2], k) + 0.1 * rng.normal(size=12) for i, k in zip(range(80), rng.integers(0, 12, 80))])
    y = np.arange(80) % 2
    pipe = make_pipeline(OrbitFourierFeatures(g, n_components=100, gamma=0.05, random_state=0),
                         RBFSampler(gamma=1.0, n_components=200, random_state=0), RidgeClassifier(alpha=1e-3))
    pipe.fit(X[:60], y[:60])
    assert pipe.score(X[60:], y[60:]) > 0.9


def test_feature_names_and_pickle(rng):
    X = rng.normal(size=(10, 40))
    f = GroupCDFFeatures(BlockPermutation(5, 8), n_templates=2, n_bins=1, random_state=0).fit(X)
    names = f.get_feature_names_out()
    assert len(names) == 6 and names[0] == "groupcdffeatures0"
    g = pickle.loads(pickle.dumps(f))
    np.testing.assert_array_equal(g.transform(X), f.transform(X))


@pytest.mark.parametrize("make, X, match", [
    (lambda: GroupCDFFeatures(n_bins=0), np.ones((3, 4)), "n_bins"),
    (lambda: GroupCDFFeatures(epsilon=1.5), np.ones((3, 4)), "epsilon"),
    (lambda: GroupCDFFeatures(template_sampling="uniform"), np.ones((3, 4)), "template_sampling"),
    (lambda: OrbitFourierFeatures(gamma=-1.0), np.ones((3, 4)), "gamma"),
    (lambda: OrbitFourierFeatures(n_components=0), np.ones((3, 4)), "n_components"),
    (lambda: OrbitFourierFeatures(n_group_samples=0), np.ones((3, 4)), "n_group_samples"),
    (lambda: OrbitNystroem(n_components=10), np.ones((3, 4)), "landmarks requested"),
    (lambda: OrbitNystroem(kernel="nope", n_components=2), np.ones((3, 4)), "kernel"),
    (lambda: OrbitFourierFeatures(ImageRotation((4, 4))), np.ones((3, 15)), "16 features"),
    (lambda: OrbitFourierFeatures(), np.array([[1.0, np.nan]]), "NaN"),
    (lambda: OrbitFourierFeatures(), np.array([[1.0, np.inf]]), "infinity|inf"),
    (lambda: OrbitFourierFeatures(), np.zeros((0, 3)), "0 sample"),
    (lambda: OrbitFourierFeatures(), np.ones(3), "2D array"),
    (lambda: OrbitFourierFeatures(max_memory_mb=0), np.ones((3, 4)), "max_memory_mb"),
    (lambda: OrbitFourierFeatures(group="rotation"), np.ones((3, 4)), "Group"),
])
def test_bad_input_is_named(make, X, match):
    with pytest.raises((ValueError, TypeError), match=match):
        make().fit(X)


def test_check_estimator_passes():
    from sklearn.utils.estimator_checks import check_estimator
    for est in (GroupCDFFeatures(n_templates=3, n_bins=2, random_state=0),
                OrbitFourierFeatures(n_components=8, random_state=0),
                OrbitNystroem(n_components=4, random_state=0)):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            check_estimator(est)


def test_group_features_inside_grid_search(rng):
    from sklearn.model_selection import GridSearchCV
    X = rng.normal(size=(40, 12))
    y = (X[:, :3].sum(1) > 0).astype(int)
    pipe = make_pipeline(OrbitFourierFeatures(BlockPermutation(4, 3), n_components=20, random_state=0),
                         RidgeClassifier())
    gs = GridSearchCV(pipe, {"orbitfourierfeatures__gamma": [0.01, 0.1]}, cv=2).fit(X, y)
    assert gs.best_params_["orbitfourierfeatures__gamma"] in (0.01, 0.1)


def test_gicdf_data_templates_are_unit_rows_of_the_training_data(rng):
    g = BlockPermutation(4, 3)
    X = rng.normal(size=(30, 12))
    f = GroupCDFFeatures(g, n_templates=5, n_bins=4, template_sampling="data", random_state=0).fit(X)
    T = f.templates_
    np.testing.assert_allclose(np.linalg.norm(T, axis=1), 1.0)
    Xn = X / np.linalg.norm(X, axis=1, keepdims=True)
    assert all(np.isclose(Xn @ t, 1.0).any() for t in T)  # each template is a (normalised) training row
    F = f.transform(X)
    np.testing.assert_allclose(f.transform(g.act(X, g.elements()[7:8])[0]), F, atol=1e-12)  # still exactly invariant
    with pytest.raises(ValueError, match="n_templates <= n_samples"):
        GroupCDFFeatures(g, n_templates=31, template_sampling="data").fit(X)
    with pytest.raises(ValueError, match="template_sampling"):
        GroupCDFFeatures(g, template_sampling="uniform").fit(X)


def test_gicdf_transform_multi_is_transform_at_each_bin_count():
    # one projection pass, several resolutions: each equals a transform with that bin count
    from orbitkernels.groups import CyclicShift

    X = np.random.RandomState(0).normal(size=(30, 12)).astype(np.float32)
    f = GroupCDFFeatures(CyclicShift(12), n_templates=5, n_bins=4, random_state=0).fit(X)
    multi = f.transform_multi(X, [2, 4, 7])
    np.testing.assert_array_equal(multi[4], f.transform(X))
    for n in (2, 7):
        g = GroupCDFFeatures(CyclicShift(12), n_templates=5, n_bins=n, random_state=0).fit(X)
        np.testing.assert_array_equal(multi[n], g.transform(X))
    with pytest.raises(ValueError):
        f.transform_multi(X, [])
