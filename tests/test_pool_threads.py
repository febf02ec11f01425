"""The engine pools a chunk's cache-sized blocks in several threads (NumPy back-end): the same features, within
the memory budget, errors raised, and the thread count as documented (``ORBITKERNELS_NUM_THREADS``)."""
import threading
import tracemalloc
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
from threadpoolctl import threadpool_limits

from orbitkernels.backends import numpy as npbk
from orbitkernels.backends import use_numba
from orbitkernels.backends.numpy import NumpyBackend
from orbitkernels.features import GroupCDFFeatures, OrbitFourierFeatures, OrbitNystroem
from orbitkernels.features import _engine
from orbitkernels.features._engine import EnginePool, ProjectionPlan
from orbitkernels.utils.errors import ConfigurationError
from orbitkernels.groups import CyclicShift, ImageRotation, ImageScaling, Uniform, VonMises

SHAPE = (16, 16)
MAPS = {
    "polar-rf": lambda: OrbitFourierFeatures(ImageRotation(SHAPE), n_components=50),
    "polar-nystroem": lambda: OrbitNystroem(ImageRotation(SHAPE), n_components=40, landmarks="orbit"),
    "gemm-gicdf": lambda: GroupCDFFeatures(ImageRotation(SHAPE, angle=Uniform(-0.35, 0.35)), n_templates=12, n_bins=5, n_group_samples=8),
    "gemm-rf-vonmises": lambda: OrbitFourierFeatures(ImageRotation(SHAPE, angle=VonMises(2.0)), n_components=30,
                                                     n_group_samples=8, fast_path="gemm"),
    "data-rf": lambda: OrbitFourierFeatures(ImageScaling(SHAPE, scale=Uniform(0.9, 1.2)), n_components=30,
                                            n_group_samples=6, action="data"),
    "fft-gicdf": lambda: GroupCDFFeatures(CyclicShift(SHAPE), n_templates=6, n_bins=4),
}
PATHS = {"polar-rf": "polar", "polar-nystroem": "polar", "gemm-gicdf": "gemm", "gemm-rf-vonmises": "gemm",
         "data-rf": "data", "fft-gicdf": "fft"}


def _transform_peak_mb(f, X):
    """``f.transform(X)`` and the peak of NumPy's allocations during it (tracemalloc), in MB."""
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        F = f.transform(X)
        return F, tracemalloc.get_traced_memory()[1] / 2**20
    finally:
        tracemalloc.stop()


@pytest.fixture
def pooling_threads(monkeypatch):
    """Blocks of one row (many blocks per chunk); what the engine's thread pools were: ``sizes`` (each pool's
    threads) and ``names`` (the threads that pooled blocks: which of a pool's threads take the runs of blocks is
    up to the scheduler)."""
    monkeypatch.setattr(_engine, "POOL_BLOCK_BYTES", 1)
    monkeypatch.setattr(_engine, "POOL_BLOCK_BYTES_DIRECT", 1)
    seen = {"names": set(), "sizes": []}
    names = seen["names"]

    class Recorded(ThreadPoolExecutor):
        def __init__(self, max_workers, **kw):
            seen["sizes"].append(max_workers)
            super().__init__(max_workers, **kw)

    monkeypatch.setattr(_engine, "ThreadPoolExecutor", Recorded)
    inner = npbk.in_pool_thread

    def spy():
        names.add(threading.current_thread().name)
        return inner()

    monkeypatch.setattr(NumpyBackend, "in_pool_thread", staticmethod(spy))
    return seen


@pytest.mark.parametrize("name, fused", [(n, True) for n in MAPS] + [("polar-rf", False), ("gemm-gicdf", False),
                                                                     ("polar-nystroem", False)])
def test_features_do_not_depend_on_the_pooling_threads(name, fused, pooling_threads, monkeypatch, rng):
    X = rng.random((60, 256))
    f = MAPS[name]().set_params(random_state=0, max_memory_mb=512).fit(X)
    assert f.plan_.path == PATHS[name]
    with threadpool_limits(1), use_numba(fused):  # the fused kernels (numba) or the NumPy passes, in threads  # BLAS alike in both runs: only the engine's threads (and FFT workers) change
        monkeypatch.setenv("ORBITKERNELS_NUM_THREADS", "1")
        one = f.transform(X)
        assert not pooling_threads["sizes"] and not pooling_threads["names"]
        monkeypatch.setenv("ORBITKERNELS_NUM_THREADS", "3")
        assert f.plan_.chunk_rows(60, 256, 8) == 60  # one chunk either way: the same GEMM shapes
        three = f.transform(X)
    assert pooling_threads["sizes"] and set(pooling_threads["sizes"]) == {3}
    assert pooling_threads["names"] and all(n.startswith("orbitkernels-pool") for n in pooling_threads["names"])
    np.testing.assert_array_equal(three, one)


def test_the_thread_count_follows_the_setting(monkeypatch):
    monkeypatch.setenv("ORBITKERNELS_NUM_THREADS", "5")
    assert npbk.pool_threads() == 5 and npbk._workers() == 5
    monkeypatch.delenv("ORBITKERNELS_NUM_THREADS")
    monkeypatch.setenv("OMP_NUM_THREADS", "2")
    assert npbk.pool_threads() == 2 and npbk._workers() == 2
    with npbk.in_pool_thread():  # a pooling thread's FFTs take one worker, and it starts no threads of its own
        assert npbk._workers() == 1 and npbk.pool_threads() == 1
    assert npbk._workers() == 2
    seen = []
    t = threading.Thread(target=lambda: seen.append(npbk.pool_threads()))  # a caller's own thread (dask, joblib)
    t.start()
    t.join()
    assert seen == [1]
    monkeypatch.setenv("ORBITKERNELS_NUM_THREADS", "3")  # an explicit count holds in any thread but a pooling one
    t = threading.Thread(target=lambda: seen.append(npbk.pool_threads()))
    t.start()
    t.join()
    assert seen == [1, 3]
    with npbk.in_pool_thread():
        assert npbk.pool_threads() == 1
    for bad in ("0", "two", "-1", "1.5"):
        monkeypatch.setenv("ORBITKERNELS_NUM_THREADS", bad)
        with pytest.raises(ConfigurationError, match="ORBITKERNELS_NUM_THREADS must be a positive integer"):
            npbk.pool_threads()


def test_the_cli_names_a_bad_thread_count(monkeypatch, capsys, tmp_path):
    """A configuration error, not a traceback: the CLI reports it in one line and exits 1."""
    from orbitkernels.cli import main

    monkeypatch.setenv("ORBITKERNELS_NUM_THREADS", "abc")
    assert main(["demo", "--quick", "--quiet", "--out", str(tmp_path / "demo")]) == 1
    assert "orbitkernels: error: ORBITKERNELS_NUM_THREADS must be a positive integer; got 'abc'" in capsys.readouterr().err


def test_the_threads_are_limited_by_the_memory_budget(monkeypatch, rng):
    monkeypatch.setenv("ORBITKERNELS_NUM_THREADS", "16")
    f = OrbitFourierFeatures(ImageRotation(SHAPE), n_components=50, random_state=0).fit(rng.random((5, 256)))
    plan = f.plan_
    per_block = 8 * 2**20
    assert plan._pool_threads(True, per_block, 0) == 8  # 256 MB: a quarter of it holds eight blocks
    assert plan._pool_threads(True, per_block, 40 * 2**20) == 3  # less beside a larger fixed reserve
    assert plan._pool_threads(False, per_block, 0) == 1  # a callable pooling runs in the caller's thread
    plan.max_memory_mb = 8.0
    assert plan._pool_threads(True, per_block, 0) == 1


def test_a_failure_in_a_pooling_thread_is_raised(pooling_threads, monkeypatch, rng):
    monkeypatch.setenv("ORBITKERNELS_NUM_THREADS", "3")

    calls, lock = [], threading.Lock()

    class Failing(EnginePool):
        def pool_into(self, S, bk, layout, out):
            with lock:
                calls.append(threading.current_thread().name)
                if len(calls) == 5:
                    raise RuntimeError("pooling failed in one block")
            out[...] = 0.0

    X = rng.random((40, 256))
    f = OrbitFourierFeatures(ImageRotation(SHAPE), n_components=20, random_state=0).fit(X)
    before = threading.active_count()
    with pytest.raises(RuntimeError, match="pooling failed in one block"):
        f.plan_.map(X, Failing(), 20)
    assert threading.active_count() == before  # the pool is shut down, no thread left behind
    assert all(n.startswith("orbitkernels-pool") for n in calls)


def test_threaded_pooling_stays_within_the_budget(pooling_threads, monkeypatch, rng):
    monkeypatch.setenv("ORBITKERNELS_NUM_THREADS", "4")
    monkeypatch.setattr(_engine, "POOL_BLOCK_BYTES", 2 * 2**20)  # the real block size, one row per block aside
    budget = 96.0
    X = rng.random((12000, 256)).astype(np.float32)
    f = OrbitFourierFeatures(ImageRotation(SHAPE), n_components=1000, random_state=0, max_memory_mb=budget)
    f.fit(X[:50]).transform(X[:10])  # template caches built outside the measurement
    assert isinstance(f.plan_, ProjectionPlan) and f.plan_.path == "polar"
    assert f.plan_.chunk_rows(12000, 256, 4) < 12000  # several chunks
    F, peak = _transform_peak_mb(f, X)
    assert set(pooling_threads["sizes"]) == {2}  # a quarter of the budget holds two threads' blocks (8 MB each), not four
    assert peak - F.nbytes / 2**20 <= 1.5 * budget + 1.0


def test_the_default_rotation_estimator_pools_in_seven_threads_at_the_default_budget(monkeypatch, rng):
    """The README's figure: a quarter of the default 256 MB holds seven threads' blocks at d = 784, s = 2000."""
    monkeypatch.setenv("ORBITKERNELS_NUM_THREADS", "16")
    sizes = []

    class Recorded(ThreadPoolExecutor):
        def __init__(self, max_workers, **kw):
            sizes.append(max_workers)
            super().__init__(max_workers, **kw)

    monkeypatch.setattr(_engine, "ThreadPoolExecutor", Recorded)
    X = rng.random((12, 784)).astype(np.float32)
    f = OrbitFourierFeatures(ImageRotation((28, 28)), n_components=2000, random_state=0).fit(X)
    assert f.max_memory_mb == 256 and f.plan_.path == "polar"
    f.transform(X)
    assert sizes == [7]


def test_the_outer_blocks_of_rows_count_the_same_pooling_threads(pooling_threads, monkeypatch, rng):
    """GICDF normalises its rows block by block (copies the engine does not see): those outer blocks are sized with
    the engine's own count of pooling threads and their temporaries, and the transform stays within the budget."""
    monkeypatch.setenv("ORBITKERNELS_NUM_THREADS", "4")
    monkeypatch.setattr(_engine, "POOL_BLOCK_BYTES_DIRECT", 128 * 2**10)  # the real block size
    budget = 8.0
    X = rng.random((6000, 256)).astype(np.float32)
    f = GroupCDFFeatures(ImageRotation(SHAPE, angle=Uniform(-0.35, 0.35)), n_templates=40, n_bins=10,
                         n_group_samples=16, random_state=0, max_memory_mb=budget).fit(X[:50])
    f.transform(X[:10])
    assert f.plan_.path == "gemm" and f._prepare_copies
    _, per_block, threads = f.plan_.pooling_blocks(f._pool_spec(), f._n_features_out, 4)
    assert threads > 1
    pooling_threads["sizes"].clear()
    F, peak = _transform_peak_mb(f, X)
    assert set(pooling_threads["sizes"]) == {threads}
    assert peak - (F.nbytes + X.nbytes) / 2**20 <= 1.5 * budget + 1.0
    # the outer blocks leave the threads' blocks their room: fewer rows than on one thread
    blocks, inner = [], ProjectionPlan.map
    monkeypatch.setattr(ProjectionPlan, "map", lambda self, X, *a, **k: blocks.append(len(X)) or inner(self, X, *a, **k))
    f.transform(X)
    monkeypatch.setenv("ORBITKERNELS_NUM_THREADS", "1")
    rows_threads, blocks[:] = max(blocks), []
    f.transform(X)
    assert rows_threads < max(blocks)


def _blas_threads():
    # a BLAS built without threads (OpenBLAS's threading layer "disabled": SCS's own copy, which qpsolvers loads
    # under the oldest pins) is on one thread whatever anyone sets: it says nothing of the counts set here
    return {lib["num_threads"] for lib in npbk._blas().info()
            if lib["user_api"] == "blas" and lib.get("threading_layer") != "disabled"}


@pytest.mark.parametrize("name", list(MAPS))
def test_the_fft_paths_split_their_products_among_the_pooling_threads(name, pooling_threads, monkeypatch, rng):
    """On the FFT paths (polar, cyclic) a threaded transform runs each chunk's per-frequency products by ranges of
    frequency planes in its pooling threads, BLAS on one thread (spinning BLAS workers held the cores the pooling
    threads need), and gives the features of one thread with BLAS on one thread. Where a chunk has a plain matrix
    product too (the GEMM and data paths, Nyström's map) BLAS keeps the caller's threads. Either way BLAS's count
    is the caller's again afterwards."""
    monkeypatch.setattr(npbk, "SPLIT_MIN_BYTES", 0)  # every stacked product splits, however small
    X = rng.random((60, 256))
    f = MAPS[name]().set_params(random_state=0, max_memory_mb=512).fit(X)
    monkeypatch.setenv("ORBITKERNELS_NUM_THREADS", "1")
    with threadpool_limits(1):
        one = f.transform(X)
    seen, inner = [], npbk._split_planes

    def spy(op, a, b, out, matmul):
        ran = []
        wrapped = lambda *args, **kw: ran.append(threading.current_thread().name) or op(*args, **kw)  # noqa: E731
        result = inner(wrapped, a, b, out, matmul)
        seen.append((result is not None, _blas_threads(), ran))
        return result

    monkeypatch.setattr(npbk, "_split_planes", spy)
    monkeypatch.setenv("ORBITKERNELS_NUM_THREADS", "3")
    with threadpool_limits(2):  # the caller's count, which the transform leaves as it found it
        three = f.transform(X)
        assert _blas_threads() == {2}
    split = [s for s in seen if s[0]]
    if name in ("polar-rf", "fft-gicdf"):
        assert split and all(blas == {1} for _, blas, _ in split)
        assert all(len(ran) == 3 and all(n.startswith("orbitkernels-pool") for n in ran) for _, _, ran in split)
        np.testing.assert_array_equal(three, one)
    else:
        assert not split and all(blas == {2} for _, blas, _ in seen)
        np.testing.assert_allclose(three, one, rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("op, a_shape, b_shape", [
    ("matmul", (7, 50, 3), (7, 3, 40)), ("matmul", (7, 50, 3), (3, 40)), ("multiply", (7, 50, 1), (7, 1, 40)),
    ("multiply", (7, 50, 40), (50, 40))])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex64])
def test_a_stack_of_products_split_by_planes_is_the_whole_stack_on_one_blas_thread(op, a_shape, b_shape, dtype,
                                                                                    monkeypatch, rng):
    monkeypatch.setattr(npbk, "SPLIT_MIN_BYTES", 0)
    a, b = rng.standard_normal(a_shape).astype(dtype), rng.standard_normal(b_shape).astype(dtype)
    bk, fn = NumpyBackend(), getattr(np, op)
    with ThreadPoolExecutor(3) as ex:
        assert npbk._split_planes(fn, a, b, None, op == "matmul") is None  # outside the context: the plain product
        with npbk.split_products(ex, 3):
            assert _blas_threads() == {1}
            whole = fn(a, b)
            got = getattr(bk, op)(a, b)
            out = np.full_like(whole, np.nan)
            assert getattr(bk, op)(a, b, out=out) is out
            assert npbk._split_planes(fn, a[0], b if b.ndim == 2 else b[0], None, op == "matmul") is None  # 2-D
    np.testing.assert_array_equal(got, whole)
    np.testing.assert_array_equal(out, whole)


def test_one_thread_leaves_blas_its_threads(monkeypatch, rng):
    """ORBITKERNELS_NUM_THREADS=1 (the user guide's way to keep BLAS's own count): no split, BLAS untouched."""
    monkeypatch.setattr(npbk, "SPLIT_MIN_BYTES", 0)
    monkeypatch.setenv("ORBITKERNELS_NUM_THREADS", "1")
    X = rng.random((60, 256))
    f = MAPS["polar-rf"]().set_params(random_state=0).fit(X)
    seen, inner = [], npbk._split_planes

    def spy(*args):
        seen.append((inner(*args), _blas_threads()))
        return seen[-1][0]

    monkeypatch.setattr(npbk, "_split_planes", spy)
    with threadpool_limits(2):
        f.transform(X)
    assert seen and all(r is None and blas == {2} for r, blas in seen)


@pytest.mark.parametrize("first", ["main", "thread"])
def test_overlapping_transforms_give_blas_its_count_back(first):
    """Two transforms whose split products overlap (the first to enter leaves first): BLAS's count is the one
    before both afterwards; each thread saving and restoring its own limit left BLAS on one thread for good."""
    before = _blas_threads()
    if before == {1}:
        pytest.skip("BLAS runs on one thread here: a one-thread limit left behind would not show")
    a_in, b_in, a_out = threading.Event(), threading.Event(), threading.Event()

    def first_in_first_out():
        with npbk.split_products(None, 2):
            a_in.set()
            b_in.wait(10)
        a_out.set()

    def second():
        a_in.wait(10)
        with npbk.split_products(None, 2):
            b_in.set()
            a_out.wait(10)

    other = threading.Thread(target=second)
    other.start()
    if first == "main":
        first_in_first_out()
    else:
        t = threading.Thread(target=first_in_first_out)
        t.start()
        t.join()
    other.join()
    assert a_out.is_set() and _blas_threads() == before
