"""Permutation groups: blocks of a sequence (Xperm) and atoms of a molecule (QM7).

Sampling: both groups draw i.i.d. for ``sampling="iid"`` and ``sampling="qmc"``
alike. S_n has no inverse-CDF parametrisation in which a low-discrepancy point
set is known to lower the variance of orbit-kernel estimates, and Montavon's
noisy sorting is data-dependent; no better scheme was measured, so none is
claimed. With ``n_group_samples=None`` (feature maps) a small S_n is enumerated
and used whole, which is exact.
"""
from __future__ import annotations

import itertools
import math

import numpy as np

from ..utils.validation import MAX_COUNT, check_int, check_random_state, check_real
from .base import SAMPLINGS, Group

__all__ = ["BlockPermutation", "CoulombPermutation"]

_MAX_ENUMERATE = 10_000_000


def _all_permutations(n):
    if math.factorial(n) > _MAX_ENUMERATE:
        raise ValueError(
            f"S_{n} has {math.factorial(n)} elements, too many to enumerate; "
            "sample them instead (e.g. set n_group_samples)"
        )
    return np.array(list(itertools.permutations(range(n))), dtype=float)


def _check_sampling(sampling):
    if sampling not in SAMPLINGS:
        raise ValueError(f"sampling must be one of {SAMPLINGS}; got {sampling!r}")


def _check_perms(E, n):
    P = np.rint(E).astype(np.int64)
    if not np.allclose(P, E) or not (np.sort(P, axis=1) == np.arange(n)).all():
        raise ValueError(f"elements must be permutations of 0..{n - 1}")
    return P


class BlockPermutation(Group):
    """The symmetric group S_n permuting ``n_blocks`` consecutive blocks of ``block_size`` features.

    Mroueh et al. 2015, §6 (Xperm): sequences of length 5 over an 8-letter alphabet,
    one-hot encoded as 5 blocks of 8; ``BlockPermutation(5, 8)`` has 120 elements.
    Element ``p`` (a permutation array) sends block ``p[i]`` of the input to block ``i``
    of the output. The action permutes coordinates, so it is exact and unitary; q is uniform
    (the normalised Haar measure of S_n), hence symmetric.

    Parameters
    ----------
    n_blocks : int
        n, the number of blocks permuted (>= 1).
    block_size : int, default=1
        Features per block (>= 1); rows have ``n_blocks * block_size`` features.

    Examples
    --------
    >>> import numpy as np
    >>> from orbitkernels.groups import BlockPermutation
    >>> G = BlockPermutation(3, block_size=2)  # S_3 on 3 blocks of 2 features
    >>> G.order, G.n_features, BlockPermutation(5, 8).order
    (6, 6, 120)
    >>> x = np.array([[10.0, 11.0, 20.0, 21.0, 30.0, 31.0]])
    >>> G.act_each(x, [[2, 0, 1]]).tolist()  # block p[i] of the input becomes block i
    [[30.0, 31.0, 10.0, 11.0, 20.0, 21.0]]

    A feature averaged over S_3 is invariant to permuting the blocks of the rows:

    >>> X = np.random.default_rng(0).standard_normal((20, 6))
    >>> t = np.random.default_rng(1).standard_normal(6)
    >>> def f(X):
    ...     return np.cos(G.act(X, G.elements()) @ t).mean(axis=0)
    >>> np.allclose(f(G.act_each(X, G.sample(20, random_state=0))), f(X))
    True
    """

    is_finite = True

    def __init__(self, n_blocks, block_size=1):
        self.n_blocks = check_int(n_blocks, "n_blocks", min_value=1)
        self.block_size = check_int(block_size, "block_size", min_value=1)
        self.n_params = self.n_blocks

    def _repr_args(self):
        return f"n_blocks={self.n_blocks}, block_size={self.block_size}"

    @property
    def n_features(self):
        return self.n_blocks * self.block_size

    def _shape_text(self):
        return f"{self.n_blocks} blocks of {self.block_size}"

    def elements(self):
        return _all_permutations(self.n_blocks)

    @property
    def order(self):
        """n_blocks! (counted, not enumerated: S_n is too large to list from n = 11)."""
        return math.factorial(self.n_blocks)

    def sample(self, n, random_state=None, *, sampling="iid"):
        """``n`` uniform permutations, i.i.d. for both samplings (see the module docstring).

        Parameters and the returned array (n, n_blocks) as for :meth:`Group.sample`.
        """
        n = check_int(n, "n", min_value=1, max_value=MAX_COUNT)
        _check_sampling(sampling)
        rng = check_random_state(random_state)
        # permuted ranks of uniforms: uniform on S_n without enumerating it
        return np.argsort(rng.random((n, self.n_blocks)), axis=1).astype(float)

    def identity(self):
        return np.arange(self.n_blocks, dtype=float)[None, :]

    def inverse(self, E):
        P = _check_perms(self._check_elements(E), self.n_blocks)
        return np.argsort(P, axis=1).astype(float)

    def _act(self, X, E):
        P = _check_perms(E, self.n_blocks)
        B = X.reshape(len(X), self.n_blocks, self.block_size)
        return B[:, P, :].transpose(1, 0, 2, 3).reshape(len(P), len(X), -1)

    def _act_each(self, X, E):
        P = _check_perms(E, self.n_blocks)
        B = X.reshape(len(X), self.n_blocks, self.block_size)
        return np.take_along_axis(B, P[:, :, None], axis=1).reshape(len(X), -1)

    is_unitary = True
    is_symmetric = True
    permutes_coordinates = True

    def commutes_with(self, other):
        return False


class CoulombPermutation(Group):
    """Simultaneous row/column permutations of ``n_atoms × n_atoms`` symmetric matrices.

    Rows of X are flattened Coulomb matrices (Rupp et al. 2012). The energy of a
    molecule does not depend on how its atoms are numbered, so it is invariant
    under ``C -> P C P^T``. A permutation element ``p`` maps ``C`` to ``C[p][:, p]``.

    Parameters
    ----------
    n_atoms : int
        Atoms per molecule (>= 1); rows have ``n_atoms ** 2`` features.
    sampling : {"uniform", "montavon"}, default="uniform"
        "uniform": q is uniform on S_{n_atoms}, a finite group (elements are permutation
        arrays) with a unitary action and a symmetric q.

        "montavon": Montavon et al. 2012's random Coulomb matrices, the scheme of Raj et al.
        2017, §4.1: the rows are first put in the canonical order of decreasing
        row norm, Gaussian noise of scale ``noise`` is added to the sorted norms,
        and the matrix is re-sorted by the noisy norms. An *element* is then the
        noise vector (indexed by canonical rank), and its permutation depends on
        the input, so the action is applied on the data side
        (``is_data_dependent``; no identity, inverse or :meth:`act_inverse`). Because
        the noise is attached to canonical ranks, the result is exactly invariant to a
        relabelling of the atoms (up to ties in the row norms).
    noise : float, default=1.0
        Standard deviation of Montavon's noise (>= 0; 0 is the plain sort). Unused by
        "uniform".

    Examples
    --------
    >>> import numpy as np
    >>> from orbitkernels.groups import CoulombPermutation
    >>> A = np.random.default_rng(0).standard_normal((3, 3))
    >>> C = (A @ A.T).reshape(1, 9)  # one symmetric 3x3 matrix, flattened
    >>> G = CoulombPermutation(3)  # uniform on S_3: relabel the atoms
    >>> p = [2, 0, 1]
    >>> np.array_equal(G.act_each(C, [p]).reshape(3, 3), C.reshape(3, 3)[p][:, p])
    True

    Montavon's random Coulomb matrices attach the noise to the atoms' ranks by row norm, so relabelling the atoms
    changes nothing:

    >>> M = CoulombPermutation(3, sampling="montavon", noise=1.0)
    >>> M.is_data_dependent, M.is_unitary
    (True, False)
    >>> E = M.sample(5, random_state=0)  # noise vectors
    >>> M.act(C, E).shape, np.allclose(M.act(G.act_each(C, [p]), E), M.act(C, E))
    ((5, 1, 9), True)
    """

    def __init__(self, n_atoms, sampling="uniform", noise=1.0):
        self.n_atoms = check_int(n_atoms, "n_atoms", min_value=1)
        if sampling not in ("uniform", "montavon"):
            raise ValueError(f"sampling must be 'uniform' or 'montavon'; got {sampling!r}")
        self.sampling = sampling
        self.noise = check_real(noise, "noise", low=0.0)
        self.n_params = self.n_atoms
        self.is_data_dependent = sampling == "montavon"
        self.is_finite = sampling == "uniform"

    def elements(self):
        if self.sampling == "montavon":
            raise ValueError("Montavon sampling draws noise, not a finite set of elements; use sample()")
        return _all_permutations(self.n_atoms)

    @property
    def order(self):
        """n_atoms! for the uniform law on S_n (counted, not enumerated), None for Montavon's scheme."""
        return math.factorial(self.n_atoms) if self.is_finite else None

    def _repr_args(self):
        return f"n_atoms={self.n_atoms}, sampling={self.sampling!r}, noise={self.noise}"

    @property
    def n_features(self):
        return self.n_atoms * self.n_atoms

    def _shape_text(self):
        return f"flattened {self.n_atoms}x{self.n_atoms} matrices"

    def sample(self, n, random_state=None, *, sampling="iid"):
        """``n`` elements (permutations, or Montavon noise vectors), i.i.d. for both samplings.

        Parameters and the returned array (n, n_atoms) as for :meth:`Group.sample`.
        """
        n = check_int(n, "n", min_value=1, max_value=MAX_COUNT)
        _check_sampling(sampling)
        rng = check_random_state(random_state)
        if self.sampling == "montavon":
            if self.noise == 0:
                return np.zeros((n, self.n_atoms))
            return rng.normal(0.0, self.noise, size=(n, self.n_atoms))
        return np.argsort(rng.random((n, self.n_atoms)), axis=1).astype(float)

    def identity(self):
        if self.sampling == "montavon":
            raise ValueError("Montavon sampling has no identity element: it sorts every input")
        return np.arange(self.n_atoms, dtype=float)[None, :]

    def inverse(self, E):
        if self.sampling == "montavon":
            raise ValueError("Montavon sampling is not a group action; it has no inverse")
        P = _check_perms(self._check_elements(E), self.n_atoms)
        return np.argsort(P, axis=1).astype(float)

    def sorted_permutations(self, X, E=None):
        """Per-sample permutations (len(E), n_samples, n_atoms) of Montavon's scheme.

        With ``E=None`` (or zero noise) this is the deterministic sort by row norm
        ("Sort-Coulomb" of Montavon et al. 2012), of shape (1, n_samples, n_atoms).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_atoms ** 2)
            Flattened Coulomb matrices.
        E : array-like of shape (n_elements, n_atoms), default=None
            Noise vectors, indexed by canonical rank (as :meth:`sample` draws them for
            ``sampling="montavon"``).

        Returns
        -------
        P : ndarray of int64
            ``P[k, i, j]``: the atom placed at position j of molecule i by noise vector k.
        """
        X = self._check_X(X)
        return self._sorted_permutations(X, None if E is None else self._check_elements(E, "E"))

    def _sorted_permutations(self, X, E=None):
        C = X.reshape(len(X), self.n_atoms, self.n_atoms)
        norms = np.linalg.norm(C, axis=2)  # (n, a)
        canon = np.argsort(-norms, axis=1, kind="stable")  # canonical rank -> atom
        if E is None:
            return canon[None]
        sorted_norms = np.take_along_axis(norms, canon, axis=1)  # (n, a)
        noisy = sorted_norms[None, :, :] + E[:, None, :]  # (r, n, a)
        order = np.argsort(-noisy, axis=2, kind="stable")  # new position -> canonical rank
        return np.take_along_axis(np.broadcast_to(canon, noisy.shape), order, axis=2)

    def sort(self, X):
        """Sort-Coulomb: every matrix with its rows and columns in decreasing row-norm order."""
        X = self._check_X(X)
        return self._permute(X[None], self._sorted_permutations(X))[0]

    def _permute(self, Xr, P):
        # Xr (r, n, a*a) or broadcastable; P (r, n, a): output[i, j] = C[P_i, P_j]
        a = self.n_atoms
        r, n = P.shape[0], P.shape[1]
        C = np.broadcast_to(Xr.reshape(Xr.shape[0], n, a, a), (r, n, a, a))
        rows = np.take_along_axis(C, P[:, :, :, None], axis=2)
        out = np.take_along_axis(rows, P[:, :, None, :], axis=3)
        return out.reshape(r, n, a * a)

    def _act(self, X, E):
        if self.sampling == "montavon":
            return self._permute(X[None], self._sorted_permutations(X, E))
        P = _check_perms(E, self.n_atoms)
        Pn = np.broadcast_to(P[:, None, :], (len(P), len(X), self.n_atoms))
        return self._permute(X[None], Pn)

    def _act_each(self, X, E):
        if self.sampling == "montavon":
            P = np.stack([self._sorted_permutations(X[i : i + 1], E[i : i + 1])[0, 0] for i in range(len(X))])
        else:
            P = _check_perms(E, self.n_atoms)
        return self._permute(X[None], P[None])[0]

    @property
    def permutes_coordinates(self):
        return self.sampling == "uniform"

    @property
    def is_unitary(self):
        # Montavon's map x -> P(x) x preserves norms but not <x, z> for x != z.
        return self.sampling == "uniform"

    @property
    def is_symmetric(self):
        return self.sampling == "uniform"
