"""Free Spoken Digit Dataset (FSDD, Jackson et al.): 8 kHz recordings of spoken digits."""
from __future__ import annotations

import io
import re

import numpy as np
from sklearn.utils import Bunch

from ._base import DatasetFormatError, check_array, expect, expect_records, load_npz, resolve
from ._formats import read_archive

__all__ = ["load_fsdd", "fsdd_split"]

_ARCHIVE = "free-spoken-digit-dataset-1.0.10.tar.gz"
_WAV = r"(?:[^/]+/)?recordings/([0-9])_([A-Za-z]+)_([0-9]+)\.wav"
_KEYS = ("waveforms", "lengths", "digit", "speaker", "index", "sample_rate")

_DESCRIPTION = """Free Spoken Digit Dataset ({source}): {n} recordings of the digits 0-9 spoken in English by
{n_speakers} speakers ({speakers}), 50 per digit per speaker, mono, {rate} Hz, 16-bit, trimmed of silence.

waveforms: (n, max_length) int16 samples, zero-padded on the right; lengths: (n,) int32 samples before padding;
digit: (n,) uint8; speaker: (n,) str; index: (n,) int16 recording number 0-49; sample_rate: int (Hz).
The dataset's own split puts index 0-4 in the test set (fsdd_split(..., scheme="official")).
Used here as a stand-in for TIDIGITS (licensed).
Reference: Z. Jackson et al. Free Spoken Digit Dataset (FSDD), v1.0.10, Zenodo, doi:10.5281/zenodo.1342401.
https://github.com/Jakobovski/free-spoken-digit-dataset
"""


def _read_npz(path):
    a = load_npz(path, _KEYS)
    src = str(path)
    w = check_array(a["waveforms"], "waveforms", ndim=2, dtype=np.int16, source=src)
    n = len(w)
    lengths = check_array(a["lengths"], "lengths", ndim=1, shape=(n,), source=src)
    expect(np.issubdtype(lengths.dtype, np.integer) and lengths.min(initial=1) >= 1
           and lengths.max(initial=0) <= w.shape[1], f"{src}: lengths must be integers in [1, {w.shape[1]}]")
    check_array(a["digit"], "digit", ndim=1, shape=(n,), source=src, kind="integer", low=0, high=9)
    check_array(a["index"], "index", ndim=1, shape=(n,), source=src, kind="integer", low=0, high=49)
    check_array(a["speaker"], "speaker", ndim=1, shape=(n,), source=src, kind="string")
    expect(a["sample_rate"].shape == () and np.issubdtype(a["sample_rate"].dtype, np.integer)
           and int(a["sample_rate"]) > 0, f"{src}: sample_rate should be a positive integer scalar")
    return Bunch(waveforms=w, lengths=lengths.astype(np.int32), digit=a["digit"].astype(np.uint8),
                 speaker=a["speaker"].astype(str), index=a["index"].astype(np.int16),
                 sample_rate=int(a["sample_rate"]))


def _read_archive(path):
    from scipy.io import wavfile

    regex = re.compile(_WAV)
    records = []
    for name, data in read_archive(path, _WAV).items():
        digit, speaker, index = regex.fullmatch(name).groups()
        try:
            rate, samples = wavfile.read(io.BytesIO(data))
        except Exception as exc:  # ValueError for malformed RIFF data
            raise DatasetFormatError(f"{path}: {name} is not a readable wav file ({exc})") from exc
        expect(samples.ndim == 1 and samples.dtype == np.int16 and samples.size > 0,
               f"{path}: {name} should be mono 16-bit PCM; got {samples.dtype} samples of shape {samples.shape}")
        records.append((speaker, int(digit), int(index), rate, samples))
    expect(records, f"{path}: no recordings/<digit>_<speaker>_<index>.wav files in the archive")
    records.sort(key=lambda r: r[:3])
    rates = {r[3] for r in records}
    expect(len(rates) == 1, f"{path}: recordings have different sample rates {sorted(rates)}")
    lengths = np.array([r[4].size for r in records], dtype=np.int32)
    waveforms = np.zeros((len(records), lengths.max()), dtype=np.int16)
    for row, r in enumerate(records):
        waveforms[row, :r[4].size] = r[4]
    return Bunch(waveforms=waveforms, lengths=lengths,
                 digit=np.array([r[1] for r in records], dtype=np.uint8),
                 speaker=np.array([r[0] for r in records]).astype(str),
                 index=np.array([r[2] for r in records], dtype=np.int16),
                 sample_rate=int(rates.pop()))


def load_fsdd(data_home=None, download=True) -> Bunch:
    """Load the Free Spoken Digit Dataset (v1.0.10: 3,000 recordings, 6 speakers, 8 kHz).

    Reads this project's ``fsdd.npz``, else the GitHub release archive
    ``free-spoken-digit-dataset-1.0.10.tar.gz`` (its ``recordings/`` folder of
    ``{digit}_{speaker}_{index}.wav`` files, read with :mod:`scipy.io.wavfile`;
    downloaded when ``download=True``).  The archive has no published checksum:
    file names, wav format (mono int16) and a common sample rate are checked.
    Recordings are ordered by speaker, digit, index.  See :func:`fsdd_split` for
    train/test splits.

    Reference: Z. Jackson et al., Free Spoken Digit Dataset, Zenodo,
    doi:10.5281/zenodo.1342401.

        Parameters
        ----------
        data_home : str, os.PathLike or None, default=None
            The data folder (see :func:`get_data_home`).
        download : bool, default=True
            Download the original archive into ``data_home`` when no usable file is there.

    Returns
    -------
    data : sklearn.utils.Bunch
        With the keys:

        waveforms : ndarray of shape (3000, 18262), int16
            Samples, zero-padded on the right.
        lengths : ndarray of shape (3000,), int32
            Number of real samples of each recording.
        digit : ndarray of shape (3000,), uint8
            The spoken digit 0-9.
        speaker : ndarray of shape (3000,), str
            Speaker name.
        index : ndarray of shape (3000,), int16
            Recording number 0-49 for that speaker and digit.
        sample_rate : int
            8000 (Hz).
        source : str
            "fsdd.npz" or "free-spoken-digit-dataset-1.0.10.tar.gz".
        description : str
            Text describing the arrays and the reference.

        Raises
        ------
        DatasetNotFoundError
            No usable file found (and ``download=False`` or the download failed).
        DatasetChecksumError
            A file's checksum does not match; it was not read.
        DatasetFormatError
            A file has the right checksum (or none) but unexpected content.

    Examples
    --------
    >>> from orbitkernels.datasets import fsdd_split, load_fsdd
    >>> fsdd = load_fsdd()  # doctest: +SKIP
    >>> fsdd.waveforms.shape, fsdd.sample_rate  # doctest: +SKIP
    ((3000, 18262), 8000)
    >>> train, test = fsdd_split(fsdd, scheme="official")  # doctest: +SKIP
    >>> len(train), len(test)  # doctest: +SKIP
    (2700, 300)

    Without the files (here an empty folder) and with ``download=False``, the error says what to put where:

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as home:
    ...     load_fsdd(data_home=home, download=False)
    Traceback (most recent call last):
        ...
    orbitkernels.datasets._base.DatasetNotFoundError: Free Spoken Digit Dataset (FSDD) v1.0.10 ('fsdd'): no usable
    files in the data folder ... fsdd.npz ... download=False, so nothing was fetched. ...
    """
    found = resolve("fsdd", data_home, download=download)
    if found.form == "converted":
        bunch, source = _read_npz(found["fsdd.npz"]), "fsdd.npz"
    else:
        bunch, source = _read_archive(found[_ARCHIVE]), _ARCHIVE
    expect(bunch.digit.max(initial=0) <= 9, f"{source}: digits must be 0-9")
    expect_records("fsdd", "recordings", len(bunch.digit), str(found[source]))
    speakers = sorted(set(bunch.speaker.tolist()))
    bunch.source = source
    bunch.description = _DESCRIPTION.format(source=source, n=len(bunch.digit), n_speakers=len(speakers),
                                            speakers=", ".join(speakers), rate=bunch.sample_rate)
    return bunch


def fsdd_split(bunch, scheme="speaker", test_speakers=("theo", "yweweler")):
    """``(train_idx, test_idx)`` for FSDD.

    Parameters
    ----------
    bunch : mapping with "index" and "speaker"
        What :func:`load_fsdd` returns.
    scheme : {"speaker", "official"}, default="speaker"
        "official": the dataset's own split, recordings with index 0-4 are the
        test set (10%), 5-49 the training set (all speakers in both).
        "speaker": unseen speakers; the recordings of ``test_speakers`` are the
        test set and those of every other speaker the training set.
    test_speakers : str or sequence of str, default=("theo", "yweweler")
        The test speakers of ``scheme="speaker"`` (ignored by "official").

    Returns
    -------
    train_idx, test_idx : ndarray of int
        Increasing row indices of the two sets; together they are every row.

    Raises
    ------
    ValueError
        An unknown scheme or speaker, or test speakers that leave one set empty.
    TypeError
        ``bunch`` is not a mapping with "index" and "speaker".

    Examples
    --------
    Any mapping with "index" and "speaker" will do; here four recordings of two speakers:

    >>> import numpy as np
    >>> from orbitkernels.datasets import fsdd_split
    >>> bunch = {"index": np.array([0, 7, 3, 42]), "speaker": np.array(["theo", "jackson", "jackson", "theo"])}
    >>> train, test = fsdd_split(bunch, scheme="official")  # index 0-4 is the test set
    >>> train.tolist(), test.tolist()
    ([1, 3], [0, 2])
    >>> train, test = fsdd_split(bunch, scheme="speaker", test_speakers="theo")  # unseen speaker
    >>> train.tolist(), test.tolist()
    ([1, 2], [0, 3])
    """
    from collections.abc import Mapping

    if not isinstance(bunch, Mapping) or not {"index", "speaker"} <= set(bunch):
        raise TypeError(f"bunch must be what load_fsdd() returns (a mapping with 'index' and 'speaker'); "
                        f"got {type(bunch).__name__}")
    if scheme == "official":
        test = np.asarray(bunch["index"]) <= 4
    elif scheme == "speaker":
        if isinstance(test_speakers, str):
            test_speakers = (test_speakers,)
        speaker = np.asarray(bunch["speaker"]).astype(str)
        known = set(speaker.tolist())
        unknown = [s for s in test_speakers if s not in known]
        if unknown:
            raise ValueError(f"unknown speakers {unknown}; the dataset has {sorted(known)}")
        test = np.isin(speaker, list(test_speakers))
        if test.all() or not test.any():
            raise ValueError(f"test_speakers={tuple(test_speakers)} leaves an empty training or test set")
    else:
        raise ValueError(f"scheme must be 'speaker' or 'official'; got {scheme!r}")
    return np.flatnonzero(~test), np.flatnonzero(test)
