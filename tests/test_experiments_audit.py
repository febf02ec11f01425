"""The reproductions' settings as a user gives them: environment variables, ``run(...)`` arguments, ``report``.

Each bad setting is one ``orbitkernels: error:`` line naming it, before any data are read or any file is written.
"""
from __future__ import annotations

import pytest

from conftest import shared_data_dir
from orbitkernels.cli import main
from orbitkernels.experiments import PAPERS, get_experiments
from orbitkernels.utils.errors import ConfigurationError

DATA = shared_data_dir()  # before the fixture below points ORBITKERNELS_DATA elsewhere
_ENV = ("ORBITKERNELS_RAJ2017_CONFIG", "ORBITKERNELS_RAJ2017_TIME_BUDGET_S", "ORBITKERNELS_RAJ2017_CELLS",
        "ORBITKERNELS_BACKEND", "ORBITKERNELS_DEVICE", "ORBITKERNELS_MOLECULES3D_CONFIG",
        "ORBITKERNELS_MOLECULES3D_BUDGET_S")


@pytest.fixture
def clean_env(monkeypatch, tmp_path):
    for name in _ENV:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("ORBITKERNELS_DATA", str(tmp_path / "no-data"))  # a check that reads data fails differently
    return monkeypatch


def _torch_cuda():
    try:
        import torch
    except ImportError:
        return False
    return torch.cuda.is_available()


BAD_ENV = [
    ("raj2017", "qm7", {"ORBITKERNELS_RAJ2017_CONFIG": "bogus"}),  # under --quick too
    ("raj2017", "kernel_approx", {"ORBITKERNELS_RAJ2017_CONFIG": "bogus"}),
    ("raj2017", "qm7", {"ORBITKERNELS_RAJ2017_TIME_BUDGET_S": "abc"}),
    ("raj2017", "qm7", {"ORBITKERNELS_RAJ2017_TIME_BUDGET_S": "-1"}),
    ("raj2017", "rotated_mnist", {"ORBITKERNELS_RAJ2017_TIME_BUDGET_S": "nan"}),
    ("raj2017", "qm7", {"ORBITKERNELS_RAJ2017_CELLS": "nomatch*"}),
    ("raj2017", "rotated_mnist", {"ORBITKERNELS_RAJ2017_CELLS": "nomatch*"}),
    ("raj2017", "qm7", {"ORBITKERNELS_BACKEND": "nope"}),
    # kernel_approx read none of these (its run went on with defaults)
    ("raj2017", "kernel_approx", {"ORBITKERNELS_RAJ2017_TIME_BUDGET_S": "abc"}),
    ("raj2017", "kernel_approx", {"ORBITKERNELS_RAJ2017_CELLS": "nomatch*"}),
    ("raj2017", "kernel_approx", {"ORBITKERNELS_BACKEND": "nope"}),
    ("raj2017", "kernel_approx", {"ORBITKERNELS_DEVICE": "cuda"}),
    ("raj2017", "qm7", {"ORBITKERNELS_DEVICE": "cuda"}),
    ("raj2017", "rotated_mnist", {"ORBITKERNELS_DEVICE": "cuda"}),
    pytest.param("raj2017", "qm7", {"ORBITKERNELS_BACKEND": "torch", "ORBITKERNELS_DEVICE": "cuda"},
                 marks=pytest.mark.skipif(_torch_cuda(), reason="a GPU is here")),
    ("molecules3d", "qm7", {"ORBITKERNELS_MOLECULES3D_CONFIG": "bogus"}),
    ("molecules3d", "qm7", {"ORBITKERNELS_MOLECULES3D_BUDGET_S": "abc"}),
    ("molecules3d", "qm7", {"ORBITKERNELS_MOLECULES3D_BUDGET_S": "-1"}),
    ("molecules3d", "qm7", {"ORBITKERNELS_MOLECULES3D_BUDGET_S": "nan"}),
]


@pytest.mark.parametrize("paper,experiment,env", BAD_ENV)
def test_a_bad_environment_value_is_one_error_line_naming_it(paper, experiment, env, clean_env, tmp_path, capsys):
    for name, value in env.items():
        clean_env.setenv(name, value)
    out = tmp_path / "results"
    rc = main(["--quiet", "reproduce", paper, "-e", experiment, "--quick", "--out", str(out)])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 1 and len(err) == 1 and err[0].startswith("orbitkernels: error: "), err
    name, value = next((n, v) for n, v in env.items() if n in err[0])  # the variable that is wrong, and its value
    assert repr(value) in err[0], err
    assert not (out / paper).exists() or not any((out / paper).iterdir())  # nothing computed, nothing written


def test_the_raj_time_budget_zero_starts_no_new_cell(clean_env, tmp_path):
    data = DATA
    if data is None or not (data / "qm7.npz").exists():
        pytest.skip("qm7.npz not available")
    clean_env.setenv("ORBITKERNELS_DATA", str(data))
    clean_env.setenv("ORBITKERNELS_RAJ2017_TIME_BUDGET_S", "0")  # as ORBITKERNELS_MOLECULES3D_BUDGET_S=0
    res = get_experiments("raj2017")["qm7"](quick=True, out_dir=tmp_path)
    assert res["data"]["rows"] == [] and res["figure"] is None and res["data"]["skipped_cells"]
    assert (tmp_path / "raj2017" / "qm7_quick.partial.json").exists()  # the postponed cells wait for the next run
    # a blank value is unset: the configuration's (quick: no) budget
    clean_env.setenv("ORBITKERNELS_RAJ2017_TIME_BUDGET_S", " ")
    from orbitkernels.experiments.raj2017 import CONFIGS, _time_budget
    assert _time_budget(CONFIGS["qm7"]["reduced"]) == CONFIGS["qm7"]["reduced"]["time_budget_s"]


def test_kernel_approx_follows_the_raj_budget_cells_and_back_end(clean_env, tmp_path):
    # the Figure 1 run ignored ORBITKERNELS_RAJ2017_TIME_BUDGET_S / _CELLS / ORBITKERNELS_BACKEND: it computed every
    # cell, on the numpy back-end, whatever they said
    import json

    data = DATA
    if data is None or not (data / "qm7.npz").exists():
        pytest.skip("qm7.npz not available")
    clean_env.setenv("ORBITKERNELS_DATA", str(data))
    run = get_experiments("raj2017")["kernel_approx"]
    clean_env.setenv("ORBITKERNELS_RAJ2017_TIME_BUDGET_S", "0")
    res = run(quick=True, out_dir=tmp_path)
    assert res["data"]["curves"] == [] and res["figure"] is None and len(res["data"]["skipped_cells"]) == 12
    partial = tmp_path / "raj2017" / "kernel_approx_quick.partial.json"
    assert partial.exists()
    clean_env.delenv("ORBITKERNELS_RAJ2017_TIME_BUDGET_S")
    clean_env.setenv("ORBITKERNELS_RAJ2017_CELLS", "2|*")  # r = 2 only: its curve, not r = 4's
    res = run(quick=True, out_dir=tmp_path)
    assert {c["r"] for c in res["data"]["curves"]} == {2} and len(res["data"]["skipped_cells"]) == 6
    assert {h["name"][:4] for h in res["headline"]} == {"r=2:"} and "postponed" in res["notes"]
    assert set(json.loads(partial.read_text())["cells"]) == {f"2|{s}|{k}" for s in (5, 20, 80) for k in (0, 1)}
    clean_env.delenv("ORBITKERNELS_RAJ2017_CELLS")
    done = run(quick=True, out_dir=tmp_path)  # the rest, resumed: the same numbers as a run in one go
    assert done["resumed_cells"] == 6 and not done["data"]["skipped_cells"] and not partial.exists()
    whole = run(quick=True, out_dir=tmp_path / "whole")
    assert done["data"]["curves"] == whole["data"]["curves"]
    pytest.importorskip("torch")
    clean_env.setenv("ORBITKERNELS_BACKEND", "torch")  # agrees with numpy to rounding
    on_torch = run(quick=True, out_dir=tmp_path / "torch", resume=False)
    for a, b in zip(on_torch["data"]["curves"], whole["data"]["curves"]):
        assert a["spectral_mean"] == pytest.approx(b["spectral_mean"], rel=1e-5)


def test_the_image_rows_with_every_cell_postponed_write_a_file_without_a_figure(clean_env, tmp_path):
    data = DATA
    if data is None or not (data / "mnist.npz").exists():
        pytest.skip("mnist.npz not available")
    clean_env.setenv("ORBITKERNELS_DATA", str(data))
    clean_env.setenv("ORBITKERNELS_RAJ2017_TIME_BUDGET_S", "0")
    res = get_experiments("raj2017")["rotated_mnist"](quick=True, out_dir=tmp_path)
    assert res["data"]["rows"] == [] and res["figure"] is None and res["data"]["selection"]["skipped_cells"]


def test_a_blank_molecules3d_budget_is_the_configurations(clean_env, tmp_path):
    data = DATA
    if data is None or not (data / "qm7.npz").exists():
        pytest.skip("qm7.npz not available")
    clean_env.setenv("ORBITKERNELS_DATA", str(data))
    clean_env.setenv("ORBITKERNELS_MOLECULES3D_BUDGET_S", "")  # was float(''): a traceback after the first cell
    res = get_experiments("molecules3d")["qm7"](quick=True, out_dir=tmp_path)
    assert res["data"]["rows"] and not res["data"]["skipped_cells"]


ALL = [(paper, name) for paper in PAPERS for name in get_experiments(paper)]


@pytest.mark.parametrize("paper,name", ALL)
@pytest.mark.parametrize("kwargs", [{"seed": -1}, {"seed": 1.5}, {"seed": None}, {"seed": "3"}, {"seed": True},
                                    {"seed": 2**32}, {"quick": "no"}, {"resume": "no"}, {"download": 1},
                                    {"out_dir": 5}])
def test_run_refuses_arguments_it_would_misread(paper, name, kwargs, clean_env, tmp_path):
    args = {"quick": True, "out_dir": tmp_path, **kwargs}
    with pytest.raises(ConfigurationError, match=next(iter(kwargs))):
        get_experiments(paper)[name](**args)
    assert not any(tmp_path.iterdir())


def test_report_works_on_a_results_root_without_the_molecules_run(tmp_path, capsys):
    results, docs = tmp_path / "results", tmp_path / "docs"
    (results / "molecules3d").mkdir(parents=True)
    (results / "molecules3d" / "qm7_quick.json").write_text("{}")  # quick files are not rendered
    docs.mkdir()
    (docs / "molecules3d.md").write_text("# 3-D\n\n<!-- table:begin -->\nold\n<!-- table:end -->\n")
    assert main(["report", "--results", str(results), "--docs", str(docs), "--readme", ""]) == 0, capsys.readouterr()
    page = (docs / "molecules3d.md").read_text()
    assert "Not run yet" in page and "qm7.json" in page and "old" not in page


def test_a_cell_filter_aimed_at_one_experiment_skips_the_others_of_a_paper_run(monkeypatch, capsys):
    """ORBITKERNELS_RAJ2017_CELLS applies to every experiment of the paper: a paper-wide run skips those it matches
    no cell of (one line each) and runs the one it aims at; alone, or matching nothing anywhere, it is an error."""
    from orbitkernels import cli
    from orbitkernels.utils.errors import NoMatchingCellsError

    def unmatched(**kwargs):
        raise NoMatchingCellsError("ORBITKERNELS_RAJ2017_CELLS='x' matches none of the 3 cells of raj2017/qm7")

    def ran(**kwargs):
        return {"wall_time_s": 0.0, "headline": []}

    fake = {"qm7": unmatched, "rotated_mnist": ran}
    monkeypatch.setattr("orbitkernels.experiments.get_experiments", lambda paper: fake)
    assert cli.main(["reproduce", "raj2017"]) == 0
    err = capsys.readouterr().err
    assert "skipped: raj2017/qm7 (ORBITKERNELS_RAJ2017_CELLS='x' matches none" in err
    assert cli.main(["reproduce", "raj2017", "-e", "qm7"]) == 1  # alone: the error line itself
    assert "orbitkernels: error: ORBITKERNELS_RAJ2017_CELLS='x' matches none" in capsys.readouterr().err
    fake["rotated_mnist"] = unmatched
    assert cli.main(["reproduce", "raj2017"]) == 1
    assert "matches no cell of any experiment of raj2017" in capsys.readouterr().err
