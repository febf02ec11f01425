"""3-D rotations of molecules (groups.rotation3d), their orbit features (features.molecular), the QM7 experiment."""
import json
import pickle

import numpy as np
import pytest
from sklearn.base import clone

from orbitkernels.features import MolecularOrbitFeatures
from orbitkernels.features.molecular import density_inner_products
from orbitkernels.groups import FiniteRotation3D, Rotation3D, decode_molecules, encode_molecules
from orbitkernels.kernels import HaarKernel

# water, ammonia, methane (angstrom), padded to 5 atoms
_MOLS = [
    ([8, 1, 1, 0, 0], [[0, 0, 0.1173], [0, 0.7572, -0.4692], [0, -0.7572, -0.4692], [0, 0, 0], [0, 0, 0]]),
    ([7, 1, 1, 1, 0], [[0, 0, 0.1162], [0, 0.9377, -0.2712], [0.8121, -0.4689, -0.2712], [-0.8121, -0.4689, -0.2712],
                       [0, 0, 0]]),
    ([6, 1, 1, 1, 1], [[0, 0, 0], [0.6291, 0.6291, 0.6291], [-0.6291, -0.6291, 0.6291], [-0.6291, 0.6291, -0.6291],
                       [0.6291, -0.6291, -0.6291]]),
]


def _molecules(centred=True):
    Z = np.array([m[0] for m in _MOLS])
    R = np.array([m[1] for m in _MOLS], dtype=float)
    if centred:  # at the centre of charge, where the features put the rotation centre
        c = (Z[:, :, None] * R).sum(1) / Z.sum(1)[:, None]
        R = np.where(Z[:, :, None] > 0, R - c[:, None, :], 0.0)
    return encode_molecules(Z, R)


def _random_molecules(n, n_atoms=6, seed=0):
    rng = np.random.RandomState(seed)
    Z = rng.choice([1, 6, 7, 8], size=(n, n_atoms))
    Z[:, -1] = 0  # one padding atom each
    return encode_molecules(Z, rng.normal(scale=1.2, size=(n, n_atoms, 3)))


# ---------------------------------------------------------------------------- encoding
def test_encode_decode_roundtrip_and_padding():
    X = _molecules(centred=False)
    Z, R = decode_molecules(X)
    assert X.shape == (3, 20)
    np.testing.assert_array_equal(Z[0], [8, 1, 1, 0, 0])
    np.testing.assert_allclose(R[1, 1], [0, 0.9377, -0.2712])
    Rpad = np.array([m[1] for m in _MOLS], dtype=float)
    Rpad[0, 3] = [5.0, 5.0, 5.0]  # what a padding atom holds must not matter
    np.testing.assert_array_equal(encode_molecules(Z, Rpad), X)


@pytest.mark.parametrize("bad, match", [
    (np.ones((2, 7)), "multiple of 4"),
    (np.array([[-1.0, 0, 0, 0]]), "non-negative whole"),
    (np.array([[1.5, 0, 0, 0]]), "non-negative whole"),
])
def test_decode_rejects_non_molecules(bad, match):
    with pytest.raises(ValueError, match=match):
        decode_molecules(bad)


def test_encode_rejects_mismatched_shapes():
    with pytest.raises(ValueError, match="n_atoms, 3"):
        encode_molecules(np.ones((2, 3)), np.ones((2, 4, 3)))


# ---------------------------------------------------------------------------- the group
@pytest.mark.parametrize("reflections", [False, True])
@pytest.mark.parametrize("sampling", ["iid", "qmc"])
def test_rotation3d_action_is_orthogonal_and_keeps_charges(reflections, sampling):
    g = Rotation3D(reflections=reflections)
    E = g.sample(16, 0, sampling=sampling)
    M = g.matrices(E)
    np.testing.assert_allclose(M @ M.transpose(0, 2, 1), np.broadcast_to(np.eye(3), M.shape), atol=1e-12)
    dets = np.linalg.det(M)
    assert set(np.round(dets).astype(int)) <= ({1, -1} if reflections else {1})
    if reflections:
        assert (dets < 0).any() and (dets > 0).any()
    X = _molecules()
    GX = g.act(X, E)
    np.testing.assert_array_equal(GX[:, :, ::4], np.broadcast_to(X[:, ::4], GX[:, :, ::4].shape))
    # distances between atoms and norms of rows are kept (unitary action)
    np.testing.assert_allclose(np.linalg.norm(GX, axis=2), np.broadcast_to(np.linalg.norm(X, axis=1), GX.shape[:2]))
    back = g.act_inverse(GX[3], E[3:4])[0]
    np.testing.assert_allclose(back, X, atol=1e-12)
    np.testing.assert_allclose(g.act_each(X, E[:3]), np.stack([GX[i, i] for i in range(3)]))


def test_rotation3d_rejects_bad_rows_and_elements():
    g = Rotation3D()
    with pytest.raises(ValueError, match="multiple of 4"):
        g.act(np.ones((2, 6)), g.identity())
    with pytest.raises(ValueError, match="unit quaternions"):
        g.act(_molecules(), np.array([[0.0, 0.0, 0.0, 2.0]]))
    with pytest.raises(ValueError, match="fifth column"):
        Rotation3D(reflections=True).act(_molecules(), np.array([[0.0, 0.0, 0.0, 1.0, 0.5]]))
    with pytest.raises(ValueError, match="n_atoms"):
        Rotation3D(n_atoms=0)
    with pytest.raises(ValueError, match="acts on rows of 8"):
        Rotation3D(n_atoms=2).act(_molecules(), g.identity())


@pytest.mark.parametrize("kind, order", [("T", 12), ("O", 24), ("I", 60)])
def test_finite_rotation_groups_are_closed(kind, order):
    from scipy.spatial.transform import Rotation

    g = FiniteRotation3D(kind)
    E = g.elements()
    assert len(E) == order == g.order
    M = g.matrices(E)
    prod = np.einsum("aij,bjk->abik", M, M).reshape(-1, 3, 3)
    # every product is again an element: closure, so pooling over E is exactly invariant to E
    d = np.abs(prod[:, None] - M[None]).max(axis=(2, 3)).min(axis=1)
    assert d.max() < 1e-9
    assert Rotation.from_quat(E).magnitude().min() < 1e-12  # the identity is in it


def test_qmc_rotations_have_lower_variance_than_iid():
    """A smooth orbit average (Haar mean of tr(R)² is 1) estimated from r = 32 rotations, 200 seeds."""
    g = Rotation3D()

    def estimate(seed, sampling):
        M = g.matrices(g.sample(32, seed, sampling=sampling))
        return np.mean(np.trace(M, axis1=1, axis2=2) ** 2)

    err = {s: np.mean([(estimate(seed, s) - 1.0) ** 2 for seed in range(200)]) for s in ("iid", "qmc")}
    assert abs(np.mean([estimate(seed, "qmc") for seed in range(200)]) - 1.0) < 0.05  # unbiased
    assert err["qmc"] < 0.5 * err["iid"], err


# ---------------------------------------------------------------------------- features
@pytest.mark.parametrize("centres", ["molecule", "atoms"])
@pytest.mark.parametrize("kernel", ["rbf", "laplacian"])
def test_features_exactly_invariant_to_a_finite_group_permutations_and_translations(centres, kernel):
    X = _random_molecules(8)
    group = FiniteRotation3D("O")
    fmap = MolecularOrbitFeatures(group, species=(1, 6, 7, 8), centres=centres, kernel=kernel, gamma=0.3,
                                  n_components=64, n_wavevectors=16, random_state=0,
                                  cutoff=2.0 if centres == "atoms" else None).fit(X)
    F = fmap.transform(X)
    assert F.shape == (8, 64 * (4 if centres == "atoms" else 1))
    assert np.abs(F).max() > 0.05
    for E in group.elements()[[1, 7, 20]]:
        np.testing.assert_allclose(fmap.transform(group.act_each(X, np.repeat(E[None], 8, 0))), F, atol=1e-9)
    A = X.reshape(8, -1, 4).copy()
    A = A[:, np.random.RandomState(1).permutation(A.shape[1])]  # renumber the atoms (padding included)
    A[:, :, 1:] += np.where(A[:, :, :1] > 0, np.array([3.0, -1.0, 0.5]), 0.0)  # and move the molecules
    np.testing.assert_allclose(fmap.transform(A.reshape(8, -1)), F, atol=1e-9)
    # an element outside the group changes the features: the test can fail
    other = Rotation3D().sample(8, 5)
    assert np.abs(fmap.transform(Rotation3D().act_each(X, other)) - F).max() > 1e-3


def test_sampled_rotations_are_approximately_invariant_and_converge():
    X = _random_molecules(6, seed=2)
    Xr = Rotation3D().act_each(X, Rotation3D().sample(6, 9))
    errs = []
    for r in (16, 256):
        fmap = MolecularOrbitFeatures(species=(1, 6, 7, 8), sigma=1.0, gamma=0.1, n_group_samples=r,
                                      n_components=200, n_wavevectors=16, random_state=0).fit(X)
        errs.append(np.linalg.norm(fmap.transform(Xr) - fmap.transform(X)) / np.linalg.norm(fmap.transform(X)))
    assert errs[1] < 0.5 * errs[0], errs


def test_feature_gram_converges_to_the_exact_orbit_kernel():
    """<ψ(ρ), ψ(ρ')> → E_{g,g'} exp(-γ ||g ρ - g' ρ'||²_{L²}) (Raj Eq. 3-4, 7), against HaarKernel on the
    tetrahedral group with the exact L² inner products of the densities as its base kernel."""
    X = _molecules()
    sigma, gamma = 0.8, 5.0
    group = FiniteRotation3D("T")

    def base(a, b):  # Gaussian kernel of the L² distance between the densities of two rows
        A, B = a[None], b[None]
        d2 = (density_inner_products(A, A, sigma=sigma, weighting="charge")
              + density_inner_products(B, B, sigma=sigma, weighting="charge")
              - 2 * density_inner_products(A, B, sigma=sigma, weighting="charge"))[0, 0]
        return np.exp(-gamma * d2)

    K = HaarKernel(group, base_kernel=base)(X)
    fmap = MolecularOrbitFeatures(group, species=(1, 6, 7, 8), weighting="charge", sigma=sigma, gamma=gamma,
                                  n_wavevectors=1000, n_components=8000, random_state=0).fit(X)
    F = fmap.transform(X)
    assert np.abs(F @ F.T - K).max() < 0.05, (F @ F.T, K)
    off = K[~np.eye(3, dtype=bool)]
    assert off.min() < 0.75 * np.diag(K).max(), K  # not a trivial kernel (water vs methane): the test can fail


def test_density_inner_products_match_the_embedding():
    X = _molecules()
    G = density_inner_products(X, sigma=0.7, species=(1, 6, 7, 8))
    fmap = MolecularOrbitFeatures(FiniteRotation3D("T"), species=(1, 6, 7, 8), sigma=0.7, n_wavevectors=20000,
                                  n_components=1, random_state=0).fit(X)
    m = fmap.wavevectors_.shape[0]
    norm = (2 * np.pi) ** -1.5 * (np.pi / 0.7 ** 2) ** 0.75 / np.sqrt(m)
    Z, R = decode_molecules(X)
    S = np.stack([(np.exp(-1j * R @ fmap.wavevectors_.T)[:, :, None, :]
                   * (Z[:, :, None, None] == np.array([1, 6, 7, 8])[None, None, :, None])).sum(1)
                  for _ in [0]])[0] * norm  # (3, C, M)
    Gz = np.einsum("icm,jcm->ij", S, S.conj()).real
    np.testing.assert_allclose(Gz, G, rtol=0.05, atol=0.01 * G.max())


def test_float32_in_float32_out_torch_matches_numpy_and_memory_budget():
    X = _random_molecules(10).astype(np.float32)
    kw = dict(species=(1, 6, 7, 8), centres="atoms", n_components=32, n_wavevectors=8, n_group_samples=8,
              random_state=0)
    F = MolecularOrbitFeatures(**kw).fit(X).transform(X)
    assert F.dtype == np.float32
    small = MolecularOrbitFeatures(**kw, max_memory_mb=0.2).fit(X).transform(X)  # several chunks
    np.testing.assert_allclose(small, F, atol=1e-5)
    with pytest.raises(ValueError, match="max_memory_mb"):
        MolecularOrbitFeatures(**kw, max_memory_mb=1e-4).fit(X).transform(X)
    pytest.importorskip("torch")
    from conftest import torch_devices

    for device in torch_devices():  # the CPU, and CUDA on a GPU machine
        Ft = MolecularOrbitFeatures(**kw, backend="torch", device=device).fit(X).transform(X)
        assert Ft.dtype == np.float32
        np.testing.assert_allclose(Ft, F, atol=1e-4, err_msg=device)


def test_transform_gammas_equals_transform_and_sklearn_api():
    X = _random_molecules(5)
    fmap = MolecularOrbitFeatures(species=(1, 6, 7, 8), gamma=0.2, n_components=16, n_wavevectors=8,
                                  random_state=3).fit(X)
    multi = fmap.transform_gammas(X, [0.05, 0.2])
    np.testing.assert_allclose(multi[0.2], fmap.transform(X))
    assert not np.allclose(multi[0.05], multi[0.2])
    assert fmap.get_feature_names_out()[0] == "molecularorbitfeatures0"
    c = clone(fmap)
    assert c.get_params()["gamma"] == 0.2 and not hasattr(c, "templates_")
    np.testing.assert_allclose(pickle.loads(pickle.dumps(fmap)).transform(X), fmap.transform(X))
    np.testing.assert_allclose(clone(fmap).fit(X).transform(X), fmap.transform(X))  # random_state fixes it all


@pytest.mark.parametrize("params, match", [
    (dict(species=(1, 6)), "not in species"),
    (dict(species=(1, 1, 6, 7, 8)), "distinct"),
    (dict(cutoff=2.0), "centres='atoms'"),
    (dict(sigma=-1.0), "sigma"),
    (dict(kernel="poly"), "kernel"),
])
def test_bad_parameters_raise_clear_errors(params, match):
    with pytest.raises(ValueError, match=match):
        MolecularOrbitFeatures(**{"species": (1, 6, 7, 8), **params}).fit(_random_molecules(3))


def test_transform_rejects_unknown_species_and_other_widths():
    fmap = MolecularOrbitFeatures(species=(1, 6, 7, 8), n_components=4, n_wavevectors=4).fit(_random_molecules(3))
    X = _random_molecules(2)
    X[0, 0] = 9
    with pytest.raises(ValueError, match=r"charges \[9\]"):
        fmap.transform(X)
    with pytest.raises(ValueError, match="features"):
        fmap.transform(_random_molecules(2, n_atoms=4))


# ---------------------------------------------------------------------------- the experiment
def test_molecules3d_quick_experiment_runs_and_resumes(tmp_path, monkeypatch):
    from conftest import shared_data_dir
    from orbitkernels.experiments import get_experiments

    data = shared_data_dir()
    if data is None or not (data / "qm7.npz").exists():
        pytest.skip("qm7.npz not available")
    monkeypatch.setenv("ORBITKERNELS_DATA", str(data))
    run = get_experiments("molecules3d")["qm7"]
    res = run(quick=True, out_dir=tmp_path)
    rows = res["data"]["rows"]
    assert rows and all(np.isfinite(r["rmse"]) and r["rmse"] > 0 for r in rows)
    assert {"cost_ms_per_molecule", "configuration"} <= set(rows[0])
    path = tmp_path / "molecules3d" / "qm7_quick.json"
    assert json.loads(path.read_text())["cells"]
    again = run(quick=True, out_dir=tmp_path)
    assert again["resumed_cells"] == len(again["cells"])
    assert again["data"]["rows"] == rows
    from orbitkernels.experiments.molecules3d import render_page

    (tmp_path / "molecules3d" / "qm7.json").write_text(path.read_text())
    page = render_page(tmp_path)
    assert all(f"`{r['name']}`" in page for r in rows) and "ms / molecule" in page


def test_molecules3d_time_budget_leaves_cells_for_a_resumed_run(tmp_path, monkeypatch):
    from conftest import shared_data_dir
    from orbitkernels.experiments import get_experiments

    data = shared_data_dir()
    if data is None or not (data / "qm7.npz").exists():
        pytest.skip("qm7.npz not available")
    monkeypatch.setenv("ORBITKERNELS_DATA", str(data))
    monkeypatch.setenv("ORBITKERNELS_MOLECULES3D_BUDGET_S", "0")
    res = get_experiments("molecules3d")["qm7"](quick=True, out_dir=tmp_path)
    assert res["data"]["rows"] == [] and "mol_rbf_s1|0" in res["data"]["skipped_cells"]
    assert "left for a resumed run" in res["notes"]


def test_five_fold_probe_table_lists_finished_variants_only(tmp_path):
    from orbitkernels.experiments.molecules3d import FIVE_FOLD_PROBES, _five_fold_probe_lines

    path = tmp_path / FIVE_FOLD_PROBES
    assert _five_fold_probe_lines(path) == []  # no probe file: no table
    rec = {"script": "benchmarks/probes/molecules3d/five_fold_wider.py", "folds": {"r64": {"0": {}}, "s512": {}},
           "variants": {"atoms_rbf_multiscale r64": {"rmse": 4.9971, "mae": 3.509, "rmse_per_fold": "5.05 / 4.69",
                                                     "n_features": 3840, "n_group_samples": 64,
                                                     "gammas": "0.1 / 0.3 / 1.0", "feature_s": 319.6}}}
    path.write_text(json.dumps(rec))
    lines = _five_fold_probe_lines(path)
    rows = [line for line in lines if line.startswith("| `")]
    assert rows == ["| `atoms_rbf_multiscale r64` | 3840 | 64 | 0.1 / 0.3 / 1.0 | 5.00 | 3.51 | 5.05 / 4.69 | 320 |"]
    assert any("five_fold_wider.py" in line for line in lines)
    rec["variants"] = {}
    path.write_text(json.dumps(rec))
    assert _five_fold_probe_lines(path) == []  # folds still running: nothing to show yet
