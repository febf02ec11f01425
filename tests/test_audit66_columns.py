"""An audit of a505f0b (the data side over image warps takes the moved rows as columns): brute force against the
rows' layout, float64 references and tracemalloc; its finding, as a test that failed before its fix."""
import tracemalloc

import numpy as np
import pytest

from orbitkernels.features import OrbitFourierFeatures, OrbitNystroem
from orbitkernels.groups import ImageScaling, LogUniform


@pytest.mark.parametrize("kind", ["nystroem", "fourier"])
@pytest.mark.parametrize("x_dtype, dtype", [("float64", "float32"), ("float32", "float64")])
def test_the_columns_count_the_rows_converted_to_the_compute_precision(kind, x_dtype, dtype):
    """Rows of another dtype than the compute precision (float64 data, dtype="float32") are converted chunk by chunk
    before the warp transposes them into columns: one more copy of the row than the columns' count held. With one
    element the transform's peak beyond its output was 1.5x the rows' share of the budget (5.0 MB at 4 MB)."""
    g = ImageScaling((64, 64), LogUniform(0.8, 1.25))
    X = np.random.default_rng(0).random((800, g.n_features)).astype(x_dtype)
    budget = 4
    kw = dict(n_components=2, n_group_samples=1, max_memory_mb=budget, dtype=dtype, fast_path="none", random_state=0)
    est = (OrbitNystroem(g, kernel="rbf", gamma=1e-3, **kw) if kind == "nystroem"
           else OrbitFourierFeatures(g, gamma=1e-3, action="data", **kw)).fit(X[:50])
    assert est.plan_.path == "data" and g._makes_columns
    est.transform(X[:30])  # the warp matrix and the templates, outside the measurement
    tracemalloc.start()
    try:
        F = est.transform(X)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert (peak - F.nbytes) / 2**20 <= budget + 0.5
