"""Promises of the README and of docs/ (user guide, choosing the group, scaling out, architecture) that no other test
checks: numbers quoted in prose against the committed results and probe files they come from, printed values that a
page states in comments, the defaults and names the pages describe. Each test reads files or fits tiny models
(seconds)."""
from __future__ import annotations

import collections
import contextlib
import importlib
import inspect
import io
import json
import re
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "results"
FENCE = re.compile(r"```python\n(.*?)```", re.S)


def _flat(path):
    return " ".join((ROOT / path).read_text(encoding="utf-8").split())


def _json(path):
    return json.loads((RESULTS / path).read_text())


def _sampling_means():
    """{(data set, method, r): mean accuracy} and the same for the invariance error, from the sampling study."""
    acc, inv = collections.defaultdict(list), collections.defaultdict(list)
    for data, rows in _json("sampling/sampling.json")["full_rotation"].items():
        for r in rows:
            acc[data, r["method"], r["r"]].append(r["accuracy"])
            inv[data, r["method"], r["r"]].append(r["invariance_error"])
    return ({k: float(np.mean(v)) for k, v in acc.items()}, {k: float(np.mean(v)) for k, v in inv.items()},
            {k: len(v) for k, v in acc.items()})


def _run_block(page, index):
    """What the ``index``-th Python block of ``page`` prints, run alone in a fresh namespace."""
    code = FENCE.findall((ROOT / page).read_text(encoding="utf-8"))[index]
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        exec(compile(code, f"{page}[{index}]", "exec"), {"__name__": "__main__"})
    return code, buf.getvalue().splitlines()


# ------------------------------------------------------------------ README


def test_readme_second_layer_cost_is_the_difference_of_the_promised_scores():
    """README, "Using it": the second layer's cost on the small example is the gap between the two rotated-test
    scores the examples promise (``# -> 0.96`` and ``# -> 0.95``, which test_docs_examples checks they print)."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    flat = " ".join(readme.split())
    m = re.search(r"On this small example the second layer costs about a point \(([\d.]+) against ([\d.]+) on the "
                  r"rotated test digits\)", flat)
    assert m, "the README should state what the second layer costs on its example"
    two, one = float(m[1]), float(m[2])
    one_layer = re.search(r'print\("rotated test digits:".*# -> ([\d.]+)', readme)
    two_layers = re.search(r'print\("rotated test digits, two layers:".*# -> ([\d.]+)', readme)
    assert round(one, 2) == float(one_layer[1]) and round(two, 2) == float(two_layers[1])
    assert 0.5 <= 100 * (one - two) < 1.5  # "about a point"


def test_readme_default_rotation_claims_are_the_committed_runs():
    """README: the default rotation group against the bilinear grid and i.i.d. angles on MNIST, from
    results/sampling/rotation_default_mnist.json (one i.i.d. draw) and the sampling study (three draws)."""
    flat = _flat("README.md")
    m = re.search(r"this is ([\d.]+) point above the bilinear-warp grid at a fifth of the time, and (\d+) points above "
                  r"one draw of 64 angles drawn i.i.d. as in the papers \(`sampling=\"iid\"`\); "
                  r"over three i.i.d. draws "
                  r"in the sampling study the gap is (\d+) points on MNIST and (\d+) on the 12×12 digits", flat)
    assert m, "the README should state the default rotation group's measured advantage"
    rec = _json("sampling/rotation_default_mnist.json")
    rows = rec["rows"]
    assert rec["blas_threads"] == "1" and (rec["n_train"], rec["n_test"], rec["n_angles"]) == (3000, 2000, 64)
    assert float(m[1]) == round(100 * (rows["default"]["accuracy"] - rows["grid_bilinear"]["accuracy"]), 1)
    assert 1 / 6 < rows["polar"]["seconds"] / rows["grid_bilinear"]["seconds"] < 1 / 4  # "a fifth"
    assert int(m[2]) == round(100 * (rows["default"]["accuracy"] - rows["iid"]["accuracy"]))
    acc, _, n = _sampling_means()
    assert n["mnist", "iid", 64] == n["digits", "iid", 64] == 3
    assert int(m[3]) == round(100 * (acc["mnist", "default", 64] - acc["mnist", "iid", 64]))
    assert int(m[4]) == round(100 * (acc["digits", "default", 64] - acc["digits", "iid", 64]))
    guide = _flat("docs/user_guide.md")
    m = re.search(r"On rotated MNIST digits the default is (\d+) points more accurate than 64 i.i.d. angles \(mean of "
                  r"three draws; (\d+) points against the one draw", guide)
    assert m, "the user guide should state the default's advantage over i.i.d. angles"
    assert int(m[1]) == round(100 * (acc["mnist", "default", 64] - acc["mnist", "iid", 64]))
    assert int(m[2]) == round(100 * (rows["default"]["accuracy"] - rows["iid"]["accuracy"]))


def test_readme_second_layer_width_and_hyperkernel_numbers_are_the_committed_results():
    """README: the QM7 layer-2 width probe (fold 0) and the exact Gaussian hyperkernel, which improves every QM7 row
    it was computed for over its first layer."""
    flat = _flat("README.md")
    m = re.search(r"on QM7 \(fold 0, first layer (\d+) wide, ([\d.]+) RMSE\) a (\d+)-wide second layer reaches "
                  r"([\d.]+), one (\d+) wide ([\d.]+)", flat)
    assert m, "the README should state the layer-2 width probe"
    probe = _json("raj2017/layer2_probes.json")
    v = probe["variants"]
    assert probe["fold"] == 0 and probe["d1"] == int(m[1]) and float(m[2]) == round(v["layer1"]["rmse"], 2)
    assert float(m[4]) == round(v[f"d2={m[3]} f2=0.0625 plain"]["rmse"], 2)
    assert float(m[6]) == round(v[f"d2={m[5]} f2=0.0625 plain"]["rmse"], 2)
    rows = _json("raj2017/qm7.json")["data"]["rows"]
    hyper = [r for r in rows if r.get("rmse_hyper") is not None]
    assert len(hyper) >= 6 and all(r["rmse_hyper"] < r["rmse"] for r in hyper)  # "improves every QM7 row"
    m = re.search(r"\(LGIKA \(RF\): ([\d.]+) against ([\d.]+) RMSE, the paper's second layer ([\d.]+);", flat)
    rf = next(r for r in rows if (r["method"], r["dim"]) == ("lgika_rf", 20000))
    assert m and [float(x) for x in m.groups()] == [round(rf["rmse_hyper"], 2), round(rf["rmse"], 2),
                                                    rf["paper_rmse_2layer"]]


def test_readme_molecules3d_numbers_are_the_committed_results():
    flat = _flat("README.md")
    m = re.search(r"three atom-centred densities pooled over (\d+) sampled rotations reach ([\d.]+) kcal/mol RMSE / "
                  r"([\d.]+) MAE with (\d+) features, ahead of the solid-harmonic scattering anchor \(([\d.]+) / "
                  r"([\d.]+)\); with (\d+) rotations the same densities reach ([\d.]+) \((\d+) features; ([\d.]+) at "
                  r"(\d+) rotations\)", flat)
    assert m, "the README should state the 3-D molecules numbers"
    data = _json("molecules3d/qm7.json")["data"]
    rows = {r["name"]: r for r in data["rows"]}
    best, few, many = (rows["atoms_rbf_multiscale_r256_s512"], rows["atoms_rbf_multiscale"],
                       rows["atoms_rbf_multiscale_r256"])
    assert "r=256" in best["configuration"] and int(m[1]) == 256
    assert (float(m[2]), float(m[3]), int(m[4])) == (round(best["rmse"], 2), round(best["mae"], 2),
                                                    best["n_features"])
    anchor = next(v for k, v in data["anchors"].items() if k.startswith("solid-harmonic scattering"))
    assert [float(m[5]), float(m[6])] == anchor
    assert "r=32" in few["configuration"] and int(m[7]) == 32
    assert (float(m[8]), int(m[9])) == (round(few["rmse"], 2), few["n_features"])
    assert float(m[10]) == round(many["rmse"], 2) and int(m[11]) == 256 and many["n_features"] == few["n_features"]


# ------------------------------------------------------------------ user guide


def test_user_guide_example_prints_what_the_text_says():
    """The group flags: small von Mises turns are unitary with a symmetric q, so the action moves to the templates;
    Montavon's noisy sorting depends on each input, so it does not."""
    _, lines = _run_block("docs/user_guide.md", 0)
    assert lines == ["True True True", "False"]


def test_user_guide_orthogonal_frequency_numbers_are_the_probes():
    guide = _flat("docs/user_guide.md")
    m = re.search(r"without a group \(([\d.]+) against ([\d.]+) relative error at s = d\) and averaged over "
                  r"12 rotations \(([\d.]+) against ([\d.]+)\) "
                  r"\(`python benchmarks/probes/raj2017/orthogonal_frequencies_kernel.py`, "
                  r"(\d+) draws each\)", guide)
    assert m, "the user guide should quote the orthogonal frequencies probe"
    probe = _json("raj2017/orthogonal_frequencies_kernel_probes.json")
    plain, rot = probe["variants"]["no group, s=144"], probe["variants"]["12 rotations, s=144"]
    assert plain["s"] == plain["d"] == 144 and probe["draws"] == int(m[5])
    assert [float(x) for x in m.group(1, 2, 3, 4)] == [round(v, 3) for v in (
        plain["orthogonal_rel_error"], plain["iid_rel_error"], rot["orthogonal_rel_error"], rot["iid_rel_error"])]
    # "about twice as close ... at s >= d"
    assert all(v["orthogonal_over_iid"] < 0.6 for v in probe["variants"].values() if v["s"] >= v["d"])
    m = re.search(r"Original \(RF\) row with 7000 frequencies gives ([\d.]+) % where three i.i.d. draws give "
                  r"([\d.]+)–([\d.]+) %", guide)
    assert m, "the user guide should quote the Original (RF) accuracies"
    gamma = _json("raj2017/orig_rf_gamma_probes.json")
    v = gamma["variants"]
    assert gamma["dim"] == 14000  # cos and sin of 7000 frequencies
    iid = [v["factor 1"]["accuracy"], v["factor 1, feature seed 1"]["accuracy"],
           v["factor 1, feature seed 2"]["accuracy"]]
    assert float(m[1]) == round(v["factor 1, orthogonal frequencies"]["accuracy"], 2)
    assert (float(m[2]), float(m[3])) == (round(min(iid), 2), round(max(iid), 2))


def test_user_guide_nystroem_float32_qm7_numbers_are_the_probe():
    guide = _flat("docs/user_guide.md")
    m = re.search(r"On QM7 with (\d+) landmarks, float32 kernel values gave a ridge error of (\d+) kcal/mol where "
                  r"float64 gives (\d+) \(fold 0, `benchmarks/probes/raj2017/nys_precision.py`", guide)
    assert m, "the user guide should quote the QM7 precision probe"
    probe = _json("raj2017/nys_precision_probes.json")
    v = probe["variants"]
    assert probe["landmarks"] == int(m[1]) and probe["fold"] == 0
    f32, f64 = v["f=0.015625 dtype=float32"], v["f=0.015625 dtype=default"]
    assert (f32["kernel_precision"], f64["kernel_precision"]) == ("float32", "float64")
    assert (int(m[2]), int(m[3])) == (round(f32["test_rmse"]), round(f64["test_rmse"]))


def test_documented_defaults_of_the_feature_maps():
    """User guide and choosing the group: 64 elements by default for an infinite group (the full circle's 64
    equispaced rotations, on the polar path), every element of a finite group, a 256 MB budget, orthogonal
    frequencies for the Gaussian kernel and i.i.d. ones for the Laplacian under ``frequencies="auto"``."""
    from orbitkernels.features import OrbitFourierFeatures
    from orbitkernels.groups import CyclicShift, ImageRotation

    X = np.random.default_rng(0).random((6, 144))
    f = OrbitFourierFeatures(ImageRotation((12, 12)), n_components=8, random_state=0)
    assert (f.n_group_samples, f.sampling, f.frequencies, f.max_memory_mb) == (None, "qmc", "auto", 256)
    f.fit(X)
    assert len(f.group_elements_) == 64 and f.plan_.path == "polar" and f.frequencies_ == "orthogonal"
    lap = OrbitFourierFeatures(ImageRotation((12, 12)), kernel="laplacian", n_components=8, random_state=0).fit(X)
    assert lap.frequencies_ == "iid"
    four = OrbitFourierFeatures(ImageRotation((12, 12), n_angles=4), n_components=8, random_state=0).fit(X)
    assert len(four.group_elements_) == 4
    cyc = OrbitFourierFeatures(CyclicShift((12, 12)), n_components=8, random_state=0).fit(X)
    assert len(cyc.group_elements_) == 144 and cyc.plan_.path == "fft"  # "all shifts: FFT path, exact"


# ------------------------------------------------------------------ choosing the group


def test_choosing_the_group_example_prints_what_its_comments_say():
    code, lines = _run_block("docs/choosing_the_group.md", 0)
    said = [c.strip() for c in re.findall(r"^print\(.*#(.*)$", code, re.M)]
    assert lines == said


def test_choosing_the_group_tables_are_the_sampling_study():
    text = (ROOT / "docs/choosing_the_group.md").read_text(encoding="utf-8")
    acc, inv, _ = _sampling_means()
    cols = ("iid", "grid-bilinear", "polar", "default")
    for label, data in (("digits, 12×12", "digits"), ("MNIST, 28×28", "mnist")):
        row = re.search(rf"^\| {re.escape(label)} .*$", text, re.M)[0]
        cells = [float(c.strip(" *")) for c in row.strip("|").split("|")[1:]]
        assert cells == [round(acc[data, c, 64], 3) for c in cols], (data, cells)
    local = collections.defaultdict(dict)
    for r in _json("sampling/sampling.json")["local_invariance"]:
        local[r["r"]][r["group"].startswith("von Mises"), r["sampling"]] = r["error"]
    for r in (16, 64, 128):
        row = re.search(rf"^\| {r} \|.*$", text, re.M)[0]
        cells = [float(c) for c in row.strip("|").split("|")[1:]]
        want = [local[r][vm, s] for vm in (True, False) for s in ("iid", "qmc")]
        assert cells == [round(v, 3) for v in want], (r, cells)
    flat = " ".join(text.split())
    assert f"even 128 of them reach only {round(acc['digits', 'iid', 128], 2)} on digits" in flat
    assert (f"is {round(inv['mnist', 'default', 64], 2)} for the default on MNIST against "
            f"{round(inv['mnist', 'iid', 64], 2)} for i.i.d. angles") in flat
    rm = {r["sampling"]: r["accuracy"] for r in _json("sampling/sampling.json")["rotated_mnist"]}
    assert f"i.i.d. {rm['iid']:.2f} %, qmc {rm['qmc']:.2f} %" in flat


def test_choosing_the_group_montavon_and_iid_bias_numbers_are_the_probes():
    flat = _flat("docs/choosing_the_group.md")
    mont = _json("sampling/montavon.json")
    err = {(r["r"], r["sampling"]): r["error"] for r in mont["rows"]}
    quoted = ", ".join(f"r = {r} {err[r, 'lattice']:.4f} vs {err[r, 'iid']:.4f}" for r in (16, 32, 70))
    assert f"on {mont['n_molecules']} QM7 molecules, {mont['seeds']} seeds: {quoted} i.i.d." in flat
    v = _json("raj2017/iid_rotations_probes.json")["variants"]
    iid = [x["accuracy"] for k, x in v.items() if k.startswith("D=2000, r=100 i.i.d., seed")]
    blocks = [x["accuracy"] for k, x in v.items() if k.startswith("D=2000, r=100 i.i.d. in")]
    strata = [x["accuracy"] for k, x in v.items() if k.startswith("D=2000, r=100 jittered strata")]
    grid = _json("raj2017/iid_rotations_probes.json")["recorded_cells"]["lgika_rf_r100_qmc|2000"]
    m = re.search(r"independent draws give ([\d.]+)-([\d.]+) %, ten or fifty independent draws averaged still "
                  r"([\d.]+)-([\d.]+) %, one random angle per arc of the circle ([\d.]+) %, the equispaced grid "
                  r"([\d.]+) % \(`benchmarks/probes/raj2017/iid_rotations.py --part bias`\)", flat)
    assert m, "the page should quote the i.i.d. rotations probe"
    want = [min(iid), max(iid), min(blocks), max(blocks), np.mean(strata), grid]
    assert np.allclose([float(x) for x in m.groups()], want, rtol=0, atol=0.0501), (m.groups(), want)


# ------------------------------------------------------------------ scaling out


def test_scaling_out_names_and_defaults():
    """scaling_out.md: the adapter's names, their re-export by the old module, the fit sample size, the shipping
    default (``"auto"``, which is ``"delayed"``) and the validation fraction."""
    pytest.importorskip("dask.array")
    from orbitkernels import dask as adapter, distributed as old
    from orbitkernels.models import DistributedRidge, DistributedRidgeClassifier

    for name in ("fit_dask", "transform_dask", "fit_sample_indices", "FIT_SAMPLE_SIZE"):
        assert getattr(old, name) is getattr(adapter, name)
    assert old.DistributedRidge is DistributedRidge and old.DistributedRidgeClassifier is DistributedRidgeClassifier
    assert adapter.FIT_SAMPLE_SIZE == 10_000
    assert inspect.signature(adapter.transform_dask).parameters["ship"].default == "auto"
    params = DistributedRidgeClassifier().get_params()
    assert params["validation_fraction"] == 0.2 and params["refit"] is True
    flat = _flat("docs/scaling_out.md")
    assert '`ship="auto"`, the default, which is `ship="delayed"`' in flat
    np.testing.assert_array_equal(adapter.fit_sample_indices(50, 10_000, 0), np.arange(50))  # all rows when n <= size


def test_scaling_out_measured_section_states_its_source():
    """The measured section is written by benchmarks/bench_dask.py from results/bench/dask.json: the same answer
    in memory and on dask, at the configuration the page states."""
    text = (ROOT / "docs/scaling_out.md").read_text(encoding="utf-8")
    block = text[text.index("<!-- bench_dask.py:begin -->"):text.index("<!-- bench_dask.py:end -->")]
    res = _json("bench/dask.json")
    heads = {h["name"]: h["ours"] for h in res["headline"]}
    acc = heads["test_accuracy_in_memory"]
    assert acc == heads["test_accuracy_dask"] and heads["prediction_agreement"] == 1.0
    assert block.strip() != "<!-- bench_dask.py:begin -->", "run python benchmarks/bench_dask.py --docs ..."
    assert f"| test accuracy | {acc} | {acc} |" in block and "100.0% identical test predictions" in block
    assert res["config"]["n_components"] == 400 and res["config"]["n_group_samples"] == 16
    assert "400 frequencies × 16 rotations" in " ".join(text.split())


# ------------------------------------------------------------------ architecture


def test_architecture_page_names_what_exists():
    """Every source file docs/architecture.md names exists, and so does every class, function and attribute it
    names in the modules it places them in."""
    text = (ROOT / "docs/architecture.md").read_text(encoding="utf-8")
    src = ROOT / "src" / "orbitkernels"
    for path in set(re.findall(r"`?([\w/]+\.(?:py|md))`?", text)):
        if path.startswith("tests/") or path.startswith("benchmarks/"):
            assert (ROOT / path).exists(), path
        elif "/" in path:
            assert (src / path).exists() or list(src.glob(path)), path
    assert list((src / "experiments" / "notes").glob("*.md"))
    names = {
        "orbitkernels.features._engine": ["ProjectionPlan", "GemmPath", "DataPath", "CyclicFFTPath", "PolarFFTPath",
                                          "CDFPool", "TrigPool", "LinearPool", "EnginePool", "_Workspace"],
        "orbitkernels.groups": ["Group", "ProductGroup", "TrivialGroup", "unit_points", "resolve_elements"],
        "orbitkernels.backends": ["use_numba"],
        "orbitkernels.utils.dispatch": ["dask_call"],
        "orbitkernels.models": ["InvariantSVC", "RidgePath", "cholesky_path", "DistributedRidge",
                                "DistributedRidgeClassifier"],
        "orbitkernels.experiments._common": ["PAPER_SAMPLING", "RidgePath", "pyplot", "mean_std", "seed_from",
                                             "stratified", "kfold_indices", "headline_table"],
        "orbitkernels.experiments._runner": ["ExperimentRun"],
        "orbitkernels.experiments._raj_eval": ["LooRidge"],
        "orbitkernels.experiments._mroueh_rls": ["rls_fit_predict"],
        "orbitkernels.experiments.report": ["render_paper_page", "fill_notes"],
        "orbitkernels.experiments.raj2017": ["CONFIGS", "METHODS", "qm7_gap_values", "_qm7_feature_cell"],
        "orbitkernels.experiments.mroueh2015": ["xperm_config", "mnist_config", "_xperm_cell", "_mnist_left_cells"],
        "orbitkernels.experiments.teo2007": ["MNIST_FULL", "mnist_note_values", "spam_note_values"],
        "orbitkernels.experiments.molecules3d": ["_cell_scope"],
        "orbitkernels.features": ["GroupCDFFeatures", "OrbitFourierFeatures", "OrbitNystroem",
                                  "MolecularOrbitFeatures"],
    }
    for module, attrs in names.items():
        mod = importlib.import_module(module)
        missing = [a for a in attrs if not hasattr(mod, a)]
        assert not missing, f"{module} lacks {missing}"
    from orbitkernels.features import GroupCDFFeatures, _base, _engine
    from orbitkernels.groups import Group

    assert hasattr(_base, "average_over_copies") and hasattr(GroupCDFFeatures, "transform_multi")
    assert all(hasattr(_engine.EnginePool, a) for a in ("pool_into", "fuses_gaussian", "stages"))
    assert hasattr(_engine.ProjectionPlan, "workspace") and hasattr(_engine.LinearPool, "pool_dots_into")
    for attr in ("is_finite", "is_unitary", "is_symmetric", "is_data_dependent", "permutes_coordinates",
                 "cyclic_shape", "is_polar", "n_shifts", "shift_index", "commutes_with", "law_invariant_under",
                 "fuse_product", "act", "act_each", "act_inverse", "inverse", "support", "grid_subgroup", "sample"):
        assert hasattr(Group, attr), attr
    from orbitkernels.backends.numpy import NumpyBackend

    for attr in ("prefers_cache_blocks", "pools_into_numpy", "sparse", "sparse_matmul", "reuses_buffers",
                 "trig_pool", "rbf_pool", "cdf_pool", "to_numpy_into"):
        assert hasattr(NumpyBackend, attr), attr
    assert "DESIGN.md" not in text  # no such file in the repository
    root = Path(__file__).resolve().parents[1]
    citing = [str(p.relative_to(root)) for folder in ("src", "tests", "benchmarks", "examples")
              for p in (root / folder).rglob("*.py") if p.name != Path(__file__).name and "DESIGN.md" in p.read_text()]
    assert not citing, f"cite docs/architecture.md, not the DESIGN.md outside the repository: {citing}"
