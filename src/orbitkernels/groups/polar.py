"""Rotations on a polar grid: the finite group C_A whose action is a cyclic shift of polar samples.

An image sampled on the polar grid p(ρ_i, θ_a) = c + ρ_i (cos θ_a, sin θ_a)
(row, col coordinates, θ_a = 2πa/A) is turned by ``2πk/A`` exactly by rolling
the angle axis by k: (g_k x)(p(ρ, θ_a)) = x(g_k^{-1} p(ρ, θ_a)) = x(p(ρ, θ_{a-k})).
So <g_k x, t> for all A rotations is one circular cross-correlation along the
angle axis, summed over radii: one FFT pass (:mod:`orbitkernels.features._polar`).

On the pixel grid the group acts as :class:`ImageRotation` restricted to the A
angles (bilinear warp, Raj et al. 2017 Lemma 2.1), which is what the direct
(GEMM or data-side) paths of the engine use; the polar path instead computes the
similarities on the polar resampling (see ``docs/performance.md`` for the
approximation this makes).
"""
from __future__ import annotations

import numpy as np

from ..utils.validation import check_int, check_real
from .distributions import Uniform, VonMises
from .image import ImageRotation

__all__ = ["PolarRotation"]


class PolarRotation(ImageRotation):
    """The A rotations by ``2πk/A`` of images, with q from a law on the angle.

    Elements are the angles ``2πk/A`` in [0, 2π), as for
    ``ImageRotation(image_shape, n_angles=A)``, whose bilinear warps give the action on the
    pixel grid.

    Parameters
    ----------
    image_shape : (H, W)
        Single-channel images only.
    n_angles : int, default=64
        A, the angles of the polar grid (= the elements of the group).
    n_radii : int, default=None
        R, the rings of the polar grid. None: ``ceil(min(H, W) / 2)``, one ring per pixel.
    angle : Uniform or VonMises, default=None
        q on the A grid angles, ``q_k ∝ density(2πk/A)``. None: uniform
        (the Haar measure of C_A, which approximates that of SO(2)).
        ``VonMises(kappa, loc)`` gives Raj et al.'s (§4.2) non-uniform q. Other laws
        raise ``TypeError``.
    max_radius : float, default=None
        Outer radius of the grid in pixels, > 0. None: ``min(H, W) / 2``, the
        inscribed disc: the corners are not seen by the polar path.

    Attributes
    ----------
    angle : Uniform or VonMises
        The law on the angle: the one given, else ``Uniform(-π, π)`` (as for
        :class:`ImageRotation`), whose restriction to the grid is q.
    angle_law : Uniform, VonMises or None
        The ``angle`` argument as given (None for the default uniform q).
    n_angles, n_radii, max_radius : int, int, float
        The polar grid (``n_radii`` and ``max_radius`` with their defaults filled in).

    Examples
    --------
    >>> import numpy as np
    >>> from orbitkernels.groups import ImageRotation, PolarRotation, VonMises
    >>> group = PolarRotation((8, 8), n_angles=8)
    >>> group
    PolarRotation(image_shape=(8, 8), n_angles=8, n_radii=4)
    >>> group.order
    8
    >>> points, area = group.polar_grid()  # (n_radii, n_angles, 2) sample points
    >>> points.shape, area.shape
    ((4, 8, 2), (4,))

    On the pixel grid, element ``2πk/A`` warps the image; k = 2 of 8 is a quarter turn:

    >>> X = np.arange(64.0).reshape(1, 64)
    >>> Y = group.act(X, group.elements())
    >>> np.array_equal(Y[2, 0].reshape(8, 8), np.rot90(X.reshape(8, 8)))
    True

    It is the grid subgroup of the full circle of rotations, and takes Raj et al.'s von Mises q:

    >>> ImageRotation((8, 8)).grid_subgroup(8)
    PolarRotation(image_shape=(8, 8), n_angles=8, n_radii=4)
    >>> q = PolarRotation((8, 8), n_angles=8, angle=VonMises(2.0)).weights()
    >>> q.round(3).tolist()
    [0.405, 0.226, 0.055, 0.013, 0.007, 0.013, 0.055, 0.226]
    """

    def __init__(self, image_shape, n_angles=64, n_radii=None, angle=None, max_radius=None):
        # None would make ImageRotation's continuous group, not a polar grid
        super().__init__(image_shape, n_angles=check_int(n_angles, "n_angles", min_value=1))
        if len(self.image_shape) != 2:
            raise ValueError(f"PolarRotation needs single-channel images (H, W); got {self.image_shape}")
        H, W = self.image_shape
        self.n_radii = check_int(n_radii if n_radii is not None else int(np.ceil(min(H, W) / 2)),
                                 "n_radii", min_value=1)
        self.max_radius = check_real(max_radius if max_radius is not None else min(H, W) / 2.0,
                                     "max_radius", low=0.0, low_open=True)
        if angle is not None and not isinstance(angle, (Uniform, VonMises)):
            raise TypeError(f"angle must be Uniform or VonMises (a density on the grid); got {angle!r}")
        self.angle_law = angle
        # ImageRotation left Uniform(-π, π), which would misreport the law; safe to replace: a finite group's q
        # is weights() alone, so sampling, is_haar and _unit_laws do not depend on .angle
        if angle is not None:
            self.angle = angle
        self._grid_weights()  # a law with no mass on the grid is refused here

    @property
    def _w(self):
        # from the law as it is now: its set_params (in place, as scikit-learn sets nested parameters) moves q
        return self._grid_weights()

    def _repr_args(self):
        law = "" if self.angle_law is None else f", angle={self.angle_law!r}"
        # shown when not the default, so that two groups on different grids do not print alike
        radius = "" if self.max_radius == min(self.image_shape) / 2.0 else f", max_radius={self.max_radius}"
        return f"image_shape={self.image_shape}, n_angles={self.n_angles}, n_radii={self.n_radii}{radius}{law}"

    def _grid_weights(self):
        theta = 2 * np.pi * np.arange(self.n_angles) / self.n_angles
        law = self.angle_law
        if law is None:
            return None
        if isinstance(law, VonMises):
            w = np.exp(law.kappa * (np.cos(theta - law.loc) - 1.0))
        else:
            # the wrapped density: every angle `turns` times, the extra arc from law.low once more
            turns, extra = law._wrap()
            rel = np.mod(theta - law.low, 2 * np.pi)
            w = turns + ((extra > 0) & (rel <= extra + 1e-12)).astype(float)
        if w.sum() <= 0:
            raise ValueError(f"{law!r} puts no mass on the {self.n_angles} grid angles")
        return w / w.sum()

    def weights(self):
        """q over the A angles (a copy), or None for the uniform law."""
        return None if self._w is None else self._w.copy()

    @property
    def weights_array(self):
        """q over the A angles as a full array (uniform when no law was given)."""
        return np.full(self.n_angles, 1.0 / self.n_angles) if self._w is None else self._w

    def distribution_symmetric(self):
        w = self.weights_array
        return bool(np.allclose(w, np.roll(w[::-1], 1)))  # q(k) = q(-k)

    is_polar = True

    @property
    def n_shifts(self):
        return self.n_angles

    def shift_index(self, E):
        """The grid rotation k of each angle 2πk/A."""
        A = self.n_angles
        return np.mod(np.rint(self._check_elements(E)[:, 0] * A / (2 * np.pi)).astype(np.int64), A)

    def polar_grid(self):
        """Sample points (R, A, 2) in (row, col) pixel coordinates and their area weights (R,)."""
        H, W = self.image_shape
        c = np.array([(H - 1) / 2.0, (W - 1) / 2.0])
        dr = self.max_radius / self.n_radii
        rho = (np.arange(self.n_radii) + 0.5) * dr
        theta = 2 * np.pi * np.arange(self.n_angles) / self.n_angles
        pts = c + rho[:, None, None] * np.stack([np.cos(theta), np.sin(theta)], -1)[None]
        area = rho * dr * (2 * np.pi / self.n_angles)  # ρ dρ dθ: <Px, Pt> ≈ ∫ x t du
        return pts, area
