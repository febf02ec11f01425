"""The Mroueh et al. 2015 reproduction pipeline in its quick mode (tiny sizes), plus its RLS solver."""
import json
import os
from pathlib import Path

import numpy as np
import pytest

from orbitkernels.experiments import get_experiments
from orbitkernels.experiments._mroueh_rls import LOO_GRID, _codes, one_nn_accuracy, rls_fit_predict
from orbitkernels.experiments.mroueh2015 import EXPERIMENTS, render_markdown

NEEDS = {"mnist": "mnist.npz", "speech": "fsdd.npz"}


def _skip_without_data(name):
    need = NEEDS.get(name)
    if need is None:
        return
    folder = os.environ.get("ORBITKERNELS_DATA")
    if not folder or not (Path(folder) / need).is_file():
        pytest.skip(f"{name} needs {need} in ORBITKERNELS_DATA (unset or without the file)")


@pytest.mark.parametrize("name", ["theorems", "xperm", "mnist", "speech"])
def test_quick_experiment_writes_results(name, tmp_path):
    _skip_without_data(name)
    assert get_experiments("mroueh2015")[name] is EXPERIMENTS[name]
    res = EXPERIMENTS[name](quick=True, out_dir=tmp_path, resume=True, seed=0)
    path = tmp_path / "mroueh2015" / f"{name}_quick.json"
    assert path.is_file() and path.with_suffix(".png").is_file()
    on_disk = json.loads(path.read_text())
    assert on_disk["quick"] is True and on_disk["experiment"] == name
    for key in ("config", "seeds", "library_version", "wall_time_s", "headline", "data", "notes"):
        assert key in on_disk
    assert on_disk["headline"] and all({"name", "ours", "paper", "better"} <= set(h) for h in on_disk["headline"])
    assert all(np.isfinite(h["ours"]) for h in res["headline"])
    assert not (tmp_path / "mroueh2015" / f"{name}_quick.partial.json").exists()


def test_quick_resume_reuses_cells(tmp_path):
    first = EXPERIMENTS["theorems"](quick=True, out_dir=tmp_path, seed=1)
    # a partial file with every cell: the rerun computes nothing and gives the same numbers
    from orbitkernels.experiments._runner import ExperimentRun

    run = ExperimentRun("mroueh2015", "theorems", first["config"], out_dir=tmp_path, quick=True)
    assert run.n_resumed == len(first["cells"]) > 0  # the finished file keeps its cells
    again = EXPERIMENTS["theorems"](quick=True, out_dir=tmp_path, seed=1)
    assert again["data"] == first["data"] and again["resumed_cells"] == len(first["cells"])
    # --no-resume recomputes every cell
    fresh = EXPERIMENTS["theorems"](quick=True, out_dir=tmp_path, seed=1, resume=False)
    assert fresh["resumed_cells"] == 0 and fresh["headline"] == first["headline"]


def test_render_markdown_from_results(tmp_path):
    EXPERIMENTS["theorems"](quick=True, out_dir=tmp_path)
    folder = tmp_path / "mroueh2015"
    # the page reads the full-run names; present the quick file under that name
    (folder / "theorems.json").write_text((folder / "theorems_quick.json").read_text())
    text = render_markdown(tmp_path)
    assert "## theorems" in text and "| cell | ours | paper | better |" in text
    assert "*Not run yet*" in text  # the other experiments


def test_rls_leave_one_out_matches_brute_force(rng):
    n, d = 40, 6
    X = rng.normal(size=(n, d))
    y = rng.integers(0, 3, n)
    out = rls_fit_predict(X, y, X[:5], rels=LOO_GRID[::6])
    Y = _codes(y, np.unique(y))
    scale = ((X - X.mean(0)) ** 2).sum() / n
    a = out["rel_lambda"] * scale
    hits = 0
    for i in range(n):
        keep = np.arange(n) != i
        mu, ym = X[keep].mean(0), Y[keep].mean(0)
        W = np.linalg.solve((X[keep] - mu).T @ (X[keep] - mu) + a * np.eye(d), (X[keep] - mu).T @ (Y[keep] - ym))
        hits += np.argmax((X[i] - mu) @ W + ym) == y[i]
    assert out["val_accuracy"] == pytest.approx(hits / n)


@pytest.mark.parametrize("shape", [(50, 8), (30, 80)])
def test_rls_kernel_path_equals_feature_path(rng, shape):
    n, d = shape
    X, Xt = rng.normal(size=(n, d)), rng.normal(size=(15, d))
    y = np.where(rng.random(n) > 0.5, 1, -1)
    a = rls_fit_predict(X, y, Xt, classes=[-1, 1])
    b = rls_fit_predict(X @ X.T, y, Xt @ X.T, classes=[-1, 1], kernel=True)
    assert a["rel_lambda"] == b["rel_lambda"]
    np.testing.assert_array_equal(a["pred"], b["pred"])
    # the hold-out branch (used above eig_limit) agrees between paths too
    c = rls_fit_predict(X, y, Xt, classes=[-1, 1], eig_limit=2)
    e = rls_fit_predict(X @ X.T, y, Xt @ X.T, classes=[-1, 1], kernel=True, eig_limit=2)
    assert c["selection"] == e["selection"] == "holdout"
    np.testing.assert_array_equal(c["pred"], e["pred"])


def test_one_nn(rng):
    A = np.array([[0.0, 0.0], [1.0, 1.0]])
    assert one_nn_accuracy(A, [0, 1], np.array([[0.1, 0.0], [0.9, 1.2]]), [0, 1]) == 1.0
