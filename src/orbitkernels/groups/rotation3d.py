"""Rotations (and reflections) of 3-D point sets: molecules as rows ``[Z_1, x_1, y_1, z_1, Z_2, ...]``.

A molecule of up to ``n_atoms`` atoms is one row of ``4 * n_atoms`` numbers: per atom its
charge (or species label) Z followed by its position; Z = 0 marks a padding atom (its
position is ignored). :func:`encode_molecules` / :func:`decode_molecules` convert between
this scikit-learn friendly 2-D encoding and QM7's ``(Z, R)`` arrays.

The group acts on the positions only, g·(Z_a, r_a) = (Z_a, R_g r_a): a block-diagonal
orthogonal map of the row, so the action is unitary and, since it acts the same way on a
density ρ(x) = Σ_a c(Z_a) N(x; r_a, σ²), unitary on L²(R³) too (Raj et al. 2017, Lemma 2.1,
in 3-D with |J_g| = 1), which is what lets a feature map move it to plane-wave templates (Raj et al.
2017, §2.2.1, Eq. 7; :class:`orbitkernels.features.MolecularOrbitFeatures`).

Elements are unit quaternions in scipy's scalar-last order ``(x, y, z, w)``; with
``reflections=True`` (O(3)) a fifth column ±1 says whether the rotation is followed by the
inversion x -> -x (which commutes with every rotation). q is the Haar measure.
"""
from __future__ import annotations

import numpy as np
from scipy.spatial.transform import Rotation

from ..utils.validation import check_bool, check_data, check_int
from .base import Group, _as_generator, _randint, unit_points

__all__ = ["Rotation3D", "FiniteRotation3D", "encode_molecules", "decode_molecules"]


def encode_molecules(Z, R):
    """Rows ``[Z_1, x_1, y_1, z_1, ..., Z_A, x_A, y_A, z_A]`` from charges Z (n, A) and positions R (n, A, 3).

    Padding atoms (Z = 0) get zero coordinates, so a molecule's row does not depend on what
    the padding held. Raises ``ValueError`` for shapes that do not match, negative or
    fractional charges, and NaN or inf.

    Parameters
    ----------
    Z : array-like of shape (n, A)
        Non-negative whole charges (or species labels), 0 for a padding atom.
    R : array-like of shape (n, A, 3)
        Positions.

    Returns
    -------
    X : ndarray of shape (n, 4 A), float64

    Examples
    --------
    A water molecule (O, H, H) padded to four atoms:

    >>> from orbitkernels.groups import encode_molecules
    >>> Z = [[8, 1, 1, 0]]
    >>> R = [[[0.0, 0.0, 0.1], [0.8, 0.6, 0.0], [-0.8, 0.6, 0.0], [9.0, 9.0, 9.0]]]
    >>> X = encode_molecules(Z, R)
    >>> X.shape
    (1, 16)
    >>> X[0, :4].tolist(), X[0, 12:].tolist()  # the padding atom's position is zeroed
    ([8.0, 0.0, 0.0, 0.1], [0.0, 0.0, 0.0, 0.0])
    """
    Z = np.asarray(Z)
    R = np.asarray(R, dtype=np.float64)
    if Z.ndim != 2 or R.shape != Z.shape + (3,):
        raise ValueError(f"Z must be (n_molecules, n_atoms) and R (n_molecules, n_atoms, 3); got {Z.shape} and "
                         f"{R.shape}")
    Zf = Z.astype(np.float64)
    if not np.isfinite(Zf).all() or (Zf < 0).any() or not np.array_equal(Zf, np.round(Zf)):
        raise ValueError("Z must hold non-negative whole charges (0 marks a padding atom)")
    if not np.isfinite(R).all():
        raise ValueError("R contains NaN or inf")
    out = np.concatenate([Zf[:, :, None], np.where(Zf[:, :, None] > 0, R, 0.0)], axis=2)
    return out.reshape(len(Z), -1)


def decode_molecules(X):
    """``(Z, R)``: charges (n, A) float and positions (n, A, 3) of rows made by :func:`encode_molecules`.

    Their dtype is X's (float32 kept, everything else float64). Raises ``ValueError`` when the
    rows do not hold 4 numbers per atom or the Z columns are not non-negative whole numbers.

    Parameters
    ----------
    X : array-like of shape (n, 4 A)

    Returns
    -------
    Z : ndarray of shape (n, A)
    R : ndarray of shape (n, A, 3)

    Examples
    --------
    >>> from orbitkernels.groups import decode_molecules, encode_molecules
    >>> X = encode_molecules([[6, 0]], [[[1.0, 2.0, 3.0], [9.0, 9.0, 9.0]]])
    >>> Z, R = decode_molecules(X)
    >>> Z.tolist()
    [[6.0, 0.0]]
    >>> R.tolist()
    [[[1.0, 2.0, 3.0], [0.0, 0.0, 0.0]]]
    """
    X = check_data(X, "X")
    if X.shape[1] % 4:
        raise ValueError(f"a molecule row holds 4 numbers per atom [Z, x, y, z]; X has {X.shape[1]} columns, "
                         "not a multiple of 4")
    M = X.reshape(len(X), -1, 4)
    Z = M[:, :, 0]
    if (Z < 0).any() or not np.array_equal(Z, np.round(Z)):
        raise ValueError("the Z columns (every 4th, from the first) must hold non-negative whole charges")
    return Z, M[:, :, 1:]


def haar_quaternions(U):
    """Unit quaternions (x, y, z, w) from points U of [0, 1)^3 by Shoemake's map (Graphics Gems III, 1992).

    The map sends the uniform law on the cube to the Haar measure of SO(3), so a randomised
    lattice of the cube (:func:`~orbitkernels.groups.base.unit_points`) gives a low-discrepancy,
    unbiased set of rotations.
    """
    U = np.asarray(U, dtype=float)
    a, b = np.sqrt(1.0 - U[:, 0]), np.sqrt(U[:, 0])
    t1, t2 = 2 * np.pi * U[:, 1], 2 * np.pi * U[:, 2]
    return np.stack([a * np.sin(t1), a * np.cos(t1), b * np.sin(t2), b * np.cos(t2)], axis=1)


class Rotation3D(Group):
    """SO(3) (or O(3) with ``reflections=True``) with its Haar measure, acting on molecule rows.

    Elements are unit quaternions ``(x, y, z, w)`` (scalar last), plus a fifth column ±1 with
    ``reflections=True``. ``sample(n, sampling="qmc")`` pushes a randomised rank-1 lattice of
    [0, 1)^3 through Shoemake's map (``haar_quaternions``): every element is Haar distributed
    (unbiased orbit averages) and the set covers SO(3) more evenly than i.i.d. draws
    (``tests/test_molecules3d.py`` measures the variance of an orbit kernel estimate).

    Parameters
    ----------
    n_atoms : int >= 1, default=None
        Atoms per row (rows then have ``4 * n_atoms`` features); None accepts any multiple of 4.
        Not an integer (a float, a bool): ``TypeError``; below 1: ``ValueError``.
    reflections : bool, default=False
        O(3): each element is a rotation, followed by the inversion x -> -x with probability 1/2.

    Examples
    --------
    Rotations move the atoms and keep the charges and every interatomic distance:

    >>> import numpy as np
    >>> from scipy.spatial.distance import pdist
    >>> from orbitkernels.groups import Rotation3D, decode_molecules, encode_molecules
    >>> X = encode_molecules([[8, 1, 1]], [[[0.0, 0.0, 0.1], [0.8, 0.6, 0.0], [-0.8, 0.6, 0.0]]])
    >>> group = Rotation3D(n_atoms=3)
    >>> E = group.sample(4, random_state=0, sampling="qmc")  # unit quaternions (x, y, z, w)
    >>> E.shape
    (4, 4)
    >>> Y = group.act(X, E)
    >>> Y.shape
    (4, 1, 12)
    >>> Z, R = decode_molecules(Y[:, 0])
    >>> Z[0].tolist()
    [8.0, 1.0, 1.0]
    >>> all(np.allclose(pdist(r), pdist(decode_molecules(X)[1][0])) for r in R)
    True
    >>> Rotation3D(n_atoms=3, reflections=True).sample(4, random_state=0).shape  # a fifth column of signs
    (4, 5)
    """

    is_finite = False
    permutes_coordinates = False

    def __init__(self, n_atoms=None, *, reflections=False):
        # a float or a bool is a TypeError and 0 a ValueError, as for every other count of the library
        n_atoms = check_int(n_atoms, "n_atoms", min_value=1, allow_none=True)
        self.n_atoms = n_atoms
        self.reflections = check_bool(reflections, "reflections")
        self.n_params = 5 if self.reflections else 4

    def _repr_args(self):
        return ", ".join(([f"n_atoms={self.n_atoms}"] if self.n_atoms else [])
                         + (["reflections=True"] if self.reflections else []))

    @property
    def n_features(self):
        return None if self.n_atoms is None else 4 * self.n_atoms

    def _shape_text(self):
        return f"{self.n_atoms} atoms x [Z, x, y, z]"

    def _check_X(self, X, name="X"):
        X = super()._check_X(X, name)
        if X.shape[1] % 4:
            raise ValueError(f"{type(self).__name__} acts on rows of 4 numbers per atom [Z, x, y, z]; {name} has "
                             f"{X.shape[1]} columns, not a multiple of 4")
        return X

    def _check_elements(self, E, name="elements"):
        E = super()._check_elements(E, name)
        norms = np.linalg.norm(E[:, :4], axis=1)
        if np.abs(norms - 1.0).max(initial=0.0) > 1e-6:
            raise ValueError(f"{name}: the first four columns must be unit quaternions (x, y, z, w)")
        if self.reflections and not np.isin(E[:, 4], (-1.0, 1.0)).all():
            raise ValueError(f"{name}: the fifth column must be +1 (rotation) or -1 (rotation then inversion)")
        return E

    # ----------------------------------------------------------------- elements
    def _with_sign(self, Q, rng):
        if not self.reflections:
            return Q
        return np.hstack([Q, rng.choice([-1.0, 1.0], size=(len(Q), 1))])

    def _sample(self, n, rng):
        return self._with_sign(Rotation.random(n, random_state=_as_generator(rng)).as_quat(), rng)

    def _sample_qmc(self, n, rng):
        Q = haar_quaternions(unit_points(n, 3, rng))
        if not self.reflections:
            return Q
        # half rotations, half rotation-inversions, interleaved along the lattice (stratified in the sign too)
        sign = np.where((np.arange(n) + _randint(rng, 2)) % 2 == 0, 1.0, -1.0)
        return np.hstack([Q, sign[:, None]])

    def identity(self):
        e = np.array([[0.0, 0.0, 0.0, 1.0]])
        return np.hstack([e, [[1.0]]]) if self.reflections else e

    def inverse(self, E):
        E = self._check_elements(E)
        out = E.copy()
        out[:, :3] *= -1.0  # the conjugate quaternion; the inversion is its own inverse
        return out

    def matrices(self, E):
        """The orthogonal 3 x 3 matrices of the elements: (len(E), 3, 3) (determinant -1 for an inversion)."""
        E = self._check_elements(E)
        M = Rotation.from_quat(E[:, :4]).as_matrix()
        if self.reflections:
            M = M * E[:, 4][:, None, None]
        return M

    # ------------------------------------------------------------------- action
    def _act(self, X, E):
        M = self.matrices(E)
        A = X.reshape(len(X), -1, 4)
        out = np.empty((len(E),) + A.shape, dtype=X.dtype)
        out[..., 0] = A[None, :, :, 0]
        out[..., 1:] = np.einsum("kij,naj->knai", M, A[:, :, 1:])
        return out.reshape(len(E), len(X), -1)

    def _act_each(self, X, E):
        M = self.matrices(E)
        A = X.reshape(len(X), -1, 4)
        out = A.copy()
        out[..., 1:] = np.einsum("nij,naj->nai", M, A[:, :, 1:])
        return out.reshape(len(X), -1)

    @property
    def is_unitary(self):
        return True  # block-diagonal orthogonal on the row; unitary on L2(R^3) for densities

    @property
    def is_symmetric(self):
        return True  # Haar measure: g and g^{-1} have the same law

    def commutes_with(self, other):
        return False


class FiniteRotation3D(Rotation3D):
    """A finite rotation group of 3-D space acting on molecule rows: features pooled over all its
    elements are *exactly* invariant to it.

    q is uniform on the elements (the Haar measure of the finite group).

    Parameters
    ----------
    kind : {"T", "O", "I"}, default="I"
        The rotation groups of the tetrahedron (12 elements), octahedron / cube (24) and
        icosahedron (60), from :meth:`scipy.spatial.transform.Rotation.create_group`.
    n_atoms : int, default=None
        As for :class:`Rotation3D`.

    Examples
    --------
    A function averaged over the 24 rotations of the cube is the same for a molecule turned by any of them:

    >>> import numpy as np
    >>> from orbitkernels.groups import FiniteRotation3D, encode_molecules
    >>> group = FiniteRotation3D("O", n_atoms=3)
    >>> group.order
    24
    >>> X = encode_molecules([[8, 1, 1]], [[[0.0, 0.0, 0.1], [0.8, 0.6, 0.0], [-0.8, 0.6, 0.0]]])
    >>> w = np.random.default_rng(0).normal(size=12)
    >>> def pooled(X):
    ...     return np.cos(group.act(X, group.elements()) @ w).mean(axis=0)
    >>> turned = group.act(X, group.elements()[5:6])[0]
    >>> np.allclose(pooled(turned), pooled(X))
    True
    """

    is_finite = True

    def __init__(self, kind="I", n_atoms=None):
        if kind not in ("T", "O", "I"):
            raise ValueError(f"kind must be 'T' (12), 'O' (24) or 'I' (60); got {kind!r}")
        super().__init__(n_atoms)
        self.kind = kind

    def _repr_args(self):
        return ", ".join([repr(self.kind)] + ([f"n_atoms={self.n_atoms}"] if self.n_atoms else []))

    def elements(self):
        return Rotation.create_group(self.kind).as_quat()

    def _sample_qmc(self, n, rng):
        return Group._sample_qmc(self, n, rng)
