"""Orbit Nyström features, LGIKA-Nys (Raj et al. 2017, Eq. 8)."""
from __future__ import annotations

import numpy as np
import scipy.linalg
from sklearn.metrics.pairwise import KERNEL_PARAMS, pairwise_kernels

from ..utils.validation import check_int
from ._base import DEFAULT_MEMORY, UNITARY_INVARIANT_KERNELS, OrbitFeaturesBase
from ._engine import LinearPool, resolve_group

__all__ = ["OrbitNystroem"]


class OrbitNystroem(OrbitFeaturesBase):
    """Nyström features of the orbit mean embedding (Raj et al. 2017, Eq. 8).

    With landmarks Z = {z_1..z_s}, K_ZZ^+ = L^T L and group elements g_k ~ q::

        ψ_Nys(x) = L Σ_k w_k K_{Z, g_k x},   w_k = 1/r

    so that <ψ(x), ψ(x')> approximates k_{q,G}(x, x'). L is computed as in
    scikit-learn's ``Nystroem`` (SVD of K_ZZ, singular values floored at 1e-12).

    Parameters
    ----------
    group : Group, optional
    kernel : str or callable
        Any scikit-learn pairwise kernel, with ``gamma``, ``coef0``, ``degree``
        and ``kernel_params`` as in ``sklearn.kernel_approximation.Nystroem``.
    n_components : int, s (landmarks); must not exceed the number of samples.
    landmarks : {"data", "orbit"}
        Random training rows, or random training rows each moved by a group
        element drawn from q (landmarks "from the orbits", §2.2.2).
    n_group_samples : int, optional, r
    action : {"auto", "templates", "data"}
        "auto" moves the action to the landmarks, k(g x, z) = k(x, g^{-1} z), when
        the action is unitary, q symmetric and the kernel invariant under the
        common action: dot-product and Euclidean shift-invariant kernels for any
        unitary action; any kernel for actions that permute coordinates.
    fast_path, dtype, backend, device
        Engine options (:class:`~orbitkernels.features.ProjectionPlan`, ``docs/performance.md``).
    """

    _similarity = None  # set per instance from ``kernel``

    def __init__(self, group=None, *, kernel="rbf", gamma=None, coef0=None, degree=None, kernel_params=None,
                 n_components=100, landmarks="data", n_group_samples=None, action="auto", random_state=None,
                 max_memory_mb=DEFAULT_MEMORY, fast_path="auto", dtype=None, backend="numpy", device=None):
        self.group = group
        self.kernel = kernel
        self.gamma = gamma
        self.coef0 = coef0
        self.degree = degree
        self.kernel_params = kernel_params
        self.n_components = n_components
        self.landmarks = landmarks
        self.n_group_samples = n_group_samples
        self.action = action
        self.random_state = random_state
        self.max_memory_mb = max_memory_mb
        self.fast_path = fast_path
        self.dtype = dtype
        self.backend = backend
        self.device = device

    def _kernel_params(self):
        params = dict(self.kernel_params or {})
        if not callable(self.kernel):
            for name in ("gamma", "coef0", "degree"):
                value = getattr(self, name)
                if value is not None and name in KERNEL_PARAMS.get(self.kernel, ()):
                    params[name] = value
        return params

    def _invariant_similarity(self, group):
        if isinstance(self.kernel, str) and self.kernel in UNITARY_INVARIANT_KERNELS:
            return True
        return bool(getattr(group, "permutes_coordinates", False))

    def _kernel(self, A, B):
        return pairwise_kernels(A, B, metric=self.kernel, filter_params=True, **self._kernel_params())

    def _draw_templates(self, X, rng):
        s = check_int(self.n_components, "n_components", min_value=1)
        if s > X.shape[0]:
            raise ValueError(
                f"n_components={s} landmarks requested but only {X.shape[0]} samples were given to fit; "
                "lower n_components"
            )
        if self.landmarks not in ("data", "orbit"):
            raise ValueError(f"landmarks must be 'data' or 'orbit'; got {self.landmarks!r}")
        if not (callable(self.kernel) or self.kernel in KERNEL_PARAMS):
            raise ValueError(f"kernel must be a scikit-learn pairwise kernel name or a callable; got {self.kernel!r}")
        self._similarity = self.kernel
        Z = X[rng.permutation(X.shape[0])[:s]].astype(np.float64)
        if self.landmarks == "orbit":
            group = resolve_group(self.group)
            Z = group.act_each(Z, group.sample(s, rng))
        K = self._kernel(Z, Z)
        U, S, Vt = scipy.linalg.svd(K)
        S = np.maximum(S, 1e-12)
        self.normalization_ = (U / np.sqrt(S)) @ Vt
        self.components_ = Z
        return Z

    @property
    def _n_features_out(self):
        return self.n_components

    def _pool(self, S):
        pooled = S @ self.group_weights_.astype(S.dtype)
        return pooled @ self.normalization_.T.astype(S.dtype)

    def _pool_spec(self):
        return LinearPool(self.group_weights_, self.normalization_.T)
