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


# ------------------------------------------------------------------ user guide: every promise


def _guide_moved(fmap, X, angle):
    """The user guide's measure of invariance: invariance_error of ``fmap`` when X is turned by ``angle``."""
    from orbitkernels.diagnostics import invariance_error
    from orbitkernels.groups import Discrete, ImageRotation

    turn = ImageRotation((8, 8), angle=Discrete([angle]))
    return invariance_error(fmap, X, turn, n_elements=1, random_state=0)["mean"]


def test_user_guide_exact_invariance_is_where_the_action_is_exact():
    """"Exact invariance needs an average over every element of a finite group whose action is exact": the default's
    64 equispaced angles leave the features unchanged at multiples of 90° only (a grid step interpolates pixels); a
    finite group of interpolated turns is not exact either; all cyclic shifts are; a Discrete law is used whole."""
    from sklearn.datasets import load_digits

    from orbitkernels.diagnostics import invariance_error
    from orbitkernels.features import OrbitFourierFeatures
    from orbitkernels.groups import CyclicShift, Discrete, ImageRotation

    guide = _flat("docs/user_guide.md")
    assert ("Exact invariance needs an average over every element of a finite group whose action is exact "
            "(permutations, cyclic shifts, turns of a square image by multiples of 90°)") in guide
    assert "of the default's 64 equispaced angles, only the multiples of 90° leave them unchanged" in guide
    assert "exact invariance where its action is exact, as above" in guide
    assert "{class}`~orbitkernels.groups.Discrete` for a finite set of values (which makes the average over it exact)" \
        in guide
    X = load_digits().data[:40] / 16.0
    kw = dict(n_components=64, gamma=0.02, random_state=0)
    f = OrbitFourierFeatures(ImageRotation((8, 8)), **kw).fit(X)
    assert len(f.group_elements_) == 64
    assert _guide_moved(f, X, np.pi / 2) < 1e-10 and _guide_moved(f, X, np.pi) < 1e-10
    assert _guide_moved(f, X, 2 * np.pi / 64) > 1e-3  # one of its own 64 angles: not exact
    twelve = OrbitFourierFeatures(ImageRotation((8, 8), n_angles=12), **kw).fit(X)
    assert len(twelve.group_elements_) == 12 and _guide_moved(twelve, X, np.pi / 6) > 1e-3
    shifts = CyclicShift((8, 8))
    cyc = OrbitFourierFeatures(shifts, **kw).fit(X)
    assert len(cyc.group_elements_) == 64
    assert invariance_error(cyc, X, shifts, n_elements=4, random_state=0)["max"] < 1e-10
    three = OrbitFourierFeatures(ImageRotation((8, 8), angle=Discrete([-0.2, 0.0, 0.2])), **kw).fit(X)
    np.testing.assert_allclose(np.sort(three.group_elements_.ravel()), [-0.2, 0.0, 0.2])
    np.testing.assert_allclose(three.group_weights_, 1 / 3)


def test_user_guide_qm7_feature_map_claims_are_the_reproduction():
    """The feature-map table's QM7 claims, from results/raj2017/qm7.json: the Laplacian base kernel beats every
    other row and every paper number; at 2000 features Nyström beats random Fourier features on the Original and
    Sort-Coulomb rows and loses on the LGIKA row."""
    guide = _flat("docs/user_guide.md")
    rows = _json("raj2017/qm7.json")["data"]["rows"]
    cell = {(r["method"], r["dim"]): r for r in rows}
    m = re.search(r"on QM7 the Laplacian kernel is the largest single improvement over the paper's rows \(LGIKA "
                  r"\(RF\): ([\d.]+) RMSE against ([\d.]+) with the Gaussian, the paper ([\d.]+)\)", guide)
    assert m, "the user guide should quote the Laplacian row"
    lap, gauss = cell["lgika_rf_lap", 20000], cell["lgika_rf", 20000]
    assert [float(x) for x in m.groups()] == [round(lap["rmse"], 2), round(gauss["rmse"], 2), gauss["paper_rmse"]]
    others = [v for r in rows if "laplacian" not in r["label"].lower()
              for k, v in r.items() if k.startswith("rmse") and isinstance(v, float)]
    papers = [r[k] for r in rows for k in ("paper_rmse", "paper_rmse_2layer") if r.get(k) is not None]
    assert lap["rmse"] < min(others) and lap["rmse"] < min(papers)
    assert ("in the Raj et al. reproduction (2000 features) it beats random Fourier features on QM7's Original and "
            "Sort-Coulomb rows and loses on the LGIKA row") in guide
    for family, nys_wins in (("orig", True), ("sort", True), ("lgika", False)):
        nys, rf = cell[f"{family}_nys", 2000]["rmse"], cell[f"{family}_rf", 2000]["rmse"]
        assert (nys < rf) == nys_wins, (family, nys, rf)


def test_user_guide_demo_invariance_numbers_are_the_readme():
    """"plain random Fourier features change by 0.88, orbit random Fourier features by 0.12 and GICDF by 0.04
    (README, "The demo")", and GICDF is "the most invariant of the three"."""
    readme = _flat("README.md")
    m = re.search(r"plain RFF ([\d.]+), orbit RFF ([\d.]+), GICDF ([\d.]+)\.", readme)
    assert m, "the README should state the demo's invariance errors"
    demo = [float(x) for x in m.groups()]
    guide = _flat("docs/user_guide.md")
    g = re.search(r"plain random Fourier features change by ([\d.]+), orbit random Fourier features by ([\d.]+) and "
                  r"GICDF by ([\d.]+) \(README, \"The demo\"\)", guide)
    assert g, "the user guide should quote the demo's invariance errors"
    assert [float(x) for x in g.groups()] == [round(v, 2) for v in demo]
    assert demo[2] < demo[1] < demo[0]
    assert "the most invariant of the three in our measurements (README demo" in guide


def test_user_guide_committed_run_details_are_the_files():
    """The GPU check's agreement cases for GICDF (results/bench/gpu.json) and the data of the InvariantSVC fit
    times (results/bench/invariant_svm.json) are what the user guide says they are."""
    guide = _flat("docs/user_guide.md")
    assert ("In the check's agreement cases (the GEMM, FFT and polar paths, float32 and float64) GICDF's features on "
            "the GPU are NumPy's bit for bit") in guide
    cases = [r for r in _json("bench/gpu.json")["agreement"] if r["map"] == "gicdf"]
    assert {(r["engine_path"], r["dtype"]) for r in cases} == {
        (p, d) for p in ("gemm", "fft", "polar") for d in ("float32", "float64")}
    assert all(r["max_abs_diff"] == 0 for r in cases)
    assert "on 200 of scikit-learn's 8×8 digits with sampled shifts, a fit takes" in guide
    config = _json("bench/invariant_svm.json")["results"]["config"]
    assert config["n"] == 200 and "load_digits" in config["data"]
    assert config["transformations"].startswith("ImageTranslation((8, 8)") and "sampled" in config["transformations"]


def test_user_guide_names_and_defaults_are_the_code(monkeypatch):
    """The names, defaults and fallbacks the user guide states: the memory budgets, the four maps' progress bars,
    the thread-count variables, the frequency options, the reproductions' i.i.d. draws, the models' options."""
    import threading

    from orbitkernels.backends import numpy as npbk
    from orbitkernels.backends.torch import TorchBackend
    from orbitkernels.experiments import _common
    from orbitkernels.features import GroupCDFFeatures, MolecularOrbitFeatures, OrbitFourierFeatures, OrbitNystroem
    from orbitkernels.kernels import HaarKernel
    from orbitkernels.models import InvariantLinearClassifier, InvariantSVC, RidgePath
    from orbitkernels.models.invariant_svm import _physical_memory_bytes

    guide = _flat("docs/user_guide.md")
    maps = (OrbitFourierFeatures, OrbitNystroem, GroupCDFFeatures, MolecularOrbitFeatures)
    assert "the estimator's `max_memory_mb` (default 256 MB)" in guide
    for cls in maps + (HaarKernel,):
        params = inspect.signature(cls).parameters
        assert params["max_memory_mb"].default == 256 and params["verbose"].default == 0, cls.__name__
    assert "`verbose=1` on any of the four feature maps draws a bar" in guide
    assert "within its own `max_memory_mb` (default: three quarters of the machine's physical memory)" in guide
    assert InvariantSVC().max_memory_mb is None and InvariantSVC()._budget_bytes() == 0.75 * _physical_memory_bytes()
    # "ORBITKERNELS_NUM_THREADS=n sets how many (else OMP_NUM_THREADS, else every core the process may use)"
    assert "`ORBITKERNELS_NUM_THREADS=n` sets how many (else `OMP_NUM_THREADS`, else every core the process may use)" \
        in guide
    for var in ("ORBITKERNELS_NUM_THREADS", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        monkeypatch.delenv(var, raising=False)
    assert npbk.THREADS_ENV == "ORBITKERNELS_NUM_THREADS" and npbk.pool_threads() == npbk._cores()
    monkeypatch.setenv("OMP_NUM_THREADS", "3")
    assert npbk.pool_threads() == npbk._workers() == 3
    # off the main thread a transform pools its blocks in that thread; its FFTs keep OMP_NUM_THREADS's count
    assert ("a transform called from a thread other than the main one (dask's threaded scheduler, joblib's threading "
            "back-end) pools its blocks in that thread (its FFTs and BLAS products keep `OMP_NUM_THREADS`'s count, "
            "else every core)") in guide
    seen = []
    worker = threading.Thread(target=lambda: seen.append((npbk.pool_threads(), npbk._workers())))
    worker.start()
    worker.join()
    assert seen == [(1, 3)]
    monkeypatch.setenv("ORBITKERNELS_NUM_THREADS", "2")
    assert npbk.pool_threads() == 2
    # frequencies: the same option on the molecular map; the reproductions keep the papers' i.i.d. draws
    assert "{class}`~orbitkernels.features.MolecularOrbitFeatures` takes the same option for its frequencies" in guide
    for cls in (OrbitFourierFeatures, MolecularOrbitFeatures):
        assert inspect.signature(cls).parameters["frequencies"].default == "auto"
        assert cls._parameter_constraints["frequencies"][0].options == {"auto", "orthogonal", "iid"}
    assert "The reproductions keep the papers' i.i.d. draw" in guide and "which the reproductions use" in guide
    assert _common.PAPER_FREQUENCIES == _common.PAPER_SAMPLING == "iid"
    # the models the page names, with the options it names
    assert "{class}`~orbitkernels.models.InvariantLinearClassifier` (`loss=\"fdrop\"` or `\"fscale\"`)" in guide
    assert {"fdrop", "fscale"} <= InvariantLinearClassifier._parameter_constraints["loss"][0].options
    assert {"column_generation", "pegasos"} == InvariantSVC._parameter_constraints["solver"][0].options
    assert callable(RidgePath.loo_residuals)
    # the back-ends: straight copies into the output rows on torch; cache-sized blocks on NumPy only
    assert "(`TorchBackend.to_numpy_into`)" in guide and callable(TorchBackend.to_numpy_into)
    assert npbk.NumpyBackend.prefers_cache_blocks and not TorchBackend.prefers_cache_blocks
    # dask's worker processes (started by a nanny) run with OMP_NUM_THREADS=1: a transform there is on one thread
    assert "dask's worker processes, which set `OMP_NUM_THREADS=1`, run each transform on one thread" in guide
    dask_config = pytest.importorskip("dask.config")
    pytest.importorskip("distributed")
    assert str(dask_config.get("distributed.nanny.pre-spawn-environ")["OMP_NUM_THREADS"]) == "1"


def test_user_guide_nystroem_float32_precision_rule_is_the_code():
    """"when OrbitNystroem's landmark kernel matrix is so ill-conditioned that float32 kernel values would move the
    features by more than 1e-3 of their norm ..., its kernel values are computed in float64 (`precision_` says which;
    the output stays float32; `dtype="float32"` forces float32)"."""
    from orbitkernels.features import OrbitNystroem
    from orbitkernels.groups import CyclicShift

    guide = _flat("docs/user_guide.md")
    m = re.search(r"so ill-conditioned that float32 kernel values would move the features by more than ([\d.e-]+) of "
                  r"their norm \(many landmarks under a wide kernel\), its kernel values are computed in float64 "
                  r"\(`precision_` says which; the output stays float32; `dtype=\"float32\"` forces float32\)", guide)
    assert m, "the user guide should state OrbitNystroem's precision rule"
    assert float(m[1]) == OrbitNystroem.FLOAT32_TOLERANCE
    X = np.random.default_rng(0).random((300, 16)).astype(np.float32)
    kw = dict(gamma=1e-3, n_components=290, random_state=0)  # many landmarks under a wide kernel
    auto = OrbitNystroem(CyclicShift((16,)), **kw).fit(X)
    assert auto.precision_ == "float64" and auto.plan_.compute_dtype(np.dtype(np.float32)) == np.float64
    assert auto.transform(X[:5]).dtype == np.float32
    forced = OrbitNystroem(CyclicShift((16,)), dtype="float32", **kw).fit(X)
    assert forced.plan_.compute_dtype(np.dtype(np.float32)) == np.float32
    assert forced.transform(X[:5]).dtype == np.float32
    well = OrbitNystroem(CyclicShift((16,)), gamma=1.0, n_components=20, random_state=0).fit(X)
    assert well.precision_ == "float32"


def test_readme_demo_invariance_is_exact_at_the_quarter_turns_only():
    """README, "The demo": the orbit features average over 36 rotations by 10°, are exactly invariant to the quarter
    turns (changes of 1e-16) and change by about 0.1 at the other turns, among the 36 or not (the README said exactly
    invariant to all 36). The demo's digits and group: 8x8 digits padded to 12x12, ImageRotation(n_angles=36)."""
    from sklearn.datasets import load_digits

    from orbitkernels.diagnostics import invariance_error
    from orbitkernels.features import OrbitFourierFeatures
    from orbitkernels.groups import ImageRotation

    readme = _flat("README.md")
    assert ("The orbit features average over the 36 rotations by multiples of 10°. Turning a square pixel grid by a "
            "quarter turn moves whole pixels, so they are exactly invariant to the quarter turns (changes of 1e-16); "
            "every other turn, one of the 36 or not, interpolates the pixels, and there the features change by about "
            "0.1.") in readme
    images = load_digits().images[:60]
    X = np.pad(images, ((0, 0), (2, 2), (2, 2))).reshape(len(images), -1) / 16.0
    group = ImageRotation((12, 12), n_angles=36)
    f = OrbitFourierFeatures(group, gamma=0.05, n_components=200, random_state=0).fit(X)
    per = np.asarray(invariance_error(f, X, group, n_elements=None)["per_element"])
    degrees = np.rint(np.rad2deg(group.elements().ravel())).astype(int) % 360
    quarter = degrees % 90 == 0
    assert quarter.sum() == 4 and per[quarter].max() < 1e-12
    assert 0.03 < per[~quarter].min() and per[~quarter].max() < 0.3  # "about 0.1"
