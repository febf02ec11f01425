"""Reproductions of the three papers, one module per paper (and ``molecules3d``, beyond the papers).

Each module exposes ``EXPERIMENTS``: a mapping from an experiment name to a
function ``run(quick=False, out_dir=None, resume=True, seed=0, download=False) -> dict`` that
writes ``<out_dir>/<paper>/<name>.json`` (``<name>_quick.json`` under ``quick``; ``out_dir`` defaults to
``$ORBITKERNELS_RESULTS`` or ``./results``) and a PNG beside it through
:class:`orbitkernels.experiments._runner.ExperimentRun`, and returns the result.
The ``raj2017`` and ``molecules3d`` runs also take ``config``, the name of one of their
configurations (``CONFIGS``), and ``raj2017``'s ``cifar10`` takes ``data``, the images themselves.
``download=True`` lets the dataset loaders fetch missing files; by default nothing
touches the network and a missing dataset raises ``DatasetNotFoundError``.
"""
from __future__ import annotations

import importlib
import numbers
import os

import numpy as np

#: The reproductions: paper (the name ``orbitkernels reproduce`` takes) -> the module that runs its experiments.
PAPERS = {
    "mroueh2015": "orbitkernels.experiments.mroueh2015",
    "raj2017": "orbitkernels.experiments.raj2017",
    "teo2007": "orbitkernels.experiments.teo2007",
    "molecules3d": "orbitkernels.experiments.molecules3d",
}


#: Results pages that are not ``docs/reproductions/<paper>.md`` (a hand-written page with a generated table).
PAGES = {"molecules3d": "docs/molecules3d.md"}


def page_of(paper: str) -> str:
    """The documentation page (relative to the repository root) that shows the results of ``paper``."""
    return PAGES.get(paper, f"docs/reproductions/{paper}.md")


def get_experiments(paper: str) -> dict:
    """Return the ``EXPERIMENTS`` mapping of ``paper``.

    Parameters
    ----------
    paper : str
        One of :data:`PAPERS`: "mroueh2015", "raj2017", "teo2007" or "molecules3d".

    Returns
    -------
    dict
        Experiment name -> its ``run`` function (see the module docstring), in the order
        ``orbitkernels reproduce <paper>`` runs them and ``--list`` prints them.

    Raises
    ------
    ValueError
        For a ``paper`` that is not a key of :data:`PAPERS`.
    """
    if paper not in PAPERS:
        raise ValueError(f"unknown paper {paper!r}; choose one of {sorted(PAPERS)}")
    module = importlib.import_module(PAPERS[paper])
    return module.EXPERIMENTS


def _check_run_args(quick, out_dir, resume, seed, download):
    """Refuse arguments of an experiment's ``run`` that it would misread: a seed that is not a whole number from 0
    to 2**32 - 1 (as ``reproduce --seed``; 1.5 ran and was recorded as 1.5, -1 or None failed inside NumPy with a
    message naming no argument), a flag that is not a bool ("no" counted as true), an ``out_dir`` that is not a path."""
    from ..utils.errors import ConfigurationError

    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral) or not 0 <= seed < 2**32:
        raise ConfigurationError(f"seed must be a whole number from 0 to 2**32 - 1; got {seed!r}")
    for name, value in (("quick", quick), ("resume", resume), ("download", download)):
        if not isinstance(value, (bool, np.bool_)):
            raise ConfigurationError(f"{name} must be True or False; got {value!r}")
    if out_dir is not None and not isinstance(out_dir, (str, os.PathLike)):
        raise ConfigurationError(f"out_dir must be a path (str or os.PathLike) or None; got {out_dir!r}")
    if isinstance(out_dir, str) and not out_dir.strip():  # "" wrote the results into the current folder
        raise ConfigurationError(f"out_dir is blank ({out_dir!r}); give a folder, or None for the default results root")


def _env_budget(variable, default):
    """The time budget in seconds that the environment variable ``variable`` sets for this invocation, or
    ``default`` (the configuration's) when it is unset or blank; a value that is not a finite number >= 0 is a
    :class:`~orbitkernels.utils.errors.ConfigurationError` (not a traceback, and not "nan" or a negative number
    that silently postponed every cell)."""
    from ..utils.errors import ConfigurationError

    text = os.environ.get(variable, "").strip()
    if not text:
        return default
    try:
        value = float(text)
    except ValueError:
        value = None
    if value is None or not np.isfinite(value) or value < 0:
        raise ConfigurationError(f"{variable}={text!r} is not a time budget: give a number of seconds >= 0 "
                                 "(0 starts no new cell)")
    return value


def _config_name(configs, variable, where, quick, config, default):
    """The name of the configuration a run uses: "quick" under ``quick``, else ``config``, else ``$variable``,
    else ``default``. A ``$variable`` that names no configuration is refused under ``quick`` too (which overrides
    it), so that a mistyped value does not pass unnoticed until the real run; so is an unknown ``config``."""
    from ..utils.errors import ConfigurationError

    env = os.environ.get(variable, "").strip()
    if config is None and env and env not in configs:
        raise ConfigurationError(f"{variable}={env!r} is not a configuration of {where}; "
                                 f"choose one of {sorted(k for k in configs if k != 'quick')}")
    name = "quick" if quick else (config or env or default)
    if name not in configs:
        raise ConfigurationError(f"unknown configuration {name!r} for {where}; choose one of {sorted(configs)}")
    return name
