"""Loaders on the real files, when ORBITKERNELS_DATA points at a folder that holds them (CI does).

Each test is skipped, with the reason, when the variable is unset or the file is absent. The real
registry checksums are used: a file that does not match them fails the test.
"""
from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pooch
import pytest

import orbitkernels.datasets as D


@pytest.fixture(autouse=True)
def no_network(monkeypatch):
    def offline(url, *args, **kwargs):
        raise AssertionError(f"tests must not download ({url})")

    monkeypatch.setattr(pooch, "retrieve", offline)


def real_file(name):
    folder = os.environ.get(D.ENV_VAR, "").strip()
    if not folder:
        pytest.skip(f"{D.ENV_VAR} is not set: no folder with the real data files")
    path = Path(folder) / name
    if not path.is_file():
        pytest.skip(f"{name} is not in {folder} ({D.ENV_VAR})")
    return path


def test_real_mnist():
    real_file("mnist.npz")
    b = D.load_mnist(download=False)
    assert b.x_train.shape == (60000, 28, 28) and b.x_train.dtype == np.uint8
    assert b.x_test.shape == (10000, 28, 28) and b.y_test.shape == (10000,)
    assert b.y_train.dtype == np.uint8 and set(np.unique(b.y_train)) == set(range(10))
    assert b.x_train.max() == 255


def test_real_rotated_mnist_regenerated_small():
    real_file("mnist.npz")
    b = D.load_rotated_mnist(source="regenerated", download=False, n_train=500, n_valid=100, n_test=400)
    assert b.source == "regenerated"
    assert b.x_train.shape == (500, 784) and b.x_valid.shape == (100, 784) and b.x_test.shape == (400, 784)
    assert b.x_train.dtype == np.float32 and 0 <= b.x_train.min() and b.x_train.max() <= 1
    # rotation about the centre keeps the ink mass of a digit away from the border
    m = D.load_mnist(download=False)
    ink = m.x_train[b.mnist_index.train].reshape(500, -1).sum(1) / 255.0
    np.testing.assert_allclose(b.x_train.sum(1), ink, rtol=0.08)


def test_real_qm7():
    real_file("qm7.npz")
    b = D.load_qm7(download=False)
    assert b.R.shape == (7165, 23, 3) and b.Z.shape == (7165, 23) and b.T.shape == (7165,)
    assert b.X.shape == (7165, 23, 23) and b.X.dtype == np.float64
    assert b.Z.dtype == np.uint8 and b.n_atoms.max() == 23
    assert b.T.min() == pytest.approx(-2192.0) and b.T.max() == pytest.approx(-404.88, abs=0.01)
    assert b.folds_source == "generated (seed=0)" and [len(f) for f in b.folds] == [1433] * 5
    # molecule 0 is methane: C-H 1.092 angstrom, so C_CH = 6 * 0.529177 / 1.092
    assert list(b.Z[0, :5]) == [6, 1, 1, 1, 1]
    np.testing.assert_allclose(b.X[0, 0, 1:5], 6 * 0.529177 / 1.092, rtol=1e-3)
    assert b.X[0, 0, 0] == pytest.approx(0.5 * 6 ** 2.4)


def test_real_fsdd():
    real_file("fsdd.npz")
    b = D.load_fsdd(download=False)
    assert b.waveforms.shape == (3000, 18262) and b.waveforms.dtype == np.int16
    assert b.sample_rate == 8000 and b.lengths.max() == 18262
    assert sorted(set(b.speaker)) == ["george", "jackson", "lucas", "nicolas", "theo", "yweweler"]
    train, test = D.fsdd_split(b, "official")
    assert len(test) == 300 and len(train) == 2700
    train, test = D.fsdd_split(b)
    assert len(test) == 1000 and not set(b.speaker[train]) & set(b.speaker[test])


def test_real_lingspam():
    real_file("lingspam.npz")
    b = D.load_lingspam(download=False)
    assert len(b.texts) == 2893 and b.label.sum() == 481
    assert b.counts.shape == (2893, 65724) and b.vocab.shape == (65724,)
    assert sorted(set(b.part.tolist())) == list(range(1, 11))
    assert all(t.startswith("Subject:") for t in b.texts[:20])
    assert all(f.startswith("spmsg") == bool(y) for f, y in zip(b.filename, b.label))
    # the stored bag of words is the whitespace tokenisation of the texts
    i = 7
    tokens = b.texts[i].split()
    row = b.counts[i].toarray().ravel()
    assert row.sum() == len(tokens)
    assert row[np.searchsorted(b.vocab, tokens[0])] == tokens.count(tokens[0])
