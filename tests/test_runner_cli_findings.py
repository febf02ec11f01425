"""Edge cases of the experiment runner, the report and the CLI found by an audit of them (stop 63), each a test that
fails on the code before its fix."""
import os
from pathlib import Path

import pytest

from orbitkernels.experiments import get_experiments
from orbitkernels.experiments._common import wrap_seed

TOP_SEED = 2**32 - 1


def _need(name):
    folder = os.environ.get("ORBITKERNELS_DATA")
    if not folder or not (Path(folder) / name).is_file():
        pytest.skip(f"needs {name} in ORBITKERNELS_DATA")


def test_derived_seeds_wrap_into_numpys_range_and_keep_the_ones_that_fit():
    assert [wrap_seed(v) for v in (0, 12345, TOP_SEED)] == [0, 12345, TOP_SEED]
    assert wrap_seed(TOP_SEED + 1) == 0 and wrap_seed(50000 * 100_003 + 7) == (50000 * 100_003 + 7) % 2**32


@pytest.mark.parametrize("paper, experiment, data", [
    ("mroueh2015", "xperm", None), ("raj2017", "kernel_approx", None), ("raj2017", "qm7", "qm7.npz"),
    ("molecules3d", "qm7", "qm7.npz"),
])
def test_every_seed_reproduce_accepts_runs(paper, experiment, data, tmp_path):
    """``--seed`` takes 0 to 2**32 - 1, but seeds derived from it by arithmetic (seed * 100003 + draw, seed + k,
    seed + 12345) overflowed numpy's range: Mroueh's xperm failed for every seed above 42,948 with a traceback."""
    if data:
        _need(data)
    res = get_experiments(paper)[experiment](quick=True, out_dir=tmp_path, resume=True, seed=TOP_SEED)
    assert res["headline"]


# --------------------------------------------------------------------------- resume
def _state(path, config, cells, **extra):
    import json

    from orbitkernels import __version__

    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"config": config, "library_version": __version__, "cells": cells,
                                "wall_time_s": 3.0, **extra}))
    return path


def test_a_partial_file_of_another_configuration_does_not_hide_the_finished_one(tmp_path, capsys):
    """An interrupted run with another seed left its partial file; the finished run of this configuration was
    ignored ("recomputing every cell") and its cells were recomputed, then reported as "another run"'s."""
    from orbitkernels.experiments._runner import ExperimentRun

    _state(tmp_path / "toy" / "exp.partial.json", {"seed": 1}, {"c1": {"acc": 0.1}})
    finished = _state(tmp_path / "toy" / "exp.json", {"seed": 0}, {"c1": {"acc": 0.5}, "c2": {"acc": 0.6}})
    run = ExperimentRun("toy", "exp", {"seed": 0}, out_dir=tmp_path)
    err = capsys.readouterr().err
    assert run.n_resumed == 2 and run.get("c1") == {"acc": 0.5} and run.resumed_from == finished
    assert "was made with another configuration" in err and f"trying the finished results {finished}" in err
    assert "recomputing every cell" not in err


def test_a_resumed_wall_time_that_is_not_a_number_of_seconds_starts_at_zero(tmp_path):
    """"nan" was taken through float() into the finished file and --json as a bare NaN (not JSON)."""
    from orbitkernels.experiments._runner import ExperimentRun

    _state(tmp_path / "toy" / "exp.json", {"a": 1}, {"c1": {"acc": 0.5}}, wall_time_s="nan")
    run = ExperimentRun("toy", "exp", {"a": 1}, out_dir=tmp_path)
    assert run.n_resumed == 1 and 0 <= run.wall_time() < 60


def test_a_blank_out_dir_is_refused_not_the_current_folder(tmp_path, monkeypatch, capsys):
    from orbitkernels.cli import main
    from orbitkernels.utils.errors import ConfigurationError

    monkeypatch.chdir(tmp_path)
    with pytest.raises(ConfigurationError, match="out_dir is blank"):
        get_experiments("mroueh2015")["theorems"](quick=True, out_dir=" ", resume=True, seed=0)
    for argv in (["reproduce", "mroueh2015", "-e", "theorems", "--quick", "--out", ""], ["bench", "--out", ""],
                 ["demo", "--out", " "]):
        with pytest.raises(SystemExit) as stop:
            main(argv)
        assert stop.value.code == 2 and "--out is blank" in capsys.readouterr().err
    assert not list(tmp_path.iterdir())


# --------------------------------------------------------------------------- report
@pytest.mark.parametrize("content", [b"{\"config\": {", b"[]", b"{}", b"\xff\xfe", b"{\"headline\": null, \"data\": 3}"])
def test_report_names_a_damaged_results_file_and_leaves_the_pages_alone(content, tmp_path, capsys):
    """`orbitkernels report` printed a traceback naming no file (JSONDecodeError, KeyError, TypeError,
    UnicodeDecodeError) and had already rewritten the pages rendered before the damaged file's."""
    from orbitkernels.cli import main

    results, docs = tmp_path / "results", tmp_path / "docs"
    (results / "teo2007").mkdir(parents=True)
    (results / "teo2007" / "mnist.json").write_bytes(content)
    (docs / "reproductions").mkdir(parents=True)
    page = docs / "reproductions" / "mroueh2015.md"
    page.write_text("as it was\n")
    assert main(["report", "--results", str(results), "--docs", str(docs), "--readme", ""]) == 1
    err = capsys.readouterr().err
    assert err.startswith("orbitkernels: error: results file ") and str(results / "teo2007" / "mnist.json") in err
    assert len(err.strip().splitlines()) == 1
    assert page.read_text() == "as it was\n" and sorted(p.name for p in docs.rglob("*")) == ["mroueh2015.md",
                                                                                          "reproductions"]


def test_report_refuses_an_explicit_readme_it_cannot_fill(tmp_path, capsys):
    from orbitkernels.cli import main

    results = tmp_path / "results"
    results.mkdir()
    plain = tmp_path / "NOTES.md"
    plain.write_text("no block here\n")
    for readme, why in ((tmp_path / "READ.md", "is not a file"), (plain, "has no <!-- results:begin/end --> block")):
        assert main(["report", "--results", str(results), "--docs", str(tmp_path / "docs"),
                     "--readme", str(readme)]) == 1
        assert why in capsys.readouterr().err
    assert not (tmp_path / "docs").exists()


# --------------------------------------------------------------------------- data folder
def test_a_broken_link_in_the_data_folder_is_named_not_reported_missing(tmp_path):
    """A dangling mnist.npz link was "missing: put mnist.npz in <folder>" (with download=True: a download over
    it), though the folder visibly holds an mnist.npz."""
    from orbitkernels.datasets import dataset_status, load_mnist
    from orbitkernels.datasets._base import DatasetFormatError

    (tmp_path / "mnist.npz").symlink_to(tmp_path / "gone.npz")
    with pytest.raises(DatasetFormatError, match="is a broken link .*gone.npz"):
        load_mnist(data_home=tmp_path, download=True)
    (row,) = [r for r in dataset_status(data_home=tmp_path) if r["name"] == "mnist"]
    assert row["status"] == "not a file" and "broken link" in row["note"]


def test_report_reads_the_results_root_reproduce_writes(tmp_path, monkeypatch, capsys):
    """reproduce writes under $ORBITKERNELS_RESULTS; report read ./results whatever it said, and stopped with
    "results folder 'results' does not exist"."""
    from orbitkernels.cli import main

    (tmp_path / "mine").mkdir()
    monkeypatch.setenv("ORBITKERNELS_RESULTS", str(tmp_path / "mine"))
    monkeypatch.chdir(tmp_path)
    assert main(["report", "--docs", str(tmp_path / "docs"), "--readme", ""]) == 0
    assert "No results yet" in (tmp_path / "docs" / "results.md").read_text()


@pytest.mark.parametrize("seed", [-1, 2**32])
def test_a_seed_out_of_range_is_refused_by_name_before_the_data_are_read(seed, tmp_path):
    """load_qm7 and load_rotated_mnist read and checksummed their files, then failed with numpy's "Seed must be
    between 0 and 2**32 - 1", which names no argument; here the folder is empty and the seed is refused first."""
    from orbitkernels.datasets import load_qm7, load_rotated_mnist

    for load in (load_qm7, load_rotated_mnist):
        with pytest.raises(ValueError, match="random_state must be"):
            load(data_home=tmp_path, download=False, random_state=seed)


@pytest.mark.parametrize("argv, what", [(["reproduce", "nopaper"], "unknown paper 'nopaper'"),
                                        (["reproduce", "teo2007", "-e", "nope"], "unknown experiment 'nope'")])
def test_an_unknown_name_is_an_error_line_like_the_others(argv, what, capsys):
    from orbitkernels.cli import main

    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"orbitkernels: error: {what}") and len(err.strip().splitlines()) == 1


def test_a_quick_run_under_a_full_runs_name_is_not_reported(tmp_path):
    from orbitkernels.experiments.report import collect_headlines

    folder = tmp_path / "toy"
    folder.mkdir()
    (folder / "exp.json").write_text('{"quick": true, "headline": [{"name": "acc", "ours": 0.5, "paper": 0.9}]}')
    assert collect_headlines(tmp_path) == {}
    (folder / "exp.json").write_text('{"quick": false, "headline": [{"name": "acc", "ours": 0.5, "paper": 0.9}]}')
    assert list(collect_headlines(tmp_path)) == ["toy"]


def test_a_kept_cell_of_the_wrong_type_is_named_not_a_traceback(tmp_path, capsys):
    """A cell of the finished file edited to a string where the experiment reads a mapping failed deep in its code
    ("string indices must be integers") with a traceback; a missing key already gave the StoredCellError line."""
    import json

    from orbitkernels.cli import main

    argv = ["--quiet", "reproduce", "mroueh2015", "-e", "xperm", "--quick", "--out", str(tmp_path)]
    assert main(argv) == 0
    path = tmp_path / "mroueh2015" / "xperm_quick.json"
    state = json.loads(path.read_text())
    key = next(iter(state["cells"]))
    state["cells"][key] = {k: "oops" for k in state["cells"][key]}
    path.write_text(json.dumps(state))
    capsys.readouterr()
    assert main(argv) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].startswith("orbitkernels: error: mroueh2015/xperm failed on the cells kept from ")
    assert str(path) in err[-1] and "--no-resume" in err[-1]
    assert main(argv[:-2] + ["--out", str(tmp_path), "--no-resume"]) == 0  # what the message says works
