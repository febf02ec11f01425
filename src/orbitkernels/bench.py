"""Performance benchmarks of the projection engine (``orbitkernels bench``).

Every benchmark compares methods *in the same process* and reports ratios, not
only times, because the machines they run on are shared: the JSON written to
``results/bench/<name>.json`` records the load average (``os.getloadavg``)
before and after, the BLAS thread count and the library versions.

=====================  ==========================================================
name                   what it measures
=====================  ==========================================================
rotations_rf           LGIKA-RF with rotations at MNIST size (d=784, s=2000, r=64):
                       naive (augment, RBFSampler, average) vs the default
                       estimator vs template GEMM path vs polar-FFT path, fused
                       kernels on and off: features/s, ratios, fraction of the
                       fused-cosine bound, kernel agreement
rotations_nystroem     LGIKA-Nys with rotations (d=784, 2000 landmarks, r=64):
                       naive (augment, rbf_kernel, average, K_ZZ^-1/2) vs the
                       default estimator vs template GEMM, fused kernels on and
                       off, the map per chunk vs per block: features/s, ratios,
                       fraction of the Gaussian-pooling bound, kernel agreement
polar_accuracy         Rotated MNIST (regenerated, subset): test accuracy of the
                       polar path vs the direct paths (same learner)
gemm_peak              template-path GFLOP/s vs a plain float32 numpy matmul of
                       the same shape (share of the measured peak)
gicdf_mnist            GICDF at Mroueh's MNIST configuration CDF(50 bins, 500
                       templates): images/s, float32 vs float64, fused kernels on
                       and off, float32 with cache-blocked pooling vs the previous
                       engine's float64 pooling of whole chunks
fft_cyclic             CyclicShift((28, 28)), all 784 shifts: FFT vs GEMM path
                       (LGIKA-RF and GICDF, s=100)
qm7_lgika              QM7 LGIKA-RF (Montavon sampling, r=70, data side) for
                       s = 2k..10k on a subset: time per fold, scaling in s
memory                 peak allocations (tracemalloc) of ``transform`` for growing N at a fixed budget
                       (one subprocess per N)
setup                  setup cost per feature map (one subprocess each): fit
                       time and peak, fitted and pickle sizes, first transform
rotated_mnist_full     Raj's Rotated MNIST configuration (62k images, s=7k,
                       r=100 von Mises rotations, polar path): wall time of
                       features + ridge fit and test accuracy, measured in full
                       (quick: on a fraction, extrapolated and labelled so)
invariant_svm          Invar-SVM (Teo Algorithm 1) fit time on 8x8 digits with
                       K sampled shifts: block QPs through clarabel directly vs
                       through qpsolvers, and that both fits are identical
=====================  ==========================================================

``run_benchmarks(names=None, quick=False, out_dir=None) -> dict`` runs them;
``quick`` shrinks every size so that the whole set takes a minute or two.
"""
from __future__ import annotations

import contextlib
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from ._version import __version__
from .utils.io import atomic_write_json
from .utils.errors import reading_results
from .utils.validation import env_count

__all__ = ["run_benchmarks", "BENCHMARKS", "summarize", "render_markdown"]


def _fft_workers():
    """The threads the NumPy back-end gives SciPy's FFTs now (under :func:`_limit`: the benchmark's count)."""
    from .backends.numpy import _workers

    return _workers()


def _threads():
    """``ORBITKERNELS_BENCH_THREADS`` (default 1); anything but a positive integer is an error naming it, not a
    traceback from ``int()`` or a count of 0 or -1 handed to BLAS."""
    n = env_count("ORBITKERNELS_BENCH_THREADS")
    return 1 if n is None else n


@contextlib.contextmanager
def _limit(n):
    """``n`` threads for BLAS/OpenMP (threadpoolctl) and for SciPy's FFTs, whose ``workers`` the NumPy back-end
    takes from ``OMP_NUM_THREADS`` (else every core): until 2026-11-25 the benchmarks ran their FFTs on both
    cores of the machine while BLAS ran on one."""
    from threadpoolctl import threadpool_limits

    saved = os.environ.get("OMP_NUM_THREADS")
    os.environ["OMP_NUM_THREADS"] = str(int(n))
    try:
        with threadpool_limits(limits=n):
            yield
    finally:
        if saved is None:
            os.environ.pop("OMP_NUM_THREADS", None)
        else:
            os.environ["OMP_NUM_THREADS"] = saved


def _best(fn, repeat=3):
    """Best wall time of ``repeat`` calls (the least disturbed by other processes) and the last result."""
    best, out = np.inf, None
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t)
    return best, out


#: round-robin rounds of the interleaved comparisons: the machine the committed numbers come from is shared
#: by other jobs (load average 5-7 on 2 cores), and three rounds left single variants 20-30% off their best
_REPEAT = 5


def _best_interleaved(fns, repeat=3):
    """Best wall time of each callable over ``repeat`` round-robin rounds, and each one's last result."""
    best = {k: np.inf for k in fns}
    outs = {}
    for _ in range(repeat):
        for k, fn in fns.items():
            t = time.perf_counter()
            outs[k] = fn()
            best[k] = min(best[k], time.perf_counter() - t)
    return best, outs


def _mnist(n, rotated=False, seed=0):
    from .datasets import load_mnist

    m = load_mnist(download=False)
    rng = np.random.default_rng(seed)
    X = m.x_train[rng.choice(len(m.x_train), n, replace=False)].reshape(n, -1).astype(np.float32) / 255.0
    if rotated:
        from .groups import ImageRotation

        angles = rng.uniform(0, 2 * np.pi, n)
        X = np.stack([ImageRotation((28, 28)).act(X[i : i + 1], [[a]])[0, 0] for i, a in enumerate(angles)])
    return X.astype(np.float32)


def _rel_diff(F, F_ref):
    """||F - F_ref|| / ||F_ref|| (Frobenius, in float64)."""
    F, F_ref = np.asarray(F, np.float64), np.asarray(F_ref, np.float64)
    return float(np.linalg.norm(F - F_ref) / np.linalg.norm(F_ref))


def _gram_error(F, F_ref):
    K, K0 = F @ F.T, F_ref @ F_ref.T
    return float(np.linalg.norm(K - K0) / np.linalg.norm(K0))


# --------------------------------------------------------------------------- 1
def _cos_bound(s, r, dtype=np.float32, n=16, fft=False):
    """(callable, images per call): the orbit nonlinearity alone, the fused weighted cosine over s·r ready values per image.

    The bound of any path that must evaluate cos at s·r similarities per image (Raj Eq. 7):
    the back-end's ``trig_pool`` (numba when active, else NumPy's in-place passes, which
    get a fresh copy of the block as the engine's blocks are fresh) on 2 MiB blocks of
    precomputed phases, without any projection or FFT. Timed in the same round-robin
    rounds as the paths it bounds.

    ``fft=True``: the FFT paths' floor, the same cosine preceded by the inverse real FFTs (the back-end's
    ``irfftn``) of s spectra of length r per image, already in the FFTs' layout (no transposition). Any path that
    computes the s·r correlations by FFT (the cyclic and polar paths, Raj Eq. 7 with a grid of r angles) must
    spend at least this; the FFTs cost ~1.8 ns per output value with SciPy's pocketfft in float32 against
    ~0.36 ns for the fused cosine.
    """
    from .backends import get_backend

    bk = get_backend("numpy")
    rng = np.random.default_rng(0)
    blk = max(1, (2 * 2**20) // (s * r * np.dtype(dtype).itemsize))  # as the engine pools: 2 MiB blocks
    if fft:
        nf = r // 2 + 1
        cdt = np.complex64 if np.dtype(dtype) == np.float32 else np.complex128
        C = (rng.standard_normal((n, s, nf)) + 1j * rng.standard_normal((n, s, nf))).astype(cdt)

        def block(a):
            return bk.irfftn(C[a : a + blk], (r,), (2,))
    else:
        S0 = rng.normal(scale=7.0, size=(n, s, r)).astype(dtype)  # phases of the size LGIKA-RF makes

        def block(a):
            return S0[a : a + blk] if _fused_on() else S0[a : a + blk].copy()
    w = np.full(r, 1.0 / r)
    off = rng.uniform(0, 2 * np.pi, s)

    def run():
        for a in range(0, n, blk):
            bk.trig_pool(block(a), w, off)

    return run, n


def _spectrum_gemm_bound(est, X):
    """(callable, images per call): the polar path's per-frequency complex GEMM alone, for ``X``'s rows in one chunk.

    The rows' spectrum (nf, n, B) against the fitted estimator's template spectrum (nf, B, s), written into a buffer
    reused from call to call: the GEMM every FFT path with B > 1 radii must do, at the rate BLAS gives this shape.
    """
    est.transform(X[:2])  # the per-precision preparation
    plan = est.plan_
    corr = plan.strategy._correlator(plan.strategy.prepared(plan, np.dtype(np.float32)))
    rng = np.random.default_rng(0)
    shape = (corr.nf, len(X), corr.B)
    Xh = (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(corr.Th.dtype)
    out = np.empty((corr.nf, len(X), corr.s), corr.Th.dtype)

    def run():
        np.matmul(Xh, corr.Th, out=out)
    return run, len(X)


def _fused_on():
    from .backends import numba_active

    return numba_active()


def _numba_off(fn):
    """``fn`` run with the fused numba kernels switched off (the NumPy code): the variant they replace."""
    from .backends import use_numba

    def run():
        with use_numba(False):
            return fn()
    return run


def _write_probe(res, script, width=75, threads=1):
    """A perf probe's record: ``res`` with the load average, thread count (``threads``: the most any of its variants
    ran on) and script added, written to ``results/bench/<script's name>_probe.json``, and its ``us_per_image``
    printed."""
    res.update({"load_avg_1min": round(os.getloadavg()[0], 2), "threads": threads, "script": script})
    atomic_write_json(f"results/bench/{os.path.splitext(os.path.basename(script))[0]}_probe.json", res)
    for k, v in res.get("us_per_image", {}).items():
        print(f"{k:{width}s} {v:9.1f} us/image")
    return res


def _numpy_backend_off(flag, fn):
    """``fn`` run with the NumPy back-end's capability ``flag`` (a class attribute such as ``reuses_buffers``)
    set to False: the engine's way before that capability, for a probe's same-round comparison."""
    from .backends.numpy import NumpyBackend

    def run():
        saved = NumpyBackend.__dict__[flag]  # as defined (a staticmethod stays one when put back)
        setattr(NumpyBackend, flag, False)
        try:
            return fn()
        finally:
            setattr(NumpyBackend, flag, saved)
    return run


def _on_threads(threads, fn):
    """``fn`` run within :func:`_limit` of ``threads``."""
    def run():
        with _limit(threads):
            return fn()
    return run


def _capability_rounds(ests, cores, flag, labels, rounds):
    """Each estimator's ``transform`` (``ests``: name -> (estimator, rows)) on one thread, on ``cores`` threads with
    the NumPy back-end's capability ``flag`` off (:func:`_numpy_backend_off`: the engine before it) and on, in
    round-robin rounds (:func:`_best_interleaved`, the first call of each outside the timing: the per-precision
    caches and the JIT). ``labels``: the three variants' names; returns the best times and the last outputs, keyed
    ``"<estimator> | <label>"``."""
    one, before, now = labels
    times, outs = {}, {}
    for e, (est, Xe) in ests.items():
        run = lambda est=est, Xe=Xe: est.transform(Xe)  # noqa: E731
        fns = {f"{e} | {one}": _on_threads(1, run),
               f"{e} | {before}": _on_threads(cores, _numpy_backend_off(flag, run)),
               f"{e} | {now}": _on_threads(cores, run)}
        for fn in fns.values():
            fn()
        t, o = _best_interleaved(fns, repeat=rounds)
        times.update(t)
        outs.update(o)
    return times, outs


def _capability_speedups(times, ests, labels, now_name):
    """From :func:`_capability_rounds`' times: each estimator's speedup over one thread before and with the
    capability (``now_name``), and with it over before."""
    one, before, now = labels
    over_one = {e: {"before": round(times[f"{e} | {one}"] / times[f"{e} | {before}"], 3),
                    now_name: round(times[f"{e} | {one}"] / times[f"{e} | {now}"], 3)} for e in ests}
    return over_one, {e: round(times[f"{e} | {before}"] / times[f"{e} | {now}"], 3) for e in ests}


def gpu_throughput_estimators():
    """The estimators of the GPU check's throughput part (``benchmarks/gpu_check.py``), by name: makers that take
    the estimator's remaining parameters (MNIST size, d = 784)."""
    from .features import GroupCDFFeatures, OrbitFourierFeatures
    from .groups import ImageRotation, ImageTranslation, Uniform

    local = ImageRotation((28, 28), angle=Uniform(-np.pi / 9, np.pi / 9)) * ImageTranslation((28, 28), Uniform(-3, 3))
    return {
        "default ImageRotation((28,28)), s=2000, r=64 (polar)":
            lambda **kw: OrbitFourierFeatures(ImageRotation((28, 28)), gamma=0.02, n_components=2000, **kw),
        "ImageRotation((28,28), n_angles=64), s=2000 (GEMM)":
            lambda **kw: OrbitFourierFeatures(ImageRotation((28, 28), n_angles=64), gamma=0.02, n_components=2000,
                                              **kw),
        "GICDF(50 bins, 500 templates), rotation x translation, 64 samples (GEMM)":
            lambda **kw: GroupCDFFeatures(local, n_templates=500, n_bins=50, n_group_samples=64, **kw),
    }


def bench_rotations_rf(quick=False):
    """LGIKA-RF, rotations, d=784, s=2000, r=64: naive vs the default estimator vs template GEMM vs polar FFT (Raj Eq. 7).

    ``default`` is ``OrbitFourierFeatures(ImageRotation((28, 28)))`` as a user writes it (only s, γ
    and output="cos", the naive path's features, set): it resolves to the polar path with the fused
    kernels when numba is installed. Every rate is measured in the same round-robin rounds; the
    variants with the fused kernels switched off (``use_numba(False)``) are recorded beside them.
    ``fraction_of_cos_bound``: the path's images/s over the fused cosine's alone over s·r values;
    ``fraction_of_fft_cos_bound`` (the FFT paths): over the inverse FFTs and the fused cosine alone
    (:func:`_cos_bound` with ``fft=True``), the floor of any path that correlates by FFT;
    ``fraction_of_gemm_fft_cos_bound``: over that floor plus the polar path's per-frequency GEMM alone
    (:func:`_spectrum_gemm_bound`), the work the polar path cannot skip, so the rest is its own overhead.

    Data: 512 MNIST digits rotated by uniform angles (the naive path on the first 64; quick: 64 and 16), γ = 0.02,
    float32, ``output="cos"`` (s features). The naive path (``ImageRotation.act``'s r bilinear copies of each
    image, scikit-learn's ``RBFSampler``, the mean) uses the template path's frequencies, offsets and 64 sampled
    angles; the polar and default paths the same frequencies on the grid of 64 angles.
    ``kernel_rel_error_vs_naive``: the Gram matrices' relative difference to the naive path's, beside that of
    another seed's template path (the Monte-Carlo reference).
    """
    from sklearn.kernel_approximation import RBFSampler

    from .backends import numba_available
    from .features import OrbitFourierFeatures
    from .groups import ImageRotation
    from .groups.polar import PolarRotation

    s, r, gamma = 2000, 64, 0.02
    n_naive, n_fast = (16, 64) if quick else (64, 512)
    X = _mnist(n_fast, rotated=True)
    g = ImageRotation((28, 28))  # Haar on SO(2), r sampled angles
    tmpl = OrbitFourierFeatures(g, gamma=gamma, n_components=s, n_group_samples=r, sampling="iid", output="cos",
                                dtype="float32", random_state=0).fit(X[:8])
    polar = OrbitFourierFeatures(PolarRotation((28, 28), n_angles=r), gamma=gamma, n_components=s, output="cos",
                                 dtype="float32", random_state=0).fit(X[:8])
    default = OrbitFourierFeatures(ImageRotation((28, 28)), gamma=gamma, n_components=s, output="cos",
                                   random_state=0).fit(X[:8])
    default_cs = OrbitFourierFeatures(ImageRotation((28, 28)), gamma=gamma, n_components=s, random_state=0).fit(X[:8])
    # the naive pipeline with exactly the same frequencies, offsets and rotations as the template path
    rbf = RBFSampler(gamma=gamma, n_components=s, random_state=0).fit(X[:8])
    rbf.random_weights_ = tmpl.templates_.T.astype(np.float32)
    rbf.random_offset_ = tmpl.random_offset_.astype(np.float32)
    E = tmpl.group_elements_

    def naive(Xb):
        out = np.zeros((len(Xb), s), dtype=np.float32)
        for a in range(0, len(Xb), 8):  # 8 images x 64 copies at a time: bounded memory
            Y = g.act(Xb[a : a + 8], E)  # (r, n, d)
            out[a : a + 8] = rbf.transform(Y.reshape(-1, Y.shape[-1])).reshape(r, -1, s).mean(0)
        return out

    fns = {"naive": lambda: naive(X[:n_naive]), "template_gemm": lambda: tmpl.transform(X),
           "polar_fft": lambda: polar.transform(X), "default": lambda: default.transform(X),
           "default_cos_sin": lambda: default_cs.transform(X)}
    if numba_available():
        fns.update({"default (fused kernels off)": _numba_off(fns["default"]),
                    "template_gemm (fused kernels off)": _numba_off(fns["template_gemm"])})
    n_imgs = {k: n_fast for k in fns}
    n_imgs["naive"] = n_naive
    bound_fn, n_imgs["bound: fused cosine"] = _cos_bound(s, r)
    fns["bound: fused cosine"] = bound_fn
    fns["bound: inverse FFT + fused cosine"], n_imgs["bound: inverse FFT + fused cosine"] = _cos_bound(s, r, fft=True)
    fns["bound: per-frequency GEMM"], n_imgs["bound: per-frequency GEMM"] = _spectrum_gemm_bound(default, X)
    if numba_available():
        fns["bound: numpy passes"] = _numba_off(bound_fn)
        n_imgs["bound: numpy passes"] = n_imgs["bound: fused cosine"]
    for k, fn in fns.items():  # the per-precision caches and the JIT, outside the timing
        if k != "naive":
            fn()
    # Round-robin repeats, best of each: on a shared machine a burst of load then hits every method
    # alike instead of one method's whole measurement (sequential timings measured 7x vs 17x here).
    times, outs = _best_interleaved(fns, repeat=_REPEAT)
    rate = {k: n_imgs[k] / t for k, t in times.items() if not k.startswith("bound")}
    bound = {k.split(": ")[1]: n_imgs[k] / t for k, t in times.items() if k.startswith("bound")}
    bound["fused"] = bound.pop("fused cosine")
    fft_bound = bound.pop("inverse FFT + fused cosine")
    # the polar path's necessary work: its per-frequency GEMM (the spectrum of the correlations) and the floor above,
    # each alone (their times add: the transposition between them is what the path does beyond this)
    gemm_rate = bound.pop("per-frequency GEMM")
    gemm_fft_bound = 1.0 / (1.0 / gemm_rate + 1.0 / fft_bound)
    F_naive = outs["naive"]
    # Monte-Carlo reference: the same naive kernel with other frequencies and rotations
    other = OrbitFourierFeatures(g, gamma=gamma, n_components=s, n_group_samples=r, sampling="iid", output="cos",
                                 dtype="float32", random_state=1).fit(X[:8])
    k = n_naive
    res = {
        "config": {"d": 784, "s": s, "r": r, "gamma": gamma, "n_naive": n_naive, "n_fast": n_fast,
                   "data": "MNIST train digits rotated by uniform angles (regenerated-style)",
                   "naive": "ImageRotation.act (r bilinear copies) + sklearn RBFSampler (float32) + mean",
                   "template_gemm": "OrbitFourierFeatures(ImageRotation, n_group_samples=64, dtype=float32)",
                   "polar_fft": "OrbitFourierFeatures(PolarRotation(n_angles=64, n_radii=14), dtype=float32)",
                   "default": "OrbitFourierFeatures(ImageRotation((28, 28)), n_components=2000, gamma=0.02, "
                              f"output='cos') -> path {default.plan_.path!r}",
                   "default_cos_sin": "the same with the default output='cos_sin' (2s features: cos and sin)",
                   "fused_kernels": "numba" if _fused_on() else "off (numba not installed or ORBITKERNELS_NUMBA=0)"},
        "features_per_s": rate,
        "speedup_vs_naive": {k_: v / rate["naive"] for k_, v in rate.items() if k_ != "naive"},
        "cos_bound_images_per_s": bound,
        "fraction_of_cos_bound": {k_: v / bound["fused"] for k_, v in rate.items() if k_ != "naive"},
        # the FFT paths' own floor: their inverse FFTs alone cost several times the cosine
        "fft_cos_bound_images_per_s": fft_bound,
        "fraction_of_fft_cos_bound": {k_: rate[k_] / fft_bound for k_ in ("polar_fft", "default", "default_cos_sin")},
        # with the per-frequency GEMM at the rate the same BLAS call reaches alone, into a reused buffer
        "spectrum_gemm_images_per_s": gemm_rate,
        "gemm_fft_cos_bound_images_per_s": gemm_fft_bound,
        "fraction_of_gemm_fft_cos_bound": {k_: rate[k_] / gemm_fft_bound
                                           for k_ in ("polar_fft", "default", "default_cos_sin")},
        "goal_default_vs_naive": 20.0,
        "kernel_rel_error_vs_naive": {
            "template_gemm (same omega, same rotations)": _gram_error(outs["template_gemm"][:k], F_naive),
            "polar_fft (same omega, 64 grid angles)": _gram_error(outs["polar_fft"][:k], F_naive),
            "default (same omega, 64 grid angles)": _gram_error(outs["default"][:k], F_naive),
            "template_gemm other seed (Monte-Carlo reference)": _gram_error(other.transform(X[:k]), F_naive),
        },
    }
    if "default (fused kernels off)" in outs:
        res["max_abs_diff_fused_vs_numpy"] = {
            "default": float(np.abs(outs["default"] - outs["default (fused kernels off)"]).max()),
            "template_gemm": float(np.abs(outs["template_gemm"] - outs["template_gemm (fused kernels off)"]).max())}
    return res


# --------------------------------------------------------------------------- 1c
def _rbf_bound(s, r, dtype=np.float32, n=16):
    """(callable, images per call): Nyström's orbit nonlinearity alone, the Gaussian orbit mean over s·r ready dot
    products per image (Raj Eq. 8), then the s x s map K_ZZ^{-1/2} of the n rows: the bound of any path that must
    evaluate the Gaussian at s·r similarities per image and map the result, without any projection or FFT. The
    back-end's ``rbf_pool`` (numba when active) on 2 MiB blocks, as the engine pools them."""
    from .backends import get_backend

    bk = get_backend("numpy")
    rng = np.random.default_rng(0)
    S0 = (0.5 * rng.standard_normal((n, s, r))).astype(dtype)
    x_sq = (np.abs(rng.standard_normal(n)) + 3).astype(dtype)
    t_sq = (np.abs(rng.standard_normal(s)) + 3).astype(dtype)
    w = np.full(r, 1.0 / r)
    post = rng.standard_normal((s, s)).astype(dtype)
    pooled = np.empty((n, s), dtype)
    blk = max(1, (2 * 2**20) // (s * r * np.dtype(dtype).itemsize))

    def run():
        for a in range(0, n, blk):
            pooled[a : a + blk] = bk.rbf_pool(S0[a : a + blk], x_sq[a : a + blk], t_sq, 0.3, w)
        return pooled @ post

    return run, n


def _transform_map_per_block(nys, X):
    """``nys.transform(X)`` as the engine ran Nyström before 2026-11-25: K_ZZ^{-1/2} applied to every pooled block."""
    from .features._engine import LinearPool

    pool = LinearPool(nys.group_weights_, nys.normalization_.T)
    pool.stages = lambda dtype: (pool, None)  # no final map for the engine to take out: it stays in every block
    spec = nys._pool_spec
    nys._pool_spec = lambda: pool
    try:
        return nys.transform(X)
    finally:
        nys._pool_spec = spec


def _transform_sklearn_kernel(nys, X):
    """``nys.transform(X)`` on the GEMM path as the engine ran it before 2026-11-25: scikit-learn's ``rbf_kernel``
    (float64 distances and exponential) against the float64 moved landmarks, in chunks of the budget it gave them
    (three float64 temporaries of the s·r similarities per row), the weighted mean and the map."""
    from sklearn.metrics.pairwise import rbf_kernel

    plan = nys.plan_
    T = plan._transformed_templates(np.float64)
    s, r = plan.n_templates, plan.n_elements
    rows = max(1, int(nys.max_memory_mb * 2**20 // (5 * s * r * 8)))
    w, post = nys.group_weights_, nys.normalization_.T
    out = np.empty((len(X), s), X.dtype)
    for a in range(0, len(X), rows):
        K = rbf_kernel(X[a : a + rows], T, gamma=nys.gamma_).reshape(-1, s, r)
        out[a : a + rows] = (K @ w) @ post
    return out


def bench_rotations_nystroem(quick=False):
    """LGIKA-Nys, rotations, d=784, s=2000 landmarks, r=64: naive vs the default estimator vs template GEMM (Raj Eq. 8).

    ``default`` is ``OrbitNystroem(ImageRotation((28, 28)), n_components=2000, gamma=0.02)`` as a user writes it:
    the polar path, the Gaussian orbit mean fused (numba) and K_ZZ^{-1/2} applied once per chunk. The naive path
    rotates each image by the default's 64 angles (bilinear ``ImageRotation.act``), takes scikit-learn's
    ``rbf_kernel`` against the same landmarks, averages over the angles and applies the same K_ZZ^{-1/2}. Beside
    them, in the same rounds: the fused kernels off (NumPy passes), the map applied per pooled block (the engine
    before 2026-11-25), and the bound (:func:`_rbf_bound`: the Gaussian orbit mean over s·r ready dot products and
    the map, no projection or FFT). ``kernel_rel_error_vs_naive``: the Gram matrices' relative difference. The polar path's
    Gaussian is that of the polar quadrature samples (``OrbitNystroem``'s docstring: ~10 % off in value at this γ)
    while K_ZZ^{-1/2} is the Cartesian base kernel's (Raj Eq. 8), and the ill-conditioned map amplifies the
    difference (0.2-0.35 here); accuracy is not affected (``benchmarks/probes/perf/nystroem_polar_metric.py``:
    0.9255 against 0.927 for the Cartesian Gaussian, 0.926 with K_ZZ in the polar metric as well).

    Data: MNIST digits rotated by uniform angles, 2100 to fit (the landmarks among them) and 512 timed (the
    naive path on the first 64; quick: s = 300 landmarks, 64 and 16 timed), γ = 0.02. Also timed: the template
    GEMM path with scikit-learn's float64 ``rbf_kernel`` (the engine before 2026-11-25) against its own float32
    dot products.
    """
    from sklearn.metrics.pairwise import rbf_kernel

    from .backends import numba_available
    from .features import OrbitNystroem
    from .groups import ImageRotation

    s, gamma = (300, 0.02) if quick else (2000, 0.02)
    n_fit = s + 100
    n_naive, n_fast = (16, 64) if quick else (64, 512)
    X = _mnist(n_fit + n_fast, rotated=True)
    Xfit, X = X[:n_fit], X[n_fit:]
    g = ImageRotation((28, 28))
    default = OrbitNystroem(g, n_components=s, gamma=gamma, random_state=0).fit(Xfit)
    r = len(default.group_elements_)
    tmpl = OrbitNystroem(g, n_components=s, gamma=gamma, n_group_samples=r, sampling="iid", fast_path="gemm",
                         dtype="float32", random_state=0).fit(Xfit)
    Z, E, w = default.components_, default.group_elements_, default.group_weights_
    post = default.normalization_.T

    def naive(Xb):
        out = np.zeros((len(Xb), s))
        for a in range(0, len(Xb), 8):  # 8 images x r copies at a time: bounded memory
            Y = g.act(Xb[a : a + 8], E)  # (r, n, d)
            K = rbf_kernel(Y.reshape(-1, Y.shape[-1]), Z, gamma=gamma).reshape(r, -1, s)
            out[a : a + 8] = np.tensordot(w, K, axes=1) @ post
        return out

    fns = {"naive": lambda: naive(X[:n_naive]), "default": lambda: default.transform(X),
           "template_gemm": lambda: tmpl.transform(X),
           "template_gemm, scikit-learn's float64 kernel (before)": lambda: _transform_sklearn_kernel(tmpl, X),
           "default, map per block (before)": lambda: _transform_map_per_block(default, X)}
    if numba_available():
        fns["default (fused kernels off)"] = _numba_off(fns["default"])
    n_imgs = {k: (n_naive if k == "naive" else n_fast) for k in fns}
    fns["bound"], n_imgs["bound"] = _rbf_bound(s, r)
    for k, fn in fns.items():  # the per-precision caches and the JIT, outside the timing
        if k != "naive":
            fn()
    times, outs = _best_interleaved(fns, repeat=_REPEAT)
    rate = {k: n_imgs[k] / t for k, t in times.items() if k != "bound"}
    bound = n_imgs["bound"] / times["bound"]
    F_naive, k = outs["naive"], n_naive
    res = {
        "config": {"d": 784, "s": s, "r": r, "gamma": gamma, "n_naive": n_naive, "n_fast": n_fast, "n_fit": n_fit,
                   "data": "MNIST train digits rotated by uniform angles (regenerated-style)",
                   "naive": "ImageRotation.act (r bilinear copies) + sklearn rbf_kernel against the landmarks + "
                            "weighted mean + the same K_ZZ^{-1/2}",
                   "default": f"OrbitNystroem(ImageRotation((28, 28)), n_components={s}, gamma={gamma}) -> path "
                              f"{default.plan_.path!r}, dtype float32 inputs",
                   "default_path": default.plan_.path,
                   "template_gemm": f"OrbitNystroem(ImageRotation, n_group_samples={r}, sampling='iid', "
                                    "fast_path='gemm', dtype='float32') (its own landmarks' orbit, same landmarks)",
                   "fused_kernels": "numba" if _fused_on() else "off (numba not installed or ORBITKERNELS_NUMBA=0)"},
        "features_per_s": rate,
        "speedup_vs_naive": {k_: v / rate["naive"] for k_, v in rate.items() if k_ != "naive"},
        "speedup_map_per_chunk_vs_per_block": times["default, map per block (before)"] / times["default"],
        "rbf_bound_images_per_s": bound,
        "fraction_of_rbf_bound": {k_: v / bound for k_, v in rate.items() if k_ != "naive"},
        "kernel_rel_error_vs_naive": {
            "default (polar grid, same landmarks and angles)": _gram_error(outs["default"][:k], F_naive),
            "template_gemm (sampled angles)": _gram_error(outs["template_gemm"][:k], F_naive),
        },
        "max_abs_diff_map_per_block_vs_per_chunk": float(np.abs(outs["default"]
                                                                - outs["default, map per block (before)"]).max()),
        "speedup_gemm_dots_vs_sklearn_kernel": times["template_gemm, scikit-learn's float64 kernel (before)"]
        / times["template_gemm"],
        "rel_diff_gemm_dots_float32_vs_sklearn_float64": _rel_diff(
            outs["template_gemm"], outs["template_gemm, scikit-learn's float64 kernel (before)"]),
    }
    if "default (fused kernels off)" in outs:
        res["speedup_fused_vs_off"] = times["default (fused kernels off)"] / times["default"]
        res["max_abs_diff_fused_vs_numpy"] = float(np.abs(outs["default"] - outs["default (fused kernels off)"]).max())
    return res


# --------------------------------------------------------------------------- 1b
def bench_polar_accuracy(quick=False):
    """Accuracy of the polar path vs the direct paths on regenerated Rotated MNIST (a subset).

    Same learner (RidgeClassifierCV, α by 3-fold CV) on LGIKA-RF features (Raj Eq. 7) with Haar q:
    direct template GEMM with r sampled angles (ImageRotation), direct warp GEMM
    at the A grid angles (PolarRotation, fast_path="none"), polar FFT path (also
    with the fused kernels off, when numba is installed), and no group at all.
    3000 training and 2000 test digits, s = 1500 frequencies (cos and sin), r = A = 64,
    γ = 0.02 (quick: 500 / 500, s = 500, r = 32); test accuracy and feature time.
    """
    from sklearn.linear_model import RidgeClassifierCV

    from .datasets import load_rotated_mnist
    from .features import OrbitFourierFeatures
    from .groups import ImageRotation
    from .groups.polar import PolarRotation

    n_train, n_test = (500, 500) if quick else (3000, 2000)
    s, r, gamma = (500, 32, 0.02) if quick else (1500, 64, 0.02)
    rm = load_rotated_mnist(source="regenerated", download=False, n_train=n_train, n_valid=0, n_test=n_test)
    Xtr, ytr = rm.x_train.astype(np.float32), rm.y_train
    Xte, yte = rm.x_test.astype(np.float32), rm.y_test
    methods = {
        "no_group": dict(group=None),
        "direct_template_gemm_sampled": dict(group=ImageRotation((28, 28)), n_group_samples=r, sampling="iid"),
        "direct_warp_gemm_grid": dict(group=PolarRotation((28, 28), n_angles=r), fast_path="none"),
        "polar_fft": dict(group=PolarRotation((28, 28), n_angles=r)),
    }
    out = {"config": {"n_train": n_train, "n_test": n_test, "s": s, "r": r, "gamma": gamma,
                      "data": "Rotated MNIST, regenerated (load_rotated_mnist(source='regenerated'))",
                      "learner": "RidgeClassifierCV, alpha by 3-fold CV on the training set"}}
    from .backends import numba_available, use_numba

    if numba_available():
        # the fused kernels' float32 cosine (backends/_fused.py) against NumPy's, on accuracy
        methods["polar_fft (fused kernels off)"] = dict(methods["polar_fft"], fused=False)
    out["config"]["fused_kernels"] = "numba" if _fused_on() else "off"
    for name, kw in methods.items():
        kw = dict(kw)
        fused = kw.pop("fused", _fused_on())
        # i.i.d. frequencies: the draw the recorded accuracies were measured with (the time does not depend on it)
        f = OrbitFourierFeatures(gamma=gamma, n_components=s, dtype="float32", random_state=0, frequencies="iid", **kw)
        t0 = time.perf_counter()
        with use_numba(fused) if numba_available() else contextlib.nullcontext():
            Ftr = f.fit(Xtr).transform(Xtr)
            Fte = f.transform(Xte)
        t_feat = time.perf_counter() - t0
        clf = RidgeClassifierCV(alphas=np.logspace(-4, 1, 6), cv=3).fit(Ftr, ytr)
        out[name] = {"test_accuracy": float(clf.score(Fte, yte)), "features_s": t_feat,
                     "path": f.plan_.path, "alpha": float(clf.alpha_)}
    return out


# --------------------------------------------------------------------------- 2
#: gemm_peak's shape: d pixels (28 x 28 digits), s templates, r rotations
GEMM_PEAK_SHAPE = (784, 500, 64)


def _gemm_peak_gicdf(**params):
    """GICDF(50 bins) at gemm_peak's shape, unfitted: the benchmark and the issue #16 probes that explain its
    number (``benchmarks/probes/perf/``) time this one estimator; ``params`` (e.g. ``max_memory_mb``) are set on it."""
    from .features import GroupCDFFeatures
    from .groups import ImageRotation

    _, s, r = GEMM_PEAK_SHAPE
    return GroupCDFFeatures(ImageRotation((28, 28)), n_templates=s, n_bins=50, n_group_samples=r, sampling="iid",
                            dtype="float32", random_state=0).set_params(**params)


def _spectral_probe_estimators(X):
    """The two polar FFT estimators the issue #16 probes of the spectral paths time, fitted on ``X``: the default
    rotation estimator (s = 2000, 64 angles) and the Rotated MNIST full configuration's shape (s = 7000, 100 angles)."""
    from .features import OrbitFourierFeatures
    from .groups import ImageRotation
    from .groups.polar import PolarRotation

    return {"default s=2000 r=64": OrbitFourierFeatures(ImageRotation((28, 28)), gamma=0.02, n_components=2000,
                                                        output="cos", random_state=0).fit(X),
            "rotated_mnist_full s=7000 r=100": OrbitFourierFeatures(PolarRotation((28, 28), n_angles=100),
                                                                    gamma=0.02, n_components=7000, output="cos",
                                                                    dtype="float32", random_state=0).fit(X)}


def _gemm_peak_operand():
    """The (d, s·r) float32 right-hand side of gemm_peak's reference sgemm (the transform's GEMM shape)."""
    d, s, r = GEMM_PEAK_SHAPE
    return np.random.default_rng(0).normal(size=(d, s * r)).astype(np.float32)


def _transform_chunks(est, X):
    """The rows of each chunk whose similarities ``est.transform(X)`` computes (one GEMM each on a GEMM path)."""
    plan, seen = est.plan_, []
    similarities = plan._similarities
    plan._similarities = lambda Xc, *a, **k: seen.append(len(Xc)) or similarities(Xc, *a, **k)
    try:
        est.transform(X)
    finally:
        del plan._similarities
    return seen


def bench_gemm_peak(quick=False):
    """Template path GFLOP/s (2 N d s r / time) as a share of a plain float32 matmul of the same shape.

    N = 1024 MNIST digits (quick: 256), d = 784, s = 500 templates, r = 64 sampled rotations (GEMM path): the
    whole ``transform`` of LGIKA-RF (cos and sin) and of GICDF(50 bins), and its GEMM alone on the same chunks
    (``share_of_peak_gemm_only``; the rest of the time is pooling), each against ``X @ B`` with B of shape
    (d, s·r), in the same round-robin rounds; with the fused kernels off too, when numba is installed.
    """
    from .backends import numba_available
    from .features import OrbitFourierFeatures
    from .groups import ImageRotation

    d, s, r = GEMM_PEAK_SHAPE
    n = 256 if quick else 1024
    X = _mnist(n)
    flops = 2.0 * n * d * s * r
    A = X.copy()
    B = _gemm_peak_operand()
    ests = {"lgika_rf_cos_sin": OrbitFourierFeatures(ImageRotation((28, 28)), gamma=0.02, n_components=s, n_group_samples=r,
                                                     sampling="iid", dtype="float32", random_state=0),
            "gicdf_50_bins": _gemm_peak_gicdf()}
    fns = {"peak": lambda: A @ B}
    chunks = {}
    for name, est in ests.items():
        est.fit(X[:8])
        est.transform(X[:8])
        plan = est.plan_
        # the chunks the transform itself makes (the estimator's blocks of rows, then the engine's), which the
        # GEMM-only timing repeats: the engine's count alone said one chunk where GICDF's transform took two
        chunks[name] = _transform_chunks(est, X)
        starts = np.cumsum([0] + chunks[name][:-1])
        fns[name] = (lambda est=est: est.transform(X))
        fns[name + "/gemm"] = (lambda plan=plan, c=chunks[name], a0=starts: [
            plan._similarities(X[a : a + m], np.dtype(np.float32)) for a, m in zip(a0, c)])
        if numba_available():
            fns[name + "/fused kernels off"] = _numba_off(fns[name])
    # the reference matmul and both transforms in round-robin rounds, so a burst of load hits all alike
    times, _ = _best_interleaved(fns, repeat=_REPEAT)
    t_peak = times["peak"]
    out = {"config": {"N": n, "d": d, "s": s, "r": r, "flops": flops}, "peak_numpy_sgemm_gflops": flops / t_peak / 1e9}
    for name, est in ests.items():
        t_all, t_sim = times[name], times[name + "/gemm"]
        out[name] = {
            "transform_gflops": flops / t_all / 1e9,
            "share_of_peak_transform": (flops / t_all) / (flops / t_peak),
            "gemm_only_gflops": flops / t_sim / 1e9,
            "share_of_peak_gemm_only": t_peak / t_sim,
            "pooling_share_of_time": max(0.0, 1 - t_sim / t_all),
            "chunk_rows": chunks[name],
        }
        if name + "/fused kernels off" in times:
            out[name]["share_of_peak_transform_fused_kernels_off"] = t_peak / times[name + "/fused kernels off"]
    out["fused_kernels"] = "numba" if _fused_on() else "off"
    out["goal_share"] = 0.6
    out["goal_share_issue16"] = {"gicdf_50_bins": 0.8, "lgika_rf_cos_sin": 0.9}
    return out


# --------------------------------------------------------------------------- 3
def bench_gicdf_mnist(quick=False):
    """GICDF, Mroueh §6 MNIST (Fig. 2): CDF(50 bins, 500 templates), templates rotated in ±20° and shifted by ±3 px.

    N = 1024 MNIST digits (quick: 256), 64 sampled group elements (the paper gives no |G|): images/s of
    ``transform`` in float32 and in float64, each with the fused kernels on and off (when numba is installed),
    and in float64 with the previous engine's NumPy pooling of whole budget-sized chunks.
    ``speedup_float32_blocked_vs_previous`` is float32 over that previous float64 pooling (precision and blocking
    together).
    """
    from .backends import numba_available
    from .features import GroupCDFFeatures
    from .features import _engine
    from .groups import ImageRotation, ImageTranslation, Uniform

    n = 256 if quick else 1024
    r = 64
    X = _mnist(n)
    g = ImageRotation((28, 28), angle=Uniform(-np.pi / 9, np.pi / 9)) * ImageTranslation((28, 28), Uniform(-3, 3))
    res = {"config": {"N": n, "n_templates": 500, "n_bins": 50, "n_group_samples": r,
                      "group": "rotation U(-20deg, 20deg) x translation U(-3, 3) px (|G| not given by the paper: 64 samples)"}}
    rates = {}
    for label, dtype in (("float32", "float32"), ("float64", "float64")):
        f = GroupCDFFeatures(g, n_templates=500, n_bins=50, n_group_samples=r, sampling="iid", dtype=dtype, random_state=0).fit(X[:8])
        f.transform(X[:8])
        if numba_available():
            times, _ = _best_interleaved({"on": lambda: f.transform(X), "off": _numba_off(lambda: f.transform(X))}, _REPEAT)
            t = times["on"]
            rates[label + " (fused kernels off)"] = n / times["off"]
        else:
            t, _ = _best(lambda: f.transform(X), 2)
        rates[label] = n / t
        if label == "float64":
            # the previous engine: NumPy pooling of whole budget-sized chunks (no cache-sized blocks)
            saved = _engine.POOL_BLOCK_BYTES, _engine.POOL_BLOCK_BYTES_DIRECT
            _engine.POOL_BLOCK_BYTES = _engine.POOL_BLOCK_BYTES_DIRECT = 2**62
            try:
                old = lambda: f.plan_.map(f._prepare(X.astype(np.float64)), f._pool_spec(), f._n_features_out)  # noqa: E731
                t_old, _ = _best(_numba_off(old) if numba_available() else old, 1)
            finally:
                _engine.POOL_BLOCK_BYTES, _engine.POOL_BLOCK_BYTES_DIRECT = saved
            rates["float64_unblocked_pooling (previous engine)"] = n / t_old
    res["images_per_s"] = rates
    res["speedup_float32_blocked_vs_previous"] = rates["float32"] / rates["float64_unblocked_pooling (previous engine)"]
    return res


# --------------------------------------------------------------------------- extra
def bench_fft_cyclic(quick=False):
    """CyclicShift((28, 28)), every one of the 784 shifts: FFT correlation vs GEMM on shifted templates.

    The GEMM path (the 784 shifted templates, one GEMM: what augmenting costs) is the direct
    reference; the FFT path runs with the fused kernels and without (``use_numba(False)``), all
    in the same round-robin rounds. ``fraction_of_cos_bound`` (LGIKA-RF): images/s over the fused
    cosine's alone over the s·784 similarities of an image. N = 256 MNIST digits (quick: 64), s = 100
    (LGIKA-RF: 100 frequencies; GICDF: 100 templates, 25 bins), float32; ``max_abs_diff`` between the two paths'
    features.
    """
    from .backends import numba_available
    from .features import GroupCDFFeatures, OrbitFourierFeatures
    from .groups import CyclicShift

    g = CyclicShift((28, 28))
    n = 64 if quick else 256
    s = 100
    X = _mnist(n)
    out = {"config": {"N": n, "s": s, "r": 784, "fused_kernels": "numba" if _fused_on() else "off"}}
    for name, cls, kw in (("lgika_rf", OrbitFourierFeatures, dict(gamma=0.02, n_components=s)),
                          ("gicdf", GroupCDFFeatures, dict(n_templates=s, n_bins=25))):
        fft = cls(g, fast_path="auto", dtype="float32", random_state=0, **kw).fit(X[:8])
        gemm = cls(g, fast_path="gemm", dtype="float32", random_state=0, **kw).fit(X[:8])
        fns = {"fft": lambda: fft.transform(X), "gemm": lambda: gemm.transform(X)}
        if numba_available():
            fns["fft (fused kernels off)"] = _numba_off(fns["fft"])
        if name == "lgika_rf":
            fns["bound: fused cosine"], n_bound = _cos_bound(s, 784)
        for fn in fns.values():  # caches and JIT outside the timing
            fn()
        times, outs = _best_interleaved(fns, repeat=_REPEAT)
        rate = {k: n / t for k, t in times.items() if not k.startswith("bound")}
        out[name] = {"fft_images_per_s": rate["fft"], "gemm_images_per_s": rate["gemm"], "images_per_s": rate,
                     "speedup": times["gemm"] / times["fft"],
                     "max_abs_diff": float(np.abs(outs["fft"] - outs["gemm"]).max())}
        if name == "lgika_rf":
            bound = n_bound / times["bound: fused cosine"]
            out[name]["cos_bound_images_per_s"] = bound
            out[name]["fraction_of_cos_bound"] = rate["fft"] / bound
    return out


# --------------------------------------------------------------------------- 4
def bench_qm7_lgika(quick=False):
    """QM7 LGIKA-RF (Raj §4.1): Montavon permutations (r = 70, data side), s = 2k..10k, ridge per fold.

    On 1500 random molecules (quick: 300, s = 2k and 4k), a fifth of them the test fold: per s (frequencies, with
    cos and sin), the feature time, the ``RidgeCV`` fit time and the test MAE, with γ = 1 / median(||x||)², and
    the exponent of the feature time in s. The extrapolation to all 7165 molecules is linear in N and labelled so.
    """
    from sklearn.linear_model import RidgeCV

    from .datasets import load_qm7
    from .features import OrbitFourierFeatures
    from .groups import CoulombPermutation

    q = load_qm7(download=False)
    n_sub = 300 if quick else 1500
    rng = np.random.default_rng(0)
    idx = rng.choice(len(q.T), n_sub, replace=False)
    X = q.X[idx].reshape(n_sub, -1).astype(np.float32)
    y = q.T[idx]
    test = np.arange(n_sub) < n_sub // 5  # one fold of five
    scale = float(np.median(np.linalg.norm(X, axis=1)))
    sizes = (2000, 4000) if quick else (2000, 4000, 6000, 8000, 10000)
    rows = []
    for s in sizes:
        f = OrbitFourierFeatures(CoulombPermutation(23, sampling="montavon"), gamma=1.0 / scale**2, n_components=s,
                                 n_group_samples=70, dtype="float32", random_state=0)
        t0 = time.perf_counter()
        F = f.fit(X[~test]).transform(X)
        t_feat = time.perf_counter() - t0
        t0 = time.perf_counter()
        m = RidgeCV(alphas=np.logspace(-6, 1, 8)).fit(F[~test], y[~test])
        t_fit = time.perf_counter() - t0
        mae = float(np.abs(m.predict(F[test]) - y[test]).mean())
        rows.append({"s": s, "features_s": t_feat, "fit_s": t_fit, "fold_s": t_feat + t_fit, "mae_kcal_mol": mae,
                     "features_per_s": n_sub / t_feat})
    s_arr = np.array([r_["s"] for r_ in rows], float)
    t_arr = np.array([r_["features_s"] for r_ in rows], float)
    slope = float(np.polyfit(np.log(s_arr), np.log(t_arr), 1)[0]) if len(rows) > 1 else None
    per_mol = t_arr / n_sub
    return {"config": {"subset": int(n_sub), "of": int(len(q.T)), "r": 70, "fold": "1 of 5 on the subset",
                       "gamma": "1 / median(||x||)^2", "sampling": "Montavon (sorted + noise), data side"},
            "per_s": rows, "feature_time_exponent_in_s": slope,
            "extrapolated_full_fold_features_s": {str(int(s)): float(p * len(q.T)) for s, p in zip(s_arr, per_mol)},
            "note": "subset of QM7; extrapolation to 7165 molecules is linear in N (features) and labelled as such"}


# --------------------------------------------------------------------------- 5
_MEMORY_CHILD = r"""
import json, resource, sys, time, tracemalloc, numpy as np
from orbitkernels.features import OrbitFourierFeatures
from orbitkernels.groups.polar import PolarRotation
from orbitkernels.groups import ImageRotation
n, budget, path = int(sys.argv[1]), float(sys.argv[2]), sys.argv[3]
rng = np.random.default_rng(0)
X = rng.random((n, 784), dtype=np.float32)
g = PolarRotation((28, 28), n_angles=64) if path == "polar" else ImageRotation((28, 28), n_angles=64)
f = OrbitFourierFeatures(g, gamma=0.02, n_components=500,
                         output="cos", max_memory_mb=budget, random_state=0).fit(X[:8])
f.transform(X[:8])  # the per-precision template caches are built once, outside the measurement
tracemalloc.start()  # numpy reports its buffers to tracemalloc: the peak of what transform allocates
t = time.perf_counter(); F = f.transform(X); t = time.perf_counter() - t
current, peak = tracemalloc.get_traced_memory()
tracemalloc.stop()
print(json.dumps({"n": n, "peak_mb": peak / 2**20, "input_mb": X.nbytes / 2**20, "output_mb": F.nbytes / 2**20,
                  "rss_high_water_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, "seconds": t}))
"""


def bench_memory(quick=False):
    """Peak memory that transform allocates vs N at a fixed max_memory_mb (tracemalloc, a fresh process per N).

    ``OrbitFourierFeatures(output="cos")`` with s = 500 and 64 rotations on random 784-pixel rows, on the polar
    and the GEMM path, N = 1000 to 32000 (quick: 500 to 8000), ``max_memory_mb=64``; the working memory is the
    peak less the output, against what augmenting the data would hold (N x 64 x 784 float32).
    """
    budget = 64.0
    ns = (500, 2000, 8000) if quick else (1000, 4000, 16000, 32000)
    out = {"config": {"max_memory_mb": budget, "s": 500, "r": 64, "d": 784,
                      "measure": "tracemalloc peak of the allocations made during transform (numpy buffers "
                                 "included), after a warm-up transform, fresh process per N"}}
    env = dict(os.environ, OMP_NUM_THREADS=str(_threads()), OPENBLAS_NUM_THREADS=str(_threads()))
    for path in ("polar", "gemm"):
        rows = []
        for n in ns:
            p = subprocess.run([sys.executable, "-c", _MEMORY_CHILD, str(n), str(budget), path], capture_output=True,
                               text=True, env=env, check=True)
            r = json.loads(p.stdout.strip().splitlines()[-1])
            r["working_mb"] = r["peak_mb"] - r["output_mb"]  # what the chunking bounds
            rows.append(r)
        out[path] = rows
    out["naive_would_need_mb_at_max_n"] = ns[-1] * 64 * 784 * 4 / 2**20  # N x r x d float32 copies
    return out


# --------------------------------------------------------------------------- 5b
_SETUP_CHILD = r"""
import json, pickle, sys, time, tracemalloc, numpy as np
from orbitkernels.features import GroupCDFFeatures, OrbitFourierFeatures, OrbitNystroem
from orbitkernels.groups import ImageRotation
from orbitkernels.groups.polar import PolarRotation
case = sys.argv[1]
side = 48 if case == "fourier-polar-48" else 28
rng = np.random.default_rng(0)
X = rng.random((600, side * side), dtype=np.float32)
make = {
    "fourier-gemm": lambda: OrbitFourierFeatures(ImageRotation((28, 28), n_angles=64), gamma=0.02, n_components=500,
                                                 max_memory_mb=16, random_state=0),
    "fourier-polar": lambda: OrbitFourierFeatures(PolarRotation((28, 28), n_angles=64), gamma=0.02, n_components=500,
                                                  max_memory_mb=16, random_state=0),
    "fourier-polar-48": lambda: OrbitFourierFeatures(PolarRotation((48, 48), n_angles=128), gamma=0.02,
                                                     n_components=500, max_memory_mb=16, random_state=0),
    "gicdf-gemm": lambda: GroupCDFFeatures(ImageRotation((28, 28), n_angles=64), n_templates=100, n_bins=25,
                                           max_memory_mb=16, random_state=0),
    "nystroem-gemm": lambda: OrbitNystroem(ImageRotation((28, 28), n_angles=64), gamma=0.02, n_components=500,
                                           max_memory_mb=16, random_state=0),
}[case]
tracemalloc.start()
t = time.perf_counter(); f = make().fit(X); t_fit = time.perf_counter() - t
fit_now, fit_peak = tracemalloc.get_traced_memory()
t = time.perf_counter(); F1 = f.transform(X[:8]); t_first = time.perf_counter() - t
first_now, first_peak = tracemalloc.get_traced_memory()
tracemalloc.stop()
t = time.perf_counter(); f.transform(X[:8]); t_second = time.perf_counter() - t
blob = pickle.dumps(f)
t = time.perf_counter(); g = pickle.loads(blob); F2 = g.transform(X[:8]); t_load = time.perf_counter() - t
print(json.dumps({"case": case, "fit_s": t_fit, "fit_peak_mb": fit_peak / 2**20, "fitted_mb": fit_now / 2**20,
                  "first_transform_s": t_first, "first_transform_peak_mb": first_peak / 2**20,
                  "kept_after_first_transform_mb": first_now / 2**20, "second_transform_s": t_second,
                  "pickle_mb": len(blob) / 2**20, "unpickle_and_transform_s": t_load,
                  "same_after_pickle": bool(np.array_equal(F1, F2))}))
"""


def bench_setup(quick=False):
    """Setup cost per feature map: fit time and peak, fitted size, first-transform setup, pickle size and reload.

    Each case runs in a fresh process: ``fit`` on 600 images, then the first transform of 8 rows
    (which builds the per-precision caches: transformed templates, polar resampling), a second one
    (the steady state), then ``pickle.dumps`` and a reload + transform (what a saved model costs).
    Memory is what tracemalloc sees numpy allocate (the fitted estimator's arrays and caches).
    """
    cases = ("fourier-gemm", "fourier-polar", "gicdf-gemm") if quick else (
        "fourier-gemm", "fourier-polar", "fourier-polar-48", "gicdf-gemm", "nystroem-gemm")
    env = dict(os.environ, OMP_NUM_THREADS=str(_threads()), OPENBLAS_NUM_THREADS=str(_threads()))
    rows = []
    for case in cases:
        p = subprocess.run([sys.executable, "-c", _SETUP_CHILD, case], capture_output=True, text=True, env=env,
                           check=True)
        rows.append(json.loads(p.stdout.strip().splitlines()[-1]))
    return {"config": {"d": "784 (28x28; 2304 for the 48x48 case)", "r": "64 (128 for the 48x48 case)",
                       "s": "500 (GICDF: 100 templates x 51 thresholds)", "fit_rows": 600, "max_memory_mb": 16},
            "cases": rows}


# --------------------------------------------------------------------------- 6
def bench_rotated_mnist_full(quick=False, backend="numpy", device=None):
    """Raj §4.2 Rotated MNIST: 62k images, s=7k, r=100 von Mises rotations; features + RLS fit time.

    Full mode runs the whole configuration (regenerated Rotated MNIST: 10k train,
    2k validation, 50k test; λ chosen on the validation set, then refit on the
    12k) and reports measured times and the test accuracy. Quick mode measures a
    fraction and extrapolates (features linear in N; the ridge fit by its flop
    count), labelled as such. ``backend="torch", device="cuda"``: the features on that device
    (``benchmarks/gpu_check.py``; the ridge stays on the CPU), without the CPU floors.
    The features are s = 7000 frequencies with ``output="cos"`` (7000 features; the reproduction's D = 14000
    adds the sines), γ = 0.02, float32, on the polar FFT path; the learner is RidgeClassifier's model.
    """
    from sklearn.preprocessing import LabelBinarizer

    from .datasets import load_rotated_mnist
    from .features import OrbitFourierFeatures
    from .groups import VonMises
    from .groups.polar import PolarRotation
    from .models.ridge import cholesky_path

    n_total, n_train_total, s, r = 62000, 12000, 7000, 100
    alphas = (1e-5, 1e-4, 1e-3, 1e-2, 1e-1)  # validation chose the grid's lower end (1e-3) of 1e-3..1
    if quick:
        rm = load_rotated_mnist(source="regenerated", download=False, n_train=240, n_valid=60, n_test=150)
    else:
        rm = load_rotated_mnist(source="regenerated", download=False)
    Xtr, ytr = rm.x_train.astype(np.float32), rm.y_train
    Xva, yva = rm.x_valid.astype(np.float32), rm.y_valid
    Xte, yte = rm.x_test.astype(np.float32), rm.y_test
    g = PolarRotation((28, 28), n_angles=r, angle=VonMises(0.2, loc=np.pi))  # Raj's exp(-κ cos θ), κ = 0.2
    # i.i.d. frequencies: the draw the recorded accuracy was measured with (the time does not depend on it)
    on_device = {} if backend == "numpy" else dict(backend=backend, device=device, max_memory_mb=8192)
    f = OrbitFourierFeatures(g, gamma=0.02, n_components=s, output="cos", dtype="float32", random_state=0,
                             frequencies="iid", **on_device)
    t0, c0 = time.perf_counter(), time.process_time()
    f.fit(Xtr)
    Ftr, Fva, Fte = f.transform(Xtr), f.transform(Xva), f.transform(Xte)
    t_feat, c_feat = time.perf_counter() - t0, time.process_time() - c0
    n_feat = len(Xtr) + len(Xva) + len(Xte)
    t0, c0 = time.perf_counter(), time.process_time()
    # RidgeClassifier's model (its ±1 one-vs-all coding, intercept, float32), from one Gram matrix per fitted set
    # instead of one per α (models.ridge.cholesky_path)
    coding = LabelBinarizer(neg_label=-1).fit(ytr)  # ten classes: one column each

    def targets(labels):
        return coding.transform(labels).astype(np.float32)

    def accuracy(F, labels, W, b):
        return float(np.mean(coding.classes_[(F @ W + b).argmax(1)] == labels))

    path = cholesky_path(Ftr, targets(ytr), alphas)
    val = {a: accuracy(Fva, yva, W, b) for a, (W, b) in zip(alphas, path)}
    best = max(val, key=val.get)
    (W, b), = cholesky_path(np.vstack([Ftr, Fva]), targets(np.concatenate([ytr, yva])), [best])
    t_fit, c_fit = time.perf_counter() - t0, time.process_time() - c0
    acc = accuracy(Fte, yte, W, b)
    out = {"config": {"n_images": n_feat, "n_train": len(Xtr), "n_valid": len(Xva), "n_test": len(Xte), "s": s,
                      "r": r, "data": "Rotated MNIST, regenerated (load_rotated_mnist(source='regenerated'))",
                      "group": "PolarRotation(n_angles=100, VonMises(0.2, loc=pi)), polar FFT path",
                      "learner": f"ridge on s cos features (RidgeClassifier's ±1 one-vs-all targets, float32; "
                                 f"models.ridge.cholesky_path: one Gram matrix per fitted set), alpha in {alphas} by "
                                 "validation, refit on train+validation", "threads": _threads(),
                      "fused_kernels": "numba" if _fused_on() else "off",
                      "features_on": "numpy" if not on_device else f"{backend} ({device})"},
           # CPU seconds of this (one-thread) process beside the wall time: on a loaded machine the
           # wall time also counts the time other jobs held the core
           "measured": {"features_s": t_feat, "fit_s": t_fit, "total_min": (t_feat + t_fit) / 60,
                        "features_cpu_s": c_feat, "fit_cpu_s": c_fit, "total_cpu_min": (c_feat + c_fit) / 60,
                        "images_per_s": n_feat / t_feat, "validation_accuracy": val, "alpha": best,
                        "test_accuracy": acc},
           "goal_total_min": 30.0, "goal_total_min_issue16": 2.0}
    if on_device:
        return out
    # the features' floor on the polar path: the inverse FFTs and the fused cosine alone (no resampling, no forward
    # FFTs, no per-frequency GEMM, no transposition), per image, times the images mapped; with the measured fit,
    # the least this configuration can take by FFT correlation on this machine
    run, n_b = _cos_bound(s, r, n=32, fft=True)
    run()
    per_image = _best_interleaved({"floor": run}, repeat=3)[0]["floor"] / n_b
    out["floor"] = {"fft_cos_features_s": per_image * n_feat, "fft_cos_us_per_image": per_image * 1e6,
                    "total_min_at_floor_with_measured_fit": (per_image * n_feat + t_fit) / 60,
                    "features_over_floor": t_feat / (per_image * n_feat)}
    # the polar path's necessary work adds its per-frequency GEMM (the spectrum of the correlations, alone, a chunk
    # of 96 digits into a reused buffer): what is left above this is the path's own overhead
    gemm, n_g = _spectrum_gemm_bound(f, Xtr[:96])
    gemm_per_image = _best_interleaved({"gemm": gemm}, repeat=3)[0]["gemm"] / n_g
    at_gemm_floor = (per_image + gemm_per_image) * n_feat
    out["floor"].update({"gemm_us_per_image": gemm_per_image * 1e6, "gemm_fft_cos_features_s": at_gemm_floor,
                         "total_min_at_gemm_floor_with_measured_fit": (at_gemm_floor + t_fit) / 60,
                         "features_over_gemm_floor": t_feat / at_gemm_floor})
    if quick:
        # cholesky_path costs one Gram matrix (N p^2 primal, N^2 p dual) and one Cholesky factorisation per α
        # (p^3/3 or N^3/3): scale the measured fit by that model, not linearly in N.
        def _ridge_flops(N, p, n_alphas):
            m = min(N, p)
            return N * p * m + n_alphas * m**3 / 3.0

        n_fit = len(Xtr) + len(Xtr) + len(Xva)
        feat_full = t_feat / n_feat * n_total
        fit_full = t_fit * (_ridge_flops(n_train_total - 2000, s, len(alphas)) + _ridge_flops(n_train_total, s, 1)) / (
            _ridge_flops(len(Xtr), s, len(alphas)) + _ridge_flops(len(Xtr) + len(Xva), s, 1))
        out["extrapolated_full"] = {"features_s": feat_full, "fit_s": fit_full, "total_min": (feat_full + fit_full) / 60,
                                    "rows_fitted": n_fit,
                                    "label": "EXTRAPOLATED from the measured fraction (features linear in N; fit "
                                             "scaled by the flop count N p m + n_alphas m^3/3, m = min(N, p))"}
    return out


# --------------------------------------------------------------------------- 7
def bench_invariant_svm(quick=False):
    """Invar-SVM (Teo Algorithm 1) fit time: block QPs through clarabel directly vs through qpsolvers.

    scikit-learn's 8x8 digits (no download), pixels in [0, 1], sampled shifts ``ImageTranslation(shift=Normal(1))``
    as the invariance set (K transformations + the identity), ``qp_solver="clarabel"`` (the default where quadprog
    is not installed, named so that every QP is clarabel's either way), the estimator's defaults otherwise. Each K
    fits once per path, interleaved; ``identical`` records whether the two fits agree to the bit (they should: the
    same QPs reach clarabel either way). 200 digits, K = 10 and 50 (quick: 60 digits, K = 4).
    """
    import warnings

    from sklearn.datasets import load_digits
    from sklearn.exceptions import ConvergenceWarning

    from .groups import ImageTranslation, Normal
    from .models import InvariantSVC, invariant_svm

    n, ks = (60, (4,)) if quick else (200, (10, 50))
    X, y = load_digits(return_X_y=True)
    X, y = X[:n] / 16.0, y[:n]

    def fit(k, direct):
        def run():
            saved = invariant_svm._DIRECT_CLARABEL
            invariant_svm._DIRECT_CLARABEL = direct
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", ConvergenceWarning)
                    return InvariantSVC(transformations=ImageTranslation((8, 8), shift=Normal(1.0)),
                                        n_transformations=k, qp_solver="clarabel", random_state=0).fit(X, y)
            finally:
                invariant_svm._DIRECT_CLARABEL = saved
        return run

    rows = []
    for k in ks:
        times, models = _best_interleaved({"direct": fit(k, True), "qpsolvers": fit(k, False)}, repeat=1)
        a, b = models["direct"], models["qpsolvers"]
        rows.append({"n_transformations": k, "fit_s": times, "speedup": times["qpsolvers"] / times["direct"],
                     "passes": int(a.n_iter_), "converged": bool(a.converged_), "constraints": int(a.n_constraints_),
                     "identical": bool(np.array_equal(a.dual_coef_, b.dual_coef_)
                                       and np.array_equal(a.support_vectors_, b.support_vectors_))})
    return {"config": {"data": "sklearn load_digits, first rows", "n": n, "classes": 10,
                       "transformations": "ImageTranslation((8, 8), shift=Normal(1.0)), sampled once",
                       "solver": "column_generation, tol 1e-3, max_iter 100, clarabel"},
            "per_k": rows}


#: every variant tried on a benchmark's code path (issue #16): kept or reverted, and where it was measured
#: (a key of the same results file, or a committed probe script)
VARIANTS = {
    "invariant_svm": [
        {"variant": "the union's block steps one example's working set at a time, at most 100 sweeps (before stop "
                    "62)", "status": "reverted",
         "evidence": "tests/test_invariant_svm_gap.py: the fit reported converged_ short of the working sets' optimum "
                     "(a duality gap of 0.044 against Algorithm 1's bound of 0.018 on 120 rows x 16 shifts); "
                     "8.0 / 31.0 s at K = 10 / 50 in this benchmark's record before the fix"},
        {"variant": "joint block steps over the most violating examples, up to min(qp_chunk_size, 100) variables, "
                    "a block clarabel cannot step halved", "status": "kept", "evidence": "fit_s, passes, identical"},
        {"variant": "joint block steps of up to 150 or 300 variables", "status": "reverted",
         "evidence": "benchmarks/probes/perf/invariant_svm_blocks.py (results/bench/invariant_svm_blocks_probe.json): "
                     "6.2 / 25.1 s (150) and 11.4 / 39.4 s (300) at K = 10 / 50, against 4.9 / 24.0 s (100)"},
        {"variant": "clarabel's AlmostSolved block point a direction, the step the objective's minimum along it "
                    "(before stop 70: taken whole where it went down, else the block halved)", "status": "kept",
         "evidence": "benchmarks/probes/perf/invariant_svm_almost_solved.py (results/bench/"
                     "invariant_svm_almost_solved_probe.json): the low-rank linear problem of "
                     "tests/test_invariant_svm_gap.py over 12 seeds, two BLAS threads, every fit within Algorithm "
                     "1's bound both ways: 9042 block QPs against 9901 (the most in one fit 1954 against 2034); "
                     "under numpy 1.24 (invariant_svm_almost_solved_probe_numpy124.json) 8631 against 13205, the "
                     "most 1089 against 5384 (a fit of 15 s)"},
    ],
    "rotations_rf": [
        {"variant": "the spectral paths' inverse FFTs along the spectrum's first axis, untransposed, pooled in the "
                    "'rns' layout (the transposition was 44 of 263 ms on 512 digits)",
         "status": "reverted", "evidence": "benchmarks/probes/perf/inverse_axis.py (results/bench/"
                                           "inverse_axis_probe.json): faster on a contiguous block, not on a block of "
                                           "the chunk's spectrum (0.43 vs 0.42 ms per image); the default estimator "
                                           "2157 / 2153 images/s against 2218 before (two runs)"},
        {"variant": "fused orbit nonlinearity (numba): phase + vectorised float32 cosine + weighted mean in one pass "
                    "over each pooled block", "status": "kept",
         "evidence": "features_per_s: 'default' vs 'default (fused kernels off)'; cos_bound_images_per_s: fused vs "
                     "numpy passes"},
        {"variant": "fused inverse real DFT + cosine pool straight from the FFT spectrum (no transposition, no c2r)",
         "status": "reverted", "evidence": "benchmarks/probes/perf/spectral_pool.py: 524 ns per (image, template) "
                                           "against 246 ns for transposition + c2r + fused pool"},
        {"variant": "the per-frequency GEMM block by block (a few rows that stay in cache from the GEMM through the "
                    "inverse FFTs to the pooling) instead of once per memory chunk", "status": "reverted",
         "evidence": "benchmarks/probes/perf/correlate_block.py (results/bench/correlate_block_probe.json): slower at "
                     "every block size for s = 2000 / 64 angles and s = 7000 / 100 angles, 1.1x to 9x with the "
                     "strided template spectrum (2026-11-24), 1.05x to 1.5x again with the contiguous one "
                     "(2026-11-25)"},
        {"variant": "the templates' spectrum C-contiguous for the per-frequency GEMM (it kept the FFT output's "
                    "strides, which took NumPy's matmul off BLAS)", "status": "kept",
         "evidence": "benchmarks/probes/perf/template_spectrum_layout.py (results/bench/"
                     "template_spectrum_layout_probe.json): default estimator 514 -> 415 us per image, s = 7000 / "
                     "100 angles 3641 -> 2729, same rounds"},
        {"variant": "the per-frequency products by a numba kernel writing the spectrum straight into the (rows, s, nf) "
                    "layout of the inverse FFTs (no transposition)", "status": "reverted",
         "evidence": "benchmarks/probes/perf/spectral_layouts.py (results/bench/spectral_layouts_probe.json): 600 "
                     "against 560 us per row at s = 2000 / 64 angles, 4844 against 4122 at s = 7000 / 100 angles"},
        {"variant": "the per-frequency products as real GEMMs and the inverse real DFT as a GEMM per block of rows "
                    "(no transposition, no c2r), pooled in the 'rns' layout", "status": "reverted",
         "evidence": "benchmarks/probes/perf/spectral_layouts.py: 809 against 560 us per row at s = 2000, 5691 "
                     "against 4122 at s = 7000 (the DFT is 5x the FFT's flops)"},
        {"variant": "the inverse real DFT fused with the cosine pooling, straight from the spectrum (nf, rows, s) as "
                    "the per-frequency GEMM leaves it: per tile of 128 templates a Stockham FFT of radices 4, 2, 3, 5 "
                    "vectorised across the templates, then the weighted cosine (no transposition, no pocketfft pass)",
         "status": "reverted",
         "evidence": "benchmarks/probes/perf/fft_pool_fused.py (results/bench/fft_pool_fused_probe.json): the same "
                     "features (to 4e-7 at s = 2000, 5e-7 at s = 7000), 346 against 360 us per image at s = 2000 / "
                     "64 angles (4 %) and 3149 against "
                     "1939 at s = 7000 / 100 (1.6x slower: pocketfft's c2r is ~120 ns per template there, the "
                     "Stockham stages ~400). A cache-blocked numba transposition of the spectrum, faster in isolation "
                     "(105 against 163 us), gives 2281 / 2204 / 380 against 2249 / 2251 / 380 images/s in the "
                     "estimator (cos, cos/sin, Rotated MNIST shape): not kept"},
        {"variant": "polar resampling as a numba sparse gather", "status": "not tried",
         "evidence": "cProfile of the default estimator (benchmarks/probes/perf/spectral_layouts.py): the "
                     "per-frequency GEMM, transposition, inverse FFTs and pooling take 91 % of the time, the "
                     "resampling (the SciPy CSR product) is within the other 9 %"},
        {"variant": "a chunk's spectrum (52 MB for the 99 digits of a chunk) written into one buffer kept for the "
                    "whole transform (the engine's workspace, out= of the per-frequency GEMM) instead of a new "
                    "array per chunk, whose fresh mapping faulted in on every chunk of every transform with "
                    "glibc's default allocator (the benchmarks' warm heap hid it)", "status": "kept",
         "evidence": "benchmarks/probes/perf/chunk_workspace.py (results/bench/chunk_workspace_probe.json, default "
                     "allocator): 437 against 484 us per image for the default estimator (1.11x), 2686 against "
                     "2964 at s = 7000 / 100 angles (1.10x), GICDF 596 against 620 (1.04x); the same bits"},
        {"variant": "the chunk's spectrum with its frequency planes an odd number of 64-byte lines apart instead of "
                    "packed (n·s values apart: a multiple of 4 KiB for 32, 64, 128 or 480 digits at s = 2000, whose "
                    "block gathers then share cache sets)", "status": "kept",
         "evidence": "benchmarks/probes/perf/spectrum_planes.py (results/bench/spectrum_planes_probe.json): the block "
                     "pipeline (transposition, inverse FFTs, pooling) 274-286 against 351-365 us per image at those "
                     "chunk sizes, the same 272 at 99 (the default chunk before, alias-free by chance); at s = 7000 "
                     "1710 / 1722 against 2196 / 2218 at 64 / 128 digits"},
        {"variant": "an FFT path's chunk sized by what a row holds on the CPU, its spectrum (a block's correlations "
                    "and temporaries are a fixed reserve), instead of its spectrum twice and its similarities three "
                    "times: 491 instead of 102 digits at s = 2000, 93 instead of 18 at s = 7000 under the default "
                    "256 MB", "status": "kept",
         "evidence": "benchmarks/probes/perf/spectrum_planes.py: 408 against 421 us per image (s = 2000), 2509 against "
                     "2614 (s = 7000: the 40 MB template spectrum streamed through the per-frequency GEMM once per 93 "
                     "digits instead of once per 18), 4096 digits, default allocator; tests/test_memory.py holds "
                     "every budget"},
        {"variant": "the inverse real FFTs by Intel MKL (mkl_fft) or FFTW (pyfftw) instead of SciPy's pocketfft",
         "status": "not kept",
         "evidence": "benchmarks/probes/perf/fft_libraries.py (results/bench/fft_libraries_probe.json): at 64 "
                     "angles 78 (MKL) and 93 (FFTW, patient plans) against 145 us per image, which would take ~67 "
                     "us per image off the FFT floor; at the Rotated MNIST configuration's 100 angles "
                     "805 / 816-819 against 833 (no gain). Not worth a 1 GB (MKL) or GPL-licensed (FFTW) dependency "
                     "for the power-of-two grids alone"},
        {"variant": "a chunk's cache-sized blocks (transposition, inverse FFTs, pooling) pooled by a pool of threads "
                    "(each FFT on one worker; ORBITKERNELS_NUM_THREADS, else the cores; as many as a quarter of "
                    "max_memory_mb holds blocks) instead of in the caller's thread while only BLAS and the FFT "
                    "workers used the other cores", "status": "kept",
         "evidence": "benchmarks/probes/perf/pool_threads.py (results/bench/pool_threads_probe.json), this machine's "
                     "2 cores, three runs, over the blocks in the caller's thread: the default estimator 1.06-1.22x (the "
                     "recorded run: 1.37x one thread against 1.25x before), the Rotated MNIST shape 1.05-1.07x, the "
                     "default Nystroem map 1.05-1.14x and GICDF 1.06-1.08x; the same features. The blocks scale by "
                     "1.22x on the 2 cores, the similarities' products by 1.56x. The benchmarks here stay on one "
                     "thread"},
        {"variant": "the FFT paths' per-frequency products (the chunk's stack of GEMMs) split by frequency planes "
                    "among the pooling threads, BLAS on one thread (NumpyBackend.split_products), instead of one "
                    "stack on BLAS's threads in the caller's thread, after which OpenBLAS's workers spin on the "
                    "cores the pooling threads need", "status": "kept",
         "evidence": "benchmarks/probes/perf/split_products.py (results/bench/split_products_probe.json), this "
                     "machine's 2 cores, six runs: the pooling threads on the cores 0.98-0.99 of their wall time "
                     "against 0.65-0.72; over the products on BLAS's threads, the default estimator as a user writes it "
                     "(cos, sin) 1.23-1.36x, the cos-only default shape 1.19-1.39x, the Rotated MNIST shape "
                     "1.19-1.61x, GICDF on the full circle 1.15-1.57x; the same features as one thread (max |diff| "
                     "0); the recorded run's speedups over one thread are in the probe's file. Not on the GEMM and "
                     "data paths or under Nystroem's map, whose plain matrix products would run alone on one BLAS "
                     "thread"},
        {"variant": "the same split under Nystroem's map (the default rotation Nystroem map, polar path), the map "
                    "K_ZZ^{-1/2} (a plain product, once per chunk) on the caller's BLAS threads between the split "
                    "products", "status": "not kept",
         "evidence": "benchmarks/probes/perf/split_products.py with that estimator added, two runs, 2 cores (not "
                     "in the probe's file): no gain over the engine without the split; BLAS's workers, woken by the "
                     "map, spin again through the next chunk's split products and blocks"},
    ],
    "rotations_nystroem": [
        {"variant": "the template (GEMM) path's Gaussian from one GEMM of dot products in the compute precision, "
                    "the moved landmarks carrying |g^-1 z|²/2 as one more column, pooled by the fused Gaussian orbit "
                    "mean block by block, instead of scikit-learn's rbf_kernel in float64 (three float64 temporaries "
                    "of the s·r similarities per row, chunks of a few rows)", "status": "kept",
         "evidence": "speedup_gemm_dots_vs_sklearn_kernel and rel_diff_gemm_dots_float32_vs_sklearn_float64 here "
                     "(same rounds); tests/test_fastpaths.py::test_gemm_path_kernels_from_dots_equal_scikit_learns_"
                     "on_the_moved_landmarks"},
        {"variant": "Nyström's K_ZZ^{-1/2} (s x s) applied once per memory chunk, one GEMM, instead of once per "
                    "cache-sized pooled block (a row or two at s = 2000, r = 100: each block read the whole map)",
         "status": "kept", "evidence": "speedup_map_per_chunk_vs_per_block here (same rounds); "
                                       "benchmarks/probes/perf/rbf_pool_fused.py (results/bench/"
                                       "rbf_pool_fused_probe.json): 'map per block (before)' vs 'fused'"},
        {"variant": "the Gaussian orbit mean fused (numba): exponent, a vectorised exponential (Cody-Waite reduction, "
                    "degree-13 polynomial, 2^n from the exponent bits; relative error <= 2e-7 in float32) and the "
                    "weighted mean in one pass over each block, instead of rbf_from_dots' five NumPy passes and a "
                    "matrix-vector product", "status": "kept",
         "evidence": "speedup_fused_vs_off here; benchmarks/probes/perf/rbf_pool_fused.py: the pooling alone 2.2-2.6x "
                     "the NumPy passes, the transform 1.04-1.42x at 2000 landmarks (probe and benchmark runs) and 0.98x at 7000 (where the "
                     "per-frequency GEMM and the FFTs dominate: no gain beyond the machine's noise there), test "
                     "accuracy 0.931 against 0.932 (two digits in 2000)"},
        {"variant": "the same fused loop with a scalar math.exp per value", "status": "reverted",
         "evidence": "benchmarks/probes/perf/rbf_pool_fused.py: 'fused, scalar math.exp' 0.6-0.7x the NumPy passes "
                     "(the scalar exponential does not vectorise)"},
        {"variant": "the polar path's Gaussian with Cartesian norms and dual templates (Pᵀ)⁺ z, the value of "
                    "exp(-γ|g x - z|²) instead of the polar quadrature metric's", "status": "reverted",
         "evidence": "benchmarks/probes/perf/nystroem_polar_metric.py (results/bench/nystroem_polar_metric_probe.json): "
                     "Rotated MNIST 0.9235 against 0.9255 for the polar metric and 0.927 for the Cartesian Gaussian "
                     "on the template path, at 5.6x the polar path's time"},
        {"variant": "on the polar path, K_ZZ^{-1/2} of the polar-metric Gaussian (consistent with the polar kernel "
                    "values) instead of the Cartesian base kernel's (Raj Eq. 8)", "status": "reverted",
         "evidence": "benchmarks/probes/perf/nystroem_polar_metric.py: 0.926 against 0.9255, within the noise of one "
                     "draw"},
    ],
    "rotated_mnist_full": [
        {"variant": "the templates' spectrum C-contiguous for the per-frequency GEMM (as in rotations_rf)",
         "status": "kept",
         "evidence": "benchmarks/probes/perf/template_spectrum_layout.py: this configuration's features (s = 7000, "
                     "100 angles) 3641 -> 2729 us per image on 512 digits; features_s 174 s in this file's run at "
                     "19d485e (its version of commit 2563c10) against 239 s in its run at d09c8b2 (commit 8017e8a)"},
        {"variant": "the ridge from one Gram matrix per fitted set (models.ridge.cholesky_path, RidgeClassifier's "
                    "±1 targets) instead of six RidgeClassifier fits, each forming its own", "status": "kept",
         "evidence": "fit_s 22 s here (23 s in the run at 19d485e) against 47 s with RidgeClassifier in this "
                     "file's run at d09c8b2 (its version of commit 8017e8a: same validation accuracies to 5e-4, same "
                     "alpha 0.001 and test accuracy 0.9621)"},
        {"variant": "an FFT path's chunk sized by its spectrum alone on the CPU, with the spectrum's planes an odd "
                    "number of cache lines apart (as in rotations_rf)", "status": "kept",
         "evidence": "benchmarks/probes/perf/spectrum_planes.py: this configuration's shape 2509 against 2614 us per "
                     "image (93 digits per chunk instead of 18)"},
        {"variant": "each block of rows inverted and pooled by tiles of templates (250-2000 at a time, in L2) instead "
                    "of whole rows (2.8 MB of correlations per row here)", "status": "reverted",
         "evidence": "benchmarks/probes/perf/template_tiles.py (results/bench/template_tiles_probe.json): tiles of 2000 "
                     "templates 1790-1848 us per image against 1762-2131 for whole rows over four runs (no gain beyond "
                     "this machine's noise), smaller tiles slower (2050 / 1894 at 250 / 500 in the recorded run); at "
                     "s = 2000 tiles of 250 and 500 slower (318 / 303 against 290), of 1000 within 2 % (284)"},
        {"variant": "a chunk's spectrum written into one buffer kept for the whole transform (as in rotations_rf)",
         "status": "kept",
         "evidence": "benchmarks/probes/perf/chunk_workspace.py: this configuration's shape (s = 7000, 100 angles) "
                     "2686 against 2964 us per image with glibc's default allocator; the benchmark's warm heap "
                     "already kept those pages"},
    ],
    "gemm_peak": [
        {"variant": "fused CDF pooling (numba): bin index + histogram + cumulation in one pass, bit for bit the NumPy "
                    "code", "status": "kept", "evidence": "share_of_peak_transform vs "
                                                          "share_of_peak_transform_fused_kernels_off"},
        {"variant": "larger pooling blocks on the direct paths with the fused kernels (512 KiB, 2 MiB, 8 MiB instead of "
                    "128 KiB)", "status": "reverted",
         "evidence": "benchmarks/probes/perf/pool_block.py: GICDF 0.80 / 0.79 / 0.73 / 0.73 of sgemm at 128 KiB / "
                     "512 KiB / 2 MiB / 8 MiB"},
        {"variant": "the fused kernels' float32 cosine (|error| <= 4e-7 (1 + |x|)) in place of NumPy's",
         "status": "kept", "evidence": "results/bench/polar_accuracy.json, test_accuracy: 'polar_fft' vs "
                                       "'polar_fft (fused kernels off)'"},
        {"variant": "the fused CDF pooling on an AVX-512 core (the kernel was chosen on an AVX2 one)",
         "status": "kept", "evidence": "benchmarks/probes/perf/cdf_pool_kernel.py (results/bench/"
                                       "cdf_pool_kernel_probe.json), the pooling alone in the same rounds: 55.0-55.2 "
                                       "ms per 1024 images against 176.2-176.8 ms for the NumPy pooling (3.2x) in "
                                       "three runs. The "
                                       "transform-level comparison here (share_of_peak_transform vs "
                                       "share_of_peak_transform_fused_kernels_off) swings by 10 points between "
                                       "processes on this machine (GICDF 60-75 % of sgemm with the fused kernel in "
                                       "runs of 2026-11-24), which the earlier 'open' verdict had read as a CPU "
                                       "effect: it is the first touch of the fresh output on this virtual machine "
                                       "(benchmarks/probes/perf/gicdf_warm_heap.py: 61 / 75 / 72 % with the default "
                                       "allocator, 76.8 / 77.1 / 77.4 % with a warm heap, 64-65 % with the NumPy "
                                       "pooling either way)"},
        {"variant": "the equal-weight CDF kernel's histogram in its own loop with a constant increment, the bin "
                    "index in a called function (before: both in one function shared with the weighted kernel, "
                    "fed int64 weights of ones), bit for bit the same",
         "status": "kept", "evidence": "benchmarks/probes/perf/cdf_pool_kernel.py: 'fused' vs 'fused, before', "
                                       "55 vs 68 ms per 1024 images (1.24x) in three runs"},
        {"variant": "the pooling's temporaries counted once per pooled block, not per chunk row, where the "
                    "back-end pools cache-sized blocks into the output rows (ProjectionPlan.pool_bytes), and those "
                    "output rows left out of the estimator's working memory (OrbitFeaturesBase._map, which still "
                    "refuses a budget smaller than one row with its features): GICDF's 1024 digits in one GEMM "
                    "instead of two (581 + 443 rows before the first, 785 + 239 before the second) at the default "
                    "max_memory_mb",
         "status": "kept", "evidence": "benchmarks/probes/perf/gicdf_chunks.py (results/bench/gicdf_chunks_probe.json): "
                                       "one chunk 88.8-90.2 % of sgemm against 85.9-86.6 % for two (596 + 428 rows "
                                       "at 80 MB), three sittings; chunk_rows here records the transform's chunks; "
                                       "tests/test_memory.py still holds every budget"},
        {"variant": "benchmarks timed on a warm heap (glibc mallopt: freed outputs' pages reused), as a long-running "
                    "process runs, instead of the default allocator's fresh mappings",
         "status": "kept", "evidence": "benchmarks/probes/perf/gicdf_warm_heap.py: GICDF 61 / 75 / 72 % of sgemm "
                                       "with the default allocator (the first touch of a fresh output is a "
                                       "hypervisor fault on this virtual machine), 76.8 / 77.1 / 77.4 % warm; "
                                       "environment.heap says which"},
        {"variant": "the cumulated count's feature read from an (r+1)-entry table instead of a conversion and two "
                    "products per threshold",
         "status": "reverted", "evidence": "benchmarks/probes/perf/cdf_pool_kernel.py: 'fused, table' 56.5-57.4 vs "
                                           "'fused' 55.0-55.2 ms per 1024 images"},
        {"variant": "GICDF features written once: the fused CDF pooling scales and writes into the engine's output "
                    "rows (no temporary, no scaled copy, no copy into the output; the chunked transform no longer "
                    "copies the engine's output; no finiteness pass over CDF features), bit for bit the same",
         "status": "kept", "evidence": "benchmarks/probes/perf/cdf_direct_output.py "
                                       "(results/bench/cdf_direct_output_probe.json): 'direct into the output rows' "
                                       "vs 'temporary, scaled copy, copy (previous engine)' in the same rounds"},
    ],
}

#: The benchmarks ``orbitkernels bench`` runs, name -> function ``f(quick=False) -> dict`` of results, in the order
#: they run; the module docstring's table says what each measures.
BENCHMARKS = {
    "rotations_rf": bench_rotations_rf,
    "rotations_nystroem": bench_rotations_nystroem,
    "polar_accuracy": bench_polar_accuracy,
    "gemm_peak": bench_gemm_peak,
    "gicdf_mnist": bench_gicdf_mnist,
    "fft_cyclic": bench_fft_cyclic,
    "qm7_lgika": bench_qm7_lgika,
    "memory": bench_memory,
    "setup": bench_setup,
    "rotated_mnist_full": bench_rotated_mnist_full,
    "invariant_svm": bench_invariant_svm,
}


def _gpu_name():
    """The CUDA device's name when torch sees one (the benchmarks themselves run on the CPU unless they say so)."""
    try:
        import torch
    except ImportError:
        return None
    return torch.cuda.get_device_name(0) if torch.cuda.is_available() else None


def _cpu_simd(cpuinfo="/proc/cpuinfo"):
    """The widest x86 vector extension the CPU reports ("avx512f", "avx2", "sse2"), or None where unknown: GEMM peak
    and so every share of it depend on it (sgemm ran at 43 GFLOP/s on one AVX2 core here, 104 on an AVX-512 one)."""
    try:
        with open(cpuinfo) as f:
            flags = next((line.split(":", 1)[1].split() for line in f if line.startswith("flags")), [])
    except OSError:
        return None
    return next((x for x in ("avx512f", "avx2", "sse2") if x in flags), None)


def _environment():
    import scipy
    import sklearn

    env = {"orbitkernels": __version__, "python": platform.python_version(), "numpy": np.__version__,
           "scipy": scipy.__version__, "sklearn": sklearn.__version__, "cpu_count": os.cpu_count(),
           "machine": platform.machine(), "cpu_simd": _cpu_simd(), "blas_threads": _threads(), "fft_workers": _fft_workers(), "gpu": _gpu_name()}
    try:
        env["git_commit"] = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True,
                                           cwd=Path(__file__).parent).stdout.strip() or None
    except OSError:
        env["git_commit"] = None
    return env


def _pct(x):
    return f"{100 * x:.0f}%"


def summarize(name, res):
    """One line of the key ratios of a benchmark's ``results`` (what the CLI prints and the docs show).

    Parameters
    ----------
    name : str
        A key of :data:`BENCHMARKS`.
    res : dict
        That benchmark's ``results`` (a record's ``"results"``).

    Returns
    -------
    str
        The line; "(no summary: ...)" for results that lack a number it reads (an older file), "" for an
        unknown ``name``.
    """
    try:
        if name == "rotations_rf":
            sp, fps = res["speedup_vs_naive"], res["features_per_s"]
            if "default" not in sp:  # a file from before the default estimator was measured
                return (f"polar FFT {sp['polar_fft']:.1f}x the naive path (goal {res['goal_polar_vs_naive']:.0f}x), "
                        f"template GEMM {sp['template_gemm']:.1f}x; {fps['polar_fft']:.0f} vs {fps['naive']:.0f} images/s")
            fb = res["fraction_of_cos_bound"]
            return (f"default estimator (polar path, {res['config']['fused_kernels']}) {sp['default']:.1f}x the naive "
                    f"path (goal {res['goal_default_vs_naive']:.0f}x), {_pct(fb['default'])} of the fused-cosine bound "
                    f"({res['cos_bound_images_per_s']['fused']:.0f} images/s)"
                    + (f", {_pct(res['fraction_of_fft_cos_bound']['default'])} of the inverse-FFT + cosine floor "
                       f"({res['fft_cos_bound_images_per_s']:.0f} images/s)" if "fraction_of_fft_cos_bound" in res else "")
                    + (f", {_pct(res['fraction_of_gemm_fft_cos_bound']['default'])} of that floor with the "
                       f"per-frequency GEMM ({res['gemm_fft_cos_bound_images_per_s']:.0f} images/s)"
                       if "fraction_of_gemm_fft_cos_bound" in res else "")
                    + f"; template GEMM {sp['template_gemm']:.1f}x; {fps['default']:.0f} vs {fps['naive']:.0f} images/s")
        if name == "rotations_nystroem":
            sp, fps = res["speedup_vs_naive"], res["features_per_s"]
            line = (f"default estimator ({res['config']['default_path']} path, "
                    f"{res['config']['fused_kernels']}) {sp['default']:.1f}x the naive path, template GEMM "
                    f"{sp['template_gemm']:.1f}x; {fps['default']:.0f} vs {fps['naive']:.0f} images/s; K_ZZ^-1/2 once "
                    f"per chunk {res['speedup_map_per_chunk_vs_per_block']:.1f}x once per pooled block")
            if "fraction_of_rbf_bound" in res:
                line += (f"; {_pct(res['fraction_of_rbf_bound']['default'])} of the Gaussian-pooling bound "
                         f"({res['rbf_bound_images_per_s']:.0f} images/s)")
            if "speedup_fused_vs_off" in res:
                line += f"; fused Gaussian orbit mean {res['speedup_fused_vs_off']:.2f}x the NumPy passes"
            if "speedup_gemm_dots_vs_sklearn_kernel" in res:
                line += (f"; template GEMM's Gaussian from dot products {res['speedup_gemm_dots_vs_sklearn_kernel']:.1f}x "
                         f"scikit-learn's float64 kernel (features within "
                         f"{res['rel_diff_gemm_dots_float32_vs_sklearn_float64']:.1e})")
            return line
        if name == "polar_accuracy":
            return ", ".join(f"{k}: {v['test_accuracy']:.3f} ({v['features_s']:.1f} s)"
                             for k, v in res.items() if isinstance(v, dict) and "test_accuracy" in v)
        if name == "gemm_peak":
            a, b = res["lgika_rf_cos_sin"], res["gicdf_50_bins"]
            line = (f"numpy sgemm {res['peak_numpy_sgemm_gflops']:.1f} GFLOP/s; LGIKA-RF transform "
                    f"{_pct(a['share_of_peak_transform'])} of it, GICDF(50 bins) {_pct(b['share_of_peak_transform'])} "
                    f"(goal {_pct(res['goal_share'])})")
            if "share_of_peak_transform_fused_kernels_off" in b:
                goals = res["goal_share_issue16"]
                line += (f"; fused kernels ({res['fused_kernels']}) vs off: GICDF {_pct(b['share_of_peak_transform'])} vs "
                         f"{_pct(b['share_of_peak_transform_fused_kernels_off'])} (goal {_pct(goals['gicdf_50_bins'])}), "
                         f"LGIKA-RF {_pct(a['share_of_peak_transform'])} vs "
                         f"{_pct(a['share_of_peak_transform_fused_kernels_off'])} (goal {_pct(goals['lgika_rf_cos_sin'])})")
            return line
        if name == "gicdf_mnist":
            ips = res["images_per_s"]
            line = (f"{ips['float32']:.0f} images/s in float32, {ips['float64']:.0f} in float64; "
                    f"{res['speedup_float32_blocked_vs_previous']:.1f}x the unblocked float64 pooling")
            if "float32 (fused kernels off)" in ips:
                line += f"; {ips['float32'] / ips['float32 (fused kernels off)']:.2f}x with the fused kernels (float32)"
            return line
        if name == "fft_cyclic":
            line = (f"LGIKA-RF FFT {res['lgika_rf']['speedup']:.1f}x the GEMM path, GICDF "
                    f"{res['gicdf']['speedup']:.1f}x (max |diff| {max(res['lgika_rf']['max_abs_diff'], res['gicdf']['max_abs_diff']):.1g})")
            if "fraction_of_cos_bound" in res["lgika_rf"]:
                line += f"; LGIKA-RF FFT at {_pct(res['lgika_rf']['fraction_of_cos_bound'])} of the fused-cosine bound"
            return line
        if name == "qm7_lgika":
            rows = res["per_s"]
            return (f"features time ~ s^{res['feature_time_exponent_in_s']:.2f}; "
                    + ", ".join(f"s={r['s']}: {r['fold_s']:.1f} s/fold (MAE {r['mae_kcal_mol']:.1f})" for r in rows)
                    + f" on {res['config']['subset']} molecules")
        if name == "memory":
            parts = []
            for path in ("gemm", "polar"):
                rows = res[path]
                parts.append(f"{path}: working memory {rows[0]['working_mb']:.0f} MiB at N={rows[0]['n']} and "
                             f"{rows[-1]['working_mb']:.0f} MiB at N={rows[-1]['n']}")
            return ("; ".join(parts) + f" (budget {res['config']['max_memory_mb']:.0f} MiB, output excluded); "
                    f"augmenting the data would need {res['naive_would_need_mb_at_max_n']:.0f} MiB")
        if name == "setup":
            before = {c["case"]: c for c in res.get("before", {}).get("cases", [])}

            def _was(c):
                b = before.get(c["case"])
                return "" if b is None else (f" (was {b['fitted_mb']:.0f} MiB / {b['pickle_mb']:.1f} MiB, setup "
                                             f"{b['fit_s'] + b['first_transform_s']:.2f} s)")
            return "; ".join(f"{c['case']}: fit {c['fit_s']:.2f} s + first transform {c['first_transform_s']:.2f} s, "
                             f"fitted {c['fitted_mb']:.0f} MiB, pickle {c['pickle_mb']:.1f} MiB{_was(c)}"
                             for c in res["cases"])
        if name == "invariant_svm":
            return "; ".join(f"K = {r['n_transformations']}: fit {r['fit_s']['direct']:.1f} s with clarabel directly vs "
                             f"{r['fit_s']['qpsolvers']:.1f} s through qpsolvers ({r['speedup']:.1f}x; "
                             f"{'identical' if r['identical'] else 'DIFFERENT'} models, {r['passes']} passes"
                             f"{'' if r['converged'] else ', not converged'})" for r in res["per_k"])
        if name == "rotated_mnist_full":
            m = res["measured"]
            if "extrapolated_full" in res:
                return (f"{m['images_per_s']:.0f} images/s; full configuration EXTRAPOLATED to "
                        f"{res['extrapolated_full']['total_min']:.1f} min (goal {res['goal_total_min']:.0f} min)")
            cpu = (f"; {m['total_cpu_min']:.1f} CPU min (goal {res['goal_total_min_issue16']:.0f} min)"
                   if "total_cpu_min" in m else "")
            floor = ""
            if "floor" in res:
                fl = res["floor"]
                floor = (f"; floor of the features (inverse FFTs + fused cosine alone) {fl['fft_cos_features_s']:.0f} s, "
                         f"{fl['total_min_at_floor_with_measured_fit']:.1f} min with the ridge (features at "
                         f"{fl['features_over_floor']:.1f}x the floor)")
                if "gemm_fft_cos_features_s" in fl:
                    floor += (f"; with the per-frequency GEMM {fl['gemm_fft_cos_features_s']:.0f} s, "
                              f"{fl['total_min_at_gemm_floor_with_measured_fit']:.1f} min with the ridge (features at "
                              f"{fl['features_over_gemm_floor']:.2f}x it)")
            return (f"full configuration ({res['config']['n_images']} images) measured: {m['total_min']:.1f} min "
                    f"(features {m['features_s']:.0f} s, ridge {m['fit_s']:.0f} s; goal {res['goal_total_min']:.0f} "
                    f"min){cpu}, test accuracy {m['test_accuracy']:.4f}{floor}")
    except (KeyError, TypeError, IndexError, ValueError) as exc:  # an older results file
        return f"(no summary: {exc!r})"
    return ""


def render_markdown(results_dir="results/bench", quick=False):
    """``docs/performance.md``: one section per benchmark from ``<results_dir>/<name>.json``.

    Each section gives the first line of the benchmark's docstring, its summary line, the run's wall time,
    load and threads, and the variants tried; "Not run yet" without the file. Then the GPU check's section
    (``gpu.json``), when not ``quick``.

    Parameters
    ----------
    results_dir : str or path, default="results/bench"
        The folder of the records.
    quick : bool, default=False
        Read the ``<name>_quick.json`` records instead.

    Returns
    -------
    str
        The page (Markdown).
    """
    root = Path(results_dir)
    lines = ["# Performance", "",
             "Generated by `orbitkernels report` from `results/bench/*.json` (written by `orbitkernels bench`). "
             "Every benchmark runs the methods it compares in one process (memory and setup: a fresh process per "
             "case) and reports ratios; each file records the load average, BLAS threads, FFT workers and versions "
             "of its run.", ""]
    for name, fn in BENCHMARKS.items():
        path = root / f"{name}{'_quick' if quick else ''}.json"
        lines += [f"## {name}", "", (fn.__doc__ or "").strip().splitlines()[0], ""]
        if not path.exists():
            lines += [f"*Not run yet* (`orbitkernels bench --name {name}`).", ""]
            continue
        with reading_results(path):
            rec = json.loads(path.read_text())
            lines += [f"**{summarize(name, rec['results'])}**", "",
                      f"Wall time {rec['wall_s']:.0f} s, load average {rec['loadavg_before'][0]:.1f} before and "
                      f"{rec['loadavg_after'][0]:.1f} after, BLAS threads "
                      f"{rec['environment'].get('blas_threads', '?')}, FFT workers "
                      f"{rec['environment'].get('fft_workers', 'all cores (before 2026-11-25)')}. "
                      f"Full numbers: [`results/bench/{path.name}`](../results/bench/{path.name}).", ""]
            if rec.get("variants"):
                lines += ["Variants tried:", ""] + [f"* {v['variant']}: **{v['status']}** ({v['evidence']})"
                                                     for v in rec["variants"]] + [""]
    gpu = root / "gpu.json"
    if not quick and gpu.exists():
        with reading_results(gpu):
            lines += _gpu_markdown(json.loads(gpu.read_text()))
    return "\n".join(lines).rstrip() + "\n"


def _gpu_markdown(rec):
    """The section of ``benchmarks/gpu_check.py``'s results (the torch back-end on a lent GPU)."""
    lines = ["## gpu", "", "The PyTorch back-end on a GPU (`python benchmarks/gpu_check.py`, run on a machine lent "
             "with one; CI never runs it). `bash benchmarks/gpu_session.sh OUT` runs it with the other GPU checks in "
             "one go: the torch back-end's tests on CUDA and the device probes.", "",
             f"Run on {rec['gpu']} with torch {rec['torch']}, NumPy on the same machine's {rec['cpu_count']} cores "
             f"({rec['numpy_blas_threads']} BLAS threads). Full numbers: [`results/bench/gpu.json`]"
             "(../results/bench/gpu.json).", ""]
    if rec.get("throughput"):
        lines += ["| estimator (float32, d = 784) | NumPy images/s | torch GPU images/s | GPU / NumPy |",
                  "| --- | --- | --- | --- |"]
        for r in rec["throughput"]:
            lines.append(f"| {r['estimator']} | {r['numpy_images_per_s']:.0f} | {r['torch_gpu_images_per_s']:.0f} | "
                         f"{r['gpu_over_numpy']:.1f}x |")
            if "torch_gpu_scatter_pooling_images_per_s" in r:
                lines.append(f"| the same, with the scatter-add CDF pooling (the CPU's) | | "
                             f"{r['torch_gpu_scatter_pooling_images_per_s']:.0f} | |")
        lines.append("")
    if rec.get("agreement"):
        worst = {}
        for r in rec["agreement"]:
            key = (r["map"], r["dtype"])
            worst[key] = max(worst.get(key, 0.0), r["max_abs_diff"])
        lines += ["Agreement with NumPy on every engine path (largest absolute difference of the features): "
                  + ", ".join(f"{m} {dt} {v:.2g}" for (m, dt), v in sorted(worst.items())) + ".", ""]
    if rec.get("pooling"):
        lines += ["The CDF pooling alone on device blocks (rows × 500 templates × r projections, 50 bins):", "",
                  "| block | weights | sorted (s) | scatter-add (s) | max difference |",
                  "| --- | --- | --- | --- | --- |"]
        lines += [f"| {' × '.join(map(str, r['shape']))} | {r['weights']} | {r['sorted_s']:.4f} | "
                  f"{r['scatter_s']:.4f} | {r['max_abs_diff']:.1g} |" for r in rec["pooling"]]
        lines.append("")
    return lines


def _warm_heap():
    """Keep freed large arrays' pages in the process (glibc ``mallopt``: no mmap below 1 GiB, no trimming); returns
    "warm" when set, else "default" (not glibc, or ``ORBITKERNELS_BENCH_WARM_HEAP=0``).

    Each call of a benchmarked function allocates its output afresh. With glibc's default, every array above
    32 MB is mapped anew and its pages are first touched inside the timed call; on this project's virtual machine
    the host backs guest memory lazily, so that first touch costs a hypervisor fault whose price depends on which
    pages the kernel hands out, and GICDF's share of sgemm moved between 61 % and 75 % from one process to the next
    (``benchmarks/probes/perf/gicdf_warm_heap.py``; 77 % in every process with a warm heap). The benchmarks measure
    that steady state, for the reference GEMM as for the paths. The library's own large arrays within a transform
    (a chunk's similarities or spectrum) are kept in its workspace under either allocator
    (``benchmarks/probes/perf/chunk_workspace.py`` measures the difference with the default one); the outputs a
    user receives are new arrays.
    """
    if os.environ.get("ORBITKERNELS_BENCH_WARM_HEAP", "1").strip().lower() in ("0", "false", "no", "off"):
        return "default"
    try:
        import ctypes

        libc = ctypes.CDLL("libc.so.6")
        M_TRIM_THRESHOLD, M_MMAP_THRESHOLD = -1, -3
        ok = libc.mallopt(M_MMAP_THRESHOLD, 2**30) == 1 and libc.mallopt(M_TRIM_THRESHOLD, 2**31 - 1) == 1
    except (OSError, AttributeError):  # pragma: no cover - not glibc
        return "default"
    return "warm" if ok else "default"


def run_benchmarks(names=None, quick=False, out_dir=None):
    """Run the named benchmarks (all by default); write ``<out_dir>/<name>.json``; return {name: record}.

    Benchmarks run with ``ORBITKERNELS_BENCH_THREADS`` BLAS threads and FFT workers (default 1:
    the machine is shared) and record the load average around each run; full runs keep
    their heap warm (:func:`_warm_heap`), which each record's environment states.

    Parameters
    ----------
    names : str or list of str, default=None
        Keys of :data:`BENCHMARKS` (one name or several); None runs them all, in that order.
    quick : bool, default=False
        Shrink every size (a pipeline check); the files are then ``<name>_quick.json``.
    out_dir : str or path, default=None
        Where the files go (made as needed); None: ``results/bench`` under the current directory.

    Returns
    -------
    dict
        ``{name: record}``, each record what its file holds: ``benchmark``, ``quick``, ``wall_s``,
        ``loadavg_before``, ``loadavg_after``, ``environment``, ``results`` (the benchmark's numbers),
        ``variants`` (``VARIANTS[name]``), ``doc`` (the benchmark's docstring) and ``summary``
        (:func:`summarize`).

    Raises
    ------
    ValueError
        For a name that is not a benchmark (before any is run).
    """
    names = list(BENCHMARKS) if names is None else ([names] if isinstance(names, str) else list(names))
    unknown = [n for n in names if n not in BENCHMARKS]
    if unknown:
        raise ValueError(f"unknown benchmark(s) {unknown}; choose from {sorted(BENCHMARKS)}")
    threads = _threads()  # a bad setting refused before any folder is made or benchmark run
    out_dir = Path(out_dir) if out_dir is not None else Path("results") / "bench"
    out_dir.mkdir(parents=True, exist_ok=True)
    results = {}
    # the full runs only: the quick ones are pipeline checks (and run inside the test process)
    heap = "default" if quick else _warm_heap()
    for name in names:
        load_before = os.getloadavg()
        t0 = time.perf_counter()
        with _limit(threads):
            env = _environment()  # inside the limits: the FFT workers the benchmark ran with
            data = BENCHMARKS[name](quick=quick)
        record = {"benchmark": name, "quick": bool(quick), "wall_s": time.perf_counter() - t0,
                  "loadavg_before": load_before, "loadavg_after": os.getloadavg(),
                  "environment": {**env, "heap": heap}, "results": data,
                  "variants": VARIANTS.get(name, []),
                  "doc": (BENCHMARKS[name].__doc__ or "").strip()}
        record["summary"] = summarize(name, data)
        atomic_write_json(out_dir / f"{name}{'_quick' if quick else ''}.json", record)
        results[name] = record
    return results


if __name__ == "__main__":  # pragma: no cover
    import argparse

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("names", nargs="*")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--out-dir")
    a = ap.parse_args()
    res = run_benchmarks(a.names or None, quick=a.quick, out_dir=a.out_dir)
    print(json.dumps({k: v["results"] for k, v in res.items()}, indent=1, default=str))
