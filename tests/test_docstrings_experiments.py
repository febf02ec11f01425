"""The docstrings of the reproductions (``orbitkernels.experiments``) and the benchmarks (``orbitkernels.bench``),
held to the code.

Every public function and class of these modules (and every public method and property) has a docstring; the
numpydoc Parameters sections name every argument with the signature's default; the ``run`` signature and the
protocol that each reproduction module's docstring states (which experiments, sizes, draws, folds, splits) are
those of its code and configurations; the keys that the Returns sections list are the ones a tiny run returns;
the errors the docstrings promise are raised; the benchmarks' table lists every benchmark.
"""
from __future__ import annotations

import ast
import importlib
import inspect
import json
import re

import numpy as np
import pytest
from numpydoc.docscrape import ClassDoc, FunctionDoc

from orbitkernels import bench
from orbitkernels.experiments import PAPERS, get_experiments, molecules3d, mroueh2015, raj2017, report, teo2007
from orbitkernels.experiments import _mroueh_rls, _raj_eval, _runner

MODULES = ["orbitkernels.experiments", "orbitkernels.experiments._common", "orbitkernels.experiments._runner",
           "orbitkernels.experiments._raj_eval", "orbitkernels.experiments._mroueh_rls",
           "orbitkernels.experiments.mroueh2015", "orbitkernels.experiments.raj2017",
           "orbitkernels.experiments.teo2007", "orbitkernels.experiments.molecules3d",
           "orbitkernels.experiments.report", "orbitkernels.bench"]


def _flat(text):
    return " ".join((text or "").split())


def _public_objects():
    """(module name, qualified name, object) of every public function, class, method and property defined in
    :data:`MODULES` (re-imports left out)."""
    out = []
    for name in MODULES:
        module = importlib.import_module(name)
        for attr, obj in vars(module).items():
            if attr.startswith("_") or not (inspect.isfunction(obj) or inspect.isclass(obj)):
                continue
            if obj.__module__ != name:
                continue
            out.append((name, attr, obj))
            if inspect.isclass(obj):
                for member, value in vars(obj).items():
                    if member.startswith("_"):
                        continue
                    if isinstance(value, property):
                        out.append((name, f"{attr}.{member}", value.fget))
                    elif isinstance(value, (staticmethod, classmethod)):
                        out.append((name, f"{attr}.{member}", value.__func__))
                    elif inspect.isfunction(value):
                        out.append((name, f"{attr}.{member}", value))
    return out


@pytest.mark.parametrize("module, name, obj", _public_objects(), ids=lambda v: v if isinstance(v, str) else "")
def test_every_public_object_has_a_docstring(module, name, obj):
    assert (obj.__doc__ or "").strip(), f"{module}.{name} has no docstring"


#: the objects whose docstrings have numpydoc sections
NUMPYDOC = [get_experiments, _runner.ExperimentRun, _mroueh_rls.rls_fit_predict, bench.run_benchmarks,
            bench.summarize, bench.render_markdown]


def _doc(obj):
    return (ClassDoc if inspect.isclass(obj) else FunctionDoc)(obj, config={"show_class_members": False})


@pytest.mark.parametrize("obj", NUMPYDOC, ids=lambda o: o.__qualname__)
def test_parameters_sections_name_every_argument_with_its_default(obj):
    doc = _doc(obj)
    documented = {}
    for p in doc["Parameters"]:
        for n in p.name.split(","):
            documented[n.strip()] = p.type
    params = inspect.signature(obj.__init__ if inspect.isclass(obj) else obj).parameters
    names = [n for n, p in params.items() if n != "self" and p.kind is not p.VAR_KEYWORD]
    assert sorted(documented) == sorted(names), obj.__qualname__
    for n in names:
        m = re.search(r"default=(.+)$", documented[n])
        if m:
            assert ast.literal_eval(m.group(1).strip()) == params[n].default, (obj.__qualname__, n)
    assert doc["Returns"] or inspect.isclass(obj), obj.__qualname__


# ------------------------------------------------------------------------------------------- the run functions
BASE = {"quick": False, "out_dir": None, "resume": True, "seed": 0, "download": False}


@pytest.mark.parametrize("paper", sorted(PAPERS))
def test_run_signatures_are_the_documented_ones(paper):
    """The package docstring's ``run(quick=False, out_dir=None, resume=True, seed=0, download=False)``, plus
    ``config=None`` for raj2017 and molecules3d and ``data=None`` for raj2017's cifar10, as it says; each module's
    docstring names its own signature and every one of its experiments."""
    import orbitkernels.experiments as pkg

    module = importlib.import_module(PAPERS[paper])
    text = _flat(module.__doc__)
    for name, run in get_experiments(paper).items():
        params = {n: p.default for n, p in inspect.signature(run).parameters.items()}
        extra = {k: v for k, v in params.items() if k not in BASE}
        assert {k: params[k] for k in BASE} == BASE, (paper, name)
        expected = {}
        if paper in ("raj2017", "molecules3d"):
            expected["config"] = None
        if (paper, name) == ("raj2017", "cifar10"):
            expected["data"] = None
        assert extra == expected, (paper, name)
        assert (f"``{name}``" if paper in ("mroueh2015", "teo2007") else name) in text, (paper, name)
        stated = "run(" + ", ".join(f"{k}={v!r}" for k, v in params.items() if k != "data") + ")"
        assert stated in text or stated.replace("run(", "EXPERIMENTS[name](") in text, (paper, stated)
    pkg_doc = _flat(pkg.__doc__)
    assert "run(quick=False, out_dir=None, resume=True, seed=0, download=False)" in pkg_doc
    assert "``raj2017`` and ``molecules3d`` runs also take ``config``" in pkg_doc and "takes ``data``" in pkg_doc


def test_get_experiments_and_papers_as_documented():
    for paper in PAPERS:
        assert get_experiments(paper) is importlib.import_module(PAPERS[paper]).EXPERIMENTS
        assert f'"{paper}"' in get_experiments.__doc__
    with pytest.raises(ValueError, match="unknown paper"):
        get_experiments("nips2099")


# ------------------------------------------------------------------------ each module's stated protocol
def test_mroueh_docstring_states_the_configurations():
    doc = _flat(mroueh2015.__doc__)
    x = mroueh2015.XPERM_FULL
    assert x["templates"] == [1, 10, 25] and "m = 1, 10, 25" in doc and x["n_bins"] == 25
    assert (x["sizes"][0], x["sizes"][-1]) == (10, 1000) and "10 to 1000 training points per class" in doc
    assert f"{x['n_draws']} random training draws per size (the paper: 100)" in doc
    m = mroueh2015.MNIST_FULL
    left, right = m["left"], m["right"]
    assert (left["templates"][0], left["templates"][-1]) == (1, 100) and left["bins"] == [5, 25]
    assert f"number of templates (1 to 100; 5 and 25 bins, {m['pool_per_class']} points per class" in doc
    assert f"{left['n_template_draws']} template draws, the paper 30" in doc
    assert f"CDF({right['n_bins']}, {right['n_templates']})" in doc and m["n_test"] == 10000
    assert (right["sizes"][0], right["sizes"][-1]) == (10, 1000) and "pool of 1000 per class" in doc
    assert right["draws"]["10"] == 20 and right["draws"]["1000"] == 1
    assert "20 training draws at the small sizes down to 1 at 1000, the paper 100" in doc
    s = mroueh2015.SPEECH_FULL
    assert s["bins"] == [5, 25, 100] and (s["templates"][0], s["templates"][-1]) == (1, 1000)
    assert len(s["test_speakers"]) == 2 and "two unseen speakers" in doc
    assert f"{s['n_template_draws']} template draws (the paper 30)" in doc


def test_raj_docstring_states_the_configurations():
    doc = _flat(raj2017.__doc__)
    C = raj2017.CONFIGS
    assert all(set(c) == {"quick", "reduced", "full"} for c in C.values())
    assert '"reduced" (default' in doc
    for experiment in C:
        assert raj2017._pick_config(experiment, False, None)[0] == "reduced"
    # QM7: "full" at D = 10000 (5k frequencies), "reduced" with its RF rows at D = 20000 (the paper's 10k)
    assert C["qm7"]["full"]["feature_dims"] == [10000]
    assert all(C["qm7"]["reduced"]["extra_dims"][m] == [20000] for m in ("lgika_rf", "orig_rf", "sort_rf"))
    assert "QM7's \"full\" has D = 10000 features, 5k frequencies" in doc and "D = 20000" in doc
    # the paper's sizes in the image tables' "full"
    rm = C["rotated_mnist"]["full"]
    assert (rm["feature_dims"], rm["r"], rm["layer2_dim"]) == ([14000], 100, 17000)
    cf = C["cifar10"]["full"]
    assert (cf["n_train"] + cf["n_valid"], cf["n_test"], cf["r"], cf["feature_dims"], cf["layer2_dim"]) == (
        50000, 10000, 50, [20000], 30000)
    cdoc = _flat(raj2017.run_cifar10.__doc__)
    assert "45k / 5k / 10k" in cdoc and "r = 50" in cdoc and "30k 2nd-layer templates" in cdoc
    cr = C["cifar10"]["reduced"]
    assert (cr["n_train"], cr["n_valid"], cr["n_test"], cr["feature_dims"], cr["r"]) == (5000, 1000, 2000, [2000], 10)
    assert "5k / 1k / 2k, D = 2000, r = 10" in cdoc
    ka, kdoc = C["kernel_approx"], _flat(raj2017.run_kernel_approx.__doc__)
    for name in ("reduced", "full"):
        c = ka[name]
        assert c["r_exact"] == 70 and c["r_list"] == [20, 40]
        assert f'"{name}": {c["n_molecules"]}, D up to {2 * max(c["n_freqs"])}, {c["repeats"]} repeats' in kdoc
    q = C["qm7"]
    assert (q["reduced"]["inner_k"], q["full"]["inner_k"]) == ("loo", 3)
    assert 'inner_k="loo"`` ("reduced"), else ``inner_k``-fold CV ("full": 3)' in _flat(raj2017.run_qm7.__doc__)
    assert "10k train, 2k validation, 50k test" in _flat(raj2017.run_rotated_mnist.__doc__)


def test_teo_docstring_states_the_configurations():
    doc = _flat(teo2007.__doc__)
    m = teo2007.MNIST_FULL
    assert len(teo2007.mnist_transformations()) == 20 and "the same 20 transformations" in doc
    assert (m["per_class"][0], m["per_class"][-1], m["n_test"]) == (10, 50, 10000) and "10..50" in doc
    assert f"{m['n_draws']} random draws per size" in doc
    assert f"{m['n_valid']}-digit validation split, at {m['select_per_class']} digits per class" in doc
    s, q = teo2007.SPAM_FULL, teo2007.SPAM_QUICK
    assert teo2007.TUNING_PART == 9 and s["test_parts"] == [1, 2, 3, 4, 5, 6, 7, 8, 10]
    assert "tuned on part 9 (trained on parts 1-8)" in doc and "parts 1-8 and 10 in turn" in doc
    assert f"mean over the {len(s['test_parts'])} test parts" in doc
    assert (q["n_messages"], q["test_parts"]) == (800, [8, 10]) and "800 messages, test parts 8 and 10" in doc


def test_molecules3d_docstring_states_the_configurations():
    doc = _flat(molecules3d.__doc__)
    full, quick = molecules3d.CONFIGS["qm7"]["full"], molecules3d.CONFIGS["qm7"]["quick"]
    assert (full["n_folds"], full["fold_seed"]) == (5, 0) and "load_qm7(n_folds=5, random_state=0)" in doc
    assert molecules3d._pick_config(False, None)[0] == "full" and '"full", the default' in doc
    assert quick["n_molecules"] == 250 and len(quick["configurations"]) == 2
    assert "250 molecules, two tiny configurations" in doc


def test_affine_warp_matches_the_library_groups_as_its_docstring_says():
    """"for the same parameters ImageRotation and ImageTranslation give bitwise the same images (checked: max
    difference 0.0 for a 10 degree rotation and a (1, -2) shift)"."""
    from orbitkernels.groups import ImageRotation, ImageTranslation, Uniform

    assert "max difference 0.0 for a 10 degree rotation and a (1, -2) shift" in _flat(teo2007.AffineWarp.__doc__)
    X = np.random.default_rng(0).random((2, 784))
    t = np.deg2rad(10.0)
    rot = teo2007.AffineWarp("r", [[np.cos(t), -np.sin(t)], [np.sin(t), np.cos(t)]])
    assert np.abs(rot(X) - ImageRotation((28, 28)).act(X, [[t]])[0]).max() == 0.0
    shift = teo2007.AffineWarp("s", np.eye(2), (1, -2))
    assert np.abs(shift(X) - ImageTranslation((28, 28), Uniform(-3, 3)).act(X, [[1, -2]])[0]).max() == 0.0


def test_mcnemar_as_documented():
    assert teo2007.mcnemar([1, 1, 0, 0], [1, 0, 1, 1]) == (1, 2, 1.0)
    assert teo2007.mcnemar([1, 0], [1, 0])[2] == 1.0  # no discordant pair
    with pytest.raises(ValueError, match="same shape"):
        teo2007.mcnemar([1, 0], [1])


# ---------------------------------------------------------------------------------------- the helpers' Returns
def test_rls_fit_predict_returns_what_it_documents():
    doc = _flat(_mroueh_rls.rls_fit_predict.__doc__)
    rng = np.random.default_rng(0)
    F, y = rng.normal(size=(30, 5)), rng.integers(0, 3, 30)
    for kw, selection, solver in ((dict(), "loo", "primal"), (dict(eig_limit=2), "holdout", "primal"),
                                  (dict(kernel=True), "loo", "dual")):
        Ftr, Fte = (F @ F.T, F[:7] @ F.T) if kw.get("kernel") else (F, F[:7])
        out = _mroueh_rls.rls_fit_predict(Ftr, y, Fte, **kw)
        assert set(out) == {"pred", "rel_lambda", "lambda", "selection", "val_accuracy", "solver"}
        assert all(f"``{k}``" in doc for k in out)
        assert out["pred"].shape == (7,) and (out["selection"], out["solver"]) == (selection, solver)


def test_gurls_loo_rls_returns_what_it_documents():
    doc = _flat(_mroueh_rls.gurls_loo_rls.__doc__)
    rng = np.random.default_rng(0)
    F, y = rng.normal(size=(30, 5)), rng.integers(0, 3, 30)
    out = _mroueh_rls.gurls_loo_rls(F @ F.T + np.eye(30), y, F[:7] @ F.T, n_lambda=6)
    assert all(f"``{k}``" in doc for k in out) and out["selection"] == "gurls-loo"
    assert out["pred"].shape == (7,) and out["lambdas"].shape == (3,) and out["loo_recall"].shape == (6, 3)
    two = _mroueh_rls.gurls_loo_rls(F @ F.T + np.eye(30), y % 2, F[:7] @ F.T, n_lambda=6)
    assert two["lambdas"].shape == (1,) and "T is 1 for two classes" in doc
    acc = _mroueh_rls.one_nn_accuracy(F, y, F, y)
    assert isinstance(acc, float) and acc == 1.0


def test_raj_eval_helpers_return_what_they_document():
    from orbitkernels.experiments._common import RidgePath, kernel_ridge_path

    rng = np.random.default_rng(0)
    F = rng.normal(size=(20, 4))
    Y = _raj_eval.one_hot(rng.integers(0, 3, 20), 3)
    assert RidgePath([1e-3, 1e-1]).fit(F, Y).predict(F[:5]).shape == (2, 5, 3)
    assert RidgePath([1e-3, 1e-1]).fit(F, F[:, 0]).predict(F[:5]).shape == (2, 5, 1)
    assert kernel_ridge_path(F @ F.T, F[:, 0], F[:5] @ F.T, [1e-3, 1e-1]).shape == (2, 5)
    assert _raj_eval.unit_norm_rows(F).dtype == np.float32
    with pytest.raises(ValueError, match="unit norm"):
        _raj_eval.unit_norm_rows(np.zeros((2, 4)))
    assert set(_raj_eval.regression_scores([1, 2], [1, 4])) == {"rmse", "mae"}
    model = _raj_eval.LooRidge([1e-3, 1.0]).fit(F, F[:, 0])
    assert model.loo_rmse_.shape == (2,) and model.best_ == int(np.argmin(model.loo_rmse_))


# ----------------------------------------------------------------------------------------------- the runner
def test_headline_as_documented():
    cell = _runner.headline("x", 1.0, 2.0, "closer", tolerance=0.5, note="n")
    assert cell == {"name": "x", "ours": 1.0, "paper": 2.0, "better": "closer", "tolerance": 0.5, "note": "n"}
    with pytest.raises(ValueError, match="better"):
        _runner.headline("x", 1.0, better="bigger")


def test_experiment_run_resumes_from_a_finished_file(tmp_path):
    """``resume``: the partial file of an interrupted run, else the finished results file."""
    run = _runner.ExperimentRun("p", "e", {"a": 1}, out_dir=tmp_path)
    assert _runner.ExperimentRun.key("fig1", 3) == "fig1|3"
    run.cell("c", lambda: 1)
    run.finish({}, [])
    assert not run.partial_path.exists() and run.path.exists()
    again = _runner.ExperimentRun("p", "e", {"a": 1}, out_dir=tmp_path)
    assert again.has("c") and again.get("c") == 1 and again.n_resumed == 1
    other = _runner.ExperimentRun("p", "e", {"a": 2}, out_dir=tmp_path)
    assert not other.has("c")
    assert not _runner.ExperimentRun("p", "e", {"a": 1}, out_dir=tmp_path, resume=False).has("c")


# ----------------------------------------------------------------------------------------------- the pages
def test_readme_block_leaves_the_benchmarks_out(tmp_path):
    cell = {"name": "c", "ours": 1.0, "paper": 1.0, "better": "higher"}
    for folder, name in (("teo2007", "spam"), ("bench", "gemm_peak")):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / f"{name}.json").write_text(json.dumps({"headline": [dict(cell, name=folder)]}))
    text = report.render_readme_block(tmp_path)
    assert "| teo2007 |" in text and "bench" not in text and text.startswith("1 of the 1 cells")
    assert "benchmarks' files left out" in _flat(report.render_readme_block.__doc__)
    empty = tmp_path / "empty"
    empty.mkdir()
    assert report.render_readme_block(empty).startswith("No reproduction results yet")


def test_report_main_writes_the_results_page(tmp_path):
    out = tmp_path / "results.md"
    assert report.main([str(tmp_path), str(out)]) == 0
    assert out.read_text().startswith("# Reproduction results")


# -------------------------------------------------------------------------------------------- the benchmarks
def test_benchmark_table_lists_every_benchmark_in_order():
    lines = bench.__doc__.splitlines()
    seps = [i for i, line in enumerate(lines) if line.startswith("=====")]
    assert len(seps) == 3 and lines[seps[0] + 1].split() == ["name", "what", "it", "measures"]
    rows = [line.split()[0] for line in lines[seps[1] + 1:seps[2]] if line and not line[0].isspace()]
    assert rows == list(bench.BENCHMARKS)
    for name, fn in bench.BENCHMARKS.items():
        assert (fn.__doc__ or "").strip(), name
        assert list(inspect.signature(fn).parameters)[0] == "quick", name


def test_run_benchmarks_refuses_an_unknown_name_before_running(tmp_path):
    out = tmp_path / "bench"
    with pytest.raises(ValueError, match="unknown benchmark"):
        bench.run_benchmarks(["gemm_peak", "nope"], out_dir=out)
    assert not out.exists()


def test_summarize_as_documented():
    assert bench.summarize("nope", {}) == ""
    assert bench.summarize("gemm_peak", {}).startswith("(no summary:")
