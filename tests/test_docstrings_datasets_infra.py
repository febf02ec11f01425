"""The docstrings of the datasets, the Dask adapter, the back-ends, the demo and the command line, held to the code.

Each public function's Parameters section names every argument of its signature with the signature's default;
the keys, shapes and dtypes a loader's Returns section lists are those of the Bunch it returns (on tiny stand-in
files in a temporary data folder, and on the real files where ``ORBITKERNELS_DATA`` holds them); the errors and
attributes the docstrings promise are there; every option of ``orbitkernels --help`` says what it does.
"""
from __future__ import annotations

import argparse
import ast
import gzip
import inspect
import io
import os
import pickle
import re
import tarfile
from pathlib import Path

import numpy as np
import pooch
import pytest
from numpydoc.docscrape import ClassDoc, FunctionDoc

import orbitkernels.backends as B
import orbitkernels.dask as K
import orbitkernels.datasets as D
import orbitkernels.demo as demo
from orbitkernels import cli
from orbitkernels.datasets import _registry
from orbitkernels.datasets._base import replace_hashes

from conftest import shared_data_dir


def _public(module, names=None):
    out = []
    for name in names or module.__all__:
        obj = getattr(module, name)
        if inspect.isfunction(obj) or inspect.isclass(obj):
            out.append(pytest.param(module, obj, id=f"{module.__name__.split('.')[-1]}.{name}"))
    return out


DOCUMENTED = (_public(D) + _public(K) + _public(demo)
              + _public(B, ["get_backend", "use_numba", "numba_active", "numba_available"])
              + _public(cli, ["main", "build_parser"]))


def _doc(obj):
    return (ClassDoc if inspect.isclass(obj) else FunctionDoc)(obj, config={"show_class_members": False})


def _documented_defaults(doc):
    """{parameter name: the text after ``default=`` (None when the entry states no default)}."""
    out = {}
    for p in doc["Parameters"]:
        names = [n.strip() for n in p.name.split(",")]
        m = re.search(r"default=(.+)$", p.type)
        if m is None:
            values = [None] * len(names)
        else:
            text = m.group(1).strip()
            # "n_train, n_valid, n_test : int, default=10000, 2000, 50000": one default per name
            parts = [t.strip() for t in text.split(",")] if len(names) > 1 else [text]
            values = parts if len(parts) == len(names) else [text] * len(names)
        out.update(zip(names, values))
    return out


def _value(text, module):
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return eval(text, {"numpy": np, **vars(module)})  # a name of the module, e.g. FIT_SAMPLE_SIZE


@pytest.mark.parametrize("module, obj", DOCUMENTED)
def test_parameters_section_matches_the_signature(module, obj):
    """Every argument is documented, nothing else is, and a stated default is the signature's."""
    try:
        signature = inspect.signature(obj)
    except ValueError:  # pickle.Unpickler (RestrictedUnpickler's base) is a C type without one
        signature = inspect.Signature()
    params = {n: p for n, p in signature.parameters.items()
              if n != "self" and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)}
    documented = _documented_defaults(_doc(obj))
    assert set(params) <= set(documented), f"undocumented: {sorted(set(params) - set(documented))}"
    if params:
        assert set(documented) <= set(params), f"documented but not in the signature: {set(documented) - set(params)}"
    for name, text in documented.items():
        if text is None or name not in params:
            continue
        default = params[name].default
        assert default is not inspect.Parameter.empty, f"{name}: documented default={text}, but it is required"
        assert _value(text, module) == default, f"{name}: documented default={text}, signature {default!r}"


# --------------------------------------------------------------------------- Returns of the loaders
def _bunch_spec(func):
    """{key: (shape or None, dtype text or None)} from a Returns section 'data : sklearn.utils.Bunch / key : ...'."""
    (ret,) = _doc(func)["Returns"]
    assert ret.type == "sklearn.utils.Bunch", ret.type
    spec = {}
    for line in ret.desc:
        if line != line.lstrip() or not line.strip():
            continue
        m = re.fullmatch(r"(\w+(?:, \w+)*)(?: : (.*))?", line)
        if m is None:
            continue
        shape = dtype = None
        if m.group(2):
            s = re.match(r"ndarray of shape \(([^)]*)\), (\w+)$", m.group(2))
            if s:
                shape = tuple(t.strip() for t in s.group(1).split(",") if t.strip())
                dtype = s.group(2)
        for key in m.group(1).split(", "):
            spec[key] = (shape, dtype)
    return spec


def _check_bunch(func, bunch, *, exact_shapes, optional=()):
    spec = _bunch_spec(func)
    assert set(spec) - set(optional) <= set(bunch) <= set(spec) | set(optional), (sorted(spec), sorted(bunch))
    for key, (shape, dtype) in spec.items():
        if shape is None:
            continue
        value = bunch[key]
        assert value.ndim == len(shape), (key, value.shape, shape)
        if dtype == "str":
            assert value.dtype.kind == "U", (key, value.dtype)
        else:
            assert value.dtype == np.dtype(dtype), (key, value.dtype, dtype)
        if exact_shapes:
            for size, stated in zip(value.shape, shape):
                assert not stated.isdigit() or size == int(stated), (key, value.shape, shape)


@pytest.fixture
def home(tmp_path, monkeypatch):
    """An empty data folder; no network; the stand-in files hold few records."""
    def offline(url, *args, **kwargs):
        raise ConnectionError(f"no network in tests ({url})")

    monkeypatch.setattr(pooch, "retrieve", offline)
    monkeypatch.delenv(D.ENV_VAR, raising=False)
    monkeypatch.setattr(_registry, "EXPECTED_RECORDS", {})
    d = tmp_path / "data"
    d.mkdir()
    return d


def _register(monkeypatch, name, form, home):
    """The registry entry with the checksums of the stand-in files in ``home``."""
    info = _registry.REGISTRY[name]
    hashes = {f.name: (f"sha256:{D.file_hash(home / f.name)}",) for f in info.files(form) if (home / f.name).exists()}
    monkeypatch.setitem(_registry.REGISTRY, name, replace_hashes(info, form, hashes))


def _tiny_mnist(home, monkeypatch, n_train=12, n_test=6):
    rng = np.random.default_rng(0)
    arrays = dict(x_train=rng.integers(0, 256, (n_train, 28, 28)).astype(np.uint8),
                  y_train=rng.integers(0, 10, n_train).astype(np.uint8),
                  x_test=rng.integers(0, 256, (n_test, 28, 28)).astype(np.uint8),
                  y_test=rng.integers(0, 10, n_test).astype(np.uint8))
    np.savez(home / "mnist.npz", **arrays)
    _register(monkeypatch, "mnist", "converted", home)
    return arrays


def test_load_mnist_returns_what_it_documents_on_a_stand_in(home, monkeypatch):
    _tiny_mnist(home, monkeypatch)
    _check_bunch(D.load_mnist, D.load_mnist(home, download=False), exact_shapes=False)


def test_rotated_mnist_returns_what_they_document_on_a_stand_in(home, monkeypatch):
    _tiny_mnist(home, monkeypatch)
    b = D.load_rotated_mnist(home, download=False, n_train=4, n_valid=2, n_test=3)
    _check_bunch(D.load_rotated_mnist, b, exact_shapes=False, optional=("angles", "mnist_index", "random_state"))
    _check_bunch(D.make_rotated_mnist, b, exact_shapes=False)
    assert b.source == "regenerated" and set(b.angles) == set(b.mnist_index) == {"train", "valid", "test"}
    assert b.angles.test.dtype == np.float64 and b.mnist_index.test.dtype == np.int64
    assert b.x_train.shape == (4, 784) and 0 <= b.x_test.min() and b.x_test.max() <= 1


def test_load_cifar10_returns_what_it_documents_on_a_stand_in(home, monkeypatch):
    rng = np.random.default_rng(0)
    with tarfile.open(home / "cifar-10-python.tar.gz", "w:gz") as tf:
        for name in [f"data_batch_{k}" for k in range(1, 6)] + ["test_batch"]:
            raw = pickle.dumps({b"labels": [int(v) for v in rng.integers(0, 10, 2)],
                                b"data": rng.integers(0, 256, (2, 3072)).astype(np.uint8)}, protocol=3)
            info = tarfile.TarInfo(f"cifar-10-batches-py/{name}")
            info.size = len(raw)
            tf.addfile(info, io.BytesIO(raw))
    _register(monkeypatch, "cifar10", "canonical", home)
    b = D.load_cifar10(home, download=False)
    _check_bunch(D.load_cifar10, b, exact_shapes=False)
    assert b.x_train.shape == (10, 32, 32, 3) and b.target_names == D.CIFAR10_CLASSES


def test_make_xperm_returns_what_it_documents():
    b = D.make_xperm(3, 2, (0, 1))
    _check_bunch(D.make_xperm, b, exact_shapes=False)
    assert b.X.shape == (9, 6) and b.sequences.shape == (9, 2) and b.targets == (0, 1)
    assert set(np.unique(b.y)) == {-1, 1}


def _real(name):
    folder = shared_data_dir()
    if folder is None or not (folder / name).is_file():
        pytest.skip(f"{name} is not in the shared data folder ({D.ENV_VAR})")
    return folder


@pytest.mark.parametrize("func, name", [(D.load_mnist, "mnist.npz"), (D.load_qm7, "qm7.npz"),
                                        (D.load_fsdd, "fsdd.npz"), (D.load_lingspam, "lingspam.npz")])
def test_loaders_return_the_documented_shapes_on_the_real_files(func, name, monkeypatch):
    folder = _real(name)
    monkeypatch.setattr(pooch, "retrieve", lambda url, *a, **k: pytest.fail(f"tests must not download ({url})"))
    _check_bunch(func, func(folder, download=False), exact_shapes=True)


# --------------------------------------------------------------------------- the data folder and its errors
def test_a_blank_environment_variable_is_unset_and_a_blank_argument_refused(tmp_path, monkeypatch):
    cache = tmp_path / "cache"
    monkeypatch.setattr(pooch, "os_cache", lambda name: cache)
    monkeypatch.setenv(D.ENV_VAR, "  ")
    assert D.get_data_home() == cache and cache.is_dir()
    with pytest.raises(D._base.ConfigurationError, match="empty"):
        D.get_data_home(" ")
    with pytest.raises(TypeError, match="data_home"):
        D.get_data_home(3)
    (tmp_path / "file").write_text("")
    with pytest.raises(NotADirectoryError, match="not a folder"):
        D.get_data_home(tmp_path / "file")
    assert D.get_data_home(tmp_path).is_absolute()


@pytest.mark.parametrize("download", [False, True])
def test_not_found_error_carries_the_documented_attributes(home, download):
    with pytest.raises(D.DatasetNotFoundError) as info:
        D.load_qm7(home, download=download)
    exc = info.value
    assert isinstance(exc, FileNotFoundError)
    assert exc.dataset == "qm7" and exc.data_home == home and isinstance(exc.data_home, Path)
    assert exc.missing == ("qm7.npz", "qm7.mat") and exc.urls == ("http://quantum-machine.org/data/qm7.mat",)
    assert (exc.failure is None) == (not download)
    # the message names the files, the folder, and where else to put them
    for text in ("qm7.npz", "qm7.mat", str(home), D.ENV_VAR, "data_home"):
        assert text in str(exc)


def test_checksum_error_carries_the_documented_attributes(home):
    np.savez(home / "mnist.npz", x=np.zeros(1))  # the real registry's checksums: a mismatch
    with pytest.raises(D.DatasetChecksumError) as info:
        D.load_mnist(home, download=False)
    exc = info.value
    assert isinstance(exc, ValueError) and exc.path == home / "mnist.npz"
    assert exc.expected == _registry.REGISTRY["mnist"].converted[0].hashes
    assert exc.actual == f"sha256:{D.file_hash(home / 'mnist.npz')}"


def test_file_hash_is_the_documented_lowercase_digest(tmp_path):
    path = tmp_path / "f"
    path.write_bytes(b"abc")
    assert D.file_hash(path) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    assert D.file_hash(path, "md5") == "900150983cd24fb0d6963f7d28e17f72"
    with pytest.raises(ValueError):
        D.file_hash(path, "no-such-hash")


def test_dataset_status_keys_and_states_are_the_documented_ones(home, monkeypatch):
    (home / "cifar-10-python.tar.gz").mkdir()  # a folder with a data file's name
    _tiny_mnist(home, monkeypatch)
    rows = D.dataset_status(home, verify=True)
    (ret,) = _doc(D.dataset_status)["Returns"]
    text = " ".join(ret.desc)
    keys = set(re.findall(r"``(\w+)``", text.split("Keys:")[1]))
    states = set(re.findall(r'"([^"]+)"', text.split("``status``")[1].split("``form``")[0]))
    assert [r["name"] for r in rows] == [*_registry.REGISTRY, "xperm"]
    for row in rows:
        assert set(row) == keys
        assert row["status"] in states
    by_name = {r["name"]: r["status"] for r in rows}
    assert by_name["mnist"] == "verified" and by_name["cifar10"] == "not a file"
    assert by_name["qm7"] == "missing" and by_name["xperm"] == "synthetic"


def test_read_idx_and_read_amat_return_what_they_document():
    header = b"\0\0\x0b\x02" + (2).to_bytes(4, "big") + (3).to_bytes(4, "big")
    raw = header + np.arange(6, dtype=">i2").tobytes()
    for source in (raw, gzip.compress(raw), io.BytesIO(raw)):
        arr = D.read_idx(source)
        assert arr.dtype == np.int16 and arr.dtype.isnative and arr.flags.writeable
        np.testing.assert_array_equal(arr, np.arange(6).reshape(2, 3))
    with pytest.raises(D.DatasetFormatError):
        D.read_idx(raw[:-1])
    assert D.read_amat(io.BytesIO(b"1 2 3")).shape == (1, 3)
    assert D.read_amat(io.BytesIO(b"1 2 3")).dtype == np.float32
    assert D.read_amat(io.StringIO("1 2\n3 4\n"), dtype=np.float64).dtype == np.float64
    with pytest.raises(D.DatasetFormatError):
        D.read_amat(io.BytesIO(b"1 2 3\n4 5\n"))


# --------------------------------------------------------------------------- generators and helpers
def test_bag_of_words_refuses_ragged_rows_clearly():
    with pytest.raises(ValueError, match="same length.*ragged"):
        D.bag_of_words([[0, 1], [2]], 3)
    counts = D.bag_of_words([[0, 1, 1], [2, 2, 2]], 3)
    assert counts.dtype == np.int64 and counts.tolist() == [[1, 2, 0], [0, 0, 3]]
    with pytest.raises(TypeError, match="integer"):
        D.bag_of_words([[0.0, 1.0]], 3)


@pytest.mark.parametrize("targets", [1, "01"])
def test_make_xperm_refuses_targets_that_are_not_a_sequence_of_letters(targets):
    with pytest.raises(TypeError, match="targets must be a sequence"):
        D.make_xperm(3, 2, targets)


def test_split_helpers_return_what_they_document():
    train, test = D.qm7_fold_indices({"folds": [np.array([3, 0]), np.array([4, 1]), np.array([2])]}, 0)
    assert train.tolist() == [1, 2, 4] and test.tolist() == [3, 0] and train.dtype == test.dtype == np.int64
    bunch = {"index": np.array([0, 5, 7, 2]), "speaker": np.array(["theo", "theo", "anna", "anna"])}
    assert [a.tolist() for a in D.fsdd_split(bunch, "official")] == [[1, 2], [0, 3]]
    assert [a.tolist() for a in D.fsdd_split(bunch, test_speakers="anna")] == [[0, 1], [2, 3]]
    with pytest.raises(ValueError, match="empty"):
        D.fsdd_split(bunch, test_speakers=("anna", "theo"))


def test_coulomb_matrices_and_rotate_images_return_what_they_document():
    C = D.coulomb_matrices([6, 1, 0], [[0, 0, 0], [1, 0, 0], [0, 0, 0]], chunk_size=1)
    assert C.shape == (3, 3) and C.dtype == np.float64 and not C[2].any() and not C[:, 2].any()
    with pytest.raises(ValueError, match="same position"):
        D.coulomb_matrices([6, 1], [[0, 0, 0], [0, 0, 0]])
    out = D.rotate_images(np.ones((2, 5, 5), dtype=np.uint8), [0.0, np.pi / 2], chunk_size=1)
    assert out.shape == (2, 5, 5) and out.dtype == np.float32


def test_rotated_digits_returns_what_it_documents():
    X, X_rotated, y, side = demo.rotated_digits(seed=0, pad=1)
    assert side == 10 and X.shape == X_rotated.shape == (1797, 100) and y.shape == (1797,)
    assert X.dtype == X_rotated.dtype == np.float64 and X.min() == 0 and X.max() == 1


# --------------------------------------------------------------------------- the Dask adapter
def test_dask_adapter_returns_and_refuses_what_it_documents():
    da = pytest.importorskip("dask.array")
    from orbitkernels.features import OrbitFourierFeatures
    from orbitkernels.groups import CyclicShift
    from orbitkernels.models.distributed_ridge import _NUMERIC_KINDS

    X = np.random.default_rng(0).normal(size=(11, 6))
    dX = da.from_array(X, chunks=(4, 3))
    est = OrbitFourierFeatures(CyclicShift(6), n_components=3, random_state=0)
    assert K.fit_dask(est, dX) is est and est.fit_sample_indices_.tolist() == list(range(11))
    Z = K.transform_dask(est, dX.astype(np.float32))
    assert Z.chunks == ((4, 4, 3), (6,)) and Z.dtype == np.float32 and K.is_dask_array(Z)
    assert K.transform_dask(est, dX).dtype == np.float64
    with pytest.raises(ValueError, match="Client"):
        K.transform_dask(est, dX, ship="scatter")
    with pytest.raises(TypeError, match="dask array"):
        K.transform_dask(est, X)
    idx = K.fit_sample_indices(50, 7, random_state=3)
    assert len(idx) == 7 and (np.diff(idx) > 0).all() and idx.tolist() == K.fit_sample_indices(50, 7, 3).tolist()
    assert K.fit_sample_indices(5, None).tolist() == list(range(5))
    assert K.check_dask_array(dX, "X") is dX
    assert inspect.signature(K.check_dask_array).parameters["kinds"].default == _NUMERIC_KINDS == "biuf"
    blocks = K.DaskBlocks(dX, np.arange(11))
    assert (blocks.n, blocks.n_features) == (11, 6) and [p[2] for p in blocks.parts] == [0, 4, 8]


# --------------------------------------------------------------------------- back-ends
@pytest.mark.parametrize("bad", ["0", "no", None, 0.0])
def test_use_numba_refuses_what_is_not_a_boolean(bad):
    before = B.numba_active()
    with pytest.raises(TypeError, match="enabled must be True or False"):
        B.use_numba(bad)
    assert B.numba_active() == before


def test_get_backend_refuses_what_it_documents():
    assert type(B.get_backend("numpy", "cpu")) is type(B.get_backend())
    assert pickle.loads(pickle.dumps(B.get_backend())).__class__ is type(B.get_backend())
    with pytest.raises(ValueError, match="CPU only"):
        B.get_backend("numpy", "cuda")
    with pytest.raises(ValueError, match="backend must be one of"):
        B.get_backend("jax")


# --------------------------------------------------------------------------- the command line
def _subparsers(parser):
    (action,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return action


def test_every_command_and_option_says_what_it_does():
    parser = cli.build_parser()
    sub = _subparsers(parser)
    helps = {a.dest: a.help for a in sub._choices_actions}
    assert set(helps) == set(sub.choices) == set(sub.metavar.strip("{}").split(","))
    assert all(helps.values())
    for name, p in sub.choices.items():
        for action in p._actions:
            if action.option_strings and action.dest != "help" or action.dest == "paper":
                assert action.help, f"`orbitkernels {name} {action.option_strings or action.dest}` has no help text"
                stated = re.search(r"\(default: ([^)$;]+)\)", action.help or "")
                if stated and "%(default)s" not in action.help and action.default is not None:
                    assert stated.group(1).strip() == str(action.default), (name, action.dest)


def test_help_renders_the_defaults_and_the_exit_status_is_documented(tmp_path, capsys, monkeypatch):
    with pytest.raises(SystemExit) as info:
        cli.main(["demo", "--help"])
    assert info.value.code == 0
    out = capsys.readouterr().out
    assert "(default: demo_output)" in out and "(default: 0)" in out
    # main's documented statuses, with nothing computed: no subcommand, an unknown benchmark, the data folder
    assert cli.main([]) == 2
    assert cli.main(["bench", "--name", "no-such-benchmark"]) == 2
    capsys.readouterr()
    assert cli.main(["datasets", "--data-home", str(tmp_path), "--json"]) == 0
    assert "mnist" in capsys.readouterr().out
    with pytest.raises(SystemExit) as info:
        cli.main(["datasets", "--no-such-option"])
    assert info.value.code == 2


def test_the_help_of_data_home_names_the_folder_rule_of_get_data_home():
    p = _subparsers(cli.build_parser()).choices["datasets"]
    (action,) = [a for a in p._actions if a.dest == "data_home"]
    assert "$ORBITKERNELS_DATA" in action.help and "user cache" in action.help
    assert D.ENV_VAR == "ORBITKERNELS_DATA" and "ORBITKERNELS_DATA" in D.get_data_home.__doc__
    assert os.fspath(D.get_data_home(str(Path.cwd()))) == str(Path.cwd())
