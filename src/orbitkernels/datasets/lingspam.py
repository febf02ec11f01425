"""Ling-Spam (Androutsopoulos et al. 2000): e-mails of a linguistics mailing list, spam or not."""
from __future__ import annotations

import re

import numpy as np
import scipy.sparse as sp
from sklearn.utils import Bunch

from ._base import DatasetFormatError, check_array, expect, expect_records, load_npz, resolve
from ._formats import read_archive

__all__ = ["LINGSPAM_VERSIONS", "load_lingspam"]

#: The corpus' four versions: plain, lemmatised, stop words removed, both.
LINGSPAM_VERSIONS = ("bare", "lemm", "lemm_stop", "stop")
_ARCHIVE = "lingspam_public.tar.gz"
#: The dtype of ``counts``, read from the .npz or computed from the texts.
_COUNTS_DTYPE = np.int32

_DESCRIPTION = """Ling-Spam corpus, version {version!r} ({source}): {n} messages of the Linguist mailing list,
{n_spam} of them spam, in the corpus' own 10 parts (for 10-fold cross-validation).
Versions: bare (as is), lemm (lemmatised), stop (stop words removed), lemm_stop (both).

texts: list of str, subject line then body; label: (n,) uint8, 1 = spam; part: (n,) uint8, 1-10;
filename: (n,) str (spam files start with "spmsg"); counts: (n, n_words) int32 scipy.sparse.csr_matrix of word
counts, tokens split on whitespace, case kept ({counts_note}); vocab: (n_words,) str, column order of counts.
Reference: I. Androutsopoulos, J. Koutsias, K. V. Chandrinos, G. Paliouras, C. D. Spyropoulos. An evaluation
of naive Bayesian anti-spam filtering. Workshop on Machine Learning in the New Information Age, ECML 2000.
"""


def _vectorizer():
    from sklearn.feature_extraction.text import CountVectorizer

    # The tokenisation of the stored bag of words: whitespace tokens, case kept, nothing dropped.
    return CountVectorizer(tokenizer=str.split, lowercase=False, token_pattern=None, dtype=_COUNTS_DTYPE)


def _decode(raw, where):
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise DatasetFormatError(f"{where}: not valid UTF-8 text ({exc})") from exc


def _read_npz(path, version):
    src = str(path)
    keys = [f"text_{version}_bytes", f"text_{version}_offsets", "label", "part", "filename"]
    if version == "bare":
        keys += ["bare_counts_data", "bare_counts_indices", "bare_counts_indptr", "bare_counts_shape", "bare_vocab"]
    a = load_npz(path, keys)
    label = check_array(a["label"], "label", ndim=1, source=src, kind="integer")
    n = len(label)
    raw = check_array(a[f"text_{version}_bytes"], f"text_{version}_bytes", ndim=1, dtype=np.uint8, source=src)
    off = check_array(a[f"text_{version}_offsets"], f"text_{version}_offsets", ndim=1, shape=(n + 1,), source=src)
    expect(np.issubdtype(off.dtype, np.integer) and off[0] == 0 and off[-1] == raw.size and (np.diff(off) >= 0).all(),
           f"{src}: text_{version}_offsets must rise from 0 to the length of text_{version}_bytes")
    blob = raw.tobytes()
    texts = [_decode(blob[off[i]:off[i + 1]], f"{src} message {i}") for i in range(n)]
    counts = vocab = None
    if version == "bare":
        shape = tuple(int(s) for s in a["bare_counts_shape"])
        vocab = check_array(a["bare_vocab"], "bare_vocab", ndim=1, source=src).astype(str)
        expect(shape == (n, len(vocab)), f"{src}: bare_counts_shape {shape} does not match {n} messages x "
                                         f"{len(vocab)} words")
        # one dtype whatever the file stores (int32, as computed from the texts); a count beyond int32 would wrap
        data = check_array(a["bare_counts_data"], "bare_counts_data", ndim=1, source=src, kind="integer", low=0,
                           high=np.iinfo(_COUNTS_DTYPE).max).astype(_COUNTS_DTYPE, copy=False)
        try:
            counts = sp.csr_matrix((data, a["bare_counts_indices"], a["bare_counts_indptr"]), shape=shape)
            counts.check_format(full_check=True)
        except ValueError as exc:
            raise DatasetFormatError(f"{src}: invalid CSR arrays bare_counts_*: {exc}") from exc
    part = check_array(a["part"], "part", ndim=1, shape=(n,), source=src, kind="integer")
    filename = check_array(a["filename"], "filename", ndim=1, shape=(n,), source=src, kind="string")
    return texts, label.astype(np.uint8), part.astype(np.uint8), filename.astype(str), counts, vocab


def _read_archive(path, version):
    pattern = rf"(?:.*/)?{version}/part([0-9]+)/([^/]+\.txt)"
    regex = re.compile(pattern)
    rows = []
    for name, raw in read_archive(path, pattern).items():
        part, filename = regex.fullmatch(name).groups()
        expect(1 <= int(part) <= 10, f"{path}: {name} is in part {part}; Ling-Spam has parts 1-10")
        rows.append((int(part), filename, _decode(raw, f"{path}: {name}")))
    expect(rows, f"{path}: no lingspam_public/{version}/part<k>/*.txt files in the archive")
    rows.sort(key=lambda r: r[:2])
    part = np.array([r[0] for r in rows], dtype=np.uint8)
    filename = np.array([r[1] for r in rows]).astype(str)
    label = np.char.startswith(filename, "spmsg").astype(np.uint8)
    return [r[2] for r in rows], label, part, filename, None, None


def load_lingspam(data_home=None, version="bare", download=True) -> Bunch:
    """Load the Ling-Spam corpus (Androutsopoulos et al. 2000): 2,893 messages, 481 spam, 10 parts.

    Reads this project's ``lingspam.npz`` (texts as UTF-8 bytes plus offsets;
    stored bag of words of the bare version) or, failing that, the original
    ``lingspam_public.tar.gz`` (``lingspam_public/<version>/part<k>/*.txt``;
    files whose name starts with ``spmsg`` are spam), downloaded when
    ``download=True``.  The tarball has no published checksum: its layout and
    text encoding are checked.  Messages are ordered by part then file name.

    Parameters
    ----------
    data_home : str, os.PathLike or None, default=None
        The data folder (see :func:`get_data_home`).
    version : {"bare", "lemm", "lemm_stop", "stop"}, default="bare"
        The corpus' version (:data:`LINGSPAM_VERSIONS`): as is, lemmatised,
        lemmatised without stop words, without stop words.
    download : bool, default=True
        Download the original archive into ``data_home`` when no usable file is there.

    Returns
    -------
    data : sklearn.utils.Bunch
        With the keys:

        texts : list of 2,893 str
            Subject line then body.
        label : ndarray of shape (2893,), uint8
            1 = spam.
        part : ndarray of shape (2893,), uint8
            The corpus' part, 1-10.
        filename : ndarray of shape (2893,), str
            File name (spam files start with "spmsg").
        counts : scipy.sparse.csr_matrix of shape (2893, n_words), int32
            Word counts: whitespace tokens, case kept; for "bare" 65,724 words,
            read from the .npz when stored (any integer dtype there, cast to
            int32), else computed with the same tokenisation. Always int32.
        vocab : ndarray of shape (n_words,), str
            The column order of ``counts`` (sorted).
        version : str
            The version read.
        source : str
            "lingspam.npz" or "lingspam_public.tar.gz".
        description : str
            Text describing the arrays and the reference.

    Raises
    ------
    ValueError
        An unknown ``version``.
    DatasetNotFoundError
        No usable file found (and ``download=False`` or the download failed).
    DatasetChecksumError
        A file's checksum does not match; it was not read.
    DatasetFormatError
        A file has the right checksum (or none) but unexpected content (e.g. stored
        counts that are not integers, negative, or beyond int32).

    Examples
    --------
    >>> from orbitkernels.datasets import load_lingspam
    >>> spam = load_lingspam()  # doctest: +SKIP
    >>> len(spam.texts), int(spam.label.sum()), spam.counts.shape  # doctest: +SKIP
    (2893, 481, (2893, 65724))

    Without the files (here an empty folder) and with ``download=False``, the error says what to put where:

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as home:
    ...     load_lingspam(data_home=home, download=False)
    Traceback (most recent call last):
        ...
    orbitkernels.datasets._base.DatasetNotFoundError: Ling-Spam corpus ('lingspam'): no usable files in the data
    folder ... lingspam.npz ... download=False, so nothing was fetched. ...
    """
    if version not in LINGSPAM_VERSIONS:
        raise ValueError(f"version must be one of {LINGSPAM_VERSIONS}; got {version!r}")
    found = resolve("lingspam", data_home, download=download)
    if found.form == "converted":
        source = "lingspam.npz"
        texts, label, part, filename, counts, vocab = _read_npz(found[source], version)
    else:
        source = _ARCHIVE
        texts, label, part, filename, counts, vocab = _read_archive(found[source], version)
    expect_records("lingspam", "messages", len(texts), str(found[source]))
    expect(((part >= 1) & (part <= 10)).all(), f"{source}: parts must be 1-10")
    expect(((label == 0) | (label == 1)).all(), f"{source}: labels must be 0 (legitimate) or 1 (spam)")
    counts_note = "stored in lingspam.npz"
    if counts is None:
        vec = _vectorizer()
        counts = vec.fit_transform(texts).tocsr()
        vocab = vec.get_feature_names_out().astype(str)
        counts_note = "computed with CountVectorizer(tokenizer=str.split, lowercase=False)"
    return Bunch(texts=texts, label=label, part=part, filename=filename, counts=counts, vocab=vocab,
                 version=version, source=source,
                 description=_DESCRIPTION.format(version=version, source=source, n=len(texts),
                                                 n_spam=int(label.sum()), counts_note=counts_note))
