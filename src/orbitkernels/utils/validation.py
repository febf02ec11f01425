"""Input validation shared by groups, kernels, features and models.

Every check raises ``ValueError`` or ``TypeError`` whose message names the
parameter and the offending value: nothing is silently coerced or truncated.
"""
from __future__ import annotations

import numbers

import numpy as np
from sklearn.utils import check_random_state as _sk_check_random_state

__all__ = [
    "check_data",
    "check_int",
    "check_real",
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
    if not (np.issubdtype(arr.dtype, np.number) or arr.dtype == bool):
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
    if arr.size and not np.isfinite(arr).all():
        bad = "NaN" if np.isnan(arr).any() else "inf"
        raise ValueError(f"{name} contains {bad}; clean or impute the data first")
    if n_features is not None and arr.shape[1] != n_features:
        raise ValueError(f"{name} has {arr.shape[1]} features, but {n_features} are expected")
    return arr


def check_random_state(seed):
    """``None``, an int, a ``RandomState`` or a ``Generator`` -> a random source.

    Like scikit-learn's, but numpy ``Generator`` objects pass through too: every
    sampler here uses methods both share (uniform, normal, vonmises, choice,
    permutation, random).
    """
    if isinstance(seed, np.random.Generator):
        return seed
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
    value = float(value)
    if not np.isfinite(value):
        raise ValueError(f"{name} must be finite; got {value}")
    if low is not None and (value < low or (low_open and value == low)):
        op = ">" if low_open else ">="
        raise ValueError(f"{name} must be {op} {low}; got {value}")
    if high is not None and (value > high or (high_open and value == high)):
        op = "<" if high_open else "<="
        raise ValueError(f"{name} must be {op} {high}; got {value}")
    return value
