"""Reproductions of the three papers, one module per paper.

Each module exposes ``EXPERIMENTS``: a mapping from an experiment name to a
function ``run(quick=False, out_dir=None, resume=True, seed=0, download=False) -> dict`` that
writes ``results/<paper>/<name>.json`` (and a PNG beside it) through
:class:`orbitkernels.experiments._runner.ExperimentRun`, and returns the result.
``download=True`` lets the dataset loaders fetch missing files; by default nothing
touches the network and a missing dataset raises ``DatasetNotFoundError``.
"""
from __future__ import annotations

import importlib

PAPERS = {
    "mroueh2015": "orbitkernels.experiments.mroueh2015",
    "raj2017": "orbitkernels.experiments.raj2017",
    "teo2007": "orbitkernels.experiments.teo2007",
    "molecules3d": "orbitkernels.experiments.molecules3d",
}


def get_experiments(paper: str) -> dict:
    """Return the ``EXPERIMENTS`` mapping of ``paper`` (one of :data:`PAPERS`)."""
    if paper not in PAPERS:
        raise ValueError(f"unknown paper {paper!r}; choose one of {sorted(PAPERS)}")
    module = importlib.import_module(PAPERS[paper])
    return module.EXPERIMENTS
