"""Shared scikit-learn plumbing of the three orbit feature maps."""
from __future__ import annotations

import warnings

import numpy as np
import sklearn
from sklearn.base import BaseEstimator, ClassNamePrefixFeaturesOutMixin, TransformerMixin, _fit_context
from sklearn.utils._param_validation import StrOptions
from sklearn.utils.validation import check_array, check_is_fitted, validate_data

from ..backends import BACKENDS
from ..groups.base import Group, resolve_elements, resolve_group
from ..utils.dispatch import dask_call, is_dask_array
from ..utils.params import ReplacesNestedParams
from ..utils.persistence import IncompatibleVersionError, VersionedPickleMixin
from ..utils.progress import progress
from ..utils.validation import (
    RANDOM_STATE_CONSTRAINT,
    all_finite,
    check_budget,
    check_int,
    check_not_text,
    check_param_again,
    check_random_state,
    count_constraint,
    device_constraints,
    float64_block,
    keeps_integer_rows,
    positive_real_constraint,
)
from ._engine import (
    DEFAULT_MAX_MEMORY_MB,
    DTYPES,
    FAST_PATHS,
    ProjectionPlan,
)

__all__ = ["OrbitFeaturesBase", "IncompatibleVersionError", "SAMPLING_OPTIONS", "as_native_float",
           "average_over_copies"]


#: sklearn pairwise kernels with k(gx, gz) = k(x, z) for every unitary g
UNITARY_INVARIANT_KERNELS = frozenset({"rbf", "linear", "poly", "polynomial", "sigmoid", "cosine"})

#: how group elements are drawn (``resolve_elements``): "qmc" low-variance (stratified grid /
#: randomised lattice), "iid" the papers' independent draws from q
SAMPLING_OPTIONS = ("qmc", "iid")

def as_native_float(X):
    """A float array in non-native byte order (``'>f4'`` on a little-endian machine) in native order.

    scikit-learn's ``validate_data(dtype=[float64, float32])`` compares dtypes with
    their byte order, so big-endian float32 silently became float64; the values
    are the same, only the representation changes (float32 in, float32 out).
    """
    dt = getattr(X, "dtype", None)
    if isinstance(X, np.ndarray) and dt.kind == "f" and not dt.isnative:
        return X.astype(dt.newbyteorder("="))
    return X


class OrbitFeaturesBase(VersionedPickleMixin, ReplacesNestedParams, ClassNamePrefixFeaturesOutMixin, TransformerMixin,
                        BaseEstimator):
    """Common ``fit``/``transform`` of the orbit feature maps.

    Subclasses implement ``_draw_templates(X, rng)``, ``_pool_spec()`` (their pooling as
    an engine pooling object, :class:`~orbitkernels.features._engine.CDFPool`, ``TrigPool``
    or ``LinearPool``, which runs on every back-end: the one implementation of each
    nonlinearity) and ``_n_features_out``; every map also takes the engine
    options ``fast_path``, ``dtype``, ``backend`` and ``device``; the engine
    (:class:`~orbitkernels.features._engine.ProjectionPlan`) does the
    group-transformed projections in memory-bounded chunks. Pickles carry the
    library version and refuse another one
    (:class:`~orbitkernels.utils.persistence.VersionedPickleMixin`).

    Parameters are declared once in ``_parameter_constraints`` (scikit-learn's
    vocabulary) and checked when ``fit`` starts. Everything ``transform`` and the
    output size depend on is fitted state (``*_`` attributes), so ``set_params``
    after ``fit`` changes nothing until the next ``fit``; the live parameters are
    ``max_memory_mb``, which changes how the work is chunked, never the result, and
    ``verbose``.
    """

    _define_on_templates = False

    _parameter_constraints: dict = {
        "group": [Group, None],
        "n_group_samples": [count_constraint(), None],
        "sampling": [StrOptions(set(SAMPLING_OPTIONS))],
        "action": [StrOptions({"auto", "templates", "data"})],
        "random_state": RANDOM_STATE_CONSTRAINT,
        "max_memory_mb": [positive_real_constraint()],
        "fast_path": [StrOptions(set(FAST_PATHS))],
        "dtype": [StrOptions(set(DTYPES)), None],
        "backend": [StrOptions(set(BACKENDS))],
        "device": device_constraints(),
        "verbose": ["verbose"],
    }

    def _validate_X(self, X, reset, keep_integers=False):
        check_not_text(X, "X")
        if keep_integers and keeps_integer_rows(X):
            # integer or boolean rows (images of uint8; a DataFrame of such columns: their common type) stay as they
            # are, converted to float64 block by block in _map: converted whole, 20000 MNIST-sized rows of uint8 took
            # 125 MB beside a 16 MB budget
            X = validate_data(self, X, reset=reset, dtype=None)
        else:
            X = validate_data(self, as_native_float(X), reset=reset, dtype=[np.float64, np.float32])
        group = resolve_group(self.group if reset else getattr(self, "group_", self.group))
        n = group.n_features
        if n is not None and X.shape[1] != n:
            raise ValueError(
                f"{type(group).__name__} acts on rows of {n} features ({group._shape_text()}); X has {X.shape[1]}"
            )
        return X

    def _invariant_similarity(self, group):
        return True

    def _similarity(self):
        """What the templates are compared with: "dot" (<g x, t>) or a scikit-learn pairwise kernel name."""
        return "dot"

    def _kernel_params(self):
        return None

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None):
        """Draw the templates and the group elements (all randomness is here).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training rows (float32 stays float32, other numbers become float64; text is
            refused). A Dask array is fitted on a sample of its rows
            (``orbitkernels.dask.fit_sample``, which sets ``fit_sample_indices_``).
        y : None
            Ignored.

        Returns
        -------
        self : object
            The fitted feature map.
        """
        if is_dask_array(X):  # scale-out: the Dask adapter, imported by name on first use (utils.dispatch)
            X, y = dask_call("fit_sample", self, X, y)  # the sampled rows; the fit goes on in memory
        X = self._validate_X(X, reset=True)
        self._check_row_budget()
        rng = check_random_state(self.random_state)
        self.templates_ = self._draw_templates(X, rng)
        # sampling="qmc" may replace a full-circle rotation by a finite grid subgroup: the plan
        # (and everything fitted after it) is built on the group actually used
        group, self.group_elements_, self.group_weights_ = resolve_elements(
            resolve_group(self.group), self.n_group_samples, rng, sampling=getattr(self, "sampling", "iid"))
        self.group_ = group
        self.plan_ = ProjectionPlan(
            group, self.group_elements_, self.group_weights_, self.templates_,
            action=self.action, similarity=self._similarity(), kernel_params=self._kernel_params(),
            invariant_similarity=self._invariant_similarity(group), max_memory_mb=self.max_memory_mb,
            define_on_templates=self._define_on_templates, **self._engine_options(),
        )
        self._after_fit(X)
        return self

    #: the parameter that sets the number of templates (frequencies, landmarks) fit draws
    _n_templates_param = "n_components"

    def _check_row_budget(self):
        """Before anything is drawn: one row's similarities (templates x group elements, float32 at
        least) must fit in ``max_memory_mb``, as every path of :meth:`transform` holds them at some point.
        Without ``n_group_samples`` the group decides the count (all of a finite group, which it
        enumerates itself, or a few samples), so the bound counts one element."""
        s = int(getattr(self, self._n_templates_param))
        r = 1 if self.n_group_samples is None else int(self.n_group_samples)
        what = f"{self._n_templates_param}={s} templates" + (
            "" if self.n_group_samples is None else f" x n_group_samples={r} group elements")
        check_budget(type(self).__name__, 4 * s * r, self.max_memory_mb, what,
                     f"lower {self._n_templates_param} or n_group_samples, or raise max_memory_mb")

    def _engine_options(self):
        # fast_path / dtype / backend / device: the engine's knobs (docs/performance.md);
        # getattr keeps estimators pickled before these parameters existed loadable.
        return {name: getattr(self, name, default) for name, default in
                (("fast_path", "auto"), ("dtype", None), ("backend", "numpy"), ("device", None))}

    def _after_fit(self, X):
        pass

    @property
    def action_(self):
        """Where the group acts: "templates" or "data"."""
        check_is_fitted(self, "plan_")
        return self.plan_.mode

    def transform(self, X):
        """The orbit features of each row, computed in blocks of rows within ``max_memory_mb``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Rows of as many features as at ``fit``. A Dask array gives a lazy Dask
            array, each block transformed as here (:func:`orbitkernels.dask.transform_dask`).

        Returns
        -------
        X_new : ndarray of shape (n_samples, n_features_out)
            In X's precision (float32 in, float32 out; float64 otherwise, whatever ``dtype``
            computes in); n_features_out is ``len(get_feature_names_out())``, whose names
            are the lower-cased class name followed by 0, 1, ...
        """
        if is_dask_array(X):
            container = getattr(self, "_sklearn_output_config", {}).get("transform") or sklearn.get_config().get(
                "transform_output", "default")
            if container != "default":  # scikit-learn's wrapper builds the frame from the whole array
                warnings.warn(f"set_output(transform={container!r}) makes the features of a Dask array a {container} "
                              "DataFrame, computed whole into this process's memory; set_output(transform='default') "
                              "keeps them a lazy Dask array", UserWarning, stacklevel=3)
            return dask_call("transform", self, X)
        check_is_fitted(self, "plan_")
        check_param_again(self, "max_memory_mb")  # set_params after fit may have changed the budget
        X = self._validate_X(X, reset=False, keep_integers=True)
        return self._map(X, self._pool_spec(), self._n_features_out)

    # ------------------------------------------------------------------ bounded-memory mapping
    def _prepare(self, X):
        """Per-row preprocessing of a block of rows (GICDF's unit norm); identity by default."""
        return X

    #: whether ``_prepare`` makes a copy of its block (then it is counted in the budget)
    _prepare_copies = False

    def _extra_row_bytes(self, d, itemsize):
        """Bytes per row beyond the engine's own estimate (kernels' float64 temporaries...)."""
        return 0

    def _check_magnitude(self, X):
        """Refuse finite inputs whose similarities would overflow the compute precision."""

    def _progress_bar(self, n, desc):
        """A bar over the ``n`` rows of one pass (``verbose``), or None; ``--quiet`` / ``ORBITKERNELS_QUIET``
        silence it as every bar of the library."""
        if not getattr(self, "verbose", 0):  # getattr: estimators pickled before verbose existed
            return None
        return progress(total=n, desc=f"{type(self).__name__} {desc}", unit="rows")

    def _map(self, X, pool, n_out, out_dtype=None, desc="transform"):
        """``plan_.map`` over X in row blocks sized from the *true* per-row footprint.

        The engine sizes its chunks from the similarity tensor alone; the input copy
        that ``_prepare`` makes, the block of output the engine returns and the
        float64 temporaries of a scikit-learn pairwise kernel are not in its estimate
        (measured: 53 MB at a 16 MB budget for LGIKA-Nys, a full normalised copy of X
        for GICDF). Passing the engine blocks no larger than the budget allows keeps
        the peak of ``transform`` within ``max_memory_mb`` plus its output.
        """
        plan = self.plan_
        n, d = X.shape
        # integer or boolean rows (kept so by _validate_X) are converted to float64 a block at a time, exactly
        convert = X.dtype.kind != "f"
        out_dtype = np.dtype(out_dtype or (np.float64 if convert else X.dtype))
        self._check_magnitude(X)
        cdt = plan.compute_dtype(X.dtype)
        plan.max_memory_mb = self.max_memory_mb
        # the engine pools cache-sized sub-blocks whose temporaries (the CDF's int64 counts: up to
        # 3x the block) do not shrink with the chunk, plus the kernels' per-call template norms
        # and the pooling's temporaries (per row, or per pooled block where the back-end pools blocks)
        # (the engine's count, :meth:`ProjectionPlan.pooling_blocks`: one block's temporaries per pooling thread)
        pool_row, per_block, threads = plan.pooling_blocks(pool, n_out, max(cdt.itemsize, out_dtype.itemsize))
        reserve = per_block * threads
        if not plan.backend.prefers_cache_blocks:  # a back-end that pools whole chunks: a block's reserve, as before
            reserve += plan.strategy.block_reserve(plan, cdt.itemsize)
        # the output rows themselves are the caller's output (outside the budget) where the engine pools its
        # blocks straight into them (pool_row 0: each block's temporaries are in per_block) and no map follows
        # the pooling; a chunk's pooled rows are working memory elsewhere (a device back-end, a callable pooling,
        # Nyström's K_ZZ^{-1/2} after it). Counted per row here too, they halved GICDF's chunks at the default
        # budget (1024 digits in two GEMMs, benchmarks/probes/perf/gicdf_chunks.py)
        into_out = pool_row == 0 and getattr(pool, "post", None) is None
        extra = (0 if into_out else n_out * out_dtype.itemsize) + pool_row + self._extra_row_bytes(d, cdt.itemsize)
        if self._prepare_copies:
            extra += 2 * d * (8 if convert else X.dtype.itemsize)  # the prepared copy and its temporary (|x|)
        if convert:
            extra += 8 * d  # the block in float64
        # the engine's own count (beyond the similarities: extra), its error when one row does not fit
        rows = plan.chunk_rows(n, d, cdt.itemsize, extra_per_row=extra, reserve=reserve)
        if into_out:
            # one row entire, its features included, must still fit: the budget refuses an output row larger than
            # itself (GICDF with 10**7 bins) as it did when every row's features were counted
            plan.chunk_rows(1, d, cdt.itemsize, extra_per_row=extra + n_out * out_dtype.itemsize, reserve=reserve)
        bar = self._progress_bar(n, desc)
        step = None if bar is None else bar.update
        try:
            if rows >= n and not self._prepare_copies and not convert:
                out = plan.map(X, pool, n_out, out_dtype=out_dtype, progress=step)
            else:
                out = np.empty((n, n_out), dtype=out_dtype)
                ws = plan.workspace()  # the blocks' similarities (or spectra) in the same buffers
                for a in range(0, n, rows):
                    plan.map(self._prepare(float64_block(X[a : a + rows])), pool, n_out, out=out[a : a + rows],
                             workspace=ws, progress=step)
        finally:
            if bar is not None:
                bar.close()
        if not getattr(pool, "finite_by_construction", False) and not all_finite(out):  # a sum, then blocks
            # never hand back NaN/inf as features: a kernel overflowed on these inputs
            raise ValueError(
                f"{type(self).__name__} produced non-finite features on this X (max |x| = "
                f"{_max_abs(X):.3g}): the base kernel overflowed {cdt} for these parameters "
                f"({self._describe_kernel()}); rescale X or choose smaller kernel parameters"
            )
        return out

    def _describe_kernel(self):
        return "similarity <g x, t>"

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.transformer_tags.preserves_dtype = ["float64", "float32"]
        return tags


def _max_abs(X):
    """max |X| without an |X|-sized temporary (two reductions)."""
    if X.size == 0:
        return 0.0
    return float(max(abs(float(X.max())), abs(float(X.min()))))


def magnitude_guard(X, cdt, power, scale, what):
    """Raise when ``(max|x| · sqrt(d) · scale) ** power`` (a bound on the similarities met) overflows ``cdt``.

    ``power`` is 1 for inner products <x, t>, 2 for kernels built on squared norms
    (rbf: exp(-γ(|x|² + |z|² - 2<x, z>)), whose terms overflow float32 at |x| ~ 1e19
    and leave inf - inf = NaN).
    """
    amax = _max_abs(X)
    bound = amax * np.sqrt(X.shape[1]) * max(float(scale), 1.0)
    limit = float(np.finfo(cdt).max) / 64.0  # headroom for the sums of a few such terms
    if bound > 0 and power * np.log(bound) > np.log(limit):
        raise ValueError(
            f"X has entries up to {amax:.3g}: {what} overflow {np.dtype(cdt).name} "
            f"(bound {bound:.3g}^{power} > {limit:.3g}); rescale X (e.g. StandardScaler) "
            + ("or pass float64 data" if np.dtype(cdt) == np.float32 else "")
        )


DEFAULT_MEMORY = DEFAULT_MAX_MEMORY_MB


def average_over_copies(transformer, group, elements, X, *, chunk_rows=64):
    """``(1/r) Σ_k Φ(g_k x)``: a fitted feature map averaged over r transformed copies of each row.

    For groups whose action can move to neither side of the similarity, e.g. Montavon et
    al.'s data-dependent sorted Coulomb permutations (Raj et al. 2017, §4.1), the orbit
    features are pooled over copies of the *data*. GICDF's pooling (Mroueh et al. 2015,
    §2) is linear in the indicators, so with ``transformer`` a trivial-group
    :class:`~orbitkernels.features.GroupCDFFeatures` this is the pooled feature
    Σ_k (1/r) 1{<g_k x, t> <= τ}; the same holds for the linear poolings of LGIKA.
    ``chunk_rows`` rows (r copies each) are transformed at a time.

    Parameters
    ----------
    transformer : fitted feature map
        Any object whose ``transform`` maps rows of ``X``'s width to features.
    group : Group or None
        The group whose elements move the rows (None: the trivial group).
    elements : array-like of shape (r, p)
        The r elements g_k (at least one).
    X : array-like of shape (n_samples, n_features)
        The rows (float32 stays float32, other numbers become float64).
    chunk_rows : int >= 1, default=64
        Rows transformed at a time (with their r copies).

    Returns
    -------
    features : ndarray of shape (n_samples, n_features_out)
        The mean of the r copies' features, in the transformer's output precision
        (float32 rows give float32 features with the library's maps).

    Examples
    --------
    >>> import numpy as np
    >>> from orbitkernels.features import OrbitFourierFeatures, average_over_copies
    >>> from orbitkernels.groups import CyclicShift
    >>> X = np.random.default_rng(0).normal(size=(20, 8))
    >>> plain = OrbitFourierFeatures(gamma=0.1, n_components=32, random_state=0).fit(X)  # no group
    >>> group = CyclicShift(8)
    >>> F = average_over_copies(plain, group, group.elements(), X)  # over the 8 shifts of each row
    >>> F.shape
    (20, 64)
    >>> np.allclose(average_over_copies(plain, group, group.elements(), np.roll(X, 3, axis=1)), F)
    True
    >>> orbit = OrbitFourierFeatures(group, gamma=0.1, n_components=32, random_state=0).fit(X)
    >>> np.allclose(orbit.transform(X), F)  # the same frequencies: the orbit features themselves
    True
    """
    # X is checked as the estimators check it (a list was an AttributeError, 0 rows, a chunk_rows of 0 or no
    # elements a bare numpy error from the reshape or the concatenation)
    chunk_rows = check_int(chunk_rows, "chunk_rows", min_value=1)
    group = resolve_group(group)  # anything but a Group failed at its first .act
    check_not_text(X, "X")
    X = check_array(as_native_float(X), dtype=[np.float64, np.float32], input_name="X")
    r = len(elements)
    if r == 0:
        raise ValueError("elements must hold at least one group element; got none")
    parts = []
    for a in range(0, len(X), chunk_rows):
        Y = group.act(X[a : a + chunk_rows], elements)  # (r, rows, d)
        F = transformer.transform(Y.reshape(-1, X.shape[1]))
        parts.append(F.reshape(r, -1, F.shape[1]).mean(0))
    return np.concatenate(parts, axis=0)

