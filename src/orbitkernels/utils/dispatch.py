"""Routing of dask arrays from the core (features, models) up to the Dask adapter, without importing it.

The layers are ``utils``/``backends`` ← ``groups`` ← ``features``/``kernels`` ← ``models`` ← Dask adapter
(:mod:`orbitkernels.dask`) ← ``experiments`` ← ``cli`` (docs/architecture.md, "Layers"); nothing imports a
module of a higher layer. Yet a feature map must accept a dask array in ``fit``/``transform`` without the
user importing anything else. So the core only asks this registry: :func:`is_dask_array` recognises a
dask array without importing dask (if one exists, ``dask.array`` is already loaded), and
:func:`dask_call` runs the operation that the adapter registered under a name. The adapter fills the
registry when it is imported; the first dask array to arrive imports it *by name*
(``importlib.import_module``), so no module of the core names the adapter in an import statement, dask
stays an optional extra, and a numpy user never loads either.
"""
from __future__ import annotations

import importlib
import sys

__all__ = ["ADAPTER", "dask_call", "is_dask_array", "register"]

#: The module that registers the dask operations (imported on first use, by name only).
ADAPTER = "orbitkernels.dask"

_REGISTRY: dict = {}


def is_dask_array(X):
    """Whether ``X`` is a ``dask.array.Array``, without importing dask (it is loaded iff one exists).

    Parameters
    ----------
    X : object
        Anything.

    Returns
    -------
    bool

    Examples
    --------
    >>> import dask.array as da
    >>> import numpy as np
    >>> from orbitkernels.utils.dispatch import is_dask_array
    >>> is_dask_array(da.zeros((4, 3), chunks=2))
    True
    >>> is_dask_array(np.zeros((4, 3)))
    False
    """
    if not hasattr(X, "dask"):  # duck-typed first: the common numpy case costs one attribute look-up
        return False
    da = sys.modules.get("dask.array")
    return da is not None and isinstance(X, da.Array)


def register(name, fn):
    """Called by the adapter on import: ``dask_call(name, ...)`` will run ``fn``."""
    _REGISTRY[name] = fn
    return fn


def dask_call(name, *args, **kwargs):
    """Run the adapter's operation ``name``, importing the adapter first if no dask array came before."""
    if name not in _REGISTRY:
        importlib.import_module(ADAPTER)
    return _REGISTRY[name](*args, **kwargs)
