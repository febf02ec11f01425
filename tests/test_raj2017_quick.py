"""Quick modes of the Raj et al. 2017 reproduction (tiny configurations, tmp_path results)."""
import json
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


def _check(result, path):
    assert path.is_file() and path.with_suffix(".png").is_file()
    on_disk = json.loads(path.read_text())
    assert on_disk["headline"] == result["headline"] and result["headline"]
    for h in result["headline"]:
        assert set(h) >= {"name", "ours", "paper", "better"}
        assert h["ours"] is not None and np.isfinite(h["ours"])


def test_registered():
    assert set(get_experiments("raj2017")) == {"qm7", "kernel_approx", "rotated_mnist", "cifar10"}


def test_qm7_quick(tmp_path, monkeypatch):
    _need("qm7.npz", monkeypatch)
    res = raj2017.run_qm7(quick=True, out_dir=tmp_path)
    _check(res, tmp_path / "raj2017" / "qm7_quick.json")
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


def test_qm7_resume_reuses_cells(tmp_path, monkeypatch):
    _need("qm7.npz", monkeypatch)
    first = raj2017.run_qm7(quick=True, out_dir=tmp_path)
    second = raj2017.run_qm7(quick=True, out_dir=tmp_path)  # partial file removed at finish: recomputed, same seed
    assert first["headline"] == second["headline"]


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


def test_qm7_finished_results_are_reused(tmp_path, monkeypatch):
    _need("qm7.npz", monkeypatch)
    first = raj2017.run_qm7(quick=True, out_dir=tmp_path)
    second = raj2017.run_qm7(quick=True, out_dir=tmp_path)  # finished file, same configuration: cells reused
    assert second["resumed_cells"] == len(first["data"]["cells"]) and second["headline"] == first["headline"]


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
    # without the protocol row the headline is the method's own largest D, as before
    heads = {h["name"] for h in raj2017._image_heads(rows[:2], raj2017.PAPER_MNIST)}
    assert "LGIKA (RF) accuracy % (D=14000)" in heads
