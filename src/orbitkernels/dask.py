"""Dask adapter: orbit feature maps and the distributed ridge models on chunked dask arrays.

The layer above the core (utils ← groups ← features/kernels ← models ← **this** ← experiments ← cli).
Nothing here imports dask at module level, so ``orbitkernels`` works without the ``[dask]`` extra. The
core never imports this module: feature maps and :class:`~orbitkernels.models.DistributedRidge` ask
:func:`orbitkernels.utils.dispatch.dask_call` for an operation by name when a dask array arrives, and
that imports this module by name, which registers its operations (bottom of the file).

Feature maps (Mroueh et al. 2015 §2; Raj et al. 2017 Eq. 7-8)
    Every feature of the three maps is a function of one row and of the fitted
    state (templates, group elements, plan), so a row-chunked dask array is
    mapped block by block with the transformer's own in-memory ``transform``
    on the workers (:func:`transform_dask`). The fitted estimator is shipped
    once: as one key of the task graph (``ship="delayed"``) or replicated to
    every worker up front (``ship="scatter"``), never pickled per chunk.
    Results equal the in-memory ones for any chunking because no feature
    depends on another row.

    ``fit`` on a dask array is *defined* as the in-memory ``fit`` on the rows
    ``fit_sample_indices(n, sample_size, seed)``: all rows when
    ``n <= sample_size`` (then identical to the in-memory fit), else a uniform
    sample without replacement, sorted, gathered by the workers
    (:func:`fit_sample`; the feature map then fits on it in memory). Only those
    rows reach the client. GICDF and orbit Fourier templates do not depend on
    the data (only on its width), Nyström landmarks are random rows of the
    sample, i.e. random rows of X.

Regularized least squares (:mod:`orbitkernels.models.distributed_ridge`)
    The models accumulate the moments of the ridge problem block by block; this
    module supplies the lazy blocks (:class:`DaskBlocks`: delayed tasks and a tree
    reduction), the metadata checks of a dask array and the blockwise prediction.
"""
from __future__ import annotations

import copy
import warnings

import numpy as np
from sklearn.utils.validation import check_is_fitted

from .models.distributed_ridge import _NUMERIC_KINDS, _class_block, _decision_block
from .utils.dispatch import is_dask_array, register
from .utils.validation import check_int, check_not_text

__all__ = [
    "DaskBlocks",
    "FIT_SAMPLE_SIZE",
    "check_dask_array",
    "fit_dask",
    "fit_sample",
    "fit_sample_indices",
    "is_dask_array",
    "transform_dask",
]

#: Rows drawn from a dask array to fit a feature map (all rows when there are fewer).
FIT_SAMPLE_SIZE = 10_000


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
    if not is_dask_array(X):  # the public fit_dask/transform_dask met numpy with an AttributeError on .chunks
        raise TypeError(f"{name} must be a dask array; got {type(X).__name__} (the estimator's own fit and "
                        "transform take in-memory arrays)")
    _check_dask_meta(X, name)
    if X.ndim != 2:
        raise ValueError(f"{name} must be 2-D; got a dask array of shape {X.shape}")
    if any(np.isnan(c) for c in X.chunks[0]):
        raise ValueError(f"{name} has unknown chunk sizes; call {name}.compute_chunk_sizes() first")
    return X.rechunk({1: -1}) if X.numblocks[1] != 1 else X


def _check_dask_meta(X, name):
    """Refuse at the call what the blocks' in-memory checks would refuse only at compute time, and that the
    metadata already answer: sparse or non-numpy blocks, complex, text and time dtypes."""
    meta = getattr(X, "_meta", None)
    if meta is not None and not isinstance(meta, np.ndarray):
        raise TypeError(f"{name} is a dask array of {type(meta).__module__}.{type(meta).__name__} blocks; sparse "
                        "or non-numpy blocks are not supported, dense numpy blocks are required")
    if X.dtype.kind == "c":
        raise ValueError(f"{name} has dtype {X.dtype}: complex data is not supported")
    check_not_text(np.empty((0, 0), dtype=X.dtype), name)  # the in-memory rule for text and time dtypes


def _out_dtype(dtype):
    # validate_data(dtype=[float64, float32]) keeps float32, casts everything else to float64; big-endian float32
    # is kept float32 too (features._base.as_native_float), and '>f4' != float32, so compare kind and size
    dtype = np.dtype(dtype)
    return np.dtype(np.float32) if dtype.kind == "f" and dtype.itemsize == 4 else np.dtype(np.float64)


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
    (in-memory, memory-bounded) ``transform``; the estimator travels once.
    Column chunks are merged first (a feature needs whole rows). The result
    equals the in-memory transform for any chunking.

    Parameters
    ----------
    estimator : fitted orbit feature map
        :class:`~orbitkernels.features.GroupCDFFeatures`,
        :class:`~orbitkernels.features.OrbitFourierFeatures` or
        :class:`~orbitkernels.features.OrbitNystroem`.
    X : dask.array.Array of shape (n_samples, n_features)
        Dense numpy blocks of real numbers, known chunk sizes, at least one row.
    ship : {"auto", "delayed", "scatter"}, default="auto"
        How the estimator reaches the workers: "delayed", one key of the task
        graph, fetched once by each worker that needs it; "scatter", replicated
        to every worker now by the running ``dask.distributed`` client (an error
        without one); "auto" is "delayed".

    Returns
    -------
    dask.array.Array of shape (n_samples, n_features_out)
        Lazy; the row chunks of ``X``, one column chunk; float32 when ``X`` is
        float32, else float64.

    Raises
    ------
    TypeError
        ``X`` is not a dask array, or its blocks are not dense numpy arrays.
    ValueError
        ``X`` is not 2-D, has unknown chunk sizes, no rows, complex or text data,
        or another number of features than the fit; ``ship`` is unknown.
    sklearn.exceptions.NotFittedError
        ``estimator`` is not fitted.

    Examples
    --------
    >>> import dask
    >>> import dask.array as da
    >>> import numpy as np
    >>> from orbitkernels.dask import transform_dask
    >>> from orbitkernels.features import GroupCDFFeatures
    >>> from orbitkernels.groups import CyclicShift
    >>> X = np.random.default_rng(0).normal(size=(20, 8))
    >>> gicdf = GroupCDFFeatures(CyclicShift(8), n_templates=4, n_bins=5, random_state=0).fit(X)
    >>> F = transform_dask(gicdf, da.from_array(X, chunks=(5, 8)))  # lazy: nothing computed yet
    >>> F.shape, F.chunks[0]
    ((20, 44), (5, 5, 5, 5))
    >>> with dask.config.set(scheduler="synchronous"):
    ...     F_computed = F.compute()
    >>> np.allclose(F_computed, gicdf.transform(X))  # the in-memory transform, whatever the chunks
    True
    """
    _as_row_chunked(X)
    check_is_fitted(estimator, "plan_")
    if X.shape[1] != estimator.n_features_in_:
        raise ValueError(f"X has {X.shape[1]} features, but {type(estimator).__name__} is expecting "
                         f"{estimator.n_features_in_} features as input")
    if X.shape[0] == 0:  # the in-memory transform refuses 0 rows; the lazy one returned an empty array
        raise ValueError(f"Found array with 0 sample(s) (shape={X.shape}) while a minimum of 1 is required by "
                         f"{type(estimator).__name__}: X has no rows")
    X = _as_row_chunked(X)
    n_out = estimator._n_features_out
    dtype = _out_dtype(X.dtype)
    estimator = copy.copy(estimator)  # shallow: the fitted arrays are shared, not copied
    if getattr(estimator, "verbose", 0):
        # a bar per block, from every worker thread at once, would garble stderr: dask's own progress bar
        # (dask.diagnostics.ProgressBar, distributed's dashboard) counts the blocks instead
        estimator.verbose = 0
    if hasattr(estimator, "set_output"):
        # numpy blocks whatever the user's set_output: pandas blocks were stacked into an object-dtype array. The
        # configuration dict is the original's in a shallow copy: copied before set_output writes to it
        estimator._sklearn_output_config = dict(getattr(estimator, "_sklearn_output_config", {}))
        estimator.set_output(transform="default")
    state = _ship(estimator, ship)
    with warnings.catch_warnings():
        # the keys' prefix is `token=` in current dask (where `name=` is the whole key); dask 2024.1, our lower
        # bound, takes `token=` as that prefix too but warns that it moved to `name=`, once per transform
        warnings.filterwarnings("ignore", message="The `token=` keyword to `map_blocks`", category=FutureWarning)
        return X.map_blocks(_transform_block, state, n_out, dtype, dtype=dtype, chunks=(X.chunks[0], (n_out,)),
                            meta=np.empty((0, n_out), dtype=dtype),
                            token=f"{type(estimator).__name__.lower()}-transform")


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
    else ``sample_size`` uniform without replacement (sorted), from ``random_state``.

    Parameters
    ----------
    n : int >= 0
        Number of rows.
    sample_size : int >= 1 or None, default=FIT_SAMPLE_SIZE
        Largest number of rows to use (``FIT_SAMPLE_SIZE`` = 10,000); None: every row.
    random_state : int, RandomState instance, Generator or None, default=None
        The estimator's ``random_state``. An int gives the same rows at every call
        (from a stream distinct from the estimator's own ``RandomState(seed)``).

    Returns
    -------
    ndarray of int
        Increasing row indices.

    Examples
    --------
    >>> import numpy as np
    >>> from orbitkernels.dask import fit_sample_indices
    >>> fit_sample_indices(5, sample_size=10).tolist()  # no more rows than sample_size: every row
    [0, 1, 2, 3, 4]
    >>> idx = fit_sample_indices(1000, sample_size=5, random_state=0)
    >>> len(idx), bool(np.all(np.diff(idx) > 0))
    (5, True)
    >>> np.array_equal(idx, fit_sample_indices(1000, sample_size=5, random_state=0))  # an int: the same rows
    True
    """
    if sample_size is not None and (isinstance(sample_size, (bool, np.bool_))
                                    or not isinstance(sample_size, (int, np.integer)) or sample_size < 1):
        # 2.5 or True were taken as 2 or 1 rows, -5 failed inside numpy, '10' with a bare TypeError
        raise ValueError(f"sample_size must be None or an integer >= 1; got {sample_size!r}")
    n = check_int(n, "n", min_value=0)  # -1 rows gave an empty sample, 2.5 rows np.arange(2.5)
    if sample_size is None or n <= sample_size:
        return np.arange(n)
    rng = np.random.default_rng(_seed_from(random_state))
    return np.sort(rng.choice(n, size=int(sample_size), replace=False))


def fit_sample(estimator, X, y=None, *, sample_size=FIT_SAMPLE_SIZE):
    """The rows a feature map fits on when given a dask array: ``X[fit_sample_indices(n, sample_size,
    estimator.random_state)]`` (and those of ``y``), gathered by the workers; only they reach the client.

    Sets ``estimator.fit_sample_indices_``; the feature map's own ``fit`` goes on with the sample in
    memory (no call back into ``fit``).

    Parameters
    ----------
    estimator : orbit feature map
        Its ``random_state`` (if any) draws the sample.
    X : dask.array.Array of shape (n_samples, n_features)
        Dense numpy blocks, known chunk sizes.
    y : array-like or dask.array.Array of shape (n_samples, ...), default=None
        Targets, sampled with the same rows.
    sample_size : int >= 1 or None, default=FIT_SAMPLE_SIZE
        See :func:`fit_sample_indices`.

    Returns
    -------
    X_sample : ndarray of shape (n_sample, n_features)
    y_sample : ndarray or None
        None when ``y`` is None.

    Examples
    --------
    >>> import dask
    >>> import dask.array as da
    >>> import numpy as np
    >>> from orbitkernels.dask import fit_sample
    >>> from orbitkernels.features import GroupCDFFeatures
    >>> from orbitkernels.groups import CyclicShift
    >>> X = np.random.default_rng(0).normal(size=(20, 8))
    >>> gicdf = GroupCDFFeatures(CyclicShift(8), n_templates=4, random_state=0)
    >>> with dask.config.set(scheduler="synchronous"):
    ...     X_sample, y_sample = fit_sample(gicdf, da.from_array(X, chunks=(5, 8)), np.arange(20), sample_size=5)
    >>> X_sample.shape, y_sample.shape
    ((5, 8), (5,))
    >>> rows = gicdf.fit_sample_indices_
    >>> np.array_equal(X_sample, X[rows]), np.array_equal(y_sample, rows)  # the same rows of X and y
    (True, True)
    """
    X = _as_row_chunked(X)
    if y is not None:  # indexing y by the sampled rows failed with a bare IndexError or dask's chunk error
        shape = np.shape(y)
        if shape and np.isnan(shape[0]):
            raise ValueError("y has unknown chunk sizes; call y.compute_chunk_sizes() first")
        if not shape or shape[0] != X.shape[0]:
            raise ValueError(f"Found input variables with inconsistent numbers of samples: X has {X.shape[0]} rows "
                             f"but y has shape {shape}")
    idx = fit_sample_indices(X.shape[0], sample_size, getattr(estimator, "random_state", None))
    sample = X.compute() if len(idx) == X.shape[0] else X[idx].compute()
    y_sample = None
    if y is not None:
        y_sample = y[idx].compute() if is_dask_array(y) else np.asarray(y)[idx]
    estimator.fit_sample_indices_ = idx
    return sample, y_sample


def fit_dask(estimator, X, y=None, *, sample_size=FIT_SAMPLE_SIZE):
    """Fit an orbit feature map on a dask array: the in-memory ``fit`` on
    ``X[fit_sample_indices(n, sample_size, estimator.random_state)]`` (:func:`fit_sample`).

    For ``n <= sample_size`` this is exactly ``estimator.fit(X.compute())``.

    Parameters
    ----------
    estimator : orbit feature map
        Fitted in place.
    X : dask.array.Array of shape (n_samples, n_features)
        Dense numpy blocks, known chunk sizes.
    y : array-like or dask.array.Array, default=None
        Passed on to ``fit`` (sampled with the same rows).
    sample_size : int >= 1 or None, default=FIT_SAMPLE_SIZE
        See :func:`fit_sample_indices`.

    Returns
    -------
    estimator
        The fitted estimator, with ``fit_sample_indices_`` (the rows it was fitted on).

    Examples
    --------
    >>> import dask
    >>> import dask.array as da
    >>> import numpy as np
    >>> from orbitkernels.dask import fit_dask
    >>> from orbitkernels.features import GroupCDFFeatures
    >>> from orbitkernels.groups import CyclicShift
    >>> X = np.random.default_rng(0).normal(size=(20, 8))
    >>> with dask.config.set(scheduler="synchronous"):
    ...     gicdf = fit_dask(GroupCDFFeatures(CyclicShift(8), n_templates=4, random_state=0),
    ...                      da.from_array(X, chunks=(5, 8)))
    >>> len(gicdf.fit_sample_indices_)  # 20 rows <= sample_size: fitted on every row
    20
    >>> in_memory = GroupCDFFeatures(CyclicShift(8), n_templates=4, random_state=0).fit(X)
    >>> np.array_equal(gicdf.transform(X), in_memory.transform(X))
    True
    """
    sample, y_sample = fit_sample(estimator, X, y, sample_size=sample_size)
    idx = estimator.fit_sample_indices_
    estimator.fit(sample, y_sample)
    estimator.fit_sample_indices_ = idx
    return estimator


# ----------------------------------------------------------------------------
# the distributed ridge models: lazy blocks, metadata checks, blockwise prediction
# ----------------------------------------------------------------------------
class DaskBlocks:
    """Row blocks of (X, Y) as delayed tasks with their global row offsets (the lazy counterpart of
    :class:`orbitkernels.models.distributed_ridge._Blocks`, with the same interface).

    Parameters
    ----------
    X : dask.array.Array or array-like of shape (n_samples, n_features)
        A numpy array becomes one block; column chunks are merged.
    Y : dask.array.Array, array-like of shape (n_samples,) or (n_samples, k), or None
        Rechunked to the row chunks of ``X``.

    Attributes
    ----------
    parts : list of (delayed X block, delayed Y block or None, int row offset)
    n, n_features : int
        The shape of ``X``.

    Examples
    --------
    >>> import dask
    >>> import dask.array as da
    >>> import numpy as np
    >>> from orbitkernels.dask import DaskBlocks
    >>> X = np.arange(12.0).reshape(6, 2)
    >>> blocks = DaskBlocks(da.from_array(X, chunks=(2, 2)), np.ones(6))
    >>> blocks.n, blocks.n_features, [offset for _, _, offset in blocks.parts]
    (6, 2, [0, 2, 4])
    >>> parts = blocks.map(lambda x, y, offset: x.T @ y)  # one delayed task per block
    >>> total = blocks.reduce(parts, sum, split_every=2)  # a tree of delayed sums
    >>> with dask.config.set(scheduler="synchronous"):
    ...     (result,) = blocks.compute(total)
    >>> result.tolist()
    [30.0, 36.0]
    """

    lazy = True

    def __init__(self, X, Y):
        _, da = _dask()
        X = _as_row_chunked(X if is_dask_array(X) else da.from_array(np.asarray(X), chunks=(len(X), -1)))
        rows = X.chunks[0]
        xs = X.to_delayed().ravel()
        if Y is None:
            ys = [None] * len(xs)
        else:
            Y = Y if is_dask_array(Y) else da.from_array(np.asarray(Y), chunks=-1)
            Y = Y.rechunk((rows,) + ((-1,) if Y.ndim == 2 else ()))
            ys = Y.to_delayed().ravel()
        offsets = np.concatenate([[0], np.cumsum(rows)[:-1]]).astype(int)
        self.parts = list(zip(xs, ys, offsets.tolist()))
        self.n, self.n_features = X.shape

    def map(self, fn, *args):
        dask, _ = _dask()
        f = dask.delayed(fn, pure=True)
        return [f(x, y, off, *args) for x, y, off in self.parts]

    def reduce(self, items, combine, split_every):
        """Tree reduction: ``combine(list) -> item`` over groups of ``split_every``."""
        dask, _ = _dask()
        c = dask.delayed(combine, pure=True)
        while len(items) > 1:
            items = [c(items[i:i + split_every]) for i in range(0, len(items), split_every)]
        return items[0]

    def ship(self, obj):
        dask, _ = _dask()
        return dask.delayed(obj, pure=False, traverse=False)

    def compute(self, *objs):
        dask, _ = _dask()
        return dask.compute(*objs)


def check_dask_array(A, name, *, kinds=_NUMERIC_KINDS, ndims=(2,)):
    """The part of scikit-learn's ``check_array`` that a dask array answers from its metadata alone:
    dense numpy blocks, dimensions, dtype, known and non-zero sizes. Finiteness needs the data and is
    counted blockwise by the pass over the blocks (``_block_moments``, ``_decision_block`` of the models).

    Parameters
    ----------
    A : dask.array.Array
        The array to check.
    name : str
        Its name in the error messages.
    kinds : str, default="biuf"
        Accepted ``dtype.kind`` letters (booleans, integers, floats).
    ndims : tuple of int, default=(2,)
        Accepted numbers of dimensions.

    Returns
    -------
    dask.array.Array
        ``A`` itself.

    Raises
    ------
    TypeError
        Sparse or other non-numpy blocks.
    ValueError
        Another number of dimensions, a dtype of another kind (complex, text...),
        unknown chunk sizes, no rows, or (2-D) no columns.

    Examples
    --------
    >>> import dask.array as da
    >>> from orbitkernels.dask import check_dask_array
    >>> A = da.ones((6, 3), chunks=(2, 3))
    >>> check_dask_array(A, "X") is A
    True
    >>> check_dask_array(A.astype(complex), "X")  # answered from the metadata: nothing is computed
    Traceback (most recent call last):
        ...
    ValueError: X has dtype complex128: complex data is not supported
    """
    meta = getattr(A, "_meta", None)
    if meta is not None and not isinstance(meta, np.ndarray):
        raise TypeError(f"{name} is a dask array of {type(meta).__module__}.{type(meta).__name__} blocks; sparse "
                        "or non-numpy blocks are not supported, dense numpy blocks are required")
    if A.ndim not in ndims:
        want = " or ".join(f"{d}-D" for d in ndims)
        raise ValueError(f"{name} must be {want}; got a dask array of shape {A.shape}")
    if A.dtype.kind not in kinds:
        why = "complex data is not supported" if A.dtype.kind == "c" else "expected a numeric dtype"
        raise ValueError(f"{name} has dtype {A.dtype}: {why}")
    if any(np.isnan(s) for s in A.shape):
        raise ValueError(f"{name} has unknown chunk sizes (shape {A.shape}); call {name}.compute_chunk_sizes() first")
    if A.shape[0] < 1:
        raise ValueError(f"Found array with 0 sample(s) (shape={A.shape}) while a minimum of 1 is required: "
                         f"{name} has no rows")
    if A.ndim == 2 and A.shape[1] < 1:
        raise ValueError(f"Found array with 0 feature(s) (shape={A.shape}) while a minimum of 1 is required: "
                         f"{name} has no columns")
    return A



def decision_dask(X, coef, intercept, n_features_in, estimator_name):
    """Φ W + b blockwise on a dask ``X``: a lazy (n, k) dask array; the coefficients travel once."""
    X = check_dask_array(X, "X")
    if X.shape[1] != n_features_in:
        raise ValueError(f"X has {X.shape[1]} features, but {estimator_name} is expecting "
                         f"{n_features_in} features as input")
    X = _as_row_chunked(X)
    k = coef.shape[1]
    # a list, not a tuple: a graph value that is a tuple starting with an array breaks the slice optimisation of
    # dask 2024.1, the oldest the extras allow ("truth value of an array ... is ambiguous" at the first compute)
    state = _ship([coef, intercept], "delayed")
    return X.map_blocks(_decision_block, state, dtype=np.float64,
                        chunks=(X.chunks[0], (k,)), meta=np.empty((0, k)))


def classes_dask(P, classes):
    """The predicted class of every row of the lazy decision ``P``."""
    return P.map_blocks(_class_block, classes, drop_axis=1, dtype=classes.dtype,
                        meta=np.empty((0,), dtype=classes.dtype))


def unique_dask(y):
    """The distinct labels of a dask ``y`` (one pass over y only)."""
    _, da = _dask()
    return da.unique(y).compute()


# what the core may ask for (orbitkernels.utils.dispatch.dask_call), registered on import
register("fit_sample", fit_sample)
register("transform", transform_dask)
register("blocks", DaskBlocks)
register("check_array", check_dask_array)
register("decision", decision_dask)
register("classes", classes_dask)
register("unique", unique_dask)
