"""Small consistency fixes: integer and label checks, the Ling-Spam counts dtype, PolarRotation's angle law."""
from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import clone

import orbitkernels.datasets as D
from orbitkernels.datasets._base import replace_hashes
from orbitkernels.datasets._registry import REGISTRY
from orbitkernels.features import OrbitFourierFeatures
from orbitkernels.groups import FiniteRotation3D, ImageRotation, Rotation3D
from orbitkernels.groups.distributions import Uniform, VonMises
from orbitkernels.groups.polar import PolarRotation
from orbitkernels.models import fscale_worst_case, worst_case_attack, worst_case_scaling


# --------------------------------------------------------------------------- Rotation3D(n_atoms)
@pytest.mark.parametrize("n_atoms", [2.0, "2", True, np.float64(3.0)])
def test_rotation3d_n_atoms_of_another_type_is_a_type_error(n_atoms):
    # as every other integer parameter (check_int): a wrong type is a TypeError, a wrong value a ValueError
    with pytest.raises(TypeError, match="n_atoms must be an integer"):
        Rotation3D(n_atoms=n_atoms)
    with pytest.raises(TypeError, match="n_atoms must be an integer"):
        FiniteRotation3D("T", n_atoms=n_atoms)


def test_rotation3d_n_atoms_values():
    with pytest.raises(ValueError, match="n_atoms must be >= 1"):
        Rotation3D(n_atoms=0)
    g = Rotation3D(n_atoms=np.int64(3))
    assert g.n_atoms == 3 and type(g.n_atoms) is int and g.n_features == 12
    assert Rotation3D().n_atoms is None and Rotation3D().n_features is None


# --------------------------------------------------------------------------- labels y of Eq. 10
def _problem():
    rng = np.random.default_rng(0)
    return rng.normal(size=5), rng.normal(size=5)


@pytest.mark.parametrize("y", [True, False, np.bool_(True)])
def test_fscale_worst_case_refuses_boolean_label(y):
    x, w = _problem()
    with pytest.raises(TypeError, match="y must .*not (a )?boolean"):
        fscale_worst_case(x, y, w, 2)


@pytest.mark.parametrize("y", [True, np.bool_(True), np.array([True, True]), [True, True], [1, True],
                               np.array([1, True], dtype=object)])
def test_worst_case_scaling_refuses_boolean_labels(y):
    x, w = _problem()
    X = np.vstack([x, -x])
    with pytest.raises(TypeError, match="y must .*not (a )?boolean"):
        worst_case_scaling(X, y, w, 2)
    with pytest.raises(TypeError, match="y must .*not (a )?boolean"):
        worst_case_scaling(sp.csr_matrix(X), y, w, 2)


def test_worst_case_attack_with_raw_weights_refuses_boolean_labels():
    x, w = _problem()
    with pytest.raises(TypeError, match="y must .*not (a )?boolean"):
        worst_case_attack(w, np.vstack([x, -x]), 2, y=np.array([True, True]))


@pytest.mark.parametrize("y", [1, -1, 1.0, -1.0, np.int64(1), np.float64(-1.0), np.int32(-1), np.array(1)])
def test_numeric_labels_still_work(y):
    x, w = _problem()
    xs = fscale_worst_case(x, y, w, 2)
    Xs = worst_case_scaling(x[None, :], y, w, 2)
    np.testing.assert_allclose(Xs[0], xs)
    assert float(y) * w @ xs <= float(y) * w @ x
    labels = np.array([y, -y], dtype=np.asarray(y).dtype)
    np.testing.assert_allclose(worst_case_scaling(np.vstack([x, x]), labels, w, 2)[0], xs)


def test_non_pm1_numbers_stay_value_errors():
    x, w = _problem()
    with pytest.raises(ValueError, match="y must be -1 or \\+1"):
        fscale_worst_case(x, 0, w, 2)
    with pytest.raises(ValueError, match="y must contain only -1 and \\+1"):
        worst_case_scaling(x[None, :], 0.5, w, 2)


# --------------------------------------------------------------------------- Ling-Spam counts dtype
_TEXTS = ["Subject: hi\n\nmoney money\n", "Subject: re\n\nthe np np\n"]


def _write_lingspam_npz(path, data_dtype, scale=1):
    from sklearn.feature_extraction.text import CountVectorizer

    arrays = {}
    for version in D.LINGSPAM_VERSIONS:
        raws = [t.encode() for t in _TEXTS]
        arrays[f"text_{version}_bytes"] = np.frombuffer(b"".join(raws), np.uint8)
        arrays[f"text_{version}_offsets"] = np.concatenate([[0], np.cumsum([len(r) for r in raws])]).astype(np.int64)
    cv = CountVectorizer(tokenizer=str.split, lowercase=False, token_pattern=None)
    counts = cv.fit_transform(_TEXTS).tocsr()
    arrays.update(
        label=np.array([0, 1], np.uint8), part=np.array([1, 2], np.uint8),
        filename=np.array(["3-1msg1.txt", "spmsga1.txt"]),
        bare_counts_data=(counts.data.astype(np.int64) * scale).astype(data_dtype),
        bare_counts_indices=counts.indices.astype(np.int32), bare_counts_indptr=counts.indptr.astype(np.int64),
        bare_counts_shape=np.array(counts.shape, np.int64), bare_vocab=cv.get_feature_names_out().astype(str),
    )
    np.savez_compressed(path, **arrays)
    return counts


@pytest.fixture
def lingspam_home(tmp_path, monkeypatch):
    """An empty data folder; ``register()`` gives the registry the checksum of the stand-in file written there."""
    from orbitkernels.datasets import _registry

    monkeypatch.setattr(_registry, "EXPECTED_RECORDS", {})  # two stand-in messages, not the published 2,893
    monkeypatch.delenv(D.ENV_VAR, raising=False)
    home = tmp_path / "data"
    home.mkdir()

    def register():
        info = REGISTRY["lingspam"]
        hashes = {f.name: (f"sha256:{hashlib.sha256(Path(home / f.name).read_bytes()).hexdigest()}",)
                  for f in info.files("converted") if (home / f.name).exists()}
        monkeypatch.setitem(REGISTRY, "lingspam", replace_hashes(info, "converted", hashes))

    return home, register


@pytest.mark.parametrize("data_dtype", [np.int32, np.int64, np.uint8, np.uint16, np.uint64])
def test_lingspam_npz_counts_are_int32_whatever_the_file_stores(lingspam_home, data_dtype):
    home, register = lingspam_home
    expected = _write_lingspam_npz(home / "lingspam.npz", data_dtype)
    register()
    b = D.load_lingspam(home, download=False)
    assert b.source == "lingspam.npz" and b.counts.dtype == np.int32
    assert (b.counts != expected).nnz == 0
    # the other versions have no stored counts: computed, with the same dtype
    c = D.load_lingspam(home, version="lemm", download=False)
    assert c.counts.dtype == np.int32 and (c.counts != expected).nnz == 0


def test_lingspam_npz_counts_beyond_int32_are_refused(lingspam_home):
    home, register = lingspam_home
    _write_lingspam_npz(home / "lingspam.npz", np.int64, scale=2**31)
    register()
    with pytest.raises(D.DatasetFormatError, match="bare_counts_data"):
        D.load_lingspam(home, download=False)


def test_lingspam_docstring_states_one_dtype():
    doc = D.load_lingspam.__doc__
    assert "int32" in doc and "int32 in this project's file" not in doc


# --------------------------------------------------------------------------- PolarRotation.angle
def test_polar_rotation_angle_reports_the_given_law():
    law = VonMises(2.0, loc=0.5)
    g = PolarRotation((8, 8), n_angles=16, angle=law)
    assert g.angle == law and g.angle_law == law
    default = PolarRotation((8, 8), n_angles=16)
    assert default.angle == Uniform(-np.pi, np.pi) and default.angle_law is None
    assert ImageRotation((8, 8)).angle == Uniform(-np.pi, np.pi)
    # what the law already decided is unchanged: q on the grid, symmetry, repr, the finite group
    np.testing.assert_allclose(g.weights().sum(), 1.0)
    assert not g.is_symmetric and default.is_symmetric and g.is_finite and not g.is_haar()
    assert repr(g).endswith(f"angle={law!r})") and "angle=" not in repr(default)
    assert default.weights() is None and g.sample(5, 0).shape == (5, 1)


def test_polar_rotation_angle_survives_clone_of_an_estimator():
    law = VonMises(1.5)
    f = OrbitFourierFeatures(PolarRotation((8, 8), n_angles=16, angle=law), n_components=4, random_state=0)
    g = clone(f).get_params()["group"]
    assert g.angle == law and g.angle_law == law
    np.testing.assert_allclose(g.weights(), f.group.weights())
