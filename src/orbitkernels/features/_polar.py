"""Polar resampling: rotations by 2πk/A become cyclic shifts of the angle axis.

Each image x is resampled (bilinear interpolation, zeros outside the frame) onto
the grid of :meth:`PolarRotation.polar_grid`, and each sample is scaled by
sqrt(ρ Δρ Δθ) so that the polar inner product is a quadrature of the image
one: <P x, P t> = Σ_{ρ,θ} x(ρ,θ) t(ρ,θ) ρ Δρ Δθ ≈ ∫ x t du ≈ <x, t>.
Then <g_k x, t> ≈ <roll_k(P x), P t> for the k-th grid rotation, exactly the
form the FFT correlation of :mod:`._fft` computes for all k at once.

The approximation (and only it): (i) interpolation of pixel images at the polar
samples, (ii) the quadrature of the inner product, (iii) the corners outside the
inscribed disc are dropped. It is exact in the sense that for every input the
A similarities are those of exact cyclic shifts of its polar samples, so the
features are invariant to rotations that act on the polar samples as a shift
(multiples of 2π/A of the underlying continuous image; on the pixel grid,
multiples of 90° when 4 | A).
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ..groups.image import bilinear_weights

__all__ = ["polar_matrix"]


def polar_matrix(group):
    """Sparse (R·A, H·W) matrix P with ``(P x)[i·A + a] = sqrt(area_i) · x(p(ρ_i, θ_a))``."""
    pts, area = group.polar_grid()
    R, A = pts.shape[:2]
    idx, w = bilinear_weights(pts.reshape(-1, 2), group.image_shape[:2])  # (R·A, 4)
    w = w * np.sqrt(np.repeat(area, A))[:, None]
    rows = np.repeat(np.arange(R * A), 4)
    P = sp.csr_matrix((w.ravel(), (rows, idx.ravel())), shape=(R * A, int(np.prod(group.image_shape[:2]))))
    P.eliminate_zeros()
    return P
