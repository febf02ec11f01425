"""The fused numba kernels (backends/_fused.py) against the NumPy code they replace, run both ways."""
import os
import subprocess
import sys

import numpy as np
import pytest
from conftest import engine_cases

from orbitkernels.backends import _fused, get_backend, numba_active, numba_available, use_numba
from orbitkernels.features import GroupCDFFeatures
from orbitkernels.groups import CyclicShift

needs_numba = pytest.mark.skipif(not numba_available(), reason="numba is not installed (the `fast` extra)")


@pytest.fixture(params=["numpy", pytest.param("numba", marks=needs_numba)])
def impl(request):
    """Runs the test with the fused kernels off ("numpy") and on ("numba")."""
    with use_numba(request.param == "numba"):
        yield request.param


def _numpy_cdf(S, w, n, value_range):
    with use_numba(False):
        return get_backend("numpy").cdf_pool(S, w, n, value_range)


def _numpy_trig(S, w, off, layout):
    with use_numba(False):
        return get_backend("numpy").trig_pool(np.array(S), w, off, layout)  # the NumPy code writes in S


# ------------------------------------------------------------------------------ the switch
def test_switch_restores_and_reports(impl):
    assert numba_active() == (impl == "numba")
    with use_numba(False):
        assert not numba_active()
    assert numba_active() == (impl == "numba")


def test_switch_without_numba_says_what_to_install(monkeypatch):
    monkeypatch.setattr(_fused, "_nb", None)
    assert not numba_available() and not numba_active()
    with pytest.raises(ImportError, match=r"orbitkernels\[fast\]"):
        use_numba(True)


@needs_numba
def test_environment_variable_turns_the_kernels_off():
    code = "from orbitkernels.backends import numba_active; print(numba_active())"
    for value, expect in (("0", "False"), ("1", "True")):
        env = dict(os.environ, ORBITKERNELS_NUMBA=value)
        out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
        assert out.stdout.strip() == expect


@needs_numba
def test_bad_input_is_refused():
    with pytest.raises(TypeError, match="float32 or float64"):
        _fused.trig_pool(np.zeros((2, 3, 4), dtype=np.int64), np.ones(4))
    with pytest.raises(TypeError, match="float32 or float64"):
        _fused.cdf_pool(np.zeros((2, 3, 4), dtype=np.float16), np.ones(4), 3, 1.0)
    with pytest.raises(ValueError, match="layout"):
        _fused.trig_pool(np.zeros((2, 3, 4)), np.ones(4), layout="snr")
    # the kernels do not check bounds, so the wrappers check every length
    with pytest.raises(ValueError, match="one weight per group element"):
        _fused.trig_pool(np.zeros((2, 3, 4)), np.ones(3))
    with pytest.raises(ValueError, match="one weight per group element"):
        _fused.trig_pool(np.zeros((4, 2, 3)), np.ones(3), layout="rns")
    with pytest.raises(ValueError, match="one offset per template"):
        _fused.trig_pool(np.zeros((2, 3, 4)), np.ones(4), np.zeros(2))
    with pytest.raises(ValueError, match="one weight per group element"):
        _fused.cdf_pool(np.zeros((2, 3, 4)), np.ones(5), 3, 1.0)
    with pytest.raises(ValueError, match="3-d block"):
        _fused.cdf_pool(np.zeros((3, 4)), np.ones(4), 3, 1.0)


# ------------------------------------------------------------------------------ the cosine
@needs_numba
@pytest.mark.parametrize("dtype, tol", [(np.float32, 4e-7), (np.float64, 1e-13)])
def test_fast_cosine_accuracy(dtype, tol, rng):
    # |fast(x) - cos(x)| <= tol·(1 + |x|): the phase's own rounding (x·ulp) is the float32 bound
    x = np.concatenate([rng.normal(scale=s, size=20000) for s in (0.1, 3.0, 30.0, 3000.0)])
    x = np.concatenate([x, np.pi * np.arange(-64, 65) / 8]).astype(dtype)  # multiples of π/8: the folds
    err = np.abs(_fused.fast_cos(x).astype(np.float64) - np.cos(x.astype(np.float64)))
    assert np.all(err <= tol * (1 + np.abs(x.astype(np.float64))))
    assert _fused.fast_cos(x).dtype == dtype


# ------------------------------------------------------------------------------ CDF pooling
def _cdf_inputs(rng):
    n, vr = 5, 1.2
    edges = vr * np.arange(-n - 2, n + 3) / n  # exactly on the thresholds, and one step beyond both ends
    cases = {
        "random": rng.normal(scale=0.7, size=(3, 4, 7)),
        "on_edges": rng.choice(edges, size=(2, 3, 11)),
        "outside": rng.choice([-1e6, -10 * vr, 10 * vr, 1e6], size=(2, 2, 5)),
        "tiny": rng.normal(size=(1, 1, 1)),
        "one_element": rng.normal(size=(4, 3, 1)),
        "larger": rng.normal(scale=0.5, size=(9, 33, 64)),
    }
    return n, vr, cases


@needs_numba
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("weighted", [False, True])
def test_fused_cdf_pool_is_bit_for_bit_the_numpy_one(dtype, weighted, rng):
    n, vr, cases = _cdf_inputs(rng)
    for name, S in cases.items():
        S = S.astype(dtype)
        r = S.shape[2]
        w = rng.uniform(0.1, 1.0, size=r) if weighted else np.full(r, 1.0 / r)
        w /= w.sum()
        views = {"contiguous": S, "transposed": np.ascontiguousarray(S.transpose(1, 0, 2)).transpose(1, 0, 2),
                 "strided": np.repeat(S, 2, axis=2)[:, :, ::2]}
        for view_name, V in views.items():
            assert not V.flags.c_contiguous or view_name == "contiguous" or S.size <= S.shape[2]
            got = _fused.cdf_pool(V, w, n, vr)
            ref = _numpy_cdf(V, w, n, vr)
            assert got.dtype == ref.dtype == dtype
            np.testing.assert_array_equal(got, ref, err_msg=f"{name}/{view_name}")


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("weighted", [False, True])
def test_cdf_pool_scales_and_writes_into_a_strided_view_as_the_numpy_product_would(impl, dtype, weighted, rng):
    """``scale`` and ``out`` (the engine's output rows, a strided view, possibly float64 for float32
    similarities): the same bits as ``cdf_pool(...) * scale`` stored into that array, both ways."""
    n, vr, cases = _cdf_inputs(rng)
    S = cases["larger"].astype(dtype)
    rows, m, r = S.shape
    w = rng.uniform(0.1, 1.0, size=r) if weighted else np.full(r, 1.0 / r)
    w /= w.sum()
    scale = float(1.0 / np.sqrt(7.0))  # a Python float, as the engine keeps its scales (NEP 50: weak)
    ref = _numpy_cdf(S, w, n, vr) * scale
    for out_dtype in {dtype, np.float64}:
        big = np.full((rows, 5 + m * (2 * n + 1) + 3), -1.0, out_dtype)  # other features on both sides
        view = big[:, 5 : 5 + m * (2 * n + 1)].reshape(rows, m, 2 * n + 1)
        assert np.shares_memory(view, big)
        got = get_backend("numpy").cdf_pool(S, w, n, vr, scale, out=view)
        assert got is view or np.shares_memory(got, big)
        np.testing.assert_array_equal(view, ref.astype(out_dtype))
        assert (big[:, :5] == -1).all() and (big[:, -3:] == -1).all()


@needs_numba
def test_fused_cdf_pool_refuses_an_output_of_the_wrong_shape_or_precision():
    S = np.zeros((2, 3, 4), np.float64)
    with pytest.raises(ValueError, match=r"\(2, 3, 7\) float array of float64 or wider"):
        _fused.cdf_pool(S, np.ones(4) / 4, 3, 1.0, out=np.empty((2, 3, 6)))
    with pytest.raises(ValueError, match="float64 or wider"):
        _fused.cdf_pool(S, np.ones(4) / 4, 3, 1.0, out=np.empty((2, 3, 7), np.float32))


@pytest.mark.parametrize("n_bins", [7, (3, 7)])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("x_dtype", [np.float64, np.float32])
def test_gicdf_written_into_its_output_rows_is_the_copied_pooling_bit_for_bit(impl, n_bins, dtype, x_dtype,
                                                                              monkeypatch):
    """The engine writes the CDF features straight into its output rows where the back-end can
    (``pools_into_numpy``); pooling into a temporary and copying, as a device back-end does, gives the same bits
    (one and several bin counts; float32 similarities into the float64 output of float64 input, and float64
    similarities of float32 input, dtype="float64", into its float32 output: that one once raised)."""
    from orbitkernels.backends.numpy import NumpyBackend

    X = np.random.default_rng(3).normal(size=(37, 24)).astype(x_dtype)
    est = GroupCDFFeatures(CyclicShift(24), n_templates=5, n_bins=7, dtype=dtype, random_state=0,
                           max_memory_mb=0.05).fit(X)
    def features():
        return est.transform_multi(X, list(n_bins)) if not np.isscalar(n_bins) else {n_bins: est.transform(X)}

    direct = features()
    monkeypatch.setattr(NumpyBackend, "pools_into_numpy", False)
    copied = features()
    assert direct.keys() == copied.keys() and len(direct) == np.size(n_bins)
    for n in direct:
        assert direct[n].dtype == copied[n].dtype == X.dtype
        np.testing.assert_array_equal(direct[n], copied[n])


def test_cdf_pool_matches_the_definition_both_ways(impl, rng):
    # Mroueh §2 by its 2n+1 comparisons, with values a hair either side of the thresholds. (Exactly on
    # a threshold, ceil(τ_b·n/range) may round to b + 1 in floating point, so the bin index counts it
    # above τ_b; both implementations do the same there, which the bit-for-bit test checks.)
    n, vr = 4, 0.8
    S = rng.choice(vr * np.arange(-n - 1, n + 2) / n, size=(3, 5, 9)) + rng.choice([1e-9, -1e-9], (3, 5, 9))
    w = rng.uniform(size=9)
    w /= w.sum()
    tau = vr * np.arange(-n, n + 1) / n
    ref = ((S[..., None] <= tau) * w[None, None, :, None]).sum(2)
    np.testing.assert_allclose(get_backend("numpy").cdf_pool(S, w, n, vr), ref, atol=1e-12)


# ------------------------------------------------------------------------------ orbit nonlinearity
@needs_numba
@pytest.mark.parametrize("dtype, tol", [(np.float32, 2e-6), (np.float64, 1e-12)])
@pytest.mark.parametrize("layout", ["nsr", "rns"])
@pytest.mark.parametrize("with_offset", [True, False])
def test_fused_trig_pool_matches_the_numpy_one(dtype, tol, layout, with_offset, rng):
    for shape in [(1, 1, 1), (3, 5, 7), (6, 40, 64), (2, 300, 3)]:
        rows, m, r = shape
        S = rng.normal(scale=7.0, size=shape if layout == "nsr" else (r, rows, m)).astype(dtype)
        w = rng.uniform(size=r)
        w /= w.sum()
        off = rng.uniform(0, 2 * np.pi, m) if with_offset else None
        for V in (S, np.asfortranarray(S)):  # also a non-C-contiguous block
            before = V.copy()
            got = _fused.trig_pool(V, w, off, layout)
            ref = _numpy_trig(V, w, off, layout)
            np.testing.assert_array_equal(V, before)  # the fused kernel reads S only
            for g, f in zip(got if off is None else [got], ref if off is None else [ref]):
                assert g.dtype == dtype and g.shape == (rows, m)
                np.testing.assert_allclose(g, f, rtol=0, atol=tol)


# ------------------------------------------------------------------------------ the estimators
CASES, MAPS = engine_cases()


@needs_numba
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("cls, kw", MAPS)
@pytest.mark.parametrize("path, group, extra", CASES, ids=[c[0] for c in CASES])
def test_features_unchanged_by_the_fused_kernels(path, group, extra, cls, kw, dtype, rng):
    if cls is GroupCDFFeatures and path == "data":
        pytest.skip("GICDF's data side needs a symmetric q")
    d = int(np.prod(group.image_shape)) if hasattr(group, "image_shape") else group.n_features
    X = rng.uniform(size=(7, d)).astype(dtype)
    f = cls(group, random_state=0, **kw, **extra).fit(X)
    assert f.plan_.path == path
    with use_numba(True):
        fused = f.transform(X)
    with use_numba(False):
        ref = f.transform(X)
    if cls is GroupCDFFeatures:
        np.testing.assert_array_equal(fused, ref)  # the CDF kernel is bit for bit
    else:
        np.testing.assert_allclose(fused, ref, rtol=0, atol=3e-6 if dtype == np.float32 else 1e-12)


@needs_numba
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_laplacian_float32_features_of_the_fused_kernel_are_within_float32s_own_rounding(seed):
    """The README's 3e-6 in float32 is the Gaussian kernel's (the case above): the Laplacian's Cauchy frequencies
    give phases near 1e4, where the fused cosine's error (4e-7 (1 + |phase|)) reached 3.8e-5 (an audit, stop 64).
    That is float32 itself: both float32 paths are further than that from the float64 features."""
    from orbitkernels.features import OrbitFourierFeatures
    from orbitkernels.groups import ImageRotation

    X = np.random.default_rng(seed).random(size=(23, 144)).astype(np.float32)
    f = OrbitFourierFeatures(ImageRotation((12, 12)), kernel="laplacian", n_components=20, random_state=0).fit(X)
    with use_numba(True):
        fused = f.transform(X)
    with use_numba(False):
        numpy32, numpy64 = f.transform(X), f.transform(X.astype(np.float64))
    assert fused.dtype == numpy32.dtype == np.float32 and numpy64.dtype == np.float64
    assert np.abs(fused - numpy32).max() < np.abs(numpy32 - numpy64).max()


@pytest.mark.parametrize("cls, kw", MAPS[:3])
def test_exact_invariance_on_a_finite_group_both_ways(impl, cls, kw, rng):
    g = CyclicShift((4, 5))
    X = rng.uniform(size=(5, 20))
    f = cls(g, random_state=0, **kw).fit(X)
    shifted = np.roll(X.reshape(5, 4, 5), (1, 3), axis=(1, 2)).reshape(5, 20)
    # the orbit of the shifted image is the same set of 20 images: the features agree to rounding
    # (the FFT of a shifted image differs from the shifted FFT by rounding, so no bit-for-bit claim)
    np.testing.assert_allclose(f.transform(X), f.transform(shifted), rtol=0, atol=1e-12)


# ------------------------------------------------------------------------------ Gaussian orbit mean
@needs_numba
@pytest.mark.parametrize("dtype, tol", [(np.float32, 2e-7), (np.float64, 1e-15)])
def test_fast_exponential_accuracy(dtype, tol, rng):
    # relative error wherever exp(x) is a normal number; 0 below, inf above the stated ends
    tiny = np.finfo(dtype).tiny
    lo = np.log(tiny)
    hi = 88.0 if dtype == np.float32 else 709.0
    x = np.concatenate([rng.uniform(lo, hi, 200000), rng.uniform(-2, 2, 100000),
                        np.arange(-40, 41) * np.log(2.0) / 2, [0.0, -0.0, lo * 0.999999, hi]]).astype(dtype)
    got = _fused.fast_exp(x)
    assert got.dtype == dtype
    ref = np.exp(x.astype(np.float64))
    assert np.all(np.abs(got / ref - 1) <= tol)
    assert got[x == 0][0] == 1.0
    below = np.array([lo * 1.0001, lo - 5, -1e4, -np.inf], dtype=dtype)
    np.testing.assert_array_equal(_fused.fast_exp(below), 0.0)
    above = np.array([hi * 1.001, 1e4, np.inf], dtype=dtype)
    np.testing.assert_array_equal(_fused.fast_exp(above), np.inf)


def _rbf_pool_reference(S, x_sq, t_sq, gamma, w):
    S = np.asarray(S, dtype=np.float64)
    V = np.exp(gamma * (2 * S - np.asarray(x_sq, float)[:, None, None] - np.asarray(t_sq, float)[None, :, None]))
    return V @ np.asarray(w, float)


@pytest.mark.parametrize("dtype, rtol", [(np.float32, 5e-6), (np.float64, 1e-13)])
def test_rbf_pool_is_the_orbit_mean_of_gaussian_values_both_ways(impl, dtype, rtol, rng):
    # Raj et al. 2017, Eq. 8: Σ_k w_k k(g_k x, t) with k Gaussian, from <g_k x, t>, |x|² and |t|²
    bk = get_backend("numpy")
    for rows, m, r in [(1, 1, 1), (3, 5, 7), (6, 40, 64), (2, 300, 3)]:
        X = rng.normal(size=(rows, r, 6))  # r "transformed copies" of each row, same norm up to rounding
        X /= np.linalg.norm(X, axis=2, keepdims=True)
        T = rng.normal(size=(m, 6))
        S = np.einsum("ikd,jd->ijk", X, T).astype(dtype)
        x_sq, t_sq = np.ones(rows, dtype), (T**2).sum(1).astype(dtype)
        w = rng.uniform(size=r)
        w /= w.sum()
        for V in (S, np.asfortranarray(S)):
            before = V.copy()
            got = bk.rbf_pool(V, x_sq, t_sq, 0.7, w)
            np.testing.assert_array_equal(V, before)  # S is read, not written
            assert got.dtype == dtype and got.shape == (rows, m)
            # the float32 exponent's own rounding bounds both implementations alike
            np.testing.assert_allclose(got, _rbf_pool_reference(S, x_sq, t_sq, 0.7, w), rtol=rtol, atol=0)


@needs_numba
def test_fused_rbf_pool_underflows_to_zero_and_refuses_bad_input():
    S = np.zeros((2, 3, 4), np.float32)
    # exponent -γ(|x|² + |t|²) far below the smallest normal number: exactly 0, not a wrong tiny value
    np.testing.assert_array_equal(_fused.rbf_pool(S, [50.0, 40.0], [50.0, 60.0, 70.0], 1.0, np.ones(4)), 0.0)
    with pytest.raises(TypeError, match="float32 or float64"):
        _fused.rbf_pool(S.astype(np.int32), np.ones(2), np.ones(3), 1.0, np.ones(4))
    with pytest.raises(ValueError, match="one weight per group element"):
        _fused.rbf_pool(S, np.ones(2), np.ones(3), 1.0, np.ones(3))
    with pytest.raises(ValueError, match="one squared norm per row and per template"):
        _fused.rbf_pool(S, np.ones(3), np.ones(3), 1.0, np.ones(4))
    with pytest.raises(ValueError, match="one squared norm per row and per template"):
        _fused.rbf_pool(S, np.ones(2), np.ones(2), 1.0, np.ones(4))
    with pytest.raises(ValueError, match="out must be"):
        _fused.rbf_pool(S, np.ones(2), np.ones(3), 1.0, np.ones(4), out=np.empty((2, 3), np.float64))


@pytest.mark.parametrize("budget", [0.1, 64.0])
def test_nystroem_map_applied_once_per_chunk_is_the_definition(impl, budget, rng):
    # Raj et al. 2017, Eq. 8: (Σ_k w_k k(g_k x, z_j))_j @ K_ZZ^{-1/2}; the engine pools cache-sized blocks and
    # applies the map once per chunk (several chunks at the small budget, one at the large one)
    from orbitkernels.features import OrbitNystroem
    from orbitkernels.groups.polar import PolarRotation

    X = rng.uniform(size=(60, 64))
    f = OrbitNystroem(PolarRotation((8, 8), n_angles=16), n_components=30, gamma=0.05, random_state=0,
                      max_memory_mb=budget).fit(X)
    assert f.plan_.path == "polar"
    assert (f.plan_.chunk_rows(len(X), 64, 8, extra_per_row=30 * 8) < len(X)) == (budget < 1)
    K = f.plan_.similarities(X)  # (rows, landmarks, elements): the Gaussian values k(g_k x, z_j)
    ref = (K @ f.group_weights_) @ f.normalization_.T
    np.testing.assert_allclose(f.transform(X), ref, rtol=1e-10, atol=1e-12)


def test_nystroem_map_is_cast_once_per_pooling(rng):
    # a transform maps its rows in several engine calls: the s x s map is cast to the compute precision once
    from orbitkernels.features._engine import LinearPool

    post = rng.normal(size=(6, 4))
    pool = LinearPool(np.full(3, 1 / 3), post)
    inner, p32 = pool.stages(np.float32)
    assert inner.post is None and p32.dtype == np.float32
    np.testing.assert_array_equal(p32, post.astype(np.float32))
    assert pool.stages(np.float32)[1] is p32
    assert pool.stages(np.float64)[1] is pool.post  # no copy in the fitted precision
    plain = LinearPool(np.ones(2))
    assert plain.stages(np.float32) == (plain, None)
