"""Every feature map, on every path, in every compute precision, on float32 and float64 rows: transform works,
keeps the input's dtype (scikit-learn's preserves_dtype) and gives finite features close to the float64 ones.

GroupCDFFeatures(dtype="float64") on float32 rows once raised in transform (its CDF was written straight into
an output narrower than its similarities); nothing tested the crossed precisions before.
"""
import numpy as np
import pytest
from sklearn.base import clone

from orbitkernels.features import GroupCDFFeatures, OrbitFourierFeatures, OrbitNystroem
from orbitkernels.features._engine import DTYPES
from orbitkernels.groups import CyclicShift, ImageRotation, ImageScaling, Uniform
from orbitkernels.groups.polar import PolarRotation

GROUPS = {
    "gemm": lambda: ImageRotation((8, 8), n_angles=4),
    "fft": lambda: CyclicShift((8, 8)),
    "polar": lambda: PolarRotation((8, 8), n_angles=8),
    "data": lambda: ImageScaling((8, 8), scale=Uniform(0.9, 1.1)),
}
MAPS = {  # r: sampled elements (None: all, which the FFT paths want)
    "gicdf": lambda g, r: GroupCDFFeatures(g, n_templates=4, n_bins=3, n_group_samples=r),
    "fourier": lambda g, r: OrbitFourierFeatures(g, n_components=6, gamma=0.05, n_group_samples=r),
    "nystroem": lambda g, r: OrbitNystroem(g, n_components=5, gamma=0.05, n_group_samples=r),
}


@pytest.mark.parametrize("path", sorted(GROUPS))
@pytest.mark.parametrize("name", sorted(MAPS))
@pytest.mark.parametrize("dtype", [d for d in DTYPES if d is not None])
@pytest.mark.parametrize("x_dtype", [np.float32, np.float64])
def test_every_map_path_and_precision_transforms_rows_of_either_float(path, name, dtype, x_dtype, rng):
    X = rng.random((30, 64))
    group = GROUPS[path]()
    r = None if path in ("fft", "polar") else 4
    # GICDF's data side needs a symmetric q; orbit Fourier features would move a scaling by its transpose
    side = {"action": "data"} if path == "data" and name != "gicdf" else {}
    est = MAPS[name](group, r).set_params(dtype=dtype, random_state=0, max_memory_mb=0.05, **side)
    ref = MAPS[name](GROUPS[path](), r).set_params(dtype="float64", random_state=0, **side).fit(X)
    est.fit(X.astype(x_dtype))
    F = est.transform(X.astype(x_dtype))
    # GICDF moves its templates by definition (Mroueh §2), so a non-unitary action stays on the GEMM path
    assert est.plan_.path == ("gemm" if (name, path) == ("gicdf", "data") else path)
    assert F.dtype == x_dtype and F.shape == ref.transform(X).shape
    assert np.isfinite(F).all()
    tol = 1e-9 if (x_dtype == np.float64 and dtype in ("float64", "auto")) else 2e-3
    if name == "gicdf":  # step functions of the projections: a rounding may move a value across a threshold
        assert np.mean(np.abs(F - ref.transform(X)) > tol) < 0.02
    else:
        np.testing.assert_allclose(F, ref.transform(X), atol=tol)


@pytest.mark.parametrize("group", [None, "fft", "gemm"])
def test_nystroem_maps_float32_rows_in_float64_when_the_landmarks_are_ill_conditioned(group, rng):
    # Many landmarks under a wide Gaussian make K_ZZ nearly singular, and L = K_ZZ^{-1/2} amplifies the
    # float32 rounding of the kernel values (QM7, 5700 landmarks: ridge LOO RMSE 30.4 against 13.56 kcal/mol).
    X = rng.standard_normal((300, 64))
    g = GROUPS[group]() if group else None
    r = 4 if group == "gemm" else None
    ill = OrbitNystroem(g, n_components=250, gamma=1e-5, n_group_samples=r, random_state=0).fit(X.astype(np.float32))
    assert ill.precision_ == "float64"
    ref = ill.transform(X)  # float64 rows: float64 throughout
    F = ill.transform(X.astype(np.float32))
    assert F.dtype == np.float32
    forced = clone(ill).set_params(dtype="float32").fit(X.astype(np.float32)).transform(X.astype(np.float32))
    err, err32 = (np.abs(A.astype(np.float64) - ref).max() / np.abs(ref).max() for A in (F, forced))
    assert err < 1e-6 and err32 > 100 * err
    well = OrbitNystroem(g, n_components=10, gamma=0.05, n_group_samples=r, random_state=0).fit(X.astype(np.float32))
    assert well.precision_ == "float32"


def test_nystroem_precision_bound():
    S = np.array([1.0, 1e-2])
    assert OrbitNystroem._auto_precision(S, 1.0) == "float32"
    # u · sqrt(s / σ_min) = 1.19e-7 · sqrt(2 / 1e-9) = 5.3e-3 > 1e-3
    assert OrbitNystroem._auto_precision(np.array([1.0, 1e-9]), 1.0) == "float64"
    assert OrbitNystroem._auto_precision(np.array([1.0, 0.0]), 1.0) == "float64"
