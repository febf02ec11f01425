"""Low-variance random frequencies: orthogonal random features (Yu et al. 2016)."""
from __future__ import annotations

import numpy as np

__all__ = ["draw_frequencies", "orthogonal_gaussian", "resolve_frequencies"]


def resolve_frequencies(frequencies, kernel):
    """The draw an estimator's ``frequencies`` option means for its base ``kernel``: "orthogonal" or "iid".

    "auto" is "orthogonal" for the Gaussian kernel and "iid" for the Laplacian, whose Cauchy spectral law is not
    rotation invariant (orthogonal blocks would change it), so asking for "orthogonal" there is an error.
    """
    if frequencies == "auto":
        return "orthogonal" if kernel == "rbf" else "iid"
    if frequencies == "orthogonal" and kernel != "rbf":
        raise ValueError(f"frequencies='orthogonal' needs kernel='rbf' (a rotation-invariant spectral law); "
                         f"kernel={kernel!r} draws i.i.d. Cauchy frequencies: use frequencies='iid' or 'auto'")
    return frequencies


def draw_frequencies(frequencies, kernel, d, s, rng):
    """(s, d) random frequencies of unit scale for a base kernel's spectral law (Bochner; Rahimi & Recht 2007).

    ``frequencies`` is a resolved draw (:func:`resolve_frequencies`): "orthogonal" (:func:`orthogonal_gaussian`,
    rows N(0, I_d), orthogonal within blocks of d) or "iid": N(0, I_d) rows for ``kernel="rbf"``, standard Cauchy
    coordinates for ``"laplacian"``. The caller scales them to its kernel's width.
    """
    if frequencies == "orthogonal":
        return orthogonal_gaussian(d, s, rng).T
    if kernel == "rbf":
        return rng.normal(size=(s, d))
    return rng.standard_cauchy(size=(s, d))


def orthogonal_gaussian(d, m, rng):
    """(d, m) frequencies z of orthogonal random features (Yu et al. 2016, "Orthogonal Random Features", Eq. 3).

    Each block of d columns is a Haar-random orthonormal basis times independent χ_d lengths, so every column is
    N(0, I_d) as in random Fourier features (Rahimi & Recht 2007) while the columns of a block are exactly
    orthogonal: the Monte Carlo estimate of a Gaussian kernel keeps its mean and has a smaller variance than with
    i.i.d. columns. ``rng`` is a NumPy ``Generator`` or ``RandomState``; a last block of b < d columns is a
    uniformly random b-frame (QR of a d × b Gaussian matrix), so the cost is O(m d min(m, d)).
    """
    blocks = []
    for a in range(0, m, d):
        b = min(d, m - a)
        Q, R = np.linalg.qr(rng.standard_normal((d, b)))
        # signs of R's diagonal: without them QR's convention biases Q away from the Haar law
        Q *= np.where(np.diag(R) < 0, -1.0, 1.0)[None, :]
        blocks.append(Q * np.sqrt(rng.chisquare(d, b))[None, :])
    return np.hstack(blocks) if blocks else np.zeros((d, 0))
