"""Model selection helpers of the Raj et al. 2017 reproduction (§4): RLS on features, inner CV, 2nd RF layer.

Raj et al. 2017, §4: every feature map is followed by (i) a linear RLS / ridge
model and (ii) a Gaussian kernel on top of the features approximated by random
Fourier features (the "2nd layer RF", here scikit-learn's ``RBFSampler``), then RLS.
Hyper-parameters (the base kernel's γ, the 2nd layer's γ₂ and λ) are chosen on
the training data only: inner k-fold CV for QM7, the validation split for
Rotated MNIST.
"""
from __future__ import annotations

import numpy as np
from sklearn.kernel_approximation import RBFSampler

from ._common import RidgePath, kfold_indices

__all__ = ["median_sq_dist", "inner_cv_select", "regression_scores", "second_layer", "one_hot",
           "holdout_select"]


def median_sq_dist(X, n=1000, seed=0):
    """Median squared Euclidean distance between ``n`` random rows (the scale of the Gaussian kernel's γ)."""
    rng = np.random.RandomState(seed)
    idx = rng.choice(len(X), min(n, len(X)), replace=False)
    A = np.asarray(X[idx], dtype=np.float64)
    sq = (A * A).sum(1)
    D = sq[:, None] + sq[None, :] - 2 * A @ A.T
    return float(np.median(D[np.triu_indices(len(A), 1)]))


def regression_scores(pred, y):
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


def second_layer(F, train, n_components, factor, seed):
    """Gaussian-kernel random Fourier features on top of ``F`` (Raj §4, "2nd layer RF").

    γ₂ = factor / (median squared distance between training rows of F).
    """
    gamma = factor / max(median_sq_dist(F[train], seed=seed), 1e-300)
    rbf = RBFSampler(gamma=gamma, n_components=n_components, random_state=seed)
    return rbf.fit(F[train]).transform(F).astype(np.float32)


def one_hot(y, n_classes):
    """±1 one-vs-all coding of integer labels (RLS classification)."""
    Y = -np.ones((len(y), n_classes))
    Y[np.arange(len(y)), np.asarray(y, int)] = 1.0
    return Y
