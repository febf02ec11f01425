"""Tests of orbitkernels.datasets on small files made here (no network, no real data needed)."""
from __future__ import annotations

import gzip
import hashlib
import io
import itertools
import os
import pickle
import struct
import tarfile
import zipfile
from pathlib import Path

import numpy as np
import pooch
import pytest
import scipy.io
import scipy.sparse as sp
from scipy import ndimage
from scipy.io import wavfile

import orbitkernels.datasets as D
from orbitkernels.datasets import _base, cifar10, mnist, rotated_mnist
from orbitkernels.datasets._base import replace_hashes
from orbitkernels.datasets._registry import REGISTRY


# --------------------------------------------------------------------------- helpers
def sha256(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def register(monkeypatch, name, form, home):
    """Give the registry entry the checksums of the stand-in files present in ``home``."""
    info = REGISTRY[name]
    hashes = {f.name: (f"sha256:{sha256(home / f.name)}",) for f in info.files(form) if (home / f.name).exists()}
    monkeypatch.setitem(REGISTRY, name, replace_hashes(info, form, hashes))


def corrupt(path):
    """Flip one byte in the middle (same size) and move the mtime so no cached digest applies."""
    data = bytearray(Path(path).read_bytes())
    data[len(data) // 2] ^= 0xFF
    Path(path).write_bytes(bytes(data))
    st = os.stat(path)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))


def forbid(monkeypatch, target, name):
    """Make ``target.name`` fail the test if called (proves a file was not parsed)."""
    def spy(*args, **kwargs):
        raise AssertionError(f"{name} must not be called")
    monkeypatch.setattr(target, name, spy)


@pytest.fixture(autouse=True)
def no_network(monkeypatch):
    """pooch.retrieve never reaches the network in these tests; calls are recorded."""
    calls = []

    def offline(url, *args, **kwargs):
        calls.append(url)
        raise ConnectionError(f"no network in tests ({url})")

    monkeypatch.setattr(pooch, "retrieve", offline)
    monkeypatch.delenv(D.ENV_VAR, raising=False)
    return calls


@pytest.fixture(autouse=True)
def stand_in_counts(monkeypatch):
    """The small stand-in files here hold a few records, not the published counts: no count to check
    (tests/test_hardening_infra.py checks the counts with stand-in values)."""
    from orbitkernels.datasets import _registry

    monkeypatch.setattr(_registry, "EXPECTED_RECORDS", {})


@pytest.fixture
def home(tmp_path):
    d = tmp_path / "data"
    d.mkdir()
    return d


def add_member(tf, name, raw):
    info = tarfile.TarInfo(name)
    info.size = len(raw)
    tf.addfile(info, io.BytesIO(raw))


def idx_bytes(arr):
    codes = {np.dtype("u1"): 0x08, np.dtype("i1"): 0x09, np.dtype("i2"): 0x0B, np.dtype("i4"): 0x0C,
             np.dtype("f4"): 0x0D, np.dtype("f8"): 0x0E}
    arr = np.asarray(arr)
    header = b"\0\0" + bytes([codes[arr.dtype], arr.ndim]) + struct.pack(">" + "I" * arr.ndim, *arr.shape)
    return header + arr.astype(arr.dtype.newbyteorder(">")).tobytes()


def tiny_mnist(n_train=20, n_test=10, seed=0):
    rng = np.random.default_rng(seed)
    x_train = np.zeros((n_train, 28, 28), np.uint8)
    x_test = np.zeros((n_test, 28, 28), np.uint8)
    # a bright blob away from the border, like a digit
    x_train[:, 8:20, 10:18] = rng.integers(1, 256, (n_train, 12, 8))
    x_test[:, 8:20, 10:18] = rng.integers(1, 256, (n_test, 12, 8))
    return dict(x_train=x_train, y_train=rng.integers(0, 10, n_train).astype(np.uint8),
                x_test=x_test, y_test=rng.integers(0, 10, n_test).astype(np.uint8))


def write_mnist_npz(home, **kw):
    arrays = tiny_mnist(**kw)
    np.savez_compressed(home / "mnist.npz", **arrays)
    return arrays


def write_mnist_idx(home):
    arrays = tiny_mnist()
    for key, name in mnist._IDX_FILES.items():
        (home / name).write_bytes(gzip.compress(idx_bytes(arrays[key])))
    return arrays


# --------------------------------------------------------------------------- data folder
def test_data_home_precedence_argument_env_default(tmp_path, monkeypatch):
    arg, env, cache = tmp_path / "arg", tmp_path / "env", tmp_path / "cache" / "orbitkernels"
    arg.mkdir()
    env.mkdir()
    monkeypatch.setattr(pooch, "os_cache", lambda name: cache)
    assert D.get_data_home() == cache and cache.is_dir()  # default cache is created
    monkeypatch.setenv(D.ENV_VAR, str(env))
    assert D.get_data_home() == env
    assert D.get_data_home(arg) == arg
    assert D.get_data_home(str(arg)) == arg


def test_data_home_given_folder_must_exist(tmp_path, monkeypatch):
    missing = tmp_path / "nope"
    with pytest.raises(FileNotFoundError, match="nope.*data_home argument"):
        D.get_data_home(missing)
    monkeypatch.setenv(D.ENV_VAR, str(missing))
    with pytest.raises(FileNotFoundError, match=f"nope.*{D.ENV_VAR}"):
        D.get_data_home()
    assert not missing.exists()  # a user-given folder is never created


def test_loader_uses_env_folder(home, monkeypatch):
    arrays = write_mnist_npz(home)
    register(monkeypatch, "mnist", "converted", home)
    monkeypatch.setenv(D.ENV_VAR, str(home))
    np.testing.assert_array_equal(D.load_mnist(download=False).x_train, arrays["x_train"])


def test_file_hash_streams_and_caches(home, monkeypatch):
    path = home / "f.bin"
    path.write_bytes(os.urandom(3 * (1 << 20) + 7))  # several chunks
    assert D.file_hash(path) == sha256(path)
    assert D.file_hash(path, "md5") == hashlib.md5(path.read_bytes()).hexdigest()
    opened = []
    real_new = hashlib.new
    monkeypatch.setattr(_base.hashlib, "new", lambda alg: opened.append(alg) or real_new(alg))
    D.file_hash(path)
    assert opened == []  # cached per (path, size, mtime)
    corrupt(path)
    assert D.file_hash(path) == sha256(path) and opened == ["sha256"]


# --------------------------------------------------------------------------- generic resolution behaviour
LOADERS = {
    "mnist": (D.load_mnist, ["mnist.npz", "train-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz"]),
    "qm7": (D.load_qm7, ["qm7.npz", "qm7.mat"]),
    "fsdd": (D.load_fsdd, ["fsdd.npz", "free-spoken-digit-dataset-1.0.10.tar.gz"]),
    "lingspam": (D.load_lingspam, ["lingspam.npz", "lingspam_public.tar.gz"]),
    "cifar10": (D.load_cifar10, ["cifar-10-python.tar.gz"]),
    "rotated_mnist": (lambda data_home, download: D.load_rotated_mnist(data_home, source="official",
                                                                       download=download),
                      ["mnist_rotation_new.zip"]),
}


@pytest.mark.parametrize("name", sorted(LOADERS))
def test_missing_files_error_names_files_folder_env_and_url(name, home, no_network):
    loader, names = LOADERS[name]
    with pytest.raises(D.DatasetNotFoundError) as info:
        loader(data_home=home, download=False)
    msg = str(info.value)
    for fname in names:
        assert fname in msg
    assert str(home) in msg and D.ENV_VAR in msg and "download=False" in msg
    for f in REGISTRY[name].canonical:
        assert f.url in msg
    assert isinstance(info.value, FileNotFoundError)
    assert no_network == []  # download=False never tries the network


@pytest.mark.parametrize("name", sorted(LOADERS))
def test_download_failure_is_reported(name, home, no_network):
    loader, _ = LOADERS[name]
    with pytest.raises(D.DatasetNotFoundError, match="Downloading failed.*no network") as info:
        loader(data_home=home, download=True)
    assert no_network and no_network[0] in str(info.value)


def test_download_writes_canonical_files_then_verifies(home, tmp_path, monkeypatch):
    source = tmp_path / "server"
    source.mkdir()
    arrays = write_mnist_idx(source)
    register(monkeypatch, "mnist", "canonical", source)

    def fake_retrieve(url, known_hash, fname, path, progressbar):
        assert known_hash.startswith("sha256:") and url.endswith(fname)
        (Path(path) / fname).write_bytes((source / fname).read_bytes())
        return str(Path(path) / fname)

    monkeypatch.setattr(pooch, "retrieve", fake_retrieve)
    bunch = D.load_mnist(home, download=True)
    assert bunch.source == "idx"
    np.testing.assert_array_equal(bunch.y_test, arrays["y_test"])


def test_download_with_wrong_hash_is_a_checksum_error(home, monkeypatch):
    def bad(url, known_hash, fname, path, progressbar):
        raise ValueError(f"SHA256 hash of downloaded file ({fname}) does not match the known hash")

    monkeypatch.setattr(pooch, "retrieve", bad)
    with pytest.raises(D.DatasetChecksumError, match="cifar-10-python.tar.gz"):
        D.load_cifar10(home)


def test_checksum_mismatch_names_file_and_hashes_and_does_not_parse(home, monkeypatch):
    write_mnist_npz(home)
    register(monkeypatch, "mnist", "converted", home)
    expected = sha256(home / "mnist.npz")
    corrupt(home / "mnist.npz")
    forbid(monkeypatch, np, "load")
    with pytest.raises(D.DatasetChecksumError) as info:
        D.load_mnist(home)
    msg = str(info.value)
    assert "mnist.npz" in msg and expected in msg and sha256(home / "mnist.npz") in msg
    assert isinstance(info.value, ValueError)


def test_truncated_file_is_a_checksum_error(home, monkeypatch):
    write_mnist_npz(home)
    register(monkeypatch, "mnist", "converted", home)
    data = (home / "mnist.npz").read_bytes()
    (home / "mnist.npz").write_bytes(data[: len(data) // 2])
    with pytest.raises(D.DatasetChecksumError, match="mnist.npz"):
        D.load_mnist(home)


def test_real_checksums_reject_stand_in_files(home):
    """With the registry untouched, a small file named mnist.npz is refused: the real sha256 is enforced."""
    write_mnist_npz(home)
    with pytest.raises(D.DatasetChecksumError, match="06af5dfe"):
        D.load_mnist(home)


def test_converted_file_is_preferred_over_canonical(home, monkeypatch):
    write_mnist_idx(home)
    npz = write_mnist_npz(home, seed=5)
    register(monkeypatch, "mnist", "converted", home)
    register(monkeypatch, "mnist", "canonical", home)
    bunch = D.load_mnist(home)
    assert bunch.source == "mnist.npz"
    np.testing.assert_array_equal(bunch.x_train, npz["x_train"])


# --------------------------------------------------------------------------- MNIST and IDX
def test_mnist_npz_and_idx_load_the_same_arrays(home, tmp_path, monkeypatch):
    arrays = write_mnist_idx(home)
    register(monkeypatch, "mnist", "canonical", home)
    idx = D.load_mnist(home, download=False)
    assert idx.source == "idx" and idx.x_train.dtype == np.uint8 and idx.x_train.shape == (20, 28, 28)
    other = tmp_path / "other"
    other.mkdir()
    np.savez(other / "mnist.npz", **arrays)
    register(monkeypatch, "mnist", "converted", other)
    npz = D.load_mnist(other, download=False)
    for key in ("x_train", "y_train", "x_test", "y_test"):
        np.testing.assert_array_equal(idx[key], npz[key])
        np.testing.assert_array_equal(idx[key], arrays[key])
    assert "LeCun" in npz.description


def test_mnist_bad_structure_is_a_format_error(home, monkeypatch):
    arrays = tiny_mnist()
    arrays["x_train"] = arrays["x_train"][:, :27]
    np.savez(home / "mnist.npz", **arrays)
    register(monkeypatch, "mnist", "converted", home)
    with pytest.raises(D.DatasetFormatError, match="x_train.*28"):
        D.load_mnist(home)


@pytest.mark.parametrize("dtype", ["u1", "i1", "i2", "i4", "f4", "f8"])
def test_read_idx_round_trip(dtype, tmp_path):
    arr = (np.arange(2 * 3 * 4) - 5).reshape(2, 3, 4).astype(dtype)
    raw = idx_bytes(arr)
    out = D.read_idx(raw)
    assert out.dtype == np.dtype(dtype).newbyteorder("=") and out.dtype.isnative
    np.testing.assert_array_equal(out, arr)
    path = tmp_path / "a.idx.gz"
    path.write_bytes(gzip.compress(raw))
    np.testing.assert_array_equal(D.read_idx(path), arr)
    np.testing.assert_array_equal(D.read_idx(io.BytesIO(raw)), arr)


def test_read_idx_rejects_bad_files():
    raw = idx_bytes(np.zeros((3, 2), np.uint8))
    with pytest.raises(D.DatasetFormatError, match="magic"):
        D.read_idx(b"\x01" + raw[1:])
    with pytest.raises(D.DatasetFormatError, match="type code"):
        D.read_idx(raw[:2] + b"\x07" + raw[3:])
    with pytest.raises(D.DatasetFormatError, match="announces"):
        D.read_idx(raw[:-1])
    with pytest.raises(D.DatasetFormatError, match="announces"):
        D.read_idx(raw + b"\0")
    with pytest.raises(D.DatasetFormatError, match="header"):
        D.read_idx(raw[:9])


# --------------------------------------------------------------------------- Rotated MNIST
def amat_text(x, y):
    rows = np.column_stack([x, y]).astype(np.float64)
    return "\n".join(" ".join(f"{v:.6g}" for v in row) for row in rows) + "\n"


def write_rotation_zip(path, n_tv=6, n_test=3, seed=0, columns=785):
    rng = np.random.default_rng(seed)
    tv = (rng.random((n_tv, columns - 1)).round(4), rng.integers(0, 10, n_tv))
    te = (rng.random((n_test, columns - 1)).round(4), rng.integers(0, 10, n_test))
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("mnist_all_rotation_normalized_float_train_valid.amat", amat_text(*tv))
        zf.writestr("mnist_all_rotation_normalized_float_test.amat", amat_text(*te))
    return tv, te


def test_read_amat(tmp_path):
    x = np.array([[0.0, 0.25, 1.0], [0.5, 0.125, 0.0]])
    path = tmp_path / "a.amat"
    path.write_text(amat_text(x, [3, 7]))
    out = D.read_amat(path)
    assert out.dtype == np.float32 and out.shape == (2, 4)
    np.testing.assert_array_equal(out, np.column_stack([x, [3, 7]]))
    np.testing.assert_array_equal(D.read_amat(io.BytesIO(path.read_bytes()), dtype=np.float64)[:, :3], x)
    path.write_text("0.1 0.2 3\n0.3 4\n")
    with pytest.raises(D.DatasetFormatError, match="amat"):
        D.read_amat(path)


def test_rotated_mnist_official(home, monkeypatch):
    monkeypatch.setattr(rotated_mnist, "OFFICIAL_N_VALID", 2)
    (x_tv, y_tv), (x_te, y_te) = write_rotation_zip(home / "mnist_rotation_new.zip")
    for source in ("official", "auto"):
        b = D.load_rotated_mnist(home, source=source, download=False)
        assert b.source == "official" and "official" in b.description
        assert b.x_train.shape == (4, 784) and b.x_valid.shape == (2, 784) and b.x_test.shape == (3, 784)
        assert b.x_train.dtype == np.float32 and b.y_train.dtype == np.uint8
        np.testing.assert_allclose(b.x_valid, x_tv[4:], atol=1e-6)  # the LAST rows are the validation set
        np.testing.assert_array_equal(b.y_train, y_tv[:4])
        np.testing.assert_array_equal(b.y_test, y_te)
        assert "angles" not in b
    with pytest.raises(ValueError, match="n_train"):
        D.load_rotated_mnist(home, source="official", n_train=3)


def test_rotated_mnist_official_bad_content(home, monkeypatch):
    monkeypatch.setattr(rotated_mnist, "OFFICIAL_N_VALID", 2)
    write_rotation_zip(home / "mnist_rotation_new.zip", columns=700)
    with pytest.raises(D.DatasetFormatError, match="784 pixels"):
        D.load_rotated_mnist(home, source="official")
    (home / "mnist_rotation_new.zip").write_bytes(b"PK\x03\x04 truncated")
    with pytest.raises(D.DatasetFormatError, match="mnist_rotation_new.zip"):
        D.load_rotated_mnist(home, source="official")


def test_rotated_mnist_zip_checksum_checked_before_reading(home, monkeypatch):
    write_rotation_zip(home / "mnist_rotation_new.zip")
    register(monkeypatch, "rotated_mnist", "canonical", home)
    corrupt(home / "mnist_rotation_new.zip")
    forbid(monkeypatch, rotated_mnist, "iter_archive")
    with pytest.raises(D.DatasetChecksumError, match="mnist_rotation_new.zip"):
        D.load_rotated_mnist(home, source="official")


def test_rotate_images_matches_scipy():
    rng = np.random.default_rng(1)
    images = rng.random((4, 28, 28)).astype(np.float32)
    angles = np.array([0.0, 0.7, np.pi, 5.5])
    out = D.rotate_images(images, angles, chunk_size=3)
    for img, a, o in zip(images, angles, out):
        ref = ndimage.rotate(img, np.degrees(a), reshape=False, order=1, mode="grid-constant")
        np.testing.assert_allclose(o, ref, atol=1e-5)
    np.testing.assert_array_equal(out[0], images[0])
    # a quarter turn of a square grid about its centre is an exact pixel permutation
    np.testing.assert_allclose(D.rotate_images(images[:1], [np.pi / 2])[0], np.rot90(images[0], 1), atol=1e-5)
    with pytest.raises(ValueError, match="chunk_size must be >= 1; got 0"):
        D.rotate_images(images, angles, chunk_size=0)
    with pytest.raises(TypeError, match="chunk_size must be an integer"):
        D.rotate_images(images, angles, chunk_size=2.5)


def test_make_rotated_mnist_protocol():
    m = tiny_mnist(n_train=20, n_test=10)
    b = D.make_rotated_mnist(m, n_train=8, n_valid=4, n_test=12, random_state=3)
    assert b.source == "regenerated" and "REGENERATED" in b.description
    assert b.x_train.shape == (8, 784) and b.x_valid.shape == (4, 784) and b.x_test.shape == (12, 784)
    assert b.x_train.dtype == np.float32 and 0 <= b.x_test.min() and b.x_test.max() <= 1
    idx = b.mnist_index
    tv = np.concatenate([idx.train, idx.valid])
    assert (tv < 20).all()  # train/valid digits come from MNIST train
    assert len(set(tv) | set(idx.test)) == 24  # no digit in two splits
    for split in ("train", "valid", "test"):
        assert ((b.angles[split] >= 0) & (b.angles[split] < 2 * np.pi)).all()
    all_x = np.concatenate([m["x_train"], m["x_test"]]) / np.float32(255)
    all_y = np.concatenate([m["y_train"], m["y_test"]])
    k = 5
    expected = ndimage.rotate(all_x[idx.test[k]], np.degrees(b.angles.test[k]), reshape=False, order=1,
                              mode="grid-constant")
    np.testing.assert_allclose(b.x_test[k].reshape(28, 28), np.clip(expected, 0, 1), atol=1e-5)
    np.testing.assert_array_equal(b.y_test, all_y[idx.test])
    again = D.make_rotated_mnist(m, n_train=8, n_valid=4, n_test=12, random_state=3)
    np.testing.assert_array_equal(again.x_test, b.x_test)  # deterministic for a seed
    other = D.make_rotated_mnist(m, n_train=8, n_valid=4, n_test=12, random_state=4)
    assert not np.array_equal(other.angles.train, b.angles.train)


def test_make_rotated_mnist_validates_sizes():
    m = tiny_mnist(n_train=20, n_test=10)
    with pytest.raises(ValueError, match="n_train \\+ n_valid"):
        D.make_rotated_mnist(m, n_train=15, n_valid=6, n_test=1)
    with pytest.raises(ValueError, match="n_test"):
        D.make_rotated_mnist(m, n_train=10, n_valid=5, n_test=16)
    with pytest.raises(ValueError, match="uint8"):
        D.make_rotated_mnist({**m, "x_train": m["x_train"] / 255.0}, n_train=1, n_valid=1, n_test=1)


def test_rotated_mnist_auto_regenerates_without_official(home, monkeypatch):
    write_mnist_npz(home)
    register(monkeypatch, "mnist", "converted", home)
    b = D.load_rotated_mnist(home, source="auto", download=False, random_state=1, n_train=5, n_valid=2, n_test=4)
    assert b.source == "regenerated" and b.x_valid.shape == (2, 784) and b.random_state == 1
    with pytest.raises(ValueError, match="source"):
        D.load_rotated_mnist(home, source="rotated")


# --------------------------------------------------------------------------- QM7
def methane(bond=1.092):
    t = np.array([[1, 1, 1], [1, -1, -1], [-1, 1, -1], [-1, -1, 1]]) / np.sqrt(3) * bond
    return np.array([6, 1, 1, 1, 1]), np.vstack([[0, 0, 0], t])


def test_coulomb_matrix_of_methane_by_hand():
    Z, R = methane()
    C = D.coulomb_matrices(Z, R)  # angstrom
    bohr = 0.529177
    d_ch = 1.092 / bohr
    d_hh = 1.092 * np.sqrt(8 / 3) / bohr  # tetrahedral H-H distance
    assert C.shape == (5, 5)
    assert C[0, 0] == pytest.approx(0.5 * 6 ** 2.4)  # 36.858...
    assert C[0, 0] == pytest.approx(36.8581052, rel=1e-8)
    assert C[1, 1] == pytest.approx(0.5)
    for h in range(1, 5):
        assert C[0, h] == pytest.approx(6 / d_ch, rel=1e-12)  # 2.90761...
        assert C[h, 0] == C[0, h]
    assert C[1, 2] == pytest.approx(1 / d_hh, rel=1e-12)
    assert C[0, 1] == pytest.approx(2.9075659, rel=1e-6)  # 6 * 0.529177 / 1.092
    np.testing.assert_allclose(D.coulomb_matrices(Z, R / bohr, unit="bohr"), C, rtol=1e-12)


def test_coulomb_matrices_padding_batch_and_errors():
    Z, R = methane()
    Zp = np.zeros((2, 7), int)
    Rp = np.zeros((2, 7, 3))
    Zp[0, :5], Rp[0, :5] = Z, R
    Zp[1, :2], Rp[1, :2] = [8, 1], [[0, 0, 0], [0.96, 0, 0]]
    C = D.coulomb_matrices(Zp, Rp, chunk_size=1)
    assert C.shape == (2, 7, 7)
    np.testing.assert_allclose(C[0, :5, :5], D.coulomb_matrices(Z, R))
    assert not C[0, 5:].any() and not C[0, :, 5:].any()
    assert not C[1, 2:].any()
    bad = Rp.copy()
    bad[0, 2] = bad[0, 1]
    with pytest.raises(ValueError, match="molecule 0: atoms 1 and 2"):
        D.coulomb_matrices(Zp, bad)
    with pytest.raises(ValueError, match="unit"):
        D.coulomb_matrices(Z, R, unit="nm")
    with pytest.raises(ValueError, match="shape"):
        D.coulomb_matrices(Z, R[:4])
    with pytest.raises(ValueError, match="whole"):
        D.coulomb_matrices(Z + 0.5, R)
    # a chunk of no molecules was range()'s "arg 3 must not be zero"
    with pytest.raises(ValueError, match="chunk_size must be >= 1; got 0"):
        D.coulomb_matrices(Z, R, chunk_size=0)


def tiny_qm7(n=10, n_atoms=7, seed=0):
    rng = np.random.default_rng(seed)
    Z = np.zeros((n, n_atoms), np.uint8)
    R = np.zeros((n, n_atoms, 3))
    Zm, Rm = methane()
    for i in range(n):
        q, _ = np.linalg.qr(rng.normal(size=(3, 3)))  # random orientation and position
        Z[i, :5], R[i, :5] = Zm, Rm @ q.T + rng.normal(size=3)
        if i % 2:  # a water molecule far away as extra atoms
            Z[i, 5:7], R[i, 5:7] = [8, 1], [[10, 0, 0], [10.96, 0, 0]]
    T = -rng.uniform(400, 2200, n)
    return Z, R, T


def test_qm7_npz(home, monkeypatch):
    Z, R, T = tiny_qm7()
    np.savez(home / "qm7.npz", Z=Z, R=R.astype(np.float32), T=T)
    register(monkeypatch, "qm7", "converted", home)
    b = D.load_qm7(home, download=False)
    assert b.source == "qm7.npz" and b.X_source == "computed from Z and R"
    assert b.X.shape == (10, 7, 7) and b.X.dtype == np.float64 and b.R.dtype == np.float64
    np.testing.assert_allclose(b.X, D.coulomb_matrices(Z, R.astype(np.float32)), rtol=1e-6)
    assert b.folds_source == "generated (seed=0)" and len(b.folds) == 5
    np.testing.assert_array_equal(np.sort(np.concatenate(b.folds)), np.arange(10))
    for k in range(5):  # stratified by energy: each fold gets one of each consecutive pair by energy
        assert len(b.folds[k]) == 2
        train, test = D.qm7_fold_indices(b, k)
        assert len(np.intersect1d(train, test)) == 0 and len(train) + len(test) == 10
    ranks = np.argsort(np.argsort(T))
    for fold in b.folds:
        assert sorted(ranks[fold] // 5) == [0, 1]
    again = D.load_qm7(home, random_state=0)
    assert all(np.array_equal(a, c) for a, c in zip(b.folds, again.folds))
    other = D.load_qm7(home, random_state=1, n_folds=3)
    assert other.folds_source == "generated (seed=1)" and len(other.folds) == 3
    with pytest.raises(ValueError, match="k must be <= 4"):
        D.qm7_fold_indices(b, 5)


def test_qm7_npz_in_bohr_is_refused(home, monkeypatch):
    Z, R, T = tiny_qm7()
    np.savez(home / "qm7.npz", Z=Z, R=(R / 0.529177).astype(np.float32), T=T)
    register(monkeypatch, "qm7", "converted", home)
    with pytest.raises(D.DatasetFormatError, match="angstrom"):
        D.load_qm7(home)


def test_qm7_mat_official_folds_and_bohr(home, monkeypatch):
    Z, R, T = tiny_qm7()
    R_bohr = R / 0.529177
    X = D.coulomb_matrices(Z, R_bohr, unit="bohr").astype(np.float32)
    P = np.random.default_rng(0).permutation(10).reshape(5, 2)
    scipy.io.savemat(home / "qm7.mat", dict(X=X, T=T[None].astype(np.float32), P=P, Z=Z.astype(np.float32),
                                            R=R_bohr.astype(np.float32)))
    register(monkeypatch, "qm7", "canonical", home)
    b = D.load_qm7(home, download=False)
    assert b.source == "qm7.mat" and b.X_source == "qm7.mat"
    assert b.folds_source.startswith("official")
    for k in range(5):
        np.testing.assert_array_equal(b.folds[k], P[k])
    np.testing.assert_allclose(b.R, R, atol=1e-5)  # returned in angstrom
    np.testing.assert_allclose(b.X, X)
    assert b.Z.dtype == np.uint8 and b.T.dtype == np.float64 and b.T.shape == (10,)
    assert D.load_qm7(home, n_folds=2).folds_source == "generated (seed=0)"


def test_qm7_mat_missing_variable(home, monkeypatch):
    Z, R, T = tiny_qm7()
    scipy.io.savemat(home / "qm7.mat", dict(T=T[None], Z=Z, R=R / 0.529177))
    register(monkeypatch, "qm7", "canonical", home)
    with pytest.raises(D.DatasetFormatError, match=r"lacks.*'X'.*'P'"):
        D.load_qm7(home)


def test_qm7_corrupt_npz_not_parsed(home, monkeypatch):
    Z, R, T = tiny_qm7()
    np.savez(home / "qm7.npz", Z=Z, R=R, T=T)
    register(monkeypatch, "qm7", "converted", home)
    corrupt(home / "qm7.npz")
    forbid(monkeypatch, np, "load")
    with pytest.raises(D.DatasetChecksumError, match="qm7.npz"):
        D.load_qm7(home)


# --------------------------------------------------------------------------- FSDD
def write_fsdd_archive(path, speakers=("anna", "bob"), digits=(0, 3), indices=(0, 7), stereo=False):
    rng = np.random.default_rng(0)
    waves = {}
    with tarfile.open(path, "w:gz") as tf:
        for s, d, i in itertools.product(speakers, digits, indices):
            w = rng.integers(-2000, 2000, 50 + 10 * d + i).astype(np.int16)
            waves[(s, d, i)] = w
            buf = io.BytesIO()
            wavfile.write(buf, 8000, np.column_stack([w, w]) if stereo else w)
            raw = buf.getvalue()
            add_member(tf, f"free-spoken-digit-dataset-1.0.10/recordings/{d}_{s}_{i}.wav", raw)
        readme = b"not a recording"
        add_member(tf, "free-spoken-digit-dataset-1.0.10/README.md", readme)
    return waves


def test_fsdd_archive(home, monkeypatch):
    waves = write_fsdd_archive(home / "free-spoken-digit-dataset-1.0.10.tar.gz")
    register(monkeypatch, "fsdd", "canonical", home)
    b = D.load_fsdd(home, download=False)
    assert b.sample_rate == 8000 and b.waveforms.dtype == np.int16 and b.waveforms.shape == (8, 87)
    keys = list(zip(b.speaker, b.digit, b.index))
    assert keys == sorted(waves)  # ordered by speaker, digit, index
    for row, key in enumerate(keys):
        w = waves[(str(key[0]), int(key[1]), int(key[2]))]
        assert b.lengths[row] == len(w)
        np.testing.assert_array_equal(b.waveforms[row, : len(w)], w)
        assert not b.waveforms[row, len(w):].any()  # zero padding on the right
    train, test = D.fsdd_split(b, "official")
    assert set(b.index[test]) == {0} and set(b.index[train]) == {7}
    train, test = D.fsdd_split(b, test_speakers=("bob",))
    assert set(b.speaker[test]) == {"bob"} and set(b.speaker[train]) == {"anna"}
    with pytest.raises(ValueError, match="unknown speakers"):
        D.fsdd_split(b, test_speakers=("carol",))
    with pytest.raises(ValueError, match="empty"):
        D.fsdd_split(b, test_speakers=("anna", "bob"))
    with pytest.raises(TypeError, match="bunch must be what load_fsdd.. returns .*got str"):
        D.fsdd_split("official")  # the scheme passed as the bunch: named, not "string indices must be integers"
    with pytest.raises(ValueError, match="scheme must be 'speaker' or 'official'; got 'nosuch'"):
        D.fsdd_split(b, "nosuch")


def test_fsdd_npz(home, monkeypatch):
    w = np.zeros((4, 30), np.int16)
    w[:, :20] = 7
    np.savez(home / "fsdd.npz", waveforms=w, lengths=np.array([20, 20, 25, 30], np.int32),
             digit=np.array([0, 1, 2, 3], np.uint8), speaker=np.array(["a", "a", "b", "b"]),
             index=np.array([0, 5, 4, 49], np.int16), sample_rate=np.int32(8000))
    register(monkeypatch, "fsdd", "converted", home)
    b = D.load_fsdd(home)
    assert b.waveforms.shape == (4, 30) and b.sample_rate == 8000 and b.source == "fsdd.npz"
    np.testing.assert_array_equal(D.fsdd_split(b, "official")[1], [0, 2])


def test_fsdd_archive_bad_wav_and_corrupt_archive(home, monkeypatch):
    write_fsdd_archive(home / "free-spoken-digit-dataset-1.0.10.tar.gz", stereo=True)
    with pytest.raises(D.DatasetFormatError, match="mono 16-bit"):
        D.load_fsdd(home)
    data = (home / "free-spoken-digit-dataset-1.0.10.tar.gz").read_bytes()
    (home / "free-spoken-digit-dataset-1.0.10.tar.gz").write_bytes(data[: len(data) // 2])
    with pytest.raises(D.DatasetFormatError, match="archive"):
        D.load_fsdd(home)


# --------------------------------------------------------------------------- Ling-Spam
LING = {  # (part, filename): text
    (1, "3-1msg1.txt"): "Subject: re : syntax\n\nthe np np construction , again .\n",
    (1, "spmsga1.txt"): "Subject: free money ! ! !\n\nclick here now !\n",
    (2, "5-10msg1.txt"): "Subject: conference\n\ncall for papers : syntax and semantics\n",
    (10, "spmsgc9.txt"): "Subject: money\n\nMoney money money\n",
}


def write_lingspam_archive(path, texts=LING):
    with tarfile.open(path, "w:gz") as tf:
        for version in D.LINGSPAM_VERSIONS:
            for (part, name), text in texts.items():
                raw = (text if version == "bare" else text.lower()).encode()
                add_member(tf, f"lingspam_public/{version}/part{part}/{name}", raw)


def write_lingspam_npz(path, texts=LING):
    from sklearn.feature_extraction.text import CountVectorizer

    keys = sorted(texts)
    arrays = {}
    for version in D.LINGSPAM_VERSIONS:
        raws = [(texts[k] if version == "bare" else texts[k].lower()).encode() for k in keys]
        arrays[f"text_{version}_bytes"] = np.frombuffer(b"".join(raws), np.uint8)
        arrays[f"text_{version}_offsets"] = np.concatenate([[0], np.cumsum([len(r) for r in raws])]).astype(np.int64)
    cv = CountVectorizer(tokenizer=str.split, lowercase=False, token_pattern=None)
    counts = cv.fit_transform([texts[k] for k in keys]).tocsr()
    arrays.update(
        label=np.array([k[1].startswith("spmsg") for k in keys], np.uint8),
        part=np.array([k[0] for k in keys], np.uint8), filename=np.array([k[1] for k in keys]),
        bare_counts_data=counts.data.astype(np.int32), bare_counts_indices=counts.indices.astype(np.int32),
        bare_counts_indptr=counts.indptr.astype(np.int64), bare_counts_shape=np.array(counts.shape, np.int64),
        bare_vocab=cv.get_feature_names_out().astype(str),
    )
    np.savez_compressed(path, **arrays)


def test_lingspam_npz_and_archive_agree(home, tmp_path, monkeypatch):
    write_lingspam_archive(home / "lingspam_public.tar.gz")
    register(monkeypatch, "lingspam", "canonical", home)
    other = tmp_path / "npz"
    other.mkdir()
    write_lingspam_npz(other / "lingspam.npz")
    register(monkeypatch, "lingspam", "converted", other)
    for version in ("bare", "lemm_stop"):
        a = D.load_lingspam(home, version=version, download=False)
        b = D.load_lingspam(other, version=version, download=False)
        assert a.source == "lingspam_public.tar.gz" and b.source == "lingspam.npz"
        assert a.texts == b.texts and len(a.texts) == 4
        for key in ("label", "part", "filename", "vocab"):
            np.testing.assert_array_equal(a[key], b[key])
        assert sp.isspmatrix_csr(a.counts) or sp.issparse(a.counts)
        assert (a.counts != b.counts).nnz == 0
    b = D.load_lingspam(other)
    assert list(b.label) == [0, 1, 0, 1] and list(b.part) == [1, 1, 2, 10]
    assert b.texts[1] == LING[(1, "spmsga1.txt")]
    money = list(b.vocab).index("money")
    assert b.counts[3, money] == 3 and b.counts[3, list(b.vocab).index("Money")] == 1  # case kept
    with pytest.raises(ValueError, match="version"):
        D.load_lingspam(other, version="stemmed")


def test_lingspam_bad_offsets(home, monkeypatch):
    write_lingspam_npz(home / "lingspam.npz")
    with np.load(home / "lingspam.npz") as f:
        arrays = dict(f)
    arrays["text_bare_offsets"][-1] += 3
    np.savez(home / "lingspam.npz", **arrays)
    register(monkeypatch, "lingspam", "converted", home)
    with pytest.raises(D.DatasetFormatError, match="offsets"):
        D.load_lingspam(home)


# --------------------------------------------------------------------------- CIFAR-10
def batch_pickle(n, seed, legacy_name=False, extra=None):
    rng = np.random.default_rng(seed)
    d = {b"batch_label": b"batch", b"labels": [int(v) for v in rng.integers(0, 10, n)],
         b"data": rng.integers(0, 256, (n, 3072)).astype(np.uint8), b"filenames": [b"x.png"] * n}
    if extra is not None:
        d[b"extra"] = extra
    raw = pickle.dumps(d, protocol=3)
    if legacy_name:  # what numpy 1.x (and the real CIFAR-10 files) write
        raw = raw.replace(b"cnumpy._core.multiarray\n", b"cnumpy.core.multiarray\n")
        assert b"numpy.core.multiarray" in raw
    return raw, d


def write_cifar_archive(path, n=2, extra=None):
    batches = {}
    with tarfile.open(path, "w:gz") as tf:
        for i, name in enumerate([f"data_batch_{k}" for k in range(1, 6)] + ["test_batch"]):
            raw, d = batch_pickle(n, i, legacy_name=i % 2 == 0, extra=extra if name == "test_batch" else None)
            batches[name] = d
            add_member(tf, f"cifar-10-batches-py/{name}", raw)
    return batches


def test_cifar10_loads_tiny_archive(home, monkeypatch):
    batches = write_cifar_archive(home / "cifar-10-python.tar.gz")
    register(monkeypatch, "cifar10", "canonical", home)
    b = D.load_cifar10(home, download=False)
    assert b.x_train.shape == (10, 32, 32, 3) and b.x_train.dtype == np.uint8 and b.x_test.shape == (2, 32, 32, 3)
    assert b.y_train.dtype == np.uint8 and list(b.y_test) == batches["test_batch"][b"labels"]
    row = batches["data_batch_2"][b"data"][1]  # image 3 of the training set
    assert b.x_train[3, 0, 0, 0] == row[0] and b.x_train[3, 0, 0, 1] == row[1024] and b.x_train[3, 0, 0, 2] == row[2048]
    assert b.x_train[3, 1, 2, 0] == row[32 + 2]
    assert b.target_names[0] == "airplane" and len(b.target_names) == 10


def test_cifar10_corrupt_archive_never_unpickled(home, monkeypatch):
    write_cifar_archive(home / "cifar-10-python.tar.gz")
    register(monkeypatch, "cifar10", "canonical", home)
    corrupt(home / "cifar-10-python.tar.gz")
    forbid(monkeypatch, cifar10, "restricted_loads")
    forbid(monkeypatch, cifar10, "read_archive")
    with pytest.raises(D.DatasetChecksumError, match="cifar-10-python.tar.gz"):
        D.load_cifar10(home)


def test_cifar10_real_md5_is_enforced(home):
    write_cifar_archive(home / "cifar-10-python.tar.gz")
    with pytest.raises(D.DatasetChecksumError, match="c58f30108f718f92721af3b95e8e0a9d"):
        D.load_cifar10(home)


def test_cifar10_refuses_to_unpickle_without_a_known_checksum(home, monkeypatch):
    write_cifar_archive(home / "cifar-10-python.tar.gz")
    monkeypatch.setitem(REGISTRY, "cifar10", replace_hashes(REGISTRY["cifar10"], "canonical",
                                                            {"cifar-10-python.tar.gz": ()}))
    forbid(monkeypatch, cifar10, "restricted_loads")
    with pytest.raises(D.DatasetChecksumError, match="no checksum"):
        D.load_cifar10(home)


class Evil:
    def __reduce__(self):
        return (os.system, ("echo pwned",))


def test_restricted_unpickler_refuses_malicious_globals(monkeypatch):
    calls = []
    raws = [pickle.dumps(payload, protocol=3) for payload in (Evil(), {b"data": Evil()})]
    assert all(b"system" in raw for raw in raws)
    monkeypatch.setattr(os, "system", lambda cmd: calls.append(cmd))
    for raw in raws:
        with pytest.raises(pickle.UnpicklingError, match="system"):
            D.RestrictedUnpickler(io.BytesIO(raw), encoding="bytes").load()
    with pytest.raises(pickle.UnpicklingError, match="builtins.eval"):
        D.RestrictedUnpickler(io.BytesIO(b"cbuiltins\neval\n(S'1'\ntR.")).load()
    assert calls == []
    arr = np.arange(6, dtype=np.uint8).reshape(2, 3)
    np.testing.assert_array_equal(D.RestrictedUnpickler(io.BytesIO(pickle.dumps(arr, protocol=3))).load(), arr)


def test_cifar10_malicious_batch_in_verified_archive(home, monkeypatch):
    calls = []
    write_cifar_archive(home / "cifar-10-python.tar.gz", extra=Evil())
    register(monkeypatch, "cifar10", "canonical", home)
    monkeypatch.setattr(os, "system", lambda cmd: calls.append(cmd))
    with pytest.raises(D.DatasetFormatError, match="test_batch.*os.system|test_batch.*posix.system"):
        D.load_cifar10(home)
    assert calls == []


# --------------------------------------------------------------------------- Xperm
def test_xperm_counts_and_encoding():
    b = D.make_xperm()
    assert b.X.shape == (32768, 40) and b.sequences.shape == (32768, 5)
    assert len({tuple(s) for s in b.sequences.tolist()}) == 32768
    positives = sum(1 for s in itertools.product(range(8), repeat=5) if 0 in s and 1 in s)
    assert positives == 6930 and (b.y == 1).sum() == positives and (b.y == -1).sum() == 32768 - positives
    blocks = b.X.reshape(-1, 5, 8)
    assert (blocks.sum(axis=2) == 1).all()
    np.testing.assert_array_equal(blocks.argmax(axis=2), b.sequences)  # block p = letter at position p
    counts = D.bag_of_words(b.sequences, 8)
    assert (counts.sum(axis=1) == 5).all()
    np.testing.assert_array_equal(b.y == 1, (counts[:, 0] > 0) & (counts[:, 1] > 0))
    # the label is invariant to permuting positions
    perm = b.sequences[:, [4, 2, 0, 1, 3]]
    code = perm @ (8 ** np.arange(4, -1, -1))
    np.testing.assert_array_equal(b.y[code], b.y)


def test_xperm_options_and_errors():
    b = D.make_xperm(n_letters=3, length=2, targets=(2,))
    assert b.X.shape == (9, 6) and (b.y == 1).sum() == 9 - 4
    with pytest.raises(ValueError, match="distinct"):
        D.make_xperm(targets=(1, 1))
    with pytest.raises(ValueError, match="<= 7"):
        D.make_xperm(targets=(0, 8))
    with pytest.raises(ValueError, match="limit"):
        D.make_xperm(n_letters=30, length=6)
    with pytest.raises(ValueError, match="letters must be in"):
        D.bag_of_words(np.array([[0, 5]]), 3)


# --------------------------------------------------------------------------- status
def test_dataset_status_is_cheap_and_reports(home, monkeypatch):
    write_mnist_npz(home)
    register(monkeypatch, "mnist", "converted", home)
    forbid(monkeypatch, _base, "file_hash")
    rows = {r["name"]: r for r in D.dataset_status(home)}
    assert set(rows) >= {"mnist", "rotated_mnist", "qm7", "fsdd", "lingspam", "cifar10", "xperm"}
    assert rows["mnist"]["status"] == "found" and rows["mnist"]["verified"] is None
    assert rows["mnist"]["files"] == ["mnist.npz"] and rows["mnist"]["form"] == "converted"
    assert rows["qm7"]["status"] == "missing" and "qm7.mat" in rows["qm7"]["note"]
    assert "quantum-machine.org" in rows["qm7"]["urls"][0]
    assert "regenerated" in rows["rotated_mnist"]["status"]
    assert rows["xperm"]["status"] == "synthetic"


def test_dataset_status_verify(home, monkeypatch):
    write_mnist_npz(home)
    write_rotation_zip(home / "mnist_rotation_new.zip")
    register(monkeypatch, "mnist", "converted", home)
    rows = {r["name"]: r for r in D.dataset_status(home, verify=True)}
    assert rows["mnist"]["status"] == "verified" and rows["mnist"]["verified"] is True
    assert rows["rotated_mnist"]["verified"] is False and "no published checksum" in rows["rotated_mnist"]["note"]
    corrupt(home / "mnist.npz")
    rows = {r["name"]: r for r in D.dataset_status(home, verify=True)}
    assert rows["mnist"]["status"] == "checksum mismatch" and rows["mnist"]["verified"] is False


# --------------------------------------------------------------------------- partial canonical sets, QM7 X check
def test_partial_canonical_set_download_only_the_missing_files(home, tmp_path, monkeypatch):
    source = tmp_path / "server"
    source.mkdir()
    write_mnist_idx(source)
    register(monkeypatch, "mnist", "canonical", source)
    (home / "train-images-idx3-ubyte.gz").write_bytes((source / "train-images-idx3-ubyte.gz").read_bytes())
    with pytest.raises(D.DatasetNotFoundError, match="found only train-images-idx3-ubyte.gz") as info:
        D.load_mnist(home, download=False)
    assert "train-labels-idx1-ubyte.gz" in info.value.missing
    fetched = []

    def fake_retrieve(url, known_hash, fname, path, progressbar):
        fetched.append(fname)
        (Path(path) / fname).write_bytes((source / fname).read_bytes())

    monkeypatch.setattr(pooch, "retrieve", fake_retrieve)
    assert D.load_mnist(home).source == "idx"
    assert sorted(fetched) == sorted(set(mnist._IDX_FILES.values()) - {"train-images-idx3-ubyte.gz"})


def test_qm7_mat_inconsistent_coulomb_matrices_warn(home, monkeypatch):
    Z, R, T = tiny_qm7()
    R_bohr = R / 0.529177
    X = D.coulomb_matrices(Z, R_bohr, unit="bohr")
    X[0, 0, 1] *= 2
    scipy.io.savemat(home / "qm7.mat", dict(X=X, T=T[None], P=np.arange(10).reshape(5, 2), Z=Z, R=R_bohr))
    register(monkeypatch, "qm7", "canonical", home)
    with pytest.warns(UserWarning, match="stored Coulomb matrices X differ"):
        b = D.load_qm7(home)
    assert b.X[0, 0, 1] == X[0, 0, 1]  # returned as stored


def test_readme_names_the_checksums_the_registry_holds():
    """README, "Data": sha256 for the .npz conversions, MD5 for MNIST's and CIFAR-10's files, and the files with
    no published checksum named; the registry is what the loaders check, so the two must agree."""
    from pathlib import Path

    from orbitkernels.datasets._registry import REGISTRY

    readme = " ".join((Path(__file__).resolve().parents[1] / "README.md").read_text().split())
    kinds = {}
    for info in REGISTRY.values():
        for form in ("converted", "canonical"):
            for f in info.files(form):
                kinds[f.name] = {h.split(":")[0] for h in f.hashes}
    assert all(kinds[n] == {"sha256"} for n in kinds if n.endswith(".npz"))
    assert {n for n, k in kinds.items() if k == {"md5"}} == {
        *(f.name for f in REGISTRY["mnist"].canonical), *(f.name for f in REGISTRY["cifar10"].canonical)}
    unchecked = {n for n, k in kinds.items() if not k}
    assert unchecked == {"qm7.mat", "free-spoken-digit-dataset-1.0.10.tar.gz", "lingspam_public.tar.gz",
                         "mnist_rotation_new.zip"}
    assert "sha256 of this project's `.npz` conversions" in readme and "MD5 of MNIST's and CIFAR-10's files" in readme
    assert ("`qm7.mat`, the FSDD and Ling-Spam archives and `mnist_rotation_new.zip` have no published checksum"
            in readme)
