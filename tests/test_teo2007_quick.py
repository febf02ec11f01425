"""Teo et al. 2007 reproduction: quick configurations end to end, and the helpers they rely on."""
import json
import shutil

import numpy as np
import pytest
from sklearn.svm import SVC

from conftest import shared_data_dir
from orbitkernels.experiments import get_experiments
from orbitkernels.experiments import teo2007

needs_data = pytest.mark.skipif(shared_data_dir() is None, reason="needs the real data (ORBITKERNELS_DATA)")


def test_twenty_transformations_are_the_papers():
    trans = teo2007.mnist_transformations()
    assert len(trans) == 20
    img = np.zeros((28, 28))
    img[10:14, 12:15] = 1.0
    x = img.reshape(1, -1)
    shifted = trans[1](x).reshape(28, 28)  # one pixel down
    np.testing.assert_allclose(shifted[11:15, 12:15], 1.0)
    assert shifted.sum() == pytest.approx(img.sum())  # plain warp: ink is not rescaled
    diag = [t for t in trans if t.name == "shift(2,2)"][0](x).reshape(28, 28)
    np.testing.assert_allclose(diag[12:16, 14:17], 1.0)
    names = [t.name for t in trans]
    assert len(set(names)) == 20 and sum(n.startswith("rotate") for n in names) == 2
    # every transformation changes the image and keeps it in [0, 1]
    for t in trans:
        out = t(x)
        assert out.shape == x.shape and not np.allclose(out, x) and out.min() >= 0 and out.max() <= 1 + 1e-12


def test_ovo_predict_matches_libsvm():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 5))
    y = (X[:, 0] > 0).astype(int) + (X[:, 1] > 0.5).astype(int) * 2
    Xt = rng.normal(size=(300, 5))
    for labels in (y, (y > 1).astype(int)):
        svc = SVC(C=5.0, gamma=0.4).fit(X, labels)
        np.testing.assert_array_equal(teo2007.ovo_predict(svc, Xt, chunk=70), svc.predict(Xt))


def test_mcnemar():
    a = np.array([1, 1, 1, 1, 1, 1, 1, 1, 0, 1], bool)
    b = np.array([0, 0, 0, 0, 0, 0, 0, 0, 0, 1], bool)
    n01, n10, p = teo2007.mcnemar(a, b)
    assert (n01, n10) == (8, 0)
    assert p == pytest.approx(2 * 0.5 ** 8)
    assert teo2007.mcnemar(a, a)[2] == 1.0
    with pytest.raises(ValueError, match="same shape"):
        teo2007.mcnemar(a, b[:3])


def test_registered_in_the_cli_mapping():
    assert set(get_experiments("teo2007")) == {"mnist", "spam"}


@needs_data
@pytest.mark.parametrize("name", ["spam", "mnist"])
def test_quick_experiment_end_to_end(name, tmp_path, monkeypatch):
    monkeypatch.setenv("ORBITKERNELS_DATA", str(shared_data_dir()))
    res = teo2007.EXPERIMENTS[name](quick=True, out_dir=tmp_path)
    path = tmp_path / "teo2007" / f"{name}_quick.json"
    assert path.exists() and (tmp_path / "teo2007" / f"{name}_quick.png").stat().st_size > 1000
    saved = json.loads(path.read_text())
    assert saved["headline"] and all({"name", "ours", "paper", "better"} <= set(h) for h in saved["headline"])
    assert all(h["ours"] is not None and np.isfinite(h["ours"]) for h in saved["headline"])
    assert saved["quick"] is True and saved["config"]["seed"] == 0
    if name == "mnist":
        curves = saved["data"]["curves"]
        assert set(curves) == {"STD-SVM", "VIR-SVM", "Invar-SVM"}
        for rows in curves.values():
            assert all(0 <= r["error_mean"] <= 1 and r["n_sv_mean"] > 0 for r in rows)
        # VIR-SVM trains on originals + 20 virtual copies of each
        draw = curves["VIR-SVM"][0]["draws"][0]
        assert draw["n_train_vectors"] == 21 * 10 * saved["config"]["per_class"][0]
    else:
        t = saved["data"]["test"]
        assert set(t) == {"hinge", "fdrop", "fscale"}
        assert set(saved["data"]["mcnemar"]) == {"fdrop", "fscale"}
        for loss in t:
            for mode in ("drop", "scale"):
                acc = [t[loss][mode][str(K)]["accuracy"] for K in saved["config"]["attack_K"]]
                assert all(0 <= a <= 1 for a in acc)
    # a second call resumes nothing (the partial file is gone) but gives the same numbers
    again = teo2007.EXPERIMENTS[name](quick=True, out_dir=tmp_path)
    assert [h["ours"] for h in again["headline"]] == pytest.approx([h["ours"] for h in res["headline"]])
    # the docs page renders from these numbers
    shutil.copy(path, tmp_path / "teo2007" / f"{name}.json")
    md = teo2007.render_markdown(tmp_path)
    assert f"## {name}" in md and saved["headline"][0]["name"] in md
