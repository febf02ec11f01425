"""The GPU run of Mroueh et al. (2015, Fig. 2) over 100 training draws computes the CPU probe's rows.

``benchmarks/probes/mroueh2015/mnist_fig2_draws.py`` runs ``mnist_fig2.py --pixel-grid``'s rows (linear and
Gaussian-kernel RLS on CDF features of centred rows, λ and the width by the 80/20 hold-out) with the features kept
on a torch device and the RLS factorised per λ there. Here both run on the CPU on a small problem, and must select
the same width and λ and make the same predictions up to a test digit's rounding.
"""
import functools

import numpy as np
import pytest
from conftest import probe_module

from orbitkernels.experiments._mroueh_rls import rls_fit_predict, rls_holdout_gram_torch

torch = pytest.importorskip("torch")


def _problem(rng, n=600, m=300, d=30):
    X = rng.normal(size=(n + m, d))
    y = np.argmax(X @ rng.normal(size=(d, 10)) + 2 * rng.normal(size=(n + m, 10)), axis=1)
    return X[:n], y[:n], X[n:], y[n:]


@pytest.mark.parametrize("kernel", ["linear", "gaussian"])
@pytest.mark.parametrize("rels", [None, np.logspace(-9, -1, 9)])
def test_torch_holdout_rls_is_rls_fit_predicts_holdout(rng, kernel, rels):
    Xtr, ytr, Xte, yte = _problem(rng)
    if kernel == "linear":
        K, Kt = Xtr @ Xtr.T, Xte @ Xtr.T
    else:
        K = np.exp(-0.02 * ((Xtr[:, None] - Xtr[None]) ** 2).sum(-1))
        Kt = np.exp(-0.02 * ((Xte[:, None] - Xtr[None]) ** 2).sum(-1))
    classes = list(range(10))
    a = rls_fit_predict(K, ytr, Kt, classes=classes, kernel=True, eig_limit=100, seed=3, holdout_rels=rels)
    b = rls_holdout_gram_torch(torch.as_tensor(K), ytr, torch.as_tensor(Kt), classes=classes, seed=3,
                               holdout_rels=rels)
    assert a["selection"] == b["selection"] == "holdout"
    assert b["rel_lambda"] == a["rel_lambda"] and b["val_accuracy"] == a["val_accuracy"]
    assert b["lambda"] == pytest.approx(a["lambda"], rel=1e-12)
    np.testing.assert_array_equal(b["pred"], a["pred"])


def test_torch_holdout_rls_of_a_low_rank_gram_matrix_is_ridge_paths(rng):
    # 5 features, 300 rows: K_c + α I at the grid's small α is singular to rounding, where RidgePath clips
    Xtr, ytr, Xte, _ = _problem(rng, n=300, m=50, d=5)
    K, Kt = 1e3 * Xtr @ Xtr.T, 1e3 * Xte @ Xtr.T
    rels = np.logspace(-16, -14, 3)
    a = rls_fit_predict(K, ytr, Kt, kernel=True, eig_limit=10, holdout_rels=rels)
    b = rls_holdout_gram_torch(K, ytr, Kt, holdout_rels=rels)
    assert b["eigh_alphas"], "the test's α should defeat the Cholesky factorisation"
    assert b["rel_lambda"] == a["rel_lambda"] and b["val_accuracy"] == a["val_accuracy"]
    np.testing.assert_array_equal(b["pred"], a["pred"])


@pytest.fixture
def small_fig2(monkeypatch):
    """mnist_fig2's rows on 10 x 10 images, 6 templates, 4 bins, on its hold-out branch."""
    fig2 = probe_module("benchmarks/probes/mroueh2015/mnist_fig2.py")
    draws = probe_module("benchmarks/probes/mroueh2015/mnist_fig2_draws.py")
    monkeypatch.setattr(fig2, "N_TEMPLATES", 6)
    monkeypatch.setattr(fig2, "N_BINS", 4)
    monkeypatch.setattr(fig2, "rls_fit_predict", functools.partial(rls_fit_predict, eig_limit=50))
    monkeypatch.setattr(fig2, "MEDIAN_ROWS", 500)  # a median over 500 rows, for both probes:
    monkeypatch.setattr(draws, "median_sq_dist", fig2.median_sq_dist)  # draws imported its own copy of fig2
    return fig2, draws


def test_draw_rows_are_mnist_fig2_rows(small_fig2, rng):
    fig2, draws = small_fig2
    from orbitkernels.experiments.mroueh2015 import mnist_config

    class D:  # what run_row reads of mroueh2015._Mnist
        classes = list(range(10))
        cfg = mnist_config(False, 0)
        group = fig2.pixel_grid((10, 10))

        def accuracy(self, pred):
            return float(np.mean(pred == self.yte))

    d = D()
    # digits-like rows: non-negative blobs whose class moves their mass, noisy enough that no λ classifies every
    # validation row (on a saturated problem the selection falls to the squared errors' last digits)
    n, m = 600, 150  # run_row takes the median over MEDIAN_ROWS training rows
    y_all = rng.integers(0, 10, n + m)
    base = rng.random((10, 100)) ** 4
    X_all = (base[y_all] + 1.0 * rng.random((n + m, 100))).astype(np.float32)
    d.Xtr, d.ytr, d.Xte, d.yte = X_all[:n], y_all[:n], X_all[n:], y_all[n:]

    stored = {}

    class Probes:
        def save(self, key, row):
            stored[key] = row

    for gaussian in (False, True):
        fig2.run_row(d, Probes(), gaussian, gaussian, "qmc", None, False, centred=True)
    est = draws.make_estimator(d.group, device="cpu", n_templates=6, n_bins=4).fit(draws.centre(d.Xtr))
    tops = draws.row_ranges(est, draws.centre(d.Xtr))
    r = float(tops.max()) * (1 + 1e-6)
    assert r == est.range_  # a draw's range from the rows' largest projections is its own fit's
    Ftr = draws.device_features(est, draws.centre(d.Xtr), r)
    np.testing.assert_allclose(Ftr.numpy(), est.transform(draws.centre(d.Xtr)), rtol=0, atol=0)
    Fte = draws.device_features(est, draws.centre(d.Xte), r)
    rows = draws.draw_rows(Ftr, d.ytr, Fte, d.yte, gram="float32")  # run_row's float32 products
    for key, clf in ((False, "linear"), (True, "gaussian")):
        cpu, dev = stored[key], rows[clf]
        assert dev["rel_lambda"] == cpu["rel_lambda"]
        assert dev["val_accuracy"] == cpu["val_accuracy"]
        assert abs(dev["accuracy"] - cpu["accuracy"]) <= 1 / m + 1e-12
        assert cpu["val_accuracy"] < 0.9
    assert rows["gaussian"]["gamma_factor"] == stored[True]["gamma_factor"]
    # squared distances are differences of float32 Gram entries (as in run_row): another BLAS's rounding of them
    # moves the median by ~1e-5 here
    assert rows["gaussian"]["median_sq_dist"] == pytest.approx(stored[True]["median_sq_dist"], rel=1e-3)
    assert rows["gaussian"]["val_accuracy_per_factor"] == stored[True]["val_accuracy_per_factor"]


def test_summary_and_the_cpu_check(small_fig2, tmp_path):
    _, draws = small_fig2
    store = {"draws": {"0": {"linear": {"accuracy": 0.98}, "gaussian": {"accuracy": 0.99}},
                       "1": {"linear": {"accuracy": 0.97}, "gaussian": {"accuracy": 0.985}}}}
    s = draws.summary(store["draws"])
    assert s["gaussian"]["mean"] == pytest.approx(0.9875) and s["gaussian"]["n_draws"] == 2
    assert s["gaussian"]["draws_at_or_above_paper"] == 1 and s["linear"]["draws_at_or_above_paper"] == 0
    assert draws.summary({"0": store["draws"]["0"]}) == {}
    cpu = tmp_path / "cpu.json"
    cpu.write_text('{"variants": {"pixel grid |G|=441 Gaussian RLS, centred rows": {"accuracy": 0.9891},'
                   ' "pixel grid |G|=441 linear RLS, centred rows, training draw 1": {"accuracy": 0.9702}}}')
    check = draws.cpu_check(store, cpu)
    assert check["rows"] == {"0": {"gaussian": {"cpu": 0.9891, "device": 0.99}},
                             "1": {"linear": {"cpu": 0.9702, "device": 0.97}}}
    assert check["max_abs_diff"] == pytest.approx(0.0009) and check["test_digits"] == 9


def test_the_check_rows_are_the_cpu_probes_features(small_fig2, monkeypatch, tmp_path):
    # --write-check-rows writes what mnist_fig2.features computes for draw 0's first rows (here with 6 templates and
    # 4 bins): the reference the device's features are held to before any draw
    from conftest import shared_data_dir

    data = shared_data_dir()
    if data is None or not (data / "mnist.npz").is_file():
        pytest.skip("mnist.npz not found (set ORBITKERNELS_DATA)")
    monkeypatch.setenv("ORBITKERNELS_DATA", str(data))
    fig2, draws = small_fig2
    from orbitkernels.experiments.mroueh2015 import _Mnist, mnist_config

    make = draws.make_estimator
    monkeypatch.setattr(draws, "make_estimator", lambda group, **kw: make(group, n_templates=6, n_bins=4, **kw))
    draws.write_check_rows(tmp_path / "rows.npz", n_rows=30)
    ref = np.load(tmp_path / "rows.npz")
    d = _Mnist(mnist_config(False, 0), 0)
    d.group = fig2.pixel_grid()
    Ftr, _ = fig2.features(d, "qmc", None, centred=True)
    np.testing.assert_array_equal(ref["features"], Ftr[:30])
