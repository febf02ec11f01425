"""Settings and values at the edges of the infrastructure (environment variables, validation, the torch back-end's
contract): each is a clear error naming what was given, or the NumPy back-end's behaviour."""
import numpy as np
import pytest

from orbitkernels import bench
from orbitkernels.backends import get_backend
from orbitkernels.backends import numpy as npbk
from orbitkernels.utils.errors import ConfigurationError
from orbitkernels.utils.validation import check_real


@pytest.mark.parametrize("bad", ["abc", "0", "-1", "1.5", "²"])
def test_a_bad_bench_thread_count_is_refused_before_anything_runs(bad, monkeypatch, tmp_path):
    monkeypatch.setenv("ORBITKERNELS_BENCH_THREADS", bad)
    with pytest.raises(ConfigurationError, match="ORBITKERNELS_BENCH_THREADS must be a positive integer"):
        bench.run_benchmarks(["gemm_peak"], quick=True, out_dir=tmp_path / "bench")
    assert not (tmp_path / "bench").exists()


def test_the_bench_thread_count_defaults_to_one_when_unset_or_blank(monkeypatch):
    monkeypatch.delenv("ORBITKERNELS_BENCH_THREADS", raising=False)
    assert bench._threads() == 1
    monkeypatch.setenv("ORBITKERNELS_BENCH_THREADS", " ")
    assert bench._threads() == 1
    monkeypatch.setenv("ORBITKERNELS_BENCH_THREADS", " 3 ")
    assert bench._threads() == 3


def test_the_cli_says_a_bad_bench_thread_count_in_one_line(monkeypatch, capsys, tmp_path):
    from orbitkernels.cli import main

    monkeypatch.setenv("ORBITKERNELS_BENCH_THREADS", "two")
    assert main(["bench", "--name", "gemm_peak", "--quick", "--out", str(tmp_path / "bench")]) == 1
    assert "orbitkernels: error: ORBITKERNELS_BENCH_THREADS must be a positive integer; got 'two'" \
        in capsys.readouterr().err


def test_a_thread_count_in_other_digits_is_a_configuration_error(monkeypatch):
    # "²" passes str.isdigit(), then int() raised a bare ValueError from inside the transform
    monkeypatch.setenv("ORBITKERNELS_NUM_THREADS", "²")
    with pytest.raises(ConfigurationError, match="ORBITKERNELS_NUM_THREADS must be a positive integer; got '²'"):
        npbk.pool_threads()
    monkeypatch.delenv("ORBITKERNELS_NUM_THREADS")
    monkeypatch.setenv("OMP_NUM_THREADS", "²")  # OpenMP's own variable: a value it refuses is passed over
    monkeypatch.setenv("OPENBLAS_NUM_THREADS", "3")
    assert npbk._workers() == 3


@pytest.mark.parametrize("value", [10**400, -10**400], ids=["huge", "-huge"])
def test_a_real_beyond_floats_is_not_finite_and_named(value):
    with pytest.raises(ValueError, match="x must be finite; got .*beyond the range of a float"):
        check_real(value, "x")


def test_a_distribution_bound_beyond_floats_is_a_value_error():
    from orbitkernels.groups import Uniform

    with pytest.raises(ValueError, match="high must be finite"):
        Uniform(0.0, 10**400)


def test_torch_complex_dtype_takes_what_numpys_takes():
    torch = pytest.importorskip("torch")
    nb, tb = get_backend("numpy"), get_backend("torch")
    for dt in (np.float32, np.float64, np.dtype("float32"), "float64"):
        assert np.dtype(nb.complex_dtype(dt)) == np.dtype(str(tb.complex_dtype(dt)).replace("torch.", ""))
    assert tb.complex_dtype(torch.float32) == torch.complex64 and tb.complex_dtype(torch.float64) == torch.complex128


def test_a_device_this_torch_lacks_is_refused_by_name():
    torch = pytest.importorskip("torch")
    if getattr(torch, "xpu", None) is not None and torch.xpu.is_available():
        pytest.skip("torch has an XPU here")
    with pytest.raises(RuntimeError, match="device='xpu' was asked for but this torch cannot use it"):
        get_backend("torch", "xpu")


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_torch_rbf_pool_takes_the_norms_numpys_takes(dtype, rng):
    # the squared norms as NumPy float64 arrays: the NumPy back-end casts them to S's precision, torch's refused them
    pytest.importorskip("torch")
    nb, tb = get_backend("numpy"), get_backend("torch")
    S = rng.standard_normal((3, 4, 5)).astype(dtype)
    x_sq, t_sq, w = rng.random(3), rng.random(4), rng.random(5)
    want = nb.rbf_pool(S.copy(), x_sq, t_sq, 0.3, w)
    got = tb.to_numpy(tb.rbf_pool(tb.asarray(S), x_sq, t_sq, 0.3, w))
    assert got.dtype == want.dtype == dtype
    np.testing.assert_allclose(got, want, rtol=2e-6 if dtype == np.float32 else 1e-12)


@pytest.mark.parametrize("dtype", ["timedelta64[s]", "datetime64[s]"])
def test_time_arrays_are_refused_not_read_as_their_counts(dtype):
    """NumPy files timedelta64 under signedinteger: its counts of seconds passed as the data's numbers."""
    from orbitkernels.features import OrbitFourierFeatures
    from orbitkernels.groups import CyclicShift
    from orbitkernels.utils.validation import check_data

    X = np.ones((3, 4), dtype=dtype)
    with pytest.raises(TypeError, match="non-numeric dtype"):
        check_data(X, "X")
    with pytest.raises(TypeError, match="X has a time dtype"):
        OrbitFourierFeatures(CyclicShift(4), n_components=3).fit(X)


def test_openmps_list_form_gives_the_outermost_count(monkeypatch):
    """OMP_NUM_THREADS="4,2" (nested levels) was passed over as not a number, falling back to every core."""
    monkeypatch.delenv("ORBITKERNELS_NUM_THREADS", raising=False)
    monkeypatch.setenv("OMP_NUM_THREADS", "3,2")
    assert npbk._workers() == 3


def test_torchs_meta_device_is_refused_by_name():
    pytest.importorskip("torch")
    from orbitkernels.backends import get_backend

    with pytest.raises(ValueError, match="holds no data"):
        get_backend("torch", "meta")


@pytest.mark.parametrize("saved, current, expected", [
    ("0.1rc1", "0.1.0", True), ("0.1.0.dev2", "0.1.3", True), ("0.1", "0.1.0", True), ("0.10.0", "0.1.0", False),
    ("0.2.0", "0.1.0", False), ("1.1.0", "0.1.0", False), ("garbage", "0.1.0", False), (None, "0.1.0", False)])
def test_pickles_of_a_pre_release_of_the_same_minor_version_load(saved, current, expected):
    """PEP 440: 0.1rc1 is a release of 0.1, which splitting on dots ("1rc1") did not see."""
    from orbitkernels.utils.persistence import compatible

    assert compatible(saved, current) is expected
