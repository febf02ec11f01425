"""Audit 64: two memory budgets that were overrun, measured with tracemalloc (it sees NumPy's buffers).

MolecularOrbitFeatures.transform went ~38% over max_memory_mb at every size (the phases stayed alive beside their
cosine and sine, and the rotated copies of the structure factors were undercounted): at A = 23 atoms and 64
rotations, float64, a 16 MB budget peaked at 20.4 MB beyond the output, 64 MB at 86.8 MB; 300 QM7 molecules
in float32 at the default 256 MB peaked at 349 MB. RidgePath.predict held its predictions twice (the block
output and the α-major result) and two float64 copies of each block: 397 MB for 198 MB of predictions.
"""
import tracemalloc

import numpy as np
import pytest

from orbitkernels.features import MolecularOrbitFeatures
from orbitkernels.groups import encode_molecules
from orbitkernels.models import RidgePath

SLACK_MB = 1.0  # as tests/test_memory.py: Python objects, and the per-transform template and rotation arrays


def _peak_mb(fn):
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        out = fn()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    return peak / 2**20, out


def _molecules(n, n_atoms, seed=0):
    """Rows of n random molecules of n_atoms / 2 to n_atoms atoms of QM7's species (the rest padding)."""
    rng = np.random.default_rng(seed)
    Z, R = np.zeros((n, n_atoms)), np.zeros((n, n_atoms, 3))
    for i, k in enumerate(rng.integers(n_atoms // 2, n_atoms + 1, size=n)):
        Z[i, :k] = rng.choice([1, 6, 7, 8, 16], k, p=[0.5, 0.3, 0.08, 0.1, 0.02])
        R[i, :k] = rng.normal(scale=1.5, size=(k, 3))
    return encode_molecules(Z, R)


MOLECULE_CASES = [
    # before: 20.4 MB beyond the output at 16 MB (float64), 10.2 at 8 MB (float32); after: 15.7, 7.9
    ("molecule-float64", dict(n_group_samples=64), np.float64, 16.0, 120),
    ("molecule-float32", dict(n_group_samples=64), np.float32, 8.0, 240),
    # before: 18.3 MB at 16 MB (the phases beside their cosine and sine, the environments' products beside the
    # embeddings and their copy without the padding atoms); after: 10.3 MB in chunks of the same size
    ("atoms", dict(n_group_samples=16, n_components=32, weighting="charge", centres="atoms"), np.float32, 16.0, 240),
]


@pytest.mark.parametrize("name, params, dtype, budget, n", MOLECULE_CASES, ids=[c[0] for c in MOLECULE_CASES])
def test_molecular_transform_stays_within_max_memory_mb(name, params, dtype, budget, n):
    X = _molecules(n, 23).astype(dtype)
    f = MolecularOrbitFeatures(random_state=0, max_memory_mb=budget, **params).fit(X[:20])
    assert f._rows_per_chunk(23, 1, X.itemsize) < n // 3  # several chunks, each as large as the budget allows
    f.transform(X[:2])  # once, outside the measurement
    peak, F = _peak_mb(lambda: f.transform(X))
    assert F.shape == (n, f._n_features_out) and F.dtype == dtype
    assert peak - F.nbytes / 2**20 <= budget + SLACK_MB, (name, peak, F.nbytes / 2**20)


def _predict_before(path, X, index, block_bytes):
    """RidgePath.predict as it was before the audit (its blocks, its products): the reference of bit-identity."""
    idx = range(len(path.alphas)) if index is None else [index]
    W = np.concatenate([path.coef(i) for i in idx], axis=1)
    m, k = X.shape[0], path.y_mean_.shape[0]
    out = np.empty((m, W.shape[1]))
    rows = max(1, int(block_bytes // (8 * max(X.shape[1], 1))))
    for a in range(0, m, rows):
        out[a : a + rows] = (np.asarray(X[a : a + rows], dtype=np.float64) - path.x_mean_) @ W
    P = out.reshape(m, len(idx), k).transpose(1, 0, 2) + path.y_mean_
    return P if index is None else P[0]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("index", [None, 3])
def test_ridge_predict_holds_its_predictions_once_and_one_block(index, dtype, monkeypatch):
    rng = np.random.default_rng(0)
    X, Y = rng.random((2000, 100)), rng.random((2000, 10))
    path = RidgePath(np.logspace(-3, 3, 13)).fit(X, Y)
    block = 2**20
    monkeypatch.setattr(RidgePath, "PREDICT_BLOCK_BYTES", block)
    Xt = rng.random((20000, 100)).astype(dtype)  # 1310 rows a block: 15 full blocks and a last one of 350 rows
    # before: 2 x 19.8 MB of predictions for every α (40 MB), 3.1 to 3.6 MB for 1.5 MB for one; after: 21.0, 2.6
    peak, P = _peak_mb(lambda: path.predict(Xt, index))
    assert peak - P.nbytes / 2**20 <= block / 2**20 + 0.5, (peak, P.nbytes / 2**20)
    ref = _predict_before(path, Xt, index, block)
    assert P.shape == ref.shape and P.dtype == ref.dtype
    np.testing.assert_array_equal(P, ref)  # bit for bit: the same blocks and products
