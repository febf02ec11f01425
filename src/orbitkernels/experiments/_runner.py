"""Results files with per-cell resume, shared by every reproduction.

An experiment is a grid of *cells* (one training size, one seed, one method...).
Each finished cell is written at once to ``<name>.partial.json`` (atomically), so
an interrupted run started again with the same configuration skips the cells it
already finished. :meth:`ExperimentRun.finish` writes the final
``results/<paper>/<name>.json`` with the configuration, seeds, library version,
wall time, every plotted number and the ``headline`` cells, then removes the
partial file.
"""
from __future__ import annotations

import json
import os
import platform
import time
import warnings
from pathlib import Path

from .._version import __version__
from ..utils.io import NumpyJSONEncoder, atomic_write_json, read_json

__all__ = ["ExperimentRun", "default_results_dir", "headline"]


def default_results_dir() -> Path:
    """``$ORBITKERNELS_RESULTS`` if set, else ``./results``."""
    return Path(os.environ.get("ORBITKERNELS_RESULTS", "results"))


def headline(name, ours, paper=None, better="higher", **extra):
    """One key cell of a table: our number beside the paper's.

    ``better`` is "higher", "lower", or "closer" for a quantity that should
    match the paper's; ``tolerance`` (for "closer", default 10% of the paper's
    value; for "higher"/"lower", default 0) is how far on the wrong side still
    counts as a match (a fitted slope against a predicted rate, say).
    """
    if better not in ("higher", "lower", "closer"):
        raise ValueError(f"better must be 'higher', 'lower' or 'closer'; got {better!r}")
    out = {"name": name, "ours": ours, "paper": paper, "better": better}
    out.update(extra)
    return out


def _canonical(obj) -> str:
    return json.dumps(obj, cls=NumpyJSONEncoder, sort_keys=True)


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
        Reuse cells of an earlier interrupted run with the same configuration.
    """

    def __init__(self, paper, name, config, *, out_dir=None, quick=False, resume=True):
        self.paper = paper
        self.name = name
        self.config = dict(config)
        self.quick = bool(quick)
        root = Path(out_dir) if out_dir is not None else default_results_dir()
        stem = f"{name}_quick" if quick else name
        self.path = root / paper / f"{stem}.json"
        self.partial_path = root / paper / f"{stem}.partial.json"
        self.figure_path = self.path.with_suffix(".png")
        self._t0 = time.perf_counter()
        self._elapsed_before = 0.0
        self.cells = {}
        self.n_resumed = 0
        if resume and self.partial_path.exists():
            try:
                state = read_json(self.partial_path)
            except (OSError, ValueError) as exc:
                warnings.warn(f"ignoring unreadable partial results {self.partial_path}: {exc}")
                state = None
            if state is not None and _canonical(state.get("config")) == _canonical(self.config):
                self.cells = state.get("cells", {})
                self._elapsed_before = float(state.get("wall_time_s", 0.0))
                self.n_resumed = len(self.cells)
            elif state is not None:
                warnings.warn(f"{self.partial_path} was made with another configuration; starting afresh")
        elif resume and self.path.exists():
            # A finished run keeps its cells: running it again re-renders the file and the figure
            # (e.g. after a change to the headline or the plot) without recomputing anything.
            try:
                state = read_json(self.path)
            except (OSError, ValueError):
                state = None
            if (isinstance(state, dict) and isinstance(state.get("cells"), dict)
                    and _canonical(state.get("config")) == _canonical(self.config)):
                self.cells = state["cells"]
                self._elapsed_before = float(state.get("wall_time_s", 0.0))
                self.n_resumed = len(self.cells)

    # -- cells -------------------------------------------------------------
    @staticmethod
    def key(*parts) -> str:
        return "|".join(str(p) for p in parts)

    def has(self, key) -> bool:
        return key in self.cells

    def get(self, key):
        return self.cells[key]

    def cell(self, key, compute):
        """Return the stored value of ``key``, or compute, store and return it."""
        key = str(key)
        if key in self.cells:
            return self.cells[key]
        value = compute()
        # Round-trip through JSON now so a resumed run sees exactly what a fresh one does.
        value = json.loads(json.dumps(value, cls=NumpyJSONEncoder))
        self.cells[key] = value
        self._save_partial()
        return value

    def _save_partial(self):
        atomic_write_json(
            self.partial_path,
            {"config": self.config, "cells": self.cells, "wall_time_s": self.wall_time()},
        )

    def wall_time(self) -> float:
        return self._elapsed_before + (time.perf_counter() - self._t0)

    # -- final file ----------------------------------------------------------
    def finish(self, data, headline=(), *, seeds=None, notes=None, figure=None):
        """Write the final results file and return its content.

        ``figure`` is a callable ``figure(path)`` that saves the PNG.
        """
        if figure is not None:
            self.figure_path.parent.mkdir(parents=True, exist_ok=True)
            figure(self.figure_path)
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
        if self.partial_path.exists():
            self.partial_path.unlink()
        return result
