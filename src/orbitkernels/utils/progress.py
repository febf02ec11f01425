"""Progress bars (tqdm) that the CLI can silence globally with ``--quiet``."""
from __future__ import annotations

import os
import sys

from tqdm.auto import tqdm

_QUIET = os.environ.get("ORBITKERNELS_QUIET", "") not in ("", "0")


def set_quiet(quiet: bool) -> None:
    """Silence (or re-enable) every progress bar of the library."""
    global _QUIET
    _QUIET = bool(quiet)


def is_quiet() -> bool:
    return _QUIET


def progress(iterable=None, *, total=None, desc=None, leave=False, disable=False, **kw):
    """A tqdm bar on stderr, disabled when quiet or when ``disable`` (an estimator's ``verbose=0``). It is drawn
    whether or not stderr is a terminal: ``--quiet`` / ``ORBITKERNELS_QUIET=1`` keep a redirected log free of it."""
    return tqdm(iterable, total=total, desc=desc, leave=leave, disable=_QUIET or disable, file=sys.stderr, **kw)
