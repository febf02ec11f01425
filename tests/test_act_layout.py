"""``act`` makes the moved rows in (r, n, d) memory order for every library group: every consumer of the data side
(the feature maps' ``DataPath``, ``HaarKernel``'s blocks) reshapes them into (r n, d), which copied all of them
beside the budget where they were not (``CyclicShift``: a transposed gather; ``TimeWarp``: interpolations gathered
in Fortran order and stacked so). ``benchmarks/probes/perf/act_layout.py`` measures the former way against this one.
"""
import tracemalloc

import numpy as np
import pytest

from orbitkernels.features import OrbitNystroem
from orbitkernels.groups import (BlockPermutation, CoulombPermutation, CyclicShift, ImageRotation, ImageScaling,
                                 ImageTranslation, LogUniform, Normal, PitchShift, PolarRotation, Rotation3D,
                                 TimeWarp, TrivialGroup, Uniform)
from orbitkernels.groups.audio import _interp_rows

GROUPS = {
    "cyclic": lambda: CyclicShift(16),
    "cyclic-2d": lambda: CyclicShift((4, 5)),
    "time-warp": lambda: TimeWarp(64, LogUniform(0.8, 1.25)),
    "pitch": lambda: PitchShift(256, Uniform(-100.0, 100.0), n_fft=64),
    "rotation": lambda: ImageRotation((8, 8)),
    "polar": lambda: PolarRotation((8, 8)),
    "scaling": lambda: ImageScaling((8, 8), LogUniform(0.8, 1.2)),
    "blocks": lambda: BlockPermutation(4, 3),
    "coulomb": lambda: CoulombPermutation(5),
    "rotation3d": lambda: Rotation3D(),
    "trivial": lambda: TrivialGroup(),
    "product": lambda: ImageRotation((8, 8)) * ImageTranslation((8, 8), Normal(1.0)),
    "warps": lambda: TimeWarp(64, LogUniform(0.8, 1.25)) * TimeWarp(64, LogUniform(0.9, 1.1)),
    "shifts-x-shifts": lambda: CyclicShift(12) * CyclicShift(12),
}


@pytest.mark.parametrize("name", sorted(GROUPS))
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_the_moved_rows_are_c_contiguous(name, dtype):
    g = GROUPS[name]()
    d = g.n_features or 20
    rng = np.random.default_rng(0)
    X = rng.normal(size=(6, d)).astype(dtype)
    E = g.sample(3, rng)
    for Y in (g.act(X, E), g.act_inverse(X, E)):
        assert Y.shape == (3, 6, d) and Y.dtype == dtype and Y.flags.c_contiguous, name


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_cyclic_shifts_and_time_warps_are_their_definitions(dtype):
    rng = np.random.default_rng(1)
    X = rng.normal(size=(5, 12)).astype(dtype)
    g = CyclicShift(12)
    E = g.elements()
    np.testing.assert_array_equal(g.act(X, E), np.stack([np.roll(X, int(k), axis=1) for k in E[:, 0]]))
    w = TimeWarp(12, LogUniform(0.8, 1.25))
    E = w.sample(4, rng)
    t = np.arange(12, dtype=float)
    expected = np.stack([dtype(np.sqrt(a)) * _interp_rows(X, a * t) for a in E[:, 0]])  # Eq. (g_a x)(t)
    np.testing.assert_array_equal(w.act(X, E), expected)


def test_time_warps_on_the_data_side_stay_within_the_budget():
    """The reshape of Fortran-ordered moved rows copied them: 9.6 MB beyond the output at 8 MB (OrbitNystroem, 64
    time warps of 784 samples, 4000 rows), now 6.6 MB."""
    X = np.random.default_rng(2).random((600, 784))
    est = OrbitNystroem(TimeWarp(784, LogUniform(0.8, 1.25)), n_components=100, max_memory_mb=8,
                        random_state=0).fit(X[:200])
    est.transform(X[:20])  # the templates' preparation, outside the measurement
    assert est.plan_.path == "data" and est.plan_.n_elements == 64
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        F = est.transform(X)
        peak = (tracemalloc.get_traced_memory()[1] - F.nbytes) / 2**20
    finally:
        tracemalloc.stop()
    assert peak <= 8.0, peak
