"""Cyclic shifts of 1-D signals and 2-D images (finite, exact)."""
from __future__ import annotations

import numpy as np

from ..utils.validation import check_int
from .base import Group
from .distributions import _numeric_array

__all__ = ["CyclicShift"]


class CyclicShift(Group):
    """All cyclic shifts of rows viewed as arrays of ``shape`` (1-D ``(n,)`` or 2-D ``(h, w)``).

    The group is Z_n (or Z_h × Z_w); element ``k`` maps ``x`` to ``roll(x, k)``, i.e.
    ``(g_k x)[i] = x[i - k]`` (2-D: element ``(k1, k2)`` rolls the rows viewed as
    ``(h, w)`` arrays by ``k1`` and ``k2``). Elements are whole numbers (others raise
    ``ValueError``); :meth:`elements` lists them in ``[0, n)``. The action permutes
    coordinates, so it is exact and unitary, and the dot products with all shifts of
    a template are one circular cross-correlation, which the FFT fast path uses.

    Parameters
    ----------
    shape : int or tuple of one or two ints
        Length ``n`` of the rows, or the ``(h, w)`` array each row is (rows of ``h * w`` values).
    weights : array of ``shape``, default=None
        A non-uniform q over the shifts: finite, non-negative, not all zero, normalised to
        sum 1; weight ``[k]`` is that of element ``k``. None: uniform (Haar).

    Examples
    --------
    >>> import numpy as np
    >>> from orbitkernels.groups import CyclicShift
    >>> G = CyclicShift(6)
    >>> G.order, G.inverse([1, 2]).ravel().tolist()
    (6, [5.0, 4.0])
    >>> G.act(np.arange(6.0)[None], [1, 2])[:, 0].tolist()  # (g_k x)[i] = x[i - k]
    [[5.0, 0.0, 1.0, 2.0, 3.0, 4.0], [4.0, 5.0, 0.0, 1.0, 2.0, 3.0]]

    A feature averaged over all the shifts is invariant to shifting the rows:

    >>> X = np.random.default_rng(0).standard_normal((20, 6))
    >>> t = np.random.default_rng(1).standard_normal(6)
    >>> def f(X):
    ...     return np.cos(G.act(X, G.elements()) @ t).mean(axis=0)
    >>> np.allclose(f(np.roll(X, 2, axis=1)), f(X))
    True

    2-D: rows of 12 values seen as 3x4 arrays, rolled along both axes:

    >>> image = np.arange(12.0).reshape(1, 12)
    >>> moved = CyclicShift((3, 4)).act_each(image, [[1, 2]])
    >>> np.array_equal(moved.reshape(3, 4), np.roll(image.reshape(3, 4), (1, 2), axis=(0, 1)))
    True
    """

    is_finite = True

    def __init__(self, shape, weights=None):
        if np.isscalar(shape):
            shape = (shape,)
        if not hasattr(shape, "__iter__"):  # None: "'NoneType' object is not iterable" named no argument
            raise TypeError(f"shape must be an int or a tuple of 1 or 2 ints; got {shape!r}")
        shape = tuple(check_int(s, "shape", min_value=1) for s in shape)
        if len(shape) not in (1, 2):
            raise ValueError(f"CyclicShift shape must be 1-D or 2-D; got {shape}")
        self.shape = shape
        self.n_params = len(shape)
        if weights is None:
            self._w = None
        else:
            # dtype=float parsed ["1", "2"] as numbers and kept True as 1 in silence
            w = _numeric_array(weights, "weights", owner="CyclicShift", shape=f"{len(shape)}-D")
            if w.shape != shape:
                raise ValueError(f"weights must have shape {shape}; got {w.shape}")
            if not np.isfinite(w).all() or (w < 0).any() or w.sum() <= 0:
                raise ValueError("weights must be finite, non-negative and not all zero")
            self._w = w / w.sum()

    def _repr_args(self):
        return f"shape={self.shape}" + ("" if self._w is None else ", weights=...")

    @property
    def n_features(self):
        return int(np.prod(self.shape))

    def _shape_text(self):
        return f"arrays of shape {self.shape}"

    @property
    def weights_array(self):
        """q as an array of ``shape`` (uniform when no weights were given)."""
        return np.full(self.shape, 1.0 / self.n_features) if self._w is None else self._w

    def elements(self):
        return np.indices(self.shape).reshape(len(self.shape), -1).T.astype(float)

    def weights(self):
        return None if self._w is None else self._w.ravel()

    def _check_elements(self, E, name="elements"):
        E = super()._check_elements(E, name)
        # a shift is a whole number of positions: rounding 0.5 to 0 would act by another element than asked
        bad = ~np.isclose(E, np.rint(E), rtol=0.0, atol=1e-9)
        if bad.any():
            raise ValueError(f"{name}: cyclic shifts must be whole numbers; got {float(E[bad][0])}")
        return E

    def identity(self):
        return np.zeros((1, len(self.shape)))

    def inverse(self, E):
        E = self._check_elements(E)
        return np.mod(-np.rint(E), np.array(self.shape)).astype(float)

    def _index(self, E):
        """Source flat index of each output coordinate, per element: (len(E), d)."""
        K = np.rint(E).astype(np.int64)
        grids = np.indices(self.shape).reshape(len(self.shape), -1)  # (ndim, d)
        src = [(grids[a][None, :] - K[:, a : a + 1]) % self.shape[a] for a in range(len(self.shape))]
        return np.ravel_multi_index(src, self.shape)

    def _act(self, X, E):
        # gathered element by element into (r, n, d) order: X[:, index] is (n, r, d) and its transposed view made
        # the reshape of the moved rows into (r n, d) (the engine's data side, HaarKernel) copy them whole
        index = self._index(E)
        out = np.empty((len(E), len(X), X.shape[1]), dtype=X.dtype)
        for k in range(len(E)):
            np.take(X, index[k], axis=1, out=out[k], mode="clip")  # indices in range: unbuffered
        return out

    def _act_each(self, X, E):
        return np.take_along_axis(X, self._index(E), axis=1)

    is_unitary = True
    permutes_coordinates = True

    @property
    def is_symmetric(self):
        if self._w is None:
            return True
        inv = self.weights_array
        for a in range(len(self.shape)):
            inv = np.roll(np.flip(inv, axis=a), 1, axis=a)  # w[-k] along each axis
        return bool(np.allclose(inv, self._w))

    def commutes_with(self, other):
        # shifts of the same shape commute; a 1-D shift of 12 values and a 2-D shift of them as (3, 4) do not
        return isinstance(other, CyclicShift) and other.shape == self.shape

    @property
    def cyclic_shape(self):
        return self.shape

    @property
    def n_shifts(self):
        return self.n_features

    def shift_index(self, E):
        K = np.rint(self._check_elements(E)).astype(np.int64)
        return np.ravel_multi_index(tuple(np.mod(K[:, a], self.shape[a]) for a in range(K.shape[1])), self.shape)
