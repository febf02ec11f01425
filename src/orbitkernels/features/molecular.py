"""Orbit random Fourier features of molecules in 3-D (Raj et al. 2017, Eq. 7, on densities in L²(R³)).

A molecule (rows of :func:`~orbitkernels.groups.rotation3d.encode_molecules`) is the density

    ρ(x) = Σ_a Σ_s χ_s(a) N(x; r_a - c, σ² I)        (channel s: the atoms of species s, or one
                                                    channel weighted by the charge, χ(a) = Z_a)

Its Fourier transform is ρ̂_s(k) = e^{-σ²|k|²/2} S_s(k), with the structure factor
S_s(k) = Σ_a χ_s(a) e^{-i k·(r_a - c)}. A plane-wave template ω(x) = e^{i k·x} gives
<ω, g·ρ> in closed form: rotating ρ by R rotates its transform, S_{Rρ}(k) = S_ρ(Rᵀ k), so the
group moves to the wavevectors (the action is unitary on L²(R³): Raj et al. 2017, §2.2.1) and no
grid is needed. Sum over atoms: invariant to permutations of the atoms; centring at c (the centre
of charge, or the atom itself for atom-centred environments): invariant to translations.

Finite-dimensional embedding. With M wavevectors k_m ~ N(0, I / (2σ²)) (the law proportional to
|ρ̂|²'s Gaussian factor, an importance sampler of Plancherel's integral),

    z_s,m(ρ) = (2π)^{-3/2} (π/σ²)^{3/4} S_s(k_m) / √M       (real and imaginary parts)

satisfies E ||z(ρ) - z(ρ')||² = ||ρ - ρ'||²_{L²} (Plancherel), i.e. z is a random embedding of
the densities. The orbit features are LGIKA's random Fourier features (Raj et al. 2017, Eq. 7)
of the base kernel k(ρ, ρ') = exp(-γ ||z(ρ) - z(ρ')||²) ("rbf": u_j ~ N(0, 2γ I)) or
exp(-γ ||z(ρ) - z(ρ')||₁) ("laplacian": u_jl ~ Cauchy(0, γ)), pooled over the sampled rotations:

    ψ_j(ρ) = √(2/s) Σ_k w_k cos(<u_j, z(g_k ρ)> + b_j),    b_j ~ U[0, 2π)

so <ψ(ρ), ψ(ρ')> estimates the orbit kernel E_{g,g'} k(g ρ, g' ρ') (Raj Eq. 3-4, 6).

``centres="atoms"`` pools over atom-centred environments instead (a sum kernel over pairs of
atoms of the same species, as in SOAP-style models): for each atom a the density of its
neighbours seen from a, ρ_a(x) = Σ_b χ(b) f(|r_b - r_a|) N(x; r_b - r_a, σ²), with the smooth
window f(r) = exp(-r² / (2 cutoff²)) (1 without a cutoff); its structure factor is
e^{i k·r_a} Σ_b f_ab χ(b) e^{-i k·r_b}, computed from the same per-atom phases. The features of
the atoms of each species are summed, one block of s features per species: the energy is then
modelled as a sum of per-atom contributions, each an orbit-invariant function of the atom's
environment.
"""
from __future__ import annotations

from numbers import Real

import numpy as np
from sklearn.base import BaseEstimator, ClassNamePrefixFeaturesOutMixin, TransformerMixin, _fit_context
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted, validate_data

from ..backends import BACKENDS, get_backend
from ..groups.base import _defined_at, resolve_elements
from ..groups.rotation3d import Rotation3D, decode_molecules
from ..utils.params import ReplacesNestedParams
from ..utils.persistence import VersionedPickleMixin
from ..utils.progress import progress
from ..utils.validation import (
    RANDOM_STATE_CONSTRAINT,
    check_budget,
    check_not_text,
    check_param_again,
    check_random_state,
    count_constraint,
    device_constraints,
    positive_real_constraint,
)
from ._base import as_native_float
from ._engine import DEFAULT_MAX_MEMORY_MB
from ._frequencies import draw_frequencies, resolve_frequencies

__all__ = ["MolecularOrbitFeatures"]

#: rotations sampled from an infinite group when ``n_group_samples`` is not given: on QM7 the five-fold probe
#: (``benchmarks/probes/molecules3d/five_fold_wider.py``) gains 0.47 RMSE from 64 to 128 and 0.66 from 128 to
#: 256, the first r that meets issue #18's 4.0 kcal/mol, and 0.03 from 256 to 512 at twice the cost
DEFAULT_ROTATIONS = 256

#: the elements of QM7 (H, C, N, O, S)
QM7_SPECIES = (1, 6, 7, 8, 16)


def density_inner_products(X, Y=None, *, sigma, species=QM7_SPECIES, weighting="species"):
    """Exact L²(R³) inner products <ρ_x, ρ_y> of the densities of molecule rows (n_x, n_y).

    The densities of :class:`MolecularOrbitFeatures` at the positions as given (no centring), summed
    over channels: <N(·; a, σ²I), N(·; b, σ²I)> = (4πσ²)^{-3/2} exp(-|a - b|² / (4σ²)). This is the
    reference the features' embedding z converges to (E <z(ρ), z(ρ')> = <ρ, ρ'>, Plancherel), and with
    the Gaussian base kernel exp(-γ(|ρ|² + |ρ'|² - 2<ρ, ρ'>)) a base kernel for
    :class:`~orbitkernels.kernels.HaarKernel` on small molecules.
    """
    Zx, Rx = decode_molecules(X)
    Zy, Ry = (Zx, Rx) if Y is None else decode_molecules(Y)
    species = np.asarray(species, dtype=float)

    def chi(Z):
        return Z[:, :, None] if weighting == "charge" else (Z[:, :, None] == species).astype(float)

    cx, cy = chi(Zx), chi(Zy)
    d2 = ((Rx[:, None, :, None, :] - Ry[None, :, None, :, :]) ** 2).sum(-1)  # (n_x, n_y, A_x, A_y)
    overlap = (4 * np.pi * sigma ** 2) ** -1.5 * np.exp(-d2 / (4 * sigma ** 2))
    return np.einsum("iac,jbc,ijab->ij", cx, cy, overlap)


def _check_acts_by_matrices(group):
    """Refuse a group whose action ``group.matrices`` does not describe.

    The map never applies ``group.act``: it turns the wavevectors by the elements' matrices, S_{Rρ}(k) = S_ρ(Rᵀ k)
    (Raj et al. 2017, §2.2.1), which is the action only where the class that defines ``_act`` defines ``matrices``
    too. A Rotation3D subclass with its own ``_act`` (a rotation seen in a mirror) got the parent's rotations' features
    in silence (bit for bit); it may define ``matrices`` beside its ``_act`` (the orthogonal 3 x 3 map of each element
    on the positions about the centre), and then vouches for it.
    """
    if _defined_at(type(group), "_act") < _defined_at(type(group), "matrices"):
        raise ValueError(f"{group!r} acts by its own _act, which {type(group).__name__}.matrices does not describe; "
                         "MolecularOrbitFeatures turns the wavevectors by group.matrices(E) and never calls act, so it "
                         "would compute the parent's rotations: define matrices beside _act (each element's orthogonal "
                         "3 x 3 map of the positions)")


class MolecularOrbitFeatures(VersionedPickleMixin, ReplacesNestedParams, ClassNamePrefixFeaturesOutMixin,
                             TransformerMixin, BaseEstimator):
    """Rotation- (and permutation-, translation-) invariant random features of molecules.

    Raj et al. 2017, Eq. 7 (orbit random Fourier features) with the group acting on the
    molecule's density in 3-D (see the module docstring for the formulas).

    Inputs are the 2-D rows of :func:`~orbitkernels.groups.encode_molecules` ([Z, x, y, z] per atom,
    Z = 0 for padding), so the map composes with scikit-learn's pipelines and model selection;
    scikit-learn's generic ``check_estimator`` does not apply (it feeds arbitrary real matrices,
    which are not molecules).

    Parameters
    ----------
    group : Rotation3D or None, default=None
        The rotations pooled over (None: ``Rotation3D()``, SO(3) with its Haar measure; O(3) with
        ``Rotation3D(reflections=True)``; a :class:`~orbitkernels.groups.FiniteRotation3D` for exact
        invariance to a finite subgroup).
    species : array-like of int, default=(1, 6, 7, 8, 16)
        The charges that may occur (distinct, positive, whole; default QM7's H, C, N, O, S);
        others in X raise a ValueError.
    weighting : {"species", "charge"}, default="species"
        One density channel per species, or a single channel with each atom weighted by its charge.
    sigma : float > 0, default=0.5
        Width of the atom Gaussians, in the unit of the positions (Å for QM7).
    n_wavevectors : int >= 1, default=64
        M, the plane waves of the embedding z.
    gamma : float > 0, default=1.0
        Width of the base kernel on z (in the L² norm of densities: γ ||ρ - ρ'||²).
    kernel : {"rbf", "laplacian"}, default="rbf"
        The base kernel on z: exp(-γ ||z - z'||²) or exp(-γ ||z - z'||₁).
    n_components : int >= 1, default=256
        s, features per block (molecule: s features; atoms: one block of s per species).
    frequencies : {"auto", "orthogonal", "iid"}, default="auto"
        How the s frequencies u_j on z are drawn: as in
        :class:`~orbitkernels.features.OrbitFourierFeatures`, "orthogonal" (Yu et al. 2016: the
        Gaussian law per frequency, orthogonal within blocks of z's dimension; ``kernel="rbf"``
        only) or "iid"; "auto" is "orthogonal" for ``kernel="rbf"``, "iid" for the Laplacian.
    n_group_samples : int >= 1 or None, default=None
        r, rotations (None: all elements of a finite group, ``DEFAULT_ROTATIONS`` = 256 otherwise).
        The rotation average is a Monte Carlo one, and its noise is what limits accuracy at small r: on
        QM7 (five folds, three atom-centred scales) r = 32 / 64 / 128 / 256 / 512 give 5.44 / 5.00 / 4.53 /
        3.87 / 3.85 kcal/mol RMSE (``docs/molecules3d.md``, which also has the measured time: the
        arithmetic is linear in r, the time grows more slowly at small r).
    sampling : {"qmc", "iid"}, default="qmc"
        How the r rotations are drawn (:meth:`Rotation3D.sample`).
    centres : {"molecule", "atoms"}, default="molecule"
        One density per molecule, centred at its centre of charge; or one per atom (its environment).
    cutoff : float > 0 or None, default=None
        Width of the Gaussian window of the atom-centred environments (``centres="atoms"`` only;
        a ValueError otherwise); None: no window.
    random_state : int, RandomState instance, Generator or None, default=None
        Seeds the wavevectors, the frequencies, the offsets and the rotations (every draw is made at
        ``fit``).
    max_memory_mb : float > 0, default=256.0
        Bounds the working memory of :meth:`transform` (plus its output); a ValueError when one
        molecule does not fit.
    backend : {"numpy", "torch"}, default="numpy"
        Where the heavy loops run.
    device : str, int >= 0, torch.device or None, default=None
        With ``backend="torch"``: "cuda", "cuda:1", an accelerator's index or a ``torch.device``;
        None the back-end's default.
    verbose : int or bool, default=0
        Non-zero: a progress bar over the molecules of each ``transform`` (stderr; silenced by
        ``ORBITKERNELS_QUIET=1`` or the command line's ``--quiet``, as every bar of the library).

    Attributes
    ----------
    wavevectors_ : ndarray of shape (n_wavevectors, 3)
        The wavevectors k_m ~ N(0, I / (2σ²)).
    templates_ : ndarray of shape (n_components, 2 * n_channels * n_wavevectors)
        The frequencies u_j on z, of unit scale; n_channels is ``len(species)`` for
        ``weighting="species"``, 1 for "charge".
    random_offset_ : ndarray of shape (n_components,)
        The offsets b_j.
    group_ : Rotation3D
        The group the rotations belong to.
    group_elements_ : ndarray of shape (r, p)
        The r rotations as unit quaternions (p = 4; 5 with reflections: the sign of each).
    group_weights_ : ndarray of shape (r,)
        Their weights w_k.
    species_ : ndarray of shape (len(species),)
        The species' charges, float64.
    weighting_ : {"species", "charge"}
        ``weighting``, as fitted.
    sigma_ : float
        ``sigma``, as fitted.
    gamma_ : float
        ``gamma``, as fitted (``transform_gammas`` takes others).
    kernel_ : {"rbf", "laplacian"}
        ``kernel``, as fitted.
    frequencies_ : {"orthogonal", "iid"}
        How the frequencies were drawn ("auto" resolved).
    centres_ : {"molecule", "atoms"}
        ``centres``, as fitted.
    cutoff_ : float or None
        ``cutoff``, as fitted.
    n_features_in_ : int
        n_features, the number of columns seen at ``fit`` (4 per atom).
    feature_names_in_ : ndarray of shape (n_features,)
        Column names of X at ``fit``, when it had string names (a DataFrame).

    Notes
    -----
    The attributes ending in ``_`` are the fitted values every transform uses: ``set_params``
    after ``fit`` changes nothing in the features until the next ``fit`` (``max_memory_mb``,
    ``backend``, ``device`` and ``verbose`` are read at each transform: they say where and in
    how many chunks it runs). The output width, s (``centres="molecule"``) or s x
    ``len(species)`` (``"atoms"``), is ``len(get_feature_names_out())``.

    Examples
    --------
    >>> import numpy as np
    >>> from orbitkernels.features import MolecularOrbitFeatures
    >>> from orbitkernels.groups import FiniteRotation3D, encode_molecules
    >>> Z = np.array([[8, 1, 1], [6, 8, 0], [6, 1, 0]])  # charges; 0 pads the molecules of two atoms
    >>> R = np.random.default_rng(0).normal(size=(3, 3, 3))  # positions (Å)
    >>> X = encode_molecules(Z, R)
    >>> cube = FiniteRotation3D("O")  # the 24 rotations of the cube
    >>> mof = MolecularOrbitFeatures(cube, n_wavevectors=16, n_components=32, random_state=0)
    >>> F = mof.fit_transform(X)
    >>> F.shape
    (3, 32)
    >>> np.allclose(mof.transform(cube.act(X, cube.elements()[5:6])[0]), F)  # the molecules rotated by one of them
    True
    >>> np.allclose(mof.transform(encode_molecules(Z[:, ::-1], R[:, ::-1] + 3.0)), F)  # atoms reordered, moved
    True
    """

    _parameter_constraints: dict = {
        "group": [Rotation3D, None],
        "species": ["array-like"],
        "weighting": [StrOptions({"species", "charge"})],
        "sigma": [positive_real_constraint()],
        "n_wavevectors": [count_constraint()],
        "gamma": [positive_real_constraint()],
        "kernel": [StrOptions({"rbf", "laplacian"})],
        "n_components": [count_constraint()],
        "frequencies": [StrOptions({"auto", "orthogonal", "iid"})],
        "n_group_samples": [count_constraint(), None],
        "sampling": [StrOptions({"qmc", "iid"})],
        "centres": [StrOptions({"molecule", "atoms"})],
        "cutoff": [Interval(Real, 0, None, closed="neither"), None],
        "random_state": RANDOM_STATE_CONSTRAINT,
        "max_memory_mb": [positive_real_constraint()],
        "backend": [StrOptions(set(BACKENDS))],
        "device": device_constraints(),
        "verbose": ["verbose"],
    }

    def __init__(self, group=None, *, species=QM7_SPECIES, weighting="species", sigma=0.5, n_wavevectors=64,
                 gamma=1.0, kernel="rbf", n_components=256, frequencies="auto", n_group_samples=None, sampling="qmc",
                 centres="molecule", cutoff=None, random_state=None, max_memory_mb=DEFAULT_MAX_MEMORY_MB,
                 backend="numpy", device=None, verbose=0):
        self.group = group
        self.species = species
        self.weighting = weighting
        self.sigma = sigma
        self.n_wavevectors = n_wavevectors
        self.gamma = gamma
        self.kernel = kernel
        self.n_components = n_components
        self.frequencies = frequencies
        self.n_group_samples = n_group_samples
        self.sampling = sampling
        self.centres = centres
        self.cutoff = cutoff
        self.random_state = random_state
        self.max_memory_mb = max_memory_mb
        self.backend = backend
        self.device = device
        self.verbose = verbose

    # ------------------------------------------------------------------ validation
    def _molecules(self, X, reset):
        # the engine maps' input rules: text refused (scikit-learn would parse "1.5"), and big-endian
        # float32 kept float32 (validate_data compares dtypes with their byte order)
        check_not_text(X, "X")
        X = validate_data(self, as_native_float(X), reset=reset, dtype=[np.float64, np.float32])
        Z, R = decode_molecules(X)
        present = np.unique(Z[Z > 0])
        unknown = np.setdiff1d(present, self.species_)
        if unknown.size:
            # printed as given: a whole charge beyond int64 (1e30) was cast to -9223372036854775808
            raise ValueError(f"X holds charges [{', '.join(f'{z:g}' for z in unknown)}] that are not in species="
                             f"[{', '.join(f'{z:g}' for z in self.species_)}]; pass every species that occurs")
        return X, Z, R

    def __setstate__(self, state):
        super().__setstate__(state)
        # a map fitted by 0.1.0 before its fitted copies of these parameters existed read them live; they had
        # not changed since its fit unless set_params was called, which crashed or changed its features then
        if "templates_" in self.__dict__ and "centres_" not in self.__dict__:
            self._fix_parameters()

    def _fix_parameters(self):
        """The parameters every transform reads, as fitted values (set_params afterwards changes nothing until the
        next fit): a live weighting or centres gave templates of the wrong width, a live sigma, kernel or cutoff
        other features than the fitted map's."""
        self.weighting_, self.centres_, self.kernel_ = self.weighting, self.centres, self.kernel
        self.sigma_ = float(self.sigma)
        self.cutoff_ = None if self.cutoff is None else float(self.cutoff)

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None):
        """Draw the wavevectors, the templates, the offsets and the rotations (all the randomness).

        Parameters
        ----------
        X : array-like of shape (n_samples, 4 * n_atoms)
            Molecule rows of :func:`~orbitkernels.groups.encode_molecules`.
        y : None
            Ignored.

        Returns
        -------
        self : object
            The fitted feature map.
        """
        species = np.asarray(self.species, dtype=float).ravel()
        if species.size == 0 or not np.isfinite(species).all() or (species <= 0).any() \
                or not np.array_equal(species, np.round(species)) or len(np.unique(species)) != species.size:
            raise ValueError(f"species must be distinct positive whole charges; got {self.species!r}")
        self.species_ = species
        X, _, _ = self._molecules(X, reset=True)
        if self.cutoff is not None and self.centres != "atoms":
            raise ValueError("cutoff windows atom-centred environments: it needs centres='atoms'")
        self._fix_parameters()  # as in the engine's maps
        if not 0 < self._density_scale(1) < np.inf:
            raise ValueError(f"sigma={self.sigma_!r} is out of range: the densities' normalisation (π/σ²)^(3/4) "
                             "is not a finite positive float; give positions and sigma in ångström (or bohr)")
        rng = check_random_state(self.random_state)
        group = Rotation3D() if self.group is None else self.group
        _check_acts_by_matrices(group)
        if group.n_features is not None and group.n_features != X.shape[1]:
            raise ValueError(f"{group!r} acts on rows of {group.n_features} columns; X has {X.shape[1]}")
        self.gamma_ = float(self.gamma)
        m, s = int(self.n_wavevectors), int(self.n_components)
        # the smallest molecule _rows_per_chunk counts (one atom, one channel), before anything is drawn
        r = 1 if self.n_group_samples is None else int(self.n_group_samples)
        check_budget(type(self).__name__, 4 * self._row_values(1, 1, r, m, s), self.max_memory_mb,
                     f"{m} wavevectors and {s} templates" + (
                         "" if self.n_group_samples is None else f" x n_group_samples={r} rotations"),
                     "lower n_group_samples, n_wavevectors or n_components, or raise max_memory_mb")
        n_channels = len(species) if self.weighting_ == "species" else 1
        self.wavevectors_ = rng.normal(scale=1.0 / (np.sqrt(2.0) * self.sigma_), size=(m, 3))
        d = 2 * n_channels * m
        self.frequencies_ = resolve_frequencies(self.frequencies, self.kernel_)
        self.templates_ = draw_frequencies(self.frequencies_, self.kernel_, d, s, rng)
        self.random_offset_ = rng.uniform(0, 2 * np.pi, size=s)
        self.group_, self.group_elements_, self.group_weights_ = resolve_elements(
            group, self.n_group_samples, rng, sampling=self.sampling, default_infinite=DEFAULT_ROTATIONS)
        self._n_features_out = s * (len(species) if self.centres_ == "atoms" else 1)
        return self

    def _density_scale(self, m):
        """z's factor (2π)^{-3/2} (π/σ²)^{3/4} / √M; inf or 0 where σ² leaves the float range."""
        with np.errstate(over="ignore", under="ignore", divide="ignore"):
            return float((2 * np.pi) ** -1.5 * (np.pi / np.float64(self.sigma_) ** 2) ** 0.75 / np.sqrt(m))

    def _scale(self, gamma):
        """The factor of <u_j, z> that makes u_j a draw of the base kernel's spectral law at ``gamma``."""
        return np.sqrt(2.0 * gamma) if self.kernel_ == "rbf" else gamma

    # ------------------------------------------------------------------ transform
    def transform(self, X):
        """The orbit features ψ(ρ) of each molecule row.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Molecule rows as at ``fit``, of charges in ``species``.

        Returns
        -------
        X_new : ndarray of shape (n_samples, n_features_out)
            In X's precision (float32 in, float32 out; float64 otherwise); n_features_out is
            ``n_components`` or ``n_components * len(species)`` (``centres="atoms"``).
        """
        return self.transform_gammas(X, [self.gamma_])[self.gamma_]

    def transform_gammas(self, X, gammas):
        """Features at several base-kernel widths from one pass: ``{γ: (n_samples, n_features_out)}``.

        The same wavevectors, templates and rotations as :meth:`transform`: γ only scales the
        projections <u_j, z(g ρ)> (√(2γ) for "rbf", γ for "laplacian"), so a γ sweep for model
        selection costs one projection plus one cosine per γ.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Molecule rows as for :meth:`transform`.
        gammas : float > 0 or sequence of float > 0
            The widths γ (at least one).

        Returns
        -------
        features : dict of float to ndarray of shape (n_samples, n_features_out)
            One entry per γ (as a float), in X's precision; ``transform_gammas(X, [self.gamma_])[self.gamma_]``
            equals ``transform(X)``.
        """
        check_is_fitted(self, "templates_")
        check_param_again(self, "max_memory_mb")  # set_params after fit may have changed the budget
        try:
            gammas = [float(g) for g in np.atleast_1d(np.asarray(gammas, dtype=float))]
        except (TypeError, ValueError):
            raise ValueError(f"gammas must be a non-empty list of positive numbers; got {gammas!r}") from None
        if not gammas or not all(np.isfinite(g) and g > 0 for g in gammas):
            raise ValueError(f"gammas must be a non-empty list of positive numbers; got {gammas!r}")
        X, Z, R = self._molecules(X, reset=False)
        dt = X.dtype
        # as OrbitFourierFeatures: positions known only to within eps·|r| make phases k·r known to within
        # eps·|k|·|r|; from π radians on, cos/sin (and the features) are noise, however finite
        present = Z > 0
        reach = float(np.abs(R[present]).max()) if present.any() else 0.0
        phase = reach * float(np.sqrt((self.wavevectors_ ** 2).sum(1).max()))
        if phase * float(np.finfo(dt).eps) > np.pi:
            raise ValueError(f"X's atom positions reach {reach:.3g}: the phases k·r of the densities (up to "
                             f"{phase:.3g}) are not resolved in {dt.name} (cos/sin would be noise); give positions "
                             "in ångström (or bohr) about the molecule, or float64 rows")
        n, a = Z.shape
        outs = {g: np.empty((n, self._n_features_out), dtype=dt) for g in gammas}
        rows = self._rows_per_chunk(a, len(gammas), dt.itemsize)
        be = get_backend(self.backend, self.device)
        state = self._device_state(be, dt)
        scales = [self._scale(g) for g in gammas]
        # getattr: estimators pickled before verbose existed
        with progress(total=n, desc=f"{type(self).__name__} transform", unit="molecules",
                      disable=not getattr(self, "verbose", 0)) as bar:
            for start in range(0, n, rows):
                sl = slice(start, start + rows)
                parts = self._chunk(be, state, Z[sl], R[sl], scales, dt)
                for g, F in zip(gammas, parts):
                    outs[g][sl] = F
                bar.update(len(Z[sl]))
        return outs

    def _row_values(self, a, c, r, m, s):
        """Working values of one molecule of ``a`` atoms and ``c`` channels (r rotations, m wavevectors, s templates),
        output excluded: the most that :meth:`_chunk` holds at once."""
        arm, crm = a * r * m, c * r * m
        if self.centres_ == "molecule":
            # the largest of what is alive at each step: the phases and their sine; the phases (then cosines) and
            # the structure factors; their rotated copies; the embeddings and projections; one scale's features.
            # Plus the per-atom weights and positions, some in float64 whatever the precision: counted generously
            return max(2 * arm + crm, arm + 2 * crm, 4 * crm, 2 * crm + r * s, 2 * r * s + 2 * s) \
                + 4 * a * (c + len(self.species_) + 6)
        # An older, larger count, kept: the atoms' sum by species is one product over all the atoms of a chunk,
        # whose rounding changes with the chunk's size, so a count that moved the chunks would move the features.
        # It bounds what is alive: the phases' cosine and sine with four arrays of the (C, A, r M) environments
        # (2 arm + 4 c arm), and afterwards the projections, one scale's features and the chunk's indicator,
        # which _rows_per_chunk keeps within the rest
        return 2 * arm + 6 * c * arm + a * a * c + 2 * a * r * s

    def _rows_per_chunk(self, a, n_scales, itemsize):
        r, m, s = len(self.group_elements_), self.wavevectors_.shape[0], self.templates_.shape[0]
        c = self.templates_.shape[1] // (2 * m)
        values = self._row_values(a, c, r, m, s)
        per_row = (values + n_scales * self._n_features_out) * itemsize
        rows = int(float(self.max_memory_mb) * 2**20 // per_row)
        if rows < 1:
            raise ValueError(f"max_memory_mb={self.max_memory_mb} is smaller than one molecule needs "
                             f"({per_row / 2**20:.2f} MB for {r} rotations x {m} wavevectors x {s} templates); "
                             "raise max_memory_mb or use fewer rotations, wavevectors or templates")
        if self.centres_ == "atoms":
            # the sum by species holds a (rows T, rows A) indicator beside the projections and a scale's features
            # (a r s + 2 a s, and per-atom indices): it grows as rows², so it caps the chunk where it would outgrow
            # the row count's room (only at budgets of tens of gigabytes at the defaults)
            T = len(self.species_)
            room = values - a * r * s - 2 * a * s - 4 * a * (T + 2)
            rows = max(1, min(rows, room // (T * a)))
        return rows

    def _device_state(self, be, dt):
        """Rotated wavevectors (3, r M), templates and weights on the back-end, in the compute precision."""
        M = self.group_.matrices(self.group_elements_)  # (r, 3, 3)
        # S_{Rρ}(k) = Σ_a e^{-i k·R r_a} = S_ρ(Rᵀ k): the group acts on the wavevectors (Raj §2.2.1)
        K = np.einsum("gji,mj->gmi", M, self.wavevectors_).reshape(-1, 3)  # row g M + m is R_gᵀ k_m
        m = self.wavevectors_.shape[0]
        norm = self._density_scale(m)
        return {
            "K": be.asarray(np.ascontiguousarray(K.T), dt),
            "U": be.asarray(np.ascontiguousarray(self.templates_.T * norm), dt),  # z's scale folded in
            "b": be.asarray(self.random_offset_[None, :], dt),
            "w": be.asarray(np.asarray(self.group_weights_, float)[None, :, None], dt),
            "r": len(self.group_elements_), "m": m,
        }

    def _channels(self, Z):
        """χ (n, A, C): each atom's weight in each density channel (0 for padding)."""
        if self.weighting_ == "charge":
            return Z[:, :, None].astype(float)
        return (Z[:, :, None] == self.species_[None, None, :]).astype(float)

    def _chunk(self, be, st, Z, R, scales, dt):
        n, a = Z.shape
        r, m = st["r"], st["m"]
        real = Z > 0
        chi = self._channels(Z)
        c = chi.shape[2]
        if self.centres_ == "molecule":
            # centre of charge: translation invariance, and the origin the rotations turn about
            centre = (Z[:, :, None] * R).sum(1) / np.maximum(Z.sum(1), 1e-300)[:, None]
            R = np.where(real[:, :, None], R - centre[:, None, :], 0.0)
        P = be.matmul(be.asarray(R, dt), st["K"])  # phases k·R r_a, (n, A, r M)
        # the sine first, then the cosine in the phases' place: two arrays of (n, A, r M) live at a time, not three
        sin = be.sin(P)
        if self.centres_ == "molecule":
            chiT = be.asarray(np.ascontiguousarray(chi.transpose(0, 2, 1)), dt)  # (n, C, A)
            im = be.matmul(chiT, sin)  # S = Σ_a χ e^{-iφ}: (n, C, r M)
            del sin
            re = be.matmul(chiT, be.cos_(P))
            del P
            im = -im
            lead = (n,)
        else:
            cos = be.cos_(P)
            del P
            W = np.ones((n, a, a))
            if self.cutoff_ is not None:
                D2 = ((R[:, :, None, :] - R[:, None, :, :]) ** 2).sum(-1)
                W = np.exp(-D2 / (2.0 * self.cutoff_ ** 2))
                del D2
            # (n, C, A, A): weight of neighbour b of centre a in channel s
            Wc = W[:, None, :, :] * chi.transpose(0, 2, 1)[:, :, None, :]
            del W
            Wc = be.asarray(np.ascontiguousarray(Wc), dt)
            tc = be.matmul(Wc, cos[:, None])  # Σ_b W_ab χ_s(b) cos φ_b: (n, C, A, r M)
            ts = be.matmul(Wc, sin[:, None])
            del Wc
            ca, sa = cos[:, None], sin[:, None]
            # e^{iφ_a} Σ_b (...) e^{-iφ_b}: the environment seen from atom a; in place (the same products and
            # sums as ca * tc + sa * ts, sa * tc - ca * ts), so that one temporary of (n, C, A, r M) is live
            re = ca * tc
            re += sa * ts
            ts *= ca
            tc *= sa
            tc -= ts
            im = tc
            del cos, sin, ca, sa, tc, ts
            lead = (n, a)
        nl = len(lead)
        # (..., C, r, M) -> (..., r, C, M): one embedding z(g ρ) of 2 C M numbers per rotation
        # the arrays are (n, C, [A,] r M): channels before atoms
        shape, axes = ((n, c, a, r, m), (0, 2, 3, 1, 4)) if nl == 2 else ((n, c, r, m), (0, 2, 1, 3))
        re = be.permute(re.reshape(shape), axes).reshape(lead + (r, c * m))
        im = be.permute(im.reshape(shape), axes).reshape(lead + (r, c * m))
        z = be.concatenate([re, im], axis=nl + 1)  # (..., r, 2 C M)
        del re, im
        if nl == 2:
            keep = be.asarray(real.ravel(), None)
            z = z.reshape((n * a, r, 2 * c * m))[keep]  # padding atoms are no centres
        proj = be.matmul(z.reshape((-1, 2 * c * m)), st["U"])  # <u_j, z(g_k ρ)>: (rows r, s)
        del z
        s = proj.shape[1]
        out = []
        for scale in scales:
            # √(2/s) Σ_k w_k cos(scale <u_j, z(g_k ρ)> + b_j) (Raj Eq. 7 in its real "cos" form with offsets,
            # the one of the appendix's proof of Theorem 3.1)
            # in place: the projections and one array of their size live, as _row_values counts
            F = proj * float(scale)
            F = be.cos_(be.add_(F, st["b"])).reshape((-1, r, s))
            F *= st["w"]
            F = F.sum(1) * float(np.sqrt(2.0 / s))
            if nl == 2:
                F = self._per_species(be, F, Z, real, dt)
            out.append(be.to_numpy(F).astype(dt, copy=False))
        return out

    def _per_species(self, be, F, Z, real, dt):
        """Sum the atoms' features by species of the centre atom: (n, species x s)."""
        n, a = Z.shape
        onehot = (Z[real][:, None] == self.species_[None, :]).astype(float)  # (atoms, T)
        mol = np.repeat(np.arange(n), real.sum(1))
        # the sum over the atoms of each (molecule, species) as one sparse-free product: rows of a
        # (n T, atoms) indicator (tiny next to the projection)
        T = len(self.species_)
        idx = mol[:, None] * T + np.arange(T)[None, :]
        # in the compute precision (0 and 1 are exact in it): no float64 copy beside it
        A = np.zeros((n * T, len(mol)), dtype=dt)
        A[idx[onehot > 0], np.nonzero(onehot > 0)[0]] = 1.0
        out = be.matmul(be.asarray(A, dt), F)  # (n T, s)
        return out.reshape((n, T * F.shape[1]))

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.transformer_tags.preserves_dtype = ["float64", "float32"]
        return tags
