"""What writing the models' examples found: holdout_mask (public through orbitkernels.distributed) took impossible
arguments in silence (-5 rows gave an empty mask, an offset of 0.5 a split, a fraction of 1.5 or NaN every row or
none) and named nothing for a negative offset or seed (numpy's OverflowError)."""
import numpy as np
import pytest

from orbitkernels.distributed import holdout_mask


@pytest.mark.parametrize("args, name", [
    ((-1, 5, 0.2, 0), "offset"),
    ((0.5, 5, 0.2, 0), "offset"),
    ((True, 5, 0.2, 0), "offset"),
    ((0, -5, 0.2, 0), "n_rows"),
    ((0, 5.0, 0.2, 0), "n_rows"),
    ((0, 5, 1.5, 0), "fraction"),
    ((0, 5, -0.1, 0), "fraction"),
    ((0, 5, float("nan"), 0), "fraction"),
    ((0, 5, "0.2", 0), "fraction"),
    ((0, 5, 0.2, -1), "seed"),
    ((0, 5, 0.2, 2**64), "seed"),
])
def test_impossible_arguments_are_refused_by_name(args, name):
    with pytest.raises(ValueError, match=rf"holdout_mask: {name} must be"):
        holdout_mask(*args)


def test_numpy_integers_and_the_ends_of_the_range_are_taken():
    whole = holdout_mask(np.int64(0), np.int32(100), np.float32(0.3), np.uint64(2**64 - 1))
    assert whole.shape == (100,) and whole.dtype == bool
    assert not holdout_mask(0, 50, 0.0, 1).any() and holdout_mask(0, 50, 1.0, 1).all()
    assert holdout_mask(7, 0, 0.5, 1).shape == (0,)
