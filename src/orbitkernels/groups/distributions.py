"""Distributions q over one-parameter groups (Raj et al. 2017, §2.1 and §4).

A distribution draws the *parameter* of a group element: an angle for rotations,
a shift for translations, a factor for scalings, cents for pitch shifts. Whether
``q(g) = q(g^{-1})`` holds depends on how the parameter composes:

* ``"additive"`` (translations, cents, angles on the line): ``g^{-1}`` has parameter ``-a``;
* ``"multiplicative"`` (scalings, time-warp rates): ``g^{-1}`` has parameter ``1/a``;
* ``"circular"`` (angles modulo 2π): ``g^{-1}`` has parameter ``-a mod 2π``.

The symmetry of q is what allows moving the action from the data to the
templates (Mroueh et al. 2015, Remark 2; Raj et al. 2017, §2.2.1-2.2.2).

Every law also has an inverse CDF ``ppf(u)``, u in [0, 1): the groups' stratified /
quasi-Monte Carlo sampling (``Group.sample(..., sampling="qmc")``) pushes
low-discrepancy points of the unit cube through it. ``sample`` (i.i.d.) never uses
it, so the i.i.d. draws of a seed are those of earlier versions bit for bit.
"""
from __future__ import annotations

import numpy as np
import scipy.special
import scipy.stats

from ..utils.params import Parametrized
from ..utils.validation import MAX_COUNT, check_int, check_random_state, check_real

__all__ = ["Distribution", "Uniform", "VonMises", "Normal", "LogNormal", "LogUniform", "Discrete"]

_KINDS = ("additive", "multiplicative", "circular")

#: von Mises concentration above which ``sample`` draws the wrapped normal law (NumPy's Generator's switch)
_WRAPPED_NORMAL_KAPPA = 1e6


def _check_size(size):
    # numpy's own messages ("negative dimensions are not allowed", "Maximum allowed dimension exceeded")
    # name neither the argument nor the value
    if isinstance(size, tuple):
        return tuple(check_int(s, "size", min_value=0, max_value=MAX_COUNT) for s in size)
    return check_int(size, "size", min_value=0, max_value=MAX_COUNT)


def _check_kind(kind):
    if kind not in _KINDS:
        raise ValueError(f"kind must be one of {_KINDS}; got {kind!r}")


class Distribution(Parametrized):
    """Base class: a distribution over a real group parameter.

    Two laws are equal (``==``, and hash alike) when they are of the same class with the same parameters.

    Examples
    --------
    Every law draws values, has an inverse CDF and knows whether it is symmetric for a kind of parameter:

    >>> from orbitkernels.groups import Distribution, Normal
    >>> q = Normal(1.0)
    >>> isinstance(q, Distribution), q == Normal(1.0), q
    (True, True, Normal(sigma=1.0, mean=0.0))
    >>> q.sample(5, random_state=0).shape, q.ppf([0.5, 0.975]).round(3).tolist()
    ((5,), [0.0, 1.96])
    >>> q.is_symmetric("additive")  # -a has the law of a: the action may move to the templates
    True
    >>> q.check_kind("multiplicative")
    Traceback (most recent call last):
        ...
    ValueError: Normal can take non-positive values; use LogNormal for a multiplicative parameter
    """

    def sample(self, size, random_state=None) -> np.ndarray:
        """Draw parameter values i.i.d. from the law.

        Parameters
        ----------
        size : int or tuple of ints
            Shape of the output (counts >= 0).
        random_state : int, RandomState, Generator or None, default=None
            Source of the draws; the same seed gives the same values.

        Returns
        -------
        values : ndarray of shape ``size``, float64
        """
        raise NotImplementedError

    def ppf(self, u) -> np.ndarray:
        """Inverse CDF: the parameter value of quantile ``u`` (array in [0, 1)), of the shape of ``u``."""
        raise NotImplementedError

    def is_symmetric(self, kind: str) -> bool:
        """Whether the law of ``g`` equals the law of ``g^{-1}`` for a parameter of ``kind``.

        ``kind`` is "additive", "multiplicative" or "circular" (see the module docstring);
        ``ValueError`` for another kind or, for most laws, a kind the law cannot parameterise
        (:meth:`check_kind`). False may also mean "not known to be symmetric" (e.g. a
        ``Normal`` centred on π for a circular parameter).
        """
        raise NotImplementedError

    def check_kind(self, kind: str) -> None:
        """Raise ``ValueError`` if the distribution cannot parameterise a group of this kind."""
        _check_kind(kind)

    def __repr__(self):
        args = ", ".join(f"{k}={v!r}" for k, v in self.__dict__.items())
        return f"{type(self).__name__}({args})"

    def __eq__(self, other):
        return type(self) is type(other) and self.__dict__ == other.__dict__

    def __hash__(self):
        return hash((type(self).__name__, tuple(sorted(self.__dict__.items()))))


class Uniform(Distribution):
    """Uniform on ``[low, high]``: Mroueh's local subset G0 (e.g. rotations in [-20°, 20°]).

    ``Uniform(-np.pi, np.pi)`` on rotations is the normalised Haar measure of SO(2).

    Parameters
    ----------
    low, high : float
        The ends, finite, ``low < high`` (and ``low > 0`` for a multiplicative parameter).

    Examples
    --------
    >>> import numpy as np
    >>> from orbitkernels.groups import ImageRotation, Uniform
    >>> q = Uniform(-np.radians(20), np.radians(20))  # Mroueh's rotations by at most 20 degrees
    >>> a = q.sample(1000, random_state=0)
    >>> bool(a.min() >= -np.radians(20) and a.max() <= np.radians(20)), q.ppf([0.0, 0.5]).round(3).tolist()
    (True, [-0.349, 0.0])
    >>> q.is_symmetric("circular"), Uniform(0.0, 1.0).is_symmetric("circular")
    (True, False)
    >>> Uniform(-np.pi, np.pi).is_symmetric("circular")  # the Haar measure of the circle
    True
    >>> ImageRotation((8, 8), angle=q).sample(4, random_state=0).shape
    (4, 1)
    """

    def __init__(self, low, high):
        self.low = check_real(low, "low")
        self.high = check_real(high, "high")
        if not self.low < self.high:
            raise ValueError(f"Uniform needs low < high; got low={self.low}, high={self.high}")
        if not np.isfinite(self.high - self.low):  # numpy's sampler (and ppf) would overflow on the width
            raise ValueError(f"Uniform needs a finite width high - low; got low={self.low}, high={self.high}")

    def sample(self, size, random_state=None):
        size = _check_size(size)
        return check_random_state(random_state).uniform(self.low, self.high, size=size)

    def ppf(self, u):
        return self.low + (self.high - self.low) * np.asarray(u, dtype=float)

    def check_kind(self, kind):
        _check_kind(kind)
        if kind == "multiplicative" and self.low <= 0:
            raise ValueError(f"a multiplicative parameter must be positive; Uniform has low={self.low}")

    def _wrap(self):
        """``(turns, extra)``: [low, high] wrapped onto the circle covers every angle ``turns`` times and the
        arc [low, low + extra] once more (``extra`` in [0, 2π); 0 for a whole number of turns, when the
        wrapped law is the Haar measure of SO(2))."""
        width, turn = self.high - self.low, 2 * np.pi
        turns = round(width / turn)
        if turns >= 1 and abs(width - turns * turn) <= 1e-9:
            return turns, 0.0
        turns = int(width // turn)
        return turns, width - turns * turn

    def is_symmetric(self, kind):
        _check_kind(kind)
        if kind == "additive":
            return bool(np.isclose(self.low, -self.high))
        if kind == "circular":
            # The wrapped density is constant plus the indicator of the extra arc (a width of 2.5π is not
            # uniform on the circle): symmetric iff that arc is empty or centred on 0 or π.
            _, extra = self._wrap()
            if extra == 0.0:
                return True
            lo, hi = self.low, self.low + extra
            k = np.round((lo + hi) / (2 * np.pi))
            return bool(np.isclose(lo, 2 * np.pi * k - hi))
        # a uniform law on [l, u] is never the law of 1/a (its density is 1/a^2)
        return False


class LogUniform(Distribution):
    """``exp(Uniform(log low, log high))``: the inversion-symmetric choice for scalings when low·high = 1.

    For multiplicative parameters only (scalings, time-warp rates).

    Parameters
    ----------
    low, high : float
        The ends, ``0 < low < high``.

    Examples
    --------
    >>> import numpy as np
    >>> from orbitkernels.groups import ImageScaling, LogUniform
    >>> q = LogUniform(0.8, 1.25)  # scalings by 0.8 to 1.25; 0.8 * 1.25 = 1
    >>> q.is_symmetric("multiplicative"), LogUniform(0.5, 1.0).is_symmetric("multiplicative")
    (True, False)
    >>> u = np.array([0.1, 0.3])
    >>> np.allclose(1 / q.ppf(u), q.ppf(1 - u)), round(float(q.ppf(0.5)), 3)  # 1/s has the law of s
    (True, 1.0)
    >>> ImageScaling((8, 8), scale=q).sample(4, random_state=0).shape
    (4, 1)
    """

    def __init__(self, low, high):
        self.low = check_real(low, "low", low=0, low_open=True)
        self.high = check_real(high, "high", low=0, low_open=True)
        if not self.low < self.high:
            raise ValueError(f"LogUniform needs low < high; got low={self.low}, high={self.high}")

    def sample(self, size, random_state=None):
        size = _check_size(size)
        rng = check_random_state(random_state)
        return np.exp(rng.uniform(np.log(self.low), np.log(self.high), size=size))

    def ppf(self, u):
        lo, hi = np.log(self.low), np.log(self.high)
        return np.exp(lo + (hi - lo) * np.asarray(u, dtype=float))

    def check_kind(self, kind):
        _check_kind(kind)
        if kind != "multiplicative":
            raise ValueError(f"LogUniform parameterises multiplicative groups only, not {kind!r}")

    def is_symmetric(self, kind):
        self.check_kind(kind)
        return bool(np.isclose(self.low * self.high, 1.0))


class VonMises(Distribution):
    """Von Mises law on angles, density ∝ exp(kappa · cos(θ − loc)), θ in radians.

    We use the standard convention: ``kappa >= 0`` concentrates the law around
    ``loc`` (``kappa = 0`` is the uniform Haar measure). Raj et al. 2017 (§4.2)
    write p(θ) = exp(−κ cos θ), whose mode is at π; their κ = 0.2 is
    ``VonMises(kappa=0.2, loc=np.pi)`` here. For circular parameters only; draws
    lie in [-π, π].

    Parameters
    ----------
    kappa : float
        Concentration, ``kappa >= 0``.
    loc : float, default=0.0
        Mode of the law, in radians.

    Examples
    --------
    >>> import numpy as np
    >>> from orbitkernels.groups import ImageRotation, VonMises
    >>> q = VonMises(kappa=0.2, loc=np.pi)  # Raj et al. 2017's p(θ) = exp(-0.2 cos θ), mode at π
    >>> theta = q.sample(1000, random_state=0)
    >>> bool(np.abs(theta).max() <= np.pi), q.is_symmetric("circular")
    (True, True)
    >>> p = VonMises(kappa=4.0)  # concentrated around 0: median 0, quartiles opposite
    >>> np.allclose(p.ppf(0.5), 0.0), np.allclose(p.ppf(0.25), -p.ppf(0.75))
    (True, True)
    >>> VonMises(kappa=4.0, loc=1.0).is_symmetric("circular")
    False
    >>> ImageRotation((8, 8), angle=q).sample(4, random_state=0).shape
    (4, 1)
    """

    def __init__(self, kappa, loc=0.0):
        self.kappa = check_real(kappa, "kappa", low=0.0)
        self.loc = check_real(loc, "loc")

    def sample(self, size, random_state=None):
        size = _check_size(size)
        rng = check_random_state(random_state)
        if self.kappa == 0:
            return rng.uniform(-np.pi, np.pi, size=size)
        if self.kappa > _WRAPPED_NORMAL_KAPPA and not isinstance(rng, np.random.Generator):
            # RandomState's legacy sampler returns exact zeros from kappa ~ 1e16 and never returns from ~1e17;
            # NumPy's Generator draws the wrapped normal N(loc, 1/kappa) there, whose error is O(1/kappa)
            theta = rng.normal(self.loc, 1.0 / np.sqrt(self.kappa), size=size)
            return np.mod(theta + np.pi, 2 * np.pi) - np.pi
        theta = rng.vonmises(self.loc, self.kappa, size=size)
        # above kappa = 1e6 NumPy's Generator wraps loc + N(0, 1/kappa) once only (3.72 for loc = 10); wrap the
        # draws left outside, and only those, so that the others stay NumPy's own bit for bit
        out = (theta < -np.pi) | (theta > np.pi)
        return np.where(out, np.mod(theta + np.pi, 2 * np.pi) - np.pi, theta)

    def ppf(self, u):
        """Quantiles on [loc - π, loc + π), wrapped to [-π, π).

        ``scipy.stats.vonmises.ppf`` inverts the CDF by a scalar root search per point
        (measured 1.5 s per thousand points); here the CDF is tabulated once on 4097
        angles, the table gives a bracket and a first guess, and Newton steps on the
        exact CDF (kept inside the bracket) finish: ``max |CDF(ppf(u)) - u| < 1e-12`` for
        κ from 0.01 to 500 (``tests/test_sampling.py``), ~6 ms per thousand points.
        """
        u = np.asarray(u, dtype=float)
        if self.kappa == 0:
            theta = -np.pi + 2 * np.pi * u
        else:
            theta = self.loc + _von_mises_ppf(u, self.kappa)
        return np.mod(theta + np.pi, 2 * np.pi) - np.pi

    def check_kind(self, kind):
        _check_kind(kind)
        if kind != "circular":
            raise ValueError(f"VonMises parameterises angles (circular), not a {kind!r} parameter")

    def is_symmetric(self, kind):
        self.check_kind(kind)
        if self.kappa == 0:
            return True
        r = np.mod(self.loc, np.pi)
        return bool(np.isclose(r, 0.0) or np.isclose(r, np.pi))


def _von_mises_ppf(u, kappa, n_grid=4097, n_newton=6):
    """Inverse CDF of the centred von Mises law on [-π, π] (table bracket + safeguarded Newton)."""
    dist = scipy.stats.vonmises(kappa)
    grid = np.linspace(-np.pi, np.pi, n_grid)
    cdf = dist.cdf(grid)
    cdf[0], cdf[-1] = 0.0, 1.0
    j = np.clip(np.searchsorted(cdf, u, side="right") - 1, 0, n_grid - 2)
    lo, hi = grid[j], grid[j + 1]
    c0, c1 = cdf[j], cdf[j + 1]
    theta = lo + (hi - lo) * np.where(c1 > c0, (u - c0) / np.where(c1 > c0, c1 - c0, 1.0), 0.5)
    for _ in range(n_newton):
        f = dist.pdf(theta)
        step = (dist.cdf(theta) - u) / np.maximum(f, 1e-300)
        theta = np.clip(theta - step, lo, hi)
    return theta


class Normal(Distribution):
    """Gaussian ``N(mean, sigma^2)``: Raj §4.3's law on translations.

    For additive (or circular, then wrapped by the action) parameters, not multiplicative ones.

    Parameters
    ----------
    sigma : float
        Standard deviation, ``sigma > 0``.
    mean : float, default=0.0

    Examples
    --------
    >>> from orbitkernels.groups import ImageTranslation, Normal
    >>> q = Normal(1.0)  # shifts of about one pixel
    >>> q.ppf([0.5, 0.975]).round(3).tolist()
    [0.0, 1.96]
    >>> q.is_symmetric("additive"), Normal(1.0, mean=0.5).is_symmetric("additive")
    (True, False)
    >>> G = ImageTranslation((8, 8), q)  # the same law on both axes, drawn independently
    >>> G.sample(4, random_state=0).shape
    (4, 2)
    """

    def __init__(self, sigma, mean=0.0):
        self.sigma = check_real(sigma, "sigma", low=0.0, low_open=True)
        self.mean = check_real(mean, "mean")

    def sample(self, size, random_state=None):
        size = _check_size(size)
        return check_random_state(random_state).normal(self.mean, self.sigma, size=size)

    def ppf(self, u):
        return self.mean + self.sigma * scipy.special.ndtri(np.asarray(u, dtype=float))

    def check_kind(self, kind):
        _check_kind(kind)
        if kind == "multiplicative":
            raise ValueError("Normal can take non-positive values; use LogNormal for a multiplicative parameter")

    def is_symmetric(self, kind):
        self.check_kind(kind)
        return bool(self.mean == 0.0)


class LogNormal(Distribution):
    """``exp(N(mu, sigma^2))``: Raj §4.3's law on scalings (mu = 0, sigma = 0.3).

    For multiplicative parameters only.

    Parameters
    ----------
    sigma : float
        Standard deviation of the logarithm, ``sigma > 0``.
    mu : float, default=0.0
        Mean of the logarithm (``mu = 0``: the law of ``1/a`` is that of ``a``).

    Examples
    --------
    >>> import numpy as np
    >>> from orbitkernels.groups import ImageScaling, LogNormal
    >>> q = LogNormal(0.3)
    >>> q.is_symmetric("multiplicative"), LogNormal(0.3, mu=0.1).is_symmetric("multiplicative")
    (True, False)
    >>> u = np.array([0.1, 0.3])
    >>> np.allclose(1 / q.ppf(u), q.ppf(1 - u)), round(float(q.ppf(0.5)), 3)  # 1/s has the law of s
    (True, 1.0)
    >>> ImageScaling((8, 8), scale=q).sample(4, random_state=0).shape
    (4, 1)
    """

    def __init__(self, sigma, mu=0.0):
        self.sigma = check_real(sigma, "sigma", low=0.0, low_open=True)
        self.mu = check_real(mu, "mu")

    def sample(self, size, random_state=None):
        size = _check_size(size)
        return np.exp(check_random_state(random_state).normal(self.mu, self.sigma, size=size))

    def ppf(self, u):
        return np.exp(self.mu + self.sigma * scipy.special.ndtri(np.asarray(u, dtype=float)))

    def check_kind(self, kind):
        _check_kind(kind)
        if kind != "multiplicative":
            raise ValueError(f"LogNormal parameterises multiplicative groups only, not {kind!r}")

    def is_symmetric(self, kind):
        self.check_kind(kind)
        return bool(self.mu == 0.0)


def _numeric_array(values, name, owner="Discrete", shape="1-D"):
    """``values`` (of ``owner``'s argument ``name``, a ``shape`` sequence) as a float array of real numbers."""
    # np.asarray(["1", "2"], dtype=float) and np.asarray([True, False], dtype=float) would convert silently, and
    # np.asarray([1, True]) is the numbers 1 and 1: booleans are looked for among the items themselves
    if isinstance(values, (list, tuple)) and any(isinstance(v, (bool, np.bool_)) for v in values):
        raise TypeError(f"{owner} {name} must be real numbers, not booleans; got {values!r}")
    try:
        arr = np.asarray(values)
    except ValueError:  # a ragged sequence
        raise ValueError(f"{owner} {name} must be a {shape} sequence of numbers; got {values!r}") from None
    if arr.dtype == object:
        try:
            arr = np.asarray(values, dtype=float)
        except (TypeError, ValueError):
            raise TypeError(f"{owner} {name} must be real numbers; got {values!r}") from None
    if arr.dtype.kind not in "iuf":
        raise TypeError(f"{owner} {name} must be real numbers; got {values!r} (dtype {arr.dtype})")
    return arr.astype(float)


class Discrete(Distribution):
    """A finite set of parameter values with optional probabilities.

    Parameters
    ----------
    values : 1-D sequence of finite numbers
        The support (at least one value; booleans and strings are refused).
    weights : 1-D sequence of non-negative numbers, one per value, default=None
        Relative weights: they are divided by their sum (the attribute ``weights`` holds the probabilities), so
        ``[1, 3]`` means ``[0.25, 0.75]``. None: uniform.

    Examples
    --------
    >>> import numpy as np
    >>> from orbitkernels.groups import Discrete, ImageTranslation, resolve_elements
    >>> q = Discrete([-1, 0, 1], weights=[1, 2, 1])
    >>> q.weights, q.is_symmetric("additive")
    ((0.25, 0.5, 0.25), True)
    >>> q.ppf((np.arange(8) + 0.5) / 8).tolist()  # 8 stratified points: each value 8 * its weight times
    [-1.0, -1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 1.0]
    >>> Discrete([0.85, 1.15]).is_symmetric("multiplicative")  # 1 / 0.85 is not in the support
    False

    A group whose laws are all discrete is summed over exactly by the feature maps:

    >>> group, E, w = resolve_elements(ImageTranslation((8, 8), q), None, 0)
    >>> E.shape, round(float(w.sum()), 6)
    ((9, 2), 1.0)
    """

    def __init__(self, values, weights=None):
        given = _numeric_array(values, "values")
        if given.ndim > 1:
            raise ValueError(f"Discrete values must be a 1-D sequence; got an array of shape {given.shape}")
        values = given.ravel()
        if values.size == 0:
            raise ValueError("Discrete needs at least one value")
        if not np.isfinite(values).all():
            raise ValueError("Discrete values must be finite")
        self.values = tuple(values.tolist())
        if weights is None:
            self.weights = None
        else:
            w = _numeric_array(weights, "weights").ravel()
            if w.shape != values.shape or (w < 0).any() or not np.isfinite(w).all() or w.sum() <= 0:
                raise ValueError(f"weights must be {values.size} non-negative numbers with a positive sum")
            self.weights = tuple((w / w.sum()).tolist())

    def sample(self, size, random_state=None):
        size = _check_size(size)
        rng = check_random_state(random_state)
        return rng.choice(np.asarray(self.values), size=size, p=self.weights)

    def support(self):
        """``(values, probabilities)``: the whole law, for exact sums over it."""
        v = np.asarray(self.values)
        w = np.full(v.size, 1.0 / v.size) if self.weights is None else np.asarray(self.weights)
        return v, w

    def ppf(self, u):
        """Through the CDF in the order the values were given: the n stratified points
        u_i = (i + U)/n take value k floor(n·w_k) or ceil(n·w_k) times (systematic sampling)."""
        v, w = self.support()
        cdf = np.cumsum(w)
        cdf /= cdf[-1]
        return v[np.minimum(np.searchsorted(cdf, np.asarray(u, dtype=float), side="right"), v.size - 1)]

    def is_symmetric(self, kind):
        _check_kind(kind)
        v = np.asarray(self.values)
        w = np.full(v.size, 1.0 / v.size) if self.weights is None else np.asarray(self.weights)
        if kind == "additive":
            inv = -v
        elif kind == "multiplicative":
            inv = 1.0 / v
        else:
            v = np.mod(v, 2 * np.pi)
            inv = np.mod(-v, 2 * np.pi)
        def mass(x):
            d = v - x
            if kind == "circular":
                d = np.mod(d + np.pi, 2 * np.pi) - np.pi
            return w[np.isclose(d, 0.0, atol=1e-9)].sum()

        return all(np.isclose(mass(a), mass(b)) for a, b in zip(v, inv))
