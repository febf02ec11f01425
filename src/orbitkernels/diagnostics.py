"""How invariant is a fitted transformer or model under a group? (measured, not assumed)."""
from __future__ import annotations

import numpy as np
from sklearn.base import is_classifier

from .groups.base import Group
from .utils.validation import MAX_COUNT, check_data, check_int, check_random_state

__all__ = ["invariance_error"]


_METHODS = ("transform", "decision_function", "predict_proba", "predict")


def _output(estimator, X, method):
    if method == "auto":
        for name in _METHODS:
            if hasattr(estimator, name):
                method = name
                break
        else:
            raise TypeError(f"{type(estimator).__name__} has no transform, decision_function or predict")
    elif method not in _METHODS:
        raise ValueError(f"method must be 'auto' or one of {_METHODS}; got {method!r}")
    if not hasattr(estimator, method):
        raise TypeError(f"{type(estimator).__name__} has no method {method!r}")
    out = np.asarray(getattr(estimator, method)(X))
    # a classifier's predict returns class labels of any type (strings, 3 and 1, -1.0 and 1.0): those are compared,
    # not subtracted (|3 - 1| / |1| would count one changed prediction as 2)
    labels = (method == "predict" and is_classifier(estimator)) or out.dtype.kind not in "biuf"
    if not labels:
        out = out.astype(float)
    return out.reshape(len(X), -1), method, labels


def _change(out, base, norm, labels):
    """Per-row relative change: ||out - base|| / ||base|| for numbers, 1.0 / 0.0 (changed or not) for labels."""
    if labels:
        return np.any(out != base, axis=1).astype(float)
    return np.linalg.norm(out - base, axis=1) / norm


def invariance_error(estimator, X, group, *, n_elements=8, random_state=None, method="auto"):
    """Relative change of ``estimator``'s outputs when the inputs are moved by group elements.

    For each of ``n_elements`` elements g drawn from the group's distribution
    (all elements of a finite group when ``n_elements=None``) and each row x::

        rel(x, g) = ||f(g x) - f(x)|| / ||f(x)||

    (the absolute change ||f(g x)|| where f(x) = 0),
    where f is ``transform`` (features), ``decision_function``, ``predict_proba``
    or ``predict`` (the first available, or ``method``). When f returns
    class labels (``predict`` of a classifier, whatever the labels' type, or
    non-numeric values of any ``predict``), rel is 1 for a changed prediction
    and 0 otherwise, so ``mean`` is the fraction of predictions the group
    element changed. Exactly invariant
    features give 0; plain random Fourier features of rotated images give
    values of order 1.

    Parameters
    ----------
    estimator : fitted estimator
        Anything with ``transform``, ``decision_function``, ``predict_proba`` or ``predict``.
    X : array-like of shape (n_samples, n_features)
    group : Group
        The group whose elements move the rows.
    n_elements : int >= 1 or None, default=8
        Number of elements drawn (``group.sample``; possibly repeated for a finite group); None: every
        element of a finite group (a ValueError for an infinite one).
    random_state : int, RandomState, Generator or None, default=None
        The draws of the elements.
    method : {"auto", "transform", "decision_function", "predict_proba", "predict"}, default="auto"
        The output compared; "auto" the first of these the estimator has.

    Returns
    -------
    result : dict
        ``mean`` and ``max`` of rel over rows and elements, ``per_element`` (list: mean over rows, one per
        element), ``method`` (the one used), ``n_elements`` (the number of elements) and, for
        ``method="predict"``, ``agreement`` (the share of unchanged predictions).

    Raises
    ------
    TypeError
        When ``group`` is not a :class:`~orbitkernels.groups.Group` or the estimator lacks the method.
    ValueError
        For an unknown ``method`` or ``n_elements < 1``.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.kernel_approximation import RBFSampler
    >>> from orbitkernels.diagnostics import invariance_error
    >>> from orbitkernels.features import OrbitFourierFeatures
    >>> from orbitkernels.groups import CyclicShift
    >>> X = np.random.default_rng(0).normal(size=(20, 8))
    >>> orbit = OrbitFourierFeatures(CyclicShift(8), gamma=0.1, n_components=32, random_state=0).fit(X)
    >>> res = invariance_error(orbit, X, CyclicShift(8), n_elements=None)  # every shift
    >>> res["max"] < 1e-12, res["n_elements"], res["method"]
    (True, 8, 'transform')
    >>> plain = RBFSampler(gamma=0.1, n_components=64, random_state=0).fit(X)  # not invariant
    >>> print(f"{invariance_error(plain, X, CyclicShift(8), random_state=0)['mean']:.1f}")
    1.0
    """
    if not isinstance(group, Group):
        raise TypeError(f"group must be an orbitkernels.groups.Group; got {type(group).__name__}")
    X = check_data(X, "X")
    rng = check_random_state(random_state)
    if n_elements is None:
        E = group.elements()
    else:
        E = group.sample(check_int(n_elements, "n_elements", min_value=1, max_value=MAX_COUNT), rng)
    base, method, labels = _output(estimator, X, method)
    norm = np.ones(len(base)) if labels else np.linalg.norm(base, axis=1)
    norm = np.where(norm > 0, norm, 1.0)
    if group.is_data_dependent:
        moved = [group.act_each(X, np.repeat(e[None], len(X), axis=0)) for e in E]
    else:
        moved = list(group.act(X, E))
    outputs = [_output(estimator, Xg, method)[0] for Xg in moved]
    rel = np.array([_change(o, base, norm, labels) for o in outputs])
    out = {"mean": float(rel.mean()), "max": float(rel.max()), "per_element": rel.mean(axis=1).tolist(),
           "method": method, "n_elements": len(E)}
    if method == "predict":
        out["agreement"] = float(np.mean([np.all(o == base, axis=1).mean() for o in outputs]))
    return out
