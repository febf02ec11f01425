"""Audit 65 of the adjoint templates side (Group.act_adjoint, ProjectionPlan's "auto"), the blocked warp matrix and
holdout_mask's checks: the defects found, each as a failing test."""
import numpy as np
import pytest

from orbitkernels.features import OrbitFourierFeatures
from orbitkernels.groups import ImageScaling, LogUniform
from orbitkernels.groups import image as image_module
from orbitkernels.models.distributed_ridge import holdout_mask


def test_moving_the_frequencies_by_the_transposes_builds_each_warp_once(monkeypatch):
    """``_transformed_templates`` moves the templates a block of ~8 MB at a time and ``act_adjoint`` asks
    ``_warp_matrix`` for the r elements' matrix for every block; when that (float64) matrix is larger than the
    warp cache it is rebuilt for every block, and the blocks hold 2**23 / (r d 8) templates, one when r d >= 2**20.
    Measured at full size (128 x 128 float32 images, r = 128 scalings, a 100 MB float64 matrix against the 64 MB
    cache, 100 rows): s = 40: first transform 8.8 s with 40 builds against 2.6 s on the data side; s = 200: 43 s
    with 200 builds against 3.7 s. Scaled down here: 64 x 64 images, r = 64 (a 12 MB matrix), a 1 MB cache, s = 20
    templates in blocks of 4: five builds of the 64 elements where one suffices."""
    g = ImageScaling((64, 64), LogUniform(0.8, 1.25))
    X = np.random.default_rng(0).random((5, 64 * 64))
    f = OrbitFourierFeatures(g, gamma=1e-3, n_components=20, n_group_samples=64, random_state=0).fit(X)
    assert f.action_ == "templates" and f.plan_._template_adjoint
    ref = OrbitFourierFeatures(g, gamma=1e-3, n_components=20, n_group_samples=64, action="data",
                               random_state=0).fit(X).transform(X)
    built = []
    build = image_module._build_warp_matrix

    def counting(hw, A, b, normalize, dtype):
        built.append(len(A))
        return build(hw, A, b, normalize, dtype)

    monkeypatch.setattr(image_module, "_build_warp_matrix", counting)
    monkeypatch.setattr(image_module, "_WARP_CACHE_BYTES", 2**20)
    image_module._WARP_CACHE.clear()
    try:
        F = f.transform(X)
    finally:
        image_module._WARP_CACHE.clear()
    np.testing.assert_allclose(F, ref, rtol=0, atol=1e-12)
    # every element's interpolation is built once, as on the data side of one chunk
    assert sum(built) <= 64, built


def test_holdout_mask_with_numpy_integer_arguments_has_n_rows_entries():
    """``offset + n_rows`` of a numpy uint64 and a numpy signed integer is a float64 in NumPy: above 2**53 it rounds,
    and np.arange gives a mask of the wrong length (here empty) in silence."""
    mask = holdout_mask(np.uint64(2**53 + 1), np.int64(1), 0.5, 0)
    assert mask.shape == (1,)
    mask = holdout_mask(np.uint64(2**60 + 1), np.int64(3), 0.5, 0)
    assert mask.shape == (3,)


def test_holdout_mask_rows_past_the_hash_range_are_a_value_error():
    """Each argument is checked below 2**64, but not their sum: rows past 2**64 - 1 raised numpy's bare
    OverflowError ("Python int too large to convert to C long"), the error the checks were added to replace."""
    with pytest.raises(ValueError, match="offset|n_rows"):
        holdout_mask(2**64 - 1, 2, 0.5, 0)
