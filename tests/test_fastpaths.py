"""Fast paths of the projection engine: FFT cyclic correlation, polar rotations, float32 GEMM.

Each fast path must give the features of the direct path (same templates, same
elements, same weights) to float32 accuracy, and keep the invariances.
"""
import numpy as np
import pytest

from conftest import smooth_images, torch_devices
from orbitkernels.features import GroupCDFFeatures, OrbitFourierFeatures, OrbitNystroem
from orbitkernels.groups import CyclicShift, ImageRotation, VonMises
from orbitkernels.groups.polar import PolarRotation

MAPS = [
    (OrbitFourierFeatures, dict(n_components=20, gamma=0.05)),
    (OrbitFourierFeatures, dict(n_components=20, gamma=0.05, output="cos")),
    (GroupCDFFeatures, dict(n_templates=5, n_bins=6, value_range="auto")),
    (OrbitNystroem, dict(n_components=6, kernel="linear")),
    (OrbitNystroem, dict(n_components=6, kernel="rbf", gamma=0.05)),
]


@pytest.mark.parametrize("cls, kw", MAPS)
@pytest.mark.parametrize("shape, weighted", [((16,), False), ((6, 5), False), ((12,), True), ((4, 6), True)])
def test_fft_equals_direct(cls, kw, shape, weighted, rng):
    w = rng.uniform(0.1, 1.0, size=shape) if weighted else None  # a non-symmetric q: weighted pooling
    g = CyclicShift(shape, weights=w)
    X = rng.normal(size=(9, g.n_features))
    action = "data" if (weighted and cls is not GroupCDFFeatures) else "auto"
    fast = cls(g, random_state=0, fast_path="auto", action=action, **kw).fit(X)
    slow = cls(g, random_state=0, fast_path="none", action=action, **kw).fit(X)
    assert fast.plan_.path == "fft" and slow.plan_.path in ("gemm", "data")
    np.testing.assert_allclose(fast.transform(X), slow.transform(X), atol=1e-4 if cls is not GroupCDFFeatures else 0)


def test_fft_with_sampled_shifts_gathers_and_auto_prefers_gemm(rng):
    g = CyclicShift((5, 7))
    X = rng.normal(size=(6, 35))
    kw = dict(n_components=10, gamma=0.1, n_group_samples=8, random_state=2)
    auto = OrbitFourierFeatures(g, **kw).fit(X)
    assert auto.plan_.path == "gemm"  # 8 of 35 shifts: direct GEMM is cheaper
    forced = OrbitFourierFeatures(g, fast_path="fft", **kw).fit(X)
    assert forced.plan_.path == "fft"
    np.testing.assert_allclose(forced.transform(X), auto.transform(X), atol=1e-10)


def test_fft_float32_matches_float64_to_1e4(rng):
    g = CyclicShift((8, 8))
    X = rng.normal(size=(10, 64))
    f64 = OrbitFourierFeatures(g, n_components=30, gamma=0.02, random_state=0).fit(X)
    f32 = OrbitFourierFeatures(g, n_components=30, gamma=0.02, random_state=0, dtype="float32").fit(X)
    F = f32.transform(X)
    assert F.dtype == np.float64  # the output follows the input; only the loops run in float32
    np.testing.assert_allclose(F, f64.transform(X), atol=1e-4)


def test_fast_path_validation(rng):
    X = rng.normal(size=(4, 16))
    with pytest.raises(ValueError, match="fast_path"):
        OrbitFourierFeatures(CyclicShift(16), fast_path="warp").fit(X)
    with pytest.raises(ValueError, match="CyclicShift"):
        OrbitFourierFeatures(ImageRotation((4, 4), n_angles=4), fast_path="fft").fit(X)
    with pytest.raises(ValueError, match="PolarRotation"):
        OrbitFourierFeatures(CyclicShift(16), fast_path="polar").fit(X)
    with pytest.raises(ValueError, match="dtype"):
        OrbitFourierFeatures(CyclicShift(16), dtype="float16").fit(X)
    with pytest.raises(ValueError, match="dot-product"):
        OrbitNystroem(CyclicShift(16), kernel="laplacian", n_components=3, fast_path="fft").fit(X)


def test_gemm_float32_path_is_accurate(rng):
    g = ImageRotation((10, 10), n_angles=8)
    X = rng.normal(size=(12, 100))
    a = OrbitFourierFeatures(g, n_components=40, gamma=0.01, random_state=0).fit(X)
    b = OrbitFourierFeatures(g, n_components=40, gamma=0.01, random_state=0, dtype="float32").fit(X)
    assert a.plan_.path == b.plan_.path == "gemm"
    np.testing.assert_allclose(b.transform(X), a.transform(X), atol=1e-5)


# ---------------------------------------------------------------- polar rotations
def _blobs(n, size, rng):
    """Smooth images (sums of Gaussian bumps inside the inscribed disc): interpolation is accurate on them."""
    return smooth_images(n, size, rng)


@pytest.mark.parametrize("cls, kw", MAPS[:3] + MAPS[4:])
def test_polar_invariance_exact_for_quarter_turns_and_grid_shifts(cls, kw, rng):
    g = PolarRotation((16, 16), n_angles=32)
    X = _blobs(6, 16, rng)
    f = cls(g, random_state=0, **kw).fit(X)
    assert f.plan_.path == "polar"
    F = f.transform(X)
    # a quarter turn maps the pixel grid and the polar grid (32 angles) onto themselves: exact
    X90 = np.rot90(X.reshape(-1, 16, 16), k=1, axes=(1, 2)).reshape(len(X), -1)
    np.testing.assert_allclose(f.transform(X90), F, atol=1e-6 if cls is not GroupCDFFeatures else 0.05)
    # any grid shift of the polar samples: exact (this is what a rotation by 2πk/A does to them)
    P, corr, _ = f.plan_.strategy.prepared(f.plan_, np.float64)
    Xp = np.asarray(P @ X.T).T.reshape(len(X), g.n_radii, g.n_angles)
    S0 = corr(Xp)  # (n, s, r)
    for k in (1, 5, 13):
        Sk = corr(np.roll(Xp, k, axis=2))
        sign = -1 if corr.convention == "data" else 1  # <g_j roll_k x, t> = S_{j+k}; <roll_k x, g_j t> = S_{j-k}
        np.testing.assert_allclose(Sk, np.roll(S0, sign * k, axis=2), atol=1e-9)


def test_polar_invariance_approximate_for_arbitrary_angles(rng):
    """Stated tolerance: on smooth 32x32 images, relative feature change <= 10% for any angle (bilinear rotation of the input included),
    versus >= 10x that for features without the group."""
    size = 32
    g = PolarRotation((size, size), n_angles=64)
    X = _blobs(8, size, rng)
    f = OrbitFourierFeatures(g, n_components=200, gamma=0.2, random_state=0).fit(X)
    plain = OrbitFourierFeatures(None, n_components=200, gamma=0.2, random_state=0).fit(X)
    F, F0 = f.transform(X), plain.transform(X)
    for angle in (0.3, 1.0, 2.2):
        Xr = ImageRotation((size, size)).act(X, [[angle]])[0]
        rel = np.linalg.norm(f.transform(Xr) - F) / np.linalg.norm(F)
        rel0 = np.linalg.norm(plain.transform(Xr) - F0) / np.linalg.norm(F0)
        assert rel < 0.10 and rel0 > 10 * rel, (angle, rel, rel0)


@pytest.mark.parametrize("angle_law", [None, VonMises(2.0)])
def test_polar_close_to_direct_warp_path(angle_law, rng):
    """The polar path approximates the direct (bilinear-warp GEMM) path with the same A angles and q."""
    size = 24
    g = PolarRotation((size, size), n_angles=48, angle=angle_law)
    X = _blobs(10, size, rng)
    kw = dict(n_components=300, gamma=0.02, random_state=0)
    polar = OrbitFourierFeatures(g, **kw).fit(X)
    direct = OrbitFourierFeatures(g, fast_path="none", **kw).fit(X)
    assert direct.plan_.path == "gemm"
    Kp, Kd = polar.transform(X), direct.transform(X)
    Kp, Kd = Kp @ Kp.T, Kd @ Kd.T
    assert np.abs(Kp - Kd).max() < 0.05 * np.abs(Kd).max()


def test_polar_von_mises_weights_and_symmetry():
    g = PolarRotation((8, 8), n_angles=16, angle=VonMises(1.5))
    w = g.weights()
    assert np.isclose(w.sum(), 1) and w.argmax() == 0 and g.is_symmetric
    assert not PolarRotation((8, 8), n_angles=16, angle=VonMises(1.5, loc=0.7)).is_symmetric
    assert PolarRotation((8, 8), n_angles=16).weights() is None


def test_gemm_fit_is_light_and_pickles_are_small():
    """The s·r·d transformed templates (here 500 x 64 x 784: 97 MB in float32) are built at the first
    transform in its precision, once, and never pickled (recomputed deterministically)."""
    import pickle
    import tracemalloc

    X = np.random.default_rng(0).random((20, 784)).astype(np.float32)
    f = OrbitFourierFeatures(ImageRotation((28, 28)), n_components=500, n_group_samples=64, gamma=0.02,
                             fast_path="gemm", random_state=0)
    tracemalloc.start()
    try:
        f.fit(X)
        fit_peak = tracemalloc.get_traced_memory()[1] / 2**20
    finally:
        tracemalloc.stop()
    assert f.plan_.path == "gemm"
    assert fit_peak < 20, fit_peak  # was 297 MB: fit held s·r·d float64 values
    F = f.transform(X[:3])
    blob = pickle.dumps(f)
    assert len(blob) < 5 * 2**20, len(blob) / 2**20  # templates (3 MB) and elements; was 194 MB
    np.testing.assert_array_equal(pickle.loads(blob).transform(X[:3]), F)
    assert [np.dtype(k) for k in f.plan_.strategy._cache] == [np.float32]  # one copy, in the working precision


def test_polar_setup_is_built_once_across_precisions_and_not_pickled():
    import pickle

    g = PolarRotation((16, 16), n_angles=32)
    X = _blobs(4, 16, np.random.default_rng(0))
    f = OrbitFourierFeatures(g, n_components=50, gamma=0.05, random_state=0).fit(X)
    F64 = f.transform(X)
    host = f.plan_.strategy._host
    F32 = f.transform(X.astype(np.float32))
    assert f.plan_.strategy._host is host  # the whitened polar templates serve both precisions
    np.testing.assert_allclose(F32, F64, atol=1e-4)
    g2 = pickle.loads(pickle.dumps(f))
    assert g2.plan_.strategy._host is None and g2.plan_.strategy._cache == {}
    np.testing.assert_array_equal(g2.transform(X), F64)
    np.testing.assert_array_equal(g2.transform(X.astype(np.float32)), F32)


def test_polar_whitener_matches_the_dense_one_where_the_gram_is_circulant():
    """polar_whiten uses the angle-averaged (block-circulant) part of P Pᵀ; on a Gram that is exactly
    block-circulant it is the exact (P Pᵀ)^{-1/2}."""
    from orbitkernels.features._engine import polar_whiten

    rng = np.random.default_rng(0)
    R, A, d = 3, 8, 40
    # rows of P: R rings x A angles, each ring a rotated copy of one row pattern (cyclic pixels)
    base = rng.normal(size=(R, d))
    rows = [np.roll(base[i], 5 * a) for i in range(R) for a in range(A)]
    P = np.array(rows)  # P Pᵀ is block-circulant along the angles (the pixels cycle with period 40 = 5 A)
    import scipy.sparse as sp

    T = rng.normal(size=(R * A, 6))
    M = P @ P.T
    ev, V = np.linalg.eigh(M)
    inv = np.where(ev > 1e-6 * ev.max(), np.maximum(ev, 1e-12) ** -0.5, 0.0)
    np.testing.assert_allclose(polar_whiten(sp.csr_matrix(P), T, R, A), (V * inv) @ V.T @ T, atol=1e-8)


@pytest.mark.parametrize("group", [PolarRotation((12, 12), n_angles=16), CyclicShift((6, 6))], ids=["polar", "cyclic"])
def test_template_spectrum_is_contiguous_for_the_gemm(group, rng):
    # a strided (B, s) operand takes NumPy's matmul off BLAS: 1.7 against 0.75 ms per image at s = 7000
    # (benchmarks/probes/perf/template_spectrum_layout.py)
    X = rng.random((5, 144 if isinstance(group, PolarRotation) else 36))
    est = OrbitFourierFeatures(group, n_components=24, output="cos", random_state=0).fit(X)
    est.transform(X)
    plan = est.plan_
    for dtype in (np.float32, np.float64):
        assert plan.strategy.name in ("polar", "fft")
        Th = plan.strategy._correlator(plan.strategy.prepared(plan, dtype)).Th
        assert Th.flags.c_contiguous and Th.dtype == (np.complex64 if dtype == np.float32 else np.complex128)


@pytest.mark.parametrize("kernel", ["rbf", "linear"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("fused", [True, False])
def test_gemm_path_kernels_from_dots_equal_scikit_learns_on_the_moved_landmarks(kernel, dtype, fused, rng):
    """Raj Eq. 8 on the templates side: ψ(x) = L Σ_k w_k k(x, g_k^{-1} z), the Gaussian from one GEMM of dot
    products with each moved landmark's own norm (a bilinear rotation is not unitary), against scikit-learn's
    pairwise kernel on the explicitly moved landmarks."""
    from sklearn.metrics.pairwise import pairwise_kernels

    from orbitkernels.backends import use_numba

    g = ImageRotation((9, 9))
    X = smooth_images(12, 9, rng).astype(dtype)
    f = OrbitNystroem(g, kernel=kernel, gamma=0.05, n_components=7, n_group_samples=5, sampling="iid",
                      fast_path="gemm", random_state=0).fit(X)
    assert f.plan_.path == "gemm" and f.plan_.from_dots
    E, w, Z = f.group_elements_, f.group_weights_, f.components_
    moved = g.act_inverse(Z, E)  # (r, s, d)
    norms = (moved**2).sum(-1)
    assert np.abs(norms / (Z**2).sum(-1) - 1).max() > 1e-2  # the norms differ: |z|² in place of |g^{-1} z|² fails
    params = {"gamma": 0.05} if kernel == "rbf" else {}
    pooled = sum(wk * pairwise_kernels(X.astype(float), Mk, metric=kernel, **params) for wk, Mk in zip(w, moved))
    with use_numba(fused):
        F = f.transform(X)
    assert F.dtype == dtype
    tol = 1e-10 if dtype == np.float64 else 2e-5
    np.testing.assert_allclose(F, pooled @ f.normalization_.T, rtol=tol, atol=tol * np.abs(F).max())


@pytest.mark.parametrize("kernel", ["rbf", "linear"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("backend, device", [("numpy", None)] + [("torch", d) for d in torch_devices()])
def test_data_path_kernels_from_dots_equal_scikit_learns_on_the_moved_rows(kernel, dtype, backend, device, rng):
    """Raj Eq. 8 on the data side: ψ(x) = L Σ_k w_k k(g_k x, z), the Gaussian from one product of the moved rows
    (each with its own norm: a bilinear scaling is not unitary) and the landmarks on the back-end, against
    scikit-learn's pairwise kernel on the explicitly moved rows."""
    from sklearn.metrics.pairwise import pairwise_kernels

    from orbitkernels.groups import ImageScaling, Uniform

    if backend == "torch":
        pytest.importorskip("torch")
    g = ImageScaling((9, 9), scale=Uniform(0.7, 1.3))  # q not symmetric: the data side
    X = smooth_images(12, 9, rng).astype(dtype)
    f = OrbitNystroem(g, kernel=kernel, gamma=0.05, n_components=7, n_group_samples=5, sampling="iid",
                      backend=backend, device=device, random_state=0).fit(X)
    assert f.plan_.path == "data" and f.plan_.from_dots
    E, w, Z = f.group_elements_, f.group_weights_, f.components_
    moved = g.act(X.astype(float), E)  # (r, n, d)
    norms = (moved**2).sum(-1)
    assert np.abs(norms / (X.astype(float) ** 2).sum(-1) - 1).max() > 1e-2  # |x|² in place of |g x|² fails
    params = {"gamma": 0.05} if kernel == "rbf" else {}
    pooled = sum(wk * pairwise_kernels(Mk, Z, metric=kernel, **params) for wk, Mk in zip(w, moved))
    F = f.transform(X)
    assert F.dtype == dtype
    tol = 1e-10 if dtype == np.float64 else 2e-5
    np.testing.assert_allclose(F, pooled @ f.normalization_.T, rtol=tol, atol=tol * np.abs(F).max())


def test_data_path_gaussian_computes_on_the_back_end_not_scikit_learn(rng, monkeypatch):
    # the point of the product form: no float64 pairwise kernel on the host for the data side's Gaussian
    import orbitkernels.utils.kernels as kernels_mod

    from orbitkernels.groups import BlockPermutation

    def refuse(*args, **kwargs):
        raise AssertionError("scikit-learn's pairwise kernel called on the data path")

    g = BlockPermutation(4, 12)
    X = rng.normal(size=(20, 48))
    f = OrbitNystroem(g, kernel="rbf", n_components=6, action="data", random_state=0).fit(X)
    expected = f.transform(X)
    monkeypatch.setattr(kernels_mod, "pairwise_kernels", refuse)
    monkeypatch.setattr(kernels_mod.PairwiseKernel, "__call__", refuse)
    np.testing.assert_array_equal(f.transform(X), expected)


@pytest.mark.parametrize("dtype, expected", [(None, np.float32), ("float64", np.float64)])
def test_data_path_moves_the_rows_in_the_compute_precision(dtype, expected, rng, monkeypatch):
    # a data-dependent action (Montavon's sortings by row norm) on float32 rows mapped in float64 must sort them as
    # float64 rows: float32 norms ordered a near tie otherwise (benchmarks/probes/perf/nystroem_float32_rows.py)
    from orbitkernels.groups import CoulombPermutation

    seen = []
    act = CoulombPermutation._act
    monkeypatch.setattr(CoulombPermutation, "_act", lambda self, X, E: seen.append(X.dtype) or act(self, X, E))
    A = rng.normal(size=(12, 5, 5))
    X = (A + A.transpose(0, 2, 1)).reshape(12, 25).astype(np.float32)
    f = OrbitNystroem(CoulombPermutation(5, sampling="montavon"), n_components=4, n_group_samples=3, dtype=dtype,
                      random_state=0).fit(X)
    seen.clear()
    F = f.transform(X)
    assert f.plan_.path == "data" and F.dtype == np.float32
    assert seen and set(seen) == {np.dtype(expected)}
