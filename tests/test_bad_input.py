"""Bad input battery: every public entry point refuses it with a message naming the parameter and the value.

Nothing may be silently coerced or truncated: float32 stays float32, integers
become float64 exactly, and a row of the wrong length is an error, never a crop.
"""
import importlib

import numpy as np
import pytest

from orbitkernels.diagnostics import invariance_error
from orbitkernels.features import GroupCDFFeatures, OrbitFourierFeatures, OrbitNystroem
from orbitkernels.groups import (
    BlockPermutation, CoulombPermutation, CyclicShift, Discrete, ImageRotation, ImageScaling, ImageTranslation,
    LogNormal, LogUniform, Normal, PitchShift, TimeWarp, Uniform, VonMises,
)
from orbitkernels.kernels import HaarKernel

GOOD = np.random.default_rng(0).normal(size=(6, 16))
ROT = ImageRotation((4, 4))
ERR = (ValueError, TypeError)

MAPS = {
    "gicdf": lambda **kw: GroupCDFFeatures(**{"group": ROT, "n_templates": 2, "n_bins": 2, "n_group_samples": 3,
                                              "random_state": 0, **kw}),
    "fourier": lambda **kw: OrbitFourierFeatures(**{"group": ROT, "n_components": 4, "n_group_samples": 3,
                                                    "random_state": 0, **kw}),
    "nystroem": lambda **kw: OrbitNystroem(**{"group": ROT, "n_components": 3, "n_group_samples": 3,
                                              "random_state": 0, **kw}),
}

BAD_X = [
    ("nan", np.where(np.eye(6, 16) > 0, np.nan, GOOD), "NaN"),
    ("inf", np.where(np.eye(6, 16) > 0, np.inf, GOOD), "infinity|inf"),
    ("empty-rows", np.zeros((0, 16)), "0 sample"),
    ("empty-cols", np.zeros((6, 0)), "0 feature|16 features"),
    ("1-D", GOOD[0], "2D array"),
    ("3-D", GOOD.reshape(6, 4, 4), "dim"),
    ("complex", GOOD + 1j, "[Cc]omplex"),
    # object arrays of numbers are converted exactly (scikit-learn's check_dtype_object requires it);
    # object arrays holding anything else are refused
    ("object", np.array([["a"] * 16] * 6, dtype=object), "could not convert|object|float"),
    ("object-none", np.array([[None] * 16] * 6, dtype=object), "NaN|object"),
    ("strings", np.full((6, 16), "a"), "could not convert|dtype|numeric|string"),
    ("wrong-length", GOOD[:, :15], "16 features.*15|15 features.*16"),
    ("too-long", np.hstack([GOOD, GOOD[:, :1]]), "16 features.*17|17 features.*16"),
]


# --------------------------------------------------------------------------- features
@pytest.mark.parametrize("case, X, match", BAD_X, ids=[c[0] for c in BAD_X])
@pytest.mark.parametrize("name", list(MAPS))
def test_feature_maps_refuse_bad_X_at_fit(name, case, X, match):
    with pytest.raises(ERR, match=match):
        MAPS[name]().fit(X)


@pytest.mark.parametrize("case, X, match", [c for c in BAD_X if c[0] not in ("empty-cols",)],
                         ids=[c[0] for c in BAD_X if c[0] not in ("empty-cols",)])
@pytest.mark.parametrize("name", list(MAPS))
def test_feature_maps_refuse_bad_X_at_transform(name, case, X, match):
    f = MAPS[name]().fit(GOOD)
    with pytest.raises(ERR, match=match):
        f.transform(X)


@pytest.mark.parametrize("name, params, match", [
    ("gicdf", {"n_bins": 0}, "'n_bins' parameter.*Got 0 instead"),
    ("gicdf", {"n_bins": -3}, "'n_bins' parameter.*Got -3 instead"),
    ("gicdf", {"n_bins": 2.5}, "'n_bins' parameter.*Got 2.5 instead"),
    ("gicdf", {"n_templates": 0}, "'n_templates' parameter.*Got 0 instead"),
    ("gicdf", {"epsilon": 0.0}, "'epsilon' parameter.*Got 0.0 instead"),
    ("gicdf", {"epsilon": 1.5}, "'epsilon' parameter.*Got 1.5 instead"),
    ("gicdf", {"value_range": -1.0}, "'value_range' parameter.*Got -1.0 instead"),
    ("gicdf", {"value_range": "big"}, "value_range.*'big'"),
    ("gicdf", {"template_sampling": "uniform"}, "template_sampling.*'uniform'"),
    ("fourier", {"gamma": 0.0}, "'gamma' parameter.*Got 0.0 instead"),
    ("fourier", {"gamma": -1.0}, "'gamma' parameter.*Got -1.0 instead"),
    ("fourier", {"gamma": np.nan}, "'gamma' parameter.*Got nan instead"),
    ("fourier", {"n_components": 0}, "'n_components' parameter.*Got 0 instead"),
    ("fourier", {"n_components": -2}, "'n_components' parameter.*Got -2 instead"),
    ("fourier", {"output": "sin"}, "output.*'sin'"),
    ("fourier", {"n_group_samples": 0}, "'n_group_samples' parameter.*Got 0 instead"),
    ("fourier", {"max_memory_mb": 0}, "'max_memory_mb' parameter.*Got 0 instead"),
    ("fourier", {"max_memory_mb": -5}, "'max_memory_mb' parameter.*Got -5 instead"),
    ("fourier", {"action": "both"}, "action.*'both'"),
    ("nystroem", {"n_components": 7}, "n_components=7 landmarks.*6 samples"),
    ("nystroem", {"n_components": 0}, "'n_components' parameter.*Got 0 instead"),
    ("nystroem", {"kernel": "gauss"}, "kernel.*'gauss'"),
    ("nystroem", {"landmarks": "grid"}, "landmarks.*'grid'"),
    ("nystroem", {"group": "rotation"}, "'group' parameter.*Got 'rotation' instead"),
])
def test_feature_map_parameters_named(name, params, match):
    with pytest.raises(ERR, match=match):
        MAPS[name](**params).fit(GOOD)


@pytest.mark.parametrize("name", list(MAPS))
def test_memory_budget_smaller_than_one_row_is_an_error(name):
    f = MAPS[name]().fit(GOOD)
    f.set_params(max_memory_mb=1e-7)
    with pytest.raises(ValueError, match="max_memory_mb"):
        f.transform(GOOD)


@pytest.mark.parametrize("name", list(MAPS))
def test_no_silent_dtype_coercion(name):
    f = MAPS[name]().fit(GOOD)
    assert f.transform(GOOD.astype(np.float32)).dtype == np.float32
    assert f.transform(GOOD).dtype == np.float64
    Xi = np.arange(6 * 16).reshape(6, 16) % 7 - 3  # integers: exactly representable in float64
    Fi = f.transform(Xi)
    assert Fi.dtype == np.float64
    np.testing.assert_array_equal(Fi, f.transform(Xi.astype(np.float64)))


def test_big_integers_are_not_rounded_through_float32():
    # 2**24 + 1 is not a float32; int input must go to float64 (exact), not float32.
    f = OrbitFourierFeatures(CyclicShift(4), n_components=3, gamma=1e-16, random_state=0)
    Xi = np.full((2, 4), 2**24 + 1, dtype=np.int64)
    np.testing.assert_array_equal(f.fit(Xi).transform(Xi), f.transform(Xi.astype(np.float64)))


# --------------------------------------------------------------------------- groups
@pytest.mark.parametrize("make, match", [
    (lambda: BlockPermutation(0), "n_blocks must be >= 1; got 0"),
    (lambda: BlockPermutation(3, -1), "block_size must be >= 1; got -1"),
    (lambda: BlockPermutation(2.5), "n_blocks must be an integer; got 2.5"),
    (lambda: CoulombPermutation(0), "n_atoms must be >= 1; got 0"),
    (lambda: CoulombPermutation(3, sampling="sorted"), "sampling.*'sorted'"),
    (lambda: CoulombPermutation(3, sampling="montavon", noise=-1.0), "noise must be >= 0.0; got -1.0"),
    (lambda: CyclicShift(0), "shape must be >= 1; got 0"),
    (lambda: CyclicShift((2, 3, 4)), r"1-D or 2-D; got \(2, 3, 4\)"),
    (lambda: CyclicShift(3, weights=[1, 1]), r"weights must have shape \(3,\); got \(2,\)"),
    (lambda: CyclicShift(3, weights=[1, -1, 1]), "weights must be .*non-negative"),
    (lambda: ImageRotation((0, 4)), "image_shape must be >= 1; got 0"),
    (lambda: ImageRotation((4, -4)), "image_shape must be >= 1; got -4"),
    (lambda: ImageRotation((4,)), r"image_shape.*\(4,\)"),
    (lambda: ImageRotation((4, 4), n_angles=0), "n_angles must be >= 1; got 0"),
    (lambda: ImageRotation((4, 4), angle=0.3), "angle must be a Distribution.*0.3"),
    (lambda: ImageRotation((4, 4), angle=LogNormal(1.0)), "LogNormal.*multiplicative.*'circular'"),
    (lambda: ImageTranslation((4, 4), shift=(Normal(1.0),)), "shift.*pair.*1 item"),
    (lambda: ImageTranslation((4, 4), shift=VonMises(1.0)), "VonMises.*additive"),
    (lambda: ImageScaling((4, 4), scale=Uniform(-1.0, 2.0)), "positive.*low=-1.0"),
    (lambda: ImageScaling((4, 4), scale=Normal(1.0)), "Normal.*LogNormal"),
    (lambda: ImageScaling((4, 4), scale=Discrete([0.5, -1.0])), r"scale values must be positive.*-1\.0"),
    (lambda: PitchShift(1, cents=Normal(10.0)), "n_samples must be >= 2; got 1"),
    (lambda: PitchShift(100, cents=Normal(10.0), n_fft=4), "n_fft must be >= 8; got 4"),
    (lambda: PitchShift(100, cents=Normal(10.0), n_fft=512), "n_fft=512 is longer.*100 samples"),
    (lambda: TimeWarp(100, rate=Normal(0.1)), "LogNormal"),
    (lambda: TimeWarp(0, rate=LogNormal(0.1)), "n_samples must be >= 2; got 0"),
])
def test_group_constructors(make, match):
    with pytest.raises(ERR, match=match):
        make()


GROUPS = {
    "block": BlockPermutation(4, 4),
    "coulomb": CoulombPermutation(4),
    "cyclic": CyclicShift((4, 4)),
    "rotation": ImageRotation((4, 4)),
    "translation": ImageTranslation((4, 4), shift=Normal(1.0)),
    "scaling": ImageScaling((4, 4), scale=LogNormal(0.2)),
    "product": ImageRotation((4, 4)) * ImageTranslation((4, 4), shift=Normal(1.0)),
}


@pytest.mark.parametrize("case, X, match", [c for c in BAD_X if c[0] not in ("empty-cols",)],
                         ids=[c[0] for c in BAD_X if c[0] not in ("empty-cols",)])
@pytest.mark.parametrize("gname", list(GROUPS))
def test_group_act_refuses_bad_X(gname, case, X, match):
    g = GROUPS[gname]
    E = g.sample(2, 0)
    if case in ("1-D", "3-D"):
        match = "2-D"
    if case == "empty-rows":
        match = "empty"
    if case in ("object", "object-none"):
        match = "object"
    if case == "strings":
        match = "non-numeric"
    if case in ("wrong-length", "too-long"):
        match = f"16 features.*X has {X.shape[1]} features"
    with pytest.raises(ERR, match=match):
        g.act(X, E)
    with pytest.raises(ERR, match=match):
        g.act_each(X, g.sample(len(X) if X.ndim >= 1 and len(X) else 1, 0))


@pytest.mark.parametrize("gname", list(GROUPS))
def test_group_elements_and_sample_sizes(gname):
    g = GROUPS[gname]
    with pytest.raises(ERR, match="n must be >= 1; got 0"):
        g.sample(0, 0)
    with pytest.raises(ERR, match="n must be >= 1; got -1"):
        g.sample(-1, 0)
    with pytest.raises(ERR, match="n must be an integer; got 2.0"):
        g.sample(2.0, 0)
    E = g.sample(3, 0)
    with pytest.raises(ERR, match="elements.*shape"):
        g.act(GOOD, E[:, :0] if E.shape[1] > 1 else np.ones((3, 5)))
    bad = E.astype(float).copy()
    bad[0, 0] = np.nan
    with pytest.raises(ERR, match="NaN"):
        g.act(GOOD, bad)
    with pytest.raises(ERR, match="one element per row: 3 elements for 6 rows"):
        g.act_each(GOOD, E)


def test_group_act_keeps_float32():
    X32 = GOOD.astype(np.float32)
    for g in GROUPS.values():
        E = g.sample(2, 0)
        assert g.act(X32, E).dtype == np.float32, g


# --------------------------------------------------------------------------- distributions
@pytest.mark.parametrize("make, match", [
    (lambda: Uniform(2, 1), "low < high; got low=2.0, high=1.0"),
    (lambda: Uniform(1, 1), "low < high; got low=1.0, high=1.0"),
    (lambda: Uniform(np.nan, 1), "low must be finite; got nan"),
    (lambda: Uniform("0", 1), "low must be a real number; got '0'"),
    (lambda: LogUniform(2, 1), "low < high; got low=2.0, high=1.0"),
    (lambda: LogUniform(0, 1), "low must be > 0; got 0.0"),
    (lambda: VonMises(-1.0), "kappa must be >= 0.0; got -1.0"),
    (lambda: VonMises(np.inf), "kappa must be finite; got inf"),
    (lambda: Normal(0.0), "sigma must be > 0.0; got 0.0"),
    (lambda: Normal(-1.0), "sigma must be > 0.0; got -1.0"),
    (lambda: LogNormal(0.0), "sigma must be > 0.0; got 0.0"),
    (lambda: Discrete([]), "at least one value"),
    (lambda: Discrete([1.0, np.nan]), "values must be finite"),
    (lambda: Discrete([1.0, 2.0], weights=[1.0]), "weights must be 2"),
    (lambda: Discrete([1.0, 2.0], weights=[1.0, -1.0]), "weights must be 2 non-negative"),
    (lambda: Discrete([[1.0, 2.0], [3.0, 4.0]]), r"1-D sequence; got an array of shape \(2, 2\)"),
])
def test_distributions(make, match):
    with pytest.raises(ERR, match=match):
        make()


def test_discrete_weights_are_relative():
    assert Discrete([1.0, 2.0], weights=[1, 3]).weights == (0.25, 0.75)


@pytest.mark.parametrize("dist", [Uniform(0, 1), LogUniform(1, 2), VonMises(1.0), Normal(1.0), LogNormal(1.0),
                                  Discrete([1.0, 2.0])])
def test_distribution_sample_size(dist):
    assert dist.sample(3, 0).shape == (3,)
    with pytest.raises(ERR, match="size"):
        dist.sample(-1, 0)


# --------------------------------------------------------------------------- kernel
@pytest.mark.parametrize("make, match", [
    (lambda: HaarKernel(CyclicShift(3), "gauss"), "base_kernel.*'gauss'"),
    (lambda: HaarKernel(CyclicShift(3), n_group_samples=0), "'n_group_samples' parameter.*Got 0 instead"),
    (lambda: HaarKernel(CyclicShift(3), max_memory_mb=0), "'max_memory_mb' parameter.*Got 0 instead"),
    (lambda: HaarKernel(CyclicShift(3), single_sum="yes"), "single_sum.*'yes'"),
    (lambda: HaarKernel("cyclic"), "'group' parameter.*'cyclic'"),
    (lambda: HaarKernel(CyclicShift(3), elements=np.zeros((2, 1)), weights=[0.5, 0.6]), "weights must be 2"),
])
def test_haar_kernel_parameters(make, match):
    # checked when the kernel is first used (fit or call), as scikit-learn estimators do
    with pytest.raises(ERR, match=match):
        make()(np.ones((2, 3)))


@pytest.mark.parametrize("case, X, match", [c for c in BAD_X if c[0] not in ("empty-cols",)],
                         ids=[c[0] for c in BAD_X if c[0] not in ("empty-cols",)])
def test_haar_kernel_refuses_bad_X(case, X, match):
    k = HaarKernel(ROT, n_group_samples=2, random_state=0, gamma=0.1)
    if case in ("1-D", "3-D"):
        match = "2-D"
    if case == "empty-rows":
        match = "empty"
    if case in ("object", "object-none"):
        match = "object"
    if case == "strings":
        match = "text dtype"
    if case in ("wrong-length", "too-long"):
        match = f"16 features.*{X.shape[1]}|{X.shape[1]} features.*16"
    with pytest.raises(ERR, match=match):
        k(X)
    if case not in ("wrong-length", "too-long"):
        with pytest.raises(ERR, match=match):
            k(GOOD, X)


def test_haar_kernel_memory_budget_below_one_row():
    # elements given: the budget is checked where the blocks are sized, at the call
    k = HaarKernel(ROT, elements=ROT.sample(4, random_state=0), max_memory_mb=1e-7, gamma=0.1)
    with pytest.raises(ValueError, match="max_memory_mb=1e-07 cannot hold one row"):
        k(GOOD)
    # sampled elements: refused before they are drawn
    k = HaarKernel(ROT, n_group_samples=4, random_state=0, max_memory_mb=1e-7, gamma=0.1)
    with pytest.raises(ValueError, match="HaarKernel: n_group_samples=4 .* more than max_memory_mb=1e-07"):
        k(GOOD)


def _molecular(**kw):
    from orbitkernels.features import MolecularOrbitFeatures

    return MolecularOrbitFeatures(**{"species": [1, 6], "n_components": 4, "n_wavevectors": 3, "random_state": 0,
                                     **kw})


def _molecules():
    from orbitkernels.groups import encode_molecules

    R = np.random.default_rng(0).normal(size=(3, 2, 3))
    return encode_molecules(np.array([[6, 1]] * 3), R)


@pytest.mark.parametrize("name", [*MAPS, "haar", "molecular"])
def test_huge_group_sample_count_refused_at_fit_before_drawing(name):
    """n_group_samples=10**9 used to allocate gigabytes of group elements first (7.5 GB of angles for a
    rotation: a process killed for memory on a 24 GB machine); now fit refuses it from the parameters alone."""
    import tracemalloc

    if name == "haar":
        est, fit = HaarKernel(ROT, n_group_samples=10**9, gamma=0.1), (lambda e: e.fit(GOOD))
    elif name == "molecular":
        est, fit = _molecular(n_group_samples=10**9), (lambda e: e.fit(_molecules()))
    else:
        est, fit = MAPS[name](n_group_samples=10**9), (lambda e: e.fit(GOOD))
    tracemalloc.start()
    try:
        with pytest.raises(ValueError, match=r"n_group_samples=1000000000 .*MB for one row, more than "
                                             r"max_memory_mb=256(\.0)?; lower"):
            fit(est)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 2**20, peak


@pytest.mark.parametrize("name", list(MAPS))
def test_fit_budget_refuses_only_what_transform_refuses(name):
    """The fit-time bound (templates x group elements x 4 bytes) is a lower bound of what transform holds: a
    budget that fit refuses, transform refuses too, and fit accepts the budget of exactly that bound."""
    s = {"gicdf": 2, "fourier": 4, "nystroem": 3}[name]
    bound_mb = 4 * s * 3 / 2**20  # every map here: n_group_samples=3
    with pytest.raises(ValueError, match="more than max_memory_mb"):
        MAPS[name](max_memory_mb=bound_mb * 0.99).fit(GOOD)
    est = MAPS[name](max_memory_mb=bound_mb).fit(GOOD)  # accepted at the bound itself
    est.set_params(max_memory_mb=bound_mb * 0.99)
    with pytest.raises(ValueError, match="smaller than one row needs"):
        est.transform(GOOD)


def test_transform_budget_names_the_output_when_it_is_the_larger_part():
    est = GroupCDFFeatures(ROT, n_templates=2, n_bins=10**7, n_group_samples=3, random_state=0).fit(GOOD)
    with pytest.raises(ValueError, match="of which .* MB for its output features and their pooling"):
        est.transform(GOOD)
    est = MAPS["fourier"](n_components=2000, max_memory_mb=0.05).fit(GOOD)
    with pytest.raises(ValueError, match="of which .* MB for 2000 templates x 3 group elements"):
        est.transform(GOOD)


# --------------------------------------------------------------------------- diagnostics
def test_invariance_error_bad_input():
    f = MAPS["fourier"]().fit(GOOD)
    with pytest.raises(TypeError, match="group must be.*str"):
        invariance_error(f, GOOD, "rotation")
    with pytest.raises(ValueError, match="n_elements must be >= 1; got 0"):
        invariance_error(f, GOOD, ROT, n_elements=0)
    with pytest.raises(ValueError, match="NaN"):
        invariance_error(f, BAD_X[0][1], ROT)
    with pytest.raises(ValueError, match="16 features.*15|15 features.*16"):
        invariance_error(f, GOOD[:, :15], ROT)
    with pytest.raises(ValueError, match="method.*'score'"):
        invariance_error(f, GOOD, ROT, method="score")


# --------------------------------------------------------------------------- datasets
def test_data_home_must_exist_and_be_a_folder(tmp_path, monkeypatch):
    from orbitkernels.datasets import dataset_status, get_data_home, load_mnist
    missing = tmp_path / "nope"
    with pytest.raises(FileNotFoundError, match=f"data folder '{missing}'.*data_home argument"):
        get_data_home(missing)
    with pytest.raises(FileNotFoundError, match="nope"):
        load_mnist(data_home=missing)
    afile = tmp_path / "file.txt"
    afile.write_text("x")
    with pytest.raises(NotADirectoryError, match="file.txt.*not a folder"):
        get_data_home(afile)
    monkeypatch.setenv("ORBITKERNELS_DATA", str(missing))
    with pytest.raises(FileNotFoundError, match="ORBITKERNELS_DATA"):
        get_data_home()
    with pytest.raises(TypeError, match="data_home.*123"):
        get_data_home(123)
    with pytest.raises(FileNotFoundError, match="nope"):
        dataset_status(data_home=missing)


# --------------------------------------------------------------------------- models (optional modules)
def _opt(modname):
    try:
        return importlib.import_module(modname)
    except ImportError as exc:  # pragma: no cover - built by other engineers
        pytest.skip(f"{modname} not importable: {exc}")


def test_invariant_svc_bad_input():
    m = _opt("orbitkernels.models.invariant_svm")
    y = np.arange(6) % 2
    for params, match in [({"C": 0.0}, "C"), ({"C": -1.0}, "C"), ({"kernel": "gauss"}, "kernel.*gauss"),
                          ({"max_iter": 0}, "max_iter"), ({"tol": -1.0}, "tol"), ({"solver": "sgd"}, "solver.*sgd")]:
        with pytest.raises(ERR, match=match):
            m.InvariantSVC(**params).fit(GOOD, y)
    for X, match in [(BAD_X[0][1], "NaN"), (GOOD[0], "2D"), (GOOD + 1j, "[Cc]omplex")]:
        with pytest.raises(ERR, match=match):
            m.InvariantSVC(max_iter=2).fit(X, y)
    clf = m.InvariantSVC(max_iter=3, kernel="linear").fit(GOOD, y)
    with pytest.raises(ERR, match="16 features|features"):
        clf.predict(GOOD[:, :15])


def test_invariant_linear_classifier_bad_input():
    m = _opt("orbitkernels.models.feature_scaling")
    y = np.where(np.arange(6) % 2, 1, -1)
    for params, match in [({"loss": "fscale", "K": -1}, "'K' parameter.*Got -1 instead"),
                          ({"loss": "fscale", "l": 2.0, "u": 1.0}, "'l' parameter.*Got 2.0 instead"),
                          ({"loss": "squared"}, "loss.*'squared'"),
                          ({"lam": 0.0}, "lam"), ({"max_iter": 0}, "max_iter")]:
        with pytest.raises(ERR, match=match):
            m.InvariantLinearClassifier(**params).fit(GOOD, y)
    with pytest.raises(ERR, match="NaN"):
        m.InvariantLinearClassifier().fit(BAD_X[0][1], y)


def test_distributed_ridge_bad_input():
    m = _opt("orbitkernels.distributed")
    y = np.arange(6, dtype=float)
    for params, match in [({"alphas": []}, "alphas"), ({"alphas": [-1.0]}, "alphas.*-1"),
                          ({"validation_fraction": 1.5}, "validation_fraction.*1.5"),
                          ({"split_every": 1}, r"'split_every' parameter .* range \[2, 2147483647\]\. Got 1")]:
        with pytest.raises(ERR, match=match):
            m.DistributedRidge(**params).fit(GOOD, y)
    with pytest.raises(ERR, match="NaN"):
        m.DistributedRidge(alphas=[1.0]).fit(BAD_X[0][1], y)


def _svc_data():
    rng = np.random.default_rng(0)
    X = rng.random((40, 16))
    return X, (X[:, :4].sum(1) > X[:, 4:8].sum(1)).astype(int)


@pytest.mark.parametrize("solver", ["column_generation", "pegasos"])
def test_invariant_svc_refuses_a_sampled_set_too_large_before_drawing_it(solver):
    """n_transformations=10**9 sampled shifts would draw a billion group elements and then copy every row a
    billion times (a process killed for memory); fit refuses it from the counts alone."""
    import tracemalloc

    from orbitkernels.groups import ImageTranslation, Normal
    from orbitkernels.models import InvariantSVC

    X, y = _svc_data()
    kernel = "linear" if solver == "pegasos" else "rbf"
    est = InvariantSVC(transformations=ImageTranslation((4, 4), shift=Normal(1.0)), n_transformations=10**9,
                       solver=solver, kernel=kernel)
    tracemalloc.start()
    try:
        with pytest.raises(ValueError, match=r"n_transformations=1000000000 sampled elements would make up to "
                                             r"40,000,000,040 transformed copies of the 40 rows \(16 features\), "
                                             r"[0-9,.]+ MB, more than the default budget of [0-9,]+ MB "
                                             r"\(max_memory_mb=None: 3/4 of the [0-9,]+ MB of physical memory\); "
                                             r"use fewer"):
            est.fit(X, y)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 2**20, peak


@pytest.mark.parametrize("solver", ["column_generation", "pegasos"])
def test_invariant_svc_budget_counts_the_copies_of_a_finite_set(solver):
    """40 rows x (identity + 3 shifts) x 16 features: 160 copies of 128 bytes with their example index and two
    costs (8 + 2 x 8), and column generation's float64 kernel-precision copy and scores beside them (16 x 8 + 2 x 8
    per copy); just below is refused, and Pegasos, which holds nothing else, accepts the bound itself."""
    from orbitkernels.models import InvariantSVC

    X, y = _svc_data()
    per_copy = 16 * 8 + 8 + 2 * 8 + (0 if solver == "pegasos" else 16 * 8 + 2 * 8)
    bound_mb = 160 * per_copy / 2**20
    kernel = "linear" if solver == "pegasos" else "rbf"
    trans = [lambda Z, s=s: np.roll(Z, s, axis=1) for s in (1, 2, 3)]
    with pytest.raises(ValueError, match=r"the invariance set makes 160 transformed copies of the 40 rows"):
        InvariantSVC(transformations=trans, solver=solver, kernel=kernel, max_iter=2,
                     max_memory_mb=bound_mb * 0.99).fit(X, y)
    if solver == "pegasos":
        InvariantSVC(transformations=trans, solver=solver, kernel=kernel, max_iter=2,
                     max_memory_mb=bound_mb).fit(X, y)


def test_invariant_svc_kernel_cache_outgrowing_the_budget_is_an_error():
    """Column generation caches one kernel column per added vector against every copy: a budget that holds the
    copies but not that cache stops the fit with an error naming the cache, instead of growing past it."""
    from orbitkernels.models import InvariantSVC

    X, y = _svc_data()
    trans = [lambda Z, s=s: np.roll(Z, s, axis=1) for s in (1, 2, 3)]
    copies_mb = 160 * (16 * 8 + 8 + 2 * 8 + 16 * 8 + 2 * 8) / 2**20
    cache_mb = 160 * 20 * 8 / 2**20  # room for 20 cached columns: the first pass adds 40 vectors
    with pytest.raises(ValueError, match=r"kernel cache of 160 transformed copies against 40 added vectors needs "
                                         r"0\.05 MB \(with the smaller cache it grows from\), more than max_memory_mb=.* leaves; "
                                         r"use fewer"):
        InvariantSVC(transformations=trans, max_memory_mb=copies_mb + cache_mb).fit(X, y)
    full = InvariantSVC(transformations=trans).fit(X, y)
    roomy = InvariantSVC(transformations=trans, max_memory_mb=copies_mb + 30 * cache_mb).fit(X, y)
    np.testing.assert_array_equal(full.dual_coef_, roomy.dual_coef_)  # a tight cache changes no result


def test_invariant_svc_makes_its_copies_in_one_array():
    """The budget counts the copies once: they are written in place into one array (the peak is that array,
    one transformed block and the per-copy bookkeeping: example, transformation, costs), not gathered in a list,
    stacked and reordered (three times the array)."""
    import tracemalloc

    from orbitkernels.models import InvariantSVC

    X, y = _svc_data()
    trans = [lambda Z, s=s: np.roll(Z, s, axis=1) for s in range(1, 21)]
    est = InvariantSVC(transformations=trans, solver="pegasos", kernel="linear", max_iter=1).fit(X, y)
    tracemalloc.start()
    try:
        Xc = est._candidates(X, y)[0]
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert Xc.shape == (40 * 21, 16)
    np.testing.assert_array_equal(Xc[21 * 5 + 3], np.roll(X[5], 3))  # example 5's third shift
    assert peak < 1.5 * Xc.nbytes, (peak, Xc.nbytes)


def test_invariant_svc_budget_without_sampling_names_the_set():
    """Without a sampled group the refusal speaks of the set, not of n_transformations."""
    from orbitkernels.models import InvariantSVC

    X, y = _svc_data()
    with pytest.raises(ValueError, match=r"the invariance set makes 40 transformed copies of the 40 rows"):
        InvariantSVC(max_memory_mb=1e-3).fit(X, y)


def test_invariant_svc_cache_counts_itself_twice_while_it_grows():
    """Growing copies the filled columns into a larger array: both are held at that moment, and the budget
    counts both (40 filled columns + 80 needed, of 10 rows of 8 bytes); within it, spare room shrinks to fit."""
    from orbitkernels.models.invariant_svm import _Growing

    def refuse(n_cols, nbytes):
        raise ValueError(f"refused {n_cols} columns, {nbytes} bytes")

    tight = _Growing(10, max_bytes=10 * 8 * (40 + 80) - 1, refuse=refuse)
    tight.append_columns(np.ones((10, 40)))
    with pytest.raises(ValueError, match="refused 80 columns, 9600 bytes"):
        tight.append_columns(np.ones((10, 40)))
    roomy = _Growing(10, max_bytes=10 * 8 * (40 + 80), refuse=refuse)
    roomy.append_columns(np.ones((10, 40)))
    roomy.append_columns(2 * np.ones((10, 40)))
    assert roomy.buf.shape == (10, 80) and roomy._buf.shape[1] == 80  # no spare column past the budget
    np.testing.assert_array_equal(roomy.buf[:, 40:], 2.0)


def test_invariant_svc_default_budget_is_three_quarters_of_physical_memory():
    from orbitkernels.models import InvariantSVC
    from orbitkernels.models.invariant_svm import _physical_memory_bytes

    assert InvariantSVC()._budget_bytes() == 0.75 * _physical_memory_bytes()
    assert InvariantSVC(max_memory_mb=10)._budget_bytes() == 10 * 2**20
    assert _physical_memory_bytes() > 2**28


@pytest.mark.parametrize("need_bytes, shown", [(1500, "0.0014 MB"), (2**20 // 10, "0.1 MB"), (3 * 2**20, "3.0 MB")])
def test_budget_error_states_a_small_need_in_significant_digits(need_bytes, shown):
    """A budget below one row's need names that need: "0.0 MB" (one decimal of a few kilobytes) said nothing."""
    from orbitkernels.utils.validation import check_budget

    with pytest.raises(ValueError, match=rf"need at least {shown} for one row, more than max_memory_mb=1e-06"):
        check_budget("Owner", need_bytes, 1e-6, "templates", "lower them")
