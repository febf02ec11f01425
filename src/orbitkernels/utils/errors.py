"""The marker of errors in what a user gave the library (files, folders, settings), not in the library itself.

The command line turns these (and the ``OSError`` family) into one ``orbitkernels: error: ...`` line; every
other exception is a bug and keeps its traceback.
"""
from __future__ import annotations

from contextlib import contextmanager

__all__ = ["ConfigurationError", "NoMatchingCellsError", "ResultsFileError", "UserError", "reading_results"]


class UserError(Exception):
    """Base (mixin) of the library's own errors about user input: data files, results files, options."""


class ConfigurationError(ValueError, UserError):
    """A named configuration or option (e.g. from an environment variable) that does not exist."""


class NoMatchingCellsError(ConfigurationError):
    """A cell filter (``ORBITKERNELS_RAJ2017_CELLS``) that matches no cell of one experiment. Run alone, the
    experiment refuses it; in a run of a paper's every experiment the command line skips that experiment, so that a
    filter aimed at one experiment still runs it, and fails only when it matches no cell of any."""


class ResultsFileError(ValueError, UserError):
    """A results file that a page or table is rendered from cannot be read, or lacks what the page needs (damaged,
    truncated or edited by hand)."""


@contextmanager
def reading_results(path):
    """Rendering from the results file ``path``: what its damage raises inside the renderer (a JSON decode error,
    a KeyError for a missing field, a TypeError for a field of the wrong type) becomes a :class:`ResultsFileError`
    naming the file, where ``orbitkernels report`` printed a traceback that named no file."""
    try:
        yield
    except ResultsFileError:
        raise
    except (KeyError, TypeError, ValueError, IndexError, AttributeError) as exc:  # UnicodeDecodeError is a ValueError
        raise ResultsFileError(f"results file {path} cannot be rendered ({type(exc).__name__}: {exc}); it is damaged "
                               "or was edited: run the experiment that writes it again, or delete it") from exc
