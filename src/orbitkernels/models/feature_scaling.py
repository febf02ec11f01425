"""Worst-case feature scaling (FSCALE) and deletion (FDROP), Teo et al. (2007).

The invariance class of Eq. (10) of Teo, Globerson, Roweis & Smola, *Convex
Learning with Invariances* (NIPS 2007) lets an adversary multiply at most ``K``
features of an input ``x`` by factors in ``[l, u]`` (with ``l <= 1 <= u``)::

    s(x) = { alpha * x : alpha in [l, u]^d, #{i : alpha_i != 1} <= K }

FDROP, the feature deletion of Globerson & Roweis (2006), is the special case
``l = 0, u = 1``. For a linear model ``w`` and a label ``y in {-1, +1}`` the
worst case ``argmin_{x' in s(x)} y <w, x'>`` is found by Algorithm 3 in
``O(d log d)``: with ``B_j = y w_j x_j``, scaling feature ``j`` by ``u`` lowers the
margin by ``(1 - u) B_j`` (useful when ``B_j < 0``) and scaling it by ``l`` lowers it
by ``(1 - l) B_j`` (useful when ``B_j > 0``); the ``K`` largest positive gains are
taken. Only non-zero features can change the margin, so sparse rows cost
``O(nnz log nnz)``.

:func:`fscale_worst_case` is the literal two-pointer Algorithm 3 on one vector;
:func:`worst_case_scaling` is the same optimum for a whole matrix at once
(vectorised, dense or CSR); :func:`worst_case_attack` applies it to a trained
classifier at test time; :class:`InvariantLinearClassifier` is the binary linear
classifier trained with the worst-case hinge loss (Eq. 2 with Eq. 10) by
Pegasos (Algorithm 2).
"""
from __future__ import annotations


import numpy as np
import scipy.sparse as sp
from numbers import Real

from sklearn.base import BaseEstimator, ClassifierMixin, _fit_context
from sklearn.utils._param_validation import StrOptions
from sklearn.utils.multiclass import check_classification_targets, type_of_target
from sklearn.utils.validation import check_is_fitted, validate_data

from ..utils.persistence import VersionedPickleMixin
from ..utils.validation import (
    RANDOM_STATE_CONSTRAINT,
    StrictInterval,
    check_int,
    check_labels_per_row,
    check_not_text,
    check_random_state,
    check_real,
    count_constraint,
    positive_real_constraint,
)

__all__ = [
    "check_scaling_params",
    "fscale_worst_case",
    "worst_case_scaling",
    "worst_case_attack",
    "InvariantLinearClassifier",
]


def check_scaling_params(K, l, u):
    """Validate ``K`` (int >= 0) and ``l <= 1 <= u`` (``l >= 0``); return them.

    Parameters
    ----------
    K : int >= 0
        Number of features the adversary may scale.
    l, u : float
        The scaling range of Eq. (10), ``0 <= l <= 1 <= u``, finite.

    Returns
    -------
    K, l, u : int, float, float

    Raises
    ------
    ValueError
        For a negative or non-integer K, a negative l, ``l > u`` or ``1`` outside ``[l, u]``.

    Examples
    --------
    >>> from orbitkernels.models import check_scaling_params
    >>> check_scaling_params(2, 0.5, 2)
    (2, 0.5, 2.0)
    >>> check_scaling_params(1, 1.5, 2.0)  # every feature scaled by at least 1.5: no "leave it alone"
    Traceback (most recent call last):
        ...
    ValueError: the scaling interval [l, u] must contain 1 (leaving a feature unchanged), Eq. 10; got l=1.5, u=2.0
    """
    K = check_int(K, "K", min_value=0)
    l = check_real(l, "l", low=0.0)
    u = check_real(u, "u")
    if l > u:
        raise ValueError(f"l must be <= u; got l={l}, u={u}")
    if not (l <= 1.0 <= u):
        raise ValueError(
            f"the scaling interval [l, u] must contain 1 (leaving a feature unchanged), "
            f"Eq. 10; got l={l}, u={u}"
        )
    return K, l, u


def _refuse_text_and_complex(a, name):
    """Refuse text and complex input (float64 conversion would parse "1.5" and drop imaginary parts in silence)."""
    data = a.data if sp.issparse(a) else a
    check_not_text(data, name)
    if np.iscomplexobj(data):
        raise TypeError(f"{name} is complex ({np.asarray(data).dtype}); Eq. 10 scales real features")
    return a


def _refuse_boolean_labels(y):
    """Refuse booleans as labels: True would pass as +1 (and False fail as 0), almost surely a mistaken argument."""
    # np.asarray([1, True]) is the numbers 1 and 1: a list is looked at item by item
    arr = np.asarray(y, dtype=object) if isinstance(y, (list, tuple)) else np.asarray(y)
    if arr.dtype == bool or (arr.dtype == object and any(isinstance(v, (bool, np.bool_)) for v in arr.flat)):
        raise TypeError(f"y must hold the numbers -1 and +1, not booleans; got {y!r:.80}")
    return y


def _check_pm1(y, n):
    """Labels ``y`` as n floats in {-1, +1}: a scalar applies to every row, anything else needs one per row."""
    y = np.asarray(_refuse_text_and_complex(_refuse_boolean_labels(y), "y"), dtype=np.float64)
    if y.ndim and y.shape != (n,):
        raise ValueError(f"y must be a scalar or 1-D with one label per row of X ({n}); got shape {y.shape}")
    y = np.broadcast_to(y, (n,))
    if not np.isin(y, (-1.0, 1.0)).all():
        raise ValueError("y must contain only -1 and +1")
    return y


def _check_w(w, d):
    w = np.asarray(_refuse_text_and_complex(w, "w"), dtype=np.float64).ravel()
    if w.shape[0] != d:
        raise ValueError(f"w has {w.shape[0]} entries, but x has {d} features")
    if not np.isfinite(w).all():
        raise ValueError("w contains NaN or inf")
    return w


def _check_label(y):
    # before any comparison: "y in (-1, 1)" on an array was numpy's "truth value ... is ambiguous", or passed for
    # np.array([1]) and failed in float(); a list is looked at as such (np.ndim of a ragged one raises)
    if isinstance(y, (list, tuple)) or np.ndim(y) != 0:
        raise ValueError(f"y must be a scalar label -1 or +1 (use worst_case_scaling for one label per row); "
                         f"got {y!r:.80}")
    _refuse_boolean_labels(y)
    if y not in (-1, 1):
        raise ValueError(f"y must be -1 or +1; got {y!r}")
    return float(y)


def fscale_worst_case(x, y, w, K, l=0.0, u=1.0, *, return_scaling=False):
    """Algorithm 3, FSCALE(x, y, w, K, l, u): the worst-case scaled copy of ``x``.

    Returns ``x' = alpha * x`` minimising the margin ``y <w, x'>`` over the set of
    Eq. (10): at most ``K`` features scaled by a factor in ``[l, u]``.

    Parameters
    ----------
    x : array of shape (d,) or (1, d), or a scipy.sparse row (1, d)
        The input. For a sparse row only its stored non-zeros are considered,
        in ``O(nnz log nnz)``.
    y : {-1, +1}
        The label, a number (a scalar; use :func:`worst_case_scaling` for one label per row). Booleans
        are refused (``TypeError``).
    w : array of shape (d,)
        The linear model.
    K : int >= 0
        The number of features the adversary may scale.
    l, u : float, ``0 <= l <= 1 <= u``, default l=0.0, u=1.0
        The range of scaling factors. FDROP is ``l = 0, u = 1`` (the defaults).
    return_scaling : bool, default=False
        Also return the factors ``alpha`` (same length as the considered entries:
        ``d`` for dense input, ``nnz`` for sparse input, in storage order).

    Returns
    -------
    x_scaled : ndarray of the shape of ``x``, or a CSR row (1, d) for sparse ``x``
        The worst-case copy (``x`` itself is not modified).
    alpha : ndarray of shape (d,) or (nnz,)
        The factors, only with ``return_scaling=True``.

    Raises
    ------
    ValueError
        For a y other than the scalar -1 or +1 (an array of labels included), a w of another length, NaN / inf,
        or bad ``K, l, u``
        (:func:`check_scaling_params`).
    TypeError
        For a boolean y (``True`` is not taken for +1).

    Notes
    -----
    The two pointers walk the sorted ``B = y w * x`` from both ends and at each of
    the ``K`` steps take the larger gain ``B[i](1 - u)`` versus ``B[j](1 - l)``.
    Since ``1 in [l, u]`` the adversary may also leave a feature alone, so we stop
    once neither gain is positive (the paper's listing always makes ``K``
    changes; where the two differ ours gives the smaller margin, the true LP
    optimum).

    Examples
    --------
    FDROP (the defaults ``l=0, u=1``) deletes the features that contribute most to the margin ``y <w, x>``:

    >>> import numpy as np
    >>> from orbitkernels.models import fscale_worst_case
    >>> x, w = np.array([1.0, 3.0, -1.0, 0.5]), np.array([1.0, 1.0, 1.0, -1.0])
    >>> x_worst = fscale_worst_case(x, 1, w, K=2)
    >>> x_worst.tolist(), float(w @ x), float(w @ x_worst)
    ([0.0, 0.0, -1.0, 0.5], 2.5, -1.5)

    FSCALE: halve a helpful feature or double a harmful one, whichever lowers the margin more:

    >>> x_worst, alpha = fscale_worst_case(x, 1, w, K=2, l=0.5, u=2.0, return_scaling=True)
    >>> alpha.tolist(), float(w @ x_worst)
    ([1.0, 0.5, 2.0, 1.0], 0.0)
    """
    K, l, u = check_scaling_params(K, l, u)
    y = _check_label(y)
    _refuse_text_and_complex(x, "x")
    if sp.issparse(x):
        row = sp.csr_matrix(x, dtype=np.float64, copy=True)
        if row.shape[0] != 1:
            raise ValueError(f"x must be a single row; got shape {row.shape}")
        row.sum_duplicates()
        w = _check_w(w, row.shape[1])
        vals = row.data
        idx = row.indices
    else:
        arr = np.array(x, dtype=np.float64, copy=True)
        if arr.ndim == 2 and arr.shape[0] == 1:
            arr = arr[0]
        if arr.ndim != 1:
            raise ValueError(f"x must be a vector; got shape {np.shape(x)}")
        w = _check_w(w, arr.shape[0])
        vals = arr
        idx = np.arange(arr.shape[0])
    if not np.isfinite(vals).all():
        raise ValueError("x contains NaN or inf")
    B = y * w[idx] * vals
    order = np.argsort(B, kind="stable")  # IndexSort: B[order] ascending
    alpha = np.ones_like(vals)
    i, j = 0, len(order) - 1
    for _ in range(K):
        if i > j:
            break
        gain_i = B[order[i]] * (1.0 - u)
        gain_j = B[order[j]] * (1.0 - l)
        if max(gain_i, gain_j) <= 0.0:
            break
        if gain_i > gain_j:
            alpha[order[i]] = u
            i += 1
        else:
            alpha[order[j]] = l
            j -= 1
    vals *= alpha
    if sp.issparse(x):
        row.eliminate_zeros()
        out = row
    else:
        out = vals.reshape(np.shape(x))
    return (out, alpha) if return_scaling else out


def _topk_mask(gain, group, n_groups, K):
    """Boolean mask of the (at most) ``K`` largest positive gains of each group."""
    if K == 0 or gain.size == 0:
        return np.zeros(gain.shape, dtype=bool)
    order = np.lexsort((-gain, group))
    counts = np.bincount(group, minlength=n_groups)
    starts = np.concatenate(([0], np.cumsum(counts)[:-1]))
    rank = np.arange(order.size) - starts[group[order]]
    chosen = order[rank < K]
    mask = np.zeros(gain.shape, dtype=bool)
    mask[chosen] = True
    mask &= gain > 0
    return mask


def worst_case_scaling(X, y, w, K, l=0.0, u=1.0):
    """Eq. (10) worst case for every row of ``X`` at once (vectorised Algorithm 3).

    Returns a copy of ``X`` (dense array or CSR matrix, as given) in which each
    row ``x_i`` is replaced by ``argmin_{x' in s(x_i)} y_i <w, x'>``. The result
    equals :func:`fscale_worst_case` row by row (up to ties); it selects the ``K``
    largest positive gains ``max((1-u) B_j, (1-l) B_j)`` per row by one sort of
    all stored entries, ``O(nnz log nnz)``.

    Parameters
    ----------
    X : array (n, d) or scipy.sparse matrix
    y : array (n,) of -1/+1, or a scalar applied to every row
        Numbers; booleans are refused (``TypeError``).
    w : array (d,)
    K : int >= 0
    l, u : float, default l=0.0, u=1.0
        See :func:`fscale_worst_case`.

    Returns
    -------
    X_worst : ndarray of shape (n, d), float64, or a CSR matrix for sparse X

    Examples
    --------
    >>> import numpy as np
    >>> import scipy.sparse as sp
    >>> from orbitkernels.models import fscale_worst_case, worst_case_scaling
    >>> X = np.array([[1.0, 3.0, -1.0, 0.5], [2.0, 0.0, 1.0, 1.0]])
    >>> y, w = np.array([1, -1]), np.array([1.0, 1.0, 1.0, -1.0])
    >>> X_worst = worst_case_scaling(X, y, w, K=1)  # one feature of each row deleted
    >>> X_worst.tolist()
    [[1.0, 0.0, -1.0, 0.5], [2.0, 0.0, 1.0, 0.0]]
    >>> all(np.array_equal(X_worst[i], fscale_worst_case(X[i], y[i], w, K=1)) for i in range(2))
    True
    >>> S = worst_case_scaling(sp.csr_matrix(X), y, w, K=1)  # sparse in, sparse out
    >>> sp.issparse(S), np.array_equal(S.toarray(), X_worst)
    (True, True)
    """
    K, l, u = check_scaling_params(K, l, u)
    _refuse_text_and_complex(X, "X")
    sparse = sp.issparse(X)
    if sparse:
        Xc = sp.csr_matrix(X, dtype=np.float64, copy=True)
        Xc.sum_duplicates()
        if not np.isfinite(Xc.data).all():
            raise ValueError("X contains NaN or inf")
        n, d = Xc.shape
    else:
        Xc = np.array(X, dtype=np.float64, copy=True)
        if Xc.ndim != 2:
            raise ValueError(f"X must be 2-D; got shape {Xc.shape}")
        if not np.isfinite(Xc).all():
            raise ValueError("X contains NaN or inf")
        n, d = Xc.shape
    w = _check_w(w, d)
    yv = _check_pm1(y, n)
    if K == 0 or n == 0:
        return Xc
    if sparse:
        group = np.repeat(np.arange(n), np.diff(Xc.indptr))
        vals = Xc.data
        B = yv[group] * w[Xc.indices] * vals
    else:
        group = np.repeat(np.arange(n), d)
        vals = Xc.reshape(-1)
        B = (yv[:, None] * w[None, :] * Xc).reshape(-1)
    gain = np.where(B < 0, (1.0 - u) * B, (1.0 - l) * B)
    factor = np.where(B < 0, u, l)
    mask = _topk_mask(gain, group, n, K)
    vals[mask] *= factor[mask]
    if sparse:
        Xc.eliminate_zeros()
    return Xc


def _linear_model(clf_or_w):
    """(w, b, classes) of a fitted binary linear classifier, or of a raw vector."""
    if hasattr(clf_or_w, "coef_"):
        coef = np.asarray(clf_or_w.coef_, dtype=np.float64)
        if coef.ndim == 2:
            if coef.shape[0] != 1:
                raise ValueError("worst_case_attack needs a binary linear classifier (coef_ with one row)")
            coef = coef[0]
        b = float(np.ravel(getattr(clf_or_w, "intercept_", [0.0]))[0])
        classes = getattr(clf_or_w, "classes_", None)
        return coef, b, classes
    if hasattr(clf_or_w, "fit"):  # an estimator without coef_: not fitted yet, or not a linear model
        check_is_fitted(clf_or_w)
        raise TypeError(f"clf_or_w must be a linear classifier with coef_; {type(clf_or_w).__name__} has none")
    w = np.asarray(clf_or_w)
    if clf_or_w is None or (w.dtype == object and not all(isinstance(v, Real) for v in w.flat)):
        # None became one NaN weight, any other object a float() error naming no argument
        raise TypeError(f"clf_or_w must be a fitted binary linear classifier or a vector of weights; "
                        f"got {type(clf_or_w).__name__}")
    return w.ravel(), 0.0, None


def worst_case_attack(clf_or_w, X, K, mode="drop", l=None, u=None, y=None):
    """Test-time attack: worst-case deletion or scaling of ``K`` features per row.

    For each row the adversary changes the ``K`` features that help the correct
    decision most (Globerson & Roweis 2006; Eq. 10 with Algorithm 3).

    Parameters
    ----------
    clf_or_w : estimator or array of shape (d,)
        A fitted binary linear classifier (``coef_`` with one row, ``intercept_``,
        ``classes_``) or a weight vector ``w`` (no intercept).
    X : array (n, d) or scipy.sparse matrix
    K : int >= 0
    mode : {"drop", "scale"}, default="drop"
        ``"drop"`` sets features to 0 (``l = 0, u = 1``); ``"scale"`` uses ``l, u``.
    l, u : float or None, default=None
        Only for ``mode="scale"`` (None: ``0.5`` and ``2``); with ``"drop"`` only None, 0 and 1.
    y : array (n,), optional
        True labels (in ``clf.classes_``, or the numbers -1/+1, not booleans, for a raw ``w``). When omitted
        the attack pushes every row away from the model's own prediction
        (a score of exactly 0 counts as ``classes_[1]``).

    Returns
    -------
    X_attacked : ndarray of shape (n, d), float64, or a CSR matrix for sparse X

    Raises
    ------
    ValueError
        For an unknown mode, ``l, u`` other than 0, 1 with ``"drop"``, a classifier that is not binary, or labels
        ``y`` outside its classes.
    TypeError
        For a ``clf_or_w`` that is neither a linear classifier with ``coef_`` nor a vector of numbers.

    Examples
    --------
    >>> import numpy as np
    >>> from orbitkernels.models import worst_case_attack
    >>> w = np.array([1.0, 1.0, -1.0])
    >>> X = np.array([[2.0, 1.0, 0.5], [-1.0, 0.5, 2.0]])
    >>> (X @ w).tolist()  # without y the rows are pushed away from these signs
    [2.5, -2.5]
    >>> worst_case_attack(w, X, K=1).tolist()  # the most helpful feature of each row deleted
    [[0.0, 1.0, 0.5], [-1.0, 0.5, 0.0]]
    >>> (worst_case_attack(w, X, K=2) @ w).tolist()  # two deletions flip both decisions
    [-0.5, 0.5]
    >>> worst_case_attack(w, X, K=1, mode="scale", l=0.5, u=2.0).tolist()
    [[1.0, 1.0, 0.5], [-1.0, 0.5, 1.0]]

    :class:`InvariantLinearClassifier` shows the attack on a fitted classifier.
    """
    if mode not in ("drop", "scale"):
        raise ValueError(f"mode must be 'drop' or 'scale'; got {mode!r}")
    if mode == "drop":
        if (l is not None and l != 0) or (u is not None and u != 1):
            raise ValueError("mode='drop' fixes l=0 and u=1; use mode='scale' for other ranges")
        l, u = 0.0, 1.0
    else:
        l = 0.5 if l is None else l
        u = 2.0 if u is None else u
    K, l, u = check_scaling_params(K, l, u)
    w, b, classes = _linear_model(clf_or_w)
    if not sp.issparse(X):
        X = np.asarray(_refuse_text_and_complex(X, "X"))
    if X.ndim != 2:
        raise ValueError(f"X must be 2-D; got shape {X.shape}")
    w = _check_w(w, X.shape[1])  # before X @ w: its error would not say which array is wrong
    if y is None:
        scores = X @ w + b
        ys = np.where(np.asarray(scores).ravel() >= 0, 1.0, -1.0)
    else:
        y = np.asarray(y)
        if y.size != X.shape[0]:  # a column of labels is raveled, but one label is not applied to every row
            raise ValueError(f"y must be 1-D with one label per row of X ({X.shape[0]}); got shape {y.shape}")
        y = y.ravel()
        if classes is not None:
            if len(classes) != 2:
                raise ValueError("worst_case_attack needs a binary classifier")
            if not np.isin(y, classes).all():
                raise ValueError(f"y has labels outside the classifier's classes {list(classes)}")
            ys = np.where(y == classes[1], 1.0, -1.0)
        else:
            ys = y  # checked (text, ±1) by worst_case_scaling
    return worst_case_scaling(X, ys, w, K, l, u)


class InvariantLinearClassifier(VersionedPickleMixin, ClassifierMixin, BaseEstimator):
    """Binary linear classifier trained with the worst-case (invariant) hinge loss (Teo et al. 2007, §5.2).

    Minimises the regularised risk of Eq. (5),
    ``lam/2 ||w||^2 + 1/m sum_i l(x_i, y_i, w)``, where for ``loss="fscale"``
    ``l(x, y, w) = max(0, 1 - min_{x' in s(x)} y (<w, x'> + b))`` with ``s(x)`` the
    scaling set of Eq. (10) (at most ``K`` features scaled within ``[l, u]``).
    This is Eq. (2) with ``f(x, y) = y <w, x> / 2``, unit margin scale and 0/1 cost.
    ``loss="fdrop"`` is the deletion special case ``l = 0, u = 1`` and
    ``loss="hinge"`` the ordinary hinge loss (``K = 0``). The worst case of each
    example is found by Algorithm 3 (vectorised, :func:`worst_case_scaling`) and
    the risk minimised by mini-batch Pegasos (Algorithm 2): step ``1 / (lam t)``
    and projection onto the ball ``||w||^2 <= 2 R[0] / lam`` with ``R[0] = 1``.

    Parameters
    ----------
    loss : {"hinge", "fdrop", "fscale"}, default="hinge"
    K : int >= 0, default=10
        Number of features the adversary may scale (ignored for "hinge").
    l : float in [0, 1], default=0.0
        Smallest scaling factor for "fscale"; "fdrop" fixes 0.
    u : float >= 1, default=1.0
        Largest scaling factor for "fscale" (``0 <= l <= 1 <= u``); "fdrop" fixes 1.
    lam : float > 0, default=1e-3
        Regularisation constant (lambda of Eq. 5).
    max_iter : int >= 1, default=50
        Number of passes (epochs) over the training set.
    batch_size : int >= 1, default=32
        Examples per Pegasos step.
    fit_intercept : bool, default=True
        Learn a bias (a constant feature, regularised, never attacked).
    average : bool, default=True
        Use the average of the iterates of the last half of training (less
        noisy than the last iterate; Theorem 3 bounds the risk of the average
        of all the iterates).
    random_state : int, RandomState, Generator or None, default=None
        Order of the examples.

    Attributes
    ----------
    classes_ : ndarray of shape (2,)
        The two labels; ``classes_[1]`` is the positive class (+1).
    coef_ : ndarray of shape (1, n_features)
        The weights w.
    intercept_ : ndarray of shape (1,)
        The bias b (0 without ``fit_intercept``).
    n_iter_ : int
        Epochs made (``max_iter``).
    t_ : int
        Pegasos steps made (``max_iter`` times the number of batches per epoch).
    n_features_in_ : int
    feature_names_in_ : ndarray of shape (n_features,)
        Column names of an X that has them (a pandas DataFrame).

    Examples
    --------
    Nine weakly informative features and a tenth that alone separates the classes. The hinge loss leans on that
    one, so deleting it (:func:`worst_case_attack`) costs accuracy; FDROP with ``K=1`` spreads the weight:

    >>> import numpy as np
    >>> from orbitkernels.models import InvariantLinearClassifier, worst_case_attack
    >>> rng = np.random.default_rng(0)
    >>> y = np.repeat([0, 1], 20)
    >>> X = 0.8 * (2 * y[:, None] - 1) + rng.normal(size=(40, 10))
    >>> X[:, 0] = 3.0 * (2 * y - 1)
    >>> hinge = InvariantLinearClassifier(lam=1e-2, random_state=0).fit(X, y)
    >>> fdrop = InvariantLinearClassifier(loss="fdrop", K=1, lam=1e-2, random_state=0).fit(X, y)
    >>> [int((clf.predict(X) == y).sum()) for clf in (hinge, fdrop)]  # correct out of 40
    [40, 40]
    >>> [int((clf.predict(worst_case_attack(clf, X, K=1, y=y)) == y).sum()) for clf in (hinge, fdrop)]
    [33, 40]
    """

    _parameter_constraints: dict = {
        "loss": [StrOptions({"hinge", "fdrop", "fscale"})],
        "K": [count_constraint(0)],
        # Eq. 10 needs 1 in [l, u]: l in [0, 1], u in [1, inf) (finite)
        "l": [StrictInterval(Real, 0, 1, closed="both")],
        "u": [StrictInterval(Real, 1, None, closed="left")],
        "lam": [positive_real_constraint()],
        "max_iter": [count_constraint()],
        "batch_size": [count_constraint()],
        "fit_intercept": ["boolean"],
        "average": ["boolean"],
        "random_state": RANDOM_STATE_CONSTRAINT,
    }

    def __init__(self, loss="hinge", K=10, l=0.0, u=1.0, lam=1e-3, max_iter=50,
                 batch_size=32, fit_intercept=True, average=True, random_state=None):
        self.loss = loss
        self.K = K
        self.l = l
        self.u = u
        self.lam = lam
        self.max_iter = max_iter
        self.batch_size = batch_size
        self.fit_intercept = fit_intercept
        self.average = average
        self.random_state = random_state

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        tags.classifier_tags.multi_class = False
        return tags

    def _invariance(self, loss, K, l, u):
        if loss == "hinge":
            return 0, 0.0, 1.0
        if loss == "fdrop":
            K, _, _ = check_scaling_params(K, 0.0, 1.0)
            return K, 0.0, 1.0
        return check_scaling_params(K, l, u)

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y):
        """Minimise Eq. (5) with the worst-case hinge loss by mini-batch Pegasos.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
            Two classes.

        Returns
        -------
        self : InvariantLinearClassifier

        Raises
        ------
        ValueError
            For a y with other than two classes.
        """
        K, l, u = self._invariance(self.loss, self.K, self.l, self.u)
        lam, max_iter, batch_size = float(self.lam), int(self.max_iter), int(self.batch_size)
        check_not_text(X, "X")
        X, y = validate_data(self, X, y, accept_sparse="csr", dtype=np.float64)
        check_classification_targets(y)
        self.classes_ = np.unique(y)
        if len(self.classes_) != 2:
            # wording expected by scikit-learn's check_classifiers_multilabel/multiclass checks
            raise ValueError(
                "Only binary classification is supported. The type of the target is "
                f"{type_of_target(y)}: InvariantLinearClassifier is binary; y has {len(self.classes_)} "
                f"class(es) {list(self.classes_)[:5]}"
            )
        ys = np.where(y == self.classes_[1], 1.0, -1.0)
        rng = check_random_state(self.random_state)
        n, d = X.shape
        w = np.zeros(d)
        b = 0.0
        bias_feat = 1.0 if self.fit_intercept else 0.0
        radius2 = 2.0 / lam  # ||w||^2 <= 2 R[0] / lam, R[0] = 1 (the loss at w = 0)
        t = 0
        w_sum, b_sum, n_avg = np.zeros(d), 0.0, 0
        n_steps = max_iter * int(np.ceil(n / batch_size))
        for epoch in range(max_iter):
            perm = rng.permutation(n)
            for start in range(0, n, batch_size):
                t += 1
                idx = perm[start:start + batch_size]
                Xb, yb = X[idx], ys[idx]
                Xw = worst_case_scaling(Xb, yb, w, K, l, u) if K > 0 else Xb
                margin = yb * (np.asarray(Xw @ w).ravel() + b * bias_feat)
                viol = margin < 1.0
                eta = 1.0 / (lam * t)
                w *= 1.0 - eta * lam
                b *= 1.0 - eta * lam
                if viol.any():
                    coeff = yb[viol] / len(idx)
                    w += eta * np.asarray(Xw[viol].T @ coeff).ravel()
                    b += eta * bias_feat * coeff.sum()
                norm2 = w @ w + b * b
                if norm2 > radius2:
                    scale = np.sqrt(radius2 / norm2)
                    w *= scale
                    b *= scale
                if self.average and t > n_steps // 2:
                    w_sum += w
                    b_sum += b
                    n_avg += 1
        if self.average and n_avg:
            w, b = w_sum / n_avg, b_sum / n_avg
        self.coef_ = w.reshape(1, -1)
        self.intercept_ = np.array([b * bias_feat])
        self.n_iter_ = max_iter
        self.t_ = t
        return self

    def decision_function(self, X):
        """``<w, x> + b``: (n_samples,); positive means ``classes_[1]``."""
        check_is_fitted(self)
        X = validate_data(self, check_not_text(X, "X"), accept_sparse="csr", dtype=np.float64, reset=False)
        return np.asarray(X @ self.coef_[0]).ravel() + self.intercept_[0]

    def predict(self, X):
        """``classes_[1]`` where :meth:`decision_function` is positive, else ``classes_[0]``: (n_samples,)."""
        scores = self.decision_function(X)
        return self.classes_[(scores > 0).astype(int)]

    def invariant_loss(self, X, y):
        """Per-example worst-case hinge loss (Eq. 2 with the set of Eq. 10): array (n_samples,).

        The adversary is the one of the current ``loss``, ``K``, ``l``, ``u`` (a
        diagnostic: the fitted ``coef_`` can be scored against any scaling set).
        """
        check_is_fitted(self)
        self._validate_params()
        K, l, u = self._invariance(self.loss, self.K, self.l, self.u)
        X = validate_data(self, check_not_text(X, "X"), accept_sparse="csr", dtype=np.float64, reset=False)
        y = check_labels_per_row(y, X.shape[0])
        if not np.isin(y, self.classes_).all():  # else scored as classes_[0] in silence
            raise ValueError(f"y has labels outside the classifier's classes {list(self.classes_)}")
        ys = np.where(y == self.classes_[1], 1.0, -1.0)
        Xw = worst_case_scaling(X, ys, self.coef_[0], K, l, u)
        margin = ys * (np.asarray(Xw @ self.coef_[0]).ravel() + self.intercept_[0])
        return np.maximum(0.0, 1.0 - margin)
