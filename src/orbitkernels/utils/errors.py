"""The marker of errors in what a user gave the library (files, folders, settings), not in the library itself.

The command line turns these (and the ``OSError`` family) into one ``orbitkernels: error: ...`` line; every
other exception is a bug and keeps its traceback.
"""
from __future__ import annotations

__all__ = ["ConfigurationError", "NoMatchingCellsError", "UserError"]


class UserError(Exception):
    """Base (mixin) of the library's own errors about user input: data files, results files, options."""


class ConfigurationError(ValueError, UserError):
    """A named configuration or option (e.g. from an environment variable) that does not exist."""


class NoMatchingCellsError(ConfigurationError):
    """A cell filter (``ORBITKERNELS_RAJ2017_CELLS``) that matches no cell of one experiment. Run alone, the
    experiment refuses it; in a run of a paper's every experiment the command line skips that experiment, so that a
    filter aimed at one experiment still runs it, and fails only when it matches no cell of any."""
