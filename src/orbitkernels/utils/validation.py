"""Input validation shared by groups, kernels, features and models.

Every check raises ``ValueError`` or ``TypeError`` whose message names the
parameter and the offending value: nothing is silently coerced or truncated.
"""
from __future__ import annotations

import functools
import numbers
import os
from numbers import Integral, Real

import numpy as np
from sklearn.utils import check_random_state as _sk_check_random_state
from sklearn.utils._param_validation import HasMethods, Interval, StrOptions, validate_parameter_constraints

__all__ = [
    "MAX_COUNT",
    "RANDOM_STATE_CONSTRAINT",
    "StrictInterval",
    "all_finite",
    "check_bool",
    "check_budget",
    "check_labels_per_row",
    "check_param_again",
    "check_not_text",
    "check_rbf_precision",
    "count_constraint",
    "device_constraints",
    "env_count",
    "finite_real_constraint",
    "is_count_text",
    "kernel_param_constraints",
    "max_sq_norm",
    "physical_memory_bytes",
    "positive_real_constraint",
    "resolve_kernel_params",
    "scale_gamma",
    "check_data",
    "check_int",
    "check_real",
    "check_real_dtype",
    "check_random_state",
]


def check_data(X, name="X", *, n_features=None, dtype=None, allow_empty=False, copy=False):
    """Return ``X`` as a finite 2-D float array (float32 kept, everything else float64).

    Raises a ``TypeError`` for complex, object or non-numeric input and a
    ``ValueError`` for NaN/inf, wrong dimensionality, empty input or a number of
    columns different from ``n_features``.
    """
    if hasattr(X, "toarray") and not isinstance(X, np.ndarray):
        raise TypeError(f"{name}: sparse input is not supported here; pass a dense array")
    arr = np.asarray(X)
    if arr.dtype == object:
        raise TypeError(f"{name} has dtype object; pass a numeric array")
    if np.iscomplexobj(arr):
        raise TypeError(f"{name} is complex ({arr.dtype}); orbitkernels works on real data")
    # timedelta64 is a signedinteger to NumPy: its counts of some unit are not the data's numbers
    if not (np.issubdtype(arr.dtype, np.number) or arr.dtype == bool) or arr.dtype.kind in "mM":
        raise TypeError(f"{name} has non-numeric dtype {arr.dtype}")
    if arr.ndim != 2:
        raise ValueError(
            f"{name} must be 2-D (n_samples, n_features); got an array of shape {arr.shape}. "
            "Reshape a single sample with X.reshape(1, -1)."
        )
    if not allow_empty and (arr.shape[0] == 0 or arr.shape[1] == 0):
        raise ValueError(f"{name} is empty (shape {arr.shape}); at least one sample and one feature are needed")
    if dtype is None:
        dtype = np.float32 if arr.dtype == np.float32 else np.float64
    arr = np.array(arr, dtype=dtype, copy=copy) if copy else np.asarray(arr, dtype=dtype)
    if arr.size and not all_finite(arr):
        bad = "NaN" if _any_nan(arr) else "inf"
        raise ValueError(f"{name} contains {bad}; clean or impute the data first")
    if n_features is not None and arr.shape[1] != n_features:
        raise ValueError(f"{name} has {arr.shape[1]} features, but {n_features} are expected")
    return arr


def keeps_integer_rows(X):
    """Whether ``X`` is a NumPy array of integers or booleans, which the budgeted maps (feature maps' ``transform``,
    ``HaarKernel``) keep as they are and convert block by block (:func:`float64_block`): a uint8 image converted
    whole is 8 times its size in float64, beside the budget. A DataFrame of integer or boolean columns too
    (:func:`integer_frame_dtype`): converted whole, 8000 rows of 784 uint8 columns took 52 MB at an 8 MB budget."""
    return (isinstance(X, np.ndarray) and X.dtype.kind in "iub") or integer_frame_dtype(X) is not None


def integer_frame_dtype(X):
    """The common NumPy dtype of a DataFrame's columns where they are all NumPy integers or booleans and so is that
    type (uint8 with bool: uint8), else None: pandas' nullable ``Int64`` (which may hold NA), a float column, or
    int64 beside uint64 (common type float64) are converted whole, as before."""
    if isinstance(X, np.ndarray) or not hasattr(X, "columns") or not hasattr(X, "dtypes") or len(X.columns) == 0:
        return None
    kinds = set(X.dtypes)
    if not all(isinstance(t, np.dtype) and t.kind in "iub" for t in kinds):
        return None
    dt = functools.reduce(np.promote_types, kinds)  # not np.result_type: at most 64 arguments in older NumPy
    return dt if dt.kind in "iub" else None


def float64_block(block):
    """A block of rows in float64 where they are integers or booleans (:func:`keeps_integer_rows`), else as is."""
    return block if block.dtype.kind == "f" else block.astype(np.float64)


def _row_blocks(arr, block_bytes=256 * 2**10):
    # small blocks: the checks below run inside memory-budgeted calls (HaarKernel, transforms),
    # where a float64 copy of a large block would be a temporary the budget does not allow
    step = max(1, int(block_bytes // max(1, arr[:1].nbytes)))
    return (arr[a : a + step] for a in range(0, len(arr), step))


def all_finite(arr):
    """Whether every entry is finite, without an ``arr``-sized boolean temporary.

    A finite sum means finite entries (scikit-learn's fast path); a sum that
    overflowed is checked again block by block.
    """
    with np.errstate(over="ignore", invalid="ignore"):
        if np.isfinite(arr.sum()):
            return True
    return all(np.isfinite(b).all() for b in _row_blocks(arr))


def _any_nan(arr):
    return any(np.isnan(b).any() for b in _row_blocks(arr))


def check_random_state(seed):
    """``None``, an int, a ``RandomState`` or a ``Generator`` -> a random source.

    Like scikit-learn's, but numpy ``Generator`` objects pass through too: every
    sampler here uses methods both share (uniform, normal, vonmises, choice,
    permutation, random).
    """
    if isinstance(seed, np.random.Generator):
        return seed
    if isinstance(seed, numbers.Integral) and not isinstance(seed, bool) and not 0 <= seed < 2**32:
        # numpy's "Seed must be between 0 and 2**32 - 1" names no argument
        raise ValueError(f"random_state must be a whole number from 0 to 2**32 - 1; got {seed}")
    return _sk_check_random_state(seed)


def check_int(value, name, *, min_value=None, max_value=None, allow_none=False):
    """Return ``value`` as an ``int`` after checking its type and range."""
    if value is None and allow_none:
        return None
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an integer; got {value!r} ({type(value).__name__})")
    value = int(value)
    if min_value is not None and value < min_value:
        raise ValueError(f"{name} must be >= {min_value}; got {value}")
    if max_value is not None and value > max_value:
        raise ValueError(f"{name} must be <= {max_value}; got {value}")
    return value


def check_real(value, name, *, low=None, high=None, low_open=False, high_open=False, allow_none=False):
    """Return ``value`` as a finite ``float`` inside the given (half-)open interval."""
    if value is None and allow_none:
        return None
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number; got {value!r} ({type(value).__name__})")
    try:
        value = float(value)
    except OverflowError:  # an int beyond float's range (10**400): not finite as a float, said as such
        raise ValueError(f"{name} must be finite; got {value!r:.30}..., beyond the range of a float") from None
    if not np.isfinite(value):
        raise ValueError(f"{name} must be finite; got {value}")
    if low is not None and (value < low or (low_open and value == low)):
        op = ">" if low_open else ">="
        raise ValueError(f"{name} must be {op} {low}; got {value}")
    if high is not None and (value > high or (high_open and value == high)):
        op = "<" if high_open else "<="
        raise ValueError(f"{name} must be {op} {high}; got {value}")
    return value


# ----------------------------------------------------------------------------
# Parameter constraints (scikit-learn's ``_parameter_constraints`` vocabulary)
# ----------------------------------------------------------------------------

#: Upper bound of every count parameter (templates, components, bins, group samples, iterations).
#: Beyond it the arrays they size cannot be indexed by BLAS/NumPy's 32-bit loops, and an
#: unbounded integer like 10**30 would otherwise surface as an OverflowError deep inside NumPy.
MAX_COUNT = 2**31 - 1


class StrictInterval(Interval):
    """:class:`sklearn.utils._param_validation.Interval` that refuses booleans.

    ``True`` is an ``Integral`` and a ``Real`` in Python, so scikit-learn's interval
    accepts ``coef0=True`` or ``n_bins=True``; a flag passed where a number is
    expected is a mistake, not a 1. NaN is already refused by ``Interval``; use an
    open (or ``None``) bound to refuse the infinities.
    """

    def is_satisfied_by(self, val):
        if isinstance(val, (bool, np.bool_)):
            return False
        return super().is_satisfied_by(val)


def count_constraint(low=1, high=MAX_COUNT):
    """Integers in ``[low, high]`` (never booleans)."""
    return StrictInterval(Integral, low, high, closed="both")


class TorchDevice(HasMethods):
    """A ``torch.device``, recognised by its type's name and module: checking it needs no import of torch (an
    object of that type cannot exist where torch is not installed). A :class:`HasMethods` only so that
    scikit-learn's parameter validation takes it as a constraint."""

    def __init__(self):
        super().__init__([])

    def is_satisfied_by(self, val):
        t = type(val)
        return t.__name__ == "device" and t.__module__.split(".")[0] == "torch"

    def __str__(self):
        return "a torch.device"


def device_constraints():
    """An estimator's ``device``: a name ("cpu", "cuda", "cuda:1", "mps"), an accelerator's index, a
    ``torch.device``, or None (the back-end's default); whether the device exists is checked at fit."""
    return [str, count_constraint(0), TorchDevice(), None]


def positive_real_constraint():
    """Finite reals ``> 0`` (never booleans, NaN or inf)."""
    return StrictInterval(Real, 0, None, closed="neither")


def finite_real_constraint():
    """Any finite real (never booleans, NaN or inf)."""
    return StrictInterval(Real, None, None, closed="neither")


def physical_memory_bytes():
    """The machine's physical memory (8 GiB where the platform does not report it)."""
    try:
        return float(os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE"))
    except (AttributeError, ValueError, OSError):  # pragma: no cover - not POSIX
        return 8192.0 * 2**20


def check_param_again(estimator, name):
    """Check the parameter ``name`` of a fitted ``estimator`` against its constraints, as ``fit`` did: methods
    that read it after ``fit`` (``max_memory_mb`` bounds every transform) see what ``set_params`` put there since."""
    validate_parameter_constraints({name: estimator._parameter_constraints[name]}, {name: getattr(estimator, name)},
                                   caller_name=type(estimator).__name__)


def check_labels_per_row(y, n):
    """``y`` as an array of one label per row of an X of ``n`` rows, else a ValueError saying so (a shorter y was
    broadcast, a wrong one failed deep in numpy)."""
    y = np.asarray(y)
    if y.shape != (n,):
        raise ValueError(f"y must be 1-D with one label per row of X ({n}); got shape {y.shape}")
    return y


def check_budget(owner, need_bytes, max_memory_mb, what, remedy):
    """Refuse at ``fit`` what no chunking of ``transform`` could hold within ``max_memory_mb``.

    ``need_bytes`` is a lower bound of one row's working memory, computed from the
    parameters alone, before anything of that size is drawn: a count such as
    ``n_group_samples=10**9`` is then a clear error instead of gigabytes of group
    elements allocated first (and a process killed for memory) and an error only at
    the first ``transform``.
    """
    budget = float(max_memory_mb) * 2**20
    if need_bytes > budget:
        need_mb = need_bytes / 2**20
        # two significant digits below 0.1 MB, where one decimal would print a need of "0.0 MB"
        need = f"{need_mb:,.1f}" if need_mb >= 0.1 else f"{need_mb:.2g}"
        raise ValueError(
            f"{owner}: {what} need at least {need} MB for one row, more than "
            f"max_memory_mb={max_memory_mb}; {remedy}"
        )


#: ``random_state``: None, a seed, a RandomState, or a NumPy Generator (every sampler here accepts one).
RANDOM_STATE_CONSTRAINT = ["random_state", np.random.Generator]


def check_not_text(X, name="X"):
    """Refuse text: string arrays, and object arrays holding anything but real numbers.

    scikit-learn's ``validate_data`` parses ``np.array([["1.5"]])`` into numbers;
    a feature map of images should not. Object arrays of real numbers are kept
    (converted exactly, as scikit-learn's ``check_dtype_object`` requires), so every
    entry point accepts and refuses the same inputs.
    """
    if hasattr(X, "toarray") and not isinstance(X, np.ndarray):
        return X  # sparse: numeric by construction; the estimator's own check accepts or refuses it
    if isinstance(X, np.ndarray):
        arr = X
    else:
        dtypes = getattr(X, "dtypes", None)  # a DataFrame: look at its columns without converting it
        if dtypes is not None:
            bad = [str(c) for c, t in zip(X.columns, dtypes) if getattr(t, "kind", "O") not in "biuf"]
            if bad:
                raise TypeError(f"{name} has non-numeric columns {bad[:5]}; pass numeric data")
            return X
        try:
            arr = np.asarray(X)
        except Exception:  # ragged lists and the like: leave the message to the array check
            return X
    if arr.dtype.kind in "USa":
        raise TypeError(f"{name} has a text dtype ({arr.dtype}); pass a numeric array, not strings")
    if arr.dtype.kind in "mM":  # scikit-learn would take a timedelta's counts of its unit as the numbers
        raise TypeError(f"{name} has a time dtype ({arr.dtype}); pass a numeric array")
    if arr.dtype == object:
        for v in arr.flat:
            if isinstance(v, (bool, np.bool_)) or not isinstance(v, (numbers.Real, np.number)):
                # worded like float()'s own refusal, which scikit-learn's check_dtype_object expects
                raise TypeError(
                    f"{name} is an object array holding {type(v).__name__} values ({v!r}): float() argument must "
                    f"be a string or a real number, not '{type(v).__name__}'; pass a numeric array"
                )
    return X


def check_bool(value, name):
    """``value`` as a ``bool`` when it is one (Python's or NumPy's), else a ``TypeError`` naming it.

    A flag given as "no", "0" or 1 is truthy or a number: taken as it is, it switches on what the caller meant off.
    """
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be True or False; got {value!r}")
    return bool(value)


def check_real_dtype(A, name, hint=""):
    """``A`` as an array of real numbers (any real or boolean dtype, not converted), else a ``TypeError`` naming it.

    A float conversion would parse text and drop imaginary parts with a mere warning. ``hint`` follows the name in
    the message (" (positions)").
    """
    A = np.asarray(A)
    if not (np.issubdtype(A.dtype, np.number) or A.dtype == bool) or np.iscomplexobj(A):
        raise TypeError(f"{name} must hold real numbers{hint}; got dtype {A.dtype}")
    return A


def is_count_text(v):
    """Whether ``v`` spells a whole number in ASCII digits: str.isdigit() also takes "²", which int() refuses."""
    return v.isascii() and v.isdigit()


def env_count(name):
    """The environment variable ``name`` as a positive integer, or None when unset or blank; anything else is a
    :class:`~orbitkernels.utils.errors.ConfigurationError` naming it (not a traceback from ``int()``, nor a count
    of 0 or -1 handed on to BLAS or a thread pool)."""
    from .errors import ConfigurationError

    v = os.environ.get(name, "").strip()
    if not v:
        return None
    if not is_count_text(v) or int(v) < 1:
        raise ConfigurationError(f"{name} must be a positive integer; got {v!r}")
    return int(v)


def scale_gamma(X):
    """``gamma="scale"``: ``1 / (n_features · X.var())`` (1 for constant X), scikit-learn's ``SVC`` rule.

    The variance is accumulated in float64 over row blocks, so float32 data and
    large X cost no full-size temporary; of X divided by its largest magnitude, so rows
    near float64's range do not overflow the squares (at 1e155 the variance was inf
    and γ silently 0: every row had the same features). A γ outside float64's range
    is a ValueError.
    """
    n, d = X.shape
    step = max(1, (1 << 22) // max(1, d))
    # max |x| from each block's max and min in float: np.abs of a signed integer's minimum is itself (int8: -128),
    # so integer rows (HaarKernel keeps them) of only 0 and -128 had top 0 and gamma 1.0 instead of 1 / (d var)
    top = max((max(abs(float(b.max())), abs(float(b.min()))) for b in (X[a : a + step] for a in range(0, n, step))),
              default=0.0)
    if top == 0.0:
        return 1.0
    c = 2.0 ** np.frexp(top)[1]  # a power of two: X / c is exact, γ the same bits as without it where both work
    with np.errstate(over="ignore"):
        mean = float(np.mean(X, dtype=np.float64)) / c
    if not np.isfinite(mean):  # the sum overflowed
        mean = sum(float(np.sum(np.asarray(X[a : a + step], dtype=np.float64) / c)) for a in range(0, n, step))
        mean /= n * d
    total, total_sq = 0.0, 0.0
    for a in range(0, n, step):
        blk = np.asarray(X[a : a + step], dtype=np.float64) / c - mean
        total += float(blk.sum())
        total_sq += float((blk * blk).sum())
    m = n * d
    var = total_sq / m - (total / m) ** 2  # of X / c
    if not var > 0:
        return 1.0
    with np.errstate(over="ignore", under="ignore"):
        gamma = 1.0 / (d * var) / c / c
    if not np.finfo(np.float64).tiny <= gamma <= np.finfo(np.float64).max:  # subnormal: its products are noise
        power = -np.log10(d * var) - 2 * np.log10(c)
        raise ValueError(f'gamma="scale" (1 / (n_features · X.var())) is 10^{power:.0f} '
                         f"for rows of magnitude {top:.3g}, outside float64's range; rescale X or give gamma a number")
    return gamma


def kernel_param_constraints():
    """Constraints of the base-kernel parameters shared by OrbitNystroem and HaarKernel.

    gamma > 0 (or "scale", or None for the kernel's own default); a positive
    integer polynomial degree (a fractional power of a negative <x, z> + c0 is NaN,
    a zero or negative one makes no kernel); any finite coef0.
    """
    return {
        "gamma": [positive_real_constraint(), StrOptions({"scale"}), None],
        "degree": [count_constraint(1), None],
        "coef0": [finite_real_constraint(), None],
        "kernel_params": [dict, None],
    }


def resolve_kernel_params(owner, kernel, X, *, gamma=None, degree=None, coef0=None, kernel_params=None):
    """The keyword arguments of a scikit-learn pairwise kernel, checked, and the gamma used.

    Like ``sklearn.kernel_approximation.Nystroem``: ``gamma``/``degree``/``coef0``
    apply to the named kernels that take them (``KERNEL_PARAMS``) and are
    refused with a callable kernel; ``kernel_params`` (a dict) is checked too: its
    keys must be parameters of the named kernel and its gamma/degree/coef0 obey
    the same constraints. ``gamma="scale"`` becomes ``1 / (n_features · X.var())``.

    Returns ``(params, gamma_)`` (``gamma_`` None where the kernel's default applies).
    """
    from sklearn.metrics.pairwise import KERNEL_PARAMS  # heavy module: only when a kernel is resolved

    params = dict(kernel_params or {})
    cons = kernel_param_constraints()
    if callable(kernel):
        given = [n for n, v in (("gamma", gamma), ("degree", degree), ("coef0", coef0)) if v is not None]
        if given:
            raise ValueError(
                f"{owner}: {', '.join(given)} apply to named kernels only; with a callable kernel pass its "
                "arguments in kernel_params"
            )
    else:
        allowed = KERNEL_PARAMS[kernel]
        unknown = sorted(k for k in params if k not in allowed)
        if unknown:
            raise ValueError(
                f"{owner}: kernel_params has {unknown}, which kernel={kernel!r} does not take "
                f"(it takes {sorted(allowed) or 'no parameters'})"
            )
        for name in ("gamma", "degree", "coef0"):
            if name in params:
                validate_parameter_constraints({f"kernel_params['{name}']": cons[name]},
                                               {f"kernel_params['{name}']": params[name]}, caller_name=owner)
        for name, value in (("gamma", gamma), ("degree", degree), ("coef0", coef0)):
            if value is not None and name in allowed:
                params[name] = value
    g = params.get("gamma")
    if isinstance(g, str):  # "scale"
        params["gamma"] = g = scale_gamma(X)
    return params, (None if g is None else float(g))


def max_sq_norm(X):
    """max_i |x_i|² in float64, block by block (no X-sized temporary, no float32 overflow)."""
    if X.shape[0] == 0:
        return 0.0
    best = 0.0
    for blk in _row_blocks(X):
        b = np.asarray(blk, dtype=np.float64)
        best = max(best, float(np.einsum("ij,ij->i", b, b).max()))
    return best


def check_rbf_precision(owner, gamma, x_sq, z_sq, dtype):
    """Refuse data on which an rbf kernel computed as exp(-γ(|x|² + |z|² - 2<x, z>)) is noise.

    The expansion (scikit-learn's ``euclidean_distances``, the engine's FFT paths) has an
    absolute error of about eps·(|x|² + |z|²) in the squared distance, so the kernel
    value is off by a factor exp(±γ·eps·(|x|² + |z|²)): at |x| ~ 1e19 even k(x, x)
    comes out 0 (or NaN once the squares overflow). Raised when that exponent error
    exceeds 0.5, i.e. the kernel values are wrong by more than ~40%; typical data
    (γ ~ 1/d, |x|² ~ d) sit at ~1e-7 of it.
    """
    if gamma is None or not (x_sq or z_sq):
        return
    eps = float(np.finfo(dtype).eps)
    err = float(gamma) * eps * 4.0 * (float(x_sq) + float(z_sq))
    if not np.isfinite(err) or err > 0.5:
        raise ValueError(
            f"{owner}: X's squared norms reach {x_sq:.3g} and the rbf kernel's (gamma={gamma:.3g}) squared "
            f"distances, computed in {np.dtype(dtype).name} as |x|² + |z|² - 2<x, z>, would be wrong by "
            f"~{err:.3g} in the exponent; rescale X (e.g. StandardScaler) or use gamma='scale'"
        )
