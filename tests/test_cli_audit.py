"""Defects found by using the command line and the loaders as a new user would: each test failed before its fix."""
from __future__ import annotations

import hashlib
import json
import subprocess
import sys

import numpy as np
import pooch
import pytest
import scipy.io

pytestmark = pytest.mark.timeout(120)


def _cli(argv, capsys):
    from orbitkernels.cli import main

    rc = main(argv)
    out = capsys.readouterr()
    return rc, out.out, out.err


@pytest.fixture
def offline(monkeypatch, tmp_path):
    """An empty data folder, and every download fails as it does without network."""
    data = tmp_path / "data"
    data.mkdir()
    monkeypatch.setenv("ORBITKERNELS_DATA", str(data))

    def no_network(url, *a, **k):
        raise ConnectionError(f"Failed to resolve host of {url}")

    monkeypatch.setattr(pooch, "retrieve", no_network)
    return data


# ----------------------------------------------------------------------------- report
def test_report_with_a_mistyped_results_folder_keeps_the_pages_and_readme(tmp_path, capsys):
    """`report --results reslts` used to rewrite every page and the README table as "no results yet"."""
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "results.md").write_text("real tables\n")
    readme = tmp_path / "README.md"
    text = "intro\n<!-- results:begin -->\nreal table\n<!-- results:end -->\n"
    readme.write_text(text)
    missing = tmp_path / "reslts"
    rc, out, err = _cli(["report", "--results", str(missing), "--docs", str(docs), "--readme", str(readme)], capsys)
    assert rc == 1 and err.startswith("orbitkernels: error: ") and str(missing) in err and "does not exist" in err
    assert readme.read_text() == text and (docs / "results.md").read_text() == "real tables\n"
    assert sorted(p.name for p in docs.iterdir()) == ["results.md"] and out == ""
    afile = tmp_path / "afile"
    afile.write_text("x")
    rc, _, err = _cli(["report", "--results", str(afile), "--docs", str(docs), "--readme", ""], capsys)
    assert rc == 1 and "is not a folder" in err


# ----------------------------------------------------------------------------- reproduce
def test_failed_download_says_why_instead_of_asking_for_download_again(tmp_path, capsys, offline):
    rc, _, err = _cli(["reproduce", "raj2017", "-e", "cifar10", "--quick", "--download", "--out", str(tmp_path / "r")],
                      capsys)
    assert rc == 1 and "skipped: raj2017/cifar10" in err
    assert "downloading failed" in err and "ConnectionError" in err and "Failed to resolve" in err
    assert "rerun with --download to fetch it" not in err  # it was given
    rc, _, err = _cli(["reproduce", "raj2017", "-e", "cifar10", "--quick", "--out", str(tmp_path / "r")], capsys)
    assert rc == 1 and "rerun with --download to fetch it" in err and "downloading failed" not in err


def test_failed_download_is_kept_on_the_error(offline):
    from orbitkernels.datasets import DatasetNotFoundError, load_cifar10

    with pytest.raises(DatasetNotFoundError) as info:
        load_cifar10(download=True)
    assert "ConnectionError" in info.value.failure and "cifar-10-python.tar.gz" in info.value.failure
    with pytest.raises(DatasetNotFoundError) as info:
        load_cifar10(download=False)
    assert info.value.failure is None


@pytest.mark.parametrize("argv", [["reproduce", "teo2007", "--list", "--json"], ["--json", "reproduce", "teo2007",
                                                                                  "--list"]])
def test_list_with_json_prints_json(argv, capsys):
    rc, out, _ = _cli(argv, capsys)
    assert rc == 0 and json.loads(out) == ["mnist", "spam"]
    rc, out, _ = _cli(["reproduce", "teo2007", "--list"], capsys)
    assert rc == 0 and out == "mnist\nspam\n"


def test_reproduce_help_names_every_paper():
    from orbitkernels.experiments import PAPERS

    out = subprocess.run([sys.executable, "-m", "orbitkernels", "reproduce", "--help"], capture_output=True,
                         text=True, check=True).stdout
    for paper in PAPERS:
        assert paper in out, paper


@pytest.mark.parametrize("command", [["demo", "--quick"], ["datasets"]])
def test_interrupting_a_command_that_does_not_resume_does_not_promise_it(command, capsys, monkeypatch, tmp_path):
    import orbitkernels.demo as demo
    import orbitkernels.datasets as D

    def interrupted(*a, **k):
        raise KeyboardInterrupt

    monkeypatch.setattr(demo, "run_demo", interrupted)
    monkeypatch.setattr(D, "dataset_status", interrupted)
    rc, _, err = _cli(command + (["--out", str(tmp_path)] if command[0] == "demo" else []), capsys)
    assert rc == 130 and "interrupted" in err and "resume" not in err


def test_interrupting_reproduce_still_says_it_resumes(capsys, monkeypatch, tmp_path):
    from orbitkernels.experiments import mroueh2015

    def interrupted(**k):
        raise KeyboardInterrupt

    monkeypatch.setitem(mroueh2015.EXPERIMENTS, "theorems", interrupted)
    rc, _, err = _cli(["reproduce", "mroueh2015", "-e", "theorems", "--out", str(tmp_path)], capsys)
    assert rc == 130 and "run the same command again to resume" in err


@pytest.mark.parametrize("value", ["", "   "])
def test_blank_results_variable_is_the_default_not_the_current_folder(value, monkeypatch):
    from pathlib import Path

    from orbitkernels.experiments._runner import default_results_dir

    monkeypatch.setenv("ORBITKERNELS_RESULTS", value)
    assert default_results_dir() == Path("results")


def test_results_variable_expands_the_home_folder(monkeypatch, tmp_path):
    from orbitkernels.experiments._runner import ExperimentRun

    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("ORBITKERNELS_RESULTS", "~/res")
    monkeypatch.chdir(tmp_path)
    run = ExperimentRun("paper", "exp", {"a": 1})
    assert run.path == tmp_path / "res" / "paper" / "exp.json" and not (tmp_path / "~").exists()


# ----------------------------------------------------------------------------- loaders
def test_qm7_mat_with_two_atoms_at_one_place_is_a_format_error(tmp_path, monkeypatch):
    """qm7.mat has no published checksum: damaged positions must be a DatasetFormatError naming file and field."""
    import orbitkernels.datasets as D
    from orbitkernels.datasets import _registry

    monkeypatch.setattr(_registry, "EXPECTED_RECORDS", {})
    rng = np.random.default_rng(0)
    methane = np.array([[0, 0, 0], [0.629, 0.629, 0.629], [-0.629, -0.629, 0.629], [-0.629, 0.629, -0.629],
                        [0.629, -0.629, -0.629]])  # C-H 1.09 angstrom
    n = 6
    Z = np.tile(np.array([6, 1, 1, 1, 1], np.float32), (n, 1))
    R = np.stack([methane + rng.normal(size=3) for _ in range(n)]) / D.BOHR_IN_ANGSTROM
    X = D.coulomb_matrices(Z, R, unit="bohr")
    R[3, 2] = R[3, 1]  # two hydrogens of molecule 3 at one place
    P = np.arange(n).reshape(2, 3)
    scipy.io.savemat(tmp_path / "qm7.mat", dict(X=X, T=-rng.uniform(400, 2200, (1, n)), P=P, Z=Z, R=R))
    with pytest.raises(D.DatasetFormatError, match=r"R in .*qm7\.mat.*molecule 3: atoms 1 and 2"):
        D.load_qm7(tmp_path, download=False, n_folds=2)


def test_demo_figure_leaves_the_callers_matplotlib_backend_and_figures_alone(tmp_path):
    code = (
        "import matplotlib; matplotlib.use('svg'); import matplotlib.pyplot as plt\n"
        "fig = plt.figure()\n"
        "from orbitkernels.demo import _plot\n"
        f"_plot({{'a': {{'s': {{'accuracy': 0.5}}}}}}, {str(tmp_path / 'x.png')!r})\n"
        "print(matplotlib.get_backend(), plt.get_fignums())\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["svg", "[1]"]
    assert (tmp_path / "x.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_datasets_verify_fails_on_a_checksum_mismatch(tmp_path, monkeypatch, capsys):
    """`datasets --verify` is a check: a corrupt file makes it exit 1 (text and JSON), a good folder 0."""
    from orbitkernels import cli
    from orbitkernels.datasets import _registry
    from orbitkernels.datasets._base import DataFile, DatasetInfo

    good = b"the right bytes"
    info = DatasetInfo(name="mnist", title="stand-in", reference="", homepage="",
                       converted=(DataFile("mnist.npz", ("sha256:" + hashlib.sha256(good).hexdigest(),)),))
    monkeypatch.setitem(_registry.REGISTRY, "mnist", info)
    (tmp_path / "mnist.npz").write_bytes(good)
    assert cli.main(["datasets", "--verify", "--data-home", str(tmp_path)]) == 0
    (tmp_path / "mnist.npz").write_bytes(b"other bytes")
    assert cli.main(["datasets", "--verify", "--data-home", str(tmp_path)]) == 1
    assert "checksum mismatch" in capsys.readouterr().out
    assert cli.main(["--json", "datasets", "--verify", "--data-home", str(tmp_path)]) == 1
