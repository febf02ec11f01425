"""The GURLS-style RLS of the Mroueh reproduction: λ selection paths and robustness."""
import numpy as np

from orbitkernels.experiments._mroueh_rls import rls_fit_predict


def _blobs(rng, n_per=60, d=5):
    y = np.repeat(np.arange(3), n_per)
    X = rng.normal(size=(len(y), d)) + 3.0 * np.eye(3, d)[y]
    return X, y


def test_holdout_survives_an_indefinite_gram_matrix(rng):
    """A Gram matrix from float32 features can be indefinite by rounding; the smallest λ must not abort the run."""
    X, y = _blobs(rng)
    Xt, yt = _blobs(np.random.default_rng(1))
    K = X @ X.T
    v = rng.normal(size=len(X))
    v /= np.linalg.norm(v)
    K_bad = K - 1e-3 * np.outer(v, v) * np.trace(K) / len(K)  # one clearly negative eigenvalue
    assert np.linalg.eigvalsh(K_bad).min() < 0
    out = rls_fit_predict(K_bad, y, Xt @ X.T, kernel=True, eig_limit=10)  # forces the hold-out path
    assert out["selection"] == "holdout"
    assert np.mean(out["pred"] == yt) > 0.9


def test_primal_dual_and_kernel_forms_agree(rng):
    X, y = _blobs(rng)
    Xt, _ = _blobs(np.random.default_rng(2))
    a = rls_fit_predict(X, y, Xt)  # primal (D < N), exact leave-one-out
    b = rls_fit_predict(X @ X.T, y, Xt @ X.T, kernel=True)  # dual on the linear Gram matrix
    assert a["selection"] == b["selection"] == "loo"
    assert a["rel_lambda"] == b["rel_lambda"]
    np.testing.assert_array_equal(a["pred"], b["pred"])
