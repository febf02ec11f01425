"""``verbose``: a progress bar over the rows of a feature map's transform, the long work a library user runs.

The experiments showed bars; a user's own ``transform`` of 70k images with thousands of templates showed nothing
for minutes. The bar counts every row once, whatever the chunking, and changes no feature.
"""
import numpy as np
import pytest

from orbitkernels.features import GroupCDFFeatures, MolecularOrbitFeatures, OrbitFourierFeatures, OrbitNystroem
from orbitkernels.features import _base
from orbitkernels.features import molecular as molecular_module
from orbitkernels.groups import CyclicShift, ImageRotation, encode_molecules
from orbitkernels.utils.progress import is_quiet, set_quiet

pytestmark = pytest.mark.timeout(120)

ROT = ImageRotation((8, 8))
X = np.random.default_rng(0).random((300, 64))
RNG = np.random.RandomState(0)
MOLECULES = encode_molecules(RNG.choice([1, 6, 8], size=(40, 4)), RNG.normal(size=(40, 4, 3)))
MAPS = {
    "fourier": lambda **kw: OrbitFourierFeatures(ROT, gamma=0.02, n_components=20, n_group_samples=8,
                                                 random_state=0, **kw),
    "nystroem": lambda **kw: OrbitNystroem(ROT, gamma=0.02, n_components=12, n_group_samples=8, random_state=0,
                                           **kw),
    "gicdf": lambda **kw: GroupCDFFeatures(CyclicShift((8, 8)), n_templates=5, n_bins=6, random_state=0, **kw),
    "gicdf_auto_range": lambda **kw: GroupCDFFeatures(ROT, n_templates=5, n_bins=6, n_group_samples=8,
                                                      value_range="auto", random_state=0, **kw),
}


class _Recorder:
    """Stands for the library's ``progress``: records each bar's description, total and updates."""

    def __init__(self):
        self.bars = []

    def __call__(self, iterable=None, *, total=None, desc=None, disable=False, **kw):
        bar = {"desc": desc, "total": total, "done": 0, "closed": False, "disable": disable}
        self.bars.append(bar)
        recorder = self

        class Bar:
            def update(self, n=1):
                bar["done"] += n

            def close(self):
                bar["closed"] = True

            def __enter__(self):
                return self

            def __exit__(self, *exc):
                self.close()

        recorder.last = Bar()
        return recorder.last


@pytest.fixture(autouse=True)
def _loud():
    before = is_quiet()  # the suite runs quiet (conftest): bars on for these tests only
    set_quiet(False)
    yield
    set_quiet(before)


@pytest.mark.parametrize("name", list(MAPS))
@pytest.mark.parametrize("budget", [256, 0.05])  # one chunk, and many blocks of a few rows
def test_the_bar_counts_every_row_once_and_changes_no_feature(name, budget, monkeypatch):
    quiet = MAPS[name]().fit(X).transform(X)
    rec = _Recorder()
    monkeypatch.setattr(_base, "progress", rec)
    f = MAPS[name](verbose=1, max_memory_mb=budget)
    F = f.fit(X).transform(X)
    np.testing.assert_array_equal(F, quiet)
    bars = [b for b in rec.bars if b["desc"].endswith("transform")]
    assert len(bars) == 1 and bars[0]["total"] == bars[0]["done"] == len(X) and bars[0]["closed"]
    assert bars[0]["desc"] == f"{type(f).__name__} transform"
    if name == "gicdf_auto_range":  # fit's pass over the training rows for the value range has its bar too
        assert [b["desc"] for b in rec.bars] == ["GroupCDFFeatures fit (value range)", "GroupCDFFeatures transform"]


@pytest.mark.parametrize("name", list(MAPS))
def test_verbose_zero_makes_no_bar(name, monkeypatch):
    rec = _Recorder()
    monkeypatch.setattr(_base, "progress", rec)
    MAPS[name]().fit(X).transform(X)
    assert rec.bars == []


def test_the_bar_is_on_stderr_and_quiet_silences_it(capsys):
    f = MAPS["fourier"](verbose=1).fit(X)
    f.transform(X)
    assert "OrbitFourierFeatures transform" in capsys.readouterr().err
    set_quiet(True)  # the command line's --quiet, ORBITKERNELS_QUIET=1
    f.transform(X)
    assert capsys.readouterr().err == ""
    set_quiet(False)
    MAPS["fourier"]().fit(X).transform(X)
    assert capsys.readouterr().err == ""


def test_the_bar_closes_when_transform_fails(monkeypatch):
    rec = _Recorder()
    monkeypatch.setattr(_base, "progress", rec)
    f = MAPS["fourier"](verbose=1).fit(X)

    def boom(*a, **k):
        raise MemoryError("no room")

    monkeypatch.setattr(type(f.plan_), "map", boom)
    with pytest.raises(MemoryError):
        f.transform(X)
    assert rec.bars[-1]["closed"]


@pytest.mark.parametrize("budget", [256, 0.01])
def test_the_molecular_map_counts_every_molecule(budget, monkeypatch):
    quiet = MolecularOrbitFeatures(n_wavevectors=6, n_components=8, n_group_samples=4, random_state=0).fit(MOLECULES)
    F = quiet.transform(MOLECULES)
    rec = _Recorder()
    monkeypatch.setattr(molecular_module, "progress", rec)
    f = MolecularOrbitFeatures(n_wavevectors=6, n_components=8, n_group_samples=4, random_state=0, verbose=1,
                               max_memory_mb=budget).fit(MOLECULES)
    np.testing.assert_array_equal(f.transform(MOLECULES), F)
    bar = rec.bars[-1]
    assert not bar["disable"] and bar["total"] == bar["done"] == len(MOLECULES) and bar["closed"]
    quiet.transform(MOLECULES)
    assert rec.bars[-1]["disable"]


@pytest.mark.parametrize("make", [MAPS["fourier"], lambda **kw: MolecularOrbitFeatures(
    n_wavevectors=6, n_components=8, n_group_samples=4, random_state=0, **kw)])
def test_a_map_pickled_before_verbose_existed_transforms_without_a_bar(make):
    data = MOLECULES if "Molecular" in type(make()).__name__ else X
    f = make(verbose=1).fit(data)
    F = f.transform(data)
    del f.verbose  # the state of an estimator pickled before the parameter
    np.testing.assert_array_equal(f.transform(data), F)


@pytest.mark.parametrize("bad", [-1, 1.5, "yes"])
def test_a_bad_verbose_is_refused_at_fit(bad):
    with pytest.raises(ValueError, match="verbose"):
        MAPS["fourier"](verbose=bad).fit(X)


@pytest.mark.parametrize("quiet, shown", [("1", False), ("0", True), ("", True)])
def test_the_quiet_variable_silences_the_bar(quiet, shown):
    import os
    import subprocess
    import sys

    code = ("import numpy as np; from orbitkernels.features import OrbitFourierFeatures as F; "
            "X = np.random.default_rng(0).random((50, 4)); F(n_components=3, verbose=1).fit(X).transform(X)")
    env = {**os.environ, "ORBITKERNELS_QUIET": quiet}
    err = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True).stderr
    assert ("OrbitFourierFeatures transform" in err) == shown, err


def test_the_dask_transform_ships_a_quiet_copy(monkeypatch, capsys):
    # a bar per block from every worker thread garbled stderr; dask's own progress bar counts the blocks
    da = pytest.importorskip("dask.array")
    dask = pytest.importorskip("dask")
    f = MAPS["fourier"](verbose=1).fit(X)
    with dask.config.set(scheduler="threads"):
        F = f.transform(da.from_array(X, chunks=(50, -1))).compute()
    np.testing.assert_array_equal(F, MAPS["fourier"]().fit(X).transform(X))
    assert "OrbitFourierFeatures transform" not in capsys.readouterr().err
    assert f.verbose == 1  # the user's estimator keeps its setting
    f.transform(X)
    assert "OrbitFourierFeatures transform" in capsys.readouterr().err


def test_the_haar_kernel_bar_counts_every_row_of_x(monkeypatch):
    from orbitkernels.kernels import HaarKernel
    from orbitkernels.kernels import haar as haar_module

    rec = _Recorder()
    monkeypatch.setattr(haar_module, "progress", rec)
    A, B = X[:40], X[:25]
    quiet = HaarKernel(ROT, gamma=0.02, n_group_samples=4, random_state=0, max_memory_mb=0.05)(A, B)
    assert rec.bars[-1]["disable"]
    k = HaarKernel(ROT, gamma=0.02, n_group_samples=4, random_state=0, verbose=1, max_memory_mb=0.05)
    np.testing.assert_array_equal(k(A, B), quiet)
    bar = rec.bars[-1]
    assert not bar["disable"] and bar["total"] == bar["done"] == 40 and bar["closed"]
