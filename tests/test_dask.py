"""Scale-out on Dask (orbitkernels.dask, models.distributed_ridge): same numbers as in memory, on a real multi-process cluster."""
import os
import signal
import time

import numpy as np
import pytest
from sklearn.linear_model import Ridge, RidgeClassifier
from sklearn.pipeline import make_pipeline

da = pytest.importorskip("dask.array")
distributed = pytest.importorskip("distributed")

from dask.core import get_dependencies  # noqa: E402

from orbitkernels.dask import fit_dask, fit_sample_indices, transform_dask  # noqa: E402
from orbitkernels.models import DistributedRidge, DistributedRidgeClassifier  # noqa: E402
from orbitkernels.models.distributed_ridge import _Moments, holdout_mask  # noqa: E402
from orbitkernels.features import GroupCDFFeatures, OrbitFourierFeatures, OrbitNystroem  # noqa: E402
from orbitkernels.groups import CyclicShift, ImageRotation  # noqa: E402

pytestmark = pytest.mark.timeout(90)

ROT = ImageRotation((8, 8))  # infinite group: 8 sampled angles, templates side
SHIFT = CyclicShift((8, 8))  # finite group (64 elements), exact invariance
MAPS = {
    "gicdf": lambda: GroupCDFFeatures(SHIFT, n_templates=4, n_bins=5, value_range="auto", random_state=1),
    "fourier": lambda: OrbitFourierFeatures(ROT, gamma=0.02, n_components=24, n_group_samples=8, random_state=1),
    "fourier-data": lambda: OrbitFourierFeatures(ROT, gamma=0.02, n_components=24, n_group_samples=8,
                                                 action="data", random_state=1),
    "nystroem": lambda: OrbitNystroem(ROT, gamma=0.02, n_components=20, n_group_samples=8, landmarks="orbit",
                                      random_state=1),
}


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    X = rng.random((240, 64))
    y = (X[:, :32].sum(axis=1) > X[:, 32:].sum(axis=1)).astype(int) + 2 * (X[:, 5] > 0.7)
    return X, y


def _compute(client, arr):
    return client.compute(arr).result(timeout=60)


# --------------------------------------------------------------------------- features
@pytest.mark.parametrize("chunks", [(60, 64), (37, 20)], ids=["even-rows", "ragged-rows+cols"])
@pytest.mark.parametrize("name", list(MAPS))
def test_distributed_features_equal_in_memory(client, data, name, chunks):
    X, _ = data
    ref = MAPS[name]().fit(X)
    expected = ref.transform(X)
    Xd = da.from_array(X, chunks=chunks)
    out = ref.transform(Xd)
    assert isinstance(out, da.Array) and out.shape == expected.shape
    np.testing.assert_allclose(_compute(client, out), expected, rtol=1e-10, atol=1e-12)
    # fit on the dask array (240 rows <= FIT_SAMPLE_SIZE: all rows) is the in-memory fit
    fitted = MAPS[name]().fit(Xd)
    np.testing.assert_array_equal(fitted.templates_, ref.templates_)
    np.testing.assert_allclose(_compute(client, fitted.transform(Xd)), expected, rtol=1e-10, atol=1e-12)


def test_scattered_state_gives_the_same_features(client, data):
    X, _ = data
    f = MAPS["nystroem"]().fit(X)
    out = transform_dask(f, da.from_array(X, chunks=50), ship="scatter")
    np.testing.assert_allclose(_compute(client, out), f.transform(X), rtol=1e-10, atol=1e-12)


def test_fitted_state_is_one_graph_key(data):
    X, _ = data
    f = MAPS["fourier"]().fit(X)
    out = f.transform(da.from_array(X, chunks=20))  # 12 blocks
    graph = dict(out.__dask_graph__())
    deps = [set(get_dependencies(graph, key)) for row in out.__dask_keys__() for key in row]
    assert len(deps) == 12 and all(len(d) == 2 for d in deps)  # its own block of X + the state
    shared = set.intersection(*deps)
    assert len(shared) == 1, shared  # the same single state key for every block
    (key,) = shared
    assert len(set.union(*deps) - shared) == 12


def test_two_transforms_in_one_graph_do_not_collide(client, data):
    X, _ = data
    f = MAPS["gicdf"]().fit(X)
    Xd = da.from_array(X, chunks=(40, -1))
    a, b = f.transform(Xd[:120]), f.transform(Xd[120:])  # same block layout, different rows
    assert not set(a.__dask_keys__()[0][0:1]) & set(b.__dask_keys__()[0][0:1])
    got = client.gather(client.compute([a, b]), )
    np.testing.assert_allclose(np.vstack(got), f.transform(X), rtol=1e-10, atol=1e-12)


def test_fit_on_a_sample_when_data_exceed_sample_size(client, data):
    X, _ = data
    idx = fit_sample_indices(len(X), 50, 1)
    assert len(idx) == 50 and np.all(np.diff(idx) > 0)
    np.testing.assert_array_equal(idx, fit_sample_indices(len(X), 50, 1))
    for chunks in (30, 100):
        f = fit_dask(MAPS["nystroem"](), da.from_array(X, chunks=(chunks, -1)), sample_size=50)
        ref = MAPS["nystroem"]().fit(X[idx])
        np.testing.assert_array_equal(f.fit_sample_indices_, idx)
        np.testing.assert_array_equal(f.components_, ref.components_)
        np.testing.assert_allclose(f.transform(X), ref.transform(X), rtol=1e-12)


# --------------------------------------------------------------------------- RLS
def test_holdout_mask_ignores_chunking():
    whole = holdout_mask(0, 1000, 0.25, 3)
    parts = np.concatenate([holdout_mask(a, b - a, 0.25, 3) for a, b in [(0, 7), (7, 500), (500, 1000)]])
    np.testing.assert_array_equal(whole, parts)
    assert 0.2 < whole.mean() < 0.3
    assert not np.array_equal(whole, holdout_mask(0, 1000, 0.25, 4))


def test_moments_tree_equals_direct(rng):
    X, Y = rng.normal(size=(50, 4)) + 100.0, rng.normal(size=(50, 2))
    parts = [_Moments.of(X[a:b], Y[a:b], True) for a, b in [(0, 3), (3, 3), (3, 30), (30, 50)]]
    acc, ref = _Moments.combine(parts), _Moments.of(X, Y, True)
    for name in ("mx", "my", "cxx", "cxy"):
        np.testing.assert_allclose(getattr(acc, name), getattr(ref, name), rtol=1e-10, atol=1e-9)


def test_rls_rejects_unseen_validation_labels(rng):
    F, y = rng.normal(size=(40, 5)), np.repeat([0, 1], 20)
    with pytest.raises(ValueError, match="not seen"):
        DistributedRidgeClassifier(alphas=[0.1, 1.0]).fit(F, y, X_val=F[:4], y_val=np.array([0, 1, 2, 1]))


@pytest.mark.parametrize("chunks", [60, 23])
def test_distributed_rls_equals_in_memory(client, data, chunks):
    X, y = data
    F = MAPS["fourier"]().fit(X).transform(X)
    Fd, yd = da.from_array(F, chunks=(chunks, -1)), da.from_array(y, chunks=chunks)
    grid = np.logspace(-4, 2, 7)
    mem = DistributedRidgeClassifier(alphas=grid).fit(F, y)
    dist = DistributedRidgeClassifier(alphas=grid).fit(Fd, yd)
    assert dist.alpha_ == mem.alpha_
    np.testing.assert_allclose(dist.validation_errors_, mem.validation_errors_)
    np.testing.assert_allclose(dist.coef_, mem.coef_, rtol=1e-8, atol=1e-10)
    pred = dist.predict(Fd)
    assert isinstance(pred, da.Array)
    np.testing.assert_array_equal(_compute(client, pred), mem.predict(F))
    # a single alpha is scikit-learn's RidgeClassifier / Ridge on the same features
    sk = RidgeClassifier(alpha=mem.alpha_).fit(F, y)
    one = DistributedRidgeClassifier(alphas=[mem.alpha_]).fit(Fd, yd)
    np.testing.assert_array_equal(_compute(client, one.predict(Fd)), sk.predict(F))
    target = X[:, 0] - X[:, 9]
    reg = DistributedRidge(alphas=[0.1]).fit(Fd, da.from_array(target, chunks=chunks))
    np.testing.assert_allclose(_compute(client, reg.predict(Fd)), Ridge(alpha=0.1).fit(F, target).predict(F),
                               rtol=1e-8, atol=1e-10)


def test_explicit_validation_set_and_pipeline(client, data):
    X, y = data
    Xd, yd = da.from_array(X, chunks=(50, -1)), da.from_array(y, chunks=50)
    grid = [1e-3, 1e-1, 1e1]
    mem = make_pipeline(MAPS["gicdf"](), DistributedRidgeClassifier(alphas=grid))
    dist = make_pipeline(MAPS["gicdf"](), DistributedRidgeClassifier(alphas=grid))
    mem.fit(X[:160], y[:160])
    dist.fit(Xd[:160], yd[:160])
    np.testing.assert_array_equal(_compute(client, dist.predict(Xd[160:])), mem.predict(X[160:]))
    feats = dist[0]
    a = DistributedRidgeClassifier(alphas=grid).fit(feats.transform(Xd[:160]), yd[:160],
                                                   X_val=feats.transform(Xd[160:]), y_val=yd[160:])
    b = DistributedRidgeClassifier(alphas=grid).fit(feats.transform(X[:160]), y[:160],
                                                   X_val=feats.transform(X[160:]), y_val=y[160:])
    assert a.alpha_ == b.alpha_ and a.n_train_ == 160
    np.testing.assert_allclose(a.validation_errors_, b.validation_errors_)


# --------------------------------------------------------------------------- fault tolerance (last: kills a worker)
def _die_once(block, marker, block_info=None):
    """Kill this worker process the first time block 2 is computed (the retry finds the marker)."""
    if block_info[0]["chunk-location"][0] == 2 and not os.path.exists(marker):
        with open(marker, "w") as fh:
            fh.write(str(os.getpid()))
        time.sleep(0.2)  # let the other worker hold some finished blocks that must survive or be redone
        os.kill(os.getpid(), signal.SIGKILL)
    return block


def test_worker_killed_mid_computation_gives_the_same_answer(client, data, tmp_path):
    X, y = data
    marker = str(tmp_path / "killed")
    pids = set(client.run(os.getpid).values())
    feats = MAPS["nystroem"]().fit(X)
    grid = np.logspace(-4, 2, 7)
    mem = DistributedRidgeClassifier(alphas=grid).fit(feats.transform(X), y)

    Xd = da.from_array(X, chunks=(30, -1)).map_blocks(_die_once, marker, dtype=X.dtype)
    dist = DistributedRidgeClassifier(alphas=grid).fit(feats.transform(Xd), da.from_array(y, chunks=30))

    assert os.path.exists(marker), "no worker was killed: the test did not test anything"
    killed = int((tmp_path / "killed").read_text())
    assert killed in pids
    for _ in range(100):  # gone once its nanny has reaped it
        try:
            os.kill(killed, 0)
        except ProcessLookupError:
            break
        time.sleep(0.1)
    else:
        pytest.fail(f"worker process {killed} is still alive")
    assert dist.alpha_ == mem.alpha_
    np.testing.assert_allclose(dist.coef_, mem.coef_, rtol=1e-8, atol=1e-10)
    client.wait_for_workers(2, timeout=60)  # the nanny restarts it


def test_old_import_paths_still_work():
    import orbitkernels.distributed as old
    from orbitkernels import dask as adapter, models
    assert old.DistributedRidge is models.DistributedRidge and old.fit_dask is adapter.fit_dask
    assert old.transform_dask is adapter.transform_dask and old.FIT_SAMPLE_SIZE == adapter.FIT_SAMPLE_SIZE
