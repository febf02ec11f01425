"""The one engine behind every orbit feature map: group-transformed projections.

Every feature map of the three papers pools, over group elements g_k with
weights w_k, a nonlinearity of the similarity between a transformed input and
a template (see ``DESIGN.md``)::

    feature_j(x) = Σ_k w_k η( sim(g_k x, t_j) )

This module produces the tensor ``S[i, j, k] = sim(g_k x_i, t_j)`` chunk by chunk
under a memory budget, in one of two ways:

* **templates** (Mroueh et al. 2015, Remark 2; Raj et al. 2017, §2.2.1-2.2.2):
  when the action is unitary, the law q symmetric and the similarity invariant
  under a common action, ``sim(g x, t) = sim(x, g^{-1} t)``. The ``s·r``
  transformed templates are computed once at ``fit``, and ``transform`` is one
  blocked GEMM (or one pairwise-kernel call) of the data against them.
* **data**: otherwise each chunk of rows is transformed by the r elements
  (r copies of the chunk at a time) and compared with the plain templates.

The feature maps supply only their templates, their η and their pooling.
"""
from __future__ import annotations

import numpy as np
from sklearn.metrics.pairwise import pairwise_kernels

from ..groups.base import Group, can_move_to_templates
from ..utils.validation import check_real

__all__ = ["ProjectionPlan", "resolve_elements", "TrivialGroup", "DEFAULT_MAX_MEMORY_MB"]

DEFAULT_MAX_MEMORY_MB = 256.0


class TrivialGroup(Group):
    """The group with only the identity: orbit features reduce to plain features."""

    is_finite = True
    n_params = 1
    is_unitary = True
    is_symmetric = True

    def elements(self):
        return np.zeros((1, 1))

    def identity(self):
        return np.zeros((1, 1))

    def inverse(self, E):
        return np.zeros((len(self._check_elements(E)), 1))

    def _act(self, X, E):
        return np.broadcast_to(X, (len(E),) + X.shape).copy()

    def _act_each(self, X, E):
        return X.copy()

    def commutes_with(self, other):
        return True


def resolve_group(group):
    if group is None:
        return TrivialGroup()
    if not isinstance(group, Group):
        raise TypeError(f"group must be an orbitkernels.groups.Group (or None); got {type(group).__name__}")
    return group


def resolve_elements(group, n_group_samples, rng, default_infinite=64):
    """Group elements and their weights for a feature map.

    For a finite group with ``n_group_samples=None`` all elements are used with
    their q weights, so the features are exactly invariant. Otherwise
    ``n_group_samples`` elements are drawn i.i.d. from q and weighted 1/r
    (Monte Carlo, Raj Eq. 6-7).
    """
    if n_group_samples is None:
        if group.is_finite:
            E = group.elements()
            w = group.weights()
            w = np.full(len(E), 1.0 / len(E)) if w is None else np.asarray(w, dtype=float)
            return E, w
        n_group_samples = default_infinite
    E = group.sample(n_group_samples, rng)
    return E, np.full(len(E), 1.0 / len(E))


class _PairwiseKernel:
    """A scikit-learn pairwise kernel with bound parameters (picklable, unlike a lambda)."""

    def __init__(self, metric, params):
        self.metric = metric
        self.params = dict(params or {})

    def __call__(self, A, B):
        return pairwise_kernels(A, B, metric=self.metric, filter_params=True, **self.params)


def _as_kernel(similarity, kernel_params):
    return None if similarity == "dot" else _PairwiseKernel(similarity, kernel_params)


class ProjectionPlan:
    """Computes ``S[i, j, k] = sim(g_k x_i, t_j)`` in bounded-memory chunks.

    Parameters
    ----------
    group : Group
    elements : (r, p) array, weights : (r,) array
    templates : (s, d) array
    action : {"auto", "templates", "data"}
        "auto" moves the action to the templates when that is exact
        (:func:`orbitkernels.groups.can_move_to_templates` and a similarity that
        is invariant under the common action), else acts on the data.
        "templates" forces it, which is the *definition* for GICDF
        (Mroueh: ψ(x, t, τ) = P_g(<x, g t> <= τ)); then the templates are
        transformed by the elements themselves.
    similarity : "dot" or the name of a scikit-learn pairwise kernel
    invariant_similarity : bool
        Whether ``sim(g x, g t) = sim(x, t)`` for this group's action.
    max_memory_mb : float
        Budget for the intermediate arrays of one chunk.
    """

    def __init__(self, group, elements, weights, templates, *, action="auto", similarity="dot",
                 kernel_params=None, invariant_similarity=True, max_memory_mb=DEFAULT_MAX_MEMORY_MB,
                 define_on_templates=False):
        if action not in ("auto", "templates", "data"):
            raise ValueError(f"action must be 'auto', 'templates' or 'data'; got {action!r}")
        self.max_memory_mb = check_real(max_memory_mb, "max_memory_mb", low=0.0, low_open=True)
        self.group = group
        self.elements = elements
        self.weights = np.asarray(weights, dtype=float)
        self.templates = templates
        self.similarity = similarity
        self._kernel = _as_kernel(similarity, kernel_params)
        movable = can_move_to_templates(group) and invariant_similarity
        if define_on_templates:
            # GICDF is defined through <x, g t>: the templates side is exact by definition.
            mode = "data" if action == "data" else "templates"
            if mode == "data" and not movable:
                raise ValueError(
                    "action='data' computes <g^{-1} x, t>, equal in law to <x, g t> only for a unitary "
                    f"action with a symmetric q; {group!r} does not qualify"
                )
            self._template_elements = elements
            self._data_elements = group.inverse(elements) if mode == "data" else None
        else:
            if action == "templates" and not movable:
                raise ValueError(
                    "action='templates' needs a unitary, data-independent action with a symmetric q "
                    f"(and a similarity invariant under it); {group!r} does not qualify. Use action='data'."
                )
            mode = "templates" if (action == "templates" or (action == "auto" and movable)) else "data"
            self._data_elements = elements
            self._template_elements = group.inverse(elements) if mode == "templates" else None
        self.mode = mode
        s, r = len(templates), len(elements)
        self.n_templates, self.n_elements = s, r
        if mode == "templates":
            # (s, r, d): template j transformed by element k
            T = group.act(templates, self._template_elements).transpose(1, 0, 2)
            self.transformed_templates = np.ascontiguousarray(T.reshape(s * r, -1))
        else:
            self.transformed_templates = None

    # ------------------------------------------------------------------
    def row_bytes(self, d, itemsize):
        s, r = self.n_templates, self.n_elements
        per_row = s * r  # the similarity tensor
        if self.mode == "data":
            per_row += r * d  # r transformed copies of the row
        return per_row * itemsize * 2  # headroom for the nonlinearity's temporaries

    def chunk_rows(self, n, d, itemsize, extra_per_row=0):
        budget = self.max_memory_mb * 2**20
        need = self.row_bytes(d, itemsize) + extra_per_row
        rows = int(budget // need)
        if rows < 1:
            raise ValueError(
                f"max_memory_mb={self.max_memory_mb} is smaller than one row needs "
                f"({need / 2**20:.3f} MB for {self.n_templates} templates x {self.n_elements} group elements); "
                "raise max_memory_mb or use fewer templates or group samples"
            )
        return max(1, min(n, rows))

    def similarities(self, Xc):
        """``S`` for one chunk: (n_rows, s, r)."""
        s, r = self.n_templates, self.n_elements
        dtype = Xc.dtype
        if self.mode == "templates":
            T = self.transformed_templates.astype(dtype, copy=False)
            S = Xc @ T.T if self._kernel is None else self._kernel(Xc, T).astype(dtype, copy=False)
            return S.reshape(len(Xc), s, r)
        Y = self.group.act(Xc, self._data_elements).astype(dtype, copy=False)  # (r, n, d)
        T = self.templates.astype(dtype, copy=False)
        flat = Y.reshape(r * len(Xc), -1)
        S = flat @ T.T if self._kernel is None else self._kernel(flat, T).astype(dtype, copy=False)
        return S.reshape(r, len(Xc), s).transpose(1, 2, 0)

    def map(self, X, pool, n_out, *, out_dtype=None, progress=None):
        """Apply ``pool(S_chunk) -> (rows, n_out)`` over X in chunks and stack the results."""
        n, d = X.shape
        out = np.empty((n, n_out), dtype=out_dtype or X.dtype)
        rows = self.chunk_rows(n, d, X.dtype.itemsize, extra_per_row=n_out * X.dtype.itemsize)
        starts = range(0, n, rows)
        if progress is not None:
            starts = progress(starts, total=len(starts))
        for a in starts:
            Xc = X[a : a + rows]
            out[a : a + len(Xc)] = pool(self.similarities(Xc))
        return out
