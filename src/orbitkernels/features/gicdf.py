"""Group-invariant CDF features, GICDF (Mroueh, Voinea & Poggio 2015, §2)."""
from __future__ import annotations

from numbers import Real

import numpy as np

from sklearn.utils._param_validation import StrOptions
from sklearn.utils.validation import check_is_fitted

from ..utils.validation import (
    MAX_COUNT,
    StrictInterval,
    check_int,
    check_param_again,
    check_random_state,
    check_real,
    count_constraint,
    positive_real_constraint,
)
from ._engine import CDFPool, MaxAbsPool
from ._base import DEFAULT_MEMORY, OrbitFeaturesBase, magnitude_guard

__all__ = ["GroupCDFFeatures", "sample_cdf_templates"]


def sample_cdf_templates(n_templates, n_features, rng, *, sampling="gaussian", epsilon=0.5):
    """Random templates of Mroueh et al. 2015, §2.

    "gaussian": t ~ N(0, I/d), rejected unless ``||t||^2 < 1 + epsilon`` (so that
    ``|<x, g t>| < 1 + epsilon = s`` for unit x and a unitary action), epsilon in (0, 1).
    "sphere": t uniform on the unit sphere S^{d-1} (Remark 1).
    (``GroupCDFFeatures(template_sampling="data")`` draws rows of its training data instead.)

    Parameters
    ----------
    n_templates : int >= 0
        m, the number of templates.
    n_features : int >= 1
        d, their dimension.
    rng : int, RandomState instance, Generator or None
        The random source.
    sampling : {"gaussian", "sphere"}, default="gaussian"
        The law of the templates.
    epsilon : float in (0, 1), default=0.5
        The rejection bound (``sampling="gaussian"`` only; "sphere" ignores it).

    Returns
    -------
    templates : ndarray of shape (n_templates, n_features)
        float64.

    Raises
    ------
    ValueError
        A count or ``epsilon`` out of range, another ``sampling``, or a rejection
        that accepts too few templates (epsilon tiny in high dimension).
    TypeError
        A count that is not an integer, an ``epsilon`` that is not a real number.

    Examples
    --------
    >>> import numpy as np
    >>> from orbitkernels.features import sample_cdf_templates
    >>> T = sample_cdf_templates(5, 8, 0)  # Gaussian, kept where ||t||^2 < 1 + epsilon
    >>> T.shape
    (5, 8)
    >>> bool(((T ** 2).sum(axis=1) < 1.5).all())
    True
    >>> S = sample_cdf_templates(5, 8, np.random.default_rng(0), sampling="sphere")
    >>> np.allclose(np.linalg.norm(S, axis=1), 1.0)  # on the unit sphere
    True
    """
    # a public helper: its arguments are checked as the estimator's are, by name (a seed passed as rng, a
    # negative count or epsilon <= 0 were an AttributeError or a "rejection sampling accepted too few" error)
    n_templates = check_int(n_templates, "n_templates", min_value=0, max_value=MAX_COUNT)
    d = check_int(n_features, "n_features", min_value=1, max_value=MAX_COUNT)
    rng = check_random_state(rng)
    if sampling == "sphere":
        T = rng.normal(size=(n_templates, d))
        return T / np.linalg.norm(T, axis=1, keepdims=True)
    if sampling != "gaussian":
        raise ValueError(f"sampling must be 'gaussian' or 'sphere'; got {sampling!r}")
    epsilon = check_real(epsilon, "epsilon", low=0.0, high=1.0, low_open=True, high_open=True)
    out = []
    need = n_templates
    for _ in range(1000):
        T = rng.normal(scale=1.0 / np.sqrt(d), size=(2 * need + 8, d))
        T = T[(T * T).sum(axis=1) < 1.0 + epsilon]
        out.append(T[:need])
        need -= len(out[-1])
        if need == 0:
            return np.vstack(out)
    raise ValueError(
        f"rejection sampling accepted too few templates with epsilon={epsilon} in dimension {d}; "
        "raise epsilon or use template_sampling='sphere'"
    )


def auto_range(largest):
    """``range_`` for ``value_range="auto"`` from the largest ``|<x, g t>|`` of each training row (any shape): their
    maximum with a relative margin of 1e-6, so that the largest projection stays within the thresholds; 1 when every
    projection is 0."""
    return float(np.max(largest)) * (1 + 1e-6) or 1.0


class GroupCDFFeatures(OrbitFeaturesBase):
    """Group-invariant CDF features Φ(x) ∈ R^{m(2n+1)} (Mroueh et al. 2015, §2).

    For templates t_1..t_m and group elements g_1..g_r, r = ``|G|``::

        Φ(x)_{j,k} = sqrt(s / (n m)) · Σ_i w_i 1{<g_i t_j, x> <= s k / n},   k = -n..n

    with w_i = ``1/|G|`` (or q's weights on a finite group). By Theorem 1,
    <Φ(x), Φ(z)> estimates the Haar-integration kernel K_s(x, z) ≈ s - d_G(x, z),
    d_G(x, z) = (2πd)^{-1/2} ∫∫ ||g x - g' z|| dμ(g) dμ(g'), uniformly on N points
    for m, ``|G|`` and n large enough (Theorem 2).

    Column ``j·(2n+1) + k + n`` (j = 0..m-1) holds Φ(x)_{j,k}: the 2n+1 features of
    each template side by side.

    Parameters
    ----------
    group : Group or None, default=None
        The group and its distribution q (None: the trivial group).
    n_templates : int >= 1, default=10
        m, the number of templates.
    n_bins : int >= 1, default=25
        n: 2n+1 thresholds s k / n, k = -n..n.
    n_group_samples : int >= 1 or None, default=None
        ``|G|``, the group elements. None: every element of a finite group (or of a q
        with finite support under ``sampling="qmc"``) with q's weights, 64 samples
        of an infinite one.
    sampling : {"qmc", "iid"}, default="qmc"
        How the ``|G|`` elements are drawn from the group's law when they are sampled:
        "qmc" a low-variance design (stratified grid / randomised lattice; for the
        full circle of rotations its grid subgroup), "iid" independent draws, the
        paper's scheme (§2: g_i ~ μ i.i.d.).
    template_sampling : {"gaussian", "sphere", "data"}, default="gaussian"
        Gaussian with rejection (§2), uniform on the sphere (Remark 1), or
        random rows of the training data, unit-normed (i-theory's stored
        templates; outside Theorem 1's assumptions; needs n_templates <= n_samples).
    epsilon : float in (0, 1), default=0.5
        Rejection bound of the Gaussian templates (``||t||^2 < 1 + epsilon``); the
        thresholds cover [-s, s] with s = 1 + epsilon unless ``value_range`` is given.
    normalize : bool, default=True
        Scale inputs to unit norm, as the paper assumes X ⊂ S^{d-1} (zero rows stay zero).
        Each row is divided by its largest ``|x_i|`` before its norm is taken, so the
        features are the same for X and c·X at any finite scale c > 0 (no
        under/overflow of the squared norm, float32 or float64).
    value_range : float > 0, "auto" or None, default=None
        Half-width s of the thresholds. None: the paper's s = 1 + epsilon.
        A float sets it; "auto" uses the largest ``|<x, g t>|`` seen at ``fit``, so
        the bins cover the projections actually met (with Gaussian templates in
        high dimension they concentrate in a band of width ~ 1/sqrt(d)).
    action : {"templates", "data", "auto"}, default="templates"
        GICDF is defined on transformed templates (<x, g t>; "auto" is "templates");
        "data" uses <g^{-1} x, t>, equal for a unitary, data-independent action (q need not be
        symmetric: each sampled g is inverted; a ValueError for another action); for an
        interpolating warp (an image rotation by any angle, a scaling) the two differ by its
        interpolation error.
    random_state : int, RandomState instance, Generator or None, default=None
        Seeds the templates and the group elements (every draw is made at ``fit``).
    max_memory_mb : float > 0, default=256.0
        Working memory of ``fit`` and :meth:`transform` (beyond the input and the output; the s·r
        moved templates that the templates' side builds once and keeps, in one precision, are the
        fitted model's, outside it); a ValueError when one row does not fit.
    fast_path : {"auto", "gemm", "fft", "polar", "none"}, default="auto"
        The engine's strategy (:class:`~orbitkernels.features.ProjectionPlan`,
        ``docs/performance.md``): "auto" takes the FFT correlation when every cyclic shift is
        used and the polar grid for a ``PolarRotation`` (what ``sampling="qmc"`` takes for
        a full circle of image rotations), else the GEMM or data path.
    dtype : {"auto", "float32", "float64"} or None, default=None
        Precision of the heavy loops; None and "auto" follow the input's (the output
        is in the input's precision either way).
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
    templates_ : ndarray of shape (n_templates, n_features)
        The templates t_j, float64.
    group_ : Group
        The group the elements belong to: ``group`` (the trivial group for None), or the
        finite grid subgroup ``sampling="qmc"`` takes for a full circle of rotations.
    group_elements_ : ndarray of shape (r, p)
        The r = ``|G|`` elements, p = ``group_.n_params`` parameters each.
    group_weights_ : ndarray of shape (r,)
        Their weights w_i (1/r for sampled elements, q's on a finite support).
    plan_ : ProjectionPlan
        The engine's plan of the projections.
    action_ : {"templates", "data"}
        The side the group acts on.
    n_templates_ : int
        m, as fitted.
    n_bins_ : int
        n, as fitted.
    normalize_ : bool
        Whether rows are scaled to unit norm, as fitted.
    range_ : float
        s, the half-width of the thresholds.
    n_features_in_ : int
        n_features, the number of features seen at ``fit``.
    feature_names_in_ : ndarray of shape (n_features,)
        Column names of X at ``fit``, when it had string names (a DataFrame).
    fit_sample_indices_ : ndarray of int
        The rows a Dask X was fitted on (after a ``fit`` on a Dask array only).

    Notes
    -----
    The output is not clipped: a projection beyond the range counts in no
    threshold (above s) or in all of them (below -s), as in the definition.
    The output has ``n_templates * (2 * n_bins + 1)`` columns.

    Examples
    --------
    >>> import numpy as np
    >>> from orbitkernels.features import GroupCDFFeatures
    >>> from orbitkernels.groups import CyclicShift
    >>> X = np.random.default_rng(0).normal(size=(20, 8))
    >>> cdf = GroupCDFFeatures(CyclicShift(8), n_templates=10, n_bins=5, random_state=0)
    >>> F = cdf.fit_transform(X)
    >>> F.shape  # n_templates * (2 * n_bins + 1) columns
    (20, 110)
    >>> np.allclose(cdf.transform(np.roll(X, 3, axis=1)), F)  # a cyclic shift of the rows changes no feature
    True
    >>> np.allclose(cdf.transform(2.5 * X), F)  # rows are scaled to unit norm first (normalize=True)
    True
    >>> cdf.range_  # the thresholds cover [-s, s], s = 1 + epsilon
    1.5
    """

    _define_on_templates = True
    _n_templates_param = "n_templates"

    _parameter_constraints: dict = {
        **OrbitFeaturesBase._parameter_constraints,
        "n_templates": [count_constraint()],
        "n_bins": [count_constraint()],
        "template_sampling": [StrOptions({"gaussian", "sphere", "data"})],
        "epsilon": [StrictInterval(Real, 0, 1, closed="neither")],
        "normalize": ["boolean"],
        "value_range": [positive_real_constraint(), StrOptions({"auto"}), None],
    }

    def __init__(self, group=None, *, n_templates=10, n_bins=25, n_group_samples=None, sampling="qmc",
                 template_sampling="gaussian", epsilon=0.5, normalize=True, value_range=None, action="templates",
                 random_state=None, max_memory_mb=DEFAULT_MEMORY, fast_path="auto", dtype=None, backend="numpy",
                 device=None, verbose=0):
        self.group = group
        self.n_templates = n_templates
        self.n_bins = n_bins
        self.n_group_samples = n_group_samples
        self.sampling = sampling
        self.template_sampling = template_sampling
        self.epsilon = epsilon
        self.normalize = normalize
        self.value_range = value_range
        self.action = action
        self.random_state = random_state
        self.max_memory_mb = max_memory_mb
        self.fast_path = fast_path
        self.dtype = dtype
        self.backend = backend
        self.device = device
        self.verbose = verbose

    def _draw_templates(self, X, rng):
        # what transform reads is fixed here, at fit (set_params afterwards changes nothing)
        self.n_templates_ = int(self.n_templates)
        self.n_bins_ = int(self.n_bins)
        self.normalize_ = bool(self.normalize)
        if self.template_sampling == "data":
            # i-theory's memory-based templates (Anselmi et al. 2013, Mroueh's ref. [1]): stored
            # training signals, unit-normed. Structured templates make the group's effect visible
            # (a pitch shift of white noise is white noise again); the Theorem 1 guarantee assumes
            # Gaussian templates and does not cover this choice.
            if self.n_templates > len(X):
                raise ValueError(f"template_sampling='data' needs n_templates <= n_samples; "
                                 f"got n_templates={self.n_templates} with {len(X)} samples")
            T = np.asarray(X[rng.choice(len(X), self.n_templates, replace=False)], dtype=float)
            norms = np.linalg.norm(T, axis=1, keepdims=True)
            if np.any(norms == 0):
                raise ValueError("template_sampling='data' drew an all-zero row of X as a template")
            return T / norms
        return sample_cdf_templates(self.n_templates, X.shape[1], rng, sampling=self.template_sampling,
                                    epsilon=self.epsilon)

    def _after_fit(self, X):
        if self.value_range is None:
            self.range_ = 1.0 + float(self.epsilon)
        elif isinstance(self.value_range, str):  # "auto"
            # the largest |<x, g t>| over the training rows, in bounded-memory blocks like transform
            self.range_ = auto_range(self._map(X, MaxAbsPool(), 1, desc="fit (value range)"))
        else:
            self.range_ = float(self.value_range)

    @property
    def _n_features_out(self):
        return self.n_templates_ * (2 * self.n_bins_ + 1)

    @property
    def _prepare_copies(self):
        return getattr(self, "normalize_", self.normalize)

    def _prepare(self, X):
        if not getattr(self, "normalize_", self.normalize):
            return X
        # divide by the largest |x_i| first: the squared norm of the rescaled row lies in
        # [1, d], so it neither underflows (X·1e-25 in float32) nor overflows (X·1e200 in float64)
        scale = np.abs(X).max(axis=1, keepdims=True)
        scale[scale == 0] = 1
        Xs = X / scale
        norms = np.linalg.norm(Xs, axis=1, keepdims=True)
        norms[norms == 0] = 1
        Xs /= norms
        return Xs

    def _check_magnitude(self, X):
        if not getattr(self, "normalize_", self.normalize):  # unit rows cannot overflow; raw rows of huge norm can
            t = float(np.sqrt((self.templates_ ** 2).sum(1).max()))
            magnitude_guard(X, self.plan_.compute_dtype(X.dtype), 1, t, "its projections <x, g t>")

    def _pool_spec(self, n_bins=None):
        """Mroueh §2's feature map Φ as an engine pooling; ``n_bins`` a sequence pools several resolutions at once."""
        m = self.n_templates_
        bins = self.n_bins_ if n_bins is None else n_bins
        scale = [np.sqrt(self.range_ / (n * m)) for n in bins] if not np.isscalar(bins) else \
            np.sqrt(self.range_ / (bins * m))
        return CDFPool(self.group_weights_, bins, self.range_, scale)

    def transform_multi(self, X, n_bins_list):
        """Features at several bin counts from one projection pass: ``{n: (n_samples, m·(2n+1))}``.

        The same templates, group elements and range as :meth:`transform`; only the number of
        thresholds n changes (Mroueh et al. 2015, §6, Figures 2-3: accuracy for several bin counts). The
        projections <x, g t> are computed once and pooled once per n, so a sweep costs one
        transform plus the poolings. ``transform_multi(X, [self.n_bins_])[self.n_bins_]`` equals
        ``transform(X)``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Rows as for :meth:`transform`.
        n_bins_list : sequence of int >= 1
            The bin counts n (at least one).

        Returns
        -------
        features : dict of int to ndarray of shape (n_samples, n_templates * (2 * n + 1))
            One entry per bin count, in X's precision; the arrays are column blocks (views) of
            one array, in the order of ``n_bins_list``.
        """
        check_is_fitted(self, "plan_")
        # a bin count is n_bins' type: int(2.5), int(True) or int("3") silently mapped other values than asked
        given = list(n_bins_list) if np.iterable(n_bins_list) and not isinstance(n_bins_list, (str, bytes)) else []
        if not given:
            raise ValueError(f"n_bins_list must be a non-empty list of positive integers; got {n_bins_list!r}")
        bins = [check_int(n, f"n_bins_list[{i}]", min_value=1, max_value=MAX_COUNT) for i, n in enumerate(given)]
        check_param_again(self, "max_memory_mb")  # set_params after fit may have changed the budget
        X = self._validate_X(X, reset=False, keep_integers=True)
        pool = self._pool_spec(bins)
        F = self._map(X, pool, pool.n_out(self.n_templates_))
        out, a = {}, 0
        for n in bins:
            w = self.n_templates_ * (2 * n + 1)
            out[n] = F[:, a : a + w]
            a += w
        return out
