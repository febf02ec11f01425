"""Back-ends: the same estimators run their heavy loops on NumPy or on a torch device."""
import pickle
import sys

import numpy as np
import pytest
from conftest import engine_cases, torch_devices

from orbitkernels.backends import get_backend
from orbitkernels.features import GroupCDFFeatures, OrbitFourierFeatures
from orbitkernels.groups import BlockPermutation, CyclicShift, ImageRotation
from orbitkernels.groups.polar import PolarRotation


def test_backend_validation():
    with pytest.raises(ValueError, match="backend must be one of"):
        get_backend("jax")
    with pytest.raises(ValueError, match="CPU only"):
        get_backend("numpy", device="cuda")
    with pytest.raises(ValueError, match="'backend' parameter.*'cupy'"):
        OrbitFourierFeatures(backend="cupy").fit(np.ones((3, 4)))


def test_missing_torch_gives_an_install_hint(monkeypatch):
    monkeypatch.setitem(sys.modules, "torch", None)  # makes `import torch` raise ImportError
    with pytest.raises(ImportError, match=r"orbitkernels\[torch\]"):
        get_backend("torch")


def test_numpy_cdf_pool_matches_definition(rng):
    bk = get_backend("numpy")
    S = rng.normal(scale=0.5, size=(3, 4, 7))
    w = rng.uniform(size=7)
    w /= w.sum()
    n, s = 5, 1.2
    cdf = bk.cdf_pool(S, w, n, s)
    tau = s * np.arange(-n, n + 1) / n
    ref = ((S[..., None] <= tau) * w[None, None, :, None]).sum(2)  # Mroueh §2
    np.testing.assert_allclose(cdf, ref, atol=1e-12)
    cdf_u = bk.cdf_pool(S, np.full(7, 1 / 7), n, s)
    np.testing.assert_allclose(cdf_u, (S[..., None] <= tau).mean(2), atol=1e-12)


torch = pytest.importorskip("torch")

CASES, MAPS = engine_cases()


DEVICES = torch_devices()


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("cls, kw", MAPS)
@pytest.mark.parametrize("path, group, extra", CASES, ids=[c[0] for c in CASES])
def test_torch_matches_numpy(cls, kw, path, group, extra, device, rng):
    if cls is GroupCDFFeatures and path == "data":
        pytest.skip("GICDF's data side needs a symmetric q")
    X = rng.normal(size=(11, group.n_features))
    a = cls(group, random_state=0, **extra, **kw).fit(X)
    b = cls(group, random_state=0, backend="torch", device=device, **extra, **kw).fit(X)
    assert a.plan_.path == b.plan_.path == path
    assert b.plan_.backend.name == "torch" and b.plan_.backend.device.type == device
    Fa, Fb = a.transform(X), b.transform(X)
    assert Fb.dtype == Fa.dtype == np.float64 and isinstance(Fb, np.ndarray)
    np.testing.assert_allclose(Fb, Fa, atol=1e-9)
    # float32 on torch against float32 on numpy
    a32 = cls(group, random_state=0, dtype="float32", **extra, **kw).fit(X).transform(X)
    b32 = cls(group, random_state=0, dtype="float32", backend="torch", device=device, **extra, **kw).fit(X).transform(X)
    np.testing.assert_allclose(b32, a32, atol=1e-4 if cls is not GroupCDFFeatures else 0.05)


@pytest.mark.parametrize("method", ["_cdf_pool_sorted", "_cdf_pool_scatter"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("uniform", [True, False])
@pytest.mark.parametrize("device", DEVICES)
def test_torch_cdf_pool_matches_numpy(rng, method, dtype, uniform, device):
    # both of the torch back-end's poolings (sorting on a GPU, scatter-add on the CPU) on the CPU against NumPy:
    # values on and between the thresholds, beyond the range on both sides, equal and unequal weights
    S = rng.normal(scale=0.8, size=(3, 4, 9))
    S[0, 0, :4] = np.array([-1.3, 1.3, 1.3 / 6, 5.0])  # on thresholds (range 1.3, n = 6) and far above
    S = S.astype(dtype)
    w = np.full(9, 1 / 9) if uniform else rng.uniform(size=9)
    w /= w.sum()
    nb, tb = get_backend("numpy"), get_backend("torch", device)
    ref = nb.cdf_pool(S, w, 6, 1.3, 0.7)
    got = tb.to_numpy(getattr(tb, method)(tb.asarray(S), w, 6, 1.3, 0.7))
    assert got.dtype == dtype and got.shape == (3, 4, 13)
    np.testing.assert_allclose(got, ref, rtol=0, atol=1e-12 if dtype == np.float64 else 2e-7)
    if uniform:  # integer counts, then the weight and the scale as NumPy rounds them: the same bits
        np.testing.assert_array_equal(got, ref)
    # Mroueh §2, 1{S_k <= 1.3 b / 6} as ceil(S_k 6 / 1.3) <= b with S_k 6 / 1.3 rounded in S's precision
    below = np.ceil(S * np.asarray(6 / 1.3, dtype))[..., None] <= np.arange(-6, 7)
    np.testing.assert_allclose(got, 0.7 * (below * w[None, None, :, None]).sum(2), atol=1e-6)


def test_torch_cdf_pool_sorts_on_devices_and_scatters_on_the_cpu(monkeypatch):
    tb = get_backend("torch")
    called = []
    monkeypatch.setattr(tb, "_cdf_pool_sorted", lambda *a, **k: called.append("sorted"))
    monkeypatch.setattr(tb, "_cdf_pool_scatter", lambda *a, **k: called.append("scatter"))
    tb.cdf_pool(None, None, 3, 1.0)
    monkeypatch.setattr(tb, "device", torch.device("meta"))
    tb.cdf_pool(None, None, 3, 1.0)
    assert called == ["scatter", "sorted"]


def _quarter_turns_map(**kw):
    """The small map of the device tests: 8 orbit frequencies of 6x6 images under the 4 quarter turns."""
    return OrbitFourierFeatures(ImageRotation((6, 6), n_angles=4), n_components=8, random_state=0, **kw)


@pytest.mark.parametrize("device", DEVICES)
def test_torch_estimator_pickles_on_its_device(device, rng):
    X = rng.normal(size=(5, 36))
    f = _quarter_turns_map(backend="torch", device=device).fit(X)
    F = f.transform(X)
    assert isinstance(F, np.ndarray)
    h = pickle.loads(pickle.dumps(f))
    assert h.plan_.backend.device.type == device
    np.testing.assert_array_equal(h.transform(X), F)


def test_cuda_is_refused_without_a_gpu(rng):
    if torch.cuda.is_available():
        pytest.skip("torch sees a GPU here")
    g = ImageRotation((6, 6), n_angles=4)
    with pytest.raises(RuntimeError, match="cuda"):
        OrbitFourierFeatures(g, n_components=8, backend="torch", device="cuda").fit(rng.normal(size=(5, 36)))


def test_cuda_cases_ran():
    # the one visible trace, where there is no GPU, that the back-end tests' cuda cases were not generated
    if "cuda" not in DEVICES:
        pytest.skip("no CUDA device: the back-end tests ran their torch cases on the CPU only")
    tb = get_backend("torch", "cuda")
    a = tb.asarray(np.arange(6.0).reshape(2, 3))
    assert a.device.type == "cuda"
    np.testing.assert_array_equal(tb.to_numpy(a @ a.T), [[5.0, 14.0], [14.0, 50.0]])


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("src, dst", [("float32", "float32"), ("float64", "float64"), ("float64", "float32")])
def test_to_numpy_into_copies_into_the_rows_given(device, src, dst, rng):
    # the engine's pooled blocks land in its output rows (a slice of a wider array here): from a device with no
    # host temporary, and a narrower output rounded as NumPy's cast rounds
    tb = get_backend("torch", device)
    A = rng.normal(size=(5, 7)).astype(src)
    big = np.full((9, 12), -1.0, dtype=dst)
    rows = big[2:7, 3:10]
    tb.to_numpy_into(tb.asarray(A), rows)
    np.testing.assert_array_equal(rows, A.astype(dst))
    assert (big[:2] == -1).all() and (big[:, :3] == -1).all() and (big[:, 10:] == -1).all()
    nb = get_backend("numpy")
    again = np.empty((5, 7), dtype=dst)
    nb.to_numpy_into(A, again)
    np.testing.assert_array_equal(again, rows)
    if device != "cpu":
        with pytest.raises(ValueError, match="shape"):
            tb.to_numpy_into(tb.asarray(A), big[:4, :7])


@pytest.mark.parametrize("device", DEVICES)
def test_pooled_features_leave_a_device_without_a_host_temporary(device, rng, monkeypatch):
    # the features' copy to the host is the GPU's bound for the rotation estimator (it maps about 4,000 features
    # per image): pooled blocks on a device go straight into the output rows, not through to_numpy
    from orbitkernels.backends.torch import TorchBackend

    g = ImageRotation((8, 8))
    X = rng.normal(size=(20, 64))
    f = OrbitFourierFeatures(g, n_components=16, backend="torch", device=device, random_state=0).fit(X)
    expected = OrbitFourierFeatures(g, n_components=16, random_state=0).fit(X).transform(X)
    through = []
    to_numpy = TorchBackend.to_numpy
    monkeypatch.setattr(TorchBackend, "to_numpy", lambda self, t: through.append(tuple(t.shape)) or to_numpy(self, t))
    F = f.transform(X)
    np.testing.assert_allclose(F, expected, atol=1e-9)
    wide = [shape for shape in through if shape == F.shape]
    assert wide == ([F.shape] if device == "cpu" else []), through


def test_torch_back_end_leaves_the_float32_matmul_precision_as_it_finds_it(rng):
    # the user guide: TensorFloat-32 is the program's choice, neither forced nor undone by the back-end
    before = torch.get_float32_matmul_precision()
    try:
        for setting in ("high", "highest"):
            torch.set_float32_matmul_precision(setting)
            X = rng.normal(size=(6, 36)).astype(np.float32)
            OrbitFourierFeatures(ImageRotation((6, 6)), n_components=8, backend="torch", device=DEVICES[-1],
                                 random_state=0).fit(X).transform(X)
            assert torch.get_float32_matmul_precision() == setting
    finally:
        torch.set_float32_matmul_precision(before)


@pytest.mark.parametrize("device", DEVICES)
def test_device_may_be_a_torch_device(device, rng):
    # what a PyTorch user passes: torch.device(...) runs where the name does, survives clone and pickle
    from sklearn.base import clone

    from orbitkernels.features import MolecularOrbitFeatures

    X = rng.normal(size=(5, 36))
    F = _quarter_turns_map(backend="torch", device=device).fit(X).transform(X)
    f = _quarter_turns_map(backend="torch", device=torch.device(device)).fit(X)
    assert f.plan_.backend.device == torch.device(device)
    np.testing.assert_array_equal(f.transform(X), F)
    assert clone(f).device == torch.device(device)
    np.testing.assert_array_equal(pickle.loads(pickle.dumps(f)).transform(X), F)
    MolecularOrbitFeatures(species=(1, 6), n_components=4, n_wavevectors=2, n_group_samples=2,
                           backend="torch", device=torch.device(device))._validate_params()
    if device == "cpu":  # NumPy runs on the CPU, named either way
        a = _quarter_turns_map(device=torch.device("cpu")).fit(X)
        np.testing.assert_array_equal(a.transform(X), _quarter_turns_map().fit(X).transform(X))


def test_devices_that_are_not_are_refused_by_name(rng):
    g = ImageRotation((6, 6), n_angles=4)
    X = rng.normal(size=(5, 36))
    make = lambda device: OrbitFourierFeatures(g, n_components=8, backend="torch", device=device)  # noqa: E731
    with pytest.raises(ValueError, match="device='gpu' is not a torch device"):
        make("gpu").fit(X)
    with pytest.raises(ValueError, match="'device' parameter .* a torch.device"):
        make(1.5).fit(X)
    with pytest.raises(ValueError, match="numpy backend runs on the CPU only"):
        OrbitFourierFeatures(g, n_components=8, device=torch.device("meta")).fit(X)
    accelerator = getattr(torch, "accelerator", None)  # torch >= 2.6
    if not torch.cuda.is_available() and (accelerator is None or not accelerator.is_available()):
        # torch >= 2.6 maps an index to the machine's accelerator, which fails; an older torch to cuda:0
        with pytest.raises(RuntimeError, match="device=0 (asks for an accelerator, and torch sees none|was asked for)"):
            make(0).fit(X)


def test_backends_declare_their_pooling_blocks_and_sparse_products():
    # the engine reads these declarations instead of testing a back-end's name
    import scipy.sparse as sp

    nb = get_backend("numpy")
    assert nb.prefers_cache_blocks is True
    P = sp.random(6, 10, density=0.3, random_state=0, format="csr")
    X = np.random.default_rng(0).normal(size=(4, 10))
    np.testing.assert_allclose(nb.sparse_matmul(nb.sparse(P, "float64"), X), X @ P.toarray().T)
    pytest.importorskip("torch")
    tb = get_backend("torch")
    assert tb.prefers_cache_blocks is False
    got = tb.to_numpy(tb.sparse_matmul(tb.sparse(P, "float64"), tb.asarray(X)))
    np.testing.assert_allclose(got, X @ P.toarray().T)


def test_the_plan_chooses_its_path_from_what_the_group_declares():
    from orbitkernels.groups import TrivialGroup

    assert TrivialGroup().cyclic_shape is None and not TrivialGroup().is_polar
    assert CyclicShift((3, 4)).cyclic_shape == (3, 4) and CyclicShift((3, 4)).n_shifts == 12
    g = PolarRotation((8, 8), n_angles=16)
    assert g.is_polar and g.n_shifts == 16 and g.cyclic_shape is None
    np.testing.assert_array_equal(g.shift_index(g.elements()), np.arange(16))
    assert not ImageRotation((8, 8)).commutes_with(BlockPermutation(4, 16))  # the default: unknown = False
    assert TrivialGroup().fuse_product(CyclicShift(4) * CyclicShift(4)) is None


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("path, group, extra", CASES, ids=[c[0] for c in CASES])
def test_gicdf_auto_range_is_the_largest_projection_and_stays_on_the_back_end(path, group, extra, device, rng,
                                                                              monkeypatch):
    # value_range="auto" (the largest |<x, g t>| at fit) is pooled where the similarities are: only one number per
    # row comes back to the host, on every engine path, with the same range as on NumPy
    if path == "data":
        pytest.skip("GICDF's data side needs a symmetric q")
    from orbitkernels.backends.torch import TorchBackend

    X = rng.normal(size=(23, group.n_features))
    a = GroupCDFFeatures(group, value_range="auto", n_templates=5, random_state=0, **extra).fit(X)
    S = a.plan_.similarities(a._prepare(X))
    assert a.range_ == float(np.abs(S).max()) * (1 + 1e-6)
    copied = []  # what leaves the back-end, by either copy (to_numpy_into skips to_numpy from a device)
    to_numpy, into = TorchBackend.to_numpy, TorchBackend.to_numpy_into
    monkeypatch.setattr(TorchBackend, "to_numpy", lambda self, t: copied.append(tuple(t.shape)) or to_numpy(self, t))
    monkeypatch.setattr(TorchBackend, "to_numpy_into",
                        lambda self, t, out: copied.append(tuple(t.shape)) or into(self, t, out))
    b = GroupCDFFeatures(group, value_range="auto", n_templates=5, random_state=0, backend="torch", device=device,
                         **extra).fit(X)
    assert b.range_ == pytest.approx(a.range_, rel=1e-12)
    assert copied and all(shape[1:] == (1,) for shape in copied), copied


def test_rotated_mnist_full_benchmark_runs_its_features_on_a_torch_device(monkeypatch):
    # gpu_check.py's part "rotated_mnist_full": bench_rotated_mnist_full with the features on a torch device (here
    # the CPU, on the quick fraction), the configuration saying where they ran and no CPU floors measured
    from conftest import shared_data_dir

    from orbitkernels.bench import bench_rotated_mnist_full

    data = shared_data_dir()
    if data is None or not (data / "mnist.npz").is_file():
        pytest.skip("mnist.npz not found (set ORBITKERNELS_DATA)")
    monkeypatch.setenv("ORBITKERNELS_DATA", str(data))
    res = bench_rotated_mnist_full(quick=True, backend="torch", device="cpu")
    assert res["config"]["features_on"] == "torch (cpu)"
    assert "floor" not in res and 0.5 < res["measured"]["test_accuracy"] <= 1
    assert res["measured"]["alpha"] in res["measured"]["validation_accuracy"]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("kernel, n_components", [("rbf", 30), ("sigmoid", 12)])
def test_nystroem_normalization_on_torch_is_the_svd_one(kernel, n_components, device, rng):
    # torch forms K_ZZ^{-1/2} from the symmetric eigendecomposition (U = Q, S = |λ|, V = Q sign λ), NumPy from the SVD:
    # the same matrix where K_ZZ is singular (30 orbit landmarks of 12 rows under a group of 4 elements repeat some
    # landmarks exactly) and where it is indefinite (the sigmoid kernel), and the same singular values
    from orbitkernels.features import OrbitNystroem

    X = rng.normal(size=(12, 20))
    kw = dict(kernel=kernel, gamma=0.05, n_components=n_components, landmarks="orbit", random_state=0)
    a = OrbitNystroem(BlockPermutation(4, 5), **kw).fit(X)
    b = OrbitNystroem(BlockPermutation(4, 5), backend="torch", device=device, **kw).fit(X)
    K = a._kernel(a.components_, a.components_)
    w = np.linalg.eigvalsh(K)
    if kernel == "rbf":
        assert w.min() < 1e-10 * w.max()  # singular: repeated landmarks
        assert len({r.tobytes() for r in a.components_}) < n_components
    else:
        assert w.min() < -1e-3 * w.max()  # indefinite
    np.testing.assert_allclose(b.components_, a.components_)
    # the floored directions carry 1/sqrt(1e-12) = 1e6 with any orthonormal basis of the null space: compare L on the
    # span of the eigenvectors above the floor, and the features
    big = np.abs(w) > 1e-8 * np.abs(w).max()
    Q = np.linalg.eigh(K)[1][:, big]
    LQ = a.normalization_ @ Q
    np.testing.assert_allclose(b.normalization_ @ Q, LQ, atol=1e-8 * np.abs(LQ).max())
    _, S, _ = np.linalg.svd(K)
    np.testing.assert_allclose(b._inverse_sqrt(K)[1], np.maximum(S, 1e-12), rtol=1e-9, atol=1e-12)
    assert b.precision_ == a.precision_
    Fa = a.transform(X)
    np.testing.assert_allclose(b.transform(X), Fa, atol=1e-6 * np.abs(Fa).max())
