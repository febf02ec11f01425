"""A product of finite groups whose products are not closed under composition is not a group: averages over it are
invariant to some factors only (found by an audit, stop 64). ``ProductGroup.invariant_factors`` says which, and a
``NotAGroupWarning`` says so where exact invariance to every factor was to be expected."""
import warnings

import numpy as np
import pytest

from orbitkernels.features import GroupCDFFeatures, OrbitFourierFeatures
from orbitkernels.groups import BlockPermutation, CyclicShift, ImageRotation, NotAGroupWarning, ProductGroup
from orbitkernels.kernels import HaarKernel

X = np.random.default_rng(0).normal(size=(5, 8))
SHIFTED = np.roll(X, 1, axis=1)
SWAPPED = X.reshape(5, 4, 2)[:, [1, 0, 2, 3]].reshape(5, 8)


def _quiet(make):
    with warnings.catch_warnings():
        warnings.simplefilter("error", NotAGroupWarning)
        return make()


def test_shifts_and_block_swaps_are_not_a_group_and_the_warning_says_which_invariance_is_lost():
    with pytest.warns(NotAGroupWarning, match=r"averages over g x \(HaarKernel, OrbitFourierFeatures, OrbitNystroem\) "
                                              r"are not invariant to CyclicShift\(shape=\(8,\)\) \(only to "
                                              r"BlockPermutation\(n_blocks=4, block_size=2\)\), and averages over "
                                              r"<x, g t> \(GroupCDFFeatures\) are not invariant to BlockPermutation"
                                              ) as record:
        G = CyclicShift(8) * BlockPermutation(4, 2)
    assert record[0].filename == __file__  # the user's line, not the library's __mul__
    assert [type(f).__name__ for f in G.invariant_factors()] == ["BlockPermutation"]
    assert [type(f).__name__ for f in G.invariant_factors("templates")] == ["CyclicShift"]
    K = HaarKernel(G, gamma=0.3)
    assert np.abs(K(SWAPPED, X) - K(X, X)).max() < 1e-12  # the factor acting first
    assert np.abs(K(SHIFTED, X) - K(X, X)).max() > 1e-3  # what the warning says
    rf = OrbitFourierFeatures(G, n_components=200, random_state=0).fit(X)
    assert np.abs(rf.transform(SWAPPED) - rf.transform(X)).max() < 1e-12
    assert np.abs(rf.transform(SHIFTED) - rf.transform(X)).max() > 1e-3
    cdf = GroupCDFFeatures(G, n_templates=20, n_bins=10, random_state=0).fit(X)  # over <x, g t>: the other way
    assert np.abs(cdf.transform(SHIFTED) - cdf.transform(X)).max() < 1e-12
    assert np.abs(cdf.transform(SWAPPED) - cdf.transform(X)).max() > 1e-3
    with pytest.raises(ValueError, match="convention must be 'data' or 'templates'"):
        G.invariant_factors("both")


def test_the_product_class_warns_too_and_in_either_order():
    with pytest.warns(NotAGroupWarning, match="not invariant to BlockPermutation"):
        G = ProductGroup(BlockPermutation(4, 2), CyclicShift(8))
    assert [type(f).__name__ for f in G.invariant_factors()] == ["CyclicShift"]


def test_quarter_turns_and_cyclic_shifts_of_an_image_are_a_group_though_they_do_not_commute():
    """A quarter turn of a cyclic shift is a cyclic shift of the turn: the products are closed, no warning, and
    the Haar kernel is exactly invariant to both factors."""
    G = _quiet(lambda: ImageRotation((4, 4), n_angles=4) * CyclicShift((4, 4)))
    assert len(G.invariant_factors()) == 2
    Z = np.random.default_rng(1).normal(size=(3, 16))
    turned = np.rot90(Z.reshape(3, 4, 4), axes=(1, 2)).reshape(3, 16)
    rolled = np.roll(Z.reshape(3, 4, 4), (1, 2), axis=(1, 2)).reshape(3, 16)
    K = HaarKernel(G, gamma=0.1)
    for moved in (turned, rolled):
        assert np.abs(K(moved, Z) - K(Z, Z)).max() < 1e-12


def test_commuting_weighted_and_too_large_products_do_not_warn():
    _quiet(lambda: CyclicShift(8) * CyclicShift(8))
    weighted = _quiet(lambda: CyclicShift(8, weights=np.arange(1.0, 9.0)) * BlockPermutation(4, 2))
    assert [type(f).__name__ for f in weighted.invariant_factors()] == ["BlockPermutation"]  # said when asked
    big = _quiet(lambda: BlockPermutation(4, 2) * BlockPermutation(8))  # 967,680 elements: not enumerated
    assert big.invariant_factors() is None


def test_cyclic_shifts_of_another_shape_do_not_commute():
    """CyclicShift.commutes_with ignored the shape: a 1-D shift of 12 values and a 2-D shift of them as (3, 4) were
    said to commute, so their product claimed a symmetric law, an inverse() that did not undo its elements, and
    invariance to both (features over all 48 products changed by 0.05 under the 2-D shift); an audit, stop 64."""
    one, two = CyclicShift(12), CyclicShift((3, 4))
    assert not one.commutes_with(two) and not two.commutes_with(one) and one.commutes_with(CyclicShift(12))
    with pytest.warns(NotAGroupWarning, match=r"g x .* are not invariant to CyclicShift\(shape=\(12,\)\)"):
        G = one * two
    assert [f.shape for f in G.invariant_factors()] == [(3, 4)] and not G.is_symmetric
    assert [f.shape for f in G.invariant_factors("templates")] == [(12,)]
    with pytest.raises(ValueError, match="non-commuting"):
        G.inverse(np.array([[1.0, 0.0, 1.0]]))
    x = np.arange(12.0)[None]
    e = np.array([[1.0, 0.0, 1.0]])
    np.testing.assert_array_equal(G.act_inverse(G.act(x, e)[0], e)[0], x)
