"""Regularised least squares with a selected λ, and 1-NN, for the Mroueh et al. 2015 reproduction.

Mroueh, Voinea & Poggio (2015, §6) train every linear model with RLS,

    min_W  (1/N) ||Y - Φ(X) W||_F^2 + λ ||W||_F^2,

one-vs-all ±1 codes for T classes, through the GURLS toolbox, which selects λ on
held-out data. Here an unpenalised intercept is added (features centred on the
training mean) and λ is selected as follows:

* ``min(N, D) <= eig_limit``: the ridge-path solver :class:`orbitkernels.models.ridge.RidgePath`
  (scikit-learn's α convention; here α = N λ): one eigendecomposition of the centred ``ΦᵀΦ``
  (primal, D <= N) or Gram matrix (dual, N < D) gives the fit for the whole λ
  grid *and* the exact leave-one-out residuals ``(y_i - ŷ_i) / (1 - H_ii)``;
  λ maximises the LOO accuracy (ties: smallest LOO squared error).
* larger problems: GURLS-style hold-out (80/20 split) on a coarser grid, the same solver fitted on
  the 80% (one eigendecomposition for the grid), then a refit on all training points with the chosen λ.

:func:`gurls_loo_rls` follows GURLS's own defaults instead (no intercept, a λ grid over the Gram matrix's
spectrum, one λ per class by leave-one-out recall), for the probes that ask what that selection changes.

Gram matrices (e.g. an exact Haar-integration kernel) are accepted with
``kernel=True`` and centred in feature space. LAPACK calls run on one thread:
on the 2-core machines of this project OpenBLAS' threaded ``syevd``/``potrf`` are
several times slower than single-threaded ones (measured: eigh of 2000 × 2000
in 14 s on two threads against 4 s on one).

The λ grid is relative: ``α = N λ = rel · tr(Φ_cᵀΦ_c) / N`` with ``rel`` on a log grid,
so it does not depend on the scale of the features.
"""
from __future__ import annotations

import numpy as np

from ..models.ridge import RidgePath, centre_gram

__all__ = ["rls_fit_predict", "rls_holdout_gram_torch", "gurls_loo_rls", "one_nn_accuracy", "LOO_GRID",
           "HOLDOUT_GRID"]

#: relative regularisation values tried with leave-one-out selection
LOO_GRID = np.logspace(-8, 2, 31)
#: coarser grid for the hold-out selection
HOLDOUT_GRID = np.logspace(-7, 1, 9)


def _codes(y, classes):
    """One-vs-all ±1 codes (N, T); a single column for two classes."""
    y = np.asarray(y)
    if len(classes) == 2:
        return np.where(y == classes[1], 1.0, -1.0)[:, None]
    return np.where(y[:, None] == np.asarray(classes)[None, :], 1.0, -1.0)


def _decode(scores, classes):
    classes = np.asarray(classes)
    if scores.shape[-1] == 1:
        return np.where(scores[..., 0] > 0, classes[1], classes[0])
    return classes[np.argmax(scores, axis=-1)]


def _best(scores):
    """Index and accuracy of the best ``(accuracy, squared error)`` pair: highest accuracy, then smallest
    error, the first on a tie (GURLS' selection rule)."""
    i = min(range(len(scores)), key=lambda j: (-scores[j][0], scores[j][1]))
    return i, scores[i][0]


def _scores(pred, Y, y_true, classes):
    """Accuracy of the decoded ``pred`` and its mean squared error to the codes ``Y``."""
    return float(np.mean(_decode(pred, classes) == y_true)), float(np.mean((pred - Y) ** 2))


def _loo_select(path, Y, y_train, classes):
    """Best index of ``path.alphas`` by exact LOO accuracy, then LOO squared error."""
    return _best([_scores(Y - path.loo_residuals(i), Y, y_train, classes) for i in range(len(path.alphas))])


class _HoldoutFit:
    """:class:`RidgePath` on the rows ``idx`` (features ``F``, or the feature-space-centred Gram matrix ``K``).

    ``predict_rows`` takes feature rows, or Gram rows against ``idx`` which it centres like the fitting
    Gram matrix (:func:`~orbitkernels.models.ridge.centre_gram`), and returns (n_alphas, m, T).
    """

    def __init__(self, alphas, Y, idx, *, F=None, K=None):
        self.path = RidgePath(np.asarray(alphas, float))
        if K is None:
            self.path.fit(F[idx], Y[idx])
            self.col = None
        else:
            Kfit = K[np.ix_(idx, idx)]
            self.col = Kfit.mean(axis=0)
            self.path.fit_gram(centre_gram(Kfit)[0], Y[idx], centred=True)

    def predict_rows(self, rows):
        if self.col is None:
            return self.path.predict(rows)
        rows = rows - self.col[None, :] - rows.mean(axis=1, keepdims=True) + self.col.mean()
        return self.path.predict_gram(rows)


def _holdout_split(n, fraction, seed):
    """(validation rows, fitting rows) of the GURLS-style hold-out, each sorted."""
    perm = np.random.default_rng(seed).permutation(n)
    n_val = max(1, int(round(fraction * n)))
    return np.sort(perm[:n_val]), np.sort(perm[n_val:])


def rls_fit_predict(F_train, y_train, F_test, *, classes=None, kernel=False, eig_limit=3000, rels=None,
                    holdout_rels=None, holdout_fraction=0.2, seed=0):
    """Train RLS with a selected λ and predict ``F_test``.

    Parameters
    ----------
    F_train : array-like of shape (N, D), or (N, N) with ``kernel=True``
        Training features, or their Gram matrix (centred in feature space here).
    y_train : array-like of shape (N,)
        Labels.
    F_test : array-like of shape (M, D), or (M, N) with ``kernel=True``
        Test features, or the test-train Gram matrix.
    classes : sequence, default=None
        The labels in a fixed order (None: the sorted unique values of ``y_train``); two classes give one ±1
        column, more one-vs-all columns.
    kernel : bool, default=False
        Whether ``F_train`` and ``F_test`` are Gram matrices.
    eig_limit : int, default=3000
        Leave-one-out selection on ``rels`` when min(N, D) (N for a Gram matrix) is at most this; else the
        80/20 hold-out on ``holdout_rels``.
    rels : array-like, default=None
        Relative λ grid of the leave-one-out selection (None: :data:`LOO_GRID`).
    holdout_rels : array-like, default=None
        Relative λ grid of the hold-out selection (None: :data:`HOLDOUT_GRID`).
    holdout_fraction : float, default=0.2
        Share of the training rows held out.
    seed : int, default=0
        Seed of the hold-out split (unused by the leave-one-out selection).

    Returns
    -------
    dict
        ``pred`` (M,) labels, ``rel_lambda`` (chosen relative value),
        ``lambda`` (the paper's λ of (1/N)||Y-ΦW||² + λ||W||²), ``selection``
        ("loo" or "holdout"), ``val_accuracy`` (LOO or hold-out accuracy at the choice)
        and ``solver`` ("primal" or "dual").
    """
    y_train = np.asarray(y_train)
    classes = np.unique(y_train) if classes is None else np.asarray(classes)
    Y = _codes(y_train, classes)
    n = len(Y)
    if kernel:
        K = np.asarray(F_train, dtype=np.float64)
        Kc, Ktc = centre_gram(K, np.asarray(F_test, dtype=np.float64))
        primal, D = False, n
        scale = np.trace(Kc) / n
    else:
        F = np.asarray(F_train, dtype=np.float64)
        mu = F.mean(axis=0)
        Fc = F - mu
        D = F.shape[1]
        primal = D <= n
        scale = float(np.einsum("ij,ij->", Fc, Fc)) / n
        del Fc
    scale = scale if scale > 0 else 1.0
    size = D if primal else n
    out = {"solver": "primal" if primal else "dual"}

    if size <= eig_limit:
        rels = LOO_GRID if rels is None else np.asarray(rels, float)
        alphas = rels * scale
        # the one ridge-path solver (α convention: alphas = N λ, see the module docstring); it clips the
        # eigenvalues of an indefinite Gram matrix at 0 and gives the exact LOO residuals for every α
        path = RidgePath(alphas)
        # centred=True: Kc's constant null direction is exact, not a rounding eigenvalue that the smallest α
        # would turn into a second intercept in the leave-one-out hat matrix
        path = path.fit_gram(Kc, Y, centred=True) if kernel else path.fit(F, Y)
        i, val = _loo_select(path, Y, y_train, classes)
        scores = path.predict_gram(Ktc, i) if kernel else path.predict(F_test, i)
        out.update(selection="loo", rel_lambda=float(rels[i]), val_accuracy=val)
    else:
        rels = HOLDOUT_GRID if holdout_rels is None else np.asarray(holdout_rels, float)
        va, tr = _holdout_split(n, holdout_fraction, seed)
        # the ridge-path solver again, in its α convention: α = N_fit λ with λ = rel · scale / N, so the
        # hold-out fit on N_fit = len(tr) rows uses α = rel · scale · len(tr) / N; one eigendecomposition of
        # the fitting rows serves the whole grid (it clips an indefinite Gram matrix's eigenvalues at 0)
        fit_tr = _HoldoutFit(rels * scale * len(tr) / n, Y, tr, F=None if kernel else F, K=Kc if kernel else None)
        pred_va = fit_tr.predict_rows(F[va] if not kernel else Kc[np.ix_(va, tr)])
        i, val = _best([_scores(p, Y[va], y_train[va], classes) for p in pred_va])
        del fit_tr, pred_va
        fit_all = _HoldoutFit([rels[i] * scale], Y, np.arange(n), F=None if kernel else F, K=Kc if kernel else None)
        scores = fit_all.predict_rows(F_test if not kernel else Ktc)[0]
        out.update(selection="holdout", rel_lambda=float(rels[i]), val_accuracy=val)
    out["lambda"] = float(out["rel_lambda"] * scale / n)
    out["pred"] = _decode(scores, classes)
    return out


def rls_holdout_gram_torch(K_train, y_train, K_test, *, classes=None, holdout_rels=None, holdout_fraction=0.2,
                           seed=0, device=None):
    """:func:`rls_fit_predict` with ``kernel=True`` on its hold-out branch, on a torch device (a GPU).

    The same model and selection: the Gram matrix centred in feature space (an intercept), the relative λ grid
    (``HOLDOUT_GRID``) scaled by ``tr(K_c) / N``, the same 80/20 split of ``seed``, λ by hold-out accuracy (then
    the smallest squared error, then the first), a refit on every training row. Where :class:`RidgePath`
    diagonalises each fitting Gram matrix once for the whole grid, this factorises ``K_c + α I`` once per α
    (Cholesky, float64): the same ridge solution for every α > 0 where ``K_c`` is positive semi-definite, and on a
    GPU a 10,000-row selection in about a second where the eigendecompositions take many. Where rounding leaves
    ``K_c`` indefinite, RidgePath clips the negative eigenvalues at 0 and this does not, unless the factorisation
    fails (then that α takes RidgePath's eigendecomposition); on Mroueh et al.'s MNIST rows the two select and
    predict the same (``benchmarks/probes/mroueh2015/gram_precision.py``). ``K_train`` (N, N) and ``K_test``
    (M, N) may be NumPy arrays or torch tensors; returns the dict of :func:`rls_fit_predict`
    (``selection="holdout"``) and ``eigh_alphas``, the α that took the eigendecomposition.
    """
    import torch

    y_train = np.asarray(y_train)
    classes = np.unique(y_train) if classes is None else np.asarray(classes)
    dev = torch.device(device) if device is not None else (
        K_train.device if isinstance(K_train, torch.Tensor) else torch.device("cpu"))
    K = torch.as_tensor(K_train, device=dev).to(torch.float64)
    Kt = torch.as_tensor(K_test, device=dev).to(torch.float64)
    Y = torch.as_tensor(_codes(y_train, classes), dtype=torch.float64, device=dev)
    n = len(Y)

    def centred(Kfit, rows):
        """:func:`~orbitkernels.models.ridge.centre_gram` of the fitting block and of its new rows."""
        col = Kfit.mean(dim=0)
        tot = col.mean()
        return (Kfit - col[None, :] - col[:, None] + tot,
                rows - col[None, :] - rows.mean(dim=1, keepdim=True) + tot)

    fallbacks = []

    def ridge(Kfit, Yfit, rows, alphas):
        """Predictions (m, T) of the rows for each α of an intercept ridge on the fitting block (as _HoldoutFit).
        Where ``K_c + α I`` is not numerically positive definite (a Gram matrix of lower rank than its rows, at a
        small α), that α takes RidgePath's own solution: the eigendecomposition with its eigenvalues clipped at 0,
        the constant direction's set to 0, and those within rounding of 0 left out."""
        Kfit, rows = centred(Kfit, rows)
        y_mean = Yfit.mean(dim=0)
        Yc = Yfit - y_mean
        out, eig = [], None
        for a in alphas:
            A = Kfit.clone()
            A.diagonal().add_(a)
            L, info = torch.linalg.cholesky_ex(A)
            del A
            if not int(info):
                c = torch.cholesky_solve(Yc, L)
            else:
                if eig is None:
                    evals, U = torch.linalg.eigh(Kfit)
                    evals = evals.clamp(min=0.0)
                    evals[int(torch.argmax(U.sum(dim=0).abs()))] = 0.0  # models.ridge._zero_constant
                    tol = float(evals.max()) * len(evals) * np.finfo(np.float64).eps
                    eig = (evals, U, U.T @ Yc, tol)
                evals, U, proj, tol = eig
                d = evals + a
                c = U @ (proj * torch.where(d > tol, 1.0 / torch.where(d > tol, d, 1.0), 0.0)[:, None])
                fallbacks.append(float(a))
            out.append((rows @ c + y_mean).cpu().numpy())
        return out

    Kc, Ktc = centred(K, Kt)
    scale = float(torch.trace(Kc)) / n
    scale = scale if scale > 0 else 1.0
    rels = HOLDOUT_GRID if holdout_rels is None else np.asarray(holdout_rels, float)
    va, tr = _holdout_split(n, holdout_fraction, seed)
    tr_t, va_t = torch.as_tensor(tr, device=dev), torch.as_tensor(va, device=dev)
    pred_va = ridge(Kc[tr_t][:, tr_t], Y[tr_t], Kc[va_t][:, tr_t], rels * scale * len(tr) / n)
    Yva = Y[va_t].cpu().numpy()
    i, val = _best([_scores(p, Yva, y_train[va], classes) for p in pred_va])
    scores, = ridge(Kc, Y, Ktc, [rels[i] * scale])
    return {"solver": "dual", "selection": "holdout", "rel_lambda": float(rels[i]), "val_accuracy": val,
            "lambda": float(rels[i] * scale / n), "pred": _decode(scores, classes), "eigh_alphas": fallbacks}


def _per_class_recall(pred, y_true, classes):
    """(T,) fraction of each class's rows whose decoded prediction is that class (GURLS's ``perf_macroavg``); for
    two classes (one ±1 column) the accuracy."""
    lab = _decode(pred, classes)
    if pred.shape[-1] == 1:
        return np.array([np.mean(lab == y_true)])
    return np.array([np.mean(lab[y_true == c] == c) if np.any(y_true == c) else 0.0 for c in classes])


def gurls_loo_rls(K_train, y_train, K_test, *, classes=None, n_lambda=20):
    """RLS on a Gram matrix with GURLS's default parameter selection, one λ per class.

    What GURLS (Tacchetti et al. 2013), the toolbox of Mroueh et al. (2015, §6), does by default for a kernel
    (``paramsel_loocvdual``, ``rls_dual``, ``perf_macroavg``, ``n_lambda = 20``), unlike :func:`rls_fit_predict`:

    * no intercept: the Gram matrix is used as it is, and ``(K + Nλ I) c_t = y_t`` for each class column t;
    * the λ grid comes from K's spectrum: its eigenvalues above ``200 sqrt(eps)``, from the smallest to the
      largest, divided by N, on a geometric grid of ``n_lambda`` steps above the smallest;
    * every λ is scored by exact leave-one-out, class by class: the recall of class t (the fraction of its rows
      whose one-vs-all argmax is t, with every column at that λ), and class t keeps the λ with its best recall
      (the smallest on a tie).

    Returns a dict with ``pred`` (M,) labels, ``lambdas`` (T,) the λ of each class in the paper's convention
    ((1/N)||Y - ΦW||² + λ||W||²), ``val_accuracy`` the leave-one-out accuracy of the per-class choice (each
    column's leave-one-out scores at its own λ), ``loo_recall`` (n_lambda, T), ``guesses`` (n_lambda,) and
    ``selection`` ("gurls-loo"); T is 1 for two classes (one ±1 column). A ``ValueError`` for a ``K_train`` that
    is not (N, N), a ``K_test`` without N columns, or a Gram matrix without an eigenvalue above the threshold.
    """
    y_train = np.asarray(y_train)
    classes = np.unique(y_train) if classes is None else np.asarray(classes)
    Y = _codes(y_train, classes)
    K = np.asarray(K_train, dtype=np.float64)
    n = len(K)
    if K.shape != (n, n) or len(Y) != n:
        raise ValueError(f"K_train must be ({len(Y)}, {len(Y)}) for {len(Y)} labels; got {K.shape}")
    K_test = np.asarray(K_test, dtype=np.float64)
    if K_test.ndim != 2 or K_test.shape[1] != n:
        raise ValueError(f"K_test must have {n} columns (one per training row); got shape {K_test.shape}")
    path = RidgePath(np.ones(1), fit_intercept=False).fit_gram(K, Y)
    kept = path.evals_[path.evals_ > 200 * np.sqrt(np.finfo(np.float64).eps)]
    if kept.size == 0:
        raise ValueError("the Gram matrix has no eigenvalue above 200 sqrt(eps): nothing to learn from")
    lmin, lmax = kept.min() / n, kept.max() / n
    guesses = lmin * (lmax / lmin) ** (np.arange(1, n_lambda + 1) / n_lambda)
    path.alphas = guesses * n  # (K + α I) c = y with α = N λ, the ridge-path solver's convention
    loo = [Y - path.loo_residuals(i) for i in range(n_lambda)]
    recall = np.array([_per_class_recall(p, y_train, classes) for p in loo])  # (n_lambda, T)
    best = recall.argmax(axis=0)  # the first maximum: the smallest λ on a tie
    cols = np.arange(Y.shape[1])
    val = np.stack([loo[best[t]][:, t] for t in cols], axis=1)
    scores = np.stack([K_test @ path.dual_coef(best[t])[:, t] for t in cols], axis=1)
    return {"pred": _decode(scores, classes), "lambdas": guesses[best], "guesses": guesses, "loo_recall": recall,
            "val_accuracy": float(np.mean(_decode(val, classes) == y_train)), "selection": "gurls-loo"}


def one_nn_accuracy(F_train, y_train, F_test, y_test, chunk=4096):
    """Accuracy of the 1-nearest-neighbour rule (Euclidean) on ``F_test`` against ``y_test``, a float in [0, 1]
    (ties to the first training row; ``chunk`` test rows at a time)."""
    A = np.asarray(F_train, dtype=np.float64)
    a2 = np.einsum("ij,ij->i", A, A)
    y_train = np.asarray(y_train)
    correct = 0
    for s in range(0, len(F_test), chunk):
        B = np.asarray(F_test[s : s + chunk], dtype=np.float64)
        d = a2[None, :] - 2.0 * (B @ A.T)  # + ||b||², constant per row
        correct += int(np.sum(y_train[np.argmin(d, axis=1)] == np.asarray(y_test[s : s + chunk])))
    return correct / len(F_test)
