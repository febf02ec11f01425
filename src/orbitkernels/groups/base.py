"""The group protocol shared by every feature map, kernel and model.

A group object couples an *action* on rows of a data matrix with a
*distribution* q over its elements (Raj et al. 2017, §2.1). Elements are
represented by a 2-D float array of parameters, one row per element, so that
batches of elements are ordinary arrays (``len``, indexing, ``np.vstack``).

What every group provides
-------------------------
``sample(n, random_state, sampling=)``  n elements drawn from q, i.i.d. ("iid", the papers'
                              Monte Carlo) or stratified / quasi-Monte Carlo ("qmc", see below)
``elements()``                all elements (finite groups only), ``weights()`` their q
``identity()``, ``inverse(E)``
``act(X, E)``                 every element applied to every row: (len(E), n_samples, n_features)
``act_inverse(X, E)``         every element's inverse applied to every row (no parameter-space
                              inverse needed: products invert factor by factor in reverse order)
``act_each(X, E)``            element i applied to row i: (n_samples, n_features)
``act_adjoint(X, E)``         every element's transpose g^T applied to every row, where the action is a
                              known linear map (``has_adjoint``: image and time warps), so that
                              <g x, t> = <x, g^T t> exactly, unitary or not
``grid_subgroup(n)``          a finite group of n elements whose uniform law integrates q exactly
                              on the functions that matter here (None when there is none)
``is_unitary``                <gx, gz> = <x, z> (Raj Lemma 2.1) on the rows themselves
``is_unitary_in_continuum``   the same for the continuous signal they sample (a scaling, a time warp)
``is_symmetric``              q(g) = q(g^{-1})
``is_data_dependent``         the draw depends on the input (Montavon et al.'s sorted Coulomb sampling)

When ``is_unitary and is_symmetric`` and the action does not depend on the data,
<ω, g x> = <g^{-1} ω, x> and g^{-1} has the law of g, so a feature map may move the
action to its templates (Mroueh et al. 2015, Remark 2; Raj et al. 2017, §2.2.1-2.2.2).
For an action that is linear but not unitary on the rows (a scaling resampled on the pixel
grid), <ω, g x> = <g^T ω, x> still holds element by element with the transpose of its map
(``act_adjoint``), which dot-product features (orbit random Fourier features) use instead.

Low-variance sampling (beyond the papers, which draw i.i.d.)
-------------------------------------------------------------
A group whose elements are described by independent real laws (``_unit_laws``:
one :class:`~orbitkernels.groups.distributions.Distribution` per parameter column)
maps points of the unit cube [0, 1)^k to elements through the laws' inverse CDFs
(``_from_unit``). ``sampling="qmc"`` feeds it a randomised low-discrepancy point
set (:func:`unit_points`): for one parameter the randomly shifted equispaced grid
u_i = (i + U) / n (stratified: one point per stratum, unbiased), for several a
randomly shifted rank-1 lattice. The Monte Carlo estimate of the orbit kernel
E_{g,g'} k(g x, g' y) then has a lower variance than with i.i.d. draws for the
smooth integrands met here (measured in ``tests/test_sampling.py``).
"""
from __future__ import annotations

import math
import sys
import warnings

import numpy as np

from ..utils import params as _params_module
from ..utils.params import Parametrized, recording_init
from ..utils.validation import MAX_COUNT, check_data, check_int, check_random_state

__all__ = ["Group", "ProductGroup", "TrivialGroup", "can_move_to_templates", "resolve_group", "resolve_elements",
           "unit_points", "SAMPLINGS"]

#: The accepted values of ``sampling`` in :meth:`Group.sample` and :func:`resolve_elements`: "iid"
#: (independent draws, as in the papers) and "qmc" (stratified / randomised lattice draws).
SAMPLINGS = ("iid", "qmc")


def _randint(rng, high):
    """An integer in [0, high) from a RandomState or a Generator (only the former has ``randint``)."""
    if isinstance(rng, np.random.Generator):
        return int(rng.integers(high))
    return int(rng.randint(high))


def _as_generator(rng):
    """A numpy Generator drawing from ``rng`` (scipy.stats.qmc wants one; a RandomState gives a seed)."""
    if isinstance(rng, np.random.Generator):
        return rng
    return np.random.default_rng(int(rng.randint(0, 2**31 - 1)))


#: candidates per coordinate in the component-by-component search (all units mod n when fewer)
_CBC_CANDIDATES = 512


def _lattice_vector(n, k):
    """Generating vector z of an n-point rank-1 lattice in k dimensions, component by component.

    Minimises the shift-averaged worst-case error of the Korobov space of smoothness 2
    with unit product weights (Nuyens & Cools 2006's criterion, built naively):
    e²(z) = -1 + (1/n) Σ_i Π_j (1 + 2π² B₂({i z_j / n})), B₂(x) = x² - x + 1/6. The
    criterion sees every projection, unlike Korobov vectors (1, a, a², ...), which
    collapse two coordinates whenever a² ≡ 1 (mod n) (every unit when n = 24).
    O(k · candidates · n), negligible next to one group action.
    """
    z = [1]
    if k == 1 or n < 3:
        return np.array([1] * k, dtype=np.int64)
    i = np.arange(n)
    x = (i % n) / n
    prod = 1.0 + 2 * np.pi**2 * (x * x - x + 1.0 / 6)
    cands = np.arange(1, n)
    cands = cands[np.gcd(cands, n) == 1]
    n_cands = max(8, min(_CBC_CANDIDATES, 2**22 // n))  # the (candidates, n) table stays under 32 MB
    if len(cands) > n_cands:
        cands = cands[np.linspace(0, len(cands) - 1, n_cands).astype(int)]
    for _ in range(1, k):
        X = (np.outer(cands, i) % n) / n  # (candidates, n)
        crit = ((1.0 + 2 * np.pi**2 * (X * X - X + 1.0 / 6)) * prod[None, :]).mean(1)
        best = int(cands[np.argmin(crit)])
        z.append(best)
        x = (i * best % n) / n
        prod = prod * (1.0 + 2 * np.pi**2 * (x * x - x + 1.0 / 6))
    return np.array(z, dtype=np.int64)


def unit_points(n, k, rng):
    """``n`` randomised low-discrepancy points of [0, 1)^k, each point uniform on the cube.

    k = 1: the randomly shifted equispaced grid u_i = (i + U) / n, U ~ U[0, 1)
    (stratified sampling, one point in each [i/n, (i+1)/n)). k > 1: a randomly
    shifted rank-1 lattice {i z / n + U mod 1} (Sloan & Joe 1994; z by
    :func:`_lattice_vector`), chosen over scrambled Sobol points by measurement
    (``benchmarks/sampling_error.py``: relative error of the orbit kernel on
    digits for 2-parameter translations, r = 16/24/64: i.i.d. 0.064/0.074/0.036,
    Sobol 0.023/0.020/0.009, lattice 0.011/0.009/0.004; rotation × translation:
    i.i.d. 0.074/0.066/0.028, Sobol 0.044/0.028/0.008, lattice 0.032/0.021/0.004).
    It works for every n, not only powers of two, and each coordinate is again a
    shifted equispaced grid (stratified per factor). Every point is marginally
    uniform, so any estimate is unbiased.

    Parameters
    ----------
    n : int
        Number of points, 1 <= n <= 2**31 - 1.
    k : int
        Dimension of the cube, k >= 1.
    rng : int, RandomState, Generator or None
        Source of the random shift.

    Returns
    -------
    U : ndarray of shape (n, k), float64
        The points, in [0, 1).

    Examples
    --------
    >>> import numpy as np
    >>> from orbitkernels.groups import unit_points
    >>> U = unit_points(8, 1, rng=0)  # one point in each stratum [i/8, (i+1)/8)
    >>> U.shape, np.floor(8 * U[:, 0]).astype(int).tolist()
    ((8, 1), [0, 1, 2, 3, 4, 5, 6, 7])
    >>> U = unit_points(16, 2, rng=0)  # a shifted rank-1 lattice: every coordinate is stratified too
    >>> U.shape, [sorted(np.floor(16 * U[:, j]).astype(int).tolist()) == list(range(16)) for j in range(2)]
    ((16, 2), [True, True])
    """
    n = check_int(n, "n", min_value=1, max_value=MAX_COUNT)
    k = check_int(k, "k", min_value=1)
    gen = _as_generator(check_random_state(rng))
    if k == 1:
        return ((np.arange(n) + gen.random()) / n)[:, None]
    z = _lattice_vector(n, k)
    lattice = (np.arange(n)[:, None] * z[None, :] % n) / n
    return np.mod(lattice + gen.random(k)[None, :], 1.0)


def _defined_at(cls, name):
    """Index in ``cls.__mro__`` of the class whose definition of ``name`` cls uses (the MRO's length where none
    defines it): which of a method that defines the action and what is derived from it is the nearer."""
    return next((i for i, c in enumerate(cls.__mro__) if name in c.__dict__), len(cls.__mro__))


class Group(Parametrized):
    """Abstract base class of group actions with a distribution over the group.

    An element is one row of ``n_params`` float parameters; the subclasses say what the
    parameters mean (an angle, a shift, a permutation array, a quaternion...). See
    :mod:`orbitkernels.groups.base` for the protocol.

    Examples
    --------
    Every group, here the cyclic shifts of rows of 6 values, follows the same protocol:

    >>> import numpy as np
    >>> from orbitkernels.groups import CyclicShift, Group
    >>> G = CyclicShift(6)
    >>> isinstance(G, Group), G.order, G.is_unitary, G.is_symmetric
    (True, 6, True, True)
    >>> X = np.random.default_rng(0).standard_normal((20, 6))
    >>> E = G.sample(4, random_state=0)  # 4 elements drawn from q, one per row
    >>> E.shape, G.act(X, E).shape  # every element applied to every row
    ((4, 1), (4, 20, 6))

    A unitary action moves to the other side of an inner product, <g x, t> = <x, g^{-1} t>:

    >>> t = np.random.default_rng(1).standard_normal(6)
    >>> np.allclose(G.act(X, E) @ t, G.act_inverse(t[None], E)[:, 0] @ X.T)
    True

    and an average over the whole group is invariant: acting first on the rows changes nothing.

    >>> def f(X):
    ...     return np.cos(G.act(X, G.elements()) @ t).mean(axis=0)
    >>> np.allclose(f(G.act_each(X, G.sample(20, random_state=1))), f(X))
    True
    """

    #: number of parameters describing one element (columns of an element array)
    n_params: int = 1

    #: What a group derives from its own action: other ways to compute it (an inverse by parameters, a per-row
    #: gather, the transpose, the rows as columns, one warp for a product), the structure the engine reads to
    #: take a faster path than ``_act`` (a cyclic or polar FFT, a permutation's exact single sum) and its claims
    #: about other groups (commuting with them, a law kept under conjugation by them: a product's inverse by
    #: parameters and its symmetry, hence which side its features are computed on).
    _FROM_ACTION = ("_act_each", "_act_inverse", "_act_inverse_each", "_act_adjoint", "_act_columns", "_makes_columns",
                    "has_adjoint", "fuse_product", "grid_subgroup", "cyclic_shape", "is_polar", "n_shifts",
                    "shift_index", "permutes_coordinates", "commutes_with", "law_invariant_under")

    #: (method that defines the action, what is derived from it): a subclass that brings its own such method
    #: takes back the derived names (:meth:`__init_subclass__`); image groups add their ``affine`` map
    _ACTION_SOURCES = (("_act", _FROM_ACTION),)

    #: set on a subclass that acts otherwise than the library group it extends: the library's claims about it
    #: (``commutes_with``, ``law_invariant_under``: tests of its class) do not hold for it (:func:`_may_judge`)
    _acts_itself = False

    def __init_subclass__(cls, **kwargs):
        """A subclass that acts otherwise than the group it extends (its own ``_act``, e.g. a nearest-neighbour
        rotation under :class:`~orbitkernels.groups.ImageRotation`) would still inherit what that group derives
        from its action (``_FROM_ACTION``), and the engine would compute the parent's action through them (the
        bilinear warp's columns or transpose, the polar FFT, a one-warp product). Each of them it does not define
        itself is taken back to :class:`Group`'s: computed through its ``_act`` and ``inverse``, or declared
        absent. Defining one beside ``_act`` keeps it (the subclass then vouches for it).

        "Its own" is by the method resolution order, not by the class body alone: ``_act`` brought by a mixin
        (``class Mine(NegatedMixin, CyclicShift)``) acts otherwise than CyclicShift's FFT structure as well, and a
        mixin that is no group (no ``_act`` at all) is no reason to fail."""
        super().__init_subclass__(**kwargs)
        group = cls.__mro__.index(Group)
        for source, names in cls._ACTION_SOURCES:
            src = _defined_at(cls, source)
            # derived from an action further up the MRO than the one cls uses (Group's defaults need no reset)
            stale = [name for name in names if src < _defined_at(cls, name) < group]
            for name in stale:
                setattr(cls, name, Group.__dict__[name])
            if stale:
                cls._acts_itself = True
        # the constructor's arguments, as given, are the group's parameters (get_params, set_params, clone)
        init = recording_init(cls.__init__)
        if init is not cls.__init__:
            cls.__init__ = init

    def __sklearn_clone__(self):
        # built again from its arguments: a product that is no group warned when the object cloned was made
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", NotAGroupWarning)
            return super().__sklearn_clone__()

    is_finite: bool = False
    is_data_dependent: bool = False

    # ------------------------------------------------------------------ shape
    @property
    def n_features(self):
        """Length of the rows the action applies to (``None``: any length)."""
        return None

    def _check_X(self, X, name="X"):
        X = check_data(X, name)
        n = self.n_features
        if n is not None and X.shape[1] != n:
            raise ValueError(
                f"{type(self).__name__} acts on rows of {n} features ({self._shape_text()}); "
                f"{name} has {X.shape[1]} features"
            )
        return X

    def _shape_text(self):
        return f"{self.n_features} features"

    def _check_elements(self, E, name="elements"):
        E = np.asarray(E)
        if np.iscomplexobj(E):  # float() of a complex array keeps the real part, with a mere warning
            raise TypeError(f"{name} is complex ({E.dtype}); group elements are real parameters")
        E = np.asarray(E, dtype=float)
        if E.ndim == 1 and self.n_params == 1:
            E = E[:, None]
        if E.ndim != 2 or E.shape[1] != self.n_params:
            raise ValueError(
                f"{name} for {type(self).__name__} must have shape (n_elements, {self.n_params}); got {E.shape}"
            )
        if not np.isfinite(E).all():
            raise ValueError(f"{name} contains NaN or inf")
        return E

    def _check_some_elements(self, E):
        # no element is no action: some groups returned an empty stack, others failed deep in numpy
        E = self._check_elements(E)
        if len(E) == 0:
            raise ValueError(f"elements is empty (shape {E.shape}); give at least one group element")
        return E

    # ----------------------------------------------------------- elements
    def sample(self, n, random_state=None, *, sampling="iid") -> np.ndarray:
        """Draw ``n`` elements from the group's distribution q.

        sampling="iid": independent draws, as in the papers (the draws of a seed
        never change). sampling="qmc": a randomised stratified / lattice point set
        pushed through the laws' inverse CDFs (every element still has law q, so
        Monte Carlo averages stay unbiased, with a lower variance); finite groups
        take a systematic (stratified) sample of their elements by their weights.
        Groups without an inverse-CDF description fall back to i.i.d. draws.

        Parameters
        ----------
        n : int
            Number of elements, 1 <= n <= 2**31 - 1.
        random_state : int, RandomState, Generator or None, default=None
            Source of the draws; the same seed gives the same elements.
        sampling : {"iid", "qmc"}, default="iid"
            I.i.d. draws or the stratified / lattice scheme described above.

        Returns
        -------
        E : ndarray of shape (n, n_params), float64
            One element per row.
        """
        n = check_int(n, "n", min_value=1, max_value=MAX_COUNT)
        if sampling not in SAMPLINGS:
            raise ValueError(f"sampling must be one of {SAMPLINGS}; got {sampling!r}")
        rng = check_random_state(random_state)
        if sampling == "qmc":
            E = self._sample_qmc(n, rng)
            if E is not None:
                return E
        if self.is_finite:
            E = self.elements()
            w = self.weights()
            return E[rng.choice(len(E), size=n, p=w)]
        return self._sample(n, rng)

    def _sample(self, n, rng):
        _undefined(self, "_sample(n, rng)", "how an infinite group draws n elements from q (a finite one lists "
                   "elements() instead)")

    def _sample_qmc(self, n, rng):
        """Stratified / lattice draws, or None where this group has no such scheme (then i.i.d.)."""
        if self.is_finite:
            E = self.elements()
            w = self.weights()
            w = np.full(len(E), 1.0 / len(E)) if w is None else np.asarray(w, dtype=float)
            return E[_systematic_indices(w, unit_points(n, 1, rng)[:, 0])]
        laws = self._unit_laws()
        if laws is None:
            return None
        return self._from_unit(unit_points(n, len(laws), rng))

    def _unit_laws(self):
        """One Distribution per parameter column (independent), or None (no inverse-CDF description)."""
        return None

    def _from_unit(self, U):
        """Elements from points U of [0, 1)^k: each column through its law's inverse CDF."""
        laws = self._unit_laws()
        return np.stack([law.ppf(U[:, j]) for j, law in enumerate(laws)], axis=1).astype(float)

    def grid_subgroup(self, n):
        """A finite group of ``n`` elements that replaces sampling from q, or None.

        Where q is the Haar measure of a compact one-parameter group (the full
        circle of rotations), the uniform law on the n-element subgroup integrates
        every band-limited function of the angle exactly, with no sampling noise at
        all (the features are exactly invariant to those of its elements whose
        action on the data is exact, e.g. the quarter turns of a pixel grid); the
        returned group is the one the engine runs fastest (e.g. the polar FFT path).
        The base class has no such subgroup and returns None.

        Parameters
        ----------
        n : int
            Number of elements of the subgroup.

        Returns
        -------
        Group or None
        """
        return None

    def support(self):
        """``(elements, weights)`` of a q with finite support, else None.

        Finite groups give all their elements; groups whose laws are all
        :class:`~orbitkernels.groups.distributions.Discrete` give the product of the supports
        (None beyond a million elements). The weights sum to 1.
        """
        if self.is_finite:
            E = self.elements()
            w = self.weights()
            return E, (np.full(len(E), 1.0 / len(E)) if w is None else np.asarray(w, dtype=float))
        laws = self._unit_laws()
        if not laws or not all(hasattr(law, "support") for law in laws):
            return None
        parts = [law.support() for law in laws]
        total = math.prod(len(v) for v, _ in parts)
        if total > 1_000_000:
            return None
        idx = np.indices([len(v) for v, _ in parts]).reshape(len(parts), -1)
        E = np.stack([v[i] for (v, _), i in zip(parts, idx)], axis=1).astype(float)
        w = np.ones(total)
        for (_, p), i in zip(parts, idx):
            w = w * p[i]
        return E, w / w.sum()

    @property
    def order(self):
        """Number of elements of a finite group, ``None`` for an infinite one."""
        return len(self.elements()) if self.is_finite else None

    def elements(self) -> np.ndarray:
        """All elements of a finite group (one row each)."""
        raise ValueError(f"{type(self).__name__} is not finite: its elements cannot be enumerated; use sample()")

    def weights(self):
        """Probabilities of :meth:`elements` under q (``None`` means uniform)."""
        return None

    def identity(self) -> np.ndarray:
        """The identity element, as an array of shape (1, n_params)."""
        _undefined(self, "identity()", "the identity element, shape (1, n_params)")

    def inverse(self, E) -> np.ndarray:
        """The parameters of the inverse of each element of ``E``: shape (len(E), n_params).

        Raises ``ValueError`` where the inverse has no parameters of this group's form (a
        product of non-commuting factors, Montavon's data-dependent scheme); :meth:`act_inverse`
        applies the inverses without them.
        """
        _undefined(self, "inverse(E)", "the parameters of each element's inverse")

    # ------------------------------------------------------------ action
    def act(self, X, E) -> np.ndarray:
        """Apply each element of ``E`` to each row of ``X``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The data; float32 stays float32, everything else becomes float64.
        E : array-like of shape (n_elements, n_params)
            At least one element (a 1-D array for a one-parameter group).

        Returns
        -------
        Y : ndarray of shape (n_elements, n_samples, n_features)
            ``Y[k] = g_k X``, in the dtype of X.

        Raises
        ------
        ValueError
            X of another width than the group acts on, X or E with NaN or inf, E empty or not of
            shape (n_elements, n_params), an element outside the group.
        TypeError
            Complex or non-numeric X, complex E.
        """
        X = self._check_X(X)
        E = self._check_some_elements(E)
        return self._act(X, E)

    def act_inverse(self, X, E) -> np.ndarray:
        """Apply the inverse of each element of ``E`` to each row of ``X``: (len(E), n_samples, n_features).

        ``act_inverse(X, E)[k] = g_k^{-1} X``. It is what moving an action to the
        other side of an inner product needs, <g x, t> = <x, g^{-1} t> for a unitary
        action (Raj et al. 2017, §2.2.1; Mroueh et al. 2015, Remark 2), and it exists
        for every group action with inverses (not Montavon's data-dependent scheme,
        which raises ``ValueError``), including products of non-commuting factors
        whose inverse is no product in the same factor order. Parameters, validation
        and dtype as for :meth:`act`.

        Returns
        -------
        Y : ndarray of shape (n_elements, n_samples, n_features)
        """
        X = self._check_X(X)
        E = self._check_some_elements(E)
        return self._act_inverse(X, E)

    def _act_inverse(self, X, E):
        return self._act(X, self.inverse(E))

    def _act_inverse_each(self, X, E):
        return self._act_each(X, self.inverse(E))

    def act_adjoint(self, X, E) -> np.ndarray:
        """Apply the transpose of each element's linear map to each row: ``Y[k] = g_k^T X``.

        For an action that is a linear map of the rows, ``x -> W_k x`` (an image warp's bilinear
        interpolation, a time warp's linear interpolation), ``<g_k x, t> = <x, W_k^T t>`` holds
        exactly whether or not W_k is unitary, where ``<x, g_k^{-1} t>`` (:meth:`act_inverse`) equals
        it only for a unitary map. Dot-product features move the action to their templates with it
        (Raj et al. 2017, Eq. 7 with the frequencies moved instead of the data). Only for groups with
        ``has_adjoint``; parameters, validation and dtype as for :meth:`act`.

        Returns
        -------
        Y : ndarray of shape (n_elements, n_samples, n_features)

        Raises
        ------
        NotImplementedError
            For a group whose action has no known matrix (``has_adjoint`` is False).
        """
        if not self.has_adjoint:
            raise NotImplementedError(f"{self!r} has no known linear map to transpose (has_adjoint is False)")
        X = self._check_X(X)
        E = self._check_some_elements(E)
        return self._act_adjoint(X, E)

    def _act_adjoint(self, X, E):
        raise NotImplementedError

    #: whether :meth:`_act_columns` makes the moved rows as columns without a transposition (image warps)
    _makes_columns = False

    def _act_columns(self, X, E, inverse=False):
        """:meth:`act` (:meth:`act_inverse` with ``inverse``) of checked X and E, laid out (n_elements, n_features,
        n_samples): each element's moved rows as the columns of a matrix. For groups with ``_makes_columns``, whose
        action makes them in that order (an image warp: the stacked interpolation matrix times the rows as
        columns); the engine's data side takes them so, dot products with the templates included, where the
        transposition into act's layout cost as much as those products (64 x 64 images, 500 templates)."""
        raise NotImplementedError

    def act_each(self, X, E) -> np.ndarray:
        """Apply element ``E[i]`` to row ``X[i]``: shape (n_samples, n_features).

        ``E`` holds one element per row of ``X`` (``ValueError`` otherwise); validation and
        dtype as for :meth:`act`.
        """
        X = self._check_X(X)
        E = self._check_elements(E)
        if len(E) != len(X):
            raise ValueError(f"act_each needs one element per row: {len(E)} elements for {len(X)} rows")
        return self._act_each(X, E)

    def _act(self, X, E):
        _undefined(self, "_act(X, E)", "how each element moves each row, shape (len(E), len(X), n_features)")

    def _act_each(self, X, E):
        # Correct for every group; subclasses override with a gather that avoids
        # building len(E) full actions.
        return np.stack([self._act(X[i : i + 1], E[i : i + 1])[0, 0] for i in range(len(X))])

    # ------------------------------------------------------------- flags
    # The structure a group declares; the engine (orbitkernels.features) chooses its path from
    # these and never tests a group's type (docs/architecture.md, "Groups declare their structure").
    @property
    def is_unitary(self) -> bool:
        """Whether <g x, g z> = <x, z> for every element and rows x, z (Raj et al. 2017, Lemma 2.1)."""
        _undefined(self, "is_unitary", "whether <g x, g z> = <x, z> for every element (the maps move a unitary "
                   "action to their templates)")

    @property
    def is_unitary_in_continuum(self) -> bool:
        """Whether the action is unitary on the continuous signal the rows sample (Raj et al. 2017, Lemma 2.1:
        intensities times ``|J|^{-1/2}``), whether or not it is on the grid: a scaling resampled without a
        prefilter in a fixed frame is not, and moving it to the templates (the paper's shortcut, an explicit
        ``action="templates"``) is then an approximation. ``is_unitary`` unless a group says otherwise."""
        return self.is_unitary

    @property
    def has_adjoint(self) -> bool:
        """Whether :meth:`act_adjoint` is available: the action is a linear map of the rows whose transpose
        the group can apply (image warps, time warps). False unless a group says otherwise."""
        return False

    @property
    def is_symmetric(self) -> bool:
        """Whether q(g) = q(g^{-1}): g and its inverse have the same law."""
        _undefined(self, "is_symmetric", "whether g and its inverse have the same law under q")

    #: the action is an exact permutation of coordinates (every base kernel is then invariant
    #: under the common action, and the single-sum Haar kernel is exact)
    permutes_coordinates: bool = False

    @property
    def cyclic_shape(self):
        """Axis lengths L when the group is (Z_L1 [x Z_L2]) acting by cyclic shifts of the row seen
        as an array of shape L, so that all its similarities are one FFT correlation; else None."""
        return None

    @property
    def is_polar(self) -> bool:
        """Whether the group is the rotations by 2πk/A of images, i.e. cyclic shifts of the angle axis
        of the polar resampling given by ``polar_grid()``, ``n_radii``, ``n_angles`` and ``image_shape``."""
        return False

    @property
    def n_shifts(self):
        """Number of shifts of a cyclic (or polar) group: the FFT computes all of them."""
        return None

    def shift_index(self, E):
        """Flat shift index (row-major over the cyclic axes) of each element of a cyclic or polar group."""
        raise ValueError(f"{type(self).__name__} is not a cyclic group")

    def commutes_with(self, other) -> bool:
        """Whether g h = h g for all g in this group and h in ``other`` (False unless a group knows better)."""
        return False

    def law_invariant_under(self, other) -> bool:
        """Whether q is invariant under conjugation by ``other``'s elements (False unless known)."""
        return False

    def fuse_product(self, product):
        """A single group acting as ``product`` (one warp instead of one per factor), or None."""
        return None

    def __mul__(self, other):
        if not isinstance(other, Group):
            return NotImplemented
        return ProductGroup(self, other)

    def __repr__(self):
        return f"{type(self).__name__}({self._repr_args()})"

    def _repr_args(self):
        return ""


def _systematic_indices(w, u):
    """Indices drawn by inverting the CDF of the weights ``w`` at the points ``u`` of [0, 1)."""
    cdf = np.cumsum(w)
    cdf = cdf / cdf[-1]
    return np.minimum(np.searchsorted(cdf, u, side="right"), len(w) - 1)


def can_move_to_templates(group: Group) -> bool:
    """True when <ω, g x> may be computed as <g^{-1} ω, x> with g^{-1} ~ q (unitary, symmetric, data-free).

    Parameters
    ----------
    group : Group

    Examples
    --------
    >>> import numpy as np
    >>> from orbitkernels.groups import CoulombPermutation, CyclicShift, ImageScaling, LogNormal, can_move_to_templates
    >>> can_move_to_templates(CyclicShift(6))
    True
    >>> can_move_to_templates(CoulombPermutation(3, sampling="montavon"))  # the permutation depends on the data
    False
    >>> can_move_to_templates(ImageScaling((8, 8), LogNormal(0.3)))  # not unitary on the pixel grid
    False

    When it is True, the values <w, g x> over the whole group are those of <g w, x>:

    >>> G = CyclicShift(6)
    >>> x, w = np.random.default_rng(0).standard_normal((2, 6))
    >>> on_data = G.act(x[None], G.elements())[:, 0] @ w
    >>> on_templates = G.act(w[None], G.elements())[:, 0] @ x
    >>> np.allclose(np.sort(on_data), np.sort(on_templates))
    True
    """
    return bool(group.is_unitary and group.is_symmetric and not group.is_data_dependent)


class NotAGroupWarning(UserWarning):
    """A product of finite groups whose products are not a group: averages over it are not invariant to every factor
    (:meth:`ProductGroup.invariant_factors`)."""


class ProductGroup(Group):
    """Product ``G1 × G2 × ...`` with independent distributions (Raj et al. 2017, §4.3).

    An element ``(g1, g2, ..., gk)`` acts as ``g1 ∘ g2 ∘ ... ∘ gk`` (the last factor
    first). Elements are the factors' parameter columns side by side. The action is
    unitary when every factor is. q is symmetric when every factor's q is and the
    factors commute (or the law of one is invariant under conjugation by the
    other, e.g. an isotropic Gaussian translation under rotations); otherwise the
    inverse of a product has another law and the flag is False. ``G1 * G2`` builds
    ``ProductGroup(G1, G2)``.

    Parameters
    ----------
    *factors : Group
        At least two groups acting on rows of the same length (or one list or tuple of
        them); a factor that is itself a product contributes its own factors. A
        data-dependent scheme (Montavon's) cannot be a factor.

    Examples
    --------
    Raj et al.'s rotations and Gaussian translations of 8x8 images (``R * T`` builds the same group):

    >>> import numpy as np
    >>> from orbitkernels.groups import (BlockPermutation, CyclicShift, ImageRotation, ImageTranslation, Normal,
    ...                                  ProductGroup)
    >>> G = ProductGroup(ImageRotation((8, 8)), ImageTranslation((8, 8), Normal(1.0)))
    >>> E = G.sample(5, random_state=0)  # columns: the angle, then the shift (rows, cols)
    >>> E.shape, G.act(np.ones((20, 64)), E).shape  # 20 flattened images
    ((5, 3), (5, 20, 64))
    >>> G.is_unitary, G.is_symmetric  # an isotropic centred Gaussian shift keeps its law under rotations
    (True, True)

    The last factor acts first. Factors need not commute; a finite product whose products are then no group warns
    (:class:`NotAGroupWarning`, silenced here), and averages over it are invariant to some factors only:

    >>> import warnings
    >>> S, B = CyclicShift(6), BlockPermutation(3, block_size=2)
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     P = S * B
    >>> x, e = np.arange(6.0)[None], np.array([[1, 1, 0, 2]])  # shift by 1 after the block permutation (1, 0, 2)
    >>> np.array_equal(P.act_each(x, e), S.act_each(B.act_each(x, e[:, 1:]), e[:, :1]))
    True
    >>> P.invariant_factors()
    [BlockPermutation(n_blocks=3, block_size=2)]
    """

    def __init__(self, *factors):
        if len(factors) == 1 and isinstance(factors[0], (list, tuple)):
            factors = tuple(factors[0])
        if len(factors) < 2:
            raise ValueError("ProductGroup needs at least two groups")
        flat = []
        for f in factors:
            if not isinstance(f, Group):
                raise TypeError(f"ProductGroup factors must be Group objects; got {type(f).__name__}")
            flat.extend(f.factors if isinstance(f, ProductGroup) else [f])
        sizes = {f.n_features for f in flat if f.n_features is not None}
        if len(sizes) > 1:
            raise ValueError(f"the factors act on rows of different lengths: {sorted(sizes)}")
        if any(f.is_data_dependent for f in flat):
            raise ValueError("a data-dependent sampling scheme cannot be a factor of a product")
        self.factors = tuple(flat)
        self._warn_if_not_a_group()

    # from the factors as they are now: a factor's set_params (in place, as scikit-learn's nested parameters are
    # set) changes what it contributes, and a count kept from the constructor would split the elements wrongly
    @property
    def n_params(self):
        return sum(f.n_params for f in self.factors)

    @property
    def is_finite(self):
        return all(f.is_finite for f in self.factors)

    @property
    def _splits(self):
        return np.cumsum([f.n_params for f in self.factors])[:-1]

    def _params_now(self):
        # the factors flattened, as the product holds them: (a * b) * c has factors__0 = a, not the product a * b;
        # a subclass with its own constructor has the arguments it recorded
        if type(self).__init__ is not ProductGroup.__init__:
            return super()._params_now()
        return {"factors": self.factors}

    def invariant_factors(self, convention="data"):
        """The factors the uniform average over this product is exactly invariant to, or None when unknown.

        Averaging over the set S = {g1 ∘ ... ∘ gk} of k(g x, .) (``convention="data"``: the Haar kernel, Mroueh
        et al. 2015 Eq. 1; the orbit embeddings, Raj et al. 2017 Eq. 2, and their features) is invariant to acting
        on the input by h exactly when S h = S; averaging over <x, g t> (``"templates"``: GICDF, Mroueh et al.
        2015 §2, for a unitary action) exactly when h S = S. When the factors commute (or the law of one is
        invariant under conjugation by another, as rotations and an isotropic translation law), S is a group and
        h may be in any factor either way. Otherwise S is a group only when products in the other order are in S
        too: ``CyclicShift(8) * BlockPermutation(4, 2)`` is not one (shifting then swapping blocks is no product
        of a swap then a shift); averages over g x are invariant to the block swaps (which act first) but not to
        the shifts, averages over <x, g t> the other way round. For a finite product small enough (``order *
        n_features`` up to a million) this is tested on a generic row: 64 random products g h (or h g) of an
        element of the set and one of the factor must be in the orbit of the row. A False is certain; a True for
        non-commuting factors is that test passed. None: an infinite or too large product of non-commuting
        factors.

        Parameters
        ----------
        convention : {"data", "templates"}, default="data"
            Whether the group acts on the input (g x) or on the templates (<x, g t>).

        Returns
        -------
        list of Group or None
        """
        if convention not in ("data", "templates"):
            raise ValueError(f"convention must be 'data' or 'templates'; got {convention!r}")
        if self._commutes(conjugation_ok=True):
            return list(self.factors)
        d = self.n_features
        if not self.is_finite or d is None or self.order * d > 1_000_000:  # 8 MB, under 0.2 s
            return None
        rng = np.random.default_rng(0)
        x = rng.standard_normal((1, d))
        elements = self.elements()
        orbit = self.act(x, elements)[:, 0]  # S x
        u = rng.standard_normal(d)
        keys = orbit @ u
        order = np.argsort(keys)
        keys, orbit = keys[order], orbit[order]
        tol = 1e-9 * max(1.0, float(np.abs(x).max()))  # on each coordinate; |<y - o, u>| <= tol * sum |u|
        window = tol * np.abs(u).sum()
        kept = []
        for f in self.factors:
            g = elements[rng.integers(0, len(elements), 64)]
            h = f.elements()[rng.integers(0, f.order, 64)]
            rows = np.repeat(x, 64, axis=0)
            if convention == "data":
                moved = self.act_each(f.act_each(rows, h), g)  # g (h x)
            else:
                moved = f.act_each(self.act_each(rows, g), h)  # h (g x)
            lo = np.searchsorted(keys, moved @ u - window, side="left")
            hi = np.searchsorted(keys, moved @ u + window, side="right")
            if all(a < b and np.abs(orbit[a:b] - y).max(axis=1).min() <= tol for y, a, b in zip(moved, lo, hi)):
                kept.append(f)
        return kept

    def _warn_if_not_a_group(self):
        """A finite product of Haar (uniform) factors promises exact invariance: say so when it does not hold."""
        if not self.is_finite or any(f.weights() is not None for f in self.factors):
            return
        kept = self.invariant_factors()
        if kept is None or len(kept) == len(self.factors):
            return
        on_templates = self.invariant_factors("templates")

        def lost(kept):
            missed = [f for f in self.factors if not any(f is k for k in kept)]
            return (f"not invariant to {', '.join(repr(f) for f in missed)}"
                    + (f" (only to {', '.join(repr(f) for f in kept)})" if kept else ""))

        warnings.warn(
            f"{self!r}: the factors do not commute and their products are not closed under composition (not a "
            f"group), so averages over g x (HaarKernel, OrbitFourierFeatures, OrbitNystroem) are {lost(kept)}, and "
            f"averages over <x, g t> (GroupCDFFeatures) are {lost(on_templates)}; for exact invariance to every "
            "factor, average over the group they generate",
            NotAGroupWarning, stacklevel=_stacklevel_outside(__file__))

    def _repr_args(self):
        return ", ".join(repr(f) for f in self.factors)

    @property
    def n_features(self):
        for f in self.factors:
            if f.n_features is not None:
                return f.n_features
        return None

    def split(self, E):
        """The factors' parameter blocks of an element array."""
        return np.split(E, self._splits, axis=1)

    def _check_elements(self, E, name="elements"):
        E = super()._check_elements(E, name)
        # The factors' own rules hold in a product too: a negative scale acted as a rotation by π,
        # a negative time-warp rate gave NaN, a fractional cyclic shift was rounded.
        for f, block in zip(self.factors, self.split(E)):
            f._check_elements(block, f"{name} of the {type(f).__name__} factor")
        return E

    def _sample(self, n, rng):
        return np.hstack([f.sample(n, rng) for f in self.factors])

    def _unit_laws(self):
        laws = [f._unit_laws() for f in self.factors]
        if any(law is None or f.is_finite for law, f in zip(laws, self.factors)):
            return None
        return [law for group_laws in laws for law in group_laws]

    def support(self):
        """The product of the factors' finite supports (product weights), or None."""
        if self.is_finite:
            return super().support()
        parts = [f.support() for f in self.factors]
        if any(p is None for p in parts) or math.prod(len(E) for E, _ in parts) > 1_000_000:
            return None
        idx = np.indices([len(E) for E, _ in parts]).reshape(len(parts), -1)
        E = np.hstack([Ef[i] for (Ef, _), i in zip(parts, idx)])
        w = np.ones(E.shape[0])
        for (_, wf), i in zip(parts, idx):
            w = w * np.asarray(wf, dtype=float)[i]
        return E, w / w.sum()

    def _sample_qmc(self, n, rng):
        if self.is_finite:
            return super()._sample_qmc(n, rng)
        if self._unit_laws() is not None:
            # one joint lattice over all parameter columns, split across the factors
            return super()._sample_qmc(n, rng)
        # factors drawn each with its own scheme, paired at random so that the pairs are independent
        parts = [f.sample(n, rng, sampling="qmc") for f in self.factors]
        return np.hstack([parts[0]] + [p[rng.permutation(n)] for p in parts[1:]])

    @property
    def order(self):
        """The product of the factors' orders (counted: the product may be too large to enumerate)."""
        return math.prod(f.order for f in self.factors) if self.is_finite else None

    def elements(self):
        if not self.is_finite:
            return super().elements()
        parts = [f.elements() for f in self.factors]
        total = math.prod(len(p) for p in parts)
        if total > 10_000_000:
            raise ValueError(f"the product has {total} elements; too many to enumerate")
        idx = np.indices([len(p) for p in parts]).reshape(len(parts), -1)
        return np.hstack([p[i] for p, i in zip(parts, idx)])

    def weights(self):
        if not self.is_finite:
            return None
        ws = []
        for f in self.factors:
            w = f.weights()
            ws.append(np.full(len(f.elements()), 1.0 / len(f.elements())) if w is None else np.asarray(w))
        if all(f.weights() is None for f in self.factors):
            return None
        out = ws[0]
        for w in ws[1:]:
            out = np.outer(out, w).ravel()
        return out

    def identity(self):
        return np.hstack([f.identity() for f in self.factors])

    def inverse(self, E):
        # (g1 ∘ ... ∘ gk)^{-1} = gk^{-1} ∘ ... ∘ g1^{-1}; as a parameter tuple in the
        # original factor order this is exact only when the factors commute.
        if not self._commutes():
            raise ValueError(
                "the inverse of a product of non-commuting groups is not a product in the same order; "
                "use act_inverse(X, E), which applies the factors' inverses in reverse order"
            )
        E = self._check_elements(E)
        return np.hstack([f.inverse(p) for f, p in zip(self.factors, self.split(E))])

    def _commutes(self, conjugation_ok=False):
        for i, a in enumerate(self.factors):
            for b in self.factors[i + 1 :]:
                ok = _commute(a, b) or (conjugation_ok and (_conj_invariant(a, b) or _conj_invariant(b, a)))
                if not ok:
                    return False
        return True

    def _steps(self, E, inverse):
        """(factor, its parameters) in the order they act: g1 ∘ ... ∘ gk applies gk first;
        its inverse gk^{-1} ∘ ... ∘ g1^{-1} applies g1^{-1} first."""
        steps = list(zip(self.factors, self.split(E)))
        return steps if inverse else steps[::-1]

    def _compose(self, X, E, inverse):
        """Every element (or its inverse) on every row: the first factor on all rows, the rest row by row."""
        fused = _try_fuse(self)
        if fused is not None:
            return fused._act_inverse(X, E) if inverse else fused._act(X, E)
        (f, p), *rest = self._steps(E, inverse)
        r, n = len(E), len(X)
        Y = (f._act_inverse if inverse else f._act)(X, p)  # (r, n, d)
        for f, p in rest:
            each = f._act_inverse_each if inverse else f._act_each
            Y = each(Y.reshape(r * n, -1), np.repeat(p, n, axis=0)).reshape(r, n, -1)
        return Y

    def _compose_each(self, X, E, inverse):
        fused = _try_fuse(self)
        if fused is not None:
            return fused._act_inverse_each(X, E) if inverse else fused._act_each(X, E)
        Y = X
        for f, p in self._steps(E, inverse):
            Y = (f._act_inverse_each if inverse else f._act_each)(Y, p)
        return Y

    def _act(self, X, E):
        return self._compose(X, E, inverse=False)

    def _act_each(self, X, E):
        return self._compose_each(X, E, inverse=False)

    def _act_inverse(self, X, E):
        return self._compose(X, E, inverse=True)

    def _act_inverse_each(self, X, E):
        return self._compose_each(X, E, inverse=True)

    @property
    def is_unitary(self):
        return all(f.is_unitary for f in self.factors)

    @property
    def is_unitary_in_continuum(self):
        return all(f.is_unitary_in_continuum for f in self.factors)

    @property
    def has_adjoint(self):
        # a product fused into one map (affine image groups on the same images: one warp) has that map's
        # transpose; composing the factors' transposes in reverse order is left to when a group needs it
        fused = _try_fuse(self)
        return fused is not None and fused.has_adjoint

    def _act_adjoint(self, X, E):
        return _try_fuse(self)._act_adjoint(X, E)

    @property
    def _makes_columns(self):
        fused = _try_fuse(self)
        return fused is not None and fused._makes_columns

    def _act_columns(self, X, E, inverse=False):
        return _try_fuse(self)._act_columns(X, E, inverse)

    @property
    def is_symmetric(self):
        return all(f.is_symmetric for f in self.factors) and self._commutes(conjugation_ok=True)


def _stacklevel_outside(filename):
    """The ``stacklevel`` of ``warnings.warn`` called from ``filename`` that names the first caller outside it
    (``G1 * G2`` and ``ProductGroup(G1, G2)`` alike point at the user's line; the constructor's recording wrapper,
    in utils/params.py, and scikit-learn's set_params are passed over too)."""
    inside = {filename, _params_module.__file__}
    level, frame = 1, sys._getframe(1)
    # scikit-learn's frames too: a product built again by Pipeline.set_params(...__group__factors__1__...)
    while frame is not None and (frame.f_code.co_filename in inside
                                 or str(frame.f_globals.get("__name__", "")).startswith("sklearn.")):
        level, frame = level + 1, frame.f_back
    return level


def _undefined(group, name, what):
    """What a group must define and did not (a user's subclass of Group: docs/user_guide.md, "Your own group"):
    a bare NotImplementedError from deep inside a feature map's fit named neither the class nor the member."""
    raise NotImplementedError(f"{type(group).__name__} does not define {name}: {what}. A subclass of Group defines "
                              "_act, inverse, identity, is_unitary, is_symmetric, and elements() or _sample() "
                              "(docs/user_guide.md, 'Your own group')")


def _may_judge(a, b):
    """Whether ``a``'s claims about ``b`` (``commutes_with``, ``law_invariant_under``) may be believed. A library
    group's claims test ``b``'s class (``isinstance``), which says nothing of a subclass of it with its own action
    (``Group.__init_subclass__``): a rotation conjugated by a fixed pixel permutation is an ImageRotation, yet it
    does not commute with rotations, and a product of the two then gave an inverse by parameters that is not the
    inverse, was called symmetric, and a group whose averages are invariant to every factor (no NotAGroupWarning).
    A subclass with its own action that defines the claim beside it vouches for it."""
    return not type(b)._acts_itself or type(a)._acts_itself


def _commute(a, b):
    return bool((a.commutes_with(b) and _may_judge(a, b)) or (b.commutes_with(a) and _may_judge(b, a)))


def _conj_invariant(a, b):
    return bool(a.law_invariant_under(b) and _may_judge(a, b))


def _try_fuse(product):
    return product.factors[0].fuse_product(product)


class TrivialGroup(Group):
    """The group with only the identity: orbit features reduce to plain features.

    Examples
    --------
    >>> import numpy as np
    >>> from orbitkernels.groups import TrivialGroup, resolve_group
    >>> G = TrivialGroup()
    >>> G.order, G.elements().tolist(), G.is_unitary, G.is_symmetric
    (1, [[0.0]], True, True)
    >>> X = np.arange(6.0).reshape(2, 3)
    >>> Y = G.act(X, G.elements())
    >>> Y.shape, np.array_equal(Y[0], X)
    ((1, 2, 3), True)
    >>> resolve_group(None)  # what a feature map runs on when it is given no group
    TrivialGroup()
    """

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
    """``group``, or the trivial group for None (what the feature maps and kernels run on).

    Parameters
    ----------
    group : Group or None
        Anything else raises ``TypeError``.

    Examples
    --------
    >>> from orbitkernels.groups import CyclicShift, resolve_group
    >>> resolve_group(None)
    TrivialGroup()
    >>> resolve_group(CyclicShift(6))
    CyclicShift(shape=(6,))
    >>> resolve_group("shifts")
    Traceback (most recent call last):
        ...
    TypeError: group must be an orbitkernels.groups.Group (or None); got str
    """
    if group is None:
        return TrivialGroup()
    if not isinstance(group, Group):
        raise TypeError(f"group must be an orbitkernels.groups.Group (or None); got {type(group).__name__}")
    return group


def resolve_elements(group, n_group_samples, rng, *, sampling="qmc", default_infinite=64):
    """The group a feature map runs on, its elements and their weights: ``(group_used, elements, weights)``.

    ``n_group_samples=None``: a finite group (or a q with finite support, e.g.
    :class:`~orbitkernels.groups.Discrete` laws, with ``sampling="qmc"``) gives all its
    elements with their q weights, so the pooled features are exact sums over q;
    an infinite one takes ``default_infinite`` samples. Otherwise ``n_group_samples``
    elements are drawn and weighted 1/r (Monte Carlo, Raj et al. 2017, Eq. 6-7):

    * ``sampling="iid"``: i.i.d. draws from q, as in the papers;
    * ``sampling="qmc"`` (default): where q is the Haar measure of a compact group
      with a grid subgroup (:meth:`Group.grid_subgroup`, the full circle of
      rotations), that subgroup of r elements replaces the draws and is returned
      as ``group_used`` (for images, the polar FFT path); else stratified /
      rank-1-lattice draws (:meth:`Group.sample`), unbiased with lower variance.

    Parameters
    ----------
    group : Group
    n_group_samples : int or None
        Number of elements to draw (1 <= n <= 2**31 - 1), or None (see above).
    rng : int, RandomState, Generator or None
        Source of the draws.
    sampling : {"iid", "qmc"}, default="qmc"
    default_infinite : int, default=64
        Number of draws of an infinite group when ``n_group_samples`` is None.

    Returns
    -------
    group_used : Group
        ``group``, or the grid subgroup that replaced it.
    elements : ndarray of shape (n_elements, group_used.n_params)
    weights : ndarray of shape (n_elements,), float64
        q's weight of each element, summing to 1.

    Examples
    --------
    >>> from orbitkernels.groups import CyclicShift, ImageRotation, ImageTranslation, Normal, resolve_elements
    >>> group, E, w = resolve_elements(CyclicShift(6), None, 0)  # a finite group: all of it, weighted by q
    >>> E.ravel().tolist(), w.round(3).tolist()
    ([0.0, 1.0, 2.0, 3.0, 4.0, 5.0], [0.167, 0.167, 0.167, 0.167, 0.167, 0.167])
    >>> group, E, w = resolve_elements(ImageTranslation((8, 8), Normal(1.0)), 10, 0)  # 10 stratified draws
    >>> E.shape, w.round(3).tolist() == [0.1] * 10
    ((10, 2), True)
    >>> group, E, w = resolve_elements(ImageRotation((8, 8)), 16, 0)  # the full circle: a grid subgroup
    >>> group
    PolarRotation(image_shape=(8, 8), n_angles=16, n_radii=4)
    >>> E.shape
    (16, 1)
    """
    if sampling not in ("iid", "qmc"):
        raise ValueError(f"sampling must be 'iid' or 'qmc'; got {sampling!r}")
    # checked here, not first by the grid subgroup or the sampler under another name (n_angles, n)
    n_group_samples = check_int(n_group_samples, "n_group_samples", min_value=1, max_value=MAX_COUNT, allow_none=True)
    if n_group_samples is None:
        support = group.support() if (group.is_finite or sampling == "qmc") else None
        if support is not None:
            E, w = support
            return group, E, np.asarray(w, dtype=float)
        n_group_samples = default_infinite
    if sampling == "qmc":
        sub = group.grid_subgroup(n_group_samples)
        if sub is not None:
            _, E, w = resolve_elements(sub, None, rng, sampling=sampling)
            return sub, E, w
    E = group.sample(n_group_samples, rng, sampling=sampling)
    return group, E, np.full(len(E), 1.0 / len(E))
