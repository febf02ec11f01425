"""Every script under benchmarks/ answers --help before it touches data, and keeps the command lines the docs cite.

The docs cite these scripts as probes a reader can run; some run for hours. ``python SCRIPT --help`` (and ``-h``) must
print a usage text that opens with the script's purpose (the first line of its module docstring) and exit 0 without
reading a data file or computing anything, and an unknown option must be refused (exit 2) rather than ignored.

The scripts run in this process (``runpy.run_path`` under ``__main__``, their folder first on ``sys.path`` as when run
as a script): a subprocess each would cost the interpreter's and the library's start every time. The data folder is
an empty one, and the current folder too, so a script that still loads data before parsing its arguments fails here,
and one that writes anything is seen.
"""
import argparse
import ast
import runpy
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.timeout(300)

ROOT = Path(__file__).resolve().parents[1]
BENCHMARKS = ROOT / "benchmarks"
SCRIPTS = sorted(p for p in BENCHMARKS.rglob("*.py") if p.name != "__init__.py")


def _rel(path):
    return str(path.relative_to(ROOT))


def _words(text):
    return " ".join(text.split())


def _purpose(path):
    """The first line of the script's module docstring, read without importing it."""
    doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8")))
    assert doc and doc.strip(), f"{_rel(path)} has no module docstring"
    return doc.strip().splitlines()[0]


@pytest.fixture
def run_script(monkeypatch, tmp_path):
    """Runs a script as ``python SCRIPT ARGS...`` would, in an empty folder with an empty data folder; returns the
    exit code it raised (None if it returned)."""
    data = tmp_path / "data"
    work = tmp_path / "cwd"
    data.mkdir()
    work.mkdir()
    monkeypatch.setenv("ORBITKERNELS_DATA", str(data))
    monkeypatch.chdir(work)

    def run(path, *args):
        monkeypatch.setattr(sys, "argv", [str(path), *args])
        monkeypatch.setattr(sys, "path", [str(path.parent), *sys.path])
        before = set(sys.modules)
        try:
            runpy.run_path(str(path), run_name="__main__")
        except SystemExit as stop:
            return stop.code
        finally:  # sibling probes a script imports from its folder (mnist_fig2, rmnist_lgika_row, ...)
            for name in set(sys.modules) - before:
                if str(getattr(sys.modules[name], "__file__", None) or "").startswith(str(BENCHMARKS)):
                    del sys.modules[name]
            assert not list(data.iterdir()) and not list(work.iterdir()), f"{_rel(path)} wrote files"
        return None

    return run


def test_scripts_are_found():
    names = {_rel(p) for p in SCRIPTS}
    assert {"benchmarks/rotation_default.py", "benchmarks/probes/raj2017/probe_lap.py",
            "benchmarks/probes/molecules3d/probe_fold0.py"} <= names
    assert len(SCRIPTS) >= 70


@pytest.mark.parametrize("flag", ["--help", "-h"])
@pytest.mark.parametrize("path", SCRIPTS, ids=_rel)
def test_help_prints_the_purpose_and_exits(path, flag, run_script, capsys):
    code = run_script(path, flag)
    out = capsys.readouterr().out
    assert code == 0, f"{_rel(path)} {flag} exited with {code!r}"
    assert out.startswith("usage:"), out[:200]
    # the description follows the usage lines: the docstring, whose first line says what the script measures
    description = out.split("\n\n", 1)[1] if "\n\n" in out else ""
    assert _words(description).startswith(_words(_purpose(path))), (_rel(path), out[:400])


@pytest.mark.parametrize("rel, args", [
    # a script of each kind: top level, argparse before, sys.argv before, no arguments, a module the probes import
    ("benchmarks/rotation_default.py", []), ("benchmarks/gpu_check.py", []),
    ("benchmarks/probes/molecules3d/probe_fold0.py", []), ("benchmarks/probes/raj2017/mnist_polar.py", ["28000"]),
    ("benchmarks/probes/raj2017/probe_l2.py", []), ("benchmarks/probes/raj2017/qm7_zero_mean.py", ["1"]),
    ("benchmarks/probes/raj2017/rmnist_lgika_row.py", []), ("benchmarks/probes/perf/rbf_pool_fused.py", []),
])
def test_an_unknown_option_is_refused(rel, args, run_script, capsys):
    assert run_script(ROOT / rel, *args, "--no-such-option") == 2
    assert "unrecognized arguments: --no-such-option" in capsys.readouterr().err


class _Parsed(Exception):
    """Raised in place of running the script once its arguments are parsed."""


@pytest.fixture
def parse_only(monkeypatch, run_script):
    """The namespace a script's command line parses to; the script stops there (nothing computed)."""
    for method in ("parse_args", "parse_intermixed_args"):
        original = getattr(argparse.ArgumentParser, method)

        def stop(self, *a, _original=original, **k):
            raise _Parsed(_original(self, *a, **k))

        monkeypatch.setattr(argparse.ArgumentParser, method, stop)

    def parse(rel, *args):
        with pytest.raises(_Parsed) as parsed:
            run_script(ROOT / rel, *args)
        return vars(parsed.value.args[0])

    return parse


RAJ = "benchmarks/probes/raj2017/"


@pytest.mark.parametrize("rel, args, expected", [
    # the command lines docs/, README.md and the results files cite (and the scripts' own usage lines)
    ("benchmarks/rotation_default.py", [], {"dataset": "digits"}),
    ("benchmarks/rotation_default.py", ["mnist"], {"dataset": "mnist"}),
    ("benchmarks/probes/molecules3d/probe_fold0.py", [], {"n_train": 2000, "configs": [{}]}),
    ("benchmarks/probes/molecules3d/probe_fold0.py", ["500", '[{"sigma": 0.5, "gammas": [0.1]}]'],
     {"n_train": 500, "configs": [{"sigma": 0.5, "gammas": [0.1]}]}),
    ("benchmarks/probes/perf/fft_libraries.py", [], {"output": "results/bench/fft_libraries_probe.json"}),
    ("benchmarks/probes/perf/fft_libraries.py", ["out.json"], {"output": "out.json"}),
    ("benchmarks/probes/perf/rbf_pool_fused.py", [], {"large": False}),
    ("benchmarks/probes/perf/rbf_pool_fused.py", ["--large"], {"large": True}),
    (RAJ + "probe.py", ["70:1000:1/16,1/4,1"], {"specs": [(70, 1000, [1 / 16, 1 / 4, 1.0])]}),
    (RAJ + "probe.py", ["70:1000:1/64", "20:8000:1/16"], {"specs": [(70, 1000, [1 / 64]), (20, 8000, [1 / 16])]}),
    (RAJ + "probe_loo.py", ["70:4000:1/16", "0:8000:1/16"], {"specs": [(70, 4000, 1 / 16), (0, 8000, 1 / 16)]}),
    (RAJ + "probe_rf.py", ["20000", "1/16", "1,0,2,3,4"], {"dim": 20000, "factor": 1 / 16, "folds": [1, 0, 2, 3, 4]}),
    (RAJ + "probe_lap.py", ["sort_krr_lap,orig_krr_lap"], {"methods": ["sort_krr_lap", "orig_krr_lap"]}),
    (RAJ + "probe_laprf.py", ["4000", "1/16,1/4,1"], {"D": 4000, "factors": [1 / 16, 1 / 4, 1.0], "sort": None}),
    (RAJ + "probe_laprf.py", ["4000", "1/16", "sort"], {"D": 4000, "factors": [1 / 16], "sort": "sort"}),
    (RAJ + "probe_nys.py", ["lgika_nys", "5000", "1/4", "0"],
     {"method": "lgika_nys", "dim": 5000, "factor": 0.25, "folds": [0]}),
    (RAJ + "mnist_polar.py", ["28000"], {"D": 28000}),
    (RAJ + "orthogonal_rf_qm7.py", [], {"folds": [0, 1, 2, 3, 4]}),
    (RAJ + "orthogonal_rf_qm7.py", ["1", "3"], {"folds": [1, 3]}),
    (RAJ + "qm7_fold_seeds.py", [], {"seeds": [0, 1, 2, 3, 4]}),
    (RAJ + "qm7_fold_seeds.py", ["2", "3"], {"seeds": [2, 3]}),
    (RAJ + "qm7_sort_krr_grid.py", [], {"folds": [0, 1], "row": None}),
    (RAJ + "qm7_sort_krr_grid.py", ["--rf"], {"folds": [0, 1], "row": "--rf"}),
    (RAJ + "qm7_sort_krr_grid.py", ["2", "--nys", "3"], {"folds": [2, 3], "row": "--nys"}),
    (RAJ + "qm7_worst_molecule.py", [], {"folds": [], "flags": []}),
    (RAJ + "qm7_worst_molecule.py", ["--gicdf"], {"folds": [], "flags": ["--gicdf"]}),
    (RAJ + "qm7_worst_molecule.py", ["--lgika-rf", "1", "--lgika-nys-10k"],
     {"folds": [1], "flags": ["--lgika-rf", "--lgika-nys-10k"]}),
    (RAJ + "qm7_zero_mean.py", [], {"folds": [], "control": False, "reselect": False, "rows": []}),
    (RAJ + "qm7_zero_mean.py", ["--rows", "lgika_rf|20000"],
     {"folds": [], "control": False, "reselect": False, "rows": ["lgika_rf|20000"]}),
    (RAJ + "qm7_zero_mean.py", ["1", "--control", "--reselect", "--rows", "sort_rf|20000", "wide|sort_nys|5700"],
     {"folds": [1], "control": True, "reselect": True, "rows": ["sort_rf|20000", "wide|sort_nys|5700"]}),
    (RAJ + "iid_rotations.py", ["--part", "bias"], {"part": ["bias"]}),
])
def test_cited_command_lines_parse_as_before(rel, args, expected, parse_only):
    got = parse_only(rel, *args)
    assert {k: got[k] for k in expected} == expected


@pytest.mark.parametrize("rel, args", [
    (RAJ + "qm7_sort_krr_grid.py", ["--rf", "--nys"]),  # one row at a time
    (RAJ + "qm7_zero_mean.py", ["--rows"]),  # --rows without a row
    (RAJ + "qm7_zero_mean.py", ["--rows", "no_such_row"]),
    (RAJ + "qm7_zero_mean.py", ["--reselect"]),  # --reselect without --rows
    (RAJ + "probe_rf.py", ["20000", "1/16"]),  # the folds are required
    (RAJ + "probe_laprf.py", ["4000", "1/16", "sorted"]),
])
def test_wrong_command_lines_are_refused(rel, args, run_script, capsys):
    assert run_script(ROOT / rel, *args) == 2
    assert "error:" in capsys.readouterr().err
