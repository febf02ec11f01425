"""Orbit random Fourier features, LGIKA-RF (Raj et al. 2017, Eq. 6-7)."""
from __future__ import annotations

import numpy as np
from sklearn.utils._param_validation import StrOptions

from ..utils.validation import count_constraint, max_sq_norm, positive_real_constraint, scale_gamma
from ._engine import TrigPool
from ._frequencies import draw_frequencies, resolve_frequencies
from ._base import DEFAULT_MEMORY, OrbitFeaturesBase, magnitude_guard

__all__ = ["OrbitFourierFeatures"]


class OrbitFourierFeatures(OrbitFeaturesBase):
    """Random Fourier features of the orbit mean embedding (Raj et al. 2017, Eq. 7).

    For the Gaussian base kernel k(x, y) = exp(-gamma ||x - y||^2) (gamma as in
    scikit-learn's ``RBFSampler``), frequencies ω_j ~ N(0, 2 gamma I) and group
    elements g_k ~ q::

        ψ_RF(x)_j = (1 / sqrt(s)) Σ_k w_k exp(-i <ω_j, g_k x>),   w_k = 1/r

    (w_k = q's weights where all elements of a finite q are used), so that
    <ψ(x), ψ(x')> → k_{q,G}(x, x') = E_{g,g'~q} k(g x, g' x') (Eq. 3, 6).

    ``kernel="laplacian"`` takes the Laplacian base kernel k(x, y) = exp(-gamma ||x - y||_1)
    (scikit-learn's ``laplacian_kernel``) instead: by Bochner's theorem its spectral
    measure is a product of Cauchy laws of scale gamma, so ω_jl ~ Cauchy(0, gamma)
    i.i.d. (Rahimi & Recht 2007, §3) and everything else is unchanged. Raj et al.
    state Eq. 6-7 for any shift-invariant base kernel; the Laplacian is characteristic,
    so the orbit mean embedding stays injective (their §2.1). It is invariant to
    coordinate permutations, not to rotations: with a rotation group the features
    estimate k_{q,G} of a non-invariant base kernel.

    Parameters
    ----------
    group : Group or None, default=None
        The group and its distribution q (None: the trivial group).
    gamma : float > 0 or "scale", default=1.0
        Width of the base kernel. "scale" is ``1 / (n_features · X.var())`` of the training
        data, as in scikit-learn's ``SVC``; the value used is ``gamma_``.
    kernel : {"rbf", "laplacian"}, default="rbf"
        Base kernel: Gaussian exp(-gamma ||x - y||^2) or Laplacian exp(-gamma ||x - y||_1).
    n_components : int >= 1, default=100
        s, the number of frequencies.
    frequencies : {"auto", "orthogonal", "iid"}, default="auto"
        How the s frequencies are drawn. "iid": independent ω_j ~ N(0, 2 gamma I)
        (Rahimi & Recht 2007; Raj Eq. 7 as written). "orthogonal": orthogonal random
        features (Yu et al. 2016): each ω_j still has the law N(0, 2 gamma I), so the
        estimate keeps its mean, while the frequencies of each block of d are exactly
        orthogonal (the Gaussian base kernel only: its spectral law is rotation
        invariant; a ValueError with ``kernel="laplacian"``). It roughly halves the error
        of the Gram matrix at s >= d, with or
        without a group (digits, with 12 rotations: 0.024 against 0.049 at s = d;
        ``benchmarks/probes/raj2017/orthogonal_frequencies_kernel.py``); accuracy moves
        little (Original (RF) on Rotated MNIST, 7000 frequencies: 87.34 % against
        87.11-87.21 % for three i.i.d. draws, ``benchmarks/probes/raj2017/orig_rf_gamma.py``).
        "auto": "orthogonal" for the Gaussian kernel, "iid" for the Laplacian.
    n_group_samples : int >= 1 or None, default=None
        r, the group elements. None: every element of a finite group (or of a q with
        finite support under ``sampling="qmc"``) with q's weights, 64 samples of an
        infinite one.
    sampling : {"qmc", "iid"}, default="qmc"
        How the r elements are drawn from q: "qmc" a low-variance design
        (stratified grid / randomised lattice; for the full circle of rotations its grid
        subgroup), "iid" independent draws g_k ~ q as in Raj Eq. 6-7.
    output : {"cos_sin", "cos"}, default="cos_sin"
        "cos_sin" returns [Re ψ, -Im ψ] (2s columns: the s cosines, then the s sines),
        whose inner product equals the real part of the complex inner product of Eq. 6
        (the kernel estimate).
        "cos" returns sqrt(2/s) Σ_k w_k cos(<ω_j, g_k x> + b_j) with b_j ~ U[0, 2π)
        (s columns), as ``RBFSampler`` does.
    action : {"auto", "templates", "data"}, default="auto"
        "auto" moves the action to the frequencies (<g^{-1} ω, x>) when the action
        is unitary, data-independent and q symmetric (Raj §2.2.1), which is exact for the sampled
        elements of an action that is unitary on the grid (permutations, cyclic shifts,
        quarter turns) and exact up to the interpolation of an image warp (a rotation
        by any angle). A linear action that is unitary on the continuous signal only (a scaling, a
        time warp, their products with rotations and shifts on the same images), where g^{-1} ω is
        far from exact, moves to the frequencies by its transpose (<g x, ω> = <x, g^T ω>,
        ``Group.act_adjoint``) when the s·r moved frequencies fit in ``max_memory_mb`` (8 bytes a
        value, 4 with ``dtype="float32"``): Eq. 7 exactly, for any q; otherwise the data are
        transformed.
        "templates" forces the frequencies' side through g^{-1} (a data-independent action unitary
        on the grid or in the continuum: the paper's §4.3 shortcut for a scaling; a ValueError
        otherwise), "data" the data's. ``action_`` says which side was taken.
    random_state : int, RandomState instance, Generator or None, default=None
        Seeds the frequencies, the offsets and the group elements (every draw is made at ``fit``).
    max_memory_mb : float > 0, default=256.0
        Working memory of :meth:`transform` (beyond the input and the output; the s·r moved templates
        that the templates' side builds at the first transform and keeps, in one precision, are the
        fitted model's, outside it, as is the sparse interpolation matrix an image group acting on the
        data side keeps in a shared cache: README, "Memory"); a ValueError when one row does not fit.
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
    templates_ : ndarray of shape (n_components, n_features)
        The frequencies ω_j, float64.
    random_offset_ : ndarray of shape (n_components,) or None
        The offsets b_j of ``output="cos"``; None for "cos_sin".
    group_ : Group
        The group the elements belong to: ``group`` (the trivial group for None), or the
        finite grid subgroup ``sampling="qmc"`` takes for a full circle of rotations.
    group_elements_ : ndarray of shape (r, p)
        The r elements g_k, p = ``group_.n_params`` parameters each.
    group_weights_ : ndarray of shape (r,)
        Their weights w_k (1/r for sampled elements, q's on a finite support).
    plan_ : ProjectionPlan
        The engine's plan of the projections.
    action_ : {"templates", "data"}
        The side the group acts on.
    gamma_ : float
        The kernel width used ("scale" resolved).
    n_components_ : int
        s, as fitted.
    output_ : {"cos_sin", "cos"}
        ``output``, as fitted.
    frequencies_ : {"orthogonal", "iid"}
        How the frequencies were drawn ("auto" resolved).
    n_features_in_ : int
        n_features, the number of features seen at ``fit``.
    feature_names_in_ : ndarray of shape (n_features,)
        Column names of X at ``fit``, when it had string names (a DataFrame).
    fit_sample_indices_ : ndarray of int
        The rows a Dask X was fitted on (after a ``fit`` on a Dask array only).

    Notes
    -----
    The output has ``2 * n_components`` columns for ``output="cos_sin"``,
    ``n_components`` for "cos". The attributes ending in ``_`` are what every transform
    reads: ``set_params`` after ``fit`` changes nothing until the next ``fit``.

    Examples
    --------
    >>> import numpy as np
    >>> from orbitkernels.features import OrbitFourierFeatures
    >>> from orbitkernels.groups import CyclicShift
    >>> X = np.random.default_rng(0).normal(size=(20, 8))
    >>> rff = OrbitFourierFeatures(CyclicShift(8), gamma=0.1, n_components=32, random_state=0)
    >>> F = rff.fit_transform(X)
    >>> F.shape  # the 32 cosines, then the 32 sines
    (20, 64)
    >>> np.allclose(rff.transform(np.roll(X, 3, axis=1)), F)  # a cyclic shift of the rows changes no feature
    True

    In a scikit-learn pipeline, on two classes of rows (two patterns, each at a random cyclic shift, plus noise):

    >>> from sklearn.linear_model import RidgeClassifierCV
    >>> from sklearn.pipeline import make_pipeline
    >>> rng = np.random.default_rng(0)
    >>> y = np.arange(30) % 2
    >>> P = np.array([[2.0, 2, 0, 0, 0, 0, 0, 0], [2.0, 0, 0, 2, 0, 0, 0, 0]])
    >>> X = np.array([np.roll(P[c], k) for c, k in zip(y, rng.integers(8, size=30))]) + 0.3 * rng.normal(size=(30, 8))
    >>> clf = make_pipeline(OrbitFourierFeatures(CyclicShift(8), gamma=0.1, n_components=32, random_state=0),
    ...                     RidgeClassifierCV())
    >>> float(clf.fit(X[:20], y[:20]).score(X[20:], y[20:]))  # accuracy on 10 new rows
    1.0
    """

    _parameter_constraints: dict = {
        **OrbitFeaturesBase._parameter_constraints,
        "gamma": [positive_real_constraint(), StrOptions({"scale"})],
        "kernel": [StrOptions({"rbf", "laplacian"})],
        "n_components": [count_constraint()],
        "output": [StrOptions({"cos_sin", "cos"})],
        "frequencies": [StrOptions({"auto", "orthogonal", "iid"})],
    }

    def __init__(self, group=None, *, gamma=1.0, kernel="rbf", n_components=100, frequencies="auto",
                 n_group_samples=None, sampling="qmc", output="cos_sin", action="auto", random_state=None,
                 max_memory_mb=DEFAULT_MEMORY, fast_path="auto", dtype=None, backend="numpy", device=None, verbose=0):
        self.group = group
        self.gamma = gamma
        self.kernel = kernel
        self.n_components = n_components
        self.frequencies = frequencies
        self.n_group_samples = n_group_samples
        self.sampling = sampling
        self.output = output
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
        s = self.n_components_ = int(self.n_components)
        self.output_ = self.output
        self.gamma_ = scale_gamma(X) if isinstance(self.gamma, str) else float(self.gamma)
        gamma = self.gamma_
        self.frequencies_ = resolve_frequencies(self.frequencies, self.kernel)
        # spectral laws: N(0, 2 gamma I) for the Gaussian kernel, Cauchy(0, gamma) coordinates for the Laplacian
        width = np.sqrt(2.0 * gamma) if self.kernel == "rbf" else gamma
        W = width * draw_frequencies(self.frequencies_, self.kernel, X.shape[1], s, rng)
        self.random_offset_ = rng.uniform(0, 2 * np.pi, size=s) if self.output == "cos" else None
        return W

    @property
    def _n_features_out(self):
        return 2 * self.n_components_ if self.output_ == "cos_sin" else self.n_components_

    def _check_magnitude(self, X):
        cdt = self.plan_.compute_dtype(X.dtype)
        t = float(np.sqrt((self.templates_ ** 2).sum(1).max()))
        magnitude_guard(X, cdt, 1, t, "its phases <ω, g x>")
        if self.kernel == "rbf":
            # a phase known only to within eps·|<ω, x>| >= π radians makes cos/sin pure noise
            # (float32 X at |x| ~ 1e19); the Laplacian's Cauchy frequencies have such phases by
            # design in a few heavy-tailed components, so only the Gaussian case is checked
            norm = float(np.sqrt(max_sq_norm(X)))
            phase = norm * t
            if phase * float(np.finfo(cdt).eps) > np.pi:
                raise ValueError(
                    f"X's norms reach {norm:.3g}: the phases <ω, g x> (up to {phase:.3g}) "
                    f"are not resolved in {cdt.name} (cos/sin would be noise); rescale X (e.g. StandardScaler), "
                    "lower gamma or use gamma='scale'"
                )

    def _pool_spec(self):
        """Raj Eq. 7: cos and sin (or cos with offsets) of the phases, averaged over the elements."""
        s = self.n_components_
        if self.output_ == "cos":
            return TrigPool(self.group_weights_, np.sqrt(2.0 / s), offset=self.random_offset_)
        return TrigPool(self.group_weights_, 1.0 / np.sqrt(s))

