"""HaarKernel: the exact orbit kernel of Mroueh Eq. 1 / Raj Eq. 3-4."""
import numpy as np
import pytest
from sklearn.metrics.pairwise import rbf_kernel
from sklearn.svm import SVC

from orbitkernels.groups import BlockPermutation, CyclicShift, ImageRotation, VonMises
from orbitkernels.kernels import HaarKernel


def test_single_sum_equals_double_sum_for_haar_measure(rng):
    g = BlockPermutation(4, 3)
    X, Y = rng.normal(size=(5, 12)), rng.normal(size=(4, 12))
    a = HaarKernel(g, "rbf", gamma=0.2).fit()
    b = HaarKernel(g, "rbf", gamma=0.2, single_sum=False).fit()
    assert a.single_sum_ and not b.single_sum_
    np.testing.assert_allclose(a(X, Y), b(X, Y), atol=1e-12)


def test_matches_definition_and_is_invariant(rng):
    g = CyclicShift(6)
    X = rng.normal(size=(4, 6))
    K = HaarKernel(g, "rbf", gamma=0.3, single_sum=False)(X)
    E = g.elements()
    GX = g.act(X, E)
    ref = np.mean([[rbf_kernel(GX[k], GX[l], gamma=0.3) for l in range(6)] for k in range(6)], axis=(0, 1))
    np.testing.assert_allclose(K, ref, atol=1e-12)
    Xg = g.act_each(X, g.sample(4, 1))
    np.testing.assert_allclose(HaarKernel(g, "rbf", gamma=0.3)(Xg, X), K, atol=1e-12)
    assert np.all(np.linalg.eigvalsh(K) > -1e-10)


def test_monte_carlo_and_given_elements(rng):
    g = ImageRotation((6, 6), angle=VonMises(1.0))
    X = rng.normal(size=(3, 36))
    E = g.sample(5, 0, sampling="qmc")  # HaarKernel's default draws (stratified)
    K = HaarKernel(g, "rbf", gamma=0.01, elements=E)(X)
    GX = g.act(X, E)
    ref = np.mean([[rbf_kernel(GX[k], GX[l], gamma=0.01) for l in range(5)] for k in range(5)], axis=(0, 1))
    np.testing.assert_allclose(K, ref, atol=1e-12)
    np.testing.assert_allclose(HaarKernel(g, gamma=0.01, n_group_samples=5, random_state=0)(X), K)


def test_usable_as_svc_kernel(rng):
    g = BlockPermutation(3, 2)
    X = rng.normal(size=(30, 6))
    y = (X.reshape(30, 3, 2)[:, :, 0].max(1) > 0.5).astype(int)
    clf = SVC(kernel=HaarKernel(g, "rbf", gamma=0.5)).fit(X, y)
    Xp = g.act(X, g.elements()[3:4])[0]
    np.testing.assert_array_equal(clf.predict(Xp), clf.predict(X))


def test_bad_arguments():
    # parameters are checked at fit / first call (scikit-learn's convention: __init__ only stores)
    with pytest.raises(ValueError, match="base_kernel"):
        HaarKernel(CyclicShift(3), "gauss")(np.ones((2, 3)))
    with pytest.raises(ValueError, match="single_sum=True"):
        HaarKernel(ImageRotation((4, 4)), single_sum=True).fit()
    with pytest.raises(ValueError, match="features"):
        HaarKernel(CyclicShift(3))(np.ones((2, 3)), np.ones((2, 4)))
