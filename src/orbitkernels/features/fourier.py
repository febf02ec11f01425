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

    so that <ψ(x), ψ(x')> → k_{q,G}(x, x') = E_{g,g'~q} k(g x, g' x') (Eq. 3, 6).

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
    group : Group, optional
    gamma : float > 0 or "scale"
        "scale" is ``1 / (n_features · X.var())`` of the training data, as in
        scikit-learn's ``SVC``; the value used is ``gamma_``.
    kernel : {"rbf", "laplacian"}
        Base kernel: Gaussian exp(-gamma ||x - y||^2) or Laplacian exp(-gamma ||x - y||_1).
    n_components : int, s (number of frequencies)
    frequencies : {"auto", "orthogonal", "iid"}
        How the s frequencies are drawn. "iid": independent ω_j ~ N(0, 2 gamma I)
        (Rahimi & Recht 2007; Raj Eq. 7 as written). "orthogonal": orthogonal random
        features (Yu et al. 2016): each ω_j still has the law N(0, 2 gamma I), so the
        estimate keeps its mean, while the frequencies of each block of d are exactly
        orthogonal (the Gaussian base kernel only: its spectral law is rotation
        invariant). It roughly halves the error of the Gram matrix at s >= d, with or
        without a group (digits, with 12 rotations: 0.024 against 0.049 at s = d;
        ``benchmarks/probes/raj2017/orthogonal_frequencies_kernel.py``); accuracy moves
        little (Original (RF) on Rotated MNIST, 7000 frequencies: 87.34 % against
        87.11-87.21 % for three i.i.d. draws, ``benchmarks/probes/raj2017/orig_rf_gamma.py``).
        "auto" (default): "orthogonal" for the Gaussian kernel, "iid" for the Laplacian.
    n_group_samples : int, optional, r (default: all elements of a finite group, 64 otherwise)
    sampling : {"qmc", "iid"}
        How the r elements are drawn from q: "qmc" (default) a low-variance design
        (stratified grid / randomised lattice), "iid" independent draws g_k ~ q as
        in Raj Eq. 6-7.
    output : {"cos_sin", "cos"}
        "cos_sin" returns [Re ψ, -Im ψ] (2s columns), whose inner product equals
        the real part of the complex inner product of Eq. 6 (the kernel estimate).
        "cos" returns sqrt(2/s) Σ_k w_k cos(<ω_j, g_k x> + b_j) with b_j ~ U[0, 2π)
        (s columns), as ``RBFSampler`` does.
    action : {"auto", "templates", "data"}
        "auto" moves the action to the frequencies (<g^{-1} ω, x>) when the action
        is unitary and q symmetric (Raj §2.2.1), which is exact for the sampled
        elements of an action that is unitary on the grid (permutations, cyclic shifts,
        quarter turns) and exact up to the interpolation of an image warp (a rotation
        by any angle); otherwise the data are transformed.
    random_state, max_memory_mb
    fast_path, dtype, backend, device
        Engine options (:class:`~orbitkernels.features.ProjectionPlan`, ``docs/performance.md``). ``device``
        (with ``backend="torch"``): a name ("cuda", "cuda:1", "mps"), an accelerator's index or a ``torch.device``.
    verbose : int, default=0
        Non-zero: a progress bar over the rows of each ``transform`` (stderr; silenced by
        ``ORBITKERNELS_QUIET=1`` or the command line's ``--quiet``, as every bar of the library).

    Attributes
    ----------
    templates_ (the frequencies ω_j), random_offset_, group_elements_, group_weights_, group_, plan_
    gamma_, n_components_, output_, frequencies_ : the fitted values every transform uses.
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

