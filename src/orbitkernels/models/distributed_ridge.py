"""Regularized least squares on numpy or row-chunked dask arrays (the RLS of GURLS; Raj et al. 2017 §4
train linear models on the orbit features).

:class:`DistributedRidge` and :class:`DistributedRidgeClassifier` minimise
``||Y - Φ W - 1 b^T||^2 + α ||W||^2`` (scikit-learn's ``Ridge`` convention, the one of
:mod:`orbitkernels.models.ridge`; GURLS' λ is ``α / n``). They differ from the in-memory ridge path only
in how the moments are accumulated: one pass over the blocks accumulates the centred normal equations
with the pairwise update of Chan, Golub & LeVeque (1979) as a tree reduction, and
:meth:`RidgePath.from_moments` eigendecomposes the p×p matrix once on the client for every α. A second
pass predicts the validation rows for every α blockwise and reduces only the error counts, so neither
the data nor Φ_v^T Φ_v ever reaches the client.

This module is in the ``models`` layer: it never imports dask nor the Dask adapter. What only a dask
array needs (lazy blocks, metadata checks, blockwise prediction) is asked of
:mod:`orbitkernels.dask` by name through :func:`orbitkernels.utils.dispatch.dask_call`.
"""
from __future__ import annotations

import warnings
from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin
from sklearn.exceptions import DataConversionWarning
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import (
    assert_all_finite, check_array, check_consistent_length, check_is_fitted, column_or_1d, validate_data,
)

from ..utils.dispatch import dask_call, is_dask_array
from ..utils.persistence import VersionedPickleMixin
from ..utils.validation import (RANDOM_STATE_CONSTRAINT, StrictInterval, count_constraint,
                                physical_memory_bytes as _physical_memory_bytes)
from .ridge import RidgePath, _alpha_values, _check_product

__all__ = ["DistributedRidge", "DistributedRidgeClassifier", "holdout_mask"]


class _Blocks:
    """Row blocks of (X, Y) with their global row offsets: in memory, one eager block. A dask X or Y gets
    the adapter's lazy ``DaskBlocks`` instead (same interface; :func:`_blocks`)."""

    lazy = False

    def __init__(self, X, Y):
        X = np.asarray(X)
        self.parts = [(X, np.asarray(Y), 0)] if Y is not None else [(X, None, 0)]
        self.n, self.n_features = X.shape

    def map(self, fn, *args):
        return [fn(x, y, off, *args) for x, y, off in self.parts]

    def reduce(self, items, combine, split_every):
        return combine(items)

    def ship(self, obj):
        return obj

    def compute(self, *objs):
        return objs


def _blocks(X, Y):
    """One code path for numpy (eager) and dask (lazy delayed blocks, from the adapter)."""
    if is_dask_array(X) or is_dask_array(Y):
        return dask_call("blocks", X, Y)
    return _Blocks(X, Y)


def holdout_mask(offset, n_rows, fraction, seed):
    """Validation rows among rows ``offset`` to ``offset+n_rows-1``: a hash of the *global* row index
    (SplitMix64), so the split is the same whatever the chunking and needs no communication.

    Parameters
    ----------
    offset : int >= 0
        Global index of the first row (a chunk's position in the whole array).
    n_rows : int >= 0
        Rows in the chunk.
    fraction : float in [0, 1]
        Probability of a row being a validation row (each row independently, by its hash).
    seed : int >= 0
        Seed of the hash (the estimators' ``random_state``).

    Returns
    -------
    mask : ndarray of shape (n_rows,), bool
        True for the validation rows.

    Raises
    ------
    ValueError
        For an ``offset``, ``n_rows`` or ``seed`` that is not an integer >= 0 (each below 2**64, and the rows
        ``offset + n_rows`` at most 2**64), or a ``fraction`` outside [0, 1] (NaN included).

    Examples
    --------
    The split of 1000 rows is the same whether they come in one chunk or in three:

    >>> import numpy as np
    >>> from orbitkernels.models.distributed_ridge import holdout_mask
    >>> whole = holdout_mask(0, 1000, 0.2, seed=0)
    >>> parts = [holdout_mask(0, 300, 0.2, 0), holdout_mask(300, 500, 0.2, 0), holdout_mask(800, 200, 0.2, 0)]
    >>> bool(np.array_equal(np.concatenate(parts), whole)), 150 < int(whole.sum()) < 250
    (True, True)
    """
    for name, value in (("offset", offset), ("n_rows", n_rows), ("seed", seed)):
        # -5 rows gave an empty mask and 0.5 an offset in silence
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, Integral) or not 0 <= value < 2**64:
            raise ValueError(f"holdout_mask: {name} must be an integer in [0, 2**64); got {value!r}")
    if isinstance(fraction, (bool, np.bool_)) or not isinstance(fraction, Real) or not 0 <= fraction <= 1:
        raise ValueError(f"holdout_mask: fraction must be a number in [0, 1]; got {fraction!r}")
    # Python ints: a NumPy uint64 plus a signed NumPy integer is a float64, which rounds above 2**53 (a mask of
    # another length, in silence)
    offset, n_rows, seed = int(offset), int(n_rows), int(seed)
    if offset + n_rows > 2**64:
        raise ValueError(f"holdout_mask: offset + n_rows must be at most 2**64 (the hash's range); got rows {offset} "
                         f"to {offset + n_rows - 1}")
    with np.errstate(over="ignore"):
        z = np.arange(offset, offset + n_rows, dtype=np.uint64) + np.uint64(seed) * np.uint64(0xD1B54A32D192ED03)
        z = z + np.uint64(0x9E3779B97F4A7C15)
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        z = z ^ (z >> np.uint64(31))
    return (z >> np.uint64(11)).astype(np.float64) / float(2**53) < fraction


class _Moments:
    """n, means and centred cross-products of (X, Y): the sufficient statistics of ridge."""

    __slots__ = ("n", "mx", "my", "cxx", "cxy")

    def __init__(self, n, mx, my, cxx, cxy):
        self.n, self.mx, self.my, self.cxx, self.cxy = n, mx, my, cxx, cxy

    @classmethod
    def of(cls, X, Y, center):
        X = np.asarray(X, dtype=np.float64)
        Y = np.asarray(Y, dtype=np.float64)
        n = len(X)
        if center and n:
            mx, my = X.mean(axis=0), Y.mean(axis=0)
            Xc, Yc = X - mx, Y - my
        else:
            mx, my = np.zeros(X.shape[1]), np.zeros(Y.shape[1])
            Xc, Yc = X, Y
        return cls(n, mx, my, Xc.T @ Xc, Xc.T @ Yc)

    @staticmethod
    def combine(parts):
        """Pairwise update of Chan, Golub & LeVeque (1979): exact and free of the cancellation
        of accumulating raw sums (GICDF features have large means)."""
        parts = [p for p in parts if p.n] or parts[:1]
        acc = parts[0]
        for p in parts[1:]:
            n = acc.n + p.n
            dx, dy = p.mx - acc.mx, p.my - acc.my
            f = acc.n * p.n / n
            with np.errstate(over="ignore", invalid="ignore"):  # an overflow is refused by name in _solution
                acc = _Moments(n, acc.mx + dx * (p.n / n), acc.my + dy * (p.n / n),
                               acc.cxx + p.cxx + f * np.outer(dx, dx), acc.cxy + p.cxy + f * np.outer(dx, dy))
        return acc


def _nonfinite(A):
    """Number of NaN / ±inf entries of one block (integer and boolean blocks have none)."""
    A = np.asarray(A)
    return int(A.size - np.count_nonzero(np.isfinite(A))) if A.dtype.kind in "fc" else 0


def _combine_blocks(parts):
    """Reduce ``(train, validation, non-finite counts)`` triples of several blocks into one."""
    train, val, bad = zip(*parts)
    return _Moments.combine(list(train)), _Moments.combine(list(val)), np.sum(bad, axis=0)


def _raise_nonfinite(bad, names):
    # A dask array is only seen block by block on the workers, so finiteness is counted there, in the
    # pass that is made anyway, and reported here once the counts of every block are reduced.
    for count, name in zip(bad, names):
        if count:
            raise ValueError(f"Input {name} contains NaN or infinity: {int(count)} non-finite entries were found "
                             "while accumulating the normal equations")


def _solution(mom, alphas):
    """The ridge path for every α from the accumulated moments: :meth:`RidgePath.from_moments`
    (scikit-learn's α convention, the one of this module); only the accumulation is distributed.

    The moments of finite rows can still overflow (rows of 1e200 have XᵀX of 1e400): refused here, in the
    user's terms, rather than as numpy's 'Eigenvalues did not converge'."""
    _check_product(mom.cxx, "XᵀX (the Gram matrix of the moments accumulated over the rows)")
    _check_product(mom.cxy, "XᵀY (of the moments accumulated over the rows)", "rescale X or y")
    return RidgePath.from_moments(alphas, n=mom.n, x_mean=mom.mx, y_mean=mom.my, xtx=mom.cxx, xty=mom.cxy)


def _errors(path, X, Y, task):
    """Summed squared error (regression) or number of mistakes (classification) for every α.

    A single ±1 target column is the binary coding (see :class:`_Encoder`): its decision is the sign.
    """
    out = np.empty(len(path.alphas))
    for i, P in enumerate(path.predict(X)):
        if task != "classification":
            out[i] = ((P - Y) ** 2).sum()
        elif Y.shape[1] == 1:
            out[i] = ((P[:, 0] > 0) != (Y[:, 0] > 0)).sum()
        else:
            out[i] = (P.argmax(axis=1) != Y.argmax(axis=1)).sum()
    return out


def _block_moments(X, Y, offset, encode, center, holdout):
    """(train, validation) moments of one block and its non-finite counts in (X, Y);
    validation is empty without a hold-out."""
    Y = encode(Y)
    bad = np.array([_nonfinite(X), _nonfinite(Y)])
    with np.errstate(invalid="ignore", over="ignore"):  # a non-finite block is reported after the reduction
        if holdout is None:
            return _Moments.of(X, Y, center), _Moments.of(X[:0], Y[:0], center), bad
        m = holdout_mask(offset, len(X), *holdout)
        return _Moments.of(X[~m], Y[~m], center), _Moments.of(X[m], Y[m], center), bad


def _block_errors(X, Y, offset, encode, solution, task, holdout):
    """Per-α errors of one block's validation rows, then their count and the non-finite counts in (X, Y)."""
    Y = encode(Y)
    if holdout is not None:
        m = holdout_mask(offset, len(X), *holdout)
        X, Y = X[m], Y[m]
    bad_x, bad_y = _nonfinite(X), _nonfinite(Y)
    if bad_x:  # RidgePath.predict refuses such rows; the count is reported after the reduction, as in fit
        err = np.full(len(solution.alphas), np.nan)
    else:
        with np.errstate(invalid="ignore", over="ignore"):
            err = _errors(solution, X, Y, task)
    return np.concatenate([err, [len(X), bad_x, bad_y]])


def _sum_arrays(parts):
    return np.sum(parts, axis=0)


class _Encoder:
    """Targets to a float (n, k) matrix: ±1 one-hot for classes (GURLS / RidgeClassifier coding).

    Two classes are one column, +1 for ``classes[1]`` and -1 for ``classes[0]``, as scikit-learn's
    ``RidgeClassifier`` (``LabelBinarizer(neg_label=-1)``) codes them; the two-column coding would only
    add the negated column.
    """

    def __init__(self, classes=None, squeeze=False):
        self.classes = classes
        self.squeeze = squeeze

    def __call__(self, y):
        y = np.asarray(y)
        if self.classes is None:
            return y.reshape(len(y), -1).astype(np.float64)
        unseen = ValueError(f"y contains labels not seen in the training targets (classes: {self.classes!r})")
        try:
            idx = np.minimum(np.searchsorted(self.classes, y), len(self.classes) - 1)
        except TypeError as exc:  # object labels of a type the classes do not compare with (7 among strings)
            raise unseen from exc
        if len(y) and not np.array_equal(self.classes[idx], y):
            raise unseen
        if len(self.classes) == 2:
            return np.where(idx == 1, 1.0, -1.0)[:, None]
        Y = -np.ones((len(y), len(self.classes)))
        Y[np.arange(len(y)), idx] = 1.0
        return Y


def _predict_block(X, coef, intercept):
    return np.asarray(X, dtype=np.float64) @ coef + intercept


def _decision_block(X, state):
    # the only place a dask X is ever seen at predict time: refuse NaN/inf rather than return NaN scores
    assert_all_finite(X, input_name="X")
    return _predict_block(X, *state)


def _class_block(P, classes):
    if P.shape[1] == 1:  # binary coding: the sign picks classes[1] (scikit-learn's decision_function convention)
        return classes[(P[:, 0] > 0).astype(int)]
    return classes[P.argmax(axis=1)]


#: in-memory X is kept float32 or converted to float64, as scikit-learn's linear models do
_FLOATS = [np.float64, np.float32]
_NUMERIC_KINDS = "biuf"


def _n_outputs(y):
    return 1 if y.ndim == 1 else y.shape[1]


def _holdout_seed(random_state):
    """The integer seed of :func:`holdout_mask` (a hash of row indices, so it needs a number, not a stream):
    an int as given, ``None`` as 0 (the split stays reproducible), a ``RandomState`` or ``Generator`` draws one."""
    if random_state is None:
        return 0
    if isinstance(random_state, np.random.Generator):
        return int(random_state.integers(2**32))
    if isinstance(random_state, np.random.RandomState):
        return int(random_state.randint(2**32))
    return int(random_state)


class _RidgeBase(VersionedPickleMixin, BaseEstimator):
    _task = "regression"

    # scikit-learn's declarative checks, run by ``_validate_params`` at fit; what a constraint cannot say
    # (every α finite and >= 0) is checked in :meth:`_checked_alphas`.
    _parameter_constraints = {
        "alphas": ["array-like", StrictInterval(Real, 0, None, closed="left")],
        "fit_intercept": ["boolean"],
        "validation_fraction": [StrictInterval(Real, 0, 1, closed="neither")],
        "refit": ["boolean"],
        "split_every": [count_constraint(low=2)],
        "random_state": RANDOM_STATE_CONSTRAINT,
    }

    def __init__(self, alphas=(1e-3, 1e-2, 1e-1, 1.0, 1e1, 1e2, 1e3), *, fit_intercept=True,
                 validation_fraction=0.2, refit=True, split_every=8, random_state=0):
        self.alphas = alphas
        self.fit_intercept = fit_intercept
        self.validation_fraction = validation_fraction
        self.refit = refit
        self.split_every = split_every
        self.random_state = random_state

    def _encoder(self, y):
        return _Encoder()

    # ------------------------------------------------------------------ input validation
    def _check_X(self, X, name):
        if is_dask_array(X):
            return dask_call("check_array", X, name)
        return check_array(X, dtype=_FLOATS, input_name=name, estimator=self)

    def _check_pair(self, X, y, xname, yname):
        """(X, y) of which at least one is a dask array: each checked as far as it can be without computing."""
        if y is None:
            raise ValueError(f"This {type(self).__name__} estimator requires y to be passed, but the target "
                             f"{yname} is None.")
        X, y = self._check_X(X, xname), self._check_target(y, yname)
        if X.shape[0] != y.shape[0]:
            raise ValueError(f"Found input variables with inconsistent numbers of samples: {xname} has "
                             f"{X.shape[0]} rows but {yname} has {y.shape[0]}")
        return X, y

    def _validate_fit(self, X, y):
        if not (is_dask_array(X) or is_dask_array(y)):
            return self._validate_numpy(X, y)
        X, y = self._check_pair(X, y, "X", "y")
        self.n_features_in_ = X.shape[1]
        if hasattr(self, "feature_names_in_"):  # a dask array carries no column names
            del self.feature_names_in_
        return X, y

    def _validate_validation(self, X_val, y_val, y):
        if (X_val is None) != (y_val is None):
            raise ValueError("X_val and y_val must be given together; got "
                             f"X_val={'None' if X_val is None else 'an array'} and "
                             f"y_val={'None' if y_val is None else 'an array'}")
        if X_val is None:
            return None, None
        if is_dask_array(X_val) or is_dask_array(y_val):
            X_val, y_val = self._check_pair(X_val, y_val, "X_val", "y_val")
        else:
            X_val, y_val = self._check_X(X_val, "X_val"), self._check_target(y_val, "y_val")
            check_consistent_length(X_val, y_val)
        if X_val.shape[1] != self.n_features_in_:
            raise ValueError(f"X_val has {X_val.shape[1]} features, but {type(self).__name__} is expecting "
                             f"{self.n_features_in_} features as input (those of X)")
        if self._task == "regression" and _n_outputs(y_val) != _n_outputs(y):
            raise ValueError(f"y_val has {_n_outputs(y_val)} output(s) (shape {y_val.shape}) but y has "
                             f"{_n_outputs(y)} (shape {y.shape})")
        return X_val, y_val

    # ------------------------------------------------------------------ fit / predict
    def fit(self, X, y, X_val=None, y_val=None):
        """Fit on numpy or row-chunked dask arrays, selecting α on validation data.

        With several ``alphas`` the validation data are ``(X_val, y_val)`` when
        given (the model stays trained on ``X`` alone), else the rows picked by
        :func:`holdout_mask` with ``validation_fraction`` (then, with
        ``refit=True``, the chosen α is refitted on all rows at no extra pass:
        the moments of both parts are merged). Ties go to the largest α.

        In-memory inputs are validated by scikit-learn (``validate_data``);
        dask arrays by their metadata, and their finiteness is counted in the
        pass over the blocks, so a NaN or inf anywhere is a ``ValueError``
        after that pass, not a silent NaN model.

        Parameters
        ----------
        X : array-like or dask array of shape (n_samples, n_features)
        y : array-like or dask array of shape (n_samples,) or (n_samples, n_targets)
            Targets (regression) or class labels (classifier, 1-D).
        X_val, y_val : array-like or dask arrays, default=None
            Validation rows, given together or not at all.

        Returns
        -------
        self
        """
        self._validate_params()
        alphas = self._checked_alphas()
        split_every = int(self.split_every)
        X, y = self._validate_fit(X, y)
        self._check_moment_memory(X.shape[1])
        X_val, y_val = self._validate_validation(X_val, y_val, y)
        encode = self._encoder(y)
        blocks = _blocks(X, y)
        select = len(alphas) > 1
        holdout = None
        if select and X_val is None:
            holdout = (float(self.validation_fraction), _holdout_seed(self.random_state))
        enc = blocks.ship(encode)
        triple = blocks.reduce(blocks.map(_block_moments, enc, bool(self.fit_intercept), holdout),
                               _combine_blocks, split_every)
        (train, val, bad), = blocks.compute(triple)
        _raise_nonfinite(bad, ("X", "y"))
        errors = None
        if select:
            if train.n < 1:
                raise ValueError(f"the validation hold-out (validation_fraction={self.validation_fraction!r}) left "
                                 f"no training rows out of n_samples={blocks.n}; pass more rows or X_val, y_val")
            solution = _solution(train, alphas)
            vblocks = blocks if holdout is not None else _blocks(X_val, y_val)
            sol = vblocks.ship(solution)
            tot = vblocks.reduce(vblocks.map(_block_errors, vblocks.ship(encode), sol, self._task, holdout),
                                 _sum_arrays, split_every)
            (tot,) = vblocks.compute(tot)
            _raise_nonfinite(tot[-2:], ("X_val", "y_val"))
            n_val = tot[-3]
            if n_val < 1:
                raise ValueError(f"the validation hold-out (validation_fraction={self.validation_fraction!r}) left "
                                 f"no validation rows out of n_samples={blocks.n}; raise validation_fraction or "
                                 "pass X_val, y_val")
            errors = tot[:-3] / n_val
            if not np.isfinite(errors).all():  # inputs and α are finite, so this would be a bug: never pick from NaN
                raise FloatingPointError(f"non-finite validation errors {errors.tolist()} for alphas {alphas.tolist()}")
            best = int(np.flatnonzero(errors == errors.min())[np.argmax(alphas[errors == errors.min()])])
        else:
            best = 0
        if holdout is not None and self.refit:
            train = _Moments.combine([train, val])
        coef = _solution(train, alphas[best:best + 1]).coef(0)
        self.coef_ = coef.T
        self.intercept_ = train.my - train.mx @ coef
        self.alpha_ = float(alphas[best])
        self.alphas_ = alphas
        self.validation_errors_ = errors
        self.n_train_ = int(train.n)
        self._set_output_shape(y)
        return self

    @staticmethod
    def _check_moment_memory(n_features):
        """Refuse, before any pass over the data, normal equations the client cannot hold.

        The fit keeps p × p float64 moments of the training and validation rows, merges them and
        eigendecomposes one on the client: about four such matrices at once. A p of GICDF's 50,500 features
        would be 20 GB each, found out as a MemoryError (or the kernel's OOM killer) after the pass."""
        need = 4 * 8.0 * n_features ** 2
        have = _physical_memory_bytes()
        if need > have:
            raise ValueError(f"X has n_features={n_features}: the normal equations need about {need / 2**20:,.0f} MB "
                             f"(four {n_features} x {n_features} float64 matrices) where this machine has "
                             f"{have / 2**20:,.0f} MB; use fewer features, or a dual (kernel) solver such as "
                             "RidgePath.fit_gram when there are fewer rows than features")

    def _checked_alphas(self):
        # a True among numbers would become α = 1 (alphas=True alone is refused by the constraints)
        items = self.alphas if isinstance(self.alphas, (list, tuple)) else np.asarray(self.alphas).ravel()
        if any(isinstance(a, (bool, np.bool_)) for a in items):
            raise ValueError(f"The 'alphas' parameter of {type(self).__name__} must hold numbers, not booleans; "
                             f"got {self.alphas!r}")
        alphas = _alpha_values(self.alphas)  # as RidgePath's: ["1.0", 2.0] was parsed as [1.0, 2.0]
        if alphas is None:
            raise ValueError(f"The 'alphas' parameter of {type(self).__name__} must be a number or a sequence of "
                             f"numbers, not text; got {self.alphas!r}")
        if alphas.ndim != 1 or not len(alphas) or not np.isfinite(alphas).all() or (alphas < 0).any():
            raise ValueError(f"The 'alphas' parameter of {type(self).__name__} must be a non-empty 1-D sequence of "
                             f"finite non-negative numbers; got {self.alphas!r}")
        return alphas

    def _set_output_shape(self, y):
        self._1d = y.ndim == 1

    def _decision(self, X):
        """Φ W + b as an (n, k) array: distributed (a dask array) when X is one, else numpy."""
        check_is_fitted(self, "coef_")
        coef, intercept = self.coef_.T, self.intercept_
        if not is_dask_array(X):
            X = validate_data(self, X, reset=False, dtype=_FLOATS)
            return _predict_block(X, coef, intercept)
        return dask_call("decision", X, coef, intercept, self.n_features_in_, type(self).__name__)


class DistributedRidge(RegressorMixin, _RidgeBase):
    """Ridge regression (RLS) on numpy or dask arrays with validation-selected α.

    ``alphas`` use scikit-learn's ``Ridge`` convention (penalty α||w||² on the
    sum of squared errors; GURLS' λ = α/n). Validation error: mean squared
    error summed over outputs. Fitted: ``coef_`` (k, p), ``intercept_`` (k,),
    ``alpha_``, ``validation_errors_`` (one per α, None for a single α).
    ``y`` may have several outputs (2-D), as for ``Ridge``; ``predict`` then
    returns them all, and a 1-D ``y`` gives 1-D predictions.

    Parameters
    ----------
    alphas : float or array-like of floats >= 0, default=(1e-3, 1e-2, 1e-1, 1.0, 1e1, 1e2, 1e3)
        The penalties tried (finite numbers, not booleans or text); with several, the one of least validation
        error is kept.
    fit_intercept : bool, default=True
        Fit an unpenalised intercept (the moments are centred).
    validation_fraction : float in (0, 1), default=0.2
        Share of the rows held out (:func:`holdout_mask`) to choose α when there are several α and no
        ``X_val, y_val`` are given to :meth:`fit`.
    refit : bool, default=True
        With the hold-out: refit the chosen α on all rows (training and validation moments merged).
    split_every : int >= 2, default=8
        Fan-in of the tree reduction of the blocks' moments (dask arrays).
    random_state : int, RandomState, Generator or None, default=0
        Seed of the hold-out's hash (None is 0, so the split is reproducible; a RandomState or Generator
        draws one integer).

    Attributes
    ----------
    coef_ : ndarray of shape (n_targets, n_features)
        The weights W (one row per output; one row for a 1-D y).
    intercept_ : ndarray of shape (n_targets,)
    alpha_ : float
        The α chosen.
    alphas_ : ndarray of shape (n_alphas,)
        The α tried.
    validation_errors_ : ndarray of shape (n_alphas,) or None
        Validation mean squared error (summed over outputs) per α; None for a single α.
    n_train_ : int
        Rows the final model was fitted on.
    n_features_in_ : int
    feature_names_in_ : ndarray of shape (n_features,)
        Column names of an in-memory X that has them (a pandas DataFrame).

    Examples
    --------
    >>> import numpy as np
    >>> from orbitkernels.models import DistributedRidge
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(40, 5))
    >>> y = X @ np.arange(1.0, 6.0) + 0.1 * rng.normal(size=40)
    >>> reg = DistributedRidge(alphas=[0.01, 1.0, 100.0]).fit(X, y)  # α chosen on a 20 % hold-out, then refitted
    >>> reg.alpha_, reg.coef_.shape, reg.predict(X[:3]).shape
    (0.01, (1, 5), (3,))
    >>> [round(float(e), 3) for e in reg.validation_errors_]
    [0.015, 0.081, 16.879]

    The same fit from a dask array in blocks of 10 rows (the hold-out hashes the global row index, so it does
    not depend on the chunking):

    >>> import dask.array as da
    >>> Xd, yd = da.from_array(X, chunks=10), da.from_array(y, chunks=10)
    >>> reg_d = DistributedRidge(alphas=[0.01, 1.0, 100.0]).fit(Xd, yd)
    >>> np.allclose(reg_d.coef_, reg.coef_), reg_d.predict(Xd).compute().shape
    (True, (40,))
    """

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.multi_output = True  # the normal equations solve every column of Y at once
        return tags

    def _validate_numpy(self, X, y):
        X, y = validate_data(self, X, y, validate_separately=({"dtype": _FLOATS},
                                                             {"ensure_2d": False, "dtype": "numeric"}))
        check_consistent_length(X, y)
        return X, y

    def _check_target(self, y, name):
        if is_dask_array(y):
            return dask_call("check_array", y, name, ndims=(1, 2))
        return check_array(y, ensure_2d=False, dtype="numeric", input_name=name, estimator=self)

    def predict(self, X):
        """Predictions, 1-D when the training ``y`` was (a dask array when X is one)."""
        P = self._decision(X)
        return P[:, 0] if self._1d else P


class DistributedRidgeClassifier(ClassifierMixin, _RidgeBase):
    """RLS classifier (GURLS): ridge on ±1 one-hot targets, predicted class = argmax.

    Equals scikit-learn's ``RidgeClassifier(alpha)`` decisions for a single α,
    including its binary coding: with two classes ``coef_`` has one row and
    ``decision_function`` is 1-D, positive for ``classes_[1]``.
    The validation error is the misclassification rate. ``classes_`` are found
    with one pass over y only (``dask.array.unique``).

    Parameters
    ----------
    alphas : float or array-like of floats >= 0, default=(1e-3, 1e-2, 1e-1, 1.0, 1e1, 1e2, 1e3)
        The penalties tried (finite numbers, not booleans or text); with several, the one of least validation
        error is kept.
    fit_intercept : bool, default=True
        Fit an unpenalised intercept (the moments are centred).
    validation_fraction : float in (0, 1), default=0.2
        Share of the rows held out (:func:`holdout_mask`) to choose α when there are several α and no
        ``X_val, y_val`` are given to :meth:`fit`.
    refit : bool, default=True
        With the hold-out: refit the chosen α on all rows (training and validation moments merged).
    split_every : int >= 2, default=8
        Fan-in of the tree reduction of the blocks' moments (dask arrays).
    random_state : int, RandomState, Generator or None, default=0
        Seed of the hold-out's hash (None is 0, so the split is reproducible; a RandomState or Generator
        draws one integer).

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    coef_ : ndarray of shape (n_classes or 1, n_features)
        The weights W (one row per class; one row for two classes).
    intercept_ : ndarray of shape (n_classes or 1,)
    alpha_ : float
        The α chosen.
    alphas_ : ndarray of shape (n_alphas,)
        The α tried.
    validation_errors_ : ndarray of shape (n_alphas,) or None
        Validation misclassification rate per α; None for a single α.
    n_train_ : int
        Rows the final model was fitted on.
    n_features_in_ : int
    feature_names_in_ : ndarray of shape (n_features,)
        Column names of an in-memory X that has them (a pandas DataFrame).

    Examples
    --------
    >>> import numpy as np
    >>> from orbitkernels.models import DistributedRidgeClassifier
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(40, 5))
    >>> y = np.where(X[:, 0] + X[:, 1] > 0, "pos", "neg")
    >>> clf = DistributedRidgeClassifier(alphas=[0.1, 10.0]).fit(X, y)
    >>> clf.classes_.tolist(), clf.coef_.shape  # two classes: one row of weights, positive for "pos"
    (['neg', 'pos'], (1, 5))
    >>> clf.predict(X[:3]).tolist()
    ['pos', 'pos', 'neg']

    With a single α it is scikit-learn's ``RidgeClassifier``:

    >>> from sklearn.linear_model import RidgeClassifier
    >>> one = DistributedRidgeClassifier(alphas=1.0).fit(X, y)
    >>> np.allclose(one.decision_function(X), RidgeClassifier(alpha=1.0).fit(X, y).decision_function(X))
    True
    """

    _task = "classification"

    def _validate_numpy(self, X, y):
        X, y = validate_data(self, X, y, dtype=_FLOATS)
        check_classification_targets(y)
        return X, y

    def _check_target(self, y, name):
        if not is_dask_array(y):
            y = column_or_1d(check_array(y, ensure_2d=False, dtype=None, input_name=name, estimator=self), warn=True)
            check_classification_targets(y)
            return y
        # object labels as in memory (strings that pandas or a mixed source left as objects); what they hold is
        # checked on their distinct values (_encoder), as check_classification_targets does
        y = dask_call("check_array", y, name, kinds=_NUMERIC_KINDS + "USO", ndims=(1, 2))
        if y.ndim == 2:
            if y.shape[1] != 1:
                raise ValueError(f"{name} should be a 1d array, got a dask array of shape {y.shape} instead.")
            # the same warning as scikit-learn's column_or_1d(warn=True) for an in-memory column vector
            warnings.warn("A column-vector y was passed when a 1d array was expected. Please change the shape "
                          "of y to (n_samples, ), for example using ravel().", DataConversionWarning, stacklevel=3)
            y = y[:, 0]
        return y

    def _encoder(self, y):
        if is_dask_array(y):
            try:
                classes = dask_call("unique", y)
            except TypeError as exc:
                if y.dtype != object:
                    raise
                # numpy's bare "'<' not supported between instances of 'int' and 'str'" (in memory as well)
                raise TypeError(f"y holds labels of more than one type, which cannot be sorted into classes ({exc}); "
                                "pass labels of one type: all strings or all numbers") from exc
            check_classification_targets(classes)  # the type of target is decided by the distinct labels alone
        else:
            classes = np.unique(y)
        if len(classes) < 2:
            raise ValueError(f"y has only 1 class ({classes[0]!r}); a classifier needs at least 2 classes")
        self.classes_ = classes
        return _Encoder(classes)

    def decision_function(self, X):
        """Φ W + b: (n, n_classes), or (n,) for two classes (positive means ``classes_[1]``)."""
        P = self._decision(X)
        return P[:, 0] if P.shape[1] == 1 else P

    def predict(self, X):
        """The class of largest score (the sign of the score for two classes)."""
        P = self._decision(X)
        classes = self.classes_
        if is_dask_array(P):
            return dask_call("classes", P, classes)
        return _class_block(P, classes)

