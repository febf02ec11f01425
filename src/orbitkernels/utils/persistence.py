"""Version-stamped pickles: a fitted object refuses to load under a library version it was not made by.

Fitted state (templates, group elements, engine plans, dual coefficients) is
only meaningful for the code that produced it: an attribute renamed or a
normalisation changed between versions would otherwise load silently and give
wrong numbers. :class:`VersionedPickleMixin` stamps ``__version__`` into the
pickled state and raises :class:`IncompatibleVersionError` on load when the
major.minor version differs (patch releases keep the fitted state compatible).
It works for ``pickle``, ``copy`` and ``joblib`` alike, all of which go
through ``__getstate__`` / ``__setstate__``.

Put the mixin first among the bases so that it wraps scikit-learn's own
``BaseEstimator.__getstate__`` (which stamps ``_sklearn_version``).
"""
from __future__ import annotations

import re

from .._version import __version__

__all__ = ["IncompatibleVersionError", "VersionedPickleMixin", "VERSION_KEY"]

#: key of the library version in a pickled state
VERSION_KEY = "_orbitkernels_version"


class IncompatibleVersionError(ValueError):
    """A fitted estimator was saved by a version of orbitkernels that this one cannot trust."""


def _major_minor(version):
    # PEP 440's release segment: "0.1rc1" and "0.1.0.dev2" are releases of 0.1 ("0.1rc1".split(".") gave "1rc1")
    m = re.match(r"v?(\d+)\.(\d+)", str(version).strip())
    return (int(m[1]), int(m[2])) if m else (str(version),)


def compatible(saved, current=__version__) -> bool:
    """Whether state saved by ``saved`` may be loaded by ``current`` (same major.minor)."""
    return saved is not None and _major_minor(saved) == _major_minor(current)


class VersionedPickleMixin:
    """Stamp the library version into pickles and refuse to load another major.minor version."""

    def __getstate__(self):
        parent = getattr(super(), "__getstate__", None)
        state = parent() if parent is not None else self.__dict__.copy()
        state = dict(state if state is not None else {})
        state[VERSION_KEY] = __version__
        return state

    def __setstate__(self, state):
        state = dict(state)
        saved = state.pop(VERSION_KEY, None)
        if not compatible(saved):
            raise IncompatibleVersionError(
                f"this {type(self).__name__} was saved by orbitkernels {saved or '(unknown version)'}, "
                f"which is incompatible with the installed {__version__}; refit it with this version"
            )
        parent = getattr(super(), "__setstate__", None)
        if parent is not None:
            parent(state)
        else:
            self.__dict__.update(state)
