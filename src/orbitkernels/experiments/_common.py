"""Helpers shared by the reproductions: regularised least squares over a λ grid, headline tables.

RLS (GURLS-style, as used by Mroueh et al. 2015 and Raj et al. 2017 §4) is solved
for a whole λ grid from one eigendecomposition, either of the feature covariance
(primal, D x D) or of the Gram matrix (dual, n x n), whichever is smaller.
"""
from __future__ import annotations

import numpy as np

__all__ = ["PAPER_SAMPLING", "RidgePath", "kernel_ridge_path", "kfold_indices", "headline_table"]

#: How the reproductions draw group elements: i.i.d. from q, as the three papers do (and as every
#: recorded result in results/ was made). The library's default is the low-variance "qmc" scheme;
#: its effect on these rows is measured separately (benchmarks/sampling_study.py).
PAPER_SAMPLING = "iid"


class RidgePath:
    """Ridge regression ``min ||Φw + b - Y||² + λ n ||w||²`` for every λ of a grid.

    One eigendecomposition of the centred ``ΦᵀΦ`` (or ``ΦΦᵀ`` when n < D) serves all
    λ; ``predict(Φ_new)`` returns an array (n_lambdas, n_new, n_targets).
    ``Y`` may be 1-D (regression) or one-hot / ±1 coded (classification).
    """

    def __init__(self, lambdas):
        self.lambdas = np.asarray(lambdas, dtype=float)

    def fit(self, F, Y):
        F = np.asarray(F, dtype=np.float64)
        Y = np.asarray(Y, dtype=np.float64)
        Y = Y[:, None] if Y.ndim == 1 else Y
        n, d = F.shape
        self.f_mean_, self.y_mean_ = F.mean(0), Y.mean(0)
        Fc, Yc = F - self.f_mean_, Y - self.y_mean_
        if d <= n:
            evals, V = np.linalg.eigh(Fc.T @ Fc)
            proj = V.T @ (Fc.T @ Yc)  # (d, t)
            self.coef_ = np.stack([V @ (proj / (evals + lam * n)[:, None]) for lam in self.lambdas])
        else:
            evals, U = np.linalg.eigh(Fc @ Fc.T)
            proj = U.T @ Yc
            self.coef_ = np.stack([Fc.T @ (U @ (proj / (evals + lam * n)[:, None])) for lam in self.lambdas])
        return self

    def predict(self, F):
        F = np.asarray(F, dtype=np.float64) - self.f_mean_
        return np.einsum("nd,ldt->lnt", F, self.coef_) + self.y_mean_


def kernel_ridge_path(K_train, y, K_test_train, lambdas):
    """Exact kernel ridge (GP posterior mean) predictions for every λ: (n_lambdas, n_test).

    ``(K + λ n I)⁻¹`` from one eigendecomposition of the training Gram matrix; the
    target mean is removed and added back (a constant-mean GP).
    """
    y = np.asarray(y, dtype=np.float64)
    mu = y.mean()
    n = len(y)
    evals, U = np.linalg.eigh(K_train)
    proj = U.T @ (y - mu)
    KtU = K_test_train @ U
    return np.stack([KtU @ (proj / (evals + lam * n)) + mu for lam in np.asarray(lambdas, float)])


def kfold_indices(n, k, seed):
    """``k`` (train, validation) index pairs of a shuffled k-fold split of ``range(n)``."""
    perm = np.random.RandomState(seed).permutation(n)
    parts = np.array_split(perm, k)
    return [(np.sort(np.concatenate(parts[:i] + parts[i + 1:])), np.sort(parts[i])) for i in range(k)]


def _fmt(v, spec):
    if v is None:
        return "—"
    if isinstance(v, (int, float, np.floating)):
        return f"{v:{spec}}"
    return str(v)


def headline_table(headline, digits=2, row_format=None):
    """Markdown table of ``headline`` cells: name, ours, paper, better, and whether ours meets the paper.

    Values are shown with ``digits`` decimals, or with the format spec that
    ``row_format(cell)`` returns for that row (None: the default).
    """
    lines = ["| cell | ours | paper | better | meets paper? |", "| --- | --- | --- | --- | --- |"]
    for h in headline:
        spec = (row_format(h) if row_format is not None else None) or f".{digits}f"
        ours, paper = h.get("ours"), h.get("paper")
        if ours is None or paper is None:
            meets = "—"
        else:
            meets = "yes" if (ours >= paper if h.get("better") == "higher" else ours <= paper) else "no"
        lines.append(f"| {h['name']} | {_fmt(ours, spec)} | {_fmt(paper, spec)} | {h.get('better', '')} | {meets} |")
    return "\n".join(lines)
