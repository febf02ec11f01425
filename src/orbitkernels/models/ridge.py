"""One ridge-path solver: regularised least squares (RLS) for a whole grid of α from one eigendecomposition.

The RLS of GURLS, used by Mroueh et al. 2015 (§6) and Raj et al. 2017 (§4) on top of the orbit
features, and by :class:`~orbitkernels.models.DistributedRidge`. **One convention**, scikit-learn's
``Ridge(alpha)``::

    min_{W, b}  ||Y - Φ W - 1 bᵀ||_F²  +  α ||W||_F²        (b unpenalised; 0 with fit_intercept=False)

Other conventions convert at the call: GURLS / Mroueh §6 ``(1/n)||Y - ΦW||² + λ||W||²`` and the
``λ n ||w||²`` of the Raj reproduction are both ``α = λ n``.

With the centred Φc, Yc the solution is W = (ΦcᵀΦc + αI)⁻¹ ΦcᵀYc, b = ȳ - W ᵀ x̄. One eigendecomposition
serves every α: of ΦcᵀΦc (primal, D × D) when D ≤ n, else of the Gram matrix ΦcΦcᵀ (dual, n × n);
a Gram matrix of a kernel can be given directly (:meth:`RidgePath.fit_gram`). From the same
decomposition the hat matrix H = 11ᵀ/n + Φc (ΦcᵀΦc + αI)⁻¹ Φcᵀ gives the exact leave-one-out residuals
(y_i - ŷ_i) / (1 - H_ii) for every α (the LOO identity holds for any fixed quadratic penalty).

Eigenvalues are clipped at 0 (a Gram matrix of float32 features, or an exact kernel evaluated with
rounding, can be slightly indefinite) and those within rounding of zero after adding α are dropped:
the minimum-norm solution, which is what scikit-learn's ``Ridge(alpha=0)`` returns for collinear X.

For a few α on many features (D in the thousands, D ≤ n), :func:`cholesky_path` is cheaper: one Gram matrix
(n D² flops, SYRK) and one Cholesky factorisation per α (D³/3), against ~10 D³ for the eigendecomposition; no
leave-one-out.
"""
from __future__ import annotations

import numbers

import numpy as np
from sklearn.exceptions import NotFittedError
from threadpoolctl import threadpool_limits

from ..utils.validation import all_finite, check_bool, check_data, check_real_dtype

__all__ = ["RidgePath", "centre_gram", "cholesky_path"]


def _eigh(A):
    # One LAPACK thread: on the project's 2-core machines OpenBLAS' threaded syevd is several times slower
    # than the single-threaded one (eigh of 2000 × 2000: 14 s on two threads, 4 s on one). numpy's syevd,
    # the driver the recorded Raj results were computed with (tiny-λ LOO is ill-conditioned: another
    # driver moves those residuals at the 1e-5 level).
    with threadpool_limits(1):
        evals, vecs = np.linalg.eigh(A)
    return np.maximum(evals, 0.0), vecs


def _alpha_values(alphas):
    """``alphas`` as a float array of at least one dimension (its values not yet checked), or None when an entry is
    not a real number: text, a flag, complex. A float conversion parses "1.0" as α = 1 and takes True for α = 1,
    where every other input of these solvers refuses text; shared by every solver of a path (cholesky_path,
    RidgePath, DistributedRidge)."""
    try:
        items = np.asarray(alphas, dtype=object)
    except (TypeError, ValueError):
        return None
    for v in items.flat:
        if isinstance(v, np.ndarray) and v.ndim == 0:  # [np.array(0.5)]: the number it holds
            v = v[()]
        if isinstance(v, (bool, np.bool_)) or not isinstance(v, numbers.Real):
            return None
    try:
        return np.atleast_1d(np.asarray(alphas, dtype=np.float64))
    except (TypeError, ValueError):
        return None


def _check_product(M, what, fix="rescale X (standardise its columns, say)"):
    """Refuse a product of finite data that overflowed. An inf Gram matrix made the Cholesky solve return W = 0
    (every prediction the mean) in silence and eigh fail with a bare 'Eigenvalues did not converge'. The check
    reads M once, against the n passes over it that forming it took."""
    if M.size and not all_finite(M):
        raise ValueError(f"{what} overflows {M.dtype} for rows of this magnitude (it holds inf or NaN); {fix} "
                         "first")
    return M


def _zero_constant(evals, U):
    """Set to 0, in place, the eigenvalue of the eigenvector closest to the constant one: the exact null direction
    of a Gram matrix of centred rows. eigh returns it at its rounding, ~eps·||K|| (whether K is a centred kernel
    or ΦcΦcᵀ of centred features: the error is the solver's, not the matrix's), and there it would count the
    intercept a second time in the leave-one-out hat matrix, by ~rounding / (n α), once α is so small that the true
    1 - H_ii (~α / λ_j) is smaller still: the interpolating end of a λ grid."""
    if len(evals):
        evals[int(np.argmax(np.abs(U.sum(axis=0))))] = 0.0


def _check_symmetric(K, rtol=1e-4, block=1024):
    """A Gram matrix is symmetric: eigh reads only its lower triangle, so another square matrix (a kernel of
    test rows against training rows that happens to be square) would be fitted silently and wrongly. Rounding
    of float32 products leaves a few ulps of asymmetry, far below ``rtol`` of the largest entry. Checked in
    row blocks so that the check needs no n × n temporary."""
    scale = max(abs(float(K.max())), abs(float(K.min()))) if K.size else 0.0  # np.abs(K) would be an n × n copy
    worst = max((float(np.abs(K[i:i + block] - K[:, i:i + block].T).max()) for i in range(0, len(K), block)),
                default=0.0)
    if worst > rtol * scale:
        raise ValueError(f"K must be a symmetric Gram matrix: max |K - Kᵀ| = {worst:.3g} against max |K| = "
                         f"{scale:.3g}; pass the kernel of the training rows against themselves")


def centre_gram(K_train, K_new=None):
    """Gram matrices centred in feature space on the mean feature of the training rows: (Kc, K_new_c).

    ``Kc = K - 1aᵀ - a1ᵀ + ā`` with ``a`` the training columns' means, and for the (m, n) kernel rows of new
    points ``K_new - 1aᵀ - (row means) + ā`` (None when not given): what :meth:`RidgePath.fit_gram` (with
    ``centred=True``) and :meth:`RidgePath.predict_gram` take for a ridge with an intercept.

    Parameters
    ----------
    K_train : array-like of shape (n, n)
        Kernel of the training rows against themselves (real numbers, not converted: float32 stays float32).
    K_new : array-like of shape (m, n) or None, default=None
        Kernel of new rows against the training rows.

    Returns
    -------
    Kc : ndarray of shape (n, n)
    K_new_c : ndarray of shape (m, n), or None when ``K_new`` is None

    Raises
    ------
    TypeError
        For a matrix that does not hold real numbers.
    ValueError
        For a ``K_train`` that is not a non-empty square matrix, a ``K_new`` of another width, or NaN / inf.

    Examples
    --------
    A linear kernel centred by ``centre_gram`` is the Gram matrix of the centred features, and the dual ridge on
    it predicts what the primal ridge (with its intercept) predicts:

    >>> import numpy as np
    >>> from orbitkernels.models import RidgePath, centre_gram
    >>> rng = np.random.default_rng(0)
    >>> X, X_new = rng.normal(size=(20, 5)), rng.normal(size=(3, 5))
    >>> y = X @ np.arange(1.0, 6.0)
    >>> Kc, K_new_c = centre_gram(X @ X.T, X_new @ X.T)
    >>> Kc.shape, K_new_c.shape
    ((20, 20), (3, 20))
    >>> Xc = X - X.mean(axis=0)
    >>> np.allclose(Kc, Xc @ Xc.T), np.allclose(K_new_c, (X_new - X.mean(axis=0)) @ Xc.T)
    (True, True)
    >>> dual = RidgePath(1.0).fit_gram(Kc, y, centred=True)
    >>> np.allclose(dual.predict_gram(K_new_c, 0), RidgePath(1.0).fit(X, y).predict(X_new, 0))
    True
    """
    # checked, not converted: the experiments pass float32 Gram matrices of tens of thousands of rows
    K_train = check_real_dtype(K_train, "K_train")
    if K_train.ndim != 2 or K_train.shape[0] != K_train.shape[1] or not K_train.size:
        raise ValueError(f"K_train must be a non-empty square (n, n) Gram matrix; got shape {K_train.shape}")
    _finite(K_train, "K_train")  # a NaN spreads through the column means to every entry of both results
    if K_new is not None:
        K_new = check_real_dtype(K_new, "K_new")
        if K_new.ndim != 2 or K_new.shape[1] != K_train.shape[0]:
            raise ValueError(f"K_new must be (m, {K_train.shape[0]}): new rows against the training rows; "
                             f"got shape {K_new.shape}")
        _finite(K_new, "K_new")
    col = K_train.mean(axis=0)
    tot = col.mean()
    Kc = K_train - col[None, :] - col[:, None] + tot
    if K_new is None:
        return Kc, None
    return Kc, K_new - col[None, :] - K_new.mean(axis=1, keepdims=True) + tot


def _finite(A, name):
    if A.size and not all_finite(A):
        raise ValueError(f"{name} contains {'NaN' if np.isnan(A).any() else 'inf'}; clean or impute the data first")


class RidgePath:
    """Ridge ``||Y - ΦW - 1bᵀ||² + α||W||²`` for every α of ``alphas``, multi-output.

    Build it with :meth:`fit` (features), :meth:`fit_gram` (a Gram matrix, dual only) or
    :meth:`from_moments` (n, means, centred ΦᵀΦ and ΦᵀY: what a distributed pass accumulates).
    ``predict(X)`` gives (n_alphas, m, k), ``predict(X, i)`` (m, k) at ``alphas[i]``;
    :meth:`loo_residuals` the exact leave-one-out residuals (after :meth:`fit` / :meth:`fit_gram`).
    A 1-D ``Y`` is one output: k = 1 throughout.

    Not a scikit-learn estimator: the parameters are checked by the constructor, and every method that
    takes an α's position ``i`` (``index``) wants an integer in ``[-n_alphas, n_alphas)``.

    Parameters
    ----------
    alphas : float or array-like of shape (n_alphas,)
        The penalties α, finite and ``>= 0`` (α = 0 gives the minimum-norm least-squares solution);
        a scalar is one α.
    fit_intercept : bool, default=True
        Fit the unpenalised intercept b (the data are centred); False: b = 0.

    Attributes
    ----------
    alphas : ndarray of shape (n_alphas,)
        The penalties, as floats.
    n_ : int
        Number of training rows.
    x_mean_ : ndarray of shape (D,) or None
        Mean of the training features (zeros without an intercept; None after :meth:`fit_gram`).
    y_mean_ : ndarray of shape (k,)
        Mean of the targets (zeros without an intercept).
    dual_ : bool
        Whether the decomposition is of the n × n Gram matrix (dual) rather than of ΦcᵀΦc (primal).
    evals_ : ndarray of shape (D,) or (n,)
        Eigenvalues of ΦcᵀΦc (primal) or of the Gram matrix (dual), clipped at 0.

    Raises
    ------
    ValueError
        For ``alphas`` that are empty, not 1-D, not finite, negative, booleans or text; at :meth:`fit` for rows
        so large that XᵀX overflows (rescale them).
    TypeError
        For a ``fit_intercept`` that is not True or False.

    Examples
    --------
    >>> import numpy as np
    >>> from orbitkernels.models import RidgePath
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(20, 5))
    >>> y = X @ np.arange(1.0, 6.0) + 0.1 * rng.normal(size=20)
    >>> path = RidgePath([0.1, 1.0, 10.0]).fit(X, y)  # one eigendecomposition for the three alphas
    >>> path.predict(X).shape, path.predict(X, 1).shape, path.coef(1).shape
    ((3, 20, 1), (20, 1), (5, 1))
    >>> from sklearn.linear_model import Ridge
    >>> np.allclose(path.coef(1)[:, 0], Ridge(alpha=1.0).fit(X, y).coef_)
    True

    The exact leave-one-out residuals select α without refitting; that of row 0 is the residual of a fit
    without row 0:

    >>> [round(float(np.mean(path.loo_residuals(i) ** 2)), 3) for i in range(3)]
    [0.012, 0.334, 8.737]
    >>> without_row_0 = RidgePath(1.0).fit(X[1:], y[1:])
    >>> bool(np.isclose(path.loo_residuals(1)[0, 0], y[0] - without_row_0.predict(X[:1], 0)[0, 0]))
    True
    """

    def __init__(self, alphas, *, fit_intercept=True):
        a = _alpha_values(alphas)  # a flag or text is not a penalty: [True] and "1.0" were α = 1
        # α = 0 is allowed: the minimum-norm least-squares solution (see _inverse)
        if a is None or a.ndim != 1 or a.size == 0 or not np.isfinite(a).all() or (a < 0).any():
            kind = ", not text or booleans" if a is None else ""
            raise ValueError(f"alphas must be a non-empty 1-D sequence of finite numbers >= 0{kind}; got {alphas!r}")
        self.alphas = a
        self.fit_intercept = check_bool(fit_intercept, "fit_intercept")  # a truthy "no" fitted an intercept

    # ------------------------------------------------------------------ construction
    def _targets(self, Y, n):
        Y = check_real_dtype(Y, "Y", " (regression targets; encode class labels as numbers first)")
        if Y.ndim not in (1, 2) or Y.shape[0] != n:
            raise ValueError(f"Y must be (n,) or (n, k) with n = {n} rows as the data; got shape {Y.shape}")
        Y = np.asarray(Y, dtype=np.float64)
        if not all_finite(Y):
            raise ValueError("Y contains NaN or inf")
        Y = Y.reshape(n, -1)
        self.y_mean_ = Y.mean(axis=0) if self.fit_intercept else np.zeros(Y.shape[1])
        self.n_ = n
        self._Yc = Y - self.y_mean_
        return self._Yc

    def _set(self, evals, vecs, proj, dual):
        self.evals_, self.vecs_, self.proj_, self.dual_ = evals, vecs, proj, dual
        # rounding noise of a rank-deficient matrix (numpy's pinv cut-off): 1/(λ_i + α) would give inf·0 = NaN
        self.tol_ = float(evals.max(initial=0.0)) * max(len(evals), 1) * np.finfo(np.float64).eps
        return self

    def fit(self, X, Y):
        """Primal (D ≤ n) or dual (D > n) eigendecomposition of the centred features ``X`` (n, D).

        Parameters
        ----------
        X : array-like of shape (n, D)
        Y : array-like of shape (n,) or (n, k)
            Real-valued targets (class labels encoded as numbers first).

        Returns
        -------
        self : RidgePath
        """
        given = X
        X = check_data(X, "X", dtype=np.float64)
        n, d = X.shape
        Yc = self._targets(Y, n)
        self.x_mean_ = X.mean(axis=0) if self.fit_intercept else np.zeros(d)
        if X is given or np.may_share_memory(X, given):
            Xc = X - self.x_mean_
        else:  # X is already our float64 copy (e.g. of float32 features): centre it in place, not in a second copy
            X -= self.x_mean_
            Xc = X
        self.Xc_ = Xc
        if d <= n:
            with np.errstate(over="ignore", invalid="ignore"):  # an overflow is refused by name just below
                G, XtY = Xc.T @ Xc, Xc.T @ Yc
            evals, V = _eigh(_check_product(G, "XᵀX (the Gram matrix of the features)"))
            return self._set(evals, V, V.T @ _check_product(XtY, "XᵀY", "rescale X or Y"), dual=False)
        with np.errstate(over="ignore", invalid="ignore"):
            G = Xc @ Xc.T
        evals, U = _eigh(_check_product(G, "XXᵀ (the Gram matrix of the rows)"))
        if self.fit_intercept:  # the centred rows' Gram matrix has the constant vector in its null space
            _zero_constant(evals, U)
        return self._set(evals, U, U.T @ Yc, dual=True)

    def fit_gram(self, K, Y, *, centred=False):
        """Dual fit on a Gram matrix ``K`` (n, n), already centred in feature space by the caller when
        ``fit_intercept`` (the intercept is then ȳ); predict with :meth:`predict_gram`.

        ``centred=True`` states that K is that centred matrix (:func:`centre_gram`), so that the constant vector
        is in its null space exactly: its eigenvalue is set to 0.

        Parameters
        ----------
        K : array-like of shape (n, n)
            Symmetric Gram matrix of the training rows.
        Y : array-like of shape (n,) or (n, k)
        centred : bool, default=False

        Returns
        -------
        self : RidgePath

        Raises
        ------
        ValueError
            For a K that is not square and symmetric, or a Y of another length.
        """
        K = check_data(K, "K", dtype=np.float64)
        if K.shape[0] != K.shape[1]:
            raise ValueError(f"K must be a square Gram matrix (n, n); got shape {K.shape}")
        _check_symmetric(K)
        Yc = self._targets(Y, len(K))
        self.x_mean_, self.Xc_ = None, None
        evals, U = _eigh(K)
        if centred:
            _zero_constant(evals, U)
        return self._set(evals, U, U.T @ Yc, dual=True)

    @classmethod
    def from_moments(cls, alphas, *, n, x_mean, y_mean, xtx, xty, fit_intercept=True):
        """Primal solver from sufficient statistics: ``xtx`` = ΦcᵀΦc (D, D), ``xty`` = ΦcᵀYc (D, k),
        centred on ``x_mean`` (D,) / ``y_mean`` (k,) (zeros without an intercept), ``n`` rows.
        No LOO (the rows are gone). Returns the fitted :class:`RidgePath`."""
        self = cls(alphas, fit_intercept=fit_intercept)
        self.n_ = int(n)
        self.x_mean_, self.y_mean_ = np.asarray(x_mean, float), np.asarray(y_mean, float)
        self.Xc_, self._Yc = None, None
        xtx = _check_product(np.asarray(xtx, dtype=np.float64), "xtx (XᵀX, the Gram matrix of the centred rows)")
        xty = _check_product(np.asarray(xty, dtype=np.float64), "xty (XᵀY of the centred rows)", "rescale X or Y")
        evals, V = _eigh(xtx)
        return self._set(evals, V, V.T @ xty, dual=False)

    # ------------------------------------------------------------------ solutions
    def _fitted_index(self, i, method):
        """``i`` checked as :meth:`_index` does, on a fitted path (coef(True) was the stack of every α's W)."""
        self._check_fitted(method)
        return self._index(i)

    def _inverse(self, i):
        """1 / (λ_j + α_i) on the eigenvalues, 0 where that is within rounding of zero (minimum norm)."""
        d = self.evals_ + self.alphas[i]
        keep = d > self.tol_
        return np.where(keep, 1.0 / np.where(keep, d, 1.0), 0.0)

    def dual_coef(self, i):
        """c with W = Φcᵀ c at ``alphas[i]`` (dual solvers only: :meth:`fit_gram`, or :meth:`fit` with D > n):
        (n, k). A ValueError for a primal solver (its W is :meth:`coef`)."""
        i = self._fitted_index(i, "dual_coef")
        if not self.dual_:  # the primal formula below would return W (D, k) under this name
            raise ValueError("dual_coef needs a dual solution (fit_gram, or fit with more features than rows); "
                             "use coef")
        return self.vecs_ @ (self.proj_ * self._inverse(i)[:, None])

    def coef(self, i):
        """W (D, k) at ``alphas[i]`` (not after :meth:`fit_gram`: there are no features; use :meth:`dual_coef`)."""
        i = self._fitted_index(i, "coef")
        if self.dual_:
            if self.Xc_ is None:  # was an AttributeError of None.T
                raise ValueError("this RidgePath was fitted on a Gram matrix (fit_gram): it has no feature weights; "
                                 "use dual_coef")
            return self.Xc_.T @ self.dual_coef(i)
        return self.vecs_ @ (self.proj_ * self._inverse(i)[:, None])

    def intercept(self, i):
        """b (k,) at ``alphas[i]`` (zeros without an intercept)."""
        i = self._fitted_index(i, "intercept")  # y_mean_ was read first: an AttributeError before any fit
        return self.y_mean_ - self.x_mean_ @ self.coef(i)

    def _check_fitted(self, method, *, gram=None):
        """Fitted, and for ``gram`` True / False with what predict_gram / predict need (None: fitted only)."""
        if not hasattr(self, "evals_"):
            raise NotFittedError(f"this RidgePath is not fitted yet; call fit, fit_gram or from_moments before "
                                 f"{method}")
        if gram is None:
            return
        if gram and not self.dual_:
            raise ValueError("predict_gram needs a dual solution (fit_gram, or fit with more features than rows); "
                             "use predict")
        if not gram and self.x_mean_ is None:
            raise ValueError("this RidgePath was fitted on a Gram matrix (fit_gram): predict with predict_gram")

    @staticmethod
    def _new_rows(X, width, name, what):
        """New rows checked without a float64 copy of them all (predict converts them a block at a time)."""
        X = check_real_dtype(X, name)
        if X.ndim != 2 or X.shape[1] != width:
            raise ValueError(f"{name} must be 2-D with {width} {what}; got shape {X.shape}")
        if not all_finite(X):
            raise ValueError(f"{name} contains NaN or inf")
        return X

    def _index(self, index):
        """``index`` of an α of the grid: an integer (int(1.5) would answer for α[1] in silence), in range."""
        if isinstance(index, (bool, np.bool_)) or not isinstance(index, (int, np.integer)):
            raise TypeError(f"index must be an integer position in alphas; got {index!r}")
        if not -len(self.alphas) <= index < len(self.alphas):
            raise IndexError(f"index {index} is out of range for {len(self.alphas)} alphas")
        return int(index)

    #: bytes of the float64 centred copy of new rows that :meth:`predict` holds at a time beside its result (its
    #: only temporary): at D = 17000 the 50k test digits of Rotated MNIST need a 6.8 GB copy at once, beside
    #: features as large
    PREDICT_BLOCK_BYTES = 64 * 2**20

    def predict(self, X, index=None):
        """Φ W + b at ``alphas[index]`` (m, k), or for every α (n_alphas, m, k) when ``index`` is None.

        The rows are centred and multiplied a block at a time (``PREDICT_BLOCK_BYTES``), against every α's
        W at once: one product per block, and memory that does not grow with m beyond the predictions.

        Parameters
        ----------
        X : array-like of shape (m, D)
        index : int or None, default=None
            Position of one α in ``alphas`` (negative counts from the end); None: every α.

        Returns
        -------
        P : ndarray of shape (m, k), or (n_alphas, m, k) when ``index`` is None

        Raises
        ------
        IndexError
            For an ``index`` outside ``[-n_alphas, n_alphas)`` ("index 5 is out of range for 3 alphas").
        TypeError
            For an ``index`` that is not an integer (a float, a boolean).
        ValueError
            After :meth:`fit_gram` (use :meth:`predict_gram`), or for X of another width or with NaN / inf.
        """
        self._check_fitted("predict", gram=False)
        X = self._new_rows(X, len(self.x_mean_), "X", "features")
        idx = range(len(self.alphas)) if index is None else [self._index(index)]
        W = np.concatenate([self.coef(i) for i in idx], axis=1)  # (D, n_α · k)
        m, k = X.shape[0], self.y_mean_.shape[0]
        # one buffer for the result, row-major in m as the product writes it: (n_α, m, k) is a transposed view of it
        out = np.empty((m, W.shape[1]))
        # the block's float64 centred copy is its only temporary (the product goes straight into the result's rows);
        # the same blocks as ever, since the BLAS kernel, and so the rounding, can change with their size
        rows = max(1, int(self.PREDICT_BLOCK_BYTES // (8 * max(X.shape[1], 1))))
        for a in range(0, m, rows):
            B = np.array(X[a : a + rows], dtype=np.float64)  # a copy even of float64 rows: centred in place
            B -= self.x_mean_
            np.matmul(B, W, out=out[a : a + rows])
            del B  # before the next block's copy is made beside it
        P = out.reshape(m, len(idx), k)
        P += self.y_mean_
        P = P.transpose(1, 0, 2)
        return P if index is None else P[0]

    def predict_gram(self, K_new, index=None):
        """Predictions from the (m, n) kernel rows of new points against the training rows (dual only),
        centred like the training Gram matrix by the caller (:func:`centre_gram`).

        ``index`` and the result's shape are those of :meth:`predict`: (m, k), or (n_alphas, m, k) when
        ``index`` is None; a ValueError for a primal solver, an IndexError / TypeError for a bad ``index``.
        """
        self._check_fitted("predict_gram", gram=True)
        K_new = np.asarray(self._new_rows(K_new, self.n_, "K_new", "columns (one per training row)"),
                           dtype=np.float64)
        idx = range(len(self.alphas)) if index is None else [self._index(index)]
        P = np.stack([K_new @ self.dual_coef(i) for i in idx]) + self.y_mean_
        return P if index is None else P[0]

    # ------------------------------------------------------------------ leave-one-out
    def loo_residuals(self, i):
        """Exact leave-one-out residuals (n, k) at ``alphas[i]``: (y - ŷ) / (1 - H_ii), H including the
        intercept's share 1/n. A ValueError after :meth:`from_moments` (no training rows), or with fewer
        than two rows.

        At α = 0 a row the fit interpolates (H_ii = 1: D ≥ n, or a row alone in its direction) has
        0 / 0 there; its residual is the limit α → 0⁺, which is the residual of the minimum-norm least
        squares refitted without the row: ``(K⁺ y)_i / (K⁺)_ii`` over the kept eigenpairs of the centred
        Gram matrix K (in the primal from those of ΦcᵀΦc: K⁺ = B Λ⁻² Bᵀ with B = Φc V).
        """
        i = self._fitted_index(i, "loo_residuals")
        if getattr(self, "_Yc", None) is None:
            raise ValueError("leave-one-out needs the training rows; this RidgePath was built from moments")
        if self.n_ < 2:
            raise ValueError(f"leave-one-out needs at least 2 training rows; got {self.n_}")
        inv = self._inverse(i)
        if self.dual_:  # H = U diag(s/(s+α)) Uᵀ on the centred Gram matrix
            A, scale = self.vecs_, self.evals_
            shrink = self.evals_ * inv
            fitted = self.vecs_ @ (self.proj_ * shrink[:, None])
            h = (self.vecs_ * self.vecs_) @ shrink
        else:
            B = getattr(self, "_B", None)
            if B is None:
                B = self._B = self.Xc_ @ self.vecs_
            A, scale = B, self.evals_ ** 2  # U_j = B_j / √λ_j and proj_j = √λ_j U_jᵀ y
            fitted = B @ (self.proj_ * inv[:, None])
            h = (B * B) @ inv
        if self.fit_intercept:
            h = h + 1.0 / self.n_
        one_minus_h = 1.0 - h
        out = (self._Yc - fitted) / np.maximum(one_minus_h, 1e-12)[:, None]
        if self.alphas[i] == 0.0:
            # (y - ŷ)_i and 1 - H_ii are both rounding noise on an interpolated row (the 1e-12 floor made them
            # residuals of 1e-4 where refitting gives units, and α = 0 won every leave-one-out selection)
            rows = one_minus_h <= 100.0 * self.n_ * np.finfo(np.float64).eps
            kept = inv > 0
            if rows.any() and kept.any():
                w = 1.0 / scale[kept]
                Ar = A[np.ix_(rows, kept)]
                out[rows] = (Ar @ (self.proj_[kept] * w[:, None])) / ((Ar * Ar) @ w)[:, None]
        return out


def cholesky_path(X, Y, alphas, *, fit_intercept=True):
    """Ridge (the module's convention) for every α of ``alphas``: ``[(W, b), ...]``, W (D, k), b (k,).

    Primal normal equations (ΦcᵀΦc + αI) W = ΦcᵀYc from **one** Gram matrix ΦcᵀΦc (SYRK: n D² flops) and one
    Cholesky factorisation per α (D³/3); when D > n the dual, W = Φcᵀ (ΦcΦcᵀ + αI)⁻¹ Yc, the same way on the
    n × n Gram matrix. In X's precision: float32 rows stay float32 (as scikit-learn's
    ``Ridge(solver="cholesky")`` keeps them), anything else is float64. What a validation split over a few α
    needs at D in the thousands (Rotated MNIST's 7000 features: one Gram instead of one per α); for
    leave-one-out or many α use :class:`RidgePath`. ``Y`` is (n,) or (n, k); α must be positive.

    Parameters
    ----------
    X : array-like of shape (n, D)
    Y : array-like of shape (n,) or (n, k)
    alphas : float or array-like of shape (n_alphas,)
        Penalties, finite and ``> 0``.
    fit_intercept : bool, default=True

    Returns
    -------
    path : list of (W, b)
        One per α, in the order given: W of shape (D, k) and b of shape (k,) (k = 1 for a 1-D Y), float32
        for float32 X, else float64.

    Raises
    ------
    TypeError
        For X or Y that do not hold real numbers.
    ValueError
        For an empty or non-2-D X, a Y of another length, an α that is not a positive finite number, NaN / inf,
        or rows so large that XᵀX (XXᵀ when D > n) overflows X's precision (rescale them).

    Examples
    --------
    >>> import numpy as np
    >>> from orbitkernels.models import cholesky_path
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(20, 5))
    >>> y = X @ np.arange(1.0, 6.0) + 0.1 * rng.normal(size=20)
    >>> path = cholesky_path(X, y, [0.1, 1.0])  # one Gram matrix, one Cholesky factorisation per alpha
    >>> [(W.shape, b.shape) for W, b in path]
    [((5, 1), (1,)), ((5, 1), (1,))]
    >>> from sklearn.linear_model import Ridge
    >>> W, b = path[1]
    >>> ridge = Ridge(alpha=1.0).fit(X, y)
    >>> np.allclose(W[:, 0], ridge.coef_), np.allclose(b[0], ridge.intercept_)
    (True, True)
    >>> cholesky_path(X.astype(np.float32), y, 1.0)[0][0].dtype  # float32 rows stay float32
    dtype('float32')
    """
    from scipy.linalg import cho_factor, cho_solve
    from scipy.linalg.blas import get_blas_funcs

    # as RidgePath: text would be parsed and complex parts dropped by the float conversion
    X = check_real_dtype(X, "X")
    dtype = np.float32 if X.dtype == np.float32 else np.float64
    X = np.asarray(X, dtype=dtype)
    if X.ndim != 2 or 0 in X.shape:
        raise ValueError(f"X must be 2-D (n, D) with at least one row and one column; got shape {X.shape}")
    n, d = X.shape
    Y = np.asarray(check_real_dtype(Y, "Y", " (regression targets; encode class labels as numbers first)"), dtype=dtype)
    if Y.ndim not in (1, 2) or len(Y) != n:
        raise ValueError(f"Y must be (n,) or (n, k) with n = {n} rows as X; got shape {Y.shape}")
    Y = Y.reshape(n, -1)
    given, alphas = alphas, _alpha_values(alphas)
    if alphas is None or alphas.ndim != 1 or not alphas.size or not np.all(np.isfinite(alphas)) or np.any(alphas <= 0):
        kind = " of numbers, not text or booleans" if alphas is None else ""
        raise ValueError(f"alphas must be positive and finite, a non-empty 1-D sequence{kind} (the Cholesky factor "
                         f"needs ΦcᵀΦc + αI > 0); got {given!r}")
    if not (np.all(np.isfinite(X)) and np.all(np.isfinite(Y))):
        raise ValueError("X and Y must be finite (no NaN or inf)")
    x_mean = X.mean(axis=0, dtype=np.float64).astype(dtype) if fit_intercept else np.zeros(d, dtype)
    y_mean = Y.mean(axis=0, dtype=np.float64).astype(dtype) if fit_intercept else np.zeros(Y.shape[1], dtype)
    Xc = X - x_mean if fit_intercept else X
    Yc = Y - y_mean
    syrk = get_blas_funcs("syrk", (Xc,))
    dual = d > n
    # upper triangles, no copy: Xcᵀ is the Fortran-ordered (D, n) view of the C-ordered rows (A Aᵀ = ΦcᵀΦc),
    # Xc itself the Fortran-ordered view of Xcᵀ (Aᵀ A = ΦcΦcᵀ)
    with np.errstate(over="ignore", invalid="ignore"):  # an overflow is refused by name just below
        G = syrk(1.0, Xc.T, trans=1 if dual else 0, lower=0)
        rhs = Yc if dual else Xc.T @ Yc
    # cho_factor is told not to look (check_finite=False): on an inf G it returned W = 0, b = mean(Y)
    _check_product(G, "XXᵀ (the Gram matrix of the rows)" if dual else "XᵀX (the Gram matrix of the features)")
    _check_product(rhs, "XᵀY", "rescale X or Y")
    out = []
    diag = np.arange(len(G))
    for a in alphas:
        A = G.copy()
        A[diag, diag] += dtype(a)
        sol = cho_solve(cho_factor(A, lower=False, overwrite_a=True, check_finite=False), rhs, check_finite=False)
        W = Xc.T @ sol if dual else sol
        out.append((W, y_mean - x_mean @ W))
    return out
