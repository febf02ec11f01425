"""QM7 (Rupp et al. 2012; Montavon et al. 2012): molecules, Coulomb matrices, atomization energies, folds."""
from __future__ import annotations

import warnings

import numpy as np
from sklearn.utils import Bunch

from ..utils.validation import check_int, check_real_dtype
from ._base import DatasetFormatError, as_numbers, check_array, expect, expect_records, load_npz, resolve

__all__ = ["BOHR_IN_ANGSTROM", "coulomb_matrices", "load_qm7", "qm7_fold_indices"]

#: Length of one Bohr radius in angstrom (the value used with QM7).
BOHR_IN_ANGSTROM = 0.529177

_REFERENCE = ("M. Rupp, A. Tkatchenko, K.-R. Mueller, O. A. von Lilienfeld. Fast and accurate modeling of molecular "
              "atomization energies with machine learning. Phys. Rev. Lett. 108:058301, 2012. G. Montavon, "
              "K. Hansen, S. Fazli, M. Rupp, F. Biegler, A. Ziehe, A. Tkatchenko, O. A. von Lilienfeld, "
              "K.-R. Mueller. Learning invariant representations of molecules for atomization energy prediction. "
              "NIPS 2012. Molecules from GDB-13: L. C. Blum, J.-L. Reymond, J. Am. Chem. Soc. 131:8732, 2009.")

_DESCRIPTION = """QM7 ({source}): {n} small organic molecules (up to 23 atoms, up to 7 heavy atoms C, N, O, S)
from GDB-13 with PBE0 atomization energies.

R: (n, 23, 3) float64 atom positions in angstrom (converted from Bohr when read from qm7.mat);
Z: (n, 23) uint8 nuclear charges, 0 = padding; T: (n,) float64 atomization energy in kcal/mol;
X: (n, 23, 23) float64 Coulomb matrices ({x_source}); folds: {n_folds} arrays of test indices ({folds_source}).
{folds_note}
Reference: {reference}
"""


def _as_batch(Z, R):
    Z = np.asarray(Z)
    R = check_real_dtype(R, "R", " (positions)").astype(np.float64, copy=False)
    single = Z.ndim == 1
    if single:
        Z, R = Z[None], R[None]
    if Z.ndim != 2:
        raise ValueError(f"Z must be (n_atoms,) or (n_molecules, n_atoms); got shape {Z.shape}")
    if R.shape != Z.shape + (3,):
        raise ValueError(f"R must have shape {Z.shape + (3,)} to match Z; got {R.shape}")
    if not (np.issubdtype(Z.dtype, np.number) and not np.iscomplexobj(Z) and np.isfinite(Z).all()):
        raise ValueError("Z must hold real, finite numbers (nuclear charges)")
    if (Z < 0).any() or not np.array_equal(Z, np.round(Z)):
        raise ValueError("Z must hold non-negative whole nuclear charges (0 marks a padding atom)")
    if not np.isfinite(R).all():
        raise ValueError("R contains NaN or inf")
    return Z.astype(np.float64), R, single


def _distances(R):
    diff = R[:, :, None, :] - R[:, None, :, :]
    return np.sqrt(np.einsum("nijk,nijk->nij", diff, diff))


def coulomb_matrices(Z, R, unit="angstrom", *, chunk_size=1024) -> np.ndarray:
    """Coulomb matrices of molecules (Rupp et al. 2012).

    ``C_ii = 0.5 * Z_i ** 2.4`` and ``C_ij = Z_i * Z_j / |R_i - R_j|`` with the
    distance in Bohr (atomic units), as in QM7.  Rows and columns of padding
    atoms (``Z == 0``) are zero.

    Parameters
    ----------
    Z : array-like of shape (n_molecules, n_atoms) or (n_atoms,)
        Nuclear charges (whole numbers, 0 = padding).
    R : array-like of shape (n_molecules, n_atoms, 3) or (n_atoms, 3)
        Positions, in ``unit``.
    unit : {"angstrom", "bohr"}, default="angstrom"
        Unit of ``R``; angstrom are divided by ``BOHR_IN_ANGSTROM`` (0.529177).
    chunk_size : int >= 1, default=1024
        Molecules computed at once (bounds the (chunk, n_atoms, n_atoms, 3) temporaries).

    Returns
    -------
    (n_molecules, n_atoms, n_atoms) float64 array ((n_atoms, n_atoms) for one molecule).

    Raises
    ------
    ValueError
        Two real atoms of a molecule share a position; shapes that do not match;
        charges that are negative, not whole or not finite; positions that are not finite.
    TypeError
        ``R`` does not hold real numbers.

    Examples
    --------
    A water molecule (O, H, H; positions in angstrom): the matrix does not change when the molecule is
    rotated or moved.

    >>> import numpy as np
    >>> from orbitkernels.datasets import coulomb_matrices
    >>> Z = np.array([8, 1, 1])
    >>> R = np.array([[0.0, 0.0, 0.117], [0.0, 0.757, -0.469], [0.0, -0.757, -0.469]])
    >>> C = coulomb_matrices(Z, R)
    >>> C.shape, round(float(C[0, 0]), 3), round(float(C[1, 1]), 3)  # 0.5 * Z ** 2.4 on the diagonal
    ((3, 3), 73.517, 0.5)
    >>> turn = np.array([[0.0, -1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0]])  # 90 degrees about z
    >>> np.allclose(coulomb_matrices(Z, R @ turn.T + 2.0), C)
    True
    """
    if unit not in ("angstrom", "bohr"):
        raise ValueError(f"unit must be 'angstrom' or 'bohr'; got {unit!r}")
    chunk_size = check_int(chunk_size, "chunk_size", min_value=1)
    Zf, R, single = _as_batch(Z, R)
    if unit == "angstrom":
        R = R / BOHR_IN_ANGSTROM
    n, a = Zf.shape
    out = np.zeros((n, a, a), dtype=np.float64)
    off_diagonal = ~np.eye(a, dtype=bool)
    for start in range(0, n, chunk_size):
        z = Zf[start:start + chunk_size]
        dist = _distances(R[start:start + chunk_size])
        real = z > 0
        pairs = real[:, :, None] & real[:, None, :] & off_diagonal
        coincide = pairs & (dist == 0)
        if coincide.any():
            k, i, j = np.argwhere(coincide)[0]
            raise ValueError(f"molecule {start + k}: atoms {i} and {j} are at the same position")
        zz = z[:, :, None] * z[:, None, :]
        np.divide(zz, dist, out=out[start:start + chunk_size], where=pairs)
        idx = np.arange(a)
        out[start:start + chunk_size][:, idx, idx] = 0.5 * z ** 2.4
    return out[0] if single else out


def _file_coulomb_matrices(Z, R, unit, where):
    """:func:`coulomb_matrices` of positions read from a file: two atoms at one place are a bad file, said as such."""
    try:
        return coulomb_matrices(Z, R, unit=unit)
    except ValueError as exc:
        raise DatasetFormatError(f"R in {where}: {exc}; the positions are damaged") from exc


def _median_shortest_bond(Z, R):
    """Median over molecules (with >= 2 atoms) of the shortest interatomic distance, in R's unit."""
    Zf, R, _ = _as_batch(Z, R)
    real = Zf > 0
    keep = real.sum(1) >= 2
    if not keep.any():
        return np.nan
    dist = _distances(R[keep])
    r = real[keep]
    pairs = r[:, :, None] & r[:, None, :] & ~np.eye(Zf.shape[1], dtype=bool)
    return float(np.median(np.where(pairs, dist, np.inf).min(axis=(1, 2))))


def _length_unit(Z, R, where):
    """'angstrom' or 'bohr', from the shortest bonds (C-H 1.09 A = 2.06 Bohr, O-H 0.96 A = 1.81 Bohr)."""
    d = _median_shortest_bond(Z, R)
    if 0.8 <= d <= 1.5:
        return "angstrom"
    if 1.6 <= d <= 2.8:
        return "bohr"
    raise DatasetFormatError(f"{where}: the median shortest interatomic distance is {d:.3f}, which fits neither "
                             "angstrom (about 1.1) nor Bohr (about 2.1); the positions look wrong")


def _generated_folds(T, n_folds, seed):
    """Folds stratified by energy: sort by T, deal each block of n_folds molecules to the folds at random."""
    n = len(T)
    rng = np.random.RandomState(seed)
    n_blocks = -(-n // n_folds)
    deal = np.argsort(rng.random_sample((n_blocks, n_folds)), axis=1).ravel()
    fold_of = np.empty(n, dtype=np.int64)
    fold_of[np.argsort(T, kind="stable")] = deal[:n]  # a partial last block takes the start of its deal
    return [np.flatnonzero(fold_of == k) for k in range(n_folds)]


def _official_folds(P, n, where):
    P = np.asarray(P)
    expect(P.ndim == 2 and np.issubdtype(P.dtype, np.number), f"{where}: P should be a 2-D index array; got {P.shape}")
    flat = np.sort(P.ravel())
    if np.array_equal(flat, np.arange(n)):
        return [np.asarray(row, dtype=np.int64) for row in P], "official (qm7.mat P)"
    if np.array_equal(flat, np.arange(1, n + 1)):
        return [np.asarray(row, dtype=np.int64) - 1 for row in P], "official (qm7.mat P, 1-based indices made 0-based)"
    raise DatasetFormatError(f"{where}: P does not partition the {n} molecules")


def _read_npz(path):
    a = load_npz(path, ("R", "Z", "T"))
    src = str(path)
    Z = check_array(a["Z"], "Z", ndim=2, dtype=np.uint8, source=src)
    expect_records("qm7", "molecules", len(Z), src)
    R = check_array(a["R"], "R", ndim=3, shape=(len(Z), Z.shape[1], 3), source=src, kind="float", finite=True)
    T = check_array(a["T"], "T", ndim=1, shape=(len(Z),), source=src, kind="float", finite=True)
    unit = _length_unit(Z, R, src)
    expect(unit == "angstrom", f"{src}: R should be in angstrom but its bond lengths are in Bohr")
    return R.astype(np.float64), Z, T.astype(np.float64), None, None


def _read_mat(path):
    import scipy.io

    src = str(path)
    try:
        mat = scipy.io.loadmat(path)
    except Exception as exc:  # MatReadError, ValueError, OSError...
        raise DatasetFormatError(f"cannot read {src!r} as a MATLAB file: {type(exc).__name__}: {exc}") from exc
    missing = [k for k in ("X", "T", "P", "Z", "R") if k not in mat]
    expect(not missing, f"{src} lacks the variables {missing} (expected X, T, P, Z, R)")
    # every variable: numbers (not text), finite, of the shape the others imply
    Zraw = as_numbers(mat["Z"], "Z", src, ndim=2, low=0, high=255)
    n, a = Zraw.shape
    expect(np.array_equal(Zraw, np.round(Zraw)), f"Z in {src} should hold whole nuclear charges 0-255")
    expect_records("qm7", "molecules", n, src)
    Z = Zraw.astype(np.uint8)
    R = as_numbers(mat["R"], "R", src, shape=(n, a, 3), ndim=3)
    T = as_numbers(mat["T"], "T", src).ravel()
    expect(T.shape == (n,), f"T in {src} should hold {n} energies; got shape {np.shape(mat['T'])}")
    X = as_numbers(mat["X"], "X", src, ndim=3, shape=(n, a, a))
    P = as_numbers(mat["P"], "P", src, ndim=2)
    # qm7.mat stores R in Bohr (quantum-machine.org); we check rather than assume, and return angstrom.
    unit = _length_unit(Z, R, src)
    R_bohr = R if unit == "bohr" else R / BOHR_IN_ANGSTROM
    ours = _file_coulomb_matrices(Z, R_bohr, "bohr", src)
    err = np.abs(ours - X).max() / max(np.abs(X).max(), 1e-12)
    if err > 1e-3:
        warnings.warn(f"{src}: the stored Coulomb matrices X differ from those computed from Z and R "
                      f"(max relative difference {err:.2e}); X is returned as stored", stacklevel=3)
    return R_bohr * BOHR_IN_ANGSTROM, Z, T, X, P


def load_qm7(data_home=None, download=True, n_folds=5, random_state=0) -> Bunch:
    """Load QM7 (Rupp et al. 2012; Montavon et al. 2012): 7,165 molecules and their atomization energies.

    Reads this project's ``qm7.npz`` (R in angstrom, Z, T) or, failing that, the
    original ``qm7.mat`` from quantum-machine.org (variables X, T, P, Z, R;
    downloaded when ``download=True``).  The original stores R in **Bohr**; the
    loader checks the unit from the bond lengths and always returns angstrom.

    Coulomb matrices come from ``qm7.mat``'s X when read from it, else are
    computed with :func:`coulomb_matrices`.  Folds are the published five-fold
    split P of ``qm7.mat`` when that file was read and ``n_folds == 5``;
    otherwise ``n_folds`` folds are generated with seed ``random_state``,
    stratified by energy (molecules sorted by T, each consecutive block of
    ``n_folds`` dealt to the folds at random).  Generated folds differ from the
    published ones: say so with any result.  Use :func:`qm7_fold_indices` for
    the train/test indices of one fold.

    Parameters
    ----------
    data_home : str, os.PathLike or None, default=None
        The data folder (see :func:`get_data_home`).
    download : bool, default=True
        Download ``qm7.mat`` into ``data_home`` when no usable file is there.
    n_folds : int >= 2, default=5
        Number of folds (at most the number of molecules).
    random_state : int, default=0
        Seed of the generated folds (unused when the published folds are returned).

    Returns
    -------
    data : sklearn.utils.Bunch
        With the keys:

        R : ndarray of shape (7165, 23, 3), float64
            Atom positions in angstrom (0 for padding).
        Z : ndarray of shape (7165, 23), uint8
            Nuclear charges (0 = padding atom).
        T : ndarray of shape (7165,), float64
            Atomization energies in kcal/mol.
        X : ndarray of shape (7165, 23, 23), float64
            Coulomb matrices (Hartree-like atomic units).
        n_atoms : ndarray of shape (7165,), int64
            Real atoms per molecule.
        folds : list of ``n_folds`` int64 arrays
            Test indices of each fold (together a partition of the molecules).
        folds_source : str
            "official (qm7.mat P...)" or "generated (seed=<random_state>)".
        source : str
            "qm7.npz" or "qm7.mat".
        X_source : str
            "qm7.mat" or "computed from Z and R".
        description : str
            Text describing the arrays, the folds and the references.

    Raises
    ------
    ValueError
        ``n_folds`` exceeds the number of molecules.
    DatasetNotFoundError
        No usable file found (and ``download=False`` or the download failed).
    DatasetChecksumError
        A file's checksum does not match; it was not read.
    DatasetFormatError
        A file has the right checksum (or none) but unexpected content.

    Examples
    --------
    >>> from orbitkernels.datasets import load_qm7, qm7_fold_indices
    >>> qm7 = load_qm7()  # doctest: +SKIP
    >>> qm7.X.shape, len(qm7.folds)  # doctest: +SKIP
    ((7165, 23, 23), 5)
    >>> train, test = qm7_fold_indices(qm7, 0)  # doctest: +SKIP

    Without the files (here an empty folder) and with ``download=False``, the error says what to put where:

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as home:
    ...     load_qm7(data_home=home, download=False)
    Traceback (most recent call last):
        ...
    orbitkernels.datasets._base.DatasetNotFoundError: QM7 molecular atomization energies ('qm7'): no usable files
    in the data folder ... qm7.npz ... qm7.mat ... download=False, so nothing was fetched. ...
    """
    n_folds = check_int(n_folds, "n_folds", min_value=2)
    random_state = check_int(random_state, "random_state", min_value=0, max_value=2**32 - 1)  # before the file
    found = resolve("qm7", data_home, download=download)
    if found.form == "converted":
        source = "qm7.npz"
        R, Z, T, X, P = _read_npz(found[source])
    else:
        source = "qm7.mat"
        R, Z, T, X, P = _read_mat(found[source])
    n = len(Z)
    if n_folds > n:
        raise ValueError(f"n_folds={n_folds} exceeds the number of molecules ({n})")
    x_source = "qm7.mat" if X is not None else "computed from Z and R"
    if X is None:
        X = _file_coulomb_matrices(Z, R, "angstrom", str(found[source]))
    if P is not None and n_folds == np.asarray(P).shape[0]:
        folds, folds_source = _official_folds(P, n, str(found[source]))
        note = "Folds: the published split of Montavon et al. (2012)."
    else:
        folds, folds_source = _generated_folds(T, n_folds, random_state), f"generated (seed={random_state})"
        note = ("Folds: GENERATED here (stratified by energy), not the published split of Montavon et al. (2012); "
                "results must say so.")
    return Bunch(
        R=R, Z=Z, T=T, X=X, n_atoms=(Z > 0).sum(axis=1).astype(np.int64), folds=folds,
        folds_source=folds_source, source=source, X_source=x_source,
        description=_DESCRIPTION.format(source=source, n=n, x_source=x_source, n_folds=len(folds),
                                        folds_source=folds_source, folds_note=note, reference=_REFERENCE),
    )


def qm7_fold_indices(bunch, k):
    """``(train_idx, test_idx)`` of fold ``k``: fold k is the test set, the other folds the training set.

    Parameters
    ----------
    bunch : mapping with "folds"
        What :func:`load_qm7` returns.
    k : int in [0, len(bunch["folds"]))
        The test fold.

    Returns
    -------
    train_idx : ndarray of int64
        The other folds' indices, sorted.
    test_idx : ndarray of int64
        Fold ``k``'s indices, in the fold's order.

    Examples
    --------
    Any mapping with "folds" will do; here three folds of five molecules:

    >>> import numpy as np
    >>> from orbitkernels.datasets import qm7_fold_indices
    >>> bunch = {"folds": [np.array([4, 0]), np.array([1, 3]), np.array([2])]}
    >>> train, test = qm7_fold_indices(bunch, 0)
    >>> train.tolist(), test.tolist()
    ([1, 2, 3], [4, 0])
    """
    try:
        folds = bunch["folds"]
    except (KeyError, TypeError, IndexError):
        raise TypeError(f"bunch must be what load_qm7() returns (a mapping with 'folds'); got "
                        f"{type(bunch).__name__}") from None
    k = check_int(k, "k", min_value=0, max_value=len(folds) - 1)
    test = np.asarray(folds[k], dtype=np.int64)
    train = np.sort(np.concatenate([np.asarray(f, dtype=np.int64) for i, f in enumerate(folds) if i != k]))
    return train, test
