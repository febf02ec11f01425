"""Regressions found by running the library: each test failed before its fix."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from sklearn.linear_model import Ridge
from sklearn.utils._param_validation import InvalidParameterError

from orbitkernels.distributed import DistributedRidge, DistributedRidgeClassifier

pytestmark = pytest.mark.timeout(120)


# ----------------------------------------------------------------------------- 1. DistributedRidge parameters
@pytest.mark.parametrize("alphas", [[np.nan], [1.0, np.nan], [np.inf], [-1.0], [], "abc", [[1.0, 2.0]]])
@pytest.mark.parametrize("cls", [DistributedRidge, DistributedRidgeClassifier])
def test_non_finite_or_negative_alphas_are_refused(cls, alphas, rng):
    X, y = rng.normal(size=(40, 3)), np.repeat([0, 1], 20)
    with pytest.raises(ValueError, match="alphas"):
        cls(alphas=alphas).fit(X, y)


@pytest.mark.parametrize("params", [{"fit_intercept": "no"}, {"validation_fraction": "0.5"},
                                    {"validation_fraction": 1.0}, {"validation_fraction": np.nan},
                                    {"refit": "yes"}, {"split_every": 1}, {"split_every": 2.5},
                                    {"random_state": "seed"}])
@pytest.mark.parametrize("cls", [DistributedRidge, DistributedRidgeClassifier])
def test_parameters_are_validated_at_fit_like_scikit_learn(cls, params, rng):
    X, y = rng.normal(size=(40, 3)), np.repeat([0, 1], 20)
    name = next(iter(params))
    with pytest.raises(InvalidParameterError, match=f"'{name}' parameter of {cls.__name__}"):
        cls(alphas=[0.1, 1.0], **params).fit(X, y)


@pytest.mark.parametrize("random_state", [np.random.RandomState(3), np.random.default_rng(3), None, 7])
def test_random_state_may_be_a_random_source(random_state, rng):
    X = rng.normal(size=(60, 4))
    y = X @ np.arange(1.0, 5.0) + 0.1 * rng.normal(size=60)
    model = DistributedRidge(alphas=[0.01, 1.0, 100.0], random_state=random_state).fit(X, y)
    assert np.isfinite(model.coef_).all() and model.alpha_ in (0.01, 1.0, 100.0)


def test_alpha_zero_on_collinear_columns_is_the_minimum_norm_solution(rng):
    X = rng.normal(size=(50, 4))
    y = X @ np.array([1.0, -2.0, 0.5, 3.0]) + 1.5
    Xc = np.hstack([X, X])  # rank 4 of 8 columns: the Gram matrix is singular
    ours = DistributedRidge(alphas=[0.0]).fit(Xc, y)
    sk = Ridge(alpha=0.0).fit(Xc, y)
    assert np.isfinite(ours.coef_).all() and ours.alpha_ == 0.0
    np.testing.assert_allclose(ours.predict(Xc), y, atol=1e-8)
    np.testing.assert_allclose(ours.predict(Xc), sk.predict(Xc), atol=1e-8)
    # the minimum-norm solution splits each weight equally between the two copies of a column
    coef = ours.coef_.ravel()
    np.testing.assert_allclose(coef[:4], coef[4:], atol=1e-8)
    clf = DistributedRidgeClassifier(alphas=[0.0, 1.0]).fit(Xc, (y > np.median(y)).astype(int))
    assert np.isfinite(clf.decision_function(Xc)).all()


# ----------------------------------------------------------------------------- 2. invariance_error on labels
def test_invariance_error_of_predict_with_string_labels(rng):
    from sklearn.linear_model import LogisticRegression

    from orbitkernels.diagnostics import invariance_error
    from orbitkernels.groups import ImageRotation

    X = rng.random((40, 36))
    y = np.where(X[:, 0] > 0.5, "cat", "dog")
    model = LogisticRegression().fit(X, y)
    group = ImageRotation((6, 6), n_angles=4)
    out = invariance_error(model, X, group, n_elements=None, method="predict")
    assert out["method"] == "predict" and 0.0 <= out["mean"] <= out["max"] <= 1.0
    # for labels the relative change is the share of changed predictions: 1 - agreement
    assert out["mean"] == pytest.approx(1.0 - out["agreement"])
    numeric = LogisticRegression().fit(X, (y == "cat").astype(int))
    num = invariance_error(numeric, X, group, n_elements=None, method="predict")
    assert np.isfinite(num["mean"])


# ----------------------------------------------------------------------------- 3. resume keeps only matching cells
def _finished(tmp_path, version="0.1.0", config=None, cells=None, partial=False):
    import json

    folder = tmp_path / "toy"
    folder.mkdir(parents=True, exist_ok=True)
    state = {"config": config or {"a": 1}, "library_version": version, "cells": cells or {"c1": {"acc": 0.5}},
             "wall_time_s": 3.0}
    path = folder / ("exp.partial.json" if partial else "exp.json")
    path.write_text(json.dumps(state))
    return path


@pytest.mark.parametrize("partial", [False, True])
def test_cells_of_another_library_version_are_recomputed_not_restamped(tmp_path, capsys, monkeypatch, partial):
    import json

    from orbitkernels.experiments import _runner

    monkeypatch.setattr(_runner, "__version__", "0.2.0")
    path = _finished(tmp_path, version="0.1.0", partial=partial)
    run = _runner.ExperimentRun("toy", "exp", {"a": 1}, out_dir=tmp_path)
    assert run.n_resumed == 0 and not run.has("c1")
    err = capsys.readouterr().err
    assert "orbitkernels 0.1.0 (this is 0.2.0)" in err and "recomputing every cell" in err and str(path) in err
    value = run.cell("c1", lambda: {"acc": 0.75})
    res = run.finish({"x": 1})
    assert value == {"acc": 0.75} and res["resumed_cells"] == 0 and res["library_version"] == "0.2.0"
    assert json.loads(run.path.read_text())["cells"]["c1"] == {"acc": 0.75}


def test_partial_file_without_a_version_is_not_resumed(tmp_path, capsys):
    import json

    from orbitkernels.experiments._runner import ExperimentRun

    folder = tmp_path / "toy"
    folder.mkdir()
    (folder / "exp.partial.json").write_text(json.dumps({"config": {"a": 1}, "cells": {"c1": 1}}))
    run = ExperimentRun("toy", "exp", {"a": 1}, out_dir=tmp_path)
    assert run.n_resumed == 0
    assert "unknown orbitkernels version" in capsys.readouterr().err


def test_same_version_and_configuration_are_kept_and_said(tmp_path, capsys):
    from orbitkernels._version import __version__
    from orbitkernels.experiments._runner import ExperimentRun

    path = _finished(tmp_path, version=__version__)
    run = ExperimentRun("toy", "exp", {"a": 1}, out_dir=tmp_path)
    assert run.n_resumed == 1 and run.get("c1") == {"acc": 0.5}
    err = capsys.readouterr().err
    assert f"kept 1 finished cells from {path}" in err
    run.cell("c2", lambda: {"acc": 0.25})
    run.finish({"x": 1})
    assert f"1 cells kept from {path}, 1 computed now" in capsys.readouterr().err
    other = ExperimentRun("toy", "exp", {"a": 2}, out_dir=tmp_path)
    assert other.n_resumed == 0 and "another configuration" in capsys.readouterr().err


def test_cell_scope_keeps_the_cells_whose_part_of_the_configuration_is_unchanged(tmp_path, capsys):
    from orbitkernels.experiments._runner import ExperimentRun

    def scope(config, key):
        return {"shared": config["shared"], "grid": config["grid"][key.split("|")[0]]}

    old = {"shared": 1, "grid": {"a": 1, "b": 2}}
    run = ExperimentRun("toy", "exp", old, out_dir=tmp_path, cell_scope=scope)
    for key in ("a|0", "b|0"):
        run.cell(key, lambda key=key: {"v": key})
    run.finish({})
    # a configuration added to the grid and another changed: only the untouched one's cells are kept
    grown = ExperimentRun("toy", "exp", {"shared": 1, "grid": {"a": 1, "b": 3, "c": 4}}, out_dir=tmp_path,
                          cell_scope=scope)
    assert grown.has("a|0") and not grown.has("b|0") and grown.n_resumed == 1
    assert "1 of its 2 cells depend only on unchanged parts" in capsys.readouterr().err
    # a change of what every cell depends on: nothing is kept; an unreadable scope keeps nothing either
    assert ExperimentRun("toy", "exp", {"shared": 2, "grid": {"a": 1}}, out_dir=tmp_path,
                         cell_scope=scope).n_resumed == 0
    assert ExperimentRun("toy", "exp", {"shared": 1}, out_dir=tmp_path, cell_scope=scope).n_resumed == 0
    # without a scope any change of the configuration recomputes every cell, as before
    assert ExperimentRun("toy", "exp", {"shared": 1, "grid": {"a": 1, "b": 2, "c": 4}},
                         out_dir=tmp_path).n_resumed == 0


def test_molecules3d_cell_scope_follows_each_configuration():
    from orbitkernels.experiments.molecules3d import CONFIGS, _cell_scope

    cfg = {"name": "full", **CONFIGS["qm7"]["full"], "seed": 0}
    grown = {**cfg, "configurations": {**cfg["configurations"], "new": {"gammas": [1.0], "blocks": []}},
             "time_budget_s": 1}
    name = next(iter(cfg["configurations"]))
    for key in (f"{name}|0", f"{name}+layer2|3", "cost"):
        assert _cell_scope(cfg, key) == _cell_scope(grown, key)
    changed = {**cfg, "layer2": {**cfg["layer2"], "n_components": 1}}
    assert _cell_scope(cfg, f"{name}|0") == _cell_scope(changed, f"{name}|0")
    assert _cell_scope(cfg, f"{name}+layer2|0") != _cell_scope(changed, f"{name}+layer2|0")
    assert _cell_scope({**cfg, "alphas": [1.0]}, "cost") != _cell_scope(cfg, "cost")


def test_malformed_stored_cell_names_the_file_and_the_cell(tmp_path):
    from orbitkernels._version import __version__
    from orbitkernels.experiments._runner import ExperimentRun, StoredCellError
    from orbitkernels.utils.errors import UserError

    path = _finished(tmp_path, version=__version__, cells={"draw0|n10": {"wrong": 1}, "ok": {"acc": {"mean": 1}}})
    run = ExperimentRun("toy", "exp", {"a": 1}, out_dir=tmp_path)
    with pytest.raises(StoredCellError, match=r"cell 'draw0\|n10' of .*exp\.json has no 'acc'") as info:
        run.cell("draw0|n10", lambda: {"acc": 1.0})["acc"]
    assert str(path) in str(info.value) and isinstance(info.value, UserError)
    with pytest.raises(StoredCellError, match=r"cell 'ok' of .*\['acc'\] has no 'std'"):
        run.get("ok")["acc"]["std"]
    assert run.get("ok").get("missing") is None  # .get and `in` keep their meaning


def test_committed_results_are_kept_on_rerender(tmp_path, capsys):
    """The committed results were made by 0.1.0, the current version: re-rendering keeps every cell."""
    import json
    import shutil
    from pathlib import Path

    from orbitkernels.experiments._runner import ExperimentRun

    src = Path(__file__).resolve().parents[1] / "results" / "raj2017" / "kernel_approx.json"
    if not src.exists():
        pytest.skip("no committed results in this checkout")
    (tmp_path / "raj2017").mkdir()
    shutil.copy(src, tmp_path / "raj2017" / "kernel_approx.json")
    state = json.loads(src.read_text())
    run = ExperimentRun("raj2017", "kernel_approx", state["config"], out_dir=tmp_path)
    assert run.n_resumed == len(state["cells"]) > 0


# ----------------------------------------------------------------------------- 4. finishing is idempotent
def test_two_runs_finishing_the_same_experiment_concurrently(tmp_path):
    import sys
    import threading

    from orbitkernels.experiments._runner import ExperimentRun

    def png(path):
        path.write_bytes(b"\x89PNG" + b"x" * 20000)

    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads as often as possible: the race needs a switch at the wrong time
    try:
        for i in range(60):
            runs = [ExperimentRun("toy", f"exp{i}", {"a": 1}, out_dir=tmp_path, resume=False) for _ in range(2)]
            for r in runs:
                r.cell("c", lambda: 1)
            barrier, errors = threading.Barrier(2), []

            def finish(r):
                barrier.wait()
                try:
                    r.finish({"x": 1}, figure=png)
                except Exception as exc:  # noqa: BLE001 - collected and reported below
                    errors.append(exc)

            threads = [threading.Thread(target=finish, args=(r,)) for r in runs]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            assert not errors, errors
            assert not runs[0].partial_path.exists() and runs[0].path.exists()
            assert runs[0].figure_path.read_bytes() == b"\x89PNG" + b"x" * 20000
    finally:
        sys.setswitchinterval(old)
    assert not list(tmp_path.rglob(".*.tmp")) and not list(tmp_path.rglob(".*.png"))


def test_finish_when_the_partial_file_vanished_after_it_was_seen(tmp_path, monkeypatch):
    """Deterministic form of the race: the other process removes the partial file between our check and unlink."""
    from pathlib import Path

    from orbitkernels.experiments._runner import ExperimentRun

    run = ExperimentRun("toy", "exp", {"a": 1}, out_dir=tmp_path, resume=False)
    run.cell("c", lambda: 1)
    real_exists = Path.exists

    def exists(self, *a, **k):
        seen = real_exists(self, *a, **k)
        if self == run.partial_path and seen:
            self.unlink()  # the other finisher wins the race here
        return seen

    monkeypatch.setattr(Path, "exists", exists)
    run.finish({"x": 1})
    monkeypatch.setattr(Path, "exists", real_exists)
    assert run.path.exists() and not run.partial_path.exists()


# ----------------------------------------------------------------------------- 5. CLI errors are one line
def _cli(argv, capsys):
    from orbitkernels.cli import main

    rc = main(argv)
    out = capsys.readouterr()
    return rc, out.out, out.err


def test_output_path_under_a_file_is_one_error_line(tmp_path, capsys):
    blocker = tmp_path / "afile"
    blocker.write_text("x")
    rc, _, err = _cli(["reproduce", "mroueh2015", "-e", "theorems", "--quick", "--out", str(blocker / "res")], capsys)
    assert rc == 1 and err.startswith("orbitkernels: error: ") and str(blocker) in err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_demo_out_existing_file_fails_before_any_work(tmp_path, capsys, monkeypatch):
    import orbitkernels.demo as demo

    monkeypatch.setattr(demo, "rotated_digits", lambda *a, **k: pytest.fail("the demo ran before checking --out"))
    target = tmp_path / "demo_output"
    target.write_text("not a folder")
    rc, _, err = _cli(["demo", "--quick", "--out", str(target)], capsys)
    assert rc == 1 and err.startswith("orbitkernels: error: ") and str(target) in err
    assert target.read_text() == "not a folder"


def test_unwritable_folders_are_one_error_line(tmp_path, capsys, monkeypatch):
    """Root ignores permission bits, so the refusal of the file system is simulated at the write."""
    import orbitkernels.utils.io as io_mod

    def refuse(dir=None, prefix="", suffix="", **kw):  # what mkstemp does in a folder without write permission
        raise PermissionError(13, "Permission denied", f"{dir}/{prefix}xyz{suffix}")

    monkeypatch.setattr(io_mod.tempfile, "mkstemp", refuse)
    docs = tmp_path / "docs"
    (tmp_path / "results").mkdir()  # report refuses a results folder that does not exist
    rc, _, err = _cli(["report", "--results", str(tmp_path / "results"), "--docs", str(docs), "--readme", ""], capsys)
    assert rc == 1 and err.startswith("orbitkernels: error: ") and "Permission denied" in err
    assert str(docs) in err and "Traceback" not in err


def test_real_bugs_still_raise(monkeypatch):
    import orbitkernels.cli as cli

    monkeypatch.setattr(cli, "_cmd_datasets", lambda args: 1 / 0)
    with pytest.raises(ZeroDivisionError):
        cli.main(["datasets"])


# ----------------------------------------------------------------------------- 7. reproduce: skip, download, rounding
@pytest.fixture
def offline(monkeypatch, tmp_path):
    """An empty data folder, and any download attempt fails the test."""
    import pooch

    data = tmp_path / "data"
    data.mkdir()
    monkeypatch.setenv("ORBITKERNELS_DATA", str(data))
    monkeypatch.setattr(pooch, "retrieve", lambda url, *a, **k: pytest.fail(f"network access to {url}"))
    return data


def test_reproduce_skips_an_experiment_without_data_and_runs_the_others(tmp_path, capsys, monkeypatch, offline):
    from orbitkernels.experiments import raj2017

    def fake(quick=False, out_dir=None, resume=True, seed=0, download=False):
        assert download is False
        return {"wall_time_s": 1.23456789, "headline": [
            {"name": "accuracy", "ours": 0.9823000000000001, "paper": 0.9683, "better": "higher"}]}

    fakes = {name: fake for name in raj2017.EXPERIMENTS if name != "cifar10"}
    monkeypatch.setattr(raj2017, "EXPERIMENTS", {**fakes, "cifar10": raj2017.run_cifar10})
    rc, out, err = _cli(["reproduce", "raj2017", "--quick", "--out", str(tmp_path / "res"), "--quiet"], capsys)
    assert rc == 0
    assert f"skipped: raj2017/cifar10 (data not found in {offline}" in err and "--download" in err
    assert "cifar-10-python.tar.gz" in err
    assert "ours 0.9823 " in out and "0.9823000000000001" not in out and "1.23 s" in out
    rc, out, err = _cli(["reproduce", "raj2017", "--quick", "--out", str(tmp_path / "res"), "--json"], capsys)
    import json

    doc = json.loads(out)
    assert rc == 0 and "cifar10" in doc["skipped"] and set(doc["results"]) == set(fakes)
    assert doc["results"]["qm7"]["headline"][0]["ours"] == 0.9823000000000001  # --json keeps stored numbers


def test_reproduce_never_downloads_without_the_flag(tmp_path, capsys, offline):
    """Every real raj2017 experiment with an empty data folder: all skipped (exit 1), no network, no work."""
    rc, out, err = _cli(["reproduce", "raj2017", "--quick", "--out", str(tmp_path / "res")], capsys)
    assert rc == 1
    for name in ("qm7", "kernel_approx", "rotated_mnist", "cifar10"):
        assert f"skipped: raj2017/{name} (data not found in {offline}" in err
    assert "no experiment of raj2017 could run" in err and "Traceback" not in err
    rc, _, err = _cli(["reproduce", "mroueh2015", "-e", "mnist", "--quick", "--out", str(tmp_path / "res")], capsys)
    assert rc == 1 and "skipped: mroueh2015/mnist" in err


def test_download_flag_reaches_the_loaders(tmp_path, capsys, monkeypatch, offline):
    seen = {}

    def fake_loader(*a, download=True, **k):
        seen["download"] = download
        from orbitkernels.datasets import DatasetNotFoundError

        raise DatasetNotFoundError("none", dataset="cifar10", data_home=offline, missing=["x"], urls=["u"])

    import orbitkernels.datasets as D

    monkeypatch.setattr(D, "load_cifar10", fake_loader)
    _cli(["reproduce", "raj2017", "-e", "cifar10", "--quick", "--download", "--out", str(tmp_path)], capsys)
    assert seen == {"download": True}
    _cli(["reproduce", "raj2017", "-e", "cifar10", "--quick", "--out", str(tmp_path)], capsys)
    assert seen == {"download": False}


@pytest.mark.parametrize("argv", [["reproduce", "teo2007", "--list", "--quiet"], ["reproduce", "teo2007", "--list",
                                  "--json"], ["--quiet", "reproduce", "teo2007", "--list"]])
def test_global_options_after_the_subcommand(argv, capsys, monkeypatch):
    import orbitkernels.cli as cli

    seen = {}
    monkeypatch.setattr(cli, "set_quiet", lambda q: seen.setdefault("quiet", q))
    rc, out, _ = _cli(argv, capsys)
    assert rc == 0 and "mnist" in out and seen["quiet"] is True


# ----------------------------------------------------------------------------- 6. loaders validate what they read
@pytest.fixture
def data_home(tmp_path, monkeypatch):
    import pooch

    monkeypatch.setattr(pooch, "retrieve", lambda url, *a, **k: pytest.fail(f"network access to {url}"))
    monkeypatch.delenv("ORBITKERNELS_DATA", raising=False)
    d = tmp_path / "data"
    d.mkdir()
    return d


def _register(monkeypatch, name, form, home, counts=None):
    import hashlib

    from orbitkernels.datasets import _registry
    from orbitkernels.datasets._base import replace_hashes

    info = _registry.REGISTRY[name]
    hashes = {f.name: ("sha256:" + hashlib.sha256((home / f.name).read_bytes()).hexdigest(),)
              for f in info.files(form) if (home / f.name).exists()}
    monkeypatch.setitem(_registry.REGISTRY, name, replace_hashes(info, form, hashes))
    if counts is not None:  # the stand-in's own record counts
        monkeypatch.setitem(_registry.EXPECTED_RECORDS, name, counts)


def _qm7_mat(home, **override):
    import scipy.io
    from test_datasets import tiny_qm7

    from orbitkernels.datasets import coulomb_matrices

    Z, R, T = tiny_qm7()
    R_bohr = R / 0.529177
    fields = dict(X=coulomb_matrices(Z, R_bohr, unit="bohr"), T=T[None], P=np.arange(10).reshape(5, 2),
                  Z=Z.astype(np.float32), R=R_bohr)
    fields.update(override)
    scipy.io.savemat(home / "qm7.mat", fields)


@pytest.mark.parametrize("field, make", [
    ("T", lambda T, R: dict(T=np.where(np.arange(10) == 3, np.nan, T)[None])),
    ("T", lambda T, R: dict(T=np.array(["-417.9"] * 10))),
    ("R", lambda T, R: dict(R=np.where(np.arange(10)[:, None, None] == 2, np.nan, R))),
    ("P", lambda T, R: dict(P=np.array(["a", "b"]))),
])
def test_qm7_mat_bad_values_are_format_errors_naming_file_and_field(data_home, monkeypatch, field, make):
    from test_datasets import tiny_qm7

    import orbitkernels.datasets as D

    _, R, T = tiny_qm7()
    _qm7_mat(data_home, **make(T, R / 0.529177))
    _register(monkeypatch, "qm7", "canonical", data_home, counts={"molecules": 10})
    with pytest.raises(D.DatasetFormatError, match=rf"\b{field} in .*qm7\.mat"):
        D.load_qm7(data_home, download=False)


def test_qm7_npz_nan_positions_refused(data_home, monkeypatch):
    from test_datasets import tiny_qm7

    import orbitkernels.datasets as D

    Z, R, T = tiny_qm7()
    R[4, 0, 1] = np.nan
    np.savez(data_home / "qm7.npz", Z=Z, R=R, T=T)
    _register(monkeypatch, "qm7", "converted", data_home, counts={"molecules": 10})
    with pytest.raises(D.DatasetFormatError, match=r"R in .*qm7\.npz holds 1 NaN"):
        D.load_qm7(data_home, download=False)


def test_qm7_record_count_is_checked(data_home, monkeypatch):
    import orbitkernels.datasets as D

    _qm7_mat(data_home)
    _register(monkeypatch, "qm7", "canonical", data_home)  # the published count (7165) stays
    with pytest.raises(D.DatasetFormatError, match=r"qm7\.mat: molecules holds 10 records but the published "
                                                   r"dataset has 7165"):
        D.load_qm7(data_home, download=False)


def test_truncated_fsdd_archive_is_refused(data_home, monkeypatch):
    import io
    import tarfile

    from test_datasets import write_fsdd_archive

    import orbitkernels.datasets as D

    full = data_home / "full.tar.gz"
    write_fsdd_archive(full)  # 8 recordings
    # cut the archive after its first half of members, at a member boundary: tarfile reads it without error
    name = "free-spoken-digit-dataset-1.0.10.tar.gz"
    with tarfile.open(full) as src, tarfile.open(data_home / name, "w:gz") as dst:
        for member in src.getmembers()[:4]:
            dst.addfile(member, io.BytesIO(src.extractfile(member).read()))
    _register(monkeypatch, "fsdd", "canonical", data_home, counts={"recordings": 8})
    with pytest.raises(D.DatasetFormatError, match=r"recordings holds 4 records but the published dataset has 8"):
        D.load_fsdd(data_home, download=False)


def test_rotated_mnist_zip_with_wrong_row_counts_is_refused(data_home):
    from test_datasets import write_rotation_zip

    import orbitkernels.datasets as D

    write_rotation_zip(data_home / "mnist_rotation_new.zip", n_tv=2010, n_test=5)
    with pytest.raises(D.DatasetFormatError, match=r"train_valid holds 2010 records but the published dataset "
                                                   r"has 12000"):
        D.load_rotated_mnist(data_home, source="official", download=False)


def test_folder_named_like_a_data_file_is_reported_and_never_downloaded_over(data_home):
    import orbitkernels.datasets as D

    (data_home / "qm7.npz").mkdir()
    with pytest.raises(D.DatasetFormatError, match=r"qm7\.npz' is a folder, not the .* file qm7\.npz"):
        D.load_qm7(data_home, download=True)
    rows = {r["name"]: r for r in D.dataset_status(data_home)}
    assert rows["qm7"]["status"] == "not a file" and "qm7.npz" in rows["qm7"]["note"]


def test_user_settings_are_error_lines_not_tracebacks(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("ORBITKERNELS_RAJ2017_CONFIG", "huge")
    rc, _, err = _cli(["reproduce", "raj2017", "-e", "qm7", "--out", str(tmp_path)], capsys)
    assert rc == 1 and err.startswith("orbitkernels: error: ORBITKERNELS_RAJ2017_CONFIG='huge' is not a configuration")
    rc, _, err = _cli(["bench", "--name", "nope", "--out", str(tmp_path)], capsys)
    assert rc == 2 and "unknown benchmark(s) nope" in err


def test_configurations_differing_in_the_last_bits_of_derived_floats_are_the_same():
    """A λ grid of 10 ** arange(...) differs in its last bit between NumPy releases (1e-05 vs
    9.999999999999999e-06): a stored cell is not recomputed for that, but a real change still counts."""
    from orbitkernels.experiments._runner import _canonical

    assert _canonical({"lambdas": [1e-05, 0.1]}) == _canonical({"lambdas": [9.999999999999999e-06, 0.1]})
    assert _canonical({"g": np.float32(0.25)}) == _canonical({"g": 0.25})
    assert _canonical({"lambdas": [1e-05]}) != _canonical({"lambdas": [1.0001e-05]})
    assert _canonical({"n": 3, "s": "a"}) != _canonical({"n": 3.5, "s": "a"})


def test_raj_qm7_cell_scope_keeps_cells_when_rows_or_extra_sizes_are_added():
    from orbitkernels.experiments import raj2017

    cfg = {"configuration": "reduced", **raj2017.CONFIGS["qm7"]["reduced"], "seed": 0, "lambdas": [1e-3, 1.0]}
    base = {**cfg, "extra_dims": {"lgika_rf": [20000]}, "extra_gamma_factors_by_method": {}}
    scope = raj2017._qm7_cell_scope
    for key in ("lgika_rf|2000|0", "lgika_rf|20000|3", "orig_rf|2000|1", "sort_nys|2000|4", "gicdf|20400|0",
                "orig_krr|None|2", "sort_krr_lap|None|0", "lgika_rf_lap|20000|1"):
        assert scope(base, key) == scope(cfg, key), key
    # the added size's cells depend on their own grid, which the smaller configuration does not have
    assert scope(cfg, "orig_rf|20000|0")["grid"] == cfg["extra_gamma_factors_by_method"]["orig_rf"]
    assert scope(base, "orig_rf|20000|0")["grid"] == cfg["extra_gamma_factors"]
    # what a cell depends on changes it: the 2nd layer for feature rows (not exact kernel ridge), the λ grid
    wider = {**cfg, "layer2_max_dim": 16000}
    assert scope(wider, "lgika_rf|20000|0") != scope(cfg, "lgika_rf|20000|0")
    assert scope(wider, "orig_krr|None|0") == scope(cfg, "orig_krr|None|0")
    assert scope({**cfg, "lambdas": [1.0]}, "orig_krr|None|0") != scope(cfg, "orig_krr|None|0")
    assert scope({**cfg, "gicdf_bins": 5}, "gicdf|20400|0") != scope(cfg, "gicdf|20400|0")


def test_raj_image_cell_scope_keeps_cells_when_rows_are_added():
    from orbitkernels.experiments import raj2017

    cfg = {"configuration": "reduced", **raj2017.CONFIGS["rotated_mnist"]["reduced"], "seed": 0, "lambdas": [1.0]}
    fewer = {**cfg, "methods": cfg["methods"][:2], "extra_dims": {"lgika_rf": [14000]}}
    scope = raj2017._image_cell_scope
    for key in ("select|lgika_rf", "lgika_rf|14000", "lgika_rf_polar|2000", "gicdf|None"):
        assert scope(fewer, key) == scope(cfg, key), key
    assert scope({**cfg, "polar_angles": 32}, "lgika_rf_polar|2000") != scope(cfg, "lgika_rf_polar|2000")
    assert scope({**cfg, "polar_angles": 32}, "lgika_rf|2000") == scope(cfg, "lgika_rf|2000")
    # the validation selection every row reuses is part of every cell's scope
    assert scope({**cfg, "angles": ["uniform"]}, "orig_rf|2000") != scope(cfg, "orig_rf|2000")
    assert scope({**cfg, "r": 8}, "select|lgika_rf") != scope(cfg, "select|lgika_rf")


def test_raj_hyperkernel_cells_have_their_own_scope_and_leave_the_first_layers_alone():
    from orbitkernels.experiments import raj2017

    for name, scope, key in (("qm7", raj2017._qm7_cell_scope, "lgika_rf|20000|0"),
                             ("rotated_mnist", raj2017._image_cell_scope, "orig_rf|14000")):
        cfg = {"configuration": "reduced", **raj2017.CONFIGS[name]["reduced"], "seed": 0, "lambdas": [1.0]}
        without = {k: v for k, v in cfg.items() if k != "layer2_exact"}
        assert scope(without, key) == scope(cfg, key)  # adding the hyperkernel rows keeps every first layer
        hyper = f"hyper|{key}"
        assert scope(cfg, hyper)["layer1"] == scope(cfg, key)
        other = {**cfg, "layer2_exact": {**cfg["layer2_exact"], "factors": [1.0]}}
        assert scope(other, hyper) != scope(cfg, hyper)


# ----------------------------------------------------------------------------- figures leave matplotlib's state alone
def test_experiment_figures_leave_the_callers_matplotlib_alone(tmp_path):
    """The experiments draw on bare Figures: a run from a notebook or GUI session keeps its back-end and figures."""
    import matplotlib
    import matplotlib.pyplot as plt

    from orbitkernels.experiments._common import pyplot

    before_backend, before_figures = matplotlib.get_backend(), plt.get_fignums()
    fig, axes = pyplot().subplots(1, 2, figsize=(4, 2), gridspec_kw={"width_ratios": [2, 1]})
    axes[0].plot([0, 1], [1, 0])
    fig.savefig(tmp_path / "f.png")
    pyplot().close(fig)
    assert (tmp_path / "f.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert matplotlib.get_backend() == before_backend and plt.get_fignums() == before_figures


def test_no_module_switches_matplotlibs_backend():
    """matplotlib.use() in library code would switch a notebook's back-end to Agg behind its back."""
    src = Path(__file__).resolve().parents[1] / "src" / "orbitkernels"
    offenders = [f"{p.relative_to(src)}:{i}" for p in src.rglob("*.py")
                 for i, line in enumerate(p.read_text().splitlines(), 1) if line.lstrip().startswith("matplotlib.use(")]
    assert not offenders, offenders


# ----------------------------------------------------------------------------- two runs of one experiment at once
def test_two_runs_of_one_experiment_keep_each_others_cells(tmp_path, capsys):
    # the last run to save wrote only its own cells over the partial file, dropping the other's
    from orbitkernels.experiments._runner import ExperimentRun, read_json

    first = ExperimentRun("toy", "exp", {"a": 1}, out_dir=tmp_path)
    second = ExperimentRun("toy", "exp", {"a": 1}, out_dir=tmp_path)
    first.cell("x", lambda: 1)
    second.cell("y", lambda: 2)
    assert set(read_json(first.partial_path)["cells"]) == {"x", "y"}
    assert second.get("x") == 1 and "cells written meanwhile" in capsys.readouterr().err
    first.cell("z", lambda: 3)
    assert set(read_json(first.partial_path)["cells"]) == {"x", "y", "z"}
    # the first to finish removes the partial file: the cells only the other holds go into the finished file
    second.finish({"done": True})
    assert not second.partial_path.exists() and set(read_json(second.path)["cells"]) == {"x", "y", "z"}
    assert "2 cells from another run of it, 1 computed now" in capsys.readouterr().err
    again = ExperimentRun("toy", "exp", {"a": 1}, out_dir=tmp_path)
    assert again.n_resumed == 3


def test_runs_of_another_configuration_or_without_resume_take_no_cells(tmp_path):
    from orbitkernels.experiments._runner import ExperimentRun, read_json

    ExperimentRun("toy", "exp", {"a": 1}, out_dir=tmp_path).cell("old", lambda: 1)
    fresh = ExperimentRun("toy", "exp", {"a": 1}, out_dir=tmp_path, resume=False)  # --no-resume: recompute all
    fresh.cell("new", lambda: 2)
    assert set(fresh.cells) == {"new"} and set(read_json(fresh.partial_path)["cells"]) == {"new"}
    ExperimentRun("toy", "exp", {"a": 1}, out_dir=tmp_path).cell("same", lambda: 3)
    other = ExperimentRun("toy", "exp", {"a": 2}, out_dir=tmp_path)
    other.cell("mine", lambda: 4)
    assert set(other.cells) == {"mine"}


def test_runs_saving_at_once_lose_no_cell(tmp_path):
    # without the lock, two saves could both read the file before either wrote it, and the later write lost a cell
    import sys
    import threading

    from orbitkernels.experiments._runner import ExperimentRun, read_json

    runs = [ExperimentRun("toy", "exp", {"a": 1}, out_dir=tmp_path) for _ in range(4)]
    barrier = threading.Barrier(len(runs))

    def work(i, run):
        barrier.wait()
        for j in range(25):
            run.cell(f"{i}|{j}", lambda: j)

    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        threads = [threading.Thread(target=work, args=(i, r)) for i, r in enumerate(runs)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        sys.setswitchinterval(old)
    assert len(read_json(runs[0].partial_path)["cells"]) == 100


def test_a_folder_that_cannot_be_locked_still_saves(tmp_path, monkeypatch):
    # some NFS mounts refuse flock (ENOLCK): the save must go on without the lock, not fail after the cell
    import errno

    from orbitkernels.experiments._runner import ExperimentRun, read_json

    fcntl = pytest.importorskip("fcntl")

    def no_locks(fd, op):
        raise OSError(errno.ENOLCK, "No locks available")

    monkeypatch.setattr(fcntl, "flock", no_locks)
    run = ExperimentRun("toy", "exp", {"a": 1}, out_dir=tmp_path)
    run.cell("c", lambda: 1)
    assert read_json(run.partial_path)["cells"] == {"c": 1}
    run.finish({"x": 1})
    assert run.path.exists() and not run.partial_path.exists()
