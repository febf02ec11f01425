"""Shared scikit-learn plumbing of the three orbit feature maps."""
from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator, ClassNamePrefixFeaturesOutMixin, TransformerMixin
from sklearn.utils.validation import check_is_fitted, validate_data

from ..distributed import fit_dask, is_dask_array, transform_dask
from ..groups.base import Group
from ..utils.persistence import IncompatibleVersionError, VersionedPickleMixin
from ..utils.validation import check_int, check_random_state, check_real
from ._engine import DEFAULT_MAX_MEMORY_MB, DTYPES, FAST_PATHS, ProjectionPlan, resolve_elements, resolve_group

__all__ = ["OrbitFeaturesBase", "IncompatibleVersionError"]


#: sklearn pairwise kernels with k(gx, gz) = k(x, z) for every unitary g
UNITARY_INVARIANT_KERNELS = frozenset({"rbf", "linear", "poly", "polynomial", "sigmoid", "cosine"})


class OrbitFeaturesBase(VersionedPickleMixin, ClassNamePrefixFeaturesOutMixin, TransformerMixin, BaseEstimator):
    """Common ``fit``/``transform`` of the orbit feature maps.

    Subclasses implement ``_draw_templates(X, rng)``, ``_pool(S)`` and
    ``_n_out`` (and optionally ``_pool_spec()``, the same pooling as an engine
    pooling object that runs on the back-end); every map also takes the engine
    options ``fast_path``, ``dtype``, ``backend`` and ``device``
    (:class:`~orbitkernels.features._engine.ProjectionPlan`); the engine (:class:`~orbitkernels.features._engine.ProjectionPlan`)
    does the group-transformed projections in memory-bounded chunks. Pickles
    carry the library version and refuse another one
    (:class:`~orbitkernels.utils.persistence.VersionedPickleMixin`).
    """

    _similarity = "dot"
    _define_on_templates = False

    def _check_common(self):
        if self.group is not None and not isinstance(self.group, Group):
            raise TypeError(f"group must be an orbitkernels.groups.Group or None; got {type(self.group).__name__}")
        check_int(self.n_group_samples, "n_group_samples", min_value=1, allow_none=True)
        check_real(self.max_memory_mb, "max_memory_mb", low=0.0, low_open=True)
        if self.action not in ("auto", "templates", "data"):
            raise ValueError(f"action must be 'auto', 'templates' or 'data'; got {self.action!r}")
        opts = self._engine_options()
        if opts["fast_path"] not in FAST_PATHS:
            raise ValueError(f"fast_path must be one of {FAST_PATHS}; got {opts['fast_path']!r}")
        if opts["dtype"] not in (None,) + DTYPES:
            raise ValueError(f"dtype must be None or one of {DTYPES}; got {opts['dtype']!r}")

    def _validate_X(self, X, reset):
        X = validate_data(self, X, reset=reset, dtype=[np.float64, np.float32])
        group = resolve_group(self.group)
        n = group.n_features
        if n is not None and X.shape[1] != n:
            raise ValueError(
                f"{type(group).__name__} acts on rows of {n} features ({group._shape_text()}); X has {X.shape[1]}"
            )
        return X

    def _invariant_similarity(self, group):
        return True

    def _kernel_params(self):
        return None

    def fit(self, X, y=None):
        """Draw the templates and the group elements (all randomness is here)."""
        if is_dask_array(X):  # scale-out path; dask stays optional (orbitkernels.distributed)
            return fit_dask(self, X, y)
        self._check_common()
        X = self._validate_X(X, reset=True)
        rng = check_random_state(self.random_state)
        group = resolve_group(self.group)
        self.templates_ = self._draw_templates(X, rng)
        group_used, self.group_elements_, self.group_weights_ = resolve_elements(
            group, self.n_group_samples, rng, sampling=getattr(self, "sampling", "qmc"))
        self.plan_ = ProjectionPlan(
            group_used, self.group_elements_, self.group_weights_, self.templates_,
            action=self.action, similarity=self._similarity, kernel_params=self._kernel_params(),
            invariant_similarity=self._invariant_similarity(group), max_memory_mb=self.max_memory_mb,
            define_on_templates=self._define_on_templates, **self._engine_options(),
        )
        self._after_fit(X)
        return self

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
        if is_dask_array(X):
            return transform_dask(self, X)
        check_is_fitted(self, "plan_")
        X = self._validate_X(X, reset=False)
        X = self._prepare(X)
        # the budget may have been changed with set_params after fit
        self.plan_.max_memory_mb = check_real(self.max_memory_mb, "max_memory_mb", low=0.0, low_open=True)
        spec = getattr(self, "_pool_spec", None)
        return self.plan_.map(X, spec() if spec is not None else self._pool, self._n_features_out)

    def _prepare(self, X):
        return X

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.transformer_tags.preserves_dtype = ["float64", "float32"]
        return tags


DEFAULT_MEMORY = DEFAULT_MAX_MEMORY_MB
