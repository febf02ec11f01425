"""Orbit Nyström features, LGIKA-Nys (Raj et al. 2017, Eq. 8)."""
from __future__ import annotations

import numpy as np
import scipy.linalg
from sklearn.metrics.pairwise import KERNEL_PARAMS
from sklearn.utils._param_validation import StrOptions

from ..utils.validation import (
    check_rbf_precision,
    count_constraint,
    kernel_param_constraints,
    max_sq_norm,
    resolve_kernel_params,
)
from ._base import DEFAULT_MEMORY, UNITARY_INVARIANT_KERNELS, OrbitFeaturesBase, magnitude_guard
from ..backends import get_backend
from ..groups.base import resolve_group
from ..utils.kernels import PairwiseKernel
from ._engine import LinearPool

__all__ = ["OrbitNystroem"]


class OrbitNystroem(OrbitFeaturesBase):
    """Nyström features of the orbit mean embedding (Raj et al. 2017, Eq. 8).

    With landmarks Z = {z_1..z_s}, K_ZZ^+ = L^T L and group elements g_k ~ q::

        ψ_Nys(x) = L Σ_k w_k K_{Z, g_k x},   w_k = 1/r

    so that <ψ(x), ψ(x')> approximates k_{q,G}(x, x'). L is computed as in
    scikit-learn's ``Nystroem`` (SVD of K_ZZ, singular values floored at 1e-12).

    Parameters
    ----------
    group : Group or None, default=None
        The group and its distribution q (None: the trivial group).
    kernel : {"additive_chi2", "chi2", "cosine", "laplacian", "linear", "poly", "polynomial", "rbf", \
"sigmoid"} or callable, default="rbf"
        Any scikit-learn pairwise kernel, with ``gamma``, ``coef0``, ``degree``
        and ``kernel_params`` as in ``sklearn.kernel_approximation.Nystroem``.
    gamma : float > 0, "scale" or None, default=None
        "scale" is ``1 / (n_features · X.var())`` of the training data (scikit-learn's
        ``SVC``); None the kernel's default. The value used is ``gamma_``.
    coef0 : float or None, default=None
        Constant of the "poly" and "sigmoid" kernels (None: the kernel's default).
    degree : int >= 1 or None, default=None
        Polynomial degree (a positive integer: a fractional power of a negative
        γ<x, z> + c0 is NaN; None: the kernel's default, 3).
    kernel_params : dict or None, default=None
        Further arguments of the kernel; for a named kernel only those it takes.
    n_components : int >= 1, default=100
        s, the landmarks. With ``landmarks="data"`` at most the number of
        training rows; with ``"orbit"`` it may exceed it (Raj et al. §4.1 use 10k landmarks on
        QM7, whose training folds hold 5.7k molecules): the rows are then drawn again, each copy
        moved by its own group element.
    landmarks : {"data", "orbit"}, default="data"
        Random training rows, or random training rows each moved by a group
        element drawn from q (landmarks "from the orbits", §2.2.2).
    n_group_samples : int >= 1 or None, default=None
        r, the group elements. None: every element of a finite group (or of a q with
        finite support under ``sampling="qmc"``) with q's weights, 64 samples of an
        infinite one.
    sampling : {"qmc", "iid"}, default="qmc"
        How the r elements are drawn from q: "qmc" a low-variance design
        (stratified grid / randomised lattice; for the full circle of rotations its grid
        subgroup), "iid" independent draws as in Raj Eq. 8.
    action : {"auto", "templates", "data"}, default="auto"
        "auto" moves the action to the landmarks, k(g x, z) = k(x, g^{-1} z), when
        the action is unitary, data-independent, q symmetric and the kernel invariant under the
        common action: dot-product and Euclidean shift-invariant kernels for any
        unitary action; any kernel for actions that permute coordinates. "templates"
        forces the landmarks' side (also for an action unitary only on the continuous signal, a
        scaling or a time warp: the paper's approximation; a ValueError where neither holds),
        "data" the data's.
    random_state : int, RandomState instance, Generator or None, default=None
        Seeds the landmarks and the group elements (every draw is made at ``fit``).
    max_memory_mb : float > 0, default=256.0
        Working memory of :meth:`transform` (beyond the input and the output; the s·r moved templates
        that the templates' side builds at the first transform and keeps, in one precision, are the
        fitted model's, outside it, as is the sparse interpolation matrix an image group acting on the
        data side keeps in a shared cache: README, "Memory"); a ValueError when one row does not fit.
    fast_path : {"auto", "gemm", "fft", "polar", "none"}, default="auto"
        The engine's strategy (:class:`~orbitkernels.features.ProjectionPlan`,
        ``docs/performance.md``): for kernels "linear" and "rbf", "auto" takes the FFT
        correlation when every cyclic shift is used and the polar grid for a ``PolarRotation``
        (what ``sampling="qmc"`` takes for a full circle of image rotations), else the GEMM or
        data path.
        On the polar path (rotations of images, the default for ``ImageRotation``) the Gaussian is that
        of the resampled images, exp(-γ ‖P g x - P z‖²) with P the polar grid's quadrature samples
        (bilinear: ‖P x‖² ≈ 0.92 ‖x‖² on digits), not exp(-γ ‖g x - z‖²) to the value; Rotated MNIST
        accuracy is the same as with the Cartesian Gaussian (``benchmarks/probes/perf/nystroem_polar_metric.py``:
        0.9255 against 0.927 on the template path); ``fast_path="gemm"`` gives the Cartesian one.
    dtype : {"auto", "float32", "float64"} or None, default=None
        Precision of the heavy loops (the output is in the input's precision either way).
        "auto" follows the input's. None does too, except where K_ZZ is so ill-conditioned
        that float32 kernel values would give features off by more than 1e-3 of their norm
        (bound: u · sqrt(s · k_max / σ_min(K_ZZ)), u = float32's rounding unit): then float32 rows
        are mapped in float64 (the output stays float32), and ``precision_`` says so; so are they where
        the training rows are so large (entries ~1e19) or so small (~1e-20, squared norms below float32's
        normal range, or a γ past its largest number) that a Gaussian computed from float32 dot products
        and norms (the FFT paths; the GEMM path for "rbf" and "linear") would overflow or be noise.
    backend : {"numpy", "torch"}, default="numpy"
        Where the heavy loops run.
    device : str, int >= 0, torch.device or None, default=None
        With ``backend="torch"``: a name ("cuda", "cuda:1", "mps"), an accelerator's index
        or a ``torch.device``; None the back-end's default.
    verbose : int or bool, default=0
        Non-zero: a progress bar over the rows of each ``transform`` (stderr; silenced by
        ``ORBITKERNELS_QUIET=1`` or the command line's ``--quiet``, as every bar of the library).

    Attributes
    ----------
    components_ : ndarray of shape (n_components, n_features)
        The landmarks z_i, float64.
    templates_ : ndarray of shape (n_components, n_features)
        The same array as ``components_`` (the engine's templates).
    normalization_ : ndarray of shape (n_components, n_components)
        L = K_ZZ^{-1/2}.
    group_ : Group
        The group the elements belong to: ``group`` (the trivial group for None), or the
        finite grid subgroup ``sampling="qmc"`` takes for a full circle of rotations.
    group_elements_ : ndarray of shape (r, p)
        The r elements g_k, p = ``group_.n_params`` parameters each.
    group_weights_ : ndarray of shape (r,)
        Their weights w_k (1/r for sampled elements, q's on a finite support).
    plan_ : ProjectionPlan
        The engine's plan of the kernel values.
    action_ : {"templates", "data"}
        The side the group acts on.
    kernel_params_ : dict
        The kernel's keyword arguments fixed at ``fit`` (gamma, degree, coef0 and
        ``kernel_params``, "scale" resolved).
    gamma_ : float or None
        The kernel's gamma ("scale" resolved); None where the kernel's default applies.
    precision_ : {"float32", "float64"}
        The precision float32 rows are mapped in under ``dtype=None`` (see ``dtype``).
    n_features_in_ : int
        n_features, the number of features seen at ``fit``.
    feature_names_in_ : ndarray of shape (n_features,)
        Column names of X at ``fit``, when it had string names (a DataFrame).
    fit_sample_indices_ : ndarray of int
        The rows a Dask X was fitted on (after a ``fit`` on a Dask array only).

    Notes
    -----
    The output has ``n_components`` columns. The attributes ending in ``_`` are what
    every transform reads: ``set_params`` after ``fit`` changes nothing until the next ``fit``.

    Examples
    --------
    >>> import numpy as np
    >>> from orbitkernels.features import OrbitNystroem
    >>> from orbitkernels.groups import CyclicShift
    >>> X = np.random.default_rng(0).normal(size=(20, 8))
    >>> nys = OrbitNystroem(CyclicShift(8), gamma=0.1, n_components=10, random_state=0)
    >>> F = nys.fit_transform(X)
    >>> F.shape  # one feature per landmark
    (20, 10)
    >>> np.allclose(nys.transform(np.roll(X, 3, axis=1)), F)  # a cyclic shift of the rows changes no feature
    True

    In a scikit-learn pipeline, on two classes of rows (two patterns, each at a random cyclic shift, plus noise):

    >>> from sklearn.linear_model import RidgeClassifierCV
    >>> from sklearn.pipeline import make_pipeline
    >>> rng = np.random.default_rng(0)
    >>> y = np.arange(30) % 2
    >>> P = np.array([[2.0, 2, 0, 0, 0, 0, 0, 0], [2.0, 0, 0, 2, 0, 0, 0, 0]])
    >>> X = np.array([np.roll(P[c], k) for c, k in zip(y, rng.integers(8, size=30))]) + 0.3 * rng.normal(size=(30, 8))
    >>> clf = make_pipeline(OrbitNystroem(CyclicShift(8), gamma=0.1, n_components=10, random_state=0),
    ...                     RidgeClassifierCV())
    >>> float(clf.fit(X[:20], y[:20]).score(X[20:], y[20:]))  # accuracy on 10 new rows
    1.0
    """

    _parameter_constraints: dict = {
        **OrbitFeaturesBase._parameter_constraints,
        **kernel_param_constraints(),
        "kernel": [StrOptions(set(KERNEL_PARAMS)), callable],
        "n_components": [count_constraint()],
        "landmarks": [StrOptions({"data", "orbit"})],
    }

    def __init__(self, group=None, *, kernel="rbf", gamma=None, coef0=None, degree=None, kernel_params=None,
                 n_components=100, landmarks="data", n_group_samples=None, sampling="qmc", action="auto",
                 random_state=None, max_memory_mb=DEFAULT_MEMORY, fast_path="auto", dtype=None, backend="numpy",
                 device=None, verbose=0):
        self.group = group
        self.kernel = kernel
        self.gamma = gamma
        self.coef0 = coef0
        self.degree = degree
        self.kernel_params = kernel_params
        self.n_components = n_components
        self.landmarks = landmarks
        self.n_group_samples = n_group_samples
        self.sampling = sampling
        self.action = action
        self.random_state = random_state
        self.max_memory_mb = max_memory_mb
        self.fast_path = fast_path
        self.dtype = dtype
        self.backend = backend
        self.device = device
        self.verbose = verbose

    def _similarity(self):
        return self.kernel  # k(g x, z) itself (Raj Eq. 8)

    def _kernel_params(self):
        return self.kernel_params_

    def _invariant_similarity(self, group):
        if isinstance(self.kernel, str) and self.kernel in UNITARY_INVARIANT_KERNELS:
            return True
        return bool(group.permutes_coordinates)

    def _kernel(self, A, B):
        return PairwiseKernel(self.kernel, self.kernel_params_)(A, B)

    def _draw_templates(self, X, rng):
        s, n = int(self.n_components), X.shape[0]
        if s > n and self.landmarks != "orbit":
            raise ValueError(
                f"n_components={s} landmarks requested but only {n} samples were given to fit; lower "
                "n_components, or draw them from the orbits (landmarks='orbit'), which hold more points than X"
            )
        # the kernel's arguments are fixed here, at fit (set_params afterwards changes nothing)
        self.kernel_params_, self.gamma_ = resolve_kernel_params(
            type(self).__name__, self.kernel, X, gamma=self.gamma, degree=self.degree, coef0=self.coef0,
            kernel_params=self.kernel_params)
        # past n rows (orbit landmarks only) each row is drawn again from a fresh permutation, every copy moved by its
        # own group element; up to n the draw is the one it always was
        rows = np.concatenate([rng.permutation(n) for _ in range(-(-s // n))])[:s]
        Z = X[rows].astype(np.float64)
        if self.landmarks == "orbit":
            group = resolve_group(self.group)
            Z = group.act_each(Z, group.sample(s, rng))
        self._check_magnitude(Z, dtype=np.float64)
        with np.errstate(over="ignore", invalid="ignore"):  # an overflow is refused just below, with its cause
            K = self._kernel(Z, Z)
        if not np.isfinite(K).all():
            raise ValueError(
                f"the {self.kernel!r} kernel of the landmarks is not finite ({self._describe_kernel()}); "
                "rescale X or choose smaller kernel parameters"
            )
        self.normalization_, S = self._inverse_sqrt(K)
        self.precision_ = self._auto_precision(S, np.abs(np.diag(K)).max())
        self.components_ = Z
        return Z

    def _inverse_sqrt(self, K):
        """L = K_ZZ^{-1/2} as scikit-learn's ``Nystroem`` forms it, U S^{-1/2} V^T from the SVD of K_ZZ with the
        singular values floored at 1e-12, and those singular values.

        On the torch back-end the same matrix comes from the symmetric eigendecomposition K_ZZ = Q Λ Q^T on the
        device: U = Q, S = |Λ| and V = Q sign(Λ), so U S^{-1/2} V^T = Q diag(sign(λ) / sqrt(max(|λ|, 1e-12))) Q^T
        (tested against the SVD on singular and indefinite K_ZZ), and fit's one cubic step, s³ for s landmarks
        (Raj §4.1: 10k), runs where the transform does."""
        opts = self._engine_options()
        if opts["backend"] != "torch":
            U, S, Vt = scipy.linalg.svd(K)
            S = np.maximum(S, 1e-12)
            return (U / np.sqrt(S)) @ Vt, S
        be = get_backend("torch", opts["device"])
        torch = be.torch
        w, Q = torch.linalg.eigh(be.asarray(K, dtype="float64"))
        S = w.abs().clamp_min(1e-12)
        sign = torch.where(w < 0, -1.0, 1.0).to(w.dtype)
        L = (Q * (sign / S.sqrt())) @ Q.T
        # singular values in decreasing order, as the SVD gives them
        return be.to_numpy(L), np.sort(be.to_numpy(S))[::-1]

    @staticmethod
    def _auto_precision(S, k_max):
        """The precision float32 rows need for features within ``FLOAT32_TOLERANCE`` of exact.

        L = K_ZZ^{-1/2} amplifies an error δk in the kernel values by up to ||L||₂ = S_min^{-1/2}:
        ||δψ|| <= S_min^{-1/2} · sqrt(s) · u · k_max with u float32's rounding unit, against features of
        norm ~ sqrt(k_max). Many landmarks under a wide kernel (s close to the number of training rows,
        small γ) make K_ZZ nearly singular: on QM7 (5700 landmarks from 5732 molecules, γ factor 1/64)
        the float32 kernel values gave a ridge LOO RMSE of 30.4 kcal/mol where float64 gives 13.56
        (``benchmarks/probes/raj2017/nys_precision.py``)."""
        u = float(np.finfo(np.float32).eps)
        s_min = float(np.min(S))
        if not s_min > 0:  # singular (or NaN): the amplification is unbounded
            return "float64"
        bound = u * np.sqrt(len(S) / s_min) * np.sqrt(max(float(k_max), 0.0))
        return "float64" if bound > OrbitNystroem.FLOAT32_TOLERANCE else "float32"

    #: relative feature error (bound above) past which float32 rows are mapped in float64 (``dtype=None``)
    FLOAT32_TOLERANCE = 1e-3

    def _after_fit(self, X):
        # float32 rows whose Gaussian, from float32 dot products and norms, would overflow or be noise (entries
        # ~1e19 with gamma="scale"): mapped in float64 under dtype=None, as scikit-learn's float64 distances
        # map them, instead of refused
        if self.dtype is None and self.precision_ == "float32" and X.dtype == np.float32 and self.plan_.from_dots:
            try:
                self._check_magnitude(X)
                promote = self._float32_underflows(X)
            except ValueError:
                promote = True
            if promote:
                self.precision_ = "float64"
                self.plan_.dtype = "float64"

    def _float32_underflows(self, X):
        """Whether a Gaussian of float32 rows would be computed from squared norms below float32's normal range
        (entries ~1e-20: no digits left) or with a γ past float32's largest number (γ = "scale" made 1e39 of
        them, and the features came out inf: "choose smaller kernel parameters", of a γ nobody chose)."""
        if self.kernel != "rbf":
            return False
        f32 = np.finfo(np.float32)
        sq = max_sq_norm(X)
        return bool(0.0 < sq < f32.tiny / f32.eps or (self.gamma_ or 0.0) > f32.max)

    def _engine_options(self):
        opts = super()._engine_options()
        # dtype=None: float32 rows keep float32 kernel values only while L keeps them accurate
        if opts["dtype"] is None and getattr(self, "precision_", "float32") == "float64":
            opts["dtype"] = "float64"
        return opts

    def _describe_kernel(self):
        return f"kernel={self.kernel!r}, {getattr(self, 'kernel_params_', self.kernel_params)}"

    def _extra_row_bytes(self, d, itemsize):
        # scikit-learn's pairwise kernels upcast the block to float64 and build the
        # distances with ~2 float64 temporaries of the result (n x s·r), which the engine's
        # estimate (s·r values of the compute precision) leaves out; kernels from dot products need none
        plan = self.plan_
        if plan.from_dots:
            return 0
        sr = plan.n_templates * plan.n_elements
        per = 3 * sr * 8 + d * 8
        if plan.strategy.transforms_data:
            per += plan.n_elements * d * 8
        return per

    def _check_magnitude(self, X, dtype=None):
        if callable(self.kernel) or self.kernel in ("laplacian", "chi2", "additive_chi2"):
            return  # sums of |x - z| or x·z/(x+z): no squares to overflow; the output check covers the rest
        plan = getattr(self, "plan_", None)
        if dtype is None:
            # pairwise kernels run in float64; kernels from dot products (FFT paths, GEMM) in the compute precision
            dtype = plan.compute_dtype(X.dtype) if plan.from_dots else np.float64
        z = self.components_ if hasattr(self, "components_") else X
        z_sq = max_sq_norm(np.asarray(z))
        t = float(np.sqrt(z_sq))
        power = int(self.kernel_params_.get("degree", 3)) if self.kernel in ("poly", "polynomial") else 2
        magnitude_guard(X, dtype, power, max(t, 1.0), f"the {self.kernel!r} kernel's squared norms / products")
        if self.kernel == "rbf":
            gamma = self.gamma_ if self.gamma_ is not None else 1.0 / X.shape[1]  # sklearn's default
            check_rbf_precision(type(self).__name__, gamma, max_sq_norm(X), z_sq, dtype)

    @property
    def _n_features_out(self):
        return self.components_.shape[0]

    def _pool_spec(self):
        """Raj Eq. 8: the kernel values averaged over the elements, then the L map."""
        # one pooling object per fit, kept by the plan: it holds the L map cast to the compute precision, which a
        # new object per transform cast again, s^2 values outside max_memory_mb each time (46 MB of working memory
        # at a 16 MB budget for 3000 landmarks in float32; 196 MB for 7000)
        return self.plan_.cached(("nystroem_pool", id(self.normalization_)),
                                 lambda: LinearPool(self.group_weights_, self.normalization_.T))
