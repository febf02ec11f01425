"""Statistics that committed probe scripts compute from their own variants and that docs/fidelity.md quotes."""
import json
import re
import subprocess
from pathlib import Path

import numpy as np
import pytest
from scipy import stats
from conftest import probe_module

from orbitkernels.experiments.report import ProbeFile, md_cell

ROOT = Path(__file__).resolve().parents[1]


def test_mnist_fig2_mean_over_training_draws(tmp_path):
    """The pixel grid's rows over training draws: mean, sample sd and the 95 % Student-t interval of the mean,
    one summary per classifier, rewritten as draws are added; a single draw gives no summary."""
    fig2 = probe_module("benchmarks/probes/mroueh2015/mnist_fig2.py")
    probes = ProbeFile(tmp_path / "p.json", protocol="q", script="s.py", experiment="mnist")
    gauss = [0.9891, 0.9885, 0.9893]
    for k, a in enumerate(gauss):
        probes.save(fig2.pixel_key(True, draw=k), {"accuracy": a})
    probes.save(fig2.pixel_key(False), {"accuracy": 0.9844})
    probes.save(fig2.pixel_key(True, gurls=True), {"accuracy": 0.5})  # another selection rule: not a draw
    fig2.summarise_draws(probes)
    stored = json.loads((tmp_path / "p.json").read_text())["variants"]
    summaries = [k for k in stored if k.endswith("mean over training draws")]
    assert summaries == ["pixel grid |G|=441 Gaussian RLS, centred rows: mean over training draws"]
    s = stored[summaries[0]]
    half = stats.t.ppf(0.975, 2) * np.std(gauss, ddof=1) / np.sqrt(3)
    assert s["n_draws"] == 3 and s["draws"] == "0 1 2"
    assert s["accuracy"] == pytest.approx(np.mean(gauss))
    assert s["sd_between_draws"] == pytest.approx(np.std(gauss, ddof=1))
    assert (s["ci95_low"], s["ci95_high"]) == pytest.approx((np.mean(gauss) - half, np.mean(gauss) + half))
    assert s["paper"] == 0.9897 and s["paper_inside_ci95"] is bool(np.mean(gauss) + half >= 0.9897)

    # a draw written by another process (a second handle on the file) counts too
    ProbeFile(tmp_path / "p.json", protocol="q", script="s.py", experiment="mnist").save(
        fig2.pixel_key(True, draw=13), {"accuracy": 0.9700})
    fig2.summarise_draws(probes, paper=0.9800)
    s = json.loads((tmp_path / "p.json").read_text())["variants"][summaries[0]]
    assert s["n_draws"] == 4 and s["draws"] == "0 1 2 13"
    assert s["accuracy"] == pytest.approx(np.mean(gauss + [0.97]))
    assert s["paper"] == 0.98 and s["paper_inside_ci95"] is True


def test_fidelity_page_quotes_the_thresholds_range_rows():
    """docs/fidelity.md's sentences on the CDF thresholds' range (Mroueh Fig. 2) quote mnist_fig2.py's band and rows,
    and the rows with s set by hand are within four test digits of the reproduction's s."""
    fig2 = probe_module("benchmarks/probes/mroueh2015/mnist_fig2.py")
    v = json.loads((ROOT / "results/mroueh2015/mnist_fig2_probes.json").read_text())["variants"]
    page = " ".join((ROOT / "docs/fidelity.md").read_text().split())
    band = v[fig2.BAND_KEY]
    assert band["abs_projection_q50"] < band["abs_projection_q99"] < band["auto_range"]
    for text in (f"is {band['auto_range']:.3f} on the pixel grid's centred rows",
                 f"half of the projections lie within ±{band['abs_projection_q50']:.3f}",
                 f"99 % within ±{band['abs_projection_q99']:.3f}",
                 f"{100 * band[fig2.share_varying_key()]:.0f} % of the 50,500 features vary",
                 f"({100 * band[fig2.share_varying_key(0.1)]:.2f} % and "
                 f"{100 * band[fig2.share_varying_key(0.07)]:.0f} % of the features vary)"):
        assert text in page, text

    def pct(key):
        return f"{100 * v[key]['accuracy']:.2f}"

    base = [pct(fig2.pixel_key(g)) for g in (False, True)]
    rows = {s: [pct(fig2.pixel_key(g, value_range=s)) for g in (False, True)] for s in (0.1, 0.07)}
    for text in (f"**{rows[0.1][0]} / {rows[0.1][1]} %** at s = 0.1",
                 f"{rows[0.07][0]} / {rows[0.07][1]} % at s = 0.07",
                 f"against {base[0]} / {base[1]} % with the reproduction's s"):
        assert text in page, text
    assert all(abs(float(a) - float(b)) <= 0.04 for r in rows.values() for a, b in zip(r, base))
    assert all(band[fig2.share_varying_key(s)] > 0.999 for s in (0.1, 0.07))
    # the count is exact: a constant float32 column varies not, whatever its float32 standard deviation says
    F = np.zeros((1000, 3), dtype=np.float32)
    F[:, 1], F[::2, 2] = np.float32(0.0314), 1.0
    assert F.std(axis=0)[1] > 0 and fig2.share_varying(F) == pytest.approx(1 / 3)


def test_linear_svm_probe_gram_matrix_equals_linear_kernel():
    """linear_svm_rmnist.py fits libsvm on the features' Gram matrix (fast at D = 14000) and says that this is the
    linear-kernel SVM on the features: the same predictions on held-out rows at every C of its grid, the C chosen
    on the validation rows only (the test labels never enter the choice)."""
    from sklearn.svm import SVC

    mod = probe_module("benchmarks/probes/raj2017/linear_svm_rmnist.py")
    rng = np.random.default_rng(0)
    F = rng.normal(size=(260, 12)).astype(np.float32)
    y = np.argmax(F[:, :3] + 0.3 * rng.normal(size=(260, 3)), axis=1)
    train, valid, test = np.arange(150), np.arange(150, 200), np.arange(200, 260)
    for C in (0.1, 10.0):
        F64 = F.astype(np.float64)
        direct = SVC(kernel="linear", C=C).fit(F64[train], y[train]).predict(F64[test])
        K = (F[test] @ F[train].T).astype(np.float64)
        gram = SVC(kernel="precomputed", C=C).fit((F[train] @ F[train].T).astype(np.float64), y[train]).predict(K)
        assert np.array_equal(direct, gram)
    out = mod.linear_svm_cell(F, y, train, valid, test, Cs=np.array([0.1, 10.0]), step=25)
    scrambled = mod.linear_svm_cell(F, np.concatenate([y[:200], (y[200:] + 1) % 3]), train, valid, test,
                                    Cs=np.array([0.1, 10.0]), step=25)
    assert out["C"] == scrambled["C"] and out["valid_acc_per_C"] == scrambled["valid_acc_per_C"]
    assert out["accuracy"] > scrambled["accuracy"]
    lib = mod.liblinear_cell(F, y, train, valid, test, Cs=np.array([0.1, 10.0]))
    assert lib["C"] == max(lib["valid_acc_per_C"], key=lib["valid_acc_per_C"].get) and 0 <= lib["accuracy"] <= 100


def test_linear_svm_probe_second_layer_equals_svm_on_its_features():
    """The probe's 2nd-layer SVM works through the layer's Gram matrix and, for the test rows, kernel values against
    the support vectors only: its test accuracy is that of the linear-kernel SVM on the layer's explicit features at
    the γ₂ factor and C it chose."""
    from sklearn.svm import SVC

    from orbitkernels.experiments._raj_eval import WideLayer2, layer2_scale

    mod = probe_module("benchmarks/probes/raj2017/linear_svm_rmnist.py")
    rng = np.random.default_rng(1)
    F = rng.normal(size=(300, 10)).astype(np.float32)
    y = np.argmax(F[:, :3], axis=1)
    train, valid, test = np.arange(150), np.arange(150, 200), np.arange(200, 300)
    cfg = {"n_freq": 200, "factors": [0.25, 1.0], "frequencies": "orthogonal"}
    out = mod.layer2_svm_cell(F, y, train, valid, test, cfg, 0, Cs=np.array([1.0, 10.0]), step=30)
    wide = WideLayer2(F, 200, 0, frequencies="orthogonal")
    g = out["layer2_factor"] / layer2_scale(F, train, 0)

    def phi(rows):
        return np.concatenate([wide._phi(P, g) for P in wide._blocks(rows)], axis=1).astype(np.float64)

    fit_rows = np.concatenate([train, valid])
    pred = SVC(kernel="linear", C=out["C"]).fit(phi(fit_rows), y[fit_rows]).predict(phi(test))
    assert out["accuracy"] == pytest.approx(100.0 * np.mean(pred == y[test]))


def test_qm7_zero_mean_rows_are_their_folds():
    """qm7_zero_mean.py's row summaries (which docs/fidelity.md quotes) are the mean of their five stored folds, and
    the row with the constant chosen by leave-one-out takes, per fold, the zero-mean fold where its leave-one-out RMSE
    is below the recorded cell's (training mean) and the recorded fold otherwise."""
    path = ROOT / "results/raj2017/qm7_zero_mean_probes.json"
    if not path.exists():
        pytest.skip("no zero-mean probe results")
    v = json.loads(path.read_text())["variants"]
    cells = json.loads((ROOT / "results/raj2017/qm7.json").read_text())["cells"]
    rows = [k for k in v if k.endswith("zero mean: the row (mean of the five folds' RMSE)")]
    assert rows
    for key in rows:
        label = key[:-len(": the row (mean of the five folds' RMSE)")]
        folds = [v[f"{label}: outer fold {k}"] if f"{label}: outer fold {k}" in v else v[f"zero mean: outer fold {k}"]
                 for k in range(5)]
        assert v[key]["rmse"] == pytest.approx(np.mean([f["rmse"] for f in folds]))
        assert v[key]["recorded_row_rmse"] == pytest.approx(np.mean([f["recorded_fold_rmse"] for f in folds]))
    loo = v["Sort-Coulomb exact kernel ridge, constant by leave-one-out: the row"]
    want = []
    for k in range(5):
        z, cell = v[f"zero mean: outer fold {k}"], cells[f"sort_krr|None|{k}"]
        mean_loo = min(min(t) for t in cell["inner_cv_rmse"].values())
        want.append(z["rmse"] if z["loo_rmse"] < mean_loo else cell["rmse"])
    assert loo["rmse"] == pytest.approx(np.mean(want))
    control = v["control: outer fold 1, training mean"]["rmse"]
    assert control == pytest.approx(cells["sort_krr|None|1"]["rmse"], rel=1e-9)


def test_fidelity_page_quotes_the_gpu_run_over_training_draws():
    """docs/fidelity.md's paragraph on Mroueh Fig. 2 over training draws quotes mnist_fig2_draws.py's results."""
    page = " ".join((ROOT / "docs/fidelity.md").read_text().split())
    res = json.loads((ROOT / "results/mroueh2015/mnist_fig2_draws.json").read_text())
    g, lin = res["summary"]["gaussian"], res["summary"]["linear"]
    assert g["n_draws"] == lin["n_draws"] == len(res["draws"])

    def pct(x):
        return f"{100 * x:.2f}"

    expected = (f"It ran **{g['n_draws']} draws**", f"the Gaussian-kernel RLS averages **{pct(g['mean'])} %** (95 % "
                f"interval [{pct(g['ci95_low'])}, {pct(g['ci95_high'])}], draws from {pct(g['min'])} to "
                f"{pct(g['max'])} %, one of {g['n_draws']} at or above 98.97 %)",
                f"paper's linear RLS **{pct(lin['mean'])} %** ([{pct(lin['ci95_low'])}, {pct(lin['ci95_high'])}], at "
                f"most {pct(lin['max'])} %)",
                f"draws 0-6 give the CPU rows to within {res['cpu_check']['test_digits']} test digits")
    for text in expected:
        assert text in page, text
    assert g["draws_at_or_above_paper"] == 1 and lin["draws_at_or_above_paper"] == 0
    # the run's two sessions: the page says the draws after the first 61 moved neither mean by more than 0.01 point
    assert g["n_draws"] == 100 and "draws 0-60 in one session lent a GPU, 61-99 in the next" in page
    first = {clf: np.mean([res["draws"][str(k)][clf]["accuracy"] for k in range(61)]) for clf in ("gaussian", "linear")}
    assert (f"moved neither mean by more than 0.01 ({pct(first['gaussian'])} / {pct(first['linear'])} % over the first "
            "61)") in page
    assert abs(first["gaussian"] - g["mean"]) <= 1e-4 and abs(first["linear"] - lin["mean"]) <= 1e-4
    assert (f"The paper's 98.97 % is {100 * (0.9897 - g['mean']):.2f} above the best row's mean over the paper's own "
            f"protocol, and {100 * (0.9897 - lin['mean']):.2f} above its own classifier's") in page
    assert sorted(res["cpu_check"]["rows"]) == [str(k) for k in range(7)]
    f32 = json.loads((ROOT / "results/mroueh2015/mnist_fig2_draws_gram32.json").read_text())
    s32 = f32["summary"]
    assert (f"over {s32['gaussian']['n_draws']} draws gave {pct(s32['gaussian']['mean'])} % / "
            f"{pct(s32['linear']['mean'])} %") in page
    assert f"up to {f32['cpu_check']['test_digits']} test digits below the CPU rows" in page
    assert f"({np.median([r['seconds'] for r in res['draws'].values()]):.1f} s a draw on an H200" in page
    assert res["setup"]["gpu"] == f32["setup"]["gpu"] == "NVIDIA H200"
    # the RLS on the CPU's float32 and float64 Gram matrices of draw 0 (gram_precision.py)
    v = json.loads((ROOT / "results/mroueh2015/gram_precision_probes.json").read_text())["variants"]
    l32, g32 = v["linear, Gram from float32 products"], v["Gaussian, factor 0.5, Gram from float32 products"]
    l64, g64 = v["linear, Gram from float64 products"], v["Gaussian, factor 0.5, Gram from float64 products"]
    assert (f"{pct(l32['cholesky_accuracy'])} against {pct(l32['clipped_accuracy'])} % for the linear RLS (the centred "
            f"matrix is indefinite down to {l32['min_eigenvalue']:.1e}, below {l32['alphas_below_abs_min_eigenvalue']} "
            "of the grid's 9 α but not the chosen one)") in page
    assert l32["clipped_rel_lambda"] == l32["cholesky_rel_lambda"] and l32["min_eigenvalue"] < 0
    assert l32["alpha_min"] * (l32["clipped_rel_lambda"] / 1e-7) * 0.999 > abs(l32["min_eigenvalue"])  # the chosen α
    assert (f"{pct(g32['cholesky_accuracy'])} against {pct(g32['clipped_accuracy'])} % for the Gaussian-kernel RLS at "
            "draw 0's width (positive definite)") in page and g32["min_eigenvalue"] > 0
    assert all(r["clipped_accuracy"] == r["cholesky_accuracy"] for r in (l64, g64))
    d0 = res["draws"]["0"]
    assert (l64["clipped_accuracy"], g64["clipped_accuracy"]) == (d0["linear"]["accuracy"], d0["gaussian"]["accuracy"])
    assert (f"From float64 products draw 0 gives {pct(l64['clipped_accuracy'])} / {pct(g64['clipped_accuracy'])} % "
            "(linear / Gaussian) on the CPU and the same on the device") in page
    # the features' check before the draws ran in the float32 run (the same features code as the float64 one)
    check = f32["setup"]["cpu_rows_check"]
    m = re.search(r"Draw 0's first (\d+) rows have the CPU probe's features \(a count moved in ([\d.e-]+) of the "
                  r"entries\)", page)
    assert m and int(m[1]) == check["rows"] and float(m[2]) == float(f"{check['share_moved']:.1e}")


def test_teo_support_vector_ratios_by_size():
    """support_vectors.py's ratios by training size: the 50/class keys (no size prefix) and the others, a draw
    counted only where all three fits ran, the mean over draws; and docs/fidelity.md's table of them is the file's."""
    sv = probe_module("benchmarks/probes/teo2007/support_vectors.py")

    def fits(inv, mc, ovo, inv_act=1, mc_act=2):
        return {"Invar-SVM eps=0.1, C": {"transformed_vectors": inv, "active_constraints": inv_act},
                "VIR-SVM multi-class eps=0.1, C": {"transformed_vectors": mc, "active_constraints": mc_act},
                "VIR-SVM libsvm one-vs-one, C": {"transformed_vectors": ovo}}

    variants = {}
    for prefix, f in (("draw0", fits(8, 10, 16)), ("draw1", fits(6, 10, 12, 3, 4)), ("n10 draw0", fits(1, 4, 2))):
        variants.update({f"{prefix} {k}": v for k, v in f.items()})
    variants["n10 draw1 Invar-SVM eps=0.1, C"] = {"transformed_vectors": 1, "active_constraints": 1}  # incomplete
    variants["draw0 Invar-SVM eps=0.5, C"] = {"transformed_vectors": 1, "active_constraints": 1}  # another ε
    out = sv.ratios_by_size(variants)
    assert list(out) == [10, 50]
    assert out[10] == {"draws": [0], "vectors": 0.25, "vectors_ovo": 0.5, "active": 0.5}
    assert out[50]["draws"] == [0, 1]
    assert (out[50]["vectors"], out[50]["vectors_ovo"], out[50]["active"]) == pytest.approx((0.7, 0.5, 0.625))

    v = json.loads((ROOT / "results/teo2007/support_vectors_probes.json").read_text())["variants"]
    page = " ".join((ROOT / "docs/fidelity.md").read_text().split())
    rows = sv.ratios_by_size(v)
    assert {10, 20, 30, 40, 50, 100} <= set(rows)
    for size, r in rows.items():
        line = (f"| {size} | {len(r['draws'])} | {r['vectors']:.2f} | {r['vectors_ovo']:.2f} | {r['active']:.2f} |")
        assert line in page, line
        err = {m: np.mean([v[sv.variant_key(size, d, fit)]["error"] for d in r["draws"]])
               for m, fit in (("Invar", "Invar-SVM eps=0.1, C"), ("VIR", "VIR-SVM multi-class eps=0.1, C"))}
        assert abs(err["Invar"] - err["VIR"]) < 0.004  # "the same test error to within 0.4 point"


def test_teo_support_vector_ratios_by_hyperparameters():
    """support_vectors.py's ratios over the selection grid of (γ, C): keys away from the reproduction's (γ, C) carry
    their values, the reproduction's own keep none (and are read as its grid point), a point counts only with both
    column-generation fits."""
    sv = probe_module("benchmarks/probes/teo2007/support_vectors.py")
    assert sv.variant_key(50, 0, "x") == "draw0 x" and sv.variant_key(10, 1, "x", 0.02, 10.0) == "n10 draw1 x"
    assert sv.variant_key(50, 0, "x", 0.04, 1.0) == "gamma=0.04 C=1 draw0 x"
    inv, vir = "Invar-SVM eps=0.1, C", "VIR-SVM multi-class eps=0.1, C"
    variants = {sv.variant_key(50, 0, inv): {"transformed_vectors": 8, "active_constraints": 3, "error": 0.05},
                sv.variant_key(50, 0, vir): {"transformed_vectors": 10, "active_constraints": 4, "error": 0.06},
                sv.variant_key(50, 0, inv, 0.01, 100.0): {"transformed_vectors": 1, "active_constraints": 1,
                                                           "error": 0.1},
                sv.variant_key(50, 0, vir, 0.01, 100.0): {"transformed_vectors": 4, "active_constraints": 2,
                                                           "error": 0.2},
                sv.variant_key(50, 0, inv, 0.04, 1.0): {"transformed_vectors": 1, "active_constraints": 1,
                                                         "error": 0.1}}  # no VIR-SVM fit: not counted
    out = sv.ratios_by_hyperparameters(variants)
    assert set(out) == {(0.02, 10.0), (0.01, 100.0)}
    assert out[(0.02, 10.0)] == {"vectors": 0.8, "active": 0.75, "error_invar": 0.05, "error_vir": 0.06}
    assert out[(0.01, 100.0)]["vectors"] == 0.25 and out[(0.01, 100.0)]["active"] == 0.5
    ovo = "VIR-SVM libsvm one-vs-one, C"
    variants[sv.variant_key(50, 0, ovo)] = {"transformed_vectors": 16}
    variants["gamma=0.01 C=100 " + sv.variant_key(50, 0, ovo)] = {"transformed_vectors": 2}
    # the grid's keys are not read as training sizes or draws: 50 per class is the reproduction's (γ, C) alone
    assert sv.ratios_by_size(variants) == {50: {"draws": [0], "vectors": 0.8, "vectors_ovo": 0.5, "active": 0.75}}


def test_teo_hyperparameter_grid_table_and_choices():
    """docs/fidelity.md's table over the (γ, C) grid is support_vectors.py's file, every point has its validation
    fits, the validation split's choices are the ones the page names (Invar-SVM's is the reproduction's), and the
    ratios it quotes at those choices are the file's."""
    sv = probe_module("benchmarks/probes/teo2007/support_vectors.py")
    v = json.loads((ROOT / "results/teo2007/support_vectors_probes.json").read_text())["variants"]
    page = " ".join((ROOT / "docs/fidelity.md").read_text().split())
    rows = sv.ratios_by_hyperparameters(v)
    assert len(rows) == len(sv.GRID_GAMMAS) * len(sv.GRID_CS) == 9
    inv_fit, vir_fit = "Invar-SVM eps=0.1, C", "VIR-SVM multi-class eps=0.1, C"
    for (g, c), r in rows.items():
        iv, vv = (v[sv.select_key(m, g, c)]["error"] for m in ("Invar-SVM", "VIR-SVM multi-class"))
        inv, vir = (v[sv.variant_key(50, 0, f, g, c)] for f in (inv_fit, vir_fit))
        line = (f"| {g:g} | {c:g} | {100 * iv:.2f} / {100 * vv:.2f} | {100 * r['error_invar']:.2f} / "
                f"{100 * r['error_vir']:.2f} | {inv['transformed_vectors']} / {vir['transformed_vectors']} | "
                f"{r['vectors']:.2f} | {inv['active_constraints']} / {vir['active_constraints']} | {r['active']:.2f} |")
        assert line in page, line
    teo = json.loads((ROOT / "results/teo2007/mnist.json").read_text())["data"]["selected"]["Invar-SVM"]
    assert sv.chosen(v, "Invar-SVM") == (teo["gamma"], teo["C"]) == (0.02, 10.0)
    # the probe's selection fit is the reproduction's: the same split, solver and point
    assert v[sv.select_key("Invar-SVM", 0.02, 10.0)]["error"] == teo["validation_error"]
    assert f"(0.02, 10) for Invar-SVM, the reproduction's choice ({100 * teo['validation_error']:.2f} %" in page
    g, c = sv.chosen(v, "VIR-SVM multi-class")
    assert (g, c) == (0.02, 1.0)
    chosen, narrow = (v[sv.select_key("VIR-SVM multi-class", *p)]["error"] for p in ((g, c), (0.04, 10.0)))
    assert (f"(0.02, 1) for the multi-class VIR-SVM ({100 * chosen:.2f} %)" in page
            and f"{round((narrow - chosen) * 2000)} validation digits of the 2000 behind VIR-SVM's choice "
                f"({100 * narrow:.2f} % against {100 * chosen:.2f} %)" in page)
    inv = v[sv.variant_key(50, 0, inv_fit)]
    for other, quoted in (((g, c), ("vectors", "active")), ((0.04, 10.0), ("active",))):
        vir = v[sv.variant_key(50, 0, vir_fit, *other)]
        if "vectors" in quoted:
            assert f"**{inv['transformed_vectors'] / vir['transformed_vectors']:.2f}**" in page
        assert f"**{inv['active_constraints'] / vir['active_constraints']:.2f}**" in page
    assert f"with test errors of {100 * inv['error']:.2f} and {100 * rows[(g, c)]['error_vir']:.2f} %" in page

    def pair(draw, point):
        i, w = v[sv.variant_key(50, draw, inv_fit)], v[sv.variant_key(50, draw, vir_fit, *point)]
        return i["transformed_vectors"] / w["transformed_vectors"], i["active_constraints"] / w["active_constraints"]

    ch, ti = [pair(d, (g, c)) for d in (1, 2)], [pair(d, (0.04, 10.0)) for d in (1, 2)]
    c1 = [sv.ratios_by_hyperparameters(v, d)[(gg, 1.0)] for d in (1, 2) for gg in sv.GRID_GAMMAS]
    ei, ev = [x["error_invar"] for x in c1], [x["error_vir"] for x in c1]
    assert (f"at the validation's points {ch[0][0]:.2f} / {ch[1][0]:.2f} of the distinct vectors and {ch[0][1]:.2f} / "
            f"{ch[1][1]:.2f} of the active constraints, against the narrower kernel {ti[0][1]:.2f} / {ti[1][1]:.2f} "
            f"of the constraints ({ti[0][0]:.2f} / {ti[1][0]:.2f} of the vectors); at C = 1 Invar-SVM's test error is "
            f"again {100 * min(ei):.1f}-{100 * max(ei):.1f} % against VIR-SVM's {100 * min(ev):.1f}-"
            f"{100 * max(ev):.1f} %") in page
    assert min(ei) > max(ev)  # Invar-SVM underfits at C = 1 on every draw and γ


def test_gpu_draws_run_gives_the_results_page_its_cells():
    """mnist_fig2_draws.py's cells on the results page are its summary's means (float64 Gram products only: the
    float32 run is a finding on the device's arithmetic, and gets none), and the committed file holds them."""
    draws = probe_module("benchmarks/probes/mroueh2015/mnist_fig2_draws.py")
    res = json.loads((ROOT / "results/mroueh2015/mnist_fig2_draws.json").read_text())
    cells = draws.headline(res["summary"])
    assert res["headline"] == cells and [c["ours"] for c in cells] == [res["summary"][k]["mean"]
                                                                         for k in ("linear", "gaussian")]
    assert all(c["paper"] == 0.9897 and c["better"] == "higher" for c in cells)
    assert f"mean over {len(res['draws'])} training draws" in cells[0]["name"] and "[beyond paper]" in cells[1]["name"]
    row = {"linear": {"accuracy": 0.98}, "gaussian": {"accuracy": 0.985}}
    for gram, n_cells in (("Gram matrices from float64 products", 2), ("Gram matrices from float32 products", 0)):
        store = {"draws": {"0": row, "1": row}, "gram": gram}
        draws.refresh(store)
        assert len(store["headline"]) == n_cells and store["summary"]["linear"]["n_draws"] == 2
    assert not json.loads((ROOT / "results/mroueh2015/mnist_fig2_draws_gram32.json").read_text()).get("headline")
    page = (ROOT / "docs/results.md").read_text()
    assert all(f"| {md_cell(c['name'])} | {c['ours']:.4g} | 0.9897 | higher | below |" in page for c in cells)


def test_hyperkernel_seeds_paragraph_quotes_its_probe():
    """docs/fidelity.md's paragraph on the hyperkernel over first-layer draws (Raj Table 2, LGIKA (RF)) quotes
    hyperkernel_seeds.py's cells and its summary, which is the mean of those cells and seed 0's recorded ones."""
    hs = probe_module("benchmarks/probes/raj2017/hyperkernel_seeds.py")
    v = json.loads((ROOT / "results/raj2017/hyperkernel_seeds_probes.json").read_text())["variants"]
    cells = json.loads((ROOT / "results/raj2017/rotated_mnist.json").read_text())["cells"]
    s = v[hs.SUMMARY]
    seeds = s["seeds"]
    assert seeds == list(range(len(seeds))) and len(seeds) == 9
    first = [cells["lgika_rf_r100_qmc|14000"]["accuracy"]] + [v[hs.first_layer_key(k)]["accuracy"] for k in seeds[1:]]
    hyper = [cells["hyper|lgika_rf_r100_qmc|14000"]["accuracy"]] + [v[hs.hyper_key(k)]["accuracy"] for k in seeds[1:]]
    assert (s["first_layer_mean"], s["accuracy"]) == pytest.approx((np.mean(first), np.mean(hyper)))
    assert s["hyper_ci95"] == pytest.approx(hs.t_interval(hyper)) and s["first_layer_ci95"] == pytest.approx(
        hs.t_interval(first))
    assert all(v[hs.first_layer_key(k)]["accuracy"] == v[hs.first_layer_key(k)]["iid_rotations_accuracy"]
               for k in (1, 2))
    assert s["seeds_at_or_above_paper"] == 0 and max(hyper) < 97.18 and s["hyper_ci95"][1] < 97.18
    page = " ".join((ROOT / "docs/fidelity.md").read_text().split())
    f1, h1, h2 = (v[hs.first_layer_key(1)], v[hs.hyper_key(1)], v[hs.hyper_key(2)])
    lo, hi = s["hyper_ci95"]
    for text in (f"giving its {f1['accuracy']:.3f} and {v[hs.first_layer_key(2)]['accuracy']:.3f} % again",
                 f"**{h1['accuracy']:.3f} %** (γ₂ factor {h1['layer2_factor']:g})", f"**{h2['accuracy']:.3f} %**",
                 f"and {min(hyper[3:]):.2f}-{max(hyper[3:]):.2f} % on seeds 3-{seeds[-1]}",
                 f"Over the {len(seeds)} draws the first layer averages {s['first_layer_mean']:.2f} %",
                 f"the hyperkernel **{s['accuracy']:.2f} %** ({min(hyper):.2f}-{max(hyper):.2f}; 95 % interval of "
                 f"the mean [{lo:.2f}, {hi:.2f}])",
                 f"a gain of {s['hyper_gain_mean']:.2f} where",
                 f"({max(hyper) - min(hyper):.2f} points against {max(first) - min(first):.2f})",
                 f"the row's mean is {97.18 - s['accuracy']:.2f} below the paper"):
        assert text in page, text
    assert h2["layer2_factor"] == cells["hyper|lgika_rf_r100_qmc|14000"]["layer2_factor"] != h1["layer2_factor"]
    chosen = {cells["hyper|lgika_rf_r100_qmc|14000"]["layer2_factor"]} | {v[hs.hyper_key(k)]["layer2_factor"]
                                                                           for k in seeds[1:]}
    assert chosen == {1.0, 0.25, 0.0625} and "picks γ₂ factors of 1, 1/4 and 1/16 on different draws" in page
    valid = [max(a) for a in cells["hyper|lgika_rf_r100_qmc|14000"]["valid_acc"].values()]
    assert max(valid) - min(valid) <= 0.001 + 1e-12


def test_hyperkernel_seeds_t_interval():
    """The summary's interval: mean ± t(0.975, n - 1) s / sqrt(n), none under three values."""
    hs = probe_module("benchmarks/probes/raj2017/hyperkernel_seeds.py")
    assert hs.t_interval([1.0, 2.0]) is None
    half = 4.302652729911275 / np.sqrt(3)  # t(0.975, 2), sd 1
    assert hs.t_interval([1.0, 2.0, 3.0]) == pytest.approx([2.0 - half, 2.0 + half])


def test_mroueh_page_names_where_the_draws_ran(tmp_path):
    """The mnist section of the Mroueh page shows the draws run's cells and names its GPU, or its device when the run
    had none (``--device cpu``); a run without cells adds nothing."""
    from orbitkernels.experiments import mroueh2015

    cells = [{"name": "mean over 2 training draws, |G|=441", "ours": 0.98, "paper": 0.9897, "better": "higher"}]
    path = tmp_path / mroueh2015.DRAWS_FILE
    for setup, shown in (({"gpu": "NVIDIA H200", "device": "cuda:0"}, "NVIDIA H200"), ({"gpu": None, "device": "cpu"},
                                                                                        "cpu")):
        path.write_text(json.dumps({"headline": cells, "setup": setup, "command": "python x.py"}))
        lines = mroueh2015._draws_lines(tmp_path)
        assert f"the mean over training draws; {shown}, `python x.py`" in lines[0]
        assert "| mean over 2 training draws, \\|G\\|=441 | 0.9800 | 0.9897 | higher |" in lines
    path.write_text(json.dumps({"headline": [], "setup": {}, "command": "c"}))
    assert mroueh2015._draws_lines(tmp_path) == []


def test_unit_norm_paragraph_quotes_its_probes():
    """docs/fidelity.md's table of unit-norm digits (Raj Table 2) is rmnist_unit_norm.py's cells, beside the raw
    cells of orig_rf_gamma.py and lgika_gamma_edge.py; the control recomputes the recorded Original (RF) cell."""
    un = probe_module("benchmarks/probes/raj2017/rmnist_unit_norm.py")
    v = json.loads((ROOT / "results/raj2017/rmnist_unit_norm_probes.json").read_text())["variants"]
    orig = json.loads((ROOT / "results/raj2017/orig_rf_gamma_probes.json").read_text())["variants"]
    edge = json.loads((ROOT / "results/raj2017/lgika_gamma_edge_probes.json").read_text())["variants"]
    cells = json.loads((ROOT / "results/raj2017/rotated_mnist.json").read_text())["cells"]
    control = v["Original (RF), raw digits, factor 1 (the recorded cell's protocol: control)"]
    recorded = (cells["orig_rf|14000"]["accuracy"], orig["factor 1"]["valid_acc"])
    assert (control["accuracy"], control["valid_acc"]) == recorded

    def pair(x):
        return f"{x['valid_acc']:g}, {x['accuracy']:.2f}"

    scaled_orig = [pair(v[f"Original (RF), unit-norm digits, factor {f:g}"]) for f in un.ORIG_FACTORS]
    scaled_lgika = [pair(v[un.lgika_key(f)]) for f in un.LGIKA_FACTORS]
    raw_orig = [pair(orig[f"factor {f:g}"]) for f in (0.5, 1.0, 2.0)]
    raw_lgika = [pair(edge[f"LGIKA (RF), D=14000, r=100 qmc, factor {f:g}"]) for f in (2, 4)]
    page = (ROOT / "docs/fidelity.md").read_text()
    rows = [f"| {' | '.join(raw_orig)} | | 87.75 |",
            f"| {' | '.join(scaled_orig)} | | 87.75 |".replace("87.97", "**87.97**"),
            f"| | | {' | '.join(raw_lgika)} | 96.83 |",
            f"| | {' | '.join(scaled_lgika)} | 96.83 |".replace("97.12", "**97.12**").replace("97.23", "**97.23**")]
    for r in rows:
        assert r in page, r
    best_orig = max(un.ORIG_FACTORS, key=lambda f: v[f"Original (RF), unit-norm digits, factor {f:g}"]["valid_acc"])
    assert v[f"Original (RF), unit-norm digits, factor {best_orig:g}"]["accuracy"] > 87.75 > control["accuracy"]
    tied = [f for f in un.LGIKA_FACTORS if v[un.lgika_key(f)]["valid_acc"] == max(v[un.lgika_key(g)]["valid_acc"]
                                                                                   for g in un.LGIKA_FACTORS)]
    assert tied == [1.0, 2.0] and "the two factors tied on validation" in page
    assert min(v[un.lgika_key(f)]["accuracy"] for f in tied) > 96.83



def test_unit_norm_rows_of_the_reproduction_are_on_the_page_and_repeat_the_probe():
    """Table 2's scaled rows (orig_rf_unit, lgika_rf_r100_qmc_unit): their first layers repeat the probe's cells at
    the γ factor the runner's selection chose, the validation split prefers them to their raw twins (so the results
    page shows them), and docs/fidelity.md's table of both rows' layers is the results file's cells."""
    un = probe_module("benchmarks/probes/raj2017/rmnist_unit_norm.py")
    v = json.loads((ROOT / "results/raj2017/rmnist_unit_norm_probes.json").read_text())["variants"]
    res = json.loads((ROOT / "results/raj2017/rotated_mnist.json").read_text())
    cells = res["cells"]
    orig, lgika = cells["orig_rf_unit|14000"], cells["lgika_rf_r100_qmc_unit|14000"]
    assert orig["gamma_factor"] == cells["select|orig_rf_unit"]["gamma_factor"] == 1.0
    assert lgika["gamma_factor"] == cells["select|lgika_rf_unit"]["gamma_factor"] == 2.0
    assert orig["accuracy"] == v["Original (RF), unit-norm digits, factor 1"]["accuracy"]
    assert lgika["accuracy"] == v[un.lgika_key(2.0)]["accuracy"]
    best = {k: max(max(x) for x in cells[k]["valid_acc"].values()) for k in
            ("orig_rf|14000", "orig_rf_unit|14000", "lgika_rf_r100_qmc|14000", "lgika_rf_r100_qmc_unit|14000")}
    assert best["orig_rf_unit|14000"] > best["orig_rf|14000"]
    assert best["lgika_rf_r100_qmc_unit|14000"] > best["lgika_rf_r100_qmc|14000"]
    # the Nyström row's scaled twin: the scaled LGIKA (RF) row's law and γ, better on validation, on the page
    nys, raw = cells["lgika_nys_r100_qmc_unit|7000"], cells["lgika_nys_r100_qmc|7000"]
    assert (nys["law"], nys["gamma_factor"]) == (lgika["law"], lgika["gamma_factor"])
    nys_valid, raw_valid = (max(max(x) for x in c["valid_acc"].values()) for c in (nys, raw))
    assert nys_valid > raw_valid
    page_text = " ".join((ROOT / "docs/fidelity.md").read_text().split())
    assert f"It wins on validation ({nys_valid:g} against {raw_valid:g})" in page_text
    secs = [cells[k]["seconds"] for k in ("lgika_nys_r100_qmc_unit|2000", "lgika_nys_r100_qmc_unit|7000",
                                          "hyper|lgika_nys_r100_qmc_unit|7000", "wide|lgika_nys_r100_qmc_unit|7000",
                                          "orf|lgika_nys_r100_qmc_unit|7000")]
    stated = (f"took {secs[0]:.0f} s (D = 2000), {secs[1]:.0f} s (D = 7000), {secs[2]:.0f} s (exact hyperkernel), "
              f"{secs[3]:.0f} s (i.i.d. layer) and {secs[4]:.0f} s (orthogonal layer), {sum(secs) / 60:.0f} minutes")
    assert stated in page_text, stated
    heads = {h["name"]: h["ours"] for h in res["headline"]}
    tag = "digits scaled to unit norm (chosen on validation)"
    assert heads[f"Original (RF) accuracy % (D=14000, {tag})"] == orig["accuracy"]
    assert heads[f"LGIKA (RF) accuracy % (D=14000, r=100 qmc, {tag})"] == lgika["accuracy"]

    def line(label, digits, key, paper):
        acc = [f"{cells[p + key]['accuracy']:.2f}" if p + key in cells else "—"
               for p in ("", "wide|", "orf|", "hyper|")]
        return f"| {label} | {digits} | {' | '.join(acc)} | {paper} |"
    page = (ROOT / "docs/fidelity.md").read_text()
    for label, key, paper in (("Original (RF)", "orig_rf|14000", "87.75 / 88.01"),
                              ("LGIKA (RF), r = 100 low-variance", "lgika_rf_r100_qmc|14000", "96.83 / 97.18"),
                              ("LGIKA (Nys), r = 100 low-variance", "lgika_nys_r100_qmc|7000", "96.81 / 97.21")):
        assert line(label, "raw", key, paper) in page, line(label, "raw", key, paper)
        unit = line(label, "unit norm (chosen)", key.replace("|", "_unit|"), paper)
        assert unit in page, unit
    # the γ₂ grid past its edge (factor 4): validation falls there, the choice and the cells stay
    at4, at1 = [], []
    for part, prefix in (("orf", "orf|"), ("hyper", "hyper|")):
        p = v[un.layer2_key(part)]
        cell = cells[prefix + "lgika_rf_r100_qmc_unit|14000"]
        shared = {f"{float(f):g}": max(a) for f, a in cell["valid_acc"].items()}
        by = {f: float(a) for f, a in (x.split(": ") for x in p["valid_by_factor"].split(", "))}
        assert {f: by[f] for f in shared} == shared  # the recorded cell's validation on the shared factors
        assert by["4"] < shared["1"] and (p["layer2_factor"], p["accuracy"]) == (1.0, cell["accuracy"])
        at4.append(by["4"])
        at1.append(shared["1"])
    stated = f"({at4[0]:g} and {at4[1]:g} against {at1[0]:g} and {at1[1]:g} at factor 1)"
    assert stated in " ".join(page.split()), stated


def _law_table_lines():
    """docs/fidelity.md's table of the 2nd layer's frequency law chosen on held-out data, from the results files."""
    from orbitkernels.experiments import raj2017

    lines = []
    qm7 = json.loads((ROOT / "results/raj2017/qm7.json").read_text())
    for row in qm7["data"]["rows"]:
        if row.get("rmse_2layer_chosen") is None:
            continue
        key = f"{row['method']}|{row['dim']}"
        loo = [[min(min(v) for v in qm7["cells"][f"{part}|{key}|{k}"]["loo_rmse"].values())
                for part in ("wide", "orf")] for k in range(5)]
        lines.append(f"| QM7 {row['label']}, D = {row['dim']} | {', '.join(f'{w:.2f} / {o:.2f}' for w, o in loo)} "
                     f"| {', '.join(row['layer2_chosen'])} | {row['rmse_2layer_paper']:.2f} "
                     f"| {row['rmse_2layer_orth']:.2f} | **{row['rmse_2layer_chosen']:.2f}** "
                     f"| {row['paper_rmse_2layer']:.2f} |")
    mnist = json.loads((ROOT / "results/raj2017/rotated_mnist.json").read_text())
    heads = raj2017._image_heads(mnist["data"]["rows"], raj2017.PAPER_MNIST)
    for row in mnist["data"]["rows"]:
        if row.get("accuracy_2layer_chosen") is None:
            continue
        key = f"{row['method']}|{row['dim']}"
        valid = [raj2017._best_valid(mnist["cells"][f"{part}|{key}"]) for part in ("wide", "orf")]
        start = f"{raj2017.LABELS[raj2017._paper_row(row['method'])]} accuracy % (D={row['dim']}"
        shown = any(h["ours"] == row["accuracy"] and h["name"].startswith(start) for h in heads)
        digits = "unit norm" if row.get("scaling") else "raw"
        lines.append(f"| Rotated MNIST {row['label'].split(',')[0]}, D = {row['dim']}, {digits} digits"
                     f"{' (the headline row)' if shown else ''} | {valid[0]:g} / {valid[1]:g} "
                     f"| {row['layer2_chosen']} "
                     f"| {row['accuracy_2layer_paper']:.2f} | {row['accuracy_2layer_orth']:.2f} "
                     f"| **{row['accuracy_2layer_chosen']:.2f}** | {row['paper_2layer']:.2f} |")
    return lines


def test_frequency_law_table_is_the_results_files():
    """The 2nd layer's frequency law chosen on held-out data (docs/fidelity.md): every row with both laws, its held-out
    scores, the law chosen, the three layers' numbers and the paper's, as the results files hold them."""
    page = (ROOT / "docs/fidelity.md").read_text()
    lines = _law_table_lines()
    assert len(lines) >= 4
    for line in lines:
        assert line in page, line
    # how often the held-out choice is the law that is better on the test data: the count the page states
    right = total = 0
    for line in lines:
        cols = [c.strip().strip("*") for c in line.strip("|").split("|")]
        laws = [law.strip() for law in cols[2].split(",")]
        total += len(laws)
        if line.startswith("| QM7"):
            row = [r for r in json.loads((ROOT / "results/raj2017/qm7.json").read_text())["data"]["rows"]
                   if r.get("rmse_2layer_chosen") is not None and cols[0].endswith(f"D = {r['dim']}")
                   and r["label"] in cols[0]][0]
            better = ["orthogonal" if o < w else "i.i.d." for w, o in zip(row["rmse_2layer_paper_folds"],
                                                                          row["rmse_2layer_orth_folds"])]
        else:
            better = ["orthogonal" if float(cols[4]) > float(cols[3]) else "i.i.d."]
        right += sum(a == b for a, b in zip(laws, better))
    text = " ".join(page.split())
    assert f"Over the table's {total} choices the held-out data pick the law that is better on the test data {right} " \
           "times" in text


def _nys10k_rows():
    """docs/fidelity.md's table of LGIKA (Nys) at 10000 orbit landmarks on QM7 folds 0, 1 and 2, from the probe and
    the recorded 5700-landmark cells."""
    v = json.loads((ROOT / "results/raj2017/lgika_nys_landmarks_probes.json").read_text())["variants"]
    cells = json.loads((ROOT / "results/raj2017/qm7.json").read_text())["cells"]
    lines = []
    for fold in (0, 1, 2):
        tail = f", outer fold {fold}" if fold else ""
        at = {f: v[f"orbit landmarks, D = 10000, factor {f:g}{tail}"] for f in (0.125, 0.25)}
        best = min(at, key=lambda f: at[f]["loo_rmse"])
        lines.append(f"| {fold} | {at[0.125]['loo_rmse']:.2f} / {at[0.25]['loo_rmse']:.2f} | 1/{round(1 / best)} "
                     f"| **{at[best]['test_rmse']:.2f}** | {cells[f'lgika_nys_orbit|5700|{fold}']['rmse']:.2f} |")
        assert cells[f"lgika_nys_orbit|5700|{fold}"]["gamma_factor"] == best  # "with the γ each recorded cell chose"
    control = v["orbit landmarks, D = 5700, factor 0.125"]["test_rmse"]
    assert control == pytest.approx(cells["lgika_nys_orbit|5700|0"]["rmse"], abs=1e-4)
    return lines


def test_nys_orbit_landmarks_at_the_papers_number_table_is_the_probe():
    page = (ROOT / "docs/fidelity.md").read_text()
    rows = _nys10k_rows()
    for line in rows:
        assert line in page, line
    gains = [float(r.split("|")[5]) - float(r.split("|")[4].strip(" *")) for r in rows]
    assert f"fold 0 by {gains[0]:.2f}, fold 1 by {gains[1]:.2f} and fold 2 by {gains[2]:.2f}" in " ".join(page.split())


def test_nys_orbit_landmarks_10k_cells_are_the_probe_and_the_page():
    """The reproduction's cells at 10000 orbit landmarks: folds 0-2 are the probe's numbers (same seed and code), and
    docs/fidelity.md's per-fold table of the row at 10000 landmarks is the cells."""
    v = json.loads((ROOT / "results/raj2017/lgika_nys_landmarks_probes.json").read_text())["variants"]
    cells = json.loads((ROOT / "results/raj2017/qm7.json").read_text())["cells"]
    for fold in (0, 1, 2):
        tail = f", outer fold {fold}" if fold else ""
        cell = cells[f"lgika_nys_orbit|10000|{fold}"]
        probe = v[f"orbit landmarks, D = 10000, factor {cell['gamma_factor']:g}{tail}"]
        assert cell["rmse"] == pytest.approx(probe["test_rmse"], abs=1e-4)
    page = " ".join((ROOT / "docs/fidelity.md").read_text().split())
    assert "| LGIKA (Nys), 10000 landmarks from the orbits, outer fold | 0 | 1 | 2 | 3 | 4 | mean RMSE |" in page
    for label, key in (("first layer", "lgika_nys_orbit|10000|{}"),
                       ("2nd RF layer, 10k i.i.d. frequencies (the paper's sampling)", "wide|lgika_nys_orbit|10000|{}"),
                       ("2nd RF layer, 10k orthogonal frequencies", "orf|lgika_nys_orbit|10000|{}"),
                       ("exact Gaussian hyperkernel", "hyper|lgika_nys_orbit|10000|{}")):
        folds = [cells[key.format(k)]["rmse"] for k in range(5)]
        line = f"| {label} | " + " | ".join(f"{r:.2f}" for r in folds) + f" | {np.mean(folds):.2f} |"
        assert line in page, line
    row = [r for r in json.loads((ROOT / "results/raj2017/qm7.json").read_text())["data"]["rows"]
           if (r["method"], r["dim"]) == ("lgika_nys_orbit", 10000)][0]
    line = ("| 10000 landmarks from the orbits (the paper's number; below) | "
            + " / ".join(f"{r:.2f}" for r in row["rmse_folds"]) + f" | **{row['rmse']:.2f}** / {row['mae']:.2f} | "
            f"{row['rmse_2layer']:.2f} | **{row['rmse_hyper']:.2f}** | 10.87 / 10.45 |")
    assert line in page, line


def test_methane_paragraph_of_the_10k_nystroem_row_is_the_probe():
    """docs/fidelity.md's fold-1 attribution for LGIKA (Nys) at 10000 orbit landmarks: the controls, methane's errors,
    the next worst and the rows without it, as qm7_worst_molecule.py --lgika-nys-10k recorded them."""
    v = json.loads((ROOT / "results/raj2017/qm7_worst_molecule_probes.json").read_text())["variants"]
    first = v["LGIKA (Nys), 10000 landmarks from the orbits: outer fold 1"]
    orth = v["LGIKA (Nys), 10000 landmarks from the orbits, 2nd layer, 10k orthogonal frequencies: outer fold 1"]
    page = " ".join((ROOT / "docs/fidelity.md").read_text().split())
    assert (f"(controls: {first['rmse']:.8f} against the recorded {first['recorded_fold_rmse']:.8f}, and "
            f"{orth['rmse']:.8f} against {orth['recorded_fold_rmse']:.8f},") in page
    assert all(abs(p["rmse"] - p["recorded_fold_rmse"]) < 1e-5 and p["worst_atoms"] == 5 for p in (first, orth))
    assert (f"finds methane again, {-first['worst_error']:.0f} and {-orth['worst_error']:.0f} kcal/mol too low "
            f"(next worst {first['second_error']:.0f} and {orth['second_error']:.0f}). Without it fold 1 is at "
            f"{first['rmse_without_worst']:.2f} and {orth['rmse_without_worst']:.2f}, and the two rows would be "
            f"**{first['row_rmse_fold_without_worst']:.2f}** and **{orth['row_rmse_fold_without_worst']:.2f}**") in page


def test_teo_probe_and_reproduction_after_the_solver_changes_and_the_page_says_what_moved():
    """docs/fidelity.md's paragraph on the two solver changes (stop 62's block steps, stop 63's working-set
    tolerance): the reproduction's Invar-SVM numbers before both (29f253e), after the first (4cb13b3) and now
    (results/teo2007/mnist.json; the earlier two from git where the history is there), its run's time and the
    probe's size."""
    page = " ".join((ROOT / "docs/fidelity.md").read_text().split())
    res = json.loads((ROOT / "results/teo2007/mnist.json").read_text())

    def at50(rec, method="Invar-SVM"):
        return {c["per_class"]: c for c in rec["data"]["curves"][method]}[50]["draws"]

    def ratio(rec):
        return [h["ours"] for h in rec["headline"] if h["name"] == "Invar-SVM / VIR-SVM support vectors, 50/class"][0]

    def three(rec, pct=False):
        vals = [f"{100 * d['error']:.2f}" if pct else str(d["n_sv"]) for d in at50(rec)]
        return f"{vals[0]}, {vals[1]} and {vals[2]}"

    def valid(rec):
        return f"{100 * rec['data']['selected']['Invar-SVM']['validation_error']:.2f}"

    fits = [d["fit_s"] for d in at50(res)]
    assert (f"then {three(res)} (test errors {three(res, True)} %), the 50/class ratio from 0.8859 to 0.8837, then "
            f"{ratio(res):.4f}, and the selection fit at (0.02, 10) from 8.80 to 9.05, then {valid(res)} % validation "
            "error, still the point chosen") in page
    assert (res["data"]["selected"]["Invar-SVM"]["gamma"], res["data"]["selected"]["Invar-SVM"]["C"]) == (0.02, 10.0)
    span = f"{round(min(fits))}-{round(max(fits))}"
    assert (f"(`orbitkernels reproduce teo2007 --experiment mnist`, {res['wall_time_s']:.0f} s beside the probe on the "
            f"other core, against 293 s at stop 62: {span} s per Invar-SVM fit at 50 per class, against 10-12 s)"
            ) in page
    v = json.loads((ROOT / "results/teo2007/support_vectors_probes.json").read_text())["variants"]
    hours = sum(x["seconds"] for x in v.values()) / 3600
    assert f"(its {len(v)} variants took {hours:.1f} hours of fits" in page and len(v) == 165
    try:
        recs = [json.loads(subprocess.run(["git", "show", f"{c}:results/teo2007/mnist.json"], cwd=ROOT, check=True,
                                          capture_output=True, text=True).stdout) for c in ("29f253e", "4cb13b3")]
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("no git history here: the numbers before the changes are not checked")
    before, stop62 = recs
    assert (f"went from {three(before)} vectors (test errors {three(before, True)} %) to {three(stop62)} "
            f"({three(stop62, True)} %)") in page
    assert round(ratio(before), 4) == 0.8859 and round(ratio(stop62), 4) == 0.8837
    assert valid(before) == "8.80" and valid(stop62) == "9.05" and stop62["wall_time_s"] == pytest.approx(293, abs=0.5)
    assert (round(min(d["fit_s"] for d in at50(stop62))), round(max(d["fit_s"] for d in at50(stop62)))) == (10, 12)
    for method in ("STD-SVM", "VIR-SVM"):  # "the same fits throughout"
        for rec in (before, stop62):
            assert [(d["n_sv"], d["error"]) for d in at50(rec, method)] == [(d["n_sv"], d["error"])
                                                                            for d in at50(res, method)]
