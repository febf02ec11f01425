"""Model selection helpers of the Raj et al. 2017 reproduction (§4): RLS on features, inner CV, 2nd RF layer.

Raj et al. 2017, §4: every feature map is followed by (i) a linear RLS / ridge
model and (ii) a Gaussian kernel on top of the features approximated by random
Fourier features (the "2nd layer RF", here scikit-learn's ``RBFSampler``), then RLS.
Hyper-parameters (the base kernel's γ, the 2nd layer's γ₂ and λ) are chosen on
the training data only: for QM7 by inner k-fold CV (:func:`inner_cv_select`) or exact
leave-one-out (:func:`loo_select`, the configurations with ``inner_k="loo"``) on the
training folds, for the image tables on the validation split (:func:`holdout_select`).
:class:`WideLayer2` is the 2nd layer at the paper's width, used through Gram matrices.
"""
from __future__ import annotations

import numpy as np
from sklearn.kernel_approximation import RBFSampler

from ..models.ridge import RidgePath as RidgePathSolver
from ..features._frequencies import orthogonal_gaussian
from ._common import RidgePath, kfold_indices

__all__ = ["median_sq_dist", "inner_cv_select", "regression_scores", "second_layer", "one_hot",
           "holdout_select", "sq_dists", "layer2_scale", "WideLayer2", "unit_norm_rows"]


def median_sq_dist(X, n=1000, seed=0):
    """Median squared Euclidean distance between ``n`` random rows (the scale of the Gaussian kernel's γ)."""
    rng = np.random.RandomState(seed)
    idx = rng.choice(len(X), min(n, len(X)), replace=False)
    A = np.asarray(X[idx], dtype=np.float64)
    sq = (A * A).sum(1)
    D = sq[:, None] + sq[None, :] - 2 * A @ A.T
    return float(np.median(D[np.triu_indices(len(A), 1)]))


def unit_norm_rows(X):
    """Each row divided by its Euclidean norm (float32): Table 2's rows with ``scaling="unit_norm"``. The image
    actions are unitary (Raj Lemma 2.1), so the scaling commutes with the group. A row of zeros is refused."""
    norms = np.linalg.norm(np.asarray(X, dtype=np.float64), axis=1, keepdims=True)
    if not np.all(norms > 0):
        bad = np.flatnonzero(~(norms[:, 0] > 0))
        raise ValueError(f"cannot scale to unit norm: {len(bad)} row(s) with norm 0 or NaN (first: row {bad[0]})")
    return (X / norms).astype(np.float32)


def sq_dists(F, rows, cols, dtype=np.float64, block=4096):
    """Squared distances ||F_i - F_j||² (i in ``rows``, j in ``cols``) stored as ``dtype``, for the Gaussian
    hyperkernel on features (Raj §2 Remark 3). The products are float64, a block of rows at a time: the distances
    are small against the norms, and a float64 copy of every row at once would not fit beside F at Rotated MNIST's
    size."""
    rows, cols = np.asarray(rows), np.asarray(cols)
    B = np.asarray(F[cols], np.float64)
    nb = (B * B).sum(1)
    D = np.empty((len(rows), len(cols)), dtype)
    for a in range(0, len(rows), block):
        A = np.asarray(F[rows[a:a + block]], np.float64)
        d = (A * A).sum(1)[:, None] + nb[None, :] - 2.0 * (A @ B.T)
        D[a:a + block] = np.maximum(d, 0.0, out=d)
    return D


def regression_scores(pred, y):
    """``{"rmse": ..., "mae": ...}`` of the predictions ``pred`` against ``y`` (plain floats)."""
    err = np.asarray(pred, float).ravel() - np.asarray(y, float).ravel()
    return {"rmse": float(np.sqrt(np.mean(err ** 2))), "mae": float(np.mean(np.abs(err)))}


def inner_cv_select(candidates, y, train, lambdas, k=3, seed=0):
    """Pick (candidate, λ) minimising the inner k-fold CV MSE of ridge on ``train`` rows only.

    ``candidates`` maps a hashable key to a feature matrix (rows indexed like ``y``)
    or to a zero-argument function returning it. Returns ``(key, lam, cv_table)``
    where ``cv_table[key]`` is the CV RMSE per λ.
    """
    table = {}
    splits = kfold_indices(len(train), k, seed)
    for key, F in candidates.items():
        F = F() if callable(F) else F
        sse = np.zeros(len(lambdas))
        for a, b in splits:
            path = RidgePath(lambdas).fit(F[train[a]], y[train[a]])
            sse += ((path.predict(F[train[b]])[:, :, 0] - y[train[b]][None]) ** 2).sum(1)
        table[key] = np.sqrt(sse / len(train))
    best = min(table, key=lambda c: table[c].min())
    return best, float(lambdas[int(np.argmin(table[best]))]), {str(c): v.tolist() for c, v in table.items()}


def holdout_select(candidates, y, train, valid, lambdas, score):
    """Pick (candidate, λ) maximising ``score(pred, y_valid)`` of RLS fit on ``train``; returns key, λ, table."""
    table = {}
    for key, F in candidates.items():
        F = F() if callable(F) else F
        path = RidgePath(lambdas).fit(F[train], y[train])
        table[key] = np.array([score(p, y[valid]) for p in path.predict(F[valid])])
    best = max(table, key=lambda c: table[c].max())
    return best, float(lambdas[int(np.argmax(table[best]))]), {str(c): v.tolist() for c, v in table.items()}


def layer2_scale(F, train, seed):
    """The scale of the 2nd layer's γ₂ = factor / scale: the median squared distance between training rows of the
    first layer's features (never zero), shared by the RF layer and the exact hyperkernel so their factors compare."""
    return max(median_sq_dist(F[train], seed=seed), 1e-300)


def second_layer(F, train, n_components, factor, seed):
    """Gaussian-kernel random Fourier features on top of ``F`` (Raj §4, "2nd layer RF").

    γ₂ = factor / (median squared distance between training rows of F).
    """
    gamma = factor / layer2_scale(F, train, seed)
    rbf = RBFSampler(gamma=gamma, n_components=n_components, random_state=seed)
    return rbf.fit(F[train]).transform(F).astype(np.float32)


class WideLayer2:
    """The "2nd layer RF" of Raj §4 at the paper's width, with every γ₂ of a grid, without its feature matrix.

    φ(x) = [cos(ωᵀψ(x)), sin(ωᵀψ(x))] / √m for m Gaussian frequencies ω = √(2γ₂) z, z ~ N(0, I): the first
    layer's convention (the paper's "templates" are frequencies, each with a cos and a sin), so the paper's 17k
    templates are 34,000 features. φ(x)ᵀφ(x') = (1/m) Σ_j cos(ω_jᵀ(ψ(x) − ψ(x'))), a Monte Carlo estimate of the
    Gaussian hyperkernel exp(−γ₂ ||ψ(x) − ψ(x')||²). At that width the features of Rotated MNIST's 62k rows (8.4
    GB in float32) do not fit beside the first layer, so the layer is used through Gram matrices of the fitting
    rows (dual ridge on :func:`~orbitkernels.models.ridge.centre_gram`'s centring) and, for new rows, through the primal weights W = Φcᵀ c, both accumulated over blocks of
    ``block`` frequencies; the projections z ᵀψ of a block serve every γ₂ of the grid (one GEMM, then a
    scale per γ₂).

    Parameters: ``F`` (n, d) first-layer features; ``n_freq`` m; ``seed`` of z (drawn once, float32);
    ``frequencies``: "gaussian" (i.i.d. z, Rahimi & Recht's random Fourier features, the paper's) or "orthogonal"
    (:func:`orthogonal_gaussian`: the same marginal law, orthogonal within each block of d, a lower-variance estimate
    of the same hyperkernel).
    """

    def __init__(self, F, n_freq, seed, block=1024, frequencies="gaussian"):
        self.F, self.m, self.block = F, int(n_freq), int(block)
        rng = np.random.default_rng(seed)
        if frequencies == "gaussian":
            self.Z = rng.standard_normal((F.shape[1], self.m), dtype=np.float32)
        elif frequencies == "orthogonal":
            self.Z = orthogonal_gaussian(F.shape[1], self.m, rng).astype(np.float32)
        else:
            raise ValueError(f"frequencies={frequencies!r}: expected 'gaussian' or 'orthogonal'")

    def _blocks(self, rows):
        """Projections zᵀψ of ``rows`` (len(rows), b) for each block of frequencies (float32)."""
        Fr = np.asarray(self.F[rows], dtype=np.float32)
        for a in range(0, self.m, self.block):
            yield Fr @ self.Z[:, a:a + self.block]

    def _phi(self, P0, gamma):
        """The features [cos, sin] / √m of a block (float32, the first layer's precision) at γ₂."""
        P = P0 * np.float32(np.sqrt(2.0 * gamma))
        return np.concatenate([np.cos(P), np.sin(P)], axis=1) * np.float32(1.0 / np.sqrt(self.m))

    def grams(self, rows, gammas):
        """{γ₂: K (len(rows), len(rows)) float64}: φ(x_i)ᵀφ(x_j) over ``rows``, every γ₂ from one projection pass."""
        K = {g: np.zeros((len(rows), len(rows))) for g in gammas}
        for P0 in self._blocks(rows):
            for g in gammas:
                # float64 products (BLAS syrk): a float32 Gram matrix carries rounding noise ~1e-7 of its norm,
                # above the smallest penalties of the λ grid, where the dual ridge would fit that noise
                Phi = self._phi(P0, g).astype(np.float64)
                K[g] += Phi @ Phi.T
        return K

    def cross_gram(self, rows, cols, gamma, step=4096):
        """Blocks ``(a, K)`` of the kernel values φ(x_i)ᵀφ(x_j) at γ₂ between ``rows`` and ``cols`` (float32),
        K the rows ``rows[a:a + step]``: for a kernel machine that reads only some columns (an SVM's support
        vectors), without the whole matrix. The features of ``cols`` are computed once and held (2m float32 per
        column)."""
        rows = np.asarray(rows)
        phi_cols = [self._phi(P0, gamma) for P0 in self._blocks(cols)]
        for a in range(0, len(rows), step):
            yield a, sum(self._phi(P0, gamma) @ Pc.T for P0, Pc in zip(self._blocks(rows[a:a + step]), phi_cols))

    def predict(self, fit_rows, gamma, dual_coef, y_mean, rows, step=4096):
        """Predictions Φc W + ȳ at ``rows`` of the ridge whose dual coefficients (on the centred Gram matrix of
        ``fit_rows``, :func:`~orbitkernels.models.ridge.centre_gram`) are ``dual_coef`` (n_fit, k): W = Φcᵀ c,
        one block of W per block of frequencies."""
        c = np.asarray(dual_coef, dtype=np.float64)
        W, shift = [], y_mean
        # the fit rows' projections again (one GEMM pass, ~1/5 of the test rows' at Rotated MNIST's sizes): keeping
        # their features from grams() would hold n_fit x 2m float64 per γ₂ (2.7 GB at 10k rows x 17k frequencies)
        for P0 in self._blocks(fit_rows):
            Phi = self._phi(P0, gamma).astype(np.float64)
            mean = Phi.mean(0)
            W.append(Phi.T @ c - mean[:, None] * c.sum(0)[None, :])
            shift = shift - mean @ W[-1]
        rows = np.asarray(rows)
        out = np.empty((len(rows), c.shape[1]))
        for a in range(0, len(rows), step):
            out[a:a + step] = sum(self._phi(P0, gamma).astype(np.float64) @ Wb
                                  for P0, Wb in zip(self._blocks(rows[a:a + step]), W)) + shift
        return out


def one_hot(y, n_classes):
    """±1 one-vs-all coding of integer labels (RLS classification)."""
    Y = -np.ones((len(y), n_classes))
    Y[np.arange(len(y)), np.asarray(y, int)] = 1.0
    return Y


class LooRidge:
    """Ridge ``min ||Φw + b - y||² + λ n ||w||²`` with exact leave-one-out errors for a whole λ grid.

    The exact LOO residuals (y_i - ŷ_i) / (1 - H_ii) of :meth:`orbitkernels.models.ridge.RidgePath.loo_residuals`
    (one eigendecomposition for every λ; here α = λ n); the same decomposition then serves the final
    fit at the chosen λ, so selecting λ by LOO on the training rows costs one fit instead of k + 1.
    Regression only (1-D y). ``fit_intercept=False``: no b, so that the model's constant is 0 where the
    intercept would make it the training mean.
    """

    def __init__(self, lambdas, fit_intercept=True):
        self.lambdas = np.asarray(lambdas, dtype=float)
        self.fit_intercept = fit_intercept

    def fit(self, F, y):
        """Fit every λ on ``F`` (n, D) and ``y`` (n,); sets ``loo_rmse_`` (per λ) and ``best_`` (its argmin)."""
        n = len(F)
        self.path_ = RidgePathSolver(self.lambdas * n, fit_intercept=self.fit_intercept).fit(
            F, np.asarray(y, dtype=np.float64).ravel())
        self.loo_rmse_ = np.array([np.sqrt(np.mean(self.path_.loo_residuals(i) ** 2))
                                   for i in range(len(self.lambdas))])
        self.best_ = int(np.argmin(self.loo_rmse_))
        return self

    def predict(self, F, index=None):
        """Predictions at λ = lambdas[index] (default: the LOO-best λ)."""
        return self.path_.predict(F, self.best_ if index is None else int(index))[:, 0]


def loo_select(candidates, y, train, lambdas, fit_intercept=True):
    """Pick (candidate, λ) minimising the exact leave-one-out RMSE of ridge on the ``train`` rows only.

    Returns ``(key, lam, table, model)``: ``table[key]`` is the LOO RMSE per λ, ``model`` the fitted
    :class:`LooRidge` of the best candidate (predict with it at the chosen λ).
    """
    table, models = {}, {}
    best = None
    for key, F in candidates.items():
        F = F() if callable(F) else F
        m = LooRidge(lambdas, fit_intercept=fit_intercept).fit(F[train], y[train])
        table[key] = m.loo_rmse_
        if best is None or m.loo_rmse_.min() < table[best].min():
            if best is not None:
                models.pop(best, None)
            best = key
            models[key] = m
        del m
    model = models[best]
    return best, float(model.lambdas[model.best_]), {str(c): v.tolist() for c, v in table.items()}, model
