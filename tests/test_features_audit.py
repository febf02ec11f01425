"""Regression tests for defects found by auditing the feature maps as a new user would.

Each test failed on the code before its fix: ``MolecularOrbitFeatures`` reading its parameters live at
``transform`` and skipping the library's input rules; ``transform_multi``, ``sample_cdf_templates`` and
``average_over_copies`` coercing or mis-reporting bad arguments.
"""
import numpy as np
import pytest
from sklearn.base import clone

from orbitkernels.features import GroupCDFFeatures, MolecularOrbitFeatures, average_over_copies, sample_cdf_templates
from orbitkernels.groups import BlockPermutation, CyclicShift, encode_molecules

ERR = (ValueError, TypeError)
RNG = np.random.RandomState(0)
MOLECULES = encode_molecules(RNG.choice([1, 6, 8], size=(6, 4)), RNG.normal(size=(6, 4, 3)))
X = RNG.normal(size=(20, 12))


def _molecular(**kw):
    return MolecularOrbitFeatures(**{"n_wavevectors": 6, "n_components": 8, "n_group_samples": 4,
                                     "random_state": 0, **kw})


# --------------------------------------------------------------------------- MolecularOrbitFeatures
CHANGES = [("sigma", 1.0), ("kernel", "laplacian"), ("weighting", "charge")]


@pytest.mark.parametrize("centres, param, value",
                         [(c, p, v) for c in ("molecule", "atoms") for p, v in CHANGES]
                         + [("molecule", "centres", "atoms"), ("atoms", "centres", "molecule"),
                            ("atoms", "cutoff", 1.0)])
def test_molecular_set_params_after_fit_changes_nothing_until_refit(centres, param, value):
    # sigma, kernel and cutoff changed the features of the fitted map; weighting and centres crashed in a matmul
    # or a broadcast (templates of another width)
    f = _molecular(centres=centres).fit(MOLECULES)
    F, names = f.transform(MOLECULES), f.get_feature_names_out()
    f.set_params(**{param: value})
    np.testing.assert_array_equal(f.transform(MOLECULES), F)
    np.testing.assert_array_equal(f.get_feature_names_out(), names)
    g = clone(f).fit(MOLECULES)  # a refit takes the new value
    assert getattr(g, param + "_") == value


@pytest.mark.parametrize("how", ["str", "bytes"])
def test_molecular_refuses_text_naming_x(how):
    Z = MOLECULES.astype(str) if how == "str" else MOLECULES.astype(str).astype(bytes)
    with pytest.raises(TypeError, match="X"):
        _molecular().fit(Z)
    with pytest.raises(TypeError, match="X"):
        _molecular().fit(MOLECULES).transform(Z)


@pytest.mark.parametrize("dtype", [">f4", ">f8"])
def test_molecular_byte_order_does_not_change_the_output_dtype(dtype):
    native = np.dtype(dtype).newbyteorder("=")
    f = _molecular().fit(MOLECULES)
    out = f.transform(MOLECULES.astype(dtype))
    assert out.dtype == native  # big-endian float32 came back float64
    np.testing.assert_array_equal(out, f.transform(MOLECULES.astype(native)))
    assert _molecular().fit_transform(MOLECULES.astype(dtype)).dtype == native


def test_molecular_species_must_be_finite():
    with pytest.raises(ValueError, match="species"):
        _molecular(species=(1, 6, 8, np.inf)).fit(MOLECULES)


@pytest.mark.parametrize("budget", [0, -1.0])
def test_molecular_budget_set_after_fit_is_validated(budget):
    f = _molecular().fit(MOLECULES).set_params(max_memory_mb=budget)
    with pytest.raises(ValueError, match=r"max_memory_mb.*range"):
        f.transform(MOLECULES)


# --------------------------------------------------------------------------- GroupCDFFeatures.transform_multi
@pytest.mark.parametrize("bins, exc", [([2.5], TypeError), ([True], TypeError), (["3"], TypeError),
                                       ([3.0], TypeError), ([np.nan], TypeError), ([0], ValueError),
                                       (3, ValueError), ("23", ValueError), ([], ValueError)])
def test_transform_multi_refuses_what_is_not_a_bin_count(bins, exc):
    # 2.5 gave the features of 2 bins under the key 2, True those of 1 bin, "3" those of 3
    f = GroupCDFFeatures(CyclicShift(12), n_templates=3, n_bins=4, random_state=0).fit(X)
    with pytest.raises(exc, match="n_bins_list"):
        f.transform_multi(X, bins)


def test_transform_multi_takes_numpy_integers_and_iterables():
    f = GroupCDFFeatures(CyclicShift(12), n_templates=3, n_bins=4, random_state=0).fit(X)
    ref = f.transform_multi(X, [2, 4])
    for bins in (np.array([2, 4]), (n for n in (2, 4)), (np.int64(2), 4)):
        out = f.transform_multi(X, bins)
        assert list(out) == [2, 4]
        for n in (2, 4):
            np.testing.assert_array_equal(out[n], ref[n])


def test_transform_multi_checks_the_budget_like_transform():
    f = GroupCDFFeatures(CyclicShift(12), n_templates=3, n_bins=4, random_state=0).fit(X)
    f.set_params(max_memory_mb=-1)
    with pytest.raises(ValueError, match=r"max_memory_mb.*range"):
        f.transform_multi(X, [2])


# --------------------------------------------------------------------------- sample_cdf_templates
def test_sample_cdf_templates_takes_a_seed_and_names_bad_arguments():
    a = sample_cdf_templates(5, 4, 3)  # a seed: was AttributeError 'int' object has no attribute 'normal'
    np.testing.assert_array_equal(a, sample_cdf_templates(5, 4, np.random.RandomState(3)))
    assert (np.sum(a * a, axis=1) < 1.5).all()
    with pytest.raises(ValueError, match="n_templates"):
        sample_cdf_templates(-1, 4, 0)
    with pytest.raises(TypeError, match="n_templates"):
        sample_cdf_templates(2.5, 4, 0)
    with pytest.raises(ValueError, match="epsilon"):
        sample_cdf_templates(2, 4, 0, epsilon=-1.0)
    # the message listed 'data' among the valid values while refusing it
    with pytest.raises(ValueError, match=r"'gaussian' or 'sphere'; got 'data'"):
        sample_cdf_templates(2, 4, 0, sampling="data")


# --------------------------------------------------------------------------- average_over_copies
def _copies_setup():
    g = BlockPermutation(4, 3)
    f = GroupCDFFeatures(n_templates=3, n_bins=4, random_state=0).fit(X)
    return f, g, g.sample(5, np.random.RandomState(0))


def test_average_over_copies_is_the_mean_of_the_transformed_copies():
    f, g, E = _copies_setup()
    ref = np.mean([f.transform(g.act(X, E[k : k + 1])[0]) for k in range(len(E))], axis=0)
    np.testing.assert_allclose(average_over_copies(f, g, E, X, chunk_rows=7), ref, atol=1e-12)
    np.testing.assert_allclose(average_over_copies(f, g, E, X.tolist()), ref, atol=1e-12)  # was AttributeError


@pytest.mark.parametrize("kw, match", [(dict(chunk_rows=0), "chunk_rows"), (dict(chunk_rows=-1), "chunk_rows"),
                                       (dict(chunk_rows=2.5), "chunk_rows"), (dict(elements=0), "elements"),
                                       (dict(X=X[:0]), "0 sample"), (dict(X=X.astype(str)), "X")])
def test_average_over_copies_names_bad_arguments(kw, match):
    f, g, E = _copies_setup()
    args = {"X": X, "elements": E, **kw}
    if isinstance(args["elements"], int):
        args["elements"] = E[:0]
    with pytest.raises(ERR, match=match):
        average_over_copies(f, g, args.pop("elements"), args.pop("X"), **args)


def test_molecular_refuses_positions_whose_phases_are_noise_and_names_bad_gammas():
    """Far-away coordinates in float32 made finite noise of the features; a text γ was numpy's message."""
    from orbitkernels.features import MolecularOrbitFeatures
    from orbitkernels.groups import encode_molecules

    Z = np.array([[6, 1, 1, 1, 1]] * 3)
    R = np.random.default_rng(0).normal(scale=1.0, size=(3, 5, 3))
    X = encode_molecules(Z, R).astype(np.float32)
    est = MolecularOrbitFeatures(species=(1, 6), n_components=8, n_group_samples=4, random_state=0).fit(X)
    assert np.isfinite(est.transform(X)).all()
    with pytest.raises(ValueError, match="positions reach .* not resolved in float32"):
        est.transform(encode_molecules(Z, R + 1e8).astype(np.float32))
    est.transform(encode_molecules(Z, R + 1e8))  # float64 rows resolve them
    with pytest.raises(ValueError, match="gammas must be a non-empty list of positive numbers"):
        est.transform_gammas(X, ["a"])


def test_molecular_pickle_of_a_map_fitted_before_its_fitted_parameters_existed_loads():
    """A pickle made by 0.1.0 before weighting_, centres_, kernel_, sigma_ and cutoff_ were stored at fit loads (the
    version matches) and transforms as the map did then, from the parameters."""
    import pickle

    from orbitkernels.features import MolecularOrbitFeatures
    from orbitkernels.groups import encode_molecules

    rng = np.random.default_rng(0)
    X = encode_molecules(np.array([[6, 1, 1, 1, 1]] * 3), rng.normal(size=(3, 5, 3)))
    est = MolecularOrbitFeatures(species=(1, 6), n_components=8, n_group_samples=4, random_state=0).fit(X)
    expected = est.transform(X)
    state = est.__getstate__()
    for name in ("weighting_", "centres_", "kernel_", "sigma_", "cutoff_"):
        del state[name]
    old = MolecularOrbitFeatures.__new__(MolecularOrbitFeatures)
    old.__setstate__(state)
    np.testing.assert_array_equal(pickle.loads(pickle.dumps(old)).transform(X), expected)
