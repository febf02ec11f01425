"""Quick modes of the Raj et al. 2017 reproduction (tiny configurations, tmp_path results)."""
import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from conftest import shared_data_dir
from orbitkernels.experiments import get_experiments
from orbitkernels.experiments import raj2017

DATA = shared_data_dir() or Path("no-data-folder")


def _need(name, monkeypatch):
    if not (DATA / name).is_file():
        pytest.skip(f"{name} not in {DATA} (set ORBITKERNELS_DATA)")
    monkeypatch.setenv("ORBITKERNELS_DATA", str(DATA))


@pytest.fixture(scope="module")
def qm7_quick_run(tmp_path_factory):
    """One finished quick QM7 run (6 s), shared by the tests that read it: (its result, its results folder)."""
    with pytest.MonkeyPatch.context() as mp:
        _need("qm7.npz", mp)
        out = tmp_path_factory.mktemp("qm7_quick")
        return raj2017.run_qm7(quick=True, out_dir=out), out


def _check(result, path):
    assert path.is_file() and path.with_suffix(".png").is_file()
    on_disk = json.loads(path.read_text())
    assert on_disk["headline"] == result["headline"] and result["headline"]
    for h in result["headline"]:
        assert set(h) >= {"name", "ours", "paper", "better"}
        assert h["ours"] is not None and np.isfinite(h["ours"])


def test_registered():
    assert set(get_experiments("raj2017")) == {"qm7", "kernel_approx", "rotated_mnist", "cifar10"}


def test_qm7_quick(qm7_quick_run):
    res, out = qm7_quick_run
    _check(res, out / "raj2017" / "qm7_quick.json")
    rows = {(r["method"], r["dim"]) for r in res["data"]["rows"]}
    assert ("lgika_rf", 40) in rows and ("sort_krr", None) in rows
    # a regression on energies of spread ~220 kcal/mol must beat predicting the mean by far for the exact GP
    krr = [r for r in res["data"]["rows"] if r["method"] == "sort_krr"][0]
    assert krr["rmse"] < 150 and krr["mae"] <= krr["rmse"]
    assert "NOT the published split" in res["notes"]
    cfg = raj2017.CONFIGS["qm7"]["quick"]
    cells = res["data"]["cells"]
    # the extra D selects its own γ (over extra_gamma_factors), the Nyström rows theirs (over nys_gamma_factors)
    for k in range(cfg["n_folds"]):
        extra = cells[f"lgika_rf|80|{k}"]
        assert extra["gamma_factor"] in cfg["extra_gamma_factors"]
        assert set(map(float, extra["inner_cv_rmse"])) == set(cfg["extra_gamma_factors"])
        nys = cells[f"lgika_nys|40|{k}"]
        assert set(map(float, nys["inner_cv_rmse"])) == set(cfg["nys_gamma_factors"])
    lap = [r for r in res["data"]["rows"] if r["method"] == "sort_krr_lap"][0]
    assert lap["dim"] is None and lap["n_folds"] == cfg["n_folds"] and lap["rmse"] < 150
    assert any("Laplacian" in h["name"] and "(exact)" in h["name"] for h in res["headline"])
    # beyond the paper (QM7_BEYOND): LGIKA-RF with the Laplacian base kernel, no 2nd layer
    beyond = raj2017.QM7_BEYOND["quick"]
    assert res["data"]["beyond"] == beyond
    for k in range(cfg["n_folds"]):
        cell = cells[f"lgika_rf_lap|{beyond['dims'][0]}|{k}"]
        assert cell["gamma_factor"] in beyond["factors"] and "rmse_2layer" not in cell
    assert any(h["name"].startswith("LGIKA (RF, Laplacian base kernel)") for h in res["headline"])
    # Rand-Coulomb (Montavon et al. 2012): an exact kernel ridge row against the paper's quoted 11.40
    rand = [r for r in res["data"]["rows"] if r["method"] == "rand_coulomb"][0]
    assert rand["dim"] is None and rand["n_folds"] == cfg["n_folds"] and rand["rmse"] < 150
    assert rand["paper_rmse"] == 11.40
    assert any(h["name"].startswith("Rand-Coulomb") and h["paper"] == 11.40 for h in res["headline"])
    assert "r = 3 Montavon sortings" in res["notes"]


def test_rand_coulomb_gram_is_montavons_kernel_by_its_definition(monkeypatch):
    """k(x, x') = (1/r²) Σ_ij exp(-γ |P_i(x) x - P_j(x') x'|²), P_i(x) the i-th noisy sorting of x (Montavon et
    al. 2012), the same noise draws on both sides; computed once for all folds."""
    _need("qm7.npz", monkeypatch)
    cfg = {**raj2017.CONFIGS["qm7"]["quick"], "n_molecules": 12}
    data = raj2017._QM7(cfg, 0)
    X = data.X.astype(np.float64)
    gamma = 0.1 / data.scale["orig"]
    K = data.rand_coulomb_gram(X, gamma)
    assert data.rand_coulomb_gram(X, gamma) is K  # cached: the folds share it
    E = data.group.sample(cfg["rand_coulomb_r"], np.random.RandomState(raj2017.seed_from(0, 2012)))
    P = data.group.sorted_permutations(X, E)  # (r, n, a)
    C = X.reshape(len(X), 23, 23)
    moved = np.stack([[C[n][np.ix_(P[i, n], P[i, n])].ravel() for n in range(len(X))] for i in range(len(E))])
    D2 = ((moved[:, None, :, None, :] - moved[None, :, None, :, :]) ** 2).sum(-1)  # (r, r, n, n)
    np.testing.assert_allclose(K, np.exp(-gamma * D2).mean((0, 1)), rtol=1e-10, atol=1e-12)
    assert np.allclose(K, K.T) and not np.allclose(K, np.exp(-gamma * D2[0, 0]))  # averaged, not one sorting


def test_qm7_n_atoms_counts_the_nuclear_charges(monkeypatch):
    """_QM7.n_atoms (the probes' count of a molecule's atoms, from its Coulomb matrix) is the number of non-zero
    nuclear charges Z of the dataset; methane (-417.96 kcal/mol) has 5."""
    _need("qm7.npz", monkeypatch)
    from orbitkernels.datasets import load_qm7

    data = raj2017._QM7({**raj2017.CONFIGS["qm7"]["quick"], "n_molecules": None}, 0)
    Z = load_qm7(download=False).Z
    np.testing.assert_array_equal(data.n_atoms, (Z > 0).sum(1))
    assert data.n_atoms[np.argmin(np.abs(data.T + 417.96))] == 5


def test_kernel_approx_quick(tmp_path, monkeypatch):
    _need("qm7.npz", monkeypatch)
    res = raj2017.run_kernel_approx(quick=True, out_dir=tmp_path)
    _check(res, tmp_path / "raj2017" / "kernel_approx_quick.json")
    for r in (2, 4):
        c = [c for c in res["data"]["curves"] if c["r"] == r]
        # more random features -> a better approximation of the orbit kernel (Raj Theorem 3.1)
        assert c[-1]["frobenius_mean"] < c[0]["frobenius_mean"]


def test_rotated_mnist_quick(tmp_path, monkeypatch):
    _need("mnist.npz", monkeypatch)
    res = raj2017.run_rotated_mnist(quick=True, out_dir=tmp_path)
    _check(res, tmp_path / "raj2017" / "rotated_mnist_quick.json")
    assert res["data"]["source"] == "regenerated"
    for r in res["data"]["rows"]:
        assert 10.0 < r["accuracy"] <= 100.0  # better than chance on 10 classes
    # Table 2's Original (RBF): the exact Gaussian kernel ridge on the pixels (the exact cell on them), in the rows and
    # in the headline against the paper's 90 %
    cfg = raj2017.CONFIGS["rotated_mnist"]["quick"]
    _, X, y, train, valid, test = raj2017.rotated_mnist_split(**{k: cfg[k] for k in ("n_train", "n_valid", "n_test")})
    exact = raj2017._image_hyper_cell(X, y, train, valid, test, 10, cfg["gamma_factors"], 0)
    cell = res["cells"]["orig_rbf|None"]
    assert (cell["accuracy"], cell["gamma_factor"], cell["lambda"]) == (exact["accuracy"], exact["layer2_factor"],
                                                                         exact["lambda"])
    row = [r for r in res["data"]["rows"] if r["method"] == "orig_rbf"][0]
    assert row["dim"] is None and row["paper"] == 90.0
    heads = {h["name"]: (h["ours"], h["paper"]) for h in res["headline"]}
    assert heads["Original (RBF), exact kernel ridge accuracy % (exact)"] == (cell["accuracy"], 90.0)
    # the 2nd layer at the paper's width on its rows, in the rows and the headline
    wide = raj2017.CONFIGS["rotated_mnist"]["quick"]["layer2_paper"]
    for key in wide["rows"]:
        method, dim = key.split("|")
        cell = res["cells"][f"wide|{key}"]
        assert cell["n_freq"] == wide["n_freq"] and cell["layer2_factor"] in wide["factors"]
        row = [r for r in res["data"]["rows"] if (r["method"], r["dim"]) == (method, int(dim))][0]
        assert row["accuracy_2layer_paper"] == cell["accuracy"]
    # the same layer with orthogonal frequencies: its own cells, each law its own headline cell, and the row's 2nd
    # layer the law that is better on the validation split (ties to orthogonal)
    orth = raj2017.CONFIGS["rotated_mnist"]["quick"]["layer2_orthogonal"]
    heads = {h["name"]: h["ours"] for h in res["headline"]}
    for key in orth["rows"]:
        method, dim = key.split("|")
        cell, iid = res["cells"][f"orf|{key}"], res["cells"][f"wide|{key}"]
        assert cell["n_freq"] == orth["n_freq"] and cell["frequencies"] == "orthogonal"
        row = [r for r in res["data"]["rows"] if (r["method"], r["dim"]) == (method, int(dim))][0]
        assert row["accuracy_2layer_orth"] == cell["accuracy"] and row["layer2_orth_freq"] == orth["n_freq"]
        label = raj2017.LABELS[method]
        assert heads[f"{label} accuracy % 2nd layer, {orth['n_freq'] / 1000:g}k orthogonal frequencies (D={dim}) vs "
                     "paper 2nd layer RF"] == cell["accuracy"]
        law, best = (("orthogonal", cell) if raj2017._best_valid(cell) >= raj2017._best_valid(iid) else ("i.i.d.", iid))
        assert (row["layer2_chosen"], row["accuracy_2layer_chosen"]) == (law, best["accuracy"])
        # the quick layers are tens of frequencies, each law its own number: the name gives both, and no claim
        # to the paper's 17k
        assert (orth["n_freq"], wide["n_freq"]) == (70, 40)
        assert heads[f"{label} accuracy % 2nd layer (D={dim}; 2nd layer 0.07k orthogonal / 0.04k i.i.d. frequencies, "
                     f"i.i.d. or orthogonal chosen on validation: {law}; not the paper's width)"] == best["accuracy"]
    # the Original (RF) row on digits scaled to unit norm: its own γ selection on the scaled digits, its features
    # are the plain row's map applied to them, and the validation split decides which of the two the headline shows
    unit = res["cells"]["select|orig_rf_unit"]
    assert unit["law"] == "None" and unit["gamma_factor"] in cfg["gamma_factors"]
    Xu = raj2017.unit_norm_rows(X)
    gamma = unit["gamma_factor"] / raj2017.median_sq_dist(Xu[train], seed=0)
    F = raj2017._image_feature_map("orig_rf_unit", None, cfg["feature_dims"][0], gamma, cfg["r"], cfg,
                                   0).fit(Xu[train]).transform(Xu).astype(np.float32)
    again = raj2017._classification_cell(F, y, train, valid, test, 10, cfg, 0)
    cell = res["cells"][f"orig_rf_unit|{cfg['feature_dims'][0]}"]
    assert (cell["accuracy"], cell["lambda"]) == (again["accuracy"], again["lambda"])
    rows = {r["method"]: r for r in res["data"]["rows"]}
    assert rows["orig_rf_unit"]["scaling"] == "unit_norm" and rows["orig_rf"]["scaling"] is None
    assert rows["orig_rf_unit"]["valid"] == max(cell["valid_acc"]["0"])
    scaled = rows["orig_rf_unit"]["valid"] > rows["orig_rf"]["valid"]
    name = f"Original (RF) accuracy % (D={cfg['feature_dims'][0]}" + (
        ", digits scaled to unit norm (chosen on validation))" if scaled else ")")
    assert heads[name] == rows["orig_rf_unit" if scaled else "orig_rf"]["accuracy"]


def test_unit_norm_rows_are_scaled_to_norm_one_and_refuse_blank_images():
    X = np.abs(np.random.RandomState(0).normal(size=(5, 9))).astype(np.float32)
    U = raj2017.unit_norm_rows(X)
    assert U.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(U, axis=1), 1.0, rtol=1e-6)
    np.testing.assert_allclose(U * np.linalg.norm(X, axis=1, keepdims=True), X, rtol=1e-6)
    X[3] = 0.0
    with pytest.raises(ValueError, match="1 row.*norm 0 or NaN.*row 3"):
        raj2017.unit_norm_rows(X)
    X[3, 0] = np.nan
    with pytest.raises(ValueError, match="row 3"):
        raj2017.unit_norm_rows(X)


def test_scaled_rows_take_the_papers_row_only_when_better_on_validation():
    """A row on unit-norm digits (``Method.scaling``) and its unscaled twin at the same D measure the same paper's
    row: the headline shows the one better on the validation split (ties to the unscaled row, the paper's stated
    protocol), with its 2nd-layer cells; the scaled row has its own family (γ chosen again on its inputs)."""
    unit, qmc = raj2017.as_method("lgika_rf_r100_qmc_unit"), raj2017.as_method("lgika_rf_r100_qmc")
    assert (unit.r, unit.group_sampling, unit.reproduces, unit.scaling) == (100, "qmc", "lgika_rf", "unit_norm")
    assert (unit.family, qmc.family, raj2017.as_method("orig_rf_unit").family) == ("lgika_unit", "lgika", "orig_unit")
    assert qmc.counterpart("nys").name == "lgika_nys_r100_qmc"
    assert unit.counterpart("nys").name == "lgika_nys_r100_qmc_unit"

    def row(method, dim, acc, valid, **more):
        return {"method": method, "dim": dim, "accuracy": acc, "accuracy_2layer": None, "valid": valid,
                "scaling": raj2017.as_method(method).scaling, **more}
    rows = [row("lgika_rf_r100_qmc", 14000, 96.9, 0.9645, accuracy_hyper=97.1),
            row("lgika_rf_r100_qmc_unit", 14000, 97.2, 0.9665, accuracy_hyper=97.3),
            row("lgika_rf_r100_qmc_unit", 2000, 99.0, 0.99),  # another D: never the headline's
            row("orig_rf", 14000, 87.2, 0.864), row("orig_rf_unit", 14000, 88.0, 0.864)]
    heads = {h["name"]: h["ours"] for h in raj2017._image_heads(rows, raj2017.PAPER_MNIST)}
    tag = ", digits scaled to unit norm (chosen on validation)"
    assert heads[f"LGIKA (RF) accuracy % (D=14000, r=100 qmc{tag})"] == 97.2
    assert heads["LGIKA (RF) accuracy % 2nd layer as the exact Gaussian hyperkernel [beyond paper] "
                 f"(D=14000, r=100 qmc{tag}) vs paper 2nd layer RF"] == 97.3
    assert heads["Original (RF) accuracy % (D=14000)"] == 87.2  # a tie keeps the unscaled digits
    assert not any("unit norm" in name for name in heads if name.startswith("Original"))
    rows[-1]["valid"] = 0.8735
    heads = {h["name"]: h["ours"] for h in raj2017._image_heads(rows, raj2017.PAPER_MNIST)}
    assert heads[f"Original (RF) accuracy % (D=14000{tag})"] == 88.0  # no "r=None" for a row without its own r
    rows[1]["valid"] = 0.96
    heads = {h["name"]: h["ours"] for h in raj2017._image_heads(rows, raj2017.PAPER_MNIST)}
    assert heads["LGIKA (RF) accuracy % (D=14000, r=100 qmc)"] == 96.9


def _fake_cifar(n_train=100, n_test=50, seed=0):
    rng = np.random.RandomState(seed)
    y_train, y_test = rng.randint(0, 10, n_train), rng.randint(0, 10, n_test)
    # one smooth random colour pattern per class (images are normalised, so brightness alone would not do)
    patterns = np.repeat(np.repeat(rng.uniform(0, 255, (10, 4, 4, 3)), 8, axis=1), 8, axis=2)

    def imgs(y):
        return np.clip(patterns[y] + rng.normal(0, 20, (len(y), 32, 32, 3)), 0, 255).astype(np.uint8)
    return {"x_train": imgs(y_train), "y_train": y_train.astype(np.uint8), "x_test": imgs(y_test),
            "y_test": y_test.astype(np.uint8)}


def test_cifar10_quick_on_fake_data(tmp_path):
    res = raj2017.run_cifar10(quick=True, out_dir=tmp_path, data=_fake_cifar())
    _check(res, tmp_path / "raj2017" / "cifar10_quick.json")
    assert {r["method"] for r in res["data"]["rows"]} == {"orig_rf", "lgika_rf"}
    assert all(r["accuracy"] > 30 for r in res["data"]["rows"])


def test_cifar10_missing_data_fails_clearly(tmp_path, monkeypatch):
    from orbitkernels.datasets._base import DatasetNotFoundError

    monkeypatch.setenv("ORBITKERNELS_DATA", str(tmp_path))
    with pytest.raises(DatasetNotFoundError, match="cifar"):
        raj2017.run_cifar10(quick=True, out_dir=tmp_path, download=False)
    assert not (tmp_path / "raj2017" / "cifar10_quick.json").exists()


def test_cifar_group_units():
    g = raj2017.cifar_group(raj2017.CONFIGS["cifar10"]["full"])
    assert "4.8" in repr(g) or "Normal" in repr(g)


def test_render_markdown(tmp_path, monkeypatch):
    _need("qm7.npz", monkeypatch)
    res = raj2017.run_kernel_approx(quick=True, out_dir=tmp_path)
    text = raj2017.render_markdown(tmp_path / "raj2017", quick=True)
    assert "No results file (qm7_quick.json)" in text
    curve = res["data"]["curves"][-1]
    assert f"{curve['frobenius_mean']:.4f}" in text  # the numbers come from the JSON


@pytest.mark.parametrize("n,d", [(40, 10), (30, 60)])  # primal (D <= n) and dual (D > n) paths
def test_loo_ridge_matches_brute_force(n, d):
    from orbitkernels.experiments._common import RidgePath
    from orbitkernels.experiments._raj_eval import LooRidge

    rng = np.random.RandomState(0)
    F = rng.randn(n, d)
    y = 3 * F[:, 0] + rng.randn(n)
    lams = [1e-3, 1e-1]
    m = LooRidge(lams).fit(F, y)
    for i_lam, lam in enumerate(lams):
        errs = []
        for i in range(n):
            keep = np.arange(n) != i
            # the same objective on n - 1 rows: penalty λ·n (n = full training size) = (λ n / (n - 1)) (n - 1)
            p = RidgePath([lam * n / (n - 1)]).fit(F[keep], y[keep]).predict(F[i:i + 1])[0, 0, 0]
            errs.append(y[i] - p)
        assert np.isclose(np.sqrt(np.mean(np.square(errs))), m.loo_rmse_[i_lam])
        assert np.allclose(RidgePath([lam]).fit(F, y).predict(F[:5])[0, :, 0], m.predict(F[:5], i_lam))


def test_qm7_finished_results_are_reused(qm7_quick_run, tmp_path, monkeypatch):
    _need("qm7.npz", monkeypatch)
    first, out = qm7_quick_run
    shutil.copytree(out, tmp_path, dirs_exist_ok=True)  # the shared run's folder stays as it finished
    second = raj2017.run_qm7(quick=True, out_dir=tmp_path)  # finished file, same configuration: cells reused
    # every cell, the exact-hyperkernel ones too (the run's cells: data["cells"] holds the first layers only)
    assert second["resumed_cells"] == len(first["cells"]) > len(first["data"]["cells"])
    assert second["headline"] == first["headline"]


def test_engine_options_from_the_environment(monkeypatch):
    from orbitkernels.experiments.raj2017 import _image_feature_map, engine_options
    monkeypatch.delenv("ORBITKERNELS_BACKEND", raising=False)
    monkeypatch.delenv("ORBITKERNELS_DEVICE", raising=False)
    assert engine_options()["backend"] == "numpy"
    monkeypatch.setenv("ORBITKERNELS_BACKEND", "torch")
    monkeypatch.setenv("ORBITKERNELS_DEVICE", "cuda")
    fm = _image_feature_map("lgika_rf", None, 20, 0.1, 2, {}, 0)
    assert (fm.backend, fm.device) == ("torch", "cuda")
    monkeypatch.setenv("ORBITKERNELS_BACKEND", "jax")
    with pytest.raises(ValueError, match="ORBITKERNELS_BACKEND"):
        engine_options()


def test_methods_are_records_not_parsed_names():
    """Every row of the configurations is a Method record; the records say what the old name suffixes said."""
    from orbitkernels.utils.errors import ConfigurationError

    for experiment in raj2017.CONFIGS.values():
        for cfg in experiment.values():
            for name in cfg.get("methods", []):
                assert raj2017.as_method(name).name == name
    m = raj2017.as_method("sort_krr_lap")
    assert (m.feature_map, m.inputs, m.invariant, m.kernel, m.family) == ("krr", "sort", False, "laplacian", "sort")
    assert raj2017.as_method("gicdf").family == "lgika"  # shares LGIKA's validation choice on images
    assert raj2017.as_method("lgika_nys").counterpart("rf").name == "lgika_rf"
    assert raj2017.as_method("lgika_rf_polar").counterpart("nys") is None
    with pytest.raises(ConfigurationError, match="unknown"):
        raj2017.as_method("lgika_svm")


def test_rows_at_the_papers_protocol_carry_their_own_r_and_sampling_into_the_feature_map():
    """The r = 100 rows of Rotated MNIST: low-variance (the protocol issue #17 sets, which the headline of LGIKA
    (RF) then shows) and i.i.d. (the paper's sampling, beside it); their maps take the row's r and sampling, not
    the configuration's."""
    from orbitkernels.groups import ImageRotation

    paper, qmc = raj2017.as_method("lgika_rf_r100"), raj2017.as_method("lgika_rf_r100_qmc")
    assert (paper.r, paper.group_sampling, paper.reproduces) == (100, "iid", None)
    assert (qmc.r, qmc.group_sampling, qmc.reproduces) == (100, "qmc", "lgika_rf")
    assert raj2017.as_method("lgika_rf").group_sampling == raj2017.PAPER_SAMPLING
    assert raj2017.as_method("lgika_nys").counterpart("rf").name == "lgika_rf"  # not an r = 100 row
    group = ImageRotation((28, 28))
    fm = raj2017._image_feature_map("lgika_rf_r100", group, 40, 0.1, 16, {}, 0)
    assert (fm.n_group_samples, fm.sampling) == (100, "iid")
    fm = raj2017._image_feature_map("lgika_rf", group, 40, 0.1, 16, {}, 0)
    assert fm.n_group_samples == 16
    row = lambda method, dim, acc: {"method": method, "dim": dim, "accuracy": acc, "accuracy_2layer": acc - 1}  # noqa: E731
    rows = [row("lgika_rf", 2000, 92.0), row("lgika_rf", 14000, 95.0), row("lgika_rf_r100", 14000, 96.0),
            row("lgika_rf_r100_qmc", 14000, 96.5)]
    heads = {h["name"]: h["ours"] for h in raj2017._image_heads(rows, raj2017.PAPER_MNIST)}
    assert heads["LGIKA (RF) accuracy % (D=14000, r=100 qmc)"] == 96.5
    assert heads["LGIKA (RF) accuracy % 2nd layer (D=14000, r=100 qmc)"] == 95.5
    assert not any(name.startswith("LGIKA (RF) accuracy % (D=14000)") for name in heads)
    assert heads[f"{raj2017.LABELS['lgika_rf_r100']} accuracy % (D=14000) vs paper LGIKA (RF)"] == 96.0
    # a row beyond the paper is compared with the paper's row at that row's D only: smaller D are its curve
    heads = {h["name"]: h["ours"] for h in raj2017._image_heads(rows + [row("lgika_rf_r100", 2000, 94.0)],
                                                                 raj2017.PAPER_MNIST)}
    assert not any(name.startswith(f"{raj2017.LABELS['lgika_rf_r100']} accuracy % (D=2000)") for name in heads)
    assert heads[f"{raj2017.LABELS['lgika_rf_r100']} accuracy % (D=14000) vs paper LGIKA (RF)"] == 96.0
    # the Nyström row at the paper's sampling too, against the paper's LGIKA (Nys)
    nys = raj2017.as_method("lgika_nys_r100")
    assert (nys.feature_map, nys.r, nys.group_sampling, nys.reproduces) == ("nys", 100, "iid", None)
    heads = {h["name"]: h["ours"] for h in raj2017._image_heads(rows + [row("lgika_nys_r100", 7000, 96.2)],
                                                                 raj2017.PAPER_MNIST)}
    assert heads[f"{raj2017.LABELS['lgika_nys_r100']} accuracy % (D=7000) vs paper LGIKA (Nys)"] == 96.2
    # without the protocol row the headline is the method's own largest D, as before
    heads = {h["name"] for h in raj2017._image_heads(rows[:2], raj2017.PAPER_MNIST)}
    assert "LGIKA (RF) accuracy % (D=14000)" in heads


def test_gicdf_at_the_papers_r_takes_its_own_rotations_and_templates():
    """Rotated MNIST's GICDF at the paper's r = 100 (``gicdf_r100``): its map takes r = 100 and the templates of
    ``gicdf_templates_by_method``, the plain GICDF row keeps the configuration's; the headline shows the r = 100 row."""
    from orbitkernels.groups import ImageRotation

    cfg = raj2017.CONFIGS["rotated_mnist"]["reduced"]
    group = ImageRotation((28, 28))
    fm = raj2017._image_feature_map("gicdf_r100", group, None, 1.0, cfg["r"], cfg, 0)
    assert (fm.n_group_samples, fm.n_templates, fm.sampling) == (100, 400, "iid")
    fm = raj2017._image_feature_map("gicdf", group, None, 1.0, cfg["r"], cfg, 0)
    assert (fm.n_group_samples, fm.n_templates) == (cfg["r"], cfg["gicdf_templates"])
    scope = raj2017._image_cell_scope({**cfg, "lambdas": [1.0], "seed": 0}, "gicdf_r100|None")
    assert scope["gicdf"] == [400, cfg["gicdf_bins"]]
    rows = [{"method": "gicdf", "dim": 10200, "accuracy": 86.0, "accuracy_2layer": None},
            {"method": "gicdf_r100", "dim": 20400, "accuracy": 94.0, "accuracy_2layer": None}]
    heads = {h["name"]: h["ours"] for h in raj2017._image_heads(rows, raj2017.PAPER_MNIST)}
    assert heads == {"GICDF accuracy % (D=20400, r=100)": 94.0}


def test_lgika_nys_at_the_papers_protocol_takes_its_own_rotations_and_sampling():
    """LGIKA (Nys) at the paper's protocol (``lgika_nys_r100_qmc``): its Nyström map takes r = 100 low-variance
    rotations, the plain row keeps the configuration's r and the paper's i.i.d. draws; the headline (and its
    hyperkernel cell) is the protocol row at its largest D."""
    from orbitkernels.features import OrbitNystroem
    from orbitkernels.groups import ImageRotation

    cfg = raj2017.CONFIGS["rotated_mnist"]["reduced"]
    group = ImageRotation((28, 28))
    fm = raj2017._image_feature_map("lgika_nys_r100_qmc", group, 7000, 1.0, cfg["r"], cfg, 0)
    assert isinstance(fm, OrbitNystroem)
    assert (fm.n_group_samples, fm.sampling, fm.n_components) == (100, "qmc", 7000)
    fm = raj2017._image_feature_map("lgika_nys", group, 2000, 1.0, cfg["r"], cfg, 0)
    assert (fm.n_group_samples, fm.sampling) == (cfg["r"], raj2017.PAPER_SAMPLING)
    fm = raj2017._image_feature_map("orig_nys", None, 2000, 1.0, cfg["r"], cfg, 0)
    assert fm.n_group_samples is None
    assert "lgika_nys_r100_qmc|7000" in cfg["layer2_exact"]["rows"]
    rows = [{"method": "lgika_nys", "dim": 2000, "accuracy": 92.0, "accuracy_2layer": 91.0},
            {"method": "lgika_nys_r100_qmc", "dim": 2000, "accuracy": 95.0, "accuracy_2layer": 94.0},
            {"method": "lgika_nys_r100_qmc", "dim": 7000, "accuracy": 96.5, "accuracy_2layer": 95.5,
             "accuracy_hyper": 97.0}]
    heads = {h["name"]: h["ours"] for h in raj2017._image_heads(rows, raj2017.PAPER_MNIST)}
    assert heads == {"LGIKA (Nys) accuracy % (D=7000, r=100 qmc)": 96.5,
                     "LGIKA (Nys) accuracy % 2nd layer (D=7000, r=100 qmc)": 95.5,
                     "LGIKA (Nys) accuracy % 2nd layer as the exact Gaussian hyperkernel [beyond paper] "
                     "(D=7000, r=100 qmc) vs paper 2nd layer RF": 97.0}


def test_sq_dists_are_squared_euclidean_distances_in_blocks():
    from scipy.spatial.distance import cdist

    from orbitkernels.experiments._raj_eval import sq_dists

    F = np.random.RandomState(0).standard_normal((23, 7)).astype(np.float32)
    rows, cols = np.arange(3, 23), np.array([0, 5, 9, 2])
    want = cdist(F[rows].astype(np.float64), F[cols].astype(np.float64), "sqeuclidean")
    for block in (1, 6, 4096):
        got = sq_dists(F, rows, cols, block=block)
        assert got.dtype == np.float64 and got.shape == (20, 4)
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    assert sq_dists(F, rows, cols, np.float32).dtype == np.float32
    assert sq_dists(F, [4], [4])[0, 0] == 0.0  # clipped at zero, never a negative rounding


def test_krr_loo_is_kernel_ridge_with_the_training_mean_and_its_exact_leave_one_out():
    """``_krr_loo``: (factor, λ) by exact LOO, then kernel ridge with the training mean as constant mean and penalty
    λ n, which is scikit-learn's KernelRidge(alpha=λ n) on the centred targets; its LOO errors are n refits'."""
    from sklearn.kernel_ridge import KernelRidge
    from sklearn.metrics.pairwise import rbf_kernel

    rng = np.random.RandomState(1)
    X = rng.standard_normal((40, 3))
    y = np.sin(X).sum(1) + 0.1 * rng.standard_normal(40) + 5.0
    train, test = np.arange(30), np.arange(30, 40)
    lambdas = np.array([1e-4, 1e-2, 1.0])
    gram = lambda rows, cols, f: rbf_kernel(X[rows], X[cols], gamma=f)  # noqa: E731
    best, lam, table, pred = raj2017._krr_loo(gram, [0.1, 1.0], y, train, test, lambdas)
    n, mu = len(train), y[train].mean()
    for f in (0.1, 1.0):
        for i, l in enumerate(lambdas):
            # each refit keeps the full fold's α = λ n and its mean
            res = [y[j] - mu - KernelRidge(alpha=l * n, kernel="rbf", gamma=f).fit(
                X[np.delete(train, j)], y[np.delete(train, j)] - mu).predict(X[[j]])[0] for j in train]
            assert np.isclose(table[f][i], np.sqrt(np.mean(np.square(res))), rtol=1e-6)
    assert table[best].min() == min(v.min() for v in table.values()) and lam in lambdas
    want = KernelRidge(alpha=lam * n, kernel="rbf", gamma=best).fit(X[train], y[train] - mu).predict(X[test]) + mu
    np.testing.assert_allclose(pred, want, rtol=1e-8)
    # centre=False: constant mean 0, KernelRidge on the targets themselves
    best, lam, table, pred = raj2017._krr_loo(gram, [0.1, 1.0], y, train, test, lambdas, centre=False)
    res = [y[j] - KernelRidge(alpha=lam * n, kernel="rbf", gamma=best).fit(
        X[np.delete(train, j)], y[np.delete(train, j)]).predict(X[[j]])[0] for j in train]
    assert np.isclose(table[best].min(), np.sqrt(np.mean(np.square(res))), rtol=1e-6)
    want = KernelRidge(alpha=lam * n, kernel="rbf", gamma=best).fit(X[train], y[train]).predict(X[test])
    np.testing.assert_allclose(pred, want, rtol=1e-8)
    assert np.abs(want).max() > 1.0  # a target mean of 5: without centring the fit differs


def test_image_hyper_cell_is_kernel_ridge_on_the_features_with_the_validation_choice():
    """The exact Gaussian hyperkernel cell: γ₂ = factor / median squared distance of the training features, factor
    and λ on the validation split, refit on train + validation (penalty λ n), test accuracy of the argmax."""
    from sklearn.kernel_ridge import KernelRidge

    from orbitkernels.experiments._raj_eval import median_sq_dist, one_hot

    rng = np.random.RandomState(2)
    y = rng.randint(0, 3, 90)
    F = (rng.standard_normal((90, 6)) + 1.5 * np.eye(6)[y]).astype(np.float32)
    train, valid, test = np.arange(50), np.arange(50, 65), np.arange(65, 90)
    res = raj2017._image_hyper_cell(F, y, train, valid, test, 3, [0.25, 1.0], seed=0)
    assert res["layer2_factor"] in (0.25, 1.0) and set(res["valid_acc"]) == {"0.25", "1.0"}
    best = max(max(v) for v in res["valid_acc"].values())
    assert max(res["valid_acc"][str(res["layer2_factor"])]) == best
    fit = np.concatenate([train, valid])
    Y = one_hot(y[fit], 3)
    gamma = res["layer2_factor"] / median_sq_dist(F[train], seed=0)
    P = KernelRidge(alpha=res["lambda"] * len(fit), kernel="rbf", gamma=gamma).fit(
        F[fit].astype(np.float64), Y - Y.mean(0)).predict(F[test].astype(np.float64)) + Y.mean(0)
    assert res["accuracy"] == pytest.approx(100.0 * np.mean(P.argmax(1) == y[test]))
    assert res["accuracy"] > 60.0  # three separated classes: far above chance


def test_hyperkernel_rows_reach_the_headline_beside_the_2nd_rf_layer(qm7_quick_run):
    res, _ = qm7_quick_run
    cfg = raj2017.CONFIGS["qm7"]["quick"]
    for row in cfg["layer2_exact"]["rows"]:
        method, dim = row.split("|")
        r = [r for r in res["data"]["rows"] if (r["method"], r["dim"]) == (method, int(dim))][0]
        folds = [res["cells"][f"hyper|{row}|{k}"] for k in range(cfg["n_folds"])]
        assert r["rmse_hyper"] == pytest.approx(np.mean([c["rmse"] for c in folds]))
        assert all(c["layer2_factor"] in cfg["layer2_exact"]["factors"] for c in folds)
        # the hyperkernel sits on the first layer its own cell chose on each fold
        assert [c["gamma_factor"] for c in folds] == [res["cells"][f"{row}|{k}"]["gamma_factor"]
                                                      for k in range(cfg["n_folds"])]
        head = [h for h in res["headline"] if "exact Gaussian hyperkernel" in h["name"]
                and h["name"].startswith(raj2017.LABELS[method])]
        assert len(head) == 1 and head[0]["paper"] == raj2017.PAPER_QM7[method][1]
    # the 2nd RF layer at the paper's width, on the same first layers, takes the 2nd-layer headline
    wide = cfg["layer2_paper"]
    for row in wide["rows"]:
        method, dim = row.split("|")
        r = [r for r in res["data"]["rows"] if (r["method"], r["dim"]) == (method, int(dim))][0]
        folds = [res["cells"][f"wide|{row}|{k}"] for k in range(cfg["n_folds"])]
        assert r["rmse_2layer_paper"] == pytest.approx(np.mean([c["rmse"] for c in folds]))
        assert all(c["layer2_factor"] in wide["factors"] and c["n_freq"] == wide["n_freq"] for c in folds)
        assert [c["gamma_factor"] for c in folds] == [res["cells"][f"{row}|{k}"]["gamma_factor"]
                                                      for k in range(cfg["n_folds"])]
        head = [h for h in res["headline"] if h["name"].startswith(f"{raj2017.LABELS[method]} RMSE 2nd layer (")
                and "the paper's width" in h["name"]]
        assert len(head) == 1 and head[0]["ours"] == r["rmse_2layer_paper"]


def test_qm7_rows_list_each_part_in_fold_order_whatever_order_the_cells_finished_in():
    """A resumed run, or cells joined from runs on several cores, holds a row's cells in the order they finished;
    the row's per-fold lists (and the per-fold choice of the 2nd layer's law, which pairs the parts by position)
    follow the folds. Fails with the cells grouped in the order they are stored."""
    cfg = {"n_folds": 3}
    order = (2, 0, 1)  # the first layer's cells
    first = {f"lgika_rf|20000|{k}": {"rmse": 10.0 + k, "mae": 5.0 + k} for k in order}

    def part(offset, loo, folds):
        return {f"lgika_rf|20000|{k}": {"rmse": offset + k, "mae": 1.0, "layer2_factor": 0.25, "n_freq": 10,
                                        "loo_rmse": {"0.25": [loo[k]]}} for k in folds}

    wide = part(20.0, [1.0, 3.0, 1.0], (1, 2, 0))
    orth = part(30.0, [2.0, 2.0, 2.0], (0, 2, 1))
    hyper = part(40.0, [0.0, 0.0, 0.0], (2, 1, 0))
    (row,) = raj2017._qm7_rows(first, cfg, hyper, wide, orth)
    assert row["rmse_folds"] == [10.0, 11.0, 12.0]
    assert row["rmse_hyper_folds"] == [40.0, 41.0, 42.0]
    assert row["rmse_2layer_paper_folds"] == [20.0, 21.0, 22.0] and row["rmse_2layer_orth_folds"] == [30.0, 31.0, 32.0]
    assert row["layer2_chosen"] == ["i.i.d.", "orthogonal", "i.i.d."]
    assert row["rmse_2layer_chosen_folds"] == [20.0, 31.0, 22.0]


def test_qm7_second_layer_takes_per_fold_the_frequency_law_the_training_folds_prefer():
    """Table 1's 2nd layer with both frequency laws: each outer fold takes the law with the lower leave-one-out RMSE
    on its training folds (ties to orthogonal), as γ₂ and λ are chosen; the test folds never enter the choice."""
    def cell(rmse, loo):
        return {"rmse": rmse, "mae": rmse / 2, "loo_rmse": {"0.0625": [loo + 1, loo], "0.25": [loo + 2, loo + 3]}}

    wide = [cell(10.0, 9.0), cell(14.0, 9.5), cell(9.0, 11.0)]
    orth = [cell(11.0, 9.2), cell(13.0, 9.5), cell(12.0, 10.0)]
    got = raj2017._qm7_law_choice(wide, orth, 3)
    assert got["layer2_chosen"] == ["i.i.d.", "orthogonal", "orthogonal"]
    assert got["rmse_2layer_chosen_folds"] == [10.0, 13.0, 12.0]
    assert got["rmse_2layer_chosen"] == pytest.approx(35.0 / 3) and got["mae_2layer_chosen"] == pytest.approx(35 / 6)
    assert raj2017._qm7_law_choice(wide[:2], orth, 3) == {}  # a fold without its i.i.d. layer: no choice
    assert raj2017._qm7_law_choice(wide, [*orth[:2], {"rmse": 1.0, "mae": 1.0}], 3) == {}  # nor without its scores
    row = {"method": "lgika_rf", "dim": 20000, "rmse": 10.5, "rmse_2layer_paper": 11.0, "layer2_paper_freq": 10000,
           "rmse_2layer_orth": 12.0, "layer2_orth_freq": 10000, **got}
    heads = {h["name"]: h["ours"] for h in raj2017._layer2_heads(row, "LGIKA (RF)", "RMSE", "rmse", "D=20000", 10.05,
                                                                  "lower")}
    assert heads == {
        "LGIKA (RF) RMSE 2nd layer (D=20000; 2nd layer 10k frequencies, i.i.d. or orthogonal chosen per fold by the "
        "training folds' leave-one-out: i.i.d. on 1 fold, orthogonal on 2 folds; the paper's width)":
            got["rmse_2layer_chosen"],
        "LGIKA (RF) RMSE 2nd layer, 10k orthogonal frequencies (D=20000) vs paper 2nd layer RF": 12.0,
        "LGIKA (RF) RMSE 2nd layer, 10k i.i.d. frequencies (the paper's sampling) (D=20000) vs paper 2nd layer "
        "RF": 11.0}


def test_wide_second_layer_is_the_random_fourier_layer_without_its_features():
    """Raj §4 "2nd layer RF" at the paper's width (WideLayer2): its Gram matrices are those of the explicit
    cos / sin features of the same frequencies for every γ₂, the dual ridge on the centred Gram matrix is the
    primal ridge with an intercept on those features, and its block-wise predictions and cross-Gram blocks are the
    primal ones."""
    from orbitkernels.experiments._raj_eval import WideLayer2
    from orbitkernels.models.ridge import RidgePath as Solver, centre_gram

    rng = np.random.default_rng(0)
    F = rng.standard_normal((90, 12)).astype(np.float32)
    Y = rng.standard_normal((90, 3))
    wide = WideLayer2(F, 37, seed=1, block=8)  # a last block narrower than the others
    rows = np.arange(90)
    K = wide.grams(rows, [0.05, 0.2])
    for g in (0.05, 0.2):
        P = (F.astype(np.float64) @ wide.Z.astype(np.float64)) * np.sqrt(2 * g)
        Phi = np.hstack([np.cos(P), np.sin(P)]) / np.sqrt(37)
        np.testing.assert_allclose(K[g], Phi @ Phi.T, atol=2e-6)
        # the Monte Carlo estimate of the Gaussian hyperkernel (Raj Remark 3)
        d2 = ((F[:, None, :].astype(np.float64) - F[None, :, :]) ** 2).sum(-1)
        assert np.abs(K[g] - np.exp(-g * d2)).mean() < 0.2
        tr, new = np.arange(60), np.arange(60, 90)
        Ktc, Knc = centre_gram(K[g][:60, :60], K[g][60:, :60])
        dual = Solver([0.3]).fit_gram(Ktc, Y[tr])
        primal = Solver([0.3]).fit(Phi[tr], Y[tr])
        np.testing.assert_allclose(dual.predict_gram(Knc, 0), primal.predict(Phi[new], 0), atol=1e-5)
        pred = wide.predict(tr, g, dual.dual_coef(0), dual.y_mean_, new, step=7)
        np.testing.assert_allclose(pred, primal.predict(Phi[new], 0), atol=1e-5)
        # kernel values against some columns only (an SVM's support vectors), block by block of rows
        cols = np.array([3, 50, 7, 88])
        blocks = list(wide.cross_gram(new, cols, g, step=7))
        assert [a for a, _ in blocks] == list(range(0, 30, 7))
        np.testing.assert_allclose(np.vstack([Kb for _, Kb in blocks]), (Phi[new] @ Phi[cols].T), atol=2e-6)


def test_the_papers_width_second_layer_takes_the_headline_and_has_its_own_scope(monkeypatch):
    row = {"method": "orig_rf", "dim": 14000, "accuracy": 87.0, "accuracy_2layer": 83.0}
    heads = {h["name"]: h["ours"] for h in raj2017._image_heads([row], raj2017.PAPER_MNIST)}
    assert heads["Original (RF) accuracy % 2nd layer (D=14000)"] == 83.0
    wide = {**row, "accuracy_2layer_paper": 89.0, "layer2_paper_freq": 17000}
    heads = {h["name"]: h["ours"] for h in raj2017._image_heads([wide], raj2017.PAPER_MNIST)}
    assert heads["Original (RF) accuracy % 2nd layer (D=14000; 2nd layer 17k frequencies, the paper's width)"] == 89.0
    assert not any(name == "Original (RF) accuracy % 2nd layer (D=14000)" for name in heads)
    cfg = {"configuration": "reduced", **raj2017.CONFIGS["rotated_mnist"]["reduced"], "seed": 0, "lambdas": [1.0]}
    scope = raj2017._image_cell_scope
    without = {k: v for k, v in cfg.items() if k != "layer2_paper"}
    assert scope(without, "orig_rf|14000") == scope(cfg, "orig_rf|14000")  # first layers untouched
    assert scope(cfg, "wide|orig_rf|14000")["layer1"] == scope(cfg, "orig_rf|14000")
    narrower = {**cfg, "layer2_paper": {**cfg["layer2_paper"], "n_freq": 8000}}
    assert scope(narrower, "wide|orig_rf|14000") != scope(cfg, "wide|orig_rf|14000")
    # orthogonal frequencies on the same row: the headline's 2nd layer, the i.i.d. layer its own cell beside it
    orth = {**wide, "accuracy_2layer_orth": 90.0, "layer2_orth_freq": 17000}
    heads = {h["name"]: h["ours"] for h in raj2017._image_heads([orth], raj2017.PAPER_MNIST)}
    assert heads["Original (RF) accuracy % 2nd layer (D=14000; 2nd layer 17k orthogonal frequencies, the paper's "
                 "width)"] == 90.0
    assert heads["Original (RF) accuracy % 2nd layer, 17k i.i.d. frequencies (the paper's sampling) (D=14000) vs "
                 "paper 2nd layer RF"] == 89.0
    assert not any(name.endswith("(D=14000; 2nd layer 17k frequencies, the paper's width)") for name in heads)
    # with the validation scores of both laws, the headline's 2nd layer is the law validation prefers, ties to
    # orthogonal; each law stays beside it as its own cell
    for v_iid, v_orth, law, acc in ((0.97, 0.96, "i.i.d.", 89.0), (0.96, 0.97, "orthogonal", 90.0),
                                    (0.97, 0.97, "orthogonal", 90.0)):
        both = {**orth, **raj2017._image_law_choice({"accuracy": 89.0, "valid_acc": {"0.25": [0.5, v_iid]}},
                                                     {"accuracy": 90.0, "valid_acc": {"1.0": [v_orth, 0.1]}})}
        heads = {h["name"]: h["ours"] for h in raj2017._image_heads([both], raj2017.PAPER_MNIST)}
        assert heads[f"Original (RF) accuracy % 2nd layer (D=14000; 2nd layer 17k frequencies, i.i.d. or orthogonal "
                     f"chosen on validation: {law}; the paper's width)"] == acc
        assert heads["Original (RF) accuracy % 2nd layer, 17k orthogonal frequencies (D=14000) vs paper 2nd layer "
                     "RF"] == 90.0
        assert heads["Original (RF) accuracy % 2nd layer, 17k i.i.d. frequencies (the paper's sampling) (D=14000) "
                     "vs paper 2nd layer RF"] == 89.0
        assert raj2017._headline_layer2(both, "accuracy") == acc
    assert raj2017._image_law_choice(None, {"accuracy": 90.0, "valid_acc": {"1.0": [0.9]}}) == {}
    assert scope(cfg, "orf|lgika_rf_r100_qmc|14000")["layer1"] == scope(cfg, "lgika_rf_r100_qmc|14000")
    assert scope(cfg, "orf|lgika_rf_r100_qmc|14000")["frequencies"] == "orthogonal"
    assert scope(without, "lgika_rf_r100_qmc|14000") == scope(cfg, "lgika_rf_r100_qmc|14000")
    # the rows to compute are not part of a cell's scope: adding a row leaves the others' cells in place
    more = {**cfg, "layer2_orthogonal": {**cfg["layer2_orthogonal"], "rows": ["orig_rf|14000"]}}
    assert scope(more, "orf|lgika_rf_r100_qmc|14000") == scope(cfg, "orf|lgika_rf_r100_qmc|14000")


def test_cells_can_be_postponed_by_pattern(monkeypatch):
    """$ORBITKERNELS_RAJ2017_CELLS picks which outstanding cells run now; the others wait, resumable."""
    from types import SimpleNamespace

    run = SimpleNamespace(has=lambda key: key == "orig_rf|14000", session_time=lambda: 10.0)
    monkeypatch.delenv("ORBITKERNELS_RAJ2017_CELLS", raising=False)
    assert not raj2017._postponed(run, "wide|orig_rf|14000", None)
    assert raj2017._postponed(run, "wide|orig_rf|14000", 5.0)  # past the budget
    monkeypatch.setenv("ORBITKERNELS_RAJ2017_CELLS", "wide|orig_*, hyper|*")
    assert not raj2017._postponed(run, "wide|orig_rf|14000", None)
    assert raj2017._postponed(run, "lgika_nys_r100|7000", None)
    assert not raj2017._postponed(run, "orig_rf|14000", 5.0)  # a finished cell is always taken from the file


def test_time_budget_counts_this_invocation_only(tmp_path, monkeypatch):
    """A run resumed after sittings longer than the budget still starts cells: the budget is of one invocation (the
    results file's wall time, which sums the sittings, had postponed every new cell of Table 2 for good)."""
    from orbitkernels.experiments._runner import ExperimentRun

    monkeypatch.delenv("ORBITKERNELS_RAJ2017_CELLS", raising=False)
    run = ExperimentRun("raj2017", "budget", {"a": 1}, out_dir=tmp_path)
    run._elapsed_before = 40000.0  # earlier sittings, recorded with the finished cell
    run.cell("done|1", lambda: {"x": 1})
    again = ExperimentRun("raj2017", "budget", {"a": 1}, out_dir=tmp_path)
    assert again.has("done|1") and again.wall_time() > 40000.0 > 6000.0 > again.session_time()
    assert not raj2017._postponed(again, "new|1", 6000.0)
    monkeypatch.setattr(again, "session_time", lambda: 6001.0)
    assert raj2017._postponed(again, "new|1", 6000.0)


def test_image_wide_cell_is_ridge_on_the_explicit_wide_layer_with_the_validation_choice():
    """The paper-width 2nd layer cell: factor and λ on validation, refit on train + validation, test accuracy,
    the same numbers as RidgePath on the explicit cos / sin features of the same frequencies."""
    from orbitkernels.experiments._raj_eval import WideLayer2, layer2_scale, one_hot
    from orbitkernels.models.ridge import RidgePath as Solver

    rng = np.random.RandomState(3)
    y = rng.randint(0, 3, 90)
    F = (rng.standard_normal((90, 6)) + 1.5 * np.eye(6)[y]).astype(np.float32)
    train, valid, test = np.arange(50), np.arange(50, 65), np.arange(65, 90)
    res = raj2017._image_wide_cell(F, y, train, valid, test, 3, {"n_freq": 30, "factors": [0.25, 1.0]}, seed=0)
    assert res["layer2_factor"] in (0.25, 1.0) and res["n_features"] == 60
    assert max(res["valid_acc"][str(res["layer2_factor"])]) == max(max(v) for v in res["valid_acc"].values())
    wide = WideLayer2(F, 30, 0)
    Phi = wide._phi(F @ wide.Z, res["layer2_factor"] / layer2_scale(F, train, 0)).astype(np.float64)
    lambdas = np.array(raj2017._LAMBDAS)
    acc = (Solver(lambdas * 50).fit(Phi[train], one_hot(y[train], 3)).predict(Phi[valid]).argmax(2)
           == y[valid]).mean(1)
    np.testing.assert_allclose(acc, res["valid_acc"][str(res["layer2_factor"])])
    fit = np.concatenate([train, valid])
    pred = Solver([res["lambda"] * len(fit)]).fit(Phi[fit], one_hot(y[fit], 3)).predict(Phi[test], 0)
    assert res["accuracy"] == pytest.approx(100.0 * np.mean(pred.argmax(1) == y[test]))
    assert res["accuracy"] > 60.0
    # orthogonal frequencies: the same cell on the explicit features of WideLayer2(frequencies="orthogonal")
    res = raj2017._image_wide_cell(F, y, train, valid, test, 3, {"n_freq": 30, "factors": [0.25, 1.0],
                                                                   "frequencies": "orthogonal"}, seed=0)
    wide = WideLayer2(F, 30, 0, frequencies="orthogonal")
    assert res["frequencies"] == "orthogonal" and res["n_features"] == 60
    Phi = wide._phi(F @ wide.Z, res["layer2_factor"] / layer2_scale(F, train, 0)).astype(np.float64)
    pred = Solver([res["lambda"] * len(fit)]).fit(Phi[fit], one_hot(y[fit], 3)).predict(Phi[test], 0)
    assert res["accuracy"] == pytest.approx(100.0 * np.mean(pred.argmax(1) == y[test]))


def test_qm7_wide_cell_is_loo_ridge_on_the_explicit_wide_layer():
    """QM7's paper-width 2nd layer cell: the exact leave-one-out RMSE of every (γ₂, λ) and the test RMSE are those
    of the first-layer cells' ridge (LooRidge: intercept, penalty λ n) on the explicit cos / sin features."""
    from types import SimpleNamespace

    from orbitkernels.experiments._raj_eval import LooRidge, WideLayer2, layer2_scale

    rng = np.random.RandomState(4)
    F = rng.standard_normal((110, 5)).astype(np.float32)
    T = np.sin(F[:, 0]) * 30 + F[:, 1] ** 2 * 10 + rng.normal(0, 1, 110)
    train, test = np.arange(90), np.arange(90, 110)
    # 120 features on 90 training rows: both solvers are dual there, as the reproduction's (20,000 on ~5,700)
    cfg = {**raj2017.CONFIGS["qm7"]["quick"], "layer2_paper": {"rows": [], "n_freq": 60, "factors": [0.25, 1.0]}}
    data = SimpleNamespace(cfg=cfg, seed=0, T=T, split=lambda k: (train, test),
                           features=lambda method, dim, gamma_factor, train: F)
    res = raj2017._qm7_wide_cell(data, "orig_rf", 40, 0, 0.5)
    lambdas = raj2017._qm7_lambdas(cfg)
    wide = WideLayer2(F, 60, 0)
    for f in (0.25, 1.0):
        Phi = wide._phi(F @ wide.Z, f / layer2_scale(F, train, 0)).astype(np.float64)
        m = LooRidge(lambdas).fit(Phi[train], T[train])
        # equal to rounding where λ n is well above the smallest eigenvalues (~1e-8 here); below, where the
        # ridge interpolates, leave-one-out errors move with the rounding of the matrices (the features' own
        # solver reaches 1e5 there on one γ₂, the centred Gram matrix's stays at the level of the others)
        ok = lambdas >= 1e-9
        np.testing.assert_allclose(np.array(res["loo_rmse"][str(f)])[ok], m.loo_rmse_[ok], rtol=1e-6)
        assert np.all(np.array(res["loo_rmse"][str(f)])[~ok] < 3 * np.min(res["loo_rmse"][str(f)]))
        if f == res["layer2_factor"]:
            err = m.predict(Phi[test]) - T[test]
            assert res["rmse"] == pytest.approx(np.sqrt(np.mean(err ** 2)), rel=1e-6)
            assert res["lambda"] == pytest.approx(lambdas[m.best_])
    # with_pred (for probes that look at molecules): the same cell, and the predictions behind its RMSE
    again = raj2017._qm7_wide_cell(data, "orig_rf", 40, 0, 0.5, with_pred=True)
    assert "pred" not in res and again["rmse"] == res["rmse"] and again["pred"].shape == (len(test),)
    assert again["rmse"] == pytest.approx(np.sqrt(np.mean((again["pred"] - T[test]) ** 2)), rel=1e-12)
    one = raj2017._qm7_feature_cell(data, "orig_rf", 40, 0, None, factors=[0.5], with_pred=True)
    assert one["rmse"] == pytest.approx(np.sqrt(np.mean((one["pred"] - T[test]) ** 2)), rel=1e-12)
    assert one["rmse_2layer"] == pytest.approx(np.sqrt(np.mean((one["pred_2layer"] - T[test]) ** 2)), rel=1e-12)
    # fit_intercept=False (the zero-mean probe): the same cell on the uncentred Gram matrices, which is ridge without
    # intercept on the explicit features
    zero = raj2017._qm7_wide_cell(data, "orig_rf", 40, 0, 0.5, fit_intercept=False)
    Phi = wide._phi(F @ wide.Z, zero["layer2_factor"] / layer2_scale(F, train, 0)).astype(np.float64)
    m = LooRidge(lambdas, fit_intercept=False).fit(Phi[train], T[train])
    ok = lambdas >= 1e-9
    np.testing.assert_allclose(np.array(zero["loo_rmse"][str(zero["layer2_factor"])])[ok], m.loo_rmse_[ok], rtol=1e-6)
    err = m.path_.predict(Phi[test], int(np.flatnonzero(lambdas == zero["lambda"])[0]))[:, 0] - T[test]
    assert zero["rmse"] == pytest.approx(np.sqrt(np.mean(err ** 2)), rel=1e-6) and zero["rmse"] != res["rmse"]
    # and the first-layer cell without intercept: LooRidge without intercept on the features
    loo_data = SimpleNamespace(**{**vars(data), "cfg": {**cfg, "inner_k": "loo"}})
    one0, one1 = (raj2017._qm7_feature_cell(loo_data, "orig_rf", 40, 0, None, factors=[0.5], layer2=False,
                                            fit_intercept=b) for b in (False, True))
    m = LooRidge(lambdas, fit_intercept=False).fit(F[train].astype(np.float64), T[train])
    assert one0["rmse"] == pytest.approx(np.sqrt(np.mean((m.predict(F[test]) - T[test]) ** 2)), rel=1e-6)
    assert one0["rmse"] != one1["rmse"]
    with pytest.raises(ValueError, match="leave-one-out"):  # the quick configuration's 2-fold inner CV
        raj2017._qm7_feature_cell(data, "orig_rf", 40, 0, None, factors=[0.5], layer2=False, fit_intercept=False)
    # the probes' entry by cell key: "wide|…" / "orf|…" the 2nd layer with its configuration part, else a first layer

    def same(a, b):
        # wall times ("seconds", "layer1_seconds") differ from one call to the next, by 0.01 s under load
        timed = ("seconds", "layer1_seconds")
        return {f: v for f, v in a.items() if f not in timed} == {f: v for f, v in b.items() if f not in timed}

    assert same(raj2017._qm7_row_cell(data, "wide|orig_rf|40", 0, [0.5], fit_intercept=False), zero)
    assert same(raj2017._qm7_row_cell(data, "wide|orig_rf|40", 0, [0.5]), res)
    cfg_orf = {**cfg, "layer2_orthogonal": {**cfg["layer2_paper"], "frequencies": "orthogonal"}}
    data_orf = SimpleNamespace(**{**vars(data), "cfg": cfg_orf})
    assert same(raj2017._qm7_row_cell(data_orf, "orf|orig_rf|40", 0, [0.5]),
                raj2017._qm7_wide_cell(data_orf, "orig_rf", 40, 0, 0.5, part="layer2_orthogonal"))
    assert same(raj2017._qm7_row_cell(loo_data, "orig_rf|40", 0, [0.5], fit_intercept=False), one0)
    with pytest.raises(ValueError):  # a 2nd layer sits on one first layer's γ
        raj2017._qm7_row_cell(data, "wide|orig_rf|40", 0, [0.5, 1.0])


def test_lgika_nys_with_orbit_landmarks_runs_at_its_own_d_and_stands_for_the_papers_row():
    """Raj §2.2.2's landmarks "from the orbit gX": its own row, computed only at its own D (``dims_by_method``),
    whose headline replaces LGIKA (Nys)'s once every fold has it at a D no smaller than the data-landmark row's."""
    cfg = {"configuration": "reduced", **raj2017.CONFIGS["qm7"]["reduced"], "seed": 0, "lambdas": [1.0]}
    plan, _ = raj2017.qm7_plan("reduced", cfg)
    assert {d for m, d, _ in plan if m == "lgika_nys_orbit"} == {5700, 10000}  # 10000: Raj §4.1's landmarks
    assert {d for m, d, _ in plan if m == "lgika_nys"} == {2000}
    assert raj2017.METHODS["lgika_nys_orbit"].landmarks == "orbit" and raj2017.METHODS["lgika_nys"].landmarks == "data"
    assert "base" not in raj2017._qm7_cell_scope(cfg, "lgika_nys_orbit|5700|0")  # no D = 2000 cell to reuse
    assert raj2017._qm7_gamma_grid(cfg, "lgika_nys_orbit", 5700, None) == [1 / 8, 1 / 4]
    assert raj2017._qm7_gamma_grid(cfg, "lgika_nys_orbit", 10000, None) == [1 / 8, 1 / 4]
    for part in ("layer2_exact", "layer2_paper", "layer2_orthogonal"):  # every 2nd layer on both sizes
        assert {"lgika_nys_orbit|5700", "lgika_nys_orbit|10000"} <= set(cfg[part]["rows"])

    def row(method, dim, rmse, n_folds=5):
        return {"method": method, "dim": dim, "n_folds": n_folds, "rmse": rmse, "mae": 1.0, "rmse_2layer": rmse - 1}

    own = row("lgika_nys", 2000, 16.0)
    heads = {h["name"]: h["ours"] for h in raj2017._qm7_headlines([own, row("lgika_nys_orbit", 5700, 11.0, 3)], cfg,
                                                                   None)}
    assert heads["LGIKA (Nys) RMSE (D=2000)"] == 16.0  # the stand-in has only 3 of 5 folds
    heads = {h["name"]: h for h in raj2017._qm7_headlines([own, row("lgika_nys_orbit", 5700, 11.0)], cfg, None)}
    assert not any(name.startswith("LGIKA (Nys) RMSE") for name in heads)
    h = heads["LGIKA (Nys), landmarks from the orbits RMSE (D=5700)"]
    assert h["ours"] == 11.0 and h["paper"] == raj2017.PAPER_QM7["lgika_nys"][0]
    assert heads["LGIKA (Nys), landmarks from the orbits RMSE 2nd layer (D=5700)"]["paper"] == 10.45
    both = {h["name"] for h in raj2017._qm7_headlines([own, row("lgika_nys_orbit", 5700, 11.0),
                                                       row("lgika_nys_orbit", 10000, 10.8)], cfg, None)}
    assert "LGIKA (Nys), landmarks from the orbits RMSE (D=10000)" in both  # the largest D stands for the row
    assert not any("(D=5700)" in name for name in both)
    smaller = {h["name"] for h in raj2017._qm7_headlines([row("lgika_nys", 8000, 16.0), row("lgika_nys_orbit", 5700,
                                                                                             11.0)], cfg, None)}
    assert "LGIKA (Nys) RMSE (D=8000)" in smaller  # a stand-in at a smaller D does not replace the row
    rows = raj2017._qm7_rows({"lgika_nys_orbit|5700|0": {"rmse": 11.0, "mae": 7.0}}, cfg)
    assert rows[0]["paper_rmse"] == raj2017.PAPER_QM7["lgika_nys"][0]


def test_qm7_nystroem_rows_draw_their_landmarks_where_their_method_says(monkeypatch):
    from types import SimpleNamespace

    seen = []

    class Spy:
        def __init__(self, group, **kw):
            seen.append((kw["landmarks"], kw.get("backend"), kw.get("device")))

        def fit(self, X):
            return self

        def transform(self, X):
            return np.zeros((len(X), 2))

    monkeypatch.setattr(raj2017, "OrbitNystroem", Spy)
    data = SimpleNamespace(cfg={"r": 3}, seed=0, _cache={}, X=np.ones((4, 2)), Xs=np.ones((4, 2)), group=object(),
                           scale={"orig": 1.0, "sort": 1.0}, scale_l1=1.0)
    monkeypatch.delenv("ORBITKERNELS_BACKEND", raising=False)
    monkeypatch.delenv("ORBITKERNELS_DEVICE", raising=False)
    for name in ("lgika_nys", "lgika_nys_orbit", "orig_nys"):
        raj2017._QM7.features(data, name, 2, 0.25, np.arange(3))
    assert seen == [("data", "numpy", None), ("orbit", "numpy", None), ("data", "numpy", None)]
    # the molecules' feature maps run where $ORBITKERNELS_BACKEND / $ORBITKERNELS_DEVICE say, as the images' do
    monkeypatch.setenv("ORBITKERNELS_BACKEND", "torch")
    monkeypatch.setenv("ORBITKERNELS_DEVICE", "cuda")
    raj2017._QM7.features(data, "lgika_nys_orbit", 2, 0.25, np.arange(4))
    assert seen[-1] == ("orbit", "torch", "cuda")


def test_orthogonal_frequencies_keep_the_gaussian_law_and_lower_the_kernel_estimates_variance():
    """Yu et al. 2016's orthogonal random features for the wide 2nd layer: columns exactly orthogonal within a
    block of d, each N(0, I_d) (norms χ_d, directions uniform), and a Gaussian kernel estimate that is unbiased
    with a smaller spread over draws than i.i.d. frequencies at the same width."""
    from orbitkernels.experiments._raj_eval import WideLayer2
    from orbitkernels.features._frequencies import orthogonal_gaussian

    d, m = 16, 40
    Z = orthogonal_gaussian(d, m, np.random.default_rng(0))
    for a in range(0, m, d):
        B = Z[:, a:a + d]
        G = B.T @ B
        np.testing.assert_allclose(G - np.diag(np.diag(G)), 0, atol=1e-12)
    norms = np.linalg.norm(orthogonal_gaussian(d, 4000, np.random.default_rng(1)), axis=0)
    assert np.mean(norms ** 2) == pytest.approx(d, rel=0.05)  # E χ²_d = d
    first = orthogonal_gaussian(d, 4000, np.random.default_rng(2))[0]
    assert np.mean(first) == pytest.approx(0, abs=0.05) and np.var(first) == pytest.approx(1, rel=0.07)

    rng = np.random.default_rng(3)
    F = (rng.standard_normal((2, d)) * 0.25).astype(np.float32)
    exact = np.exp(-0.5 * np.sum((F[0].astype(np.float64) - F[1]) ** 2))
    est = {law: np.array([WideLayer2(F, d, seed, frequencies=law).grams(np.arange(2), [0.5])[0.5][0, 1]
                          for seed in range(400)]) for law in ("gaussian", "orthogonal")}
    for law, e in est.items():
        assert abs(e.mean() - exact) < 4 * e.std() / np.sqrt(len(e)), law
    assert est["orthogonal"].std() < 0.8 * est["gaussian"].std()
    with pytest.raises(ValueError, match="frequencies='sobol'"):
        WideLayer2(F, 4, 0, frequencies="sobol")


def test_qm7_fold_scores_by_hand():
    """The fold summary the QM7 probes record: RMSE, MAE and the molecule with the largest |error|, by hand."""
    err = np.array([1.0, -3.0, 2.0])
    test = np.array([7, 2, 5])  # molecule indices of the fold
    y = np.arange(10) * -100.0
    n_atoms = np.arange(10) + 3
    got = raj2017._qm7_fold_scores(err, test, y, n_atoms)
    assert got == {"rmse": pytest.approx(np.sqrt(14 / 3)), "mae": pytest.approx(2.0), "worst_atoms": 5,
                   "worst_energy": -200.0, "worst_error": -3.0}
