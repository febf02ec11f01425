"""Same random_state -> the same features: bit for bit for the same configuration, to rounding otherwise.

What is bit-identical: everything random (templates, group elements, landmarks)
is drawn from ``random_state`` before any chunking, so a different memory budget,
chunk size or dask layout draws exactly the same templates and elements; and
the same configuration gives the same bits in every run, process and BLAS
thread count (checked in a subprocess below).

What is equal only to rounding: the features under another *chunking*. A row's
dot products go through one GEMM call with its neighbours, and OpenBLAS picks
its micro-kernels (edge kernels for the last rows of a block, and in single
precision even the position inside a block) from the call's shape: measured
here, ``(X @ T)[i]`` differs in the last bit between a 37-row and a 150-row
call in float32 and float64, even with every call padded to a fixed block size
in float32. Bit-identity across chunkings would need a BLAS-free reduction, at
many times the cost, for differences of ~1e-16 relative. So the chunking tests
assert agreement to a few ulps (float64: 1e-12 relative).
"""
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from orbitkernels.features import GroupCDFFeatures, OrbitFourierFeatures, OrbitNystroem
from orbitkernels.groups import CyclicShift, ImageRotation, VonMises
from orbitkernels.kernels import HaarKernel

X = np.random.default_rng(0).normal(size=(150, 64))
ROT = ImageRotation((8, 8))
MAPS = {
    "gicdf-templates": lambda s: GroupCDFFeatures(ROT, n_templates=8, n_bins=6, n_group_samples=6, random_state=s),
    "gicdf-cyclic": lambda s: GroupCDFFeatures(CyclicShift((8, 8)), n_templates=4, n_bins=4, value_range="auto",
                                               random_state=s),
    "fourier-templates": lambda s: OrbitFourierFeatures(ROT, gamma=0.02, n_components=40, n_group_samples=6,
                                                        random_state=s),
    "fourier-data": lambda s: OrbitFourierFeatures(ImageRotation((8, 8), angle=VonMises(1.0, loc=1.0)), gamma=0.02,
                                                   n_components=40, n_group_samples=6, random_state=s),
    "nystroem": lambda s: OrbitNystroem(ROT, gamma=0.02, n_components=30, n_group_samples=6, landmarks="orbit",
                                        random_state=s),
}


@pytest.mark.parametrize("name", list(MAPS))
def test_chunk_size_changes_only_rounding(name):
    f = MAPS[name](3).fit(X)
    ref = f.transform(X)
    sizes = []
    for mb in (0.05, 0.3, 2.0, 1e4):
        f.set_params(max_memory_mb=mb)
        _close(f.transform(X), ref, f"max_memory_mb={mb}")
        sizes.append(f.plan_.chunk_rows(len(X), X.shape[1], X.dtype.itemsize))  # the plan takes the budget at transform
    assert min(sizes) < len(X) // 2, sizes  # the small budgets really forced several chunks
    # fitting with another budget draws the same templates and elements, bit for bit
    g = MAPS[name](3).set_params(max_memory_mb=0.05).fit(X)
    for attr in ("templates_", "group_elements_", "group_weights_", "random_offset_", "components_", "range_"):
        if getattr(f, attr, None) is not None:
            np.testing.assert_array_equal(getattr(g, attr), getattr(f, attr), err_msg=attr)
    _close(g.transform(X), ref, "fit under another budget")
    # a row's features do not depend (beyond rounding) on the rows it is transformed with
    _close(f.transform(X[37:38]), ref[37:38], "one row")
    _close(f.transform(X[::-1]), ref[::-1], "reversed rows")
    # and the same call twice is bit-identical
    f.set_params(max_memory_mb=0.05)
    np.testing.assert_array_equal(f.transform(X), f.transform(X))


def _close(a, b, msg):
    """Equal up to a few float64 ulps (see the module docstring), never more."""
    np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14, err_msg=msg)


@pytest.mark.parametrize("name", list(MAPS))
def test_same_state_same_bits_other_state_other_features(name):
    a = MAPS[name](5).fit_transform(X)
    np.testing.assert_array_equal(MAPS[name](5).fit_transform(X), a)
    np.testing.assert_array_equal(MAPS[name](np.random.RandomState(5)).fit_transform(X), a)
    b = MAPS[name](6).fit_transform(X)
    assert not np.allclose(a, b)
    # a Generator seed is reproducible too
    g1 = MAPS[name](np.random.default_rng(9)).fit_transform(X)
    np.testing.assert_array_equal(MAPS[name](np.random.default_rng(9)).fit_transform(X), g1)


def test_haar_kernel_chunking_is_bit_identical():
    k = HaarKernel(ROT, gamma=0.02, n_group_samples=4, random_state=0)
    ref = k(X[:40], X[40:70])
    k2 = HaarKernel(ROT, gamma=0.02, n_group_samples=4, random_state=0, max_memory_mb=0.05)
    # Y is chunked too (the budget holds for any N): BLAS rounds a dot product differently when the
    # number of columns of a block changes, so equal to the last bit or two, not bit for bit
    np.testing.assert_allclose(k2(X[:40], X[40:70]), ref, rtol=1e-14, atol=0)
    np.testing.assert_array_equal(k2(X[:40], X[40:70]), k2(X[:40], X[40:70]))  # each budget is deterministic


_SCRIPT = textwrap.dedent("""
    import sys, numpy as np
    from threadpoolctl import threadpool_info
    from orbitkernels.features import GroupCDFFeatures, OrbitFourierFeatures, OrbitNystroem
    from orbitkernels.groups import ImageRotation
    from orbitkernels.kernels import HaarKernel
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 256))
    g = ImageRotation((16, 16))
    out = {
        "fourier": OrbitFourierFeatures(g, gamma=0.01, n_components=256, n_group_samples=8, random_state=1).fit_transform(X),
        "gicdf": GroupCDFFeatures(g, n_templates=16, n_bins=8, n_group_samples=8, random_state=1).fit_transform(X),
        "nystroem": OrbitNystroem(g, gamma=0.01, n_components=128, n_group_samples=8, random_state=1).fit_transform(X),
        "haar": HaarKernel(g, gamma=0.01, n_group_samples=3, random_state=1)(X[:60]),
    }
    np.savez(sys.argv[1], **out)
    print(max(p.get("num_threads", 1) for p in threadpool_info()))
""")


def _run(tmp_path, threads):
    env = dict(os.environ)
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        env[var] = str(threads)
    path = tmp_path / f"t{threads}.npz"
    res = subprocess.run([sys.executable, "-c", _SCRIPT, str(path)], env=env, capture_output=True, text=True,
                         timeout=120)
    assert res.returncode == 0, res.stderr
    return np.load(path), int(res.stdout.strip().splitlines()[-1])


@pytest.mark.timeout(240)
def test_blas_thread_count_does_not_change_a_bit(tmp_path):
    one, n1 = _run(tmp_path, 1)
    two, n2 = _run(tmp_path, 2)
    assert (n1, n2) == (1, 2), "the thread settings did not reach the BLAS"
    for key in one.files:
        np.testing.assert_array_equal(one[key], two[key], err_msg=key)


# --------------------------------------------------------------------------- dask (optional)
@pytest.mark.parametrize("name", ["gicdf-templates", "fourier-data", "nystroem"])
def test_dask_chunking_and_worker_count_change_only_rounding(name):
    da = pytest.importorskip("dask.array")
    pytest.importorskip("orbitkernels.distributed")
    import dask
    f = MAPS[name](3).fit(X)
    ref = f.transform(X)
    for chunks, workers in [((150, 64), 1), ((37, 64), 2), ((20, 16), 2)]:
        Xd = da.from_array(X, chunks=chunks)
        with dask.config.set(scheduler="threads", num_workers=workers):
            out = f.transform(Xd).compute()
        _close(out, ref, f"chunks={chunks}, workers={workers}")
