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
            assert set(t[loss]) == set(teo2007.ATTACKS)
            for mode in teo2007.ATTACKS:
                acc = [t[loss][mode][str(K)]["accuracy"] for K in saved["config"]["attack_K"]]
                assert all(0 <= a <= 1 for a in acc)
        # every test part is tested by models that never saw it or the tuning part; part 10's is the headline split
        d = saved["data"]
        parts = d["test_parts"]
        assert sorted(parts, key=int) == [str(k) for k in saved["config"]["test_parts"]]
        assert parts["10"]["eval"] == t and parts["10"]["n_test"] == d["n_test"]
        assert d["n_test_pooled"] == sum(p["n_test"] for p in parts.values())
        Kh = str(saved["config"]["headline_K"])
        for loss in ("fdrop", "fscale"):
            pooled = d["mcnemar_pooled"][loss]["drop"][Kh]
            for f in ("hinge_only", "invariant_only"):
                assert pooled[f] == sum(p["discordant"][loss]["drop"][Kh][f] for p in parts.values())
            assert pooled["p_value"] == pytest.approx(
                teo2007._mcnemar_p(pooled["hinge_only"], pooled["invariant_only"]))
            assert d["mcnemar"][loss]["drop"][Kh]["hinge_only"] == parts["10"]["discordant"][loss]["drop"][Kh][
                "hinge_only"]
        mean = d["mean_over_parts"]["fdrop"]["drop"][Kh]["accuracy"]
        assert mean == pytest.approx(np.mean([p["eval"]["fdrop"]["drop"][Kh]["accuracy"] for p in parts.values()]))
        heads = {h["name"]: h for h in saved["headline"]}
        assert any("test parts" in n and "McNemar" in n for n in heads)
    # a second call resumes nothing (the partial file is gone) but gives the same numbers
    again = teo2007.EXPERIMENTS[name](quick=True, out_dir=tmp_path)
    assert [h["ours"] for h in again["headline"]] == pytest.approx([h["ours"] for h in res["headline"]])
    # the docs page renders from these numbers
    shutil.copy(path, tmp_path / "teo2007" / f"{name}.json")
    md = teo2007.render_markdown(tmp_path)
    assert f"## {name}" in md and saved["headline"][0]["name"] in md


def test_spam_split_keeps_the_tuning_part_out():
    part = np.array([1, 2, 9, 10, 3, 9, 10, 2])
    tr, te = teo2007._spam_split(part, 2)
    np.testing.assert_array_equal(te, part == 2)
    np.testing.assert_array_equal(tr, np.isin(part, [1, 3, 10]))
    assert not (tr & te).any() and not tr[part == teo2007.TUNING_PART].any()


def test_spam_vocabulary_comes_from_the_training_rows_only():
    import scipy.sparse as sp

    counts = sp.csr_matrix(np.array([[1, 0, 3, 0], [2, 0, 1, 0], [0, 5, 0, 1], [0, 4, 0, 1]], float))
    train = np.array([True, True, False, False])
    X = teo2007._spam_features(counts, train, min_df=2)
    assert X.shape == (4, 2)  # words 0 and 2: in both training rows; words 1 and 3 only in the test rows
    np.testing.assert_allclose(np.asarray(X.multiply(X).sum(1)).ravel()[:2], 1.0)
    assert X[2:].nnz == 0


def test_pooled_mcnemar_sums_discordant_pairs():
    a = {"fdrop": {"drop": {"5": {"hinge_only": 1, "invariant_only": 9}}}}
    b = {"fdrop": {"drop": {"5": {"hinge_only": 0, "invariant_only": 30}}}}
    table = teo2007._mcnemar_table(teo2007._sum_discordant([a, b]))
    cell = table["fdrop"]["drop"]["5"]
    assert (cell["hinge_only"], cell["invariant_only"]) == (1, 39)
    assert cell["p_value"] == pytest.approx(teo2007.mcnemar(np.r_[np.ones(1), np.zeros(39)].astype(bool),
                                                            np.r_[np.zeros(1), np.ones(39)].astype(bool))[2])
    assert cell["p_value"] < 1e-9


def test_p_value_text_names_an_underflow():
    assert teo2007._p_text(3.0e-123) == "3e-123"
    assert teo2007._p_text(0.0) == "< 1e-300"


@pytest.mark.parametrize("sparse", [False, True])
def test_spam_side_attack_edits_the_spam_only(sparse):
    import scipy.sparse as sp
    from sklearn.metrics import roc_auc_score

    from orbitkernels.models import InvariantLinearClassifier, worst_case_attack

    rng = np.random.default_rng(0)
    X = np.abs(rng.normal(size=(60, 12)))
    y = (X[:, :3].sum(1) > X[:, 3:6].sum(1)).astype(int)
    model = InvariantLinearClassifier(loss="hinge", lam=1e-3, max_iter=20, random_state=0).fit(X, y)
    Xin = sp.csr_matrix(X) if sparse else X
    ev, correct = teo2007._spam_eval(model, Xin, y, [0, 2], (0.5, 2.0))
    assert set(ev) == set(teo2007.ATTACKS) and teo2007.HEADLINE_ATTACK in ev
    spam = y == 1
    for name, (mode, side) in teo2007.ATTACKS.items():
        lu = {} if mode == "drop" else {"l": 0.5, "u": 2.0}
        # message by message, not the implementation's masked batch: an attacked message is its own attack,
        # a ham message under a spam-side attack the clean row
        expect = np.vstack([worst_case_attack(model, X[i:i + 1], 2, mode=mode, y=y[i:i + 1], **lu)
                            if side != "spam" or spam[i] else X[i:i + 1] for i in range(len(X))])
        s = model.decision_function(expect)
        assert ev[name]["2"]["auc"] == pytest.approx(roc_auc_score(y, s))
        np.testing.assert_array_equal(correct[name]["2"], model.classes_[(s > 0).astype(int)] == y)
        if side == "spam":  # the ham is scored as if clean
            np.testing.assert_array_equal(correct[name]["2"][~spam], correct[name]["0"][~spam])
    # tuning scores the attacks on every message only, as before the spam-side ones were added
    tune, _ = teo2007._spam_eval(model, Xin, y, [0, 2], (0.5, 2.0), teo2007.TUNING_ATTACKS)
    assert set(tune) == {"drop", "scale"} and tune["drop"] == ev["drop"]
