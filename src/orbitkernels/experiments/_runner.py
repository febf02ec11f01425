"""Results files with per-cell resume, shared by every reproduction.

An experiment is a grid of *cells* (one training size, one seed, one method...).
Each finished cell is written at once to ``<name>.partial.json`` (atomically), so
an interrupted run started again with the same configuration skips the cells it
already finished. :meth:`ExperimentRun.finish` writes the final
``results/<paper>/<name>.json`` with the configuration, seeds, library version,
wall time, every plotted number and the ``headline`` cells, then removes the
partial file. Two runs of one experiment at once (same configuration and version)
keep each other's cells: every save takes in, under a lock on the folder, the cells
the other wrote since (:meth:`ExperimentRun._save_partial`).

Stored cells are reused only when the file that holds them was made with the same
configuration (or, for an experiment that gives a ``cell_scope``, the same part of it
that the cell depends on) *and* the same library version: a number is never re-stamped
with a version that did not compute it. One line on stderr says what was kept and
what is recomputed, and why.
"""
from __future__ import annotations

import contextlib
import contextvars
import json
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from .._version import __version__
from ..utils.errors import UserError
from ..utils.io import NumpyJSONEncoder, atomic_write_json, dumps, give_default_mode, read_json

__all__ = ["ExperimentRun", "StoredCellError", "default_results_dir", "headline"]


class StoredCellError(KeyError, UserError):
    """A cell read back from a results file lacks what the experiment needs (the file was edited or is damaged)."""

    def __str__(self):  # KeyError would print the repr of the message
        return str(self.args[0]) if self.args else ""


_RESUMED_FILES: contextvars.ContextVar = contextvars.ContextVar("orbitkernels_resumed_files", default=None)


@contextlib.contextmanager
def recording_resumed_files():
    """Collect, in the list it yields, the results files whose cells the runs inside the ``with`` block take in
    (``orbitkernels reproduce`` names them when an experiment fails on a kept cell of the wrong type). Outside such
    a block nothing is recorded: a long-lived process running experiments from Python accumulates no list."""
    files = []
    token = _RESUMED_FILES.set(files)
    try:
        yield files
    finally:
        _RESUMED_FILES.reset(token)


class _StoredDict(dict):
    """A stored cell (or a part of one): a missing key names the file and the cell instead of a bare KeyError."""

    __slots__ = ("_where",)

    def __missing__(self, key):
        raise StoredCellError(f"{self._where} has no {key!r}: the stored cell is malformed (edited or damaged). "
                              "Delete that file or run again with --no-resume to recompute it")


def _stored(value, where):
    """``value`` with every dict inside it a :class:`_StoredDict` that knows ``where`` it was read from."""
    if isinstance(value, dict):
        out = _StoredDict((k, _stored(v, f"{where}[{k!r}]")) for k, v in value.items())
        out._where = where
        return out
    if isinstance(value, list):
        return [_stored(v, f"{where}[{i}]") for i, v in enumerate(value)]
    return value


def _say(message):
    # stderr: stdout may carry --json output
    print(message, file=sys.stderr, flush=True)


def _check_writable(folder):
    """Refuse a results folder that exists but cannot be written to, before any cell is computed (the first cell's
    save failed only after its computation, naming a temporary file)."""
    try:
        tempfile.TemporaryFile(dir=folder).close()  # what the atomic writes need: a new file in that folder
    except OSError as exc:
        raise type(exc)(exc.errno, exc.strerror, str(folder)) from None


def _file_id(path):
    """What tells one write of ``path`` from another (every write is a new file renamed over it), or None."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_ino, st.st_mtime_ns, st.st_size


@contextlib.contextmanager
def _folder_lock(folder):
    """An exclusive lock on ``folder`` held while a partial file is read and written, so that two runs saving at
    once do not both read the file before either writes it. POSIX only (``fcntl``); elsewhere, no lock."""
    try:
        import fcntl
    except ImportError:  # Windows: the merge still keeps what was written before the read
        yield
        return
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:  # a folder one may write but not read (mode -wx): no lock, as on Windows
        yield
        return
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
        except OSError:  # a file system without locks (some NFS mounts: ENOLCK): the save goes on without one
            pass
        yield
    finally:
        os.close(fd)  # releases the lock


def default_results_dir() -> Path:
    """``$ORBITKERNELS_RESULTS`` if set (and not blank; ``~`` expanded), else ``./results``."""
    # as ORBITKERNELS_DATA: a blank value is unset (not the current folder), and "~" is the home folder
    return Path(os.environ.get("ORBITKERNELS_RESULTS", "").strip() or "results").expanduser()


def headline(name, ours, paper=None, better="higher", **extra):
    """One key cell of a table: our number beside the paper's.

    ``better`` is "higher", "lower", or "closer" for a quantity that should
    match the paper's (anything else is a ``ValueError``); ``paper=None``: no number
    to compare with. The keyword arguments ``extra`` are stored in the cell as they are:
    ``tolerance`` (for "closer", default 10% of the paper's value; for "higher"/"lower",
    default 0) is how far on the wrong side still counts as a match (a fitted slope
    against a predicted rate, say); others (``note``, ``row``) are kept in the results file.
    """
    if better not in ("higher", "lower", "closer"):
        raise ValueError(f"better must be 'higher', 'lower' or 'closer'; got {better!r}")
    out = {"name": name, "ours": ours, "paper": paper, "better": better}
    out.update(extra)
    return out


def _rounded(obj):
    """``obj`` with every float rounded to 12 significant digits: a configuration's derived grids (10 ** arange)
    differ in the last bit between NumPy releases, and a stored cell must not be recomputed for that."""
    if isinstance(obj, (float, np.floating)):
        return float(f"{float(obj):.12g}")
    if isinstance(obj, dict):
        return {k: _rounded(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple, np.ndarray)):
        return [_rounded(v) for v in obj]
    return obj


def _canonical(obj) -> str:
    return json.dumps(_rounded(obj), cls=NumpyJSONEncoder, sort_keys=True)


class ExperimentRun:
    """Bookkeeping for one experiment: cells, resume, final results file.

    Parameters
    ----------
    paper, name : str
        The file is ``<out_dir>/<paper>/<name>.json`` (``<name>_quick.json`` in quick mode).
    config : dict
        Everything that determines the numbers (sizes, seeds, hyper-parameters).
        A partial file made with another configuration is not resumed from.
    out_dir : path, optional
        Root of the results tree (default :func:`default_results_dir`).
    quick : bool
        Tiny configuration for tests; written under a separate name.
    resume : bool
        Reuse the cells of an earlier run: its partial file (an interrupted run), else its finished results
        file, when made with the same configuration (see ``cell_scope``) and library version.
    cell_scope : callable, optional
        ``cell_scope(config, key)`` -> the part of a configuration that the cell ``key`` depends on (any
        JSON-able value). With it, a run whose configuration changed elsewhere (a configuration added to a
        grid, say) still reuses every stored cell whose scope is unchanged; without it, any change of the
        configuration recomputes every cell.
    """

    def __init__(self, paper, name, config, *, out_dir=None, quick=False, resume=True, cell_scope=None):
        self.paper = paper
        self.name = name
        self.config = dict(config)
        self.cell_scope = cell_scope
        self.quick = bool(quick)
        root = Path(out_dir) if out_dir is not None else default_results_dir()
        stem = f"{name}_quick" if quick else name
        self.path = root / paper / f"{stem}.json"
        self.partial_path = root / paper / f"{stem}.partial.json"
        self.figure_path = self.path.with_suffix(".png")
        # now, not after the first (possibly hours long) cell: a results folder that cannot be made fails at once
        self.path.parent.mkdir(parents=True, exist_ok=True)
        _check_writable(self.path.parent)
        self._t0 = time.perf_counter()
        self._elapsed_before = 0.0
        self.cells = {}
        self.n_resumed = 0
        self.n_taken_in = 0
        self.resumed_from = None
        self.resume = bool(resume)
        self._seen = {}  # path -> _file_id of the write of it that this run made or read last
        if resume:
            self._resume()

    def _resume(self):
        """Take in the cells of the partial file, else of the finished one: the first of them that this run can
        use (a partial file of another configuration, left by an interrupted run with another seed, was used
        alone and a finished file that matched was ignored: its cells were recomputed)."""
        present = [(path, kind) for path, kind in ((self.partial_path, "partial"), (self.path, "finished"))
                   if path.exists()]
        for i, (path, kind) in enumerate(present):
            then = f"trying the {present[i + 1][1]} results {present[i + 1][0]}" if i + 1 < len(present) \
                else "recomputing every cell"
            self._seen[path] = _file_id(path)  # its cells are this run's now: a save need not read them again
            try:
                state = read_json(path)
            except (OSError, ValueError) as exc:
                _say(f"{self.paper}/{self.path.stem}: cannot read the {kind} results {path} ({exc}); {then}")
                continue
            if self._resume_from(path, state, then):
                return

    def _resume_from(self, path, state, then):
        """Take in the cells of ``state`` (read from ``path``) where this run can use them; whether it did (else it
        says why, ending with ``then``)."""
        label = f"{self.paper}/{self.path.stem}"
        cells = state.get("cells") if isinstance(state, dict) else None
        if isinstance(state, dict) and not cells and isinstance(state.get("data"), dict):
            cells = state["data"].get("cells")  # older finished files kept their cells under data only
        if not isinstance(cells, dict) or not cells:
            if cells is not None and not isinstance(cells, dict):
                _say(f"{label}: the cells stored in {path} are malformed (not a mapping); {then}")
            return False
        version = state.get("library_version")
        same_config = _canonical(state.get("config")) == _canonical(self.config)
        if not same_config and (self.cell_scope is None or not isinstance(state.get("config"), dict)):
            _say(f"{label}: {path} was made with another configuration; its {len(cells)} cells are not reused, "
                 f"{then}")
            return False
        if version != __version__:
            made = f"orbitkernels {version}" if version else "an unknown orbitkernels version"
            _say(f"{label}: {path} was made by {made} (this is {__version__}); its {len(cells)} cells are not "
                 f"reused, {then}")
            return False
        bad = [k for k in cells if not isinstance(k, str)]
        if bad:  # JSON keys are always strings; anything else means the file was not written by this runner
            _say(f"{label}: {path} holds malformed cell keys {bad[:3]}; {then}")
            return False
        if not same_config:
            old = state["config"]
            kept = {k: v for k, v in cells.items() if self._same_scope(old, k)}
            if not kept:
                _say(f"{label}: {path} was made with another configuration; none of its {len(cells)} cells depends "
                     f"only on unchanged parts of it, {then}")
                return False
            _say(f"{label}: {path} was made with another configuration; {len(kept)} of its {len(cells)} cells "
                 "depend only on unchanged parts of it and are reused")
            cells = kept
        self.cells = {k: _stored(v, f"cell {k!r} of {path}") for k, v in cells.items()}
        try:
            self._elapsed_before = float(state.get("wall_time_s", 0.0))
        except (TypeError, ValueError):
            self._elapsed_before = 0.0
        if not 0.0 <= self._elapsed_before < float("inf"):  # "nan" went into the file and --json as a bare NaN
            self._elapsed_before = 0.0
        self.n_resumed = len(self.cells)
        self.resumed_from = path
        recorded = _RESUMED_FILES.get()
        if recorded is not None:
            recorded.append(path)
        how = "same configuration" if same_config else "cells whose part of the configuration is unchanged"
        _say(f"{label}: kept {self.n_resumed} finished cells from {path} ({how}, orbitkernels {__version__}); "
             "any other cell is computed")
        return True

    def _same_scope(self, old_config, key):
        """Whether cell ``key`` of a run made with ``old_config`` depends only on what this run has unchanged."""
        try:
            return _canonical(self.cell_scope(old_config, key)) == _canonical(self.cell_scope(self.config, key))
        except (KeyError, IndexError, TypeError, ValueError):  # a key or a configuration the scope cannot read
            return False

    # -- cells -------------------------------------------------------------
    @staticmethod
    def key(*parts) -> str:
        """A cell's key: the parts as strings joined by "|" (``key("fig1", 3)`` is ``"fig1|3"``)."""
        return "|".join(str(p) for p in parts)

    def has(self, key) -> bool:
        """Whether cell ``key`` is stored (computed by this run or kept from the one it resumed)."""
        return key in self.cells

    def get(self, key):
        """The stored value of cell ``key`` (a ``KeyError`` when it is not stored)."""
        return self.cells[key]

    def cell(self, key, compute):
        """Return the stored value of ``key``, or compute, store and return it."""
        key = str(key)
        if key in self.cells:
            return self.cells[key]
        value = compute()
        # Round-trip through JSON now so a resumed run sees exactly what a fresh one does (a NaN as None too).
        value = json.loads(dumps(value))
        self.cells[key] = value
        self._save_partial()
        return value

    def _save_partial(self):
        """Write the cells to the partial file. With ``resume``, first take in the cells that another run of the
        same experiment (same configuration and library version) wrote there since this run last saved: two runs
        started at once overwrote each other's cells, the last to save dropping those of the other."""
        with _folder_lock(self.partial_path.parent):
            if self.resume:
                self._take_in_others_cells()
            atomic_write_json(
                self.partial_path,
                {"config": self.config, "library_version": __version__, "cells": self.cells,
                 "wall_time_s": self.wall_time()},
            )
            self._seen[self.partial_path] = _file_id(self.partial_path)

    def _take_in_others_cells(self):
        for path in (self.partial_path, self.path):  # another run may have finished, removing its partial file
            seen = _file_id(path)
            if seen is None or seen == self._seen.get(path):
                continue  # absent, or this run's own last write, or read already
            self._seen[path] = seen
            try:
                state = read_json(path)
            except (OSError, ValueError):
                continue  # being replaced, or damaged: the cells this run holds are written over it as before
            cells = state.get("cells") if isinstance(state, dict) else None
            if (not isinstance(cells, dict) or state.get("library_version") != __version__
                    or _canonical(state.get("config")) != _canonical(self.config)):
                continue
            new = {k: v for k, v in cells.items() if isinstance(k, str) and k not in self.cells}
            for k, v in new.items():
                self.cells[k] = _stored(v, f"cell {k!r} of {path}")
            if new:
                self.n_taken_in += len(new)
                _say(f"{self.paper}/{self.path.stem}: {len(new)} cells written meanwhile to {path} by another run "
                     "of this experiment are kept beside this run's")
            return

    def wall_time(self) -> float:
        """Seconds of the whole run: this invocation's and those of the invocations it resumed."""
        return self._elapsed_before + self.session_time()

    def session_time(self) -> float:
        """Seconds of this invocation alone: what a time budget of one sitting counts (a resumed run has spent its
        earlier sittings' time already, and a budget on :meth:`wall_time` would never let it start a cell again)."""
        return time.perf_counter() - self._t0

    # -- final file ----------------------------------------------------------
    def finish(self, data, headline=(), *, seeds=None, notes=None, figure=None):
        """Write the final results file and return its content.

        ``figure`` is a callable ``figure(path)`` that saves the PNG.
        """
        if figure is not None:
            self._write_figure(figure)
        with _folder_lock(self.path.parent):
            if self.resume:  # another run's cells would go with the partial file that this removes
                self._take_in_others_cells()
            result = self._write_final(data, headline, seeds, notes, figure)
            # Idempotent: another process finishing the same experiment may have removed it already.
            self.partial_path.unlink(missing_ok=True)
        if self.n_resumed or self.n_taken_in:
            kept = [f"{self.n_resumed} cells kept from {self.resumed_from}"] if self.n_resumed else []
            kept += [f"{self.n_taken_in} cells from another run of it"] if self.n_taken_in else []
            _say(f"{self.paper}/{self.path.stem}: {', '.join(kept)}, "
                 f"{len(self.cells) - self.n_resumed - self.n_taken_in} computed now; wrote {self.path}")
        return result

    def _write_final(self, data, headline, seeds, notes, figure):
        result = {
            "paper": self.paper,
            "experiment": self.name,
            "quick": self.quick,
            "config": self.config,
            "seeds": seeds,
            "library_version": __version__,
            "python": platform.python_version(),
            "machine": {"platform": platform.platform(), "cpu_count": os.cpu_count()},
            "wall_time_s": round(self.wall_time(), 3),
            "resumed_cells": self.n_resumed,
            "headline": list(headline),
            "data": data,
            "notes": notes,
            "cells": self.cells,
            "figure": self.figure_path.name if figure is not None else None,
        }
        atomic_write_json(self.path, result)
        return result

    def _write_figure(self, figure):
        """``figure(path)`` into a temporary file of the same folder, then renamed over the PNG: two runs
        finishing at once never leave a half-written figure, and a failed plot leaves the old one."""
        folder = self.figure_path.parent
        folder.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=f".{self.figure_path.stem}.", suffix=self.figure_path.suffix)
        os.close(fd)
        try:
            figure(Path(tmp))
            give_default_mode(tmp)
            os.replace(tmp, self.figure_path)
        finally:
            if os.path.exists(tmp):
                os.unlink(tmp)
