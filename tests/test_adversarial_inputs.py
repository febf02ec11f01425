"""Adversarial input found by fuzzing the public API: each case was a hang, a raw error from deep inside, or a
silent coercion, and is now a clear ValueError / TypeError / NotFittedError or a correct result."""
import io

import numpy as np
import pytest
from sklearn.exceptions import NotFittedError
from sklearn.utils import Bunch

from orbitkernels.datasets import (
    coulomb_matrices, get_data_home, load_mnist, make_rotated_mnist, qm7_fold_indices, read_amat, read_idx,
    rotate_images,
)
from orbitkernels.features import MolecularOrbitFeatures, average_over_copies
from orbitkernels.groups import (
    BlockPermutation, CyclicShift, ImageRotation, PitchShift, Rotation3D, TimeWarp, LogNormal, Normal, Uniform, VonMises,
    encode_molecules, warp_images,
)
from orbitkernels.kernels import HaarKernel
from orbitkernels.models import GroupElement, InvariantLinearClassifier, centre_gram, worst_case_attack

X16 = np.random.default_rng(0).normal(size=(3, 16))


# --------------------------------------------------------------------------- distributions
@pytest.mark.parametrize("seed", [0, np.random.RandomState(0), np.random.default_rng(0)])
@pytest.mark.parametrize("loc", [0.0, 3.1])
def test_von_mises_with_a_huge_kappa_samples_near_loc(seed, loc):
    # RandomState's von Mises sampler looped forever from kappa ~ 1e17 (and gave exact 0s at 1e16)
    theta = VonMises(1e17, loc=loc).sample(5, seed)
    assert theta.shape == (5,) and np.all(np.abs(theta) <= np.pi)
    np.testing.assert_allclose(theta, loc, atol=1e-6)


def test_von_mises_with_a_moderate_kappa_keeps_its_draws():
    # below the switch the draws of a seed are those of NumPy's own sampler, bit for bit
    np.testing.assert_array_equal(VonMises(50.0, loc=0.3).sample(4, 7),
                                  np.random.RandomState(7).vonmises(0.3, 50.0, size=4))


def test_uniform_wider_than_a_float_is_refused():
    # numpy raised "OverflowError: Range exceeds valid bounds" at the first sample
    with pytest.raises(ValueError, match="high - low"):
        Uniform(-1e308, 1e308)


# --------------------------------------------------------------------------- groups
@pytest.mark.parametrize("group", [ImageRotation((4, 4)), BlockPermutation(4, 4), Rotation3D(4)])
def test_group_elements_must_be_real(group):
    E = group.sample(2, 0)
    with pytest.raises(TypeError, match="elements is complex"):
        group.act(X16, E + 1j)  # the imaginary part was dropped with a ComplexWarning


@pytest.mark.parametrize("group", [ImageRotation((4, 4)), BlockPermutation(4, 4), Rotation3D(4),
                                   PitchShift(16, Normal(10.0), n_fft=8), TimeWarp(16, LogNormal(0.1))])
@pytest.mark.parametrize("method", ["act", "act_inverse"])
def test_group_action_with_no_elements_is_refused(group, method):
    # was "cannot reshape array of size 0" / "need at least one array to stack" for some groups
    E = group.sample(2, 0)[:0]
    with pytest.raises(ValueError, match="elements is empty"):
        getattr(group, method)(X16, E)


@pytest.mark.parametrize("kwargs, err, match", [
    (dict(X=X16[:, :15]), ValueError, "15 features"),
    (dict(A=np.eye(3)), ValueError, r"A must be .*\(2, 2\)"),
    (dict(b=np.zeros(3)), ValueError, "b must be"),
    (dict(A=np.full((2, 2), np.nan)), ValueError, "A contains NaN or inf"),
    (dict(A=np.zeros((2, 2))), ValueError, "singular"),
    (dict(X=X16 + 1j), TypeError, "complex"),
    (dict(A=np.eye(2) + 1j), TypeError, "A must hold real numbers"),
    (dict(A=np.stack([np.eye(2)] * 2), b=np.zeros((3, 2))), ValueError, "2 matrices A but 3 shifts b"),
])
def test_warp_images_checks_its_arguments(kwargs, err, match):
    args = {"X": X16, "A": np.eye(2), "b": np.zeros(2), **kwargs}
    with pytest.raises(err, match=match):
        warp_images(args["X"], (4, 4), args["A"], args["b"])


def test_warp_images_identity_still_works():
    np.testing.assert_allclose(warp_images(X16, (4, 4), np.eye(2), np.zeros(2))[0], X16)


def test_group_element_and_average_over_copies_refuse_a_non_group():
    with pytest.raises(TypeError, match="Group"):
        GroupElement(3, 0.5)
    from orbitkernels.features import OrbitFourierFeatures

    g = ImageRotation((4, 4), n_angles=4)
    f = OrbitFourierFeatures(g, n_components=4, random_state=0).fit(X16)
    with pytest.raises(TypeError, match="Group"):
        average_over_copies(f, "rotation", g.sample(2, 0), X16)


# --------------------------------------------------------------------------- models
def test_worst_case_attack_on_an_unfitted_classifier_is_not_fitted_error():
    # was "TypeError: float() argument must be a string or a real number, not 'InvariantLinearClassifier'"
    with pytest.raises(NotFittedError):
        worst_case_attack(InvariantLinearClassifier(), X16, 2)


def test_worst_case_attack_refuses_what_is_neither_model_nor_vector():
    with pytest.raises(TypeError, match="clf_or_w"):
        worst_case_attack(None, X16, 2)
    with pytest.raises(TypeError, match="clf_or_w"):
        worst_case_attack(object(), X16, 2)


def test_centre_gram_refuses_non_finite_gram_matrices():
    K = np.eye(3)
    K[0, 1] = K[1, 0] = np.nan
    with pytest.raises(ValueError, match="K_train contains NaN"):
        centre_gram(K)
    with pytest.raises(ValueError, match="K_new contains inf"):
        centre_gram(np.eye(3), np.array([[np.inf, 0.0, 0.0]]))


def test_haar_kernel_refuses_elements_with_n_group_samples():
    # n_group_samples was silently ignored when elements were given
    g = ImageRotation((4, 4))
    with pytest.raises(ValueError, match="not both"):
        HaarKernel(g, elements=g.sample(3, 0), n_group_samples=2).fit(X16)


# --------------------------------------------------------------------------- molecules
def _molecules():
    Z = np.array([[6, 1, 1, 0], [8, 1, 1, 0]])
    return encode_molecules(Z, np.random.default_rng(0).normal(size=(2, 4, 3)))


def test_molecular_features_with_a_huge_sigma_is_a_clear_error():
    X = _molecules()
    with pytest.raises(ValueError, match="sigma"):  # was OverflowError (34, 'Numerical result out of range')
        MolecularOrbitFeatures(sigma=1e300, n_components=4, n_wavevectors=4, n_group_samples=4,
                               random_state=0).fit(X)


def test_molecular_features_name_huge_charges_as_given():
    X = _molecules()
    X[:, 0] = 1e30  # a whole number, far beyond int64: the message said -9223372036854775808
    with pytest.raises(ValueError, match=r"charges \[1e\+30\]"):
        MolecularOrbitFeatures(n_components=4, n_wavevectors=4, n_group_samples=4, random_state=0).fit(X)


# --------------------------------------------------------------------------- datasets
@pytest.mark.parametrize("Z, R, match", [
    (np.array([6 + 1j, 1]), np.array([[0, 0, 0], [1, 0, 0.0]]), "Z must hold"),
    (np.array([6, 1]), np.array([[0, 0, 0], [1, 0, 0.0]]) + 1j, "R must hold real numbers"),
    (np.array([6, 1]), np.array([["0", "0", "0"], ["1", "0", "0"]]), "R must hold real numbers"),
])
def test_coulomb_matrices_refuse_complex_and_text(Z, R, match):
    with pytest.raises((TypeError, ValueError), match=match):  # the imaginary parts were dropped, text parsed
        coulomb_matrices(Z, R)


def test_rotate_images_refuses_complex_and_non_finite_images():
    images = np.random.default_rng(0).random((2, 6, 6))
    with pytest.raises(TypeError, match="complex"):
        rotate_images(images + 1j, [0.0, 1.0])
    images[0, 2, 3] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        rotate_images(images, [0.0, 1.0])


def test_make_rotated_mnist_with_empty_splits():
    # was "cannot reshape array of size 0 into shape (0,newaxis)"
    mnist = Bunch(x_train=np.zeros((5, 4, 4), np.uint8), y_train=np.arange(5) % 10,
                  x_test=np.zeros((3, 4, 4), np.uint8), y_test=np.arange(3) % 10)
    out = make_rotated_mnist(mnist, n_train=0, n_valid=0, n_test=0)
    assert out.x_train.shape == out.x_valid.shape == out.x_test.shape == (0, 16)


def test_qm7_fold_indices_needs_a_bunch_with_folds():
    with pytest.raises(TypeError, match="folds"):  # was KeyError: 'folds'
        qm7_fold_indices(Bunch(), 0)


def test_read_amat_errors_do_not_call_the_data_idx():
    with pytest.raises(ValueError, match=r"^\.amat data: not a valid \.amat table"):
        read_amat(io.StringIO("a b c\n"))


def test_read_idx_states_the_size_of_a_huge_header():
    # the byte count wrapped around int64 and was printed as a negative number
    with pytest.raises(ValueError, match="18446744065119617025 data bytes"):
        read_idx(io.BytesIO(b"\x00\x00\x08\x02\xff\xff\xff\xff\xff\xff\xff\xff"))


def test_loaders_take_download_as_a_boolean(tmp_path):
    # download="no" is truthy: it went to the network
    with pytest.raises(TypeError, match="download must be True or False"):
        load_mnist(data_home=tmp_path, download="no")


def test_empty_data_home_is_refused():
    with pytest.raises(ValueError, match="data_home is empty"):  # "" was the current folder
        get_data_home("")


def test_invariant_svc_refuses_complex_transformations_and_oracles():
    from orbitkernels.models import InvariantSVC

    X = np.random.default_rng(0).normal(size=(6, 4))
    y = np.array([0, 1] * 3)
    with pytest.raises(TypeError, match="must return real numbers"):  # X + 1j was cast to X in silence
        InvariantSVC(transformations=[lambda A: A + 1j], max_iter=3).fit(X, y)
    with pytest.raises(TypeError, match="oracle returned values of dtype complex"):
        InvariantSVC(oracle=lambda model, x, yy: (x + 1j, yy), max_iter=3).fit(X, y)


@pytest.mark.parametrize("make", [lambda: ImageRotation(None), lambda: CyclicShift(None)])
def test_group_shapes_of_none_name_the_argument(make):
    with pytest.raises(TypeError, match="shape must be"):  # was "'NoneType' object is not iterable"
        make()


def test_ridge_path_refuses_flags_for_numbers_and_numbers_for_flags():
    from orbitkernels.models import RidgePath

    with pytest.raises(TypeError, match="fit_intercept must be True or False"):
        RidgePath([1.0], fit_intercept="no")  # any truthy value fitted an intercept
    with pytest.raises(ValueError, match="alphas"):
        RidgePath([True])  # was alpha = 1
    assert RidgePath([1.0], fit_intercept=np.bool_(False)).fit_intercept is False


@pytest.mark.parametrize("n, err", [(-1, ValueError), (2.5, TypeError)])
def test_dask_fit_sample_indices_checks_the_row_count(n, err):
    from orbitkernels.dask import fit_sample_indices

    with pytest.raises(err, match="n must be"):  # -1 rows gave an empty sample
        fit_sample_indices(n, 3, 0)


def test_haar_kernel_with_a_callable_returning_nan_is_an_error():
    # the Gram matrix came back all NaN (OrbitNystroem refused the same kernel)
    with pytest.raises(ValueError, match="gave NaN or inf"):
        HaarKernel(ImageRotation((4, 4), n_angles=4), lambda a, b: float("nan"))(X16)


@pytest.mark.parametrize("weights", [["1", "2", "3"], [True, False, True], [1 + 1j, 1, 1]])
def test_cyclic_shift_weights_must_be_real_numbers(weights):
    """q over the shifts: text was parsed as numbers and booleans kept as 0/1 in silence, as Discrete refuses them;
    complex weights were cast with a warning."""
    from orbitkernels.groups import CyclicShift

    with pytest.raises(TypeError, match="weights must be real numbers"):
        CyclicShift(3, weights=weights)
    np.testing.assert_allclose(CyclicShift(3, weights=np.array([1, 2, 3], dtype=object)).weights_array,
                               [1 / 6, 2 / 6, 3 / 6])


# --------------------------------------------------------------------------- gamma="scale" near float64's range
def test_scale_gamma_is_scikit_learns_rule_to_the_bit():
    from orbitkernels.utils.validation import scale_gamma

    rng = np.random.default_rng(3)
    for X in (rng.normal(size=(40, 7)) * 3 + 1, rng.uniform(size=(9, 130)).astype(np.float32),
              np.arange(12.0)[:, None]):
        assert scale_gamma(X) == 1.0 / (X.shape[1] * X.astype(np.float64).var())
    assert scale_gamma(np.zeros((3, 2))) == scale_gamma(np.full((3, 2), 5.0)) == 1.0


def test_scale_gamma_follows_rows_to_the_edges_of_float64_and_refuses_past_them():
    """At 1e155 the squares of the variance overflowed, γ came out 0 with a RuntimeWarning and every row had the
    same features (a Gram matrix of ones); at 1e200 a bare OverflowError. γ = "scale" is scale-free: features of
    s X at γ / s² are those of X."""
    from orbitkernels.features import OrbitFourierFeatures, OrbitNystroem
    from orbitkernels.models import InvariantSVC

    X = np.random.default_rng(0).normal(size=(6, 8))
    ref = OrbitFourierFeatures(CyclicShift(8), gamma="scale", n_components=16, random_state=0).fit(X)
    for s in (1e-150, 1e150):
        big = OrbitFourierFeatures(CyclicShift(8), gamma="scale", n_components=16, random_state=0).fit(X * s)
        assert big.gamma_ * s * s == pytest.approx(ref.gamma_, rel=1e-12)
        np.testing.assert_allclose(big.transform(X * s), ref.transform(X), atol=1e-9)
    for s in (1e155, 1e200, 1e-170):
        for est in (OrbitFourierFeatures(CyclicShift(8), gamma="scale", n_components=16, random_state=0),
                    OrbitNystroem(CyclicShift(8), gamma="scale", n_components=4, random_state=0)):
            with pytest.raises(ValueError, match=r'gamma="scale" .* outside float64\'s range; rescale X'):
                est.fit(X * s)
        with pytest.raises(ValueError, match=r'gamma="scale" .* outside float64\'s range; rescale X'):
            InvariantSVC(gamma="scale").fit(X * s, np.arange(6) % 2)


@pytest.mark.parametrize("s", [1e-20, 1e-10])
def test_orbit_nystroem_maps_tiny_float32_rows_at_gamma_scale(s):
    """float32 rows ~1e-20 have squared norms below float32's normal range and γ = "scale" ~1e39 past its largest
    number: the features came out inf and the error told the user to "choose smaller kernel parameters" of a γ
    nobody chose. Now they are mapped in float64 (precision_), as rows ~1e19 are; 1e-10 stays float32."""
    from orbitkernels.features import OrbitNystroem

    X = np.random.default_rng(0).normal(size=(6, 8))
    ref = OrbitNystroem(CyclicShift(8), gamma="scale", n_components=4, random_state=0).fit(X).transform(X)
    X32 = (X * s).astype(np.float32)
    model = OrbitNystroem(CyclicShift(8), gamma="scale", n_components=4, random_state=0).fit(X32)
    F = model.transform(X32)
    assert F.dtype == np.float32 and model.precision_ == ("float64" if s < 1e-15 else "float32")
    np.testing.assert_allclose(F, ref, atol=1e-6)
