"""Poolings written once against the back-end interface (the NumPy fallback and the torch path)."""
from __future__ import annotations

from ..utils.kernels import rbf_from_dots

__all__ = ["wsum", "trig_pool_passes", "rbf_pool_passes"]


def wsum(bk, V, w, layout):
    """Σ_k w_k V[..k..] for V laid out (n, s, r) ("nsr") or (r, n, s) ("rns", one GEMV)."""
    if layout == "nsr":
        return bk.matmul(V, w)
    r = V.shape[0]
    return bk.matmul(w.reshape(1, r), V.reshape(r, -1)).reshape(V.shape[1], V.shape[2])


def trig_pool_passes(bk, S, weights, offset, layout):
    """Raj et al. 2017, Eq. 7 as separate array passes: phase and cosine in place in ``S`` (a block
    the engine made for this pooling alone: no temporaries of its size, which cost ~12% of the polar
    path's time), then one matrix-vector product per output."""
    w = bk.asarray(weights, S.dtype)
    if offset is not None:
        shape = (1, -1, 1) if layout == "nsr" else (1, 1, -1)
        off = bk.asarray(offset, S.dtype).reshape(*shape)
        return wsum(bk, bk.cos_(bk.add_(S, off)), w, layout)
    sin = wsum(bk, bk.sin(S), w, layout)
    return wsum(bk, bk.cos_(S), w, layout), sin


def rbf_pool_passes(bk, S, x_sq, t_sq, gamma, weights):
    """Raj et al. 2017, Eq. 8's orbit mean of Gaussian kernel values from dot products S (rows, m, r) as array
    passes: :func:`~orbitkernels.utils.kernels.rbf_from_dots`, then one matrix-vector product."""
    V = rbf_from_dots(S, x_sq.reshape(-1, 1, 1), t_sq.reshape(1, -1, 1), gamma, bk.exp)
    return wsum(bk, V, bk.asarray(weights, S.dtype), "nsr")
