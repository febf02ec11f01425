"""Audit of the Dask adapter's edges (orbitkernels.dask) and of the reproductions' headline tables."""
import numpy as np
import pytest

da = pytest.importorskip("dask.array")
dask = pytest.importorskip("dask")

from orbitkernels.dask import fit_dask, fit_sample_indices, transform_dask  # noqa: E402
from orbitkernels.experiments._common import headline_table  # noqa: E402
from orbitkernels.experiments._runner import headline  # noqa: E402
from orbitkernels.features import GroupCDFFeatures, OrbitFourierFeatures, OrbitNystroem  # noqa: E402
from orbitkernels.groups import CyclicShift, ImageRotation  # noqa: E402

pytestmark = pytest.mark.timeout(60)

ROT = ImageRotation((8, 8))
MAPS = {
    "gicdf": lambda: GroupCDFFeatures(CyclicShift((8, 8)), n_templates=3, n_bins=4, random_state=1),
    "fourier": lambda: OrbitFourierFeatures(ROT, gamma=0.02, n_components=8, n_group_samples=4, random_state=1),
    "nystroem": lambda: OrbitNystroem(ROT, gamma=0.02, n_components=6, n_group_samples=4, random_state=1),
}


@pytest.fixture(scope="module")
def X():
    return np.random.default_rng(0).random((90, 64))


@pytest.fixture(autouse=True)
def _sync_scheduler():
    with dask.config.set(scheduler="sync"):
        yield


@pytest.mark.parametrize("name", list(MAPS))
def test_big_endian_float32_declares_the_dtype_it_computes(X, name):
    # the lazy array said float64 while every block came back float32 (as the in-memory transform keeps '>f4')
    f = MAPS[name]().fit(X.astype(np.float32))
    Xbe = X.astype(">f4")
    out = f.transform(da.from_array(Xbe, chunks=(40, -1)))
    got = out.compute()
    assert out.dtype == got.dtype == f.transform(Xbe).dtype == np.float32
    np.testing.assert_array_equal(got, f.transform(Xbe))


@pytest.mark.parametrize("make, err, match", [
    (lambda X: X.astype(np.complex128), ValueError, "complex"),
    (lambda X: X.astype("U4"), TypeError, "text dtype"),
    (lambda X: (X * 1e6).astype("m8[s]"), TypeError, "time dtype"),
], ids=["complex", "text", "timedelta"])
@pytest.mark.parametrize("name", list(MAPS))
def test_dtypes_refused_at_the_call_not_at_compute(X, name, make, err, match):
    f = MAPS[name]().fit(X)
    Xd = da.from_array(make(X), chunks=(40, -1))
    with pytest.raises(err, match=match):
        f.transform(Xd)  # lazy: before, this returned an array whose compute raised
    with pytest.raises(err, match=match):
        MAPS[name]().fit(Xd)


def test_sparse_blocks_refused_at_the_call(X):
    sp = pytest.importorskip("scipy.sparse")
    f = MAPS["fourier"]().fit(X)
    Xs = da.from_array(X, chunks=(40, -1)).map_blocks(sp.csr_matrix, meta=sp.csr_matrix((0, 0)))
    with pytest.raises(TypeError, match="sparse"):
        f.transform(Xs)


def test_adapter_functions_refuse_numpy_by_name(X):
    f = MAPS["fourier"]().fit(X)
    with pytest.raises(TypeError, match="must be a dask array; got ndarray"):
        transform_dask(f, X)  # was AttributeError: 'numpy.ndarray' object has no attribute 'chunks'
    with pytest.raises(TypeError, match="must be a dask array; got ndarray"):
        fit_dask(MAPS["fourier"](), X)


@pytest.mark.parametrize("bad", [0, -5, 2.5, "10", True, np.float64(20.0)])
def test_fit_sample_size_is_checked(X, bad):
    # 2.5 and True were silently 2 and 1 rows, -5 failed inside numpy, '10' with "'<=' not supported"
    with pytest.raises(ValueError, match="sample_size must be None or an integer >= 1"):
        fit_dask(MAPS["nystroem"](), da.from_array(X, chunks=(40, -1)), sample_size=bad)
    with pytest.raises(ValueError, match="sample_size"):
        fit_sample_indices(90, bad, 0)


def test_fit_sample_size_valid_values(X):
    Xd = da.from_array(X, chunks=(40, -1))
    assert len(fit_dask(MAPS["nystroem"](), Xd, sample_size=np.int64(30)).fit_sample_indices_) == 30
    assert len(fit_dask(MAPS["nystroem"](), Xd, sample_size=None).fit_sample_indices_) == 90


def test_fit_with_y_of_another_length_is_a_clear_error(X):
    Xd = da.from_array(X, chunks=(40, -1))
    y = np.arange(90)
    with pytest.raises(ValueError, match="inconsistent numbers of samples: X has 90 rows but y has shape"):
        MAPS["nystroem"]().fit(Xd, y[:50])  # was IndexError: index 50 is out of bounds
    yd = da.from_array(y, chunks=30)
    with pytest.raises(ValueError, match=r"y has unknown chunk sizes; call y.compute_chunk_sizes\(\)"):
        fit_dask(MAPS["nystroem"](), Xd, yd[yd >= 0], sample_size=20)
    fitted = fit_dask(MAPS["nystroem"](), Xd, yd, sample_size=20)  # matching y: fine, sampled like X
    assert len(fitted.fit_sample_indices_) == 20


def test_headline_table_reads_closer_and_tolerance_as_headline_defines_them():
    rows = headline_table([
        headline("far below, closer", 0.1, 1.0, "closer"),  # was "yes": closer was read as lower
        headline("within 10 %, closer", 1.05, 1.0, "closer"),
        headline("tolerated slope", -0.47, -0.5, "lower", tolerance=0.05),  # was "no"
        headline("lower, beyond tolerance", -0.4, -0.5, "lower", tolerance=0.05),
        headline("higher", 2.0, 1.0, "higher"),
    ]).splitlines()[2:]
    assert [r.rsplit("|", 2)[1].strip() for r in rows] == ["no", "yes", "yes", "no", "yes"]


def test_a_dask_transform_warns_nothing():
    """dask 2024.1 (the lower bound) warned on every transform that map_blocks' token= had moved to name=, which
    current dask reads differently: the library keeps token= and silences that one warning."""
    import warnings

    rng = np.random.default_rng(0)
    X = da.from_array(rng.normal(size=(40, 8)), chunks=(10, 8))
    est = OrbitFourierFeatures(CyclicShift(8), n_components=4, random_state=0).fit(X)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert est.transform(X).compute().shape == (40, 8)


@pytest.mark.parametrize("name", list(MAPS))
def test_zero_row_dask_array_is_refused_as_in_memory(X, name):
    # the in-memory transform refuses 0 rows; the lazy one returned an empty (0, n_out) array
    f = MAPS[name]().fit(X)
    with pytest.raises(ValueError, match="0 sample"):
        f.transform(X[:0])
    with pytest.raises(ValueError, match="0 sample.*no rows"):
        f.transform(da.from_array(X[:0], chunks=(10, -1)))
    with pytest.raises(ValueError, match="0 sample.*no rows"):
        transform_dask(f, da.from_array(X[:0], chunks=(10, -1)))
    # a 0-row block inside a non-empty array is a block, not an input: still transformed
    Xd = da.concatenate([da.from_array(X[:0], chunks=(10, -1)), da.from_array(X[:20], chunks=(10, -1))])
    np.testing.assert_allclose(f.transform(Xd).compute(), f.transform(X[:20]), rtol=1e-6)
