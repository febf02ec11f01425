"""Every feature map, on every path, in every compute precision, on float32 and float64 rows: transform works,
keeps the input's dtype (scikit-learn's preserves_dtype) and gives finite features close to the float64 ones.

GroupCDFFeatures(dtype="float64") on float32 rows once raised in transform (its CDF was written straight into
an output narrower than its similarities); nothing tested the crossed precisions before.
"""
import numpy as np
import pytest

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
    est = MAPS[name](group, r).set_params(dtype=dtype, random_state=0, max_memory_mb=0.05)
    ref = MAPS[name](GROUPS[path](), r).set_params(dtype="float64", random_state=0).fit(X)
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
