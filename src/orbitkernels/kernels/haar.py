"""The Haar-integration / orbit kernel (Mroueh et al. 2015, Eq. 1; Raj et al. 2017, Eq. 3-4)."""
from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.metrics.pairwise import KERNEL_PARAMS
from sklearn.utils._param_validation import StrOptions

from ..groups.base import Group, can_move_to_templates, resolve_elements, resolve_group
from ..utils.kernels import PairwiseKernel
from ..utils.params import ReplacesNestedParams
from ..utils.persistence import VersionedPickleMixin
from ..utils.progress import progress
from ..utils.validation import (
    RANDOM_STATE_CONSTRAINT,
    all_finite,
    check_budget,
    check_data,
    check_not_text,
    check_rbf_precision,
    check_random_state,
    count_constraint,
    float64_block,
    integer_frame_dtype,
    keeps_integer_rows,
    kernel_param_constraints,
    max_sq_norm,
    positive_real_constraint,
    resolve_kernel_params,
)

__all__ = ["HaarKernel"]

#: fitted attributes, dropped by ``set_params`` so that the next call resolves them again
_FITTED = ("group_", "elements_", "weights_", "kernel_params_", "gamma_", "single_sum_")


class HaarKernel(VersionedPickleMixin, ReplacesNestedParams, BaseEstimator):
    """k_{q,G}(x, x') = E_{g, g' ~ q} k(g x, g' x') as Gram matrices.

    Mroueh et al. 2015, Eq. 1 (q = normalised Haar measure) and Raj et al. 2017,
    Eq. 3 (any q; Eq. 4 for the Haar measure). For a finite group and
    ``n_group_samples=None`` the expectation is the exact weighted sum over all
    elements; otherwise ``n_group_samples`` elements are drawn once from q
    (``random_state``, ``sampling``) and the double sum is a Monte Carlo estimate
    with the same elements on both sides, i.e. exactly the kernel that
    :class:`OrbitFourierFeatures` and :class:`OrbitNystroem` approximate for those
    elements.

    Single-sum shortcut: when q is uniform on a finite group acting by exact
    permutations of coordinates (permutations, cyclic shifts), for which every
    named base kernel is invariant under the common action, g^{-1} g' is again uniform, so
    ``k_G(x, x') = (1/|G|) Σ_h k(x, h x')`` exactly: ``O(|G|)`` instead of ``O(|G|^2)`` per pair.

    Use it as a callable kernel (``SVC(kernel=HaarKernel(...))``) or build a
    precomputed Gram matrix with ``HaarKernel(...)(X, Y)``. It is a scikit-learn
    estimator as far as parameters go (``get_params``/``set_params``/``clone``):
    parameters are checked, and the group elements (and ``gamma="scale"``) are
    resolved, by :meth:`fit` or on the first call; ``set_params`` drops them, so
    the next call uses the new parameters. Once resolved they are fixed, so every
    call of one kernel uses the same elements (the Gram matrices of ``SVC.fit``
    and ``SVC.predict`` agree).

    Parameters
    ----------
    group : Group or None, default=None
        The group G and its law q (``None``: the trivial group, k itself).
    base_kernel : str or callable, default="rbf"
        A scikit-learn pairwise kernel name ("rbf", "linear", "poly", "polynomial", "laplacian", "sigmoid",
        "cosine", "chi2", "additive_chi2"), or a callable ``k(x, y) -> float`` of two rows, as
        ``sklearn.metrics.pairwise_kernels`` takes it (it then takes no ``gamma``, ``degree`` or ``coef0``).
    gamma : float > 0, "scale" or None, default=None
        Width of the base kernel where it has one; "scale" is
        ``1 / (n_features · X.var())`` of the X given to :meth:`fit` (or to the
        first call), as in scikit-learn's ``SVC``; None the kernel's default.
        The value used is ``gamma_``.
    degree : int >= 1 or None, default=None
        Polynomial degree (a positive integer); None the kernel's default.
    coef0 : float or None, default=None
        Constant term of "poly" / "sigmoid"; None the kernel's default.
    kernel_params : dict or None, default=None
        Further arguments of the base kernel, as in ``sklearn.kernel_approximation.Nystroem``
        (for a named kernel only those it takes, ``KERNEL_PARAMS``).
    n_group_samples : int >= 1 or None, default=None
        Number of elements drawn from q. None: every element of a finite group (or of a q with finite
        support) with its q weight, exactly; 64 draws for an infinite group. Exclusive with ``elements``.
    sampling : {"qmc", "iid"}, default="qmc"
        How sampled elements are drawn from q: "qmc" (default) a low-variance design
        (stratified grid / randomised lattice; where q is the Haar measure of a compact group with a grid
        subgroup, that subgroup is used and becomes ``group_``), "iid" independent draws (the papers').
    elements : array-like or None, default=None
        Use exactly these group elements, e.g. a fitted feature map's ``group_elements_``, so that the
        features' inner products can be compared with the kernel they estimate.
    weights : array-like or None, default=None
        Weights of ``elements``: non-negative, summing to 1 (default uniform); only with ``elements``.
    single_sum : {"auto", True, False}, default="auto"
        Use the single-sum shortcut above. "auto": wherever it is exact for a named base kernel (a
        callable one may not be invariant under the common action, so "auto" keeps the double sum);
        True: required (a ValueError where the group or law does not qualify; with a callable
        base kernel the caller vouches for ``k(g x, g y) = k(x, y)``).
    random_state : int, RandomState, Generator or None, default=None
        The draws of ``n_group_samples`` elements (deterministic given an int).
    max_memory_mb : float > 0, default=256.0
        Budget for the transformed copies of one block of X and one block of Y
        and their kernel block: both X and Y are processed in blocks, so the peak
        is this budget plus the output Gram matrix (and, for an image group, the sparse
        interpolation matrix of each side's warps, kept in a shared cache: README, "Memory").
    verbose : int, default=0
        Non-zero: a progress bar over the rows of X of each Gram matrix (stderr; silenced by
        ``ORBITKERNELS_QUIET=1`` or the command line's ``--quiet``, as every bar of the library).

    Attributes
    ----------
    group_ : Group
        The group the elements act by (the grid subgroup for ``sampling="qmc"`` where there is one).
    elements_ : ndarray of shape (r, n_params)
        The r group elements of the sums.
    weights_ : ndarray of shape (r,)
        Their weights (summing to 1).
    kernel_params_ : dict
        The keyword arguments given to the base kernel.
    gamma_ : float or None
        The gamma used (None where the kernel's default applies).
    single_sum_ : bool
        Whether the single sum is used.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.svm import SVC
    >>> from orbitkernels.groups import CyclicShift
    >>> from orbitkernels.kernels import HaarKernel
    >>> rng = np.random.default_rng(0)
    >>> y = np.arange(30) % 2  # two classes: two patterns, each at a random cyclic shift, plus noise
    >>> P = np.array([[2.0, 2, 0, 0, 0, 0, 0, 0], [2.0, 0, 0, 2, 0, 0, 0, 0]])
    >>> X = np.array([np.roll(P[c], k) for c, k in zip(y, rng.integers(8, size=30))]) + 0.3 * rng.normal(size=(30, 8))
    >>> kernel = HaarKernel(CyclicShift(8), gamma=0.1)
    >>> K = kernel(X[:20])  # the Gram matrix of the 20 training rows
    >>> K.shape, kernel.single_sum_
    ((20, 20), True)
    >>> np.allclose(kernel(np.roll(X[:20], 3, axis=1), X[:20]), K)  # a cyclic shift of the rows changes no value
    True

    With scikit-learn's ``SVC``, as a precomputed Gram matrix or as a callable kernel (accuracy on 10 new rows):

    >>> svc = SVC(kernel="precomputed").fit(K, y[:20])
    >>> float(svc.score(kernel(X[20:], X[:20]), y[20:]))
    1.0
    >>> float(SVC(kernel=HaarKernel(CyclicShift(8), gamma=0.1)).fit(X[:20], y[:20]).score(X[20:], y[20:]))
    1.0
    >>> float(SVC(gamma=0.1).fit(X[:20], y[:20]).score(X[20:], y[20:]))  # the base Gaussian kernel alone
    0.6
    """

    _parameter_constraints: dict = {
        "group": [Group, None],
        "base_kernel": [StrOptions(set(KERNEL_PARAMS)), callable],
        **kernel_param_constraints(),
        "n_group_samples": [count_constraint(), None],
        "sampling": [StrOptions({"qmc", "iid"})],
        "elements": ["array-like", None],
        "weights": ["array-like", None],
        "single_sum": [StrOptions({"auto"}), "boolean"],
        "random_state": RANDOM_STATE_CONSTRAINT,
        "max_memory_mb": [positive_real_constraint()],
        "verbose": ["verbose"],
    }

    def __init__(self, group=None, base_kernel="rbf", *, gamma=None, degree=None, coef0=None, kernel_params=None,
                 n_group_samples=None, sampling="qmc", elements=None, weights=None, single_sum="auto",
                 random_state=None, max_memory_mb=256.0, verbose=0):
        self.group = group
        self.base_kernel = base_kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.kernel_params = kernel_params
        self.n_group_samples = n_group_samples
        self.sampling = sampling
        self.elements = elements
        self.weights = weights
        self.single_sum = single_sum
        self.random_state = random_state
        self.max_memory_mb = max_memory_mb
        self.verbose = verbose

    def set_params(self, **params):
        super().set_params(**params)
        for name in _FITTED:  # resolved again, with the new parameters, on the next call
            self.__dict__.pop(name, None)
        return self

    def fit(self, X=None, y=None):
        """Check the parameters and fix the group elements (and ``gamma_`` from X for "scale").

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features) or None, default=None
            Needed only for ``gamma="scale"`` (and to size the memory check of ``n_group_samples``).
        y : None
            Ignored.

        Returns
        -------
        self : HaarKernel

        Raises
        ------
        ValueError
            When both ``elements`` and ``n_group_samples`` are given, ``weights`` without ``elements`` or not
            summing to 1, ``gamma="scale"`` without X, or ``single_sum=True`` where the single sum is not exact.
        """
        self._validate_params()
        group = resolve_group(self.group)
        if X is not None:
            X = self._check_X(X, "X")
        if self.elements is not None:
            if self.n_group_samples is not None:  # it was ignored in silence: the elements given are all used
                raise ValueError("give elements (the group elements to use) or n_group_samples (how many to draw), "
                                 "not both")
            E = group._check_elements(self.elements)
            if len(E) == 0:  # the average over no element is undefined (it was a ZeroDivisionError)
                raise ValueError(f"elements is empty (shape {E.shape}); give at least one group element")
            w = np.full(len(E), 1.0 / len(E)) if self.weights is None else np.asarray(self.weights, float)
            if w.shape != (len(E),) or not np.isfinite(w).all() or (w < 0).any() or not np.isclose(w.sum(), 1.0):
                raise ValueError(f"weights must be {len(E)} non-negative numbers summing to 1; got {self.weights!r}")
            used = group
        else:
            if self.weights is not None:
                raise ValueError("weights need elements")
            if self.n_group_samples is not None:
                # the smallest block _blocks can make (the single sum's), before the elements are drawn
                r, d = int(self.n_group_samples), 1 if X is None else X.shape[1]
                check_budget(type(self).__name__, 8 * sum(self._row_terms(d, r, True)), self.max_memory_mb,
                             f"n_group_samples={r} transformed copies of a row and their kernel values",
                             "lower n_group_samples or raise max_memory_mb")
            used, E, w = resolve_elements(group, self.n_group_samples, check_random_state(self.random_state),
                                          sampling=self.sampling)
        if isinstance(self.gamma, str) and X is None:
            raise ValueError('gamma="scale" needs data: call fit(X) or the kernel on the training X first')
        params, gamma_ = resolve_kernel_params(type(self).__name__, self.base_kernel, X, gamma=self.gamma,
                                               degree=self.degree, coef0=self.coef0,
                                               kernel_params=self.kernel_params)
        uniform_finite = (self.elements is None and used.is_finite and self.n_group_samples is None
                          and used.weights() is None)
        # The identity E_{g,g'} k(gx, g'y) = E_h k(x, hy) needs an exact representation:
        # interpolated image actions are only approximately unitary and approximately
        # closed under composition, and the single sum is then not even symmetric.
        exact = bool(used.permutes_coordinates)
        allowed = uniform_finite and exact and can_move_to_templates(used)
        if self.single_sum is True and not allowed:
            raise ValueError(
                "single_sum=True is exact only for the uniform law on a finite group acting by exact "
                "permutations of coordinates (interpolated image actions do not qualify)"
            )
        self.group_, self.elements_, self.weights_ = used, E, w
        self.kernel_params_, self.gamma_ = params, gamma_
        # a named kernel is a function of <x, y>, |x|, |y| or coordinate-wise sums, all invariant under a common
        # permutation of coordinates; a callable need not be (a weighted rbf is not), and then the single sum is
        # wrong and not even symmetric: "auto" keeps the double sum, True leaves it to the caller
        named = isinstance(self.base_kernel, str)
        self.single_sum_ = (allowed and named) if self.single_sum == "auto" else bool(self.single_sum)
        return self

    def _check_X(self, X, name, n_features=None):
        check_not_text(X, name)
        if getattr(X, "dtype", None) == object:  # object arrays of numbers: converted exactly, like the feature maps
            X = np.asarray(X, dtype=np.float64)
        if keeps_integer_rows(X):
            # integer or boolean rows (uint8 images) stay so, converted to float64 block by block in _fill: converted
            # whole, 6000 rows of 28 x 28 uint8 took 55 MB beside a 16 MB budget (float32 rows: 11.5 MB); a DataFrame
            # of such columns in their common type (np.asarray made bool beside uint8 an object array)
            if not isinstance(X, np.ndarray):
                X = X.to_numpy(dtype=integer_frame_dtype(X))
            return check_data(X, name, n_features=n_features, dtype=X.dtype)
        return check_data(X, name, n_features=n_features)

    def _k(self, A, B):
        return PairwiseKernel(self.base_kernel, self.kernel_params_)(A, B)

    def __call__(self, X, Y=None):
        """Gram matrix K[i, j] = k_{q,G}(X[i], Y[j]) (Y defaults to X).

        Parameters
        ----------
        X : array-like of shape (n_x, n_features)
        Y : array-like of shape (n_y, n_features) or None, default=None
            None: X.

        Returns
        -------
        K : ndarray of shape (n_x, n_y), float64

        Raises
        ------
        ValueError
            When X does not have the features the group acts on, when ``max_memory_mb`` cannot hold one row
            of the kernel blocks, when the base kernel gives NaN or inf, or for two single rows (1-D X and Y: how
            ``sklearn.metrics.pairwise_kernels`` calls a callable kernel; pass Gram matrices there).
        """
        if np.ndim(X) == 1 and Y is not None and np.ndim(Y) == 1:
            # scikit-learn's pairwise_kernels calls a callable once per pair of rows: "X must be 2-D" named no cause,
            # and each entry would act on both rows anew (r or r² base-kernel values) with gamma="scale" from one row
            raise ValueError(
                f"{type(self).__name__} computes whole Gram matrices; it was called on two single rows (shapes "
                f"{np.shape(X)} and {np.shape(Y)}), as scikit-learn's pairwise_kernels calls a callable kernel (in "
                "KernelRidge, KernelPCA, Nystroem...). Pass it the Gram matrices there: kernel='precomputed', "
                "fit(K(X_train), y) and predict(K(X_test, X_train)) with K this kernel; SVC takes it as a callable"
            )
        if not hasattr(self, "single_sum_"):
            self.fit(X)
        self._validate_params()  # max_memory_mb may have been assigned directly
        X = self._check_X(X, "X")
        Y = X if Y is None else self._check_X(Y, "Y", n_features=X.shape[1])
        n_feat = self.group_.n_features
        if n_feat is not None and X.shape[1] != n_feat:
            raise ValueError(f"X has {X.shape[1]} features, but {type(self.group_).__name__} acts on {n_feat} features")
        if self.base_kernel == "rbf":  # the group actions here keep norms (unitary) or nearly so
            gamma = self.gamma_ if self.gamma_ is not None else 1.0 / X.shape[1]
            check_rbf_precision(type(self).__name__, gamma, max_sq_norm(X), max_sq_norm(Y), np.float64)
        E, w = self.elements_, self.weights_
        r, d = len(E), X.shape[1]
        nx, ny = len(X), len(Y)
        bx, by = self._blocks(nx, ny, d, r, convert=X.dtype.kind != "f" or Y.dtype.kind != "f")
        K = np.empty((nx, ny))
        # X blocks outside: each X block is transformed once and each Y block once per X block
        # (getattr: kernels pickled before verbose existed)
        bar = progress(total=nx, desc=type(self).__name__, unit="rows", disable=not getattr(self, "verbose", 0))
        with bar:
            self._fill(K, X, Y, E, w, bx, by, bar)
        if not all_finite(K):  # as the feature maps: never hand back a NaN Gram matrix (a callable's NaN)
            raise ValueError(f"{type(self).__name__}: the base kernel {self.base_kernel!r} gave NaN or inf values "
                             "on these inputs; rescale X or check the kernel")
        return K

    def _fill(self, K, X, Y, E, w, bx, by, bar):
        """The Gram matrix's blocks into ``K``, X blocks outside; ``bar`` counts the X rows done."""
        r, d = len(E), X.shape[1]
        for a in range(0, len(X), bx):
            Xa = float64_block(X[a : a + bx])
            GX = None if self.single_sum_ else self.group_.act(Xa, E).reshape(r * len(Xa), d)
            for b in range(0, len(Y), by):
                Yb = float64_block(Y[b : b + by])
                m = len(Yb)
                GY = self.group_.act(Yb, E).reshape(r * m, d)  # (r·m, d): the transformed copies of this block
                if self.single_sum_:
                    # (1/|G|) Σ_h k(x, h y)
                    K[a : a + bx, b : b + m] = np.tensordot(w, self._k(Xa, GY).reshape(len(Xa), r, m),
                                                            axes=([0], [1]))
                else:
                    Kc = self._k(GX, GY).reshape(r, len(Xa), r, m)
                    K[a : a + bx, b : b + m] = np.einsum("k,knlm,l->nm", w, Kc, w)
                del GY
            # before the next X block's copies are made beside them: kept, the last block's r copies of its rows
            # took a third more than the budget (6000 rows of 28 x 28 against 30, r = 4: 18.6 MB at 16 MB)
            bar.update(len(Xa))
            del GX, Xa

    @staticmethod
    def _row_terms(d, r, single_sum):
        """Float64 values per X row, per Y row and per (X row, Y row) pair of a block (see :meth:`_blocks`)."""
        return (2 * d if single_sum else 2 * r * d), 2 * r * d, 3 * (r if single_sum else r * r)

    def _blocks(self, nx, ny, d, r, convert=False):
        """Rows of X and of Y per block, the largest product within ``max_memory_mb``.

        Per block (float64 values): the r transformed copies of the X rows and of
        the Y rows (twice: the action's own temporaries) and the kernel block with
        the ~3 temporaries of a scikit-learn pairwise kernel (distances, products).
        """
        budget = float(self.max_memory_mb) * 2**20 / 8
        ax, ay, c = self._row_terms(d, r, self.single_sum_)
        if convert:  # integer rows: each block's float64 copy
            ax, ay = ax + d, ay + d
        best = None
        cands = sorted({ny, *(min(ny, 2**k) for k in range(max(1, ny.bit_length()) + 1))})
        for by in cands:
            bx = min(nx, int((budget - ay * by) // (ax + c * by)))
            if bx >= 1 and (best is None or bx * by > best[0] * best[1]):
                best = (bx, by)
        if best is None:
            need = (ax + ay + c) * 8 / 2**20
            raise ValueError(
                f"max_memory_mb={self.max_memory_mb} cannot hold one row of the kernel blocks "
                f"({need:.2f} MB); raise it"
            )
        return best
