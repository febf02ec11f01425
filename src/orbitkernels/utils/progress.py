"""Progress bars (tqdm) that the CLI can silence globally with ``--quiet``."""
from __future__ import annotations

import os
import sys

from tqdm.auto import tqdm

#: set by :func:`set_quiet`; None: ``ORBITKERNELS_QUIET`` decides, read when a bar is made (it was read once, at
#: import, so setting it from Python afterwards did nothing, and the command line's default overrode it)
_QUIET = None


def set_quiet(quiet) -> None:
    """Silence (True) or re-enable (False) every progress bar of the library; None: ``ORBITKERNELS_QUIET`` decides."""
    global _QUIET
    _QUIET = None if quiet is None else bool(quiet)


def is_quiet() -> bool:
    if _QUIET is not None:
        return _QUIET
    return os.environ.get("ORBITKERNELS_QUIET", "").strip() not in ("", "0")


def progress(iterable=None, *, total=None, desc=None, leave=False, disable=False, **kw):
    """A tqdm bar on stderr, disabled when quiet or when ``disable`` (an estimator's ``verbose=0``). It is drawn
    whether or not stderr is a terminal: ``--quiet`` / ``ORBITKERNELS_QUIET=1`` keep a redirected log free of it."""
    return tqdm(iterable, total=total, desc=desc, leave=leave, disable=is_quiet() or disable, file=sys.stderr, **kw)
