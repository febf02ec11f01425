"""Scale-out on Dask: orbit feature maps and regularized least squares on chunked arrays.

Nothing here imports dask at module level, so ``orbitkernels`` works without the
``[dask]`` extra; the feature transformers reach this module only when they are
given a ``dask.array.Array`` (see :func:`is_dask_array`).

Feature maps (Mroueh et al. 2015 §2; Raj et al. 2017 Eq. 7-8)
    Every feature of the three maps is a function of one row and of the fitted
    state (templates, group elements, plan), so a row-chunked dask array is
    mapped block by block with the transformer's own in-memory ``transform``
    on the workers (:func:`transform_dask`). The fitted estimator is shipped
    once: as one key of the task graph (``ship="delayed"``) or replicated to
    every worker up front (``ship="scatter"``), never pickled per chunk.
    Results equal the in-memory ones for any chunking because no feature
    depends on another row.

    ``fit`` on a dask array (:func:`fit_dask`) is *defined* as the in-memory
    ``fit`` on the rows ``fit_sample_indices(n, sample_size, seed)``: all rows
    when ``n <= sample_size`` (then identical to the in-memory fit), else a
    uniform sample without replacement, sorted, gathered by the workers. Only
    those rows reach the client. GICDF and orbit Fourier templates do not
    depend on the data (only on its width), Nyström landmarks are random rows
    of the sample, i.e. random rows of X.

Regularized least squares (the RLS of GURLS; Raj et al. 2017 §4 train linear
models on the orbit features)
    :class:`DistributedRidge` and :class:`DistributedRidgeClassifier` minimise
    ``||Y - Φ W - 1 b^T||^2 + α ||W||^2`` (scikit-learn's ``Ridge`` convention;
    GURLS' λ is ``α / n``). One pass over the blocks accumulates the centred
    normal equations with the pairwise update of Chan, Golub & LeVeque (1979)
    as a tree reduction; the client eigendecomposes the p×p matrix once and
    gets the solution for every α. A second pass predicts the validation rows
    for every α blockwise and reduces only the error counts, so neither the
    data nor Φ_v^T Φ_v ever reaches the client.
"""
from __future__ import annotations

import sys

import numpy as np
import scipy.linalg
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin
from sklearn.utils.validation import check_is_fitted

from .utils.persistence import VersionedPickleMixin

__all__ = [
    "DistributedRidge",
    "DistributedRidgeClassifier",
    "FIT_SAMPLE_SIZE",
    "fit_dask",
    "fit_sample_indices",
    "holdout_mask",
    "is_dask_array",
    "transform_dask",
]

#: Rows drawn from a dask array to fit a feature map (all rows when there are fewer).
FIT_SAMPLE_SIZE = 10_000


def is_dask_array(X):
    """Whether ``X`` is a ``dask.array.Array``, without importing dask (it is loaded iff one exists)."""
    da = sys.modules.get("dask.array")
    return da is not None and isinstance(X, da.Array)


def _dask():
    try:
        import dask
        import dask.array as da
    except ImportError as exc:  # pragma: no cover - exercised only without the extra
        raise ImportError("this needs dask: pip install 'orbitkernels[dask]'") from exc
    return dask, da


def _current_client():
    try:
        from distributed import default_client
        return default_client()
    except (ImportError, ValueError):
        return None


def _ship(obj, ship):
    """One graph handle on ``obj``, so that the tasks of every block share one copy.

    "delayed": ``obj`` is one key of the graph, sent to one worker and fetched
    once by each other worker that needs it (recomputable if a worker dies).
    "scatter": replicated to all workers now with the current client
    (``broadcast=True``). "auto": "delayed" -- it works under every scheduler
    and survives the loss of every replica.
    """
    dask, _ = _dask()
    if ship in ("auto", "delayed"):
        return dask.delayed(obj, pure=False, traverse=False)
    if ship == "scatter":
        client = _current_client()
        if client is None:
            raise ValueError("ship='scatter' needs a running dask.distributed Client")
        return client.scatter(obj, broadcast=True, hash=False)
    raise ValueError(f"ship must be 'auto', 'delayed' or 'scatter'; got {ship!r}")


def _as_row_chunked(X, name="X"):
    if X.ndim != 2:
        raise ValueError(f"{name} must be 2-D; got a dask array of shape {X.shape}")
    if any(np.isnan(c) for c in X.chunks[0]):
        raise ValueError(f"{name} has unknown chunk sizes; call {name}.compute_chunk_sizes() first")
    return X.rechunk({1: -1}) if X.numblocks[1] != 1 else X


def _out_dtype(dtype):
    # validate_data(dtype=[float64, float32]) keeps float32, casts everything else to float64
    return np.dtype(np.float32) if np.dtype(dtype) == np.float32 else np.dtype(np.float64)


# ----------------------------------------------------------------------------
# feature maps
# ----------------------------------------------------------------------------
def _transform_block(block, estimator, n_out, dtype):
    if block.shape[0] == 0:
        return np.empty((0, n_out), dtype=dtype)
    return estimator.transform(block)


def transform_dask(estimator, X, *, ship="auto"):
    """``estimator.transform`` over a row-chunked dask array; returns a lazy dask array.

    Each block is transformed on a worker by the fitted estimator's own
    (in-memory, memory-bounded) ``transform``; the estimator travels once (see
    :func:`_ship`). Column chunks are merged first (a feature needs whole rows).
    """
    _as_row_chunked(X)
    check_is_fitted(estimator, "plan_")
    if X.shape[1] != estimator.n_features_in_:
        raise ValueError(f"X has {X.shape[1]} features, but {type(estimator).__name__} is expecting "
                         f"{estimator.n_features_in_} features as input")
    X = _as_row_chunked(X)
    n_out = estimator._n_features_out
    dtype = _out_dtype(X.dtype)
    state = _ship(estimator, ship)
    return X.map_blocks(_transform_block, state, n_out, dtype, dtype=dtype, chunks=(X.chunks[0], (n_out,)),
                        meta=np.empty((0, n_out), dtype=dtype), token=f"{type(estimator).__name__.lower()}-transform")


def _seed_from(random_state):
    """An integer seed for the fit sample, leaving an integer ``random_state``'s own stream untouched."""
    if random_state is None:
        return None
    if isinstance(random_state, (int, np.integer)):
        return [int(random_state), 0x5A3D]  # a distinct stream from the estimator's np.random.RandomState(seed)
    if isinstance(random_state, np.random.Generator):
        return int(random_state.integers(2**32))
    return int(random_state.randint(2**32))


def fit_sample_indices(n, sample_size=FIT_SAMPLE_SIZE, random_state=None):
    """Rows used to fit a feature map on ``n`` distributed rows: all when ``n <= sample_size``,
    else ``sample_size`` uniform without replacement (sorted), from ``random_state``."""
    if sample_size is None or n <= sample_size:
        return np.arange(n)
    rng = np.random.default_rng(_seed_from(random_state))
    return np.sort(rng.choice(n, size=int(sample_size), replace=False))


def fit_dask(estimator, X, y=None, *, sample_size=FIT_SAMPLE_SIZE):
    """Fit an orbit feature map on a dask array: the in-memory ``fit`` on
    ``X[fit_sample_indices(n, sample_size, estimator.random_state)]``.

    The sample is gathered by the workers and only it reaches the client.
    For ``n <= sample_size`` this is exactly ``estimator.fit(X.compute())``.
    """
    X = _as_row_chunked(X)
    idx = fit_sample_indices(X.shape[0], sample_size, getattr(estimator, "random_state", None))
    sample = X.compute() if len(idx) == X.shape[0] else X[idx].compute()
    y_sample = None
    if y is not None:
        y_sample = y[idx].compute() if is_dask_array(y) else np.asarray(y)[idx]
    estimator.fit(sample, y_sample)
    estimator.fit_sample_indices_ = idx
    return estimator


# ----------------------------------------------------------------------------
# blocks: one code path for numpy (one eager block) and dask (lazy delayed blocks)
# ----------------------------------------------------------------------------
class _Blocks:
    """Row blocks of (X, Y) with their global row offsets; eager for numpy, delayed for dask."""

    def __init__(self, X, Y):
        self.lazy = is_dask_array(X) or is_dask_array(Y)
        if not self.lazy:
            X = np.asarray(X)
            self.parts = [(X, np.asarray(Y), 0)] if Y is not None else [(X, None, 0)]
            self.n, self.n_features = X.shape
            return
        _, da = _dask()
        X = _as_row_chunked(X if is_dask_array(X) else da.from_array(np.asarray(X), chunks=(len(X), -1)))
        rows = X.chunks[0]
        xs = X.to_delayed().ravel()
        if Y is None:
            ys = [None] * len(xs)
        else:
            Y = Y if is_dask_array(Y) else da.from_array(np.asarray(Y), chunks=-1)
            if Y.shape[0] != X.shape[0]:
                raise ValueError(f"X has {X.shape[0]} rows but y has {Y.shape[0]}")
            Y = Y.rechunk((rows,) + ((-1,) if Y.ndim == 2 else ()))
            ys = Y.to_delayed().ravel()
        offsets = np.concatenate([[0], np.cumsum(rows)[:-1]]).astype(int)
        self.parts = list(zip(xs, ys, offsets.tolist()))
        self.n, self.n_features = X.shape

    def map(self, fn, *args):
        if not self.lazy:
            return [fn(x, y, off, *args) for x, y, off in self.parts]
        dask, _ = _dask()
        f = dask.delayed(fn, pure=True)
        return [f(x, y, off, *args) for x, y, off in self.parts]

    def reduce(self, items, combine, split_every):
        """Tree reduction: ``combine(list) -> item`` over groups of ``split_every``."""
        if not self.lazy:
            return combine(items)
        dask, _ = _dask()
        c = dask.delayed(combine, pure=True)
        while len(items) > 1:
            items = [c(items[i:i + split_every]) for i in range(0, len(items), split_every)]
        return items[0]

    def ship(self, obj):
        if not self.lazy:
            return obj
        dask, _ = _dask()
        return dask.delayed(obj, pure=False, traverse=False)

    def compute(self, *objs):
        if not self.lazy:
            return objs
        dask, _ = _dask()
        return dask.compute(*objs)


def holdout_mask(offset, n_rows, fraction, seed):
    """Validation rows among rows ``offset .. offset+n_rows-1``: a hash of the *global* row index
    (SplitMix64), so the split is the same whatever the chunking and needs no communication."""
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
            acc = _Moments(n, acc.mx + dx * (p.n / n), acc.my + dy * (p.n / n),
                           acc.cxx + p.cxx + f * np.outer(dx, dx), acc.cxy + p.cxy + f * np.outer(dx, dy))
        return acc


def _combine_pairs(parts):
    return tuple(_Moments.combine(list(group)) for group in zip(*parts))


class _Solution:
    """Ridge solutions for a grid of α from one eigendecomposition of the centred Gram matrix."""

    def __init__(self, mom, alphas):
        evals, V = scipy.linalg.eigh(mom.cxx)
        self.evals = np.maximum(evals, 0.0)
        self.V = V
        self.c = V.T @ mom.cxy  # (p, k)
        self.mx, self.my = mom.mx, mom.my
        self.alphas = np.asarray(alphas, dtype=float)

    def coef(self, i):
        return self.V @ (self.c / (self.evals + self.alphas[i])[:, None])

    def errors(self, X, Y, task):
        """Summed squared error (regression) or number of mistakes (classification) for every α."""
        A = (np.asarray(X, dtype=np.float64) - self.mx) @ self.V
        out = np.empty(len(self.alphas))
        for i, a in enumerate(self.alphas):
            P = A @ (self.c / (self.evals + a)[:, None]) + self.my
            out[i] = (P.argmax(axis=1) != Y.argmax(axis=1)).sum() if task == "classification" else ((P - Y) ** 2).sum()
        return out


def _block_moments(X, Y, offset, encode, center, holdout):
    """(train, validation) moments of one block; validation is empty without a hold-out."""
    Y = encode(Y)
    if holdout is None:
        return _Moments.of(X, Y, center), _Moments.of(X[:0], Y[:0], center)
    m = holdout_mask(offset, len(X), *holdout)
    return _Moments.of(X[~m], Y[~m], center), _Moments.of(X[m], Y[m], center)


def _block_errors(X, Y, offset, encode, solution, task, holdout):
    Y = encode(Y)
    if holdout is not None:
        m = holdout_mask(offset, len(X), *holdout)
        X, Y = X[m], Y[m]
    return np.concatenate([solution.errors(X, Y, task), [len(X)]])


def _sum_arrays(parts):
    return np.sum(parts, axis=0)


class _Encoder:
    """Targets to a float (n, k) matrix: ±1 one-hot for classes (GURLS / RidgeClassifier coding)."""

    def __init__(self, classes=None, squeeze=False):
        self.classes = classes
        self.squeeze = squeeze

    def __call__(self, y):
        y = np.asarray(y)
        if self.classes is None:
            return y.reshape(len(y), -1).astype(np.float64)
        idx = np.minimum(np.searchsorted(self.classes, y), len(self.classes) - 1)
        if len(y) and not np.array_equal(self.classes[idx], y):
            raise ValueError(f"y contains labels not seen in the training targets (classes: {self.classes!r})")
        Y = -np.ones((len(y), len(self.classes)))
        Y[np.arange(len(y)), idx] = 1.0
        return Y


def _predict_block(X, coef, intercept):
    return np.asarray(X, dtype=np.float64) @ coef + intercept


def _decision_block(X, state):
    return _predict_block(X, *state)


def _class_block(P, classes):
    return classes[P.argmax(axis=1)]


class _RidgeBase(VersionedPickleMixin, BaseEstimator):
    _task = "regression"

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

    def fit(self, X, y, X_val=None, y_val=None):
        """Fit on numpy or row-chunked dask arrays, selecting α on validation data.

        With several ``alphas`` the validation data are ``(X_val, y_val)`` when
        given (the model stays trained on ``X`` alone), else the rows picked by
        :func:`holdout_mask` with ``validation_fraction`` (then, with
        ``refit=True``, the chosen α is refitted on all rows at no extra pass:
        the moments of both parts are merged). Ties go to the largest α.
        """
        alphas = np.atleast_1d(np.asarray(self.alphas, dtype=float))
        if alphas.ndim != 1 or not len(alphas) or (alphas < 0).any():
            raise ValueError(f"alphas must be a non-empty 1-D sequence of non-negative numbers; got {self.alphas!r}")
        if not (0.0 < float(self.validation_fraction) < 1.0):
            raise ValueError(f"validation_fraction must be in (0, 1); got {self.validation_fraction!r}")
        split_every = int(self.split_every)
        if split_every < 2:
            raise ValueError(f"split_every must be >= 2; got {self.split_every!r}")
        encode = self._encoder(y)
        blocks = _Blocks(X, y)
        if blocks.n < 1:
            raise ValueError("X has no rows")
        select = len(alphas) > 1
        holdout = None
        if select and X_val is None:
            holdout = (float(self.validation_fraction), int(self.random_state or 0))
        enc = blocks.ship(encode)
        pair = blocks.reduce(blocks.map(_block_moments, enc, bool(self.fit_intercept), holdout),
                             _combine_pairs, split_every)
        (train, val), = blocks.compute(pair)
        errors = None
        if select:
            if train.n < 1:
                raise ValueError("no training rows left after the validation hold-out")
            solution = _Solution(train, alphas)
            vblocks = blocks if holdout is not None else _Blocks(X_val, y_val)
            sol = vblocks.ship(solution)
            tot = vblocks.reduce(vblocks.map(_block_errors, vblocks.ship(encode), sol, self._task, holdout),
                                 _sum_arrays, split_every)
            (tot,) = vblocks.compute(tot)
            if tot[-1] < 1:
                raise ValueError("the validation set is empty; raise validation_fraction or pass X_val")
            errors = tot[:-1] / tot[-1]
            best = int(np.flatnonzero(errors == errors.min())[np.argmax(alphas[errors == errors.min()])])
        else:
            best = 0
        if holdout is not None and self.refit:
            train = _Moments.combine([train, val])
        final = _Solution(train, alphas[best:best + 1])
        coef = final.coef(0)
        self.coef_ = coef.T
        self.intercept_ = train.my - train.mx @ coef
        self.alpha_ = float(alphas[best])
        self.alphas_ = alphas
        self.validation_errors_ = errors
        self.n_features_in_ = blocks.n_features
        self.n_train_ = int(train.n)
        self._set_output_shape(y)
        return self

    def _set_output_shape(self, y):
        self._1d = getattr(y, "ndim", 1) == 1

    def decision_function(self, X):
        """Φ W + b, distributed (a dask array) when X is one, else numpy."""
        check_is_fitted(self, "coef_")
        coef, intercept = self.coef_.T, self.intercept_
        if X.shape[1] != self.n_features_in_:
            raise ValueError(f"X has {X.shape[1]} features; expected {self.n_features_in_}")
        if not is_dask_array(X):
            return _predict_block(X, coef, intercept)
        X = _as_row_chunked(X)
        k = coef.shape[1]
        state = _ship((coef, intercept), "delayed")
        return X.map_blocks(_decision_block, state, dtype=np.float64,
                            chunks=(X.chunks[0], (k,)), meta=np.empty((0, k)))


class DistributedRidge(RegressorMixin, _RidgeBase):
    """Ridge regression (RLS) on numpy or dask arrays with validation-selected α.

    ``alphas`` use scikit-learn's ``Ridge`` convention (penalty α||w||² on the
    sum of squared errors; GURLS' λ = α/n). Validation error: mean squared
    error summed over outputs. Fitted: ``coef_`` (k, p), ``intercept_`` (k,),
    ``alpha_``, ``validation_errors_`` (one per α, None for a single α).
    """

    def predict(self, X):
        P = self.decision_function(X)
        return P[:, 0] if self._1d else P


class DistributedRidgeClassifier(ClassifierMixin, _RidgeBase):
    """RLS classifier (GURLS): ridge on ±1 one-hot targets, predicted class = argmax.

    Equals scikit-learn's ``RidgeClassifier(alpha)`` decisions for a single α.
    The validation error is the misclassification rate. ``classes_`` are found
    with one pass over y only (``dask.array.unique``).
    """

    _task = "classification"

    def _encoder(self, y):
        if is_dask_array(y):
            _, da = _dask()
            classes = da.unique(y).compute()
        else:
            classes = np.unique(np.asarray(y))
        if len(classes) < 2:
            raise ValueError(f"need at least two classes; got {classes!r}")
        self.classes_ = classes
        return _Encoder(classes)

    def predict(self, X):
        P = self.decision_function(X)
        classes = self.classes_
        if is_dask_array(P):
            return P.map_blocks(_class_block, classes, drop_axis=1, dtype=classes.dtype,
                                meta=np.empty((0,), dtype=classes.dtype))
        return classes[P.argmax(axis=1)]
