"""The Haar-integration / orbit kernel (Mroueh et al. 2015, Eq. 1; Raj et al. 2017, Eq. 3-4)."""
from __future__ import annotations

import numpy as np
from sklearn.metrics.pairwise import KERNEL_PARAMS, pairwise_kernels

from ..features._engine import resolve_elements, resolve_group
from ..groups.base import can_move_to_templates
from ..utils.persistence import VersionedPickleMixin
from ..utils.validation import check_data, check_int, check_random_state, check_real

__all__ = ["HaarKernel"]


class HaarKernel(VersionedPickleMixin):
    """k_{q,G}(x, x') = E_{g, g' ~ q} k(g x, g' x') as Gram matrices.

    Mroueh et al. 2015, Eq. 1 (q = normalised Haar measure) and Raj et al. 2017,
    Eq. 3 (any q; Eq. 4 for the Haar measure). For a finite group and
    ``n_group_samples=None`` the expectation is the exact weighted sum over all
    elements; otherwise ``n_group_samples`` elements are drawn once from q
    (``random_state``) and the double sum is a Monte Carlo estimate with the same
    elements on both sides, i.e. exactly the kernel that :class:`OrbitFourierFeatures`
    and :class:`OrbitNystroem` approximate for those elements.

    Single-sum shortcut: when q is uniform on a finite group acting by exact
    permutations of coordinates (permutations, cyclic shifts), for which every
    base kernel is invariant under the common action, g^{-1} g' is again uniform, so
    k_G(x, x') = (1/|G|) Σ_h k(x, h x') exactly: O(|G|) instead of O(|G|^2) per pair.

    Use it as a callable kernel (``SVC(kernel=HaarKernel(...))``) or build a
    precomputed Gram matrix with ``HaarKernel(...)(X, Y)``.

    Parameters
    ----------
    group : Group
    base_kernel : str or callable
        A scikit-learn pairwise kernel ("rbf", "linear", "laplacian", ...).
    n_group_samples : int, optional
    elements, weights : arrays, optional
        Use exactly these group elements (and weights, default uniform), e.g. a
        fitted feature map's ``group_elements_``, so that the features'
        inner products can be compared with the kernel they estimate.
    single_sum : {"auto", True, False}
    random_state : int, Generator or None
    max_memory_mb : float
        Budget for the transformed copies and kernel blocks of one chunk.
    **kernel_params : passed to the base kernel (gamma, degree, coef0, ...)
    """

    def __init__(self, group=None, base_kernel="rbf", *, n_group_samples=None, elements=None, weights=None,
                 single_sum="auto", random_state=None, max_memory_mb=256.0, **kernel_params):
        self.group = resolve_group(group)
        if not (callable(base_kernel) or base_kernel in KERNEL_PARAMS):
            raise ValueError(f"base_kernel must be a scikit-learn pairwise kernel name or a callable; got {base_kernel!r}")
        self.base_kernel = base_kernel
        self.n_group_samples = check_int(n_group_samples, "n_group_samples", min_value=1, allow_none=True)
        if single_sum not in ("auto", True, False):
            raise ValueError(f"single_sum must be 'auto', True or False; got {single_sum!r}")
        self.max_memory_mb = check_real(max_memory_mb, "max_memory_mb", low=0.0, low_open=True)
        self.kernel_params = kernel_params
        self.random_state = random_state
        if elements is not None:
            # the exact kernel for given group samples, e.g. a fitted feature map's group_elements_
            self.elements_ = self.group._check_elements(elements)
            w = np.full(len(self.elements_), 1.0 / len(self.elements_)) if weights is None else np.asarray(weights, float)
            if w.shape != (len(self.elements_),) or (w < 0).any() or not np.isclose(w.sum(), 1.0):
                raise ValueError(f"weights must be {len(self.elements_)} non-negative numbers summing to 1")
            self.weights_ = w
        else:
            if weights is not None:
                raise ValueError("weights need elements")
            _, self.elements_, self.weights_ = resolve_elements(self.group, self.n_group_samples, check_random_state(random_state),
                                                                sampling=getattr(self, "sampling", "qmc"))
        uniform_finite = (elements is None and self.group.is_finite and self.n_group_samples is None
                          and self.group.weights() is None)
        # The identity E_{g,g'} k(gx, g'y) = E_h k(x, hy) needs an exact representation:
        # interpolated image actions are only approximately unitary and approximately
        # closed under composition, and the single sum is then not even symmetric.
        exact = bool(getattr(self.group, "permutes_coordinates", False))
        allowed = uniform_finite and exact and can_move_to_templates(self.group)
        if single_sum is True and not allowed:
            raise ValueError(
                "single_sum=True is exact only for the uniform law on a finite group acting by exact "
                "permutations of coordinates (interpolated image actions do not qualify)"
            )
        self.single_sum_ = allowed if single_sum == "auto" else bool(single_sum)

    def __repr__(self):
        return f"HaarKernel(group={self.group!r}, base_kernel={self.base_kernel!r}, single_sum={self.single_sum_})"

    def _k(self, A, B):
        return pairwise_kernels(A, B, metric=self.base_kernel, filter_params=True, **self.kernel_params)

    def __call__(self, X, Y=None):
        """Gram matrix K[i, j] = k_{q,G}(X[i], Y[j]) (Y defaults to X)."""
        X = check_data(X, "X")
        Y = X if Y is None else check_data(Y, "Y", n_features=X.shape[1])
        E, w = self.elements_, self.weights_
        r = len(E)
        d = X.shape[1]
        GY = self.group.act(Y, E)  # (r, m, d): every transformed copy of Y
        if self.single_sum_:
            # (1/|G|) Σ_h k(x, h y)
            flatY = GY.reshape(r * len(Y), d)
            rows = self._rows(len(X), r * len(Y), 1)
            K = np.empty((len(X), len(Y)))
            for a in range(0, len(X), rows):
                K[a : a + rows] = np.tensordot(w, self._k(X[a : a + rows], flatY).reshape(-1, r, len(Y)), axes=([0], [1]))
            return K
        flatY = GY.reshape(r * len(Y), d)
        rows = self._rows(len(X), r * len(Y), r)
        K = np.zeros((len(X), len(Y)))
        for a in range(0, len(X), rows):
            GX = self.group.act(X[a : a + rows], E)  # (r, n_chunk, d)
            n = GX.shape[1]
            Kc = self._k(GX.reshape(r * n, d), flatY).reshape(r, n, r, len(Y))
            K[a : a + n] = np.einsum("k,knlm,l->nm", w, Kc, w)
        return K

    def _rows(self, n, width, copies):
        budget = self.max_memory_mb * 2**20 / 8
        rows = int(budget // max(1, copies * width))
        if rows < 1:
            raise ValueError(
                f"max_memory_mb={self.max_memory_mb} cannot hold one row of the kernel blocks "
                f"({copies * width * 8 / 2**20:.2f} MB); raise it"
            )
        return min(n, rows)
