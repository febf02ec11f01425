"""Xperm: a synthetic sequence task whose label is invariant to permutations of the positions."""
from __future__ import annotations

import numpy as np
from sklearn.utils import Bunch

from ..utils.validation import check_int

__all__ = ["bag_of_words", "make_xperm"]

#: Largest number of sequences make_xperm builds (n_letters ** length).
MAX_SEQUENCES = 1 << 24


def make_xperm(n_letters=8, length=5, targets=(0, 1)) -> Bunch:
    """All ``n_letters ** length`` sequences, one-hot encoded, labelled by "contains every target letter".

    The label does not change when the positions of a sequence are permuted, so
    a learner that knows this invariance (e.g. a kernel averaged over the
    symmetric group acting on positions) needs far fewer examples: the Xperm
    task of Mroueh, Voinea & Poggio, "Learning with Group Invariant Features:
    A Kernel Perspective", NIPS 2015, §6 and Figure 1 (sequences of length 5
    over 8 letters, two target letters).  With the defaults there are 8**5 = 32,768
    sequences, of which 8**5 - 2*7**5 + 6**5 = 6,930 are positive.

    Parameters
    ----------
    n_letters : int >= 2, default=8
        Alphabet size; letters are 0 .. n_letters - 1.
    length : int >= 1, default=5
        Sequence length (``n_letters ** length`` at most 2**24 sequences).
    targets : sequence of distinct ints in [0, n_letters), default=(0, 1)
        A sequence is positive iff each of these letters occurs in it (anywhere).

    Returns
    -------
    data : sklearn.utils.Bunch
        With the keys (n = ``n_letters ** length``):

        X : ndarray of shape (n, length * n_letters), float64
            One-hot rows, position major: columns ``p*n_letters .. (p+1)*n_letters - 1``
            hold the letter at position p.
        y : ndarray of shape (n,), int64
            +1 if the sequence holds every target letter, else -1.
        sequences : ndarray of shape (n, length), int64
            In lexicographic order (position 0 most significant).
        targets : tuple of int
            The target letters.
        description : str
            Text describing the task.

    Examples
    --------
    >>> from orbitkernels.datasets import make_xperm
    >>> data = make_xperm()
    >>> data.X.shape, int((data.y == 1).sum())
    ((32768, 40), 6930)

    Sequences of length 2 over 3 letters, positive when they hold both 0 and 1, in either order:

    >>> small = make_xperm(n_letters=3, length=2, targets=(0, 1))
    >>> small.sequences[small.y == 1].tolist()
    [[0, 1], [1, 0]]
    """
    n_letters = check_int(n_letters, "n_letters", min_value=2)
    length = check_int(length, "length", min_value=1)
    # a single letter (targets=1) failed with "'int' object is not iterable"
    if isinstance(targets, (str, bytes)) or not hasattr(targets, "__iter__"):
        raise TypeError(f"targets must be a sequence of letters, e.g. (0, 1); got {targets!r}")
    if n_letters ** length > MAX_SEQUENCES:
        raise ValueError(f"n_letters ** length = {n_letters ** length} sequences exceeds the limit of "
                         f"{MAX_SEQUENCES}; use a smaller alphabet or shorter sequences")
    targets = tuple(check_int(t, "targets[i]", min_value=0, max_value=n_letters - 1) for t in targets)
    if not targets:
        raise ValueError("targets must name at least one letter")
    if len(set(targets)) != len(targets):
        raise ValueError(f"targets must be distinct letters; got {targets}")
    n = n_letters ** length
    powers = n_letters ** np.arange(length - 1, -1, -1, dtype=np.int64)
    sequences = (np.arange(n, dtype=np.int64)[:, None] // powers) % n_letters
    X = np.zeros((n, length * n_letters), dtype=np.float64)
    X[np.arange(n)[:, None], np.arange(length) * n_letters + sequences] = 1.0
    contains = np.ones(n, dtype=bool)
    for t in targets:
        contains &= (sequences == t).any(axis=1)
    y = np.where(contains, 1, -1).astype(np.int64)
    description = (f"Xperm: all {n} sequences of length {length} over {n_letters} letters, one-hot encoded "
                   f"position-major (X has {length * n_letters} columns); y = +1 iff the sequence contains every "
                   f"letter of {targets} ({int(contains.sum())} positive, {int(n - contains.sum())} negative). "
                   "The label is invariant to permutations of the positions (the Xperm task of Mroueh, Voinea & "
                   "Poggio, NIPS 2015, §6, Figure 1).")
    return Bunch(X=X, y=y, sequences=sequences, targets=targets, description=description)


def bag_of_words(sequences, n_letters) -> np.ndarray:
    """Letter counts of each sequence: (n, n_letters) int64, ``out[i, a]`` = occurrences of letter a in row i.

    This is the permutation-invariant summary of a sequence (the orbit of a
    sequence under permutations of its positions is determined by it).

    Parameters
    ----------
    sequences : array-like of shape (n, length)
        Integer letters in [0, n_letters), rows of equal length (e.g. ``make_xperm().sequences``).
    n_letters : int >= 1
        Alphabet size.

    Returns
    -------
    ndarray of shape (n, n_letters), int64
        Each row sums to ``length``.

    Raises
    ------
    ValueError
        ``sequences`` is not 2-D (ragged rows included) or holds letters outside [0, n_letters).
    TypeError
        ``sequences`` does not hold integers.

    Examples
    --------
    A sequence and its permutations have the same counts:

    >>> from orbitkernels.datasets import bag_of_words
    >>> bag_of_words([[0, 2, 2, 1], [2, 1, 2, 0], [1, 1, 1, 1]], n_letters=3).tolist()
    [[1, 1, 2], [1, 1, 2], [0, 4, 0]]
    """
    n_letters = check_int(n_letters, "n_letters", min_value=1)
    try:
        seq = np.asarray(sequences)
    except ValueError as exc:  # numpy's "inhomogeneous shape" for rows of different lengths
        raise ValueError(f"sequences must be 2-D (n, length), every row of the same length; got ragged rows "
                         f"({exc})") from None
    if seq.ndim != 2:
        raise ValueError(f"sequences must be 2-D (n, length); got shape {seq.shape}")
    if not np.issubdtype(seq.dtype, np.integer):
        raise TypeError(f"sequences must hold integer letters; got dtype {seq.dtype}")
    if seq.size and (seq.min() < 0 or seq.max() >= n_letters):
        raise ValueError(f"letters must be in [0, {n_letters}); got values in [{seq.min()}, {seq.max()}]")
    flat = (np.arange(seq.shape[0], dtype=np.int64)[:, None] * n_letters + seq).ravel()
    return np.bincount(flat, minlength=seq.shape[0] * n_letters).reshape(seq.shape[0], n_letters).astype(np.int64)
