"""Parsers for the original file formats: IDX, ``.amat``, archives, CIFAR pickles.

Nothing here decides *whether* a file may be read: callers only hand over files
that passed :func:`orbitkernels.datasets._base.resolve` (checksum verified where
one is known).  The CIFAR-10 batches are pickles by format; they are read with
:class:`RestrictedUnpickler`, which resolves only the three numpy globals an
array needs and refuses every other global.
"""
from __future__ import annotations

import contextlib
import gzip
import io
import math
import pickle
import re
import struct
import tarfile
import zipfile
import zlib
from pathlib import Path

import numpy as np

from ._base import DatasetFormatError

__all__ = [
    "RestrictedUnpickler",
    "archive_errors",
    "iter_archive",
    "read_amat",
    "read_archive",
    "read_idx",
    "restricted_loads",
]

# IDX type codes (LeCun et al., "THE IDX FILE FORMAT" on the MNIST page); data are big-endian.
_IDX_DTYPES = {0x08: "u1", 0x09: "i1", 0x0B: ">i2", 0x0C: ">i4", 0x0D: ">f4", 0x0E: ">f8"}


def _read_all(source):
    if isinstance(source, (bytes, bytearray, memoryview)):
        data = bytes(source)
    elif hasattr(source, "read"):
        data = source.read()
    else:
        with open(source, "rb") as f:
            data = f.read()
    if data[:2] == b"\x1f\x8b":  # gzip magic
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError, zlib.error) as exc:
            raise DatasetFormatError(f"{_label(source)}: corrupt gzip stream ({exc})") from exc
    return data


def _label(source, kind="IDX"):
    if isinstance(source, (str, Path)):
        return repr(str(source))
    return getattr(source, "name", None) or f"{kind} data"


def read_idx(source) -> np.ndarray:
    """Read an IDX file (the format of the original MNIST files).

    The header is two zero bytes, a type code (0x08 uint8, 0x09 int8, 0x0B int16,
    0x0C int32, 0x0D float32, 0x0E float64), the number of dimensions, then each
    dimension as a big-endian uint32; the big-endian data follow.

    Parameters
    ----------
    source : str, os.PathLike, binary file object or bytes
        The IDX data; gzip-compressed input (``.gz``) is recognised by its magic bytes.

    Returns
    -------
    numpy.ndarray
        A native-byte-order array (its own, writable copy) of the dtype and shape the header announces.

    Raises
    ------
    DatasetFormatError
        A bad header, a corrupt gzip stream, or data shorter or longer than the header announces.

    Examples
    --------
    A 2x3 uint8 array (type code 0x08, two dimensions), as bytes and gzip-compressed:

    >>> import gzip
    >>> import struct
    >>> from orbitkernels.datasets import read_idx
    >>> data = bytes([0, 0, 0x08, 2]) + struct.pack(">II", 2, 3) + bytes(range(6))
    >>> a = read_idx(data)
    >>> a.dtype.name, a.shape, a.tolist()
    ('uint8', (2, 3), [[0, 1, 2], [3, 4, 5]])
    >>> read_idx(gzip.compress(data)).tolist() == a.tolist()
    True
    >>> read_idx(data[:-1])
    Traceback (most recent call last):
        ...
    orbitkernels.datasets._base.DatasetFormatError: IDX data: IDX header announces shape (2, 3) ... holds 5 data bytes
    """
    data = _read_all(source)
    name = _label(source)
    if len(data) < 4 or data[:2] != b"\x00\x00":
        raise DatasetFormatError(f"{name}: not an IDX file (bad magic number {data[:4]!r})")
    code, ndim = data[2], data[3]
    if code not in _IDX_DTYPES:
        raise DatasetFormatError(f"{name}: unknown IDX type code 0x{code:02x}")
    header = 4 + 4 * ndim
    if len(data) < header:
        raise DatasetFormatError(f"{name}: truncated IDX header ({len(data)} bytes, {ndim} dimensions announced)")
    dims = struct.unpack(">" + "I" * ndim, data[4:header])
    dtype = np.dtype(_IDX_DTYPES[code])
    count = math.prod(dims)  # Python ints: an int64 product wraps around for a forged header
    expected = count * dtype.itemsize
    if len(data) - header != expected:
        raise DatasetFormatError(f"{name}: IDX header announces shape {dims} ({expected} data bytes) "
                                 f"but the file holds {len(data) - header} data bytes")
    arr = np.frombuffer(data, dtype=dtype, count=count, offset=header).reshape(dims)
    return arr.astype(dtype.newbyteorder("="))  # native order, own (writable) copy


def read_amat(source, *, dtype=np.float32) -> np.ndarray:
    """Read an ``.amat`` file (whitespace-separated numbers, one example a row) as a 2-D array.

    This is the text format of the Larochelle et al. (2007) MNIST variations:
    each row holds the 784 pixel values then the label.

    Parameters
    ----------
    source : str, os.PathLike, or binary or text file object
        The table (ASCII text).
    dtype : numpy dtype, default=numpy.float32
        The dtype of the returned array.

    Returns
    -------
    numpy.ndarray of shape (n_rows, n_columns)
        One row per line (a single line gives one row).

    Raises
    ------
    DatasetFormatError
        Rows have different lengths, or hold something that is not a number or not ASCII.

    Examples
    --------
    >>> import io
    >>> from orbitkernels.datasets import read_amat
    >>> table = read_amat(io.StringIO("0 0.5 1 7\\n0.25 0 1 3\\n"))
    >>> table.dtype.name, table.shape
    ('float32', (2, 4))
    >>> table[:, -1].tolist()
    [7.0, 3.0]
    """
    if hasattr(source, "read"):
        stream = source
        if not isinstance(source, io.TextIOBase):
            stream = io.TextIOWrapper(source, encoding="ascii")
    else:
        stream = open(source, encoding="ascii")  # noqa: SIM115 - closed below
    try:
        arr = np.loadtxt(stream, dtype=dtype, ndmin=2)
    except (ValueError, UnicodeDecodeError) as exc:
        raise DatasetFormatError(f"{_label(source, '.amat')}: not a valid .amat table ({exc})") from exc
    finally:
        if not hasattr(source, "read"):
            stream.close()
    return arr


def iter_archive(path, pattern):
    """Yield ``(member_name, binary_file_object)`` for the regular files of a
    ``.zip`` or ``.tar[.gz|.bz2|.xz]`` archive whose name matches ``pattern``
    (a regular expression, matched with :func:`re.fullmatch`), in archive order.

    Members are read in place (never extracted to disk); a file object is only
    valid until the next item.  Use it inside :func:`archive_errors` so that a
    corrupt or truncated archive raises :class:`DatasetFormatError`.
    """
    regex = re.compile(pattern)
    path = Path(path)
    if zipfile.is_zipfile(path):
        with zipfile.ZipFile(path) as zf:
            for info in zf.infolist():
                if not info.is_dir() and regex.fullmatch(info.filename):
                    with zf.open(info) as f:
                        yield info.filename, f
    else:
        with tarfile.open(path, "r:*") as tf:
            for member in tf:
                if member.isfile() and regex.fullmatch(member.name):
                    yield member.name, tf.extractfile(member)


@contextlib.contextmanager
def archive_errors(path):
    """Turn the errors of a corrupt or truncated archive into :class:`DatasetFormatError` naming it."""
    try:
        yield
    except (tarfile.TarError, zipfile.BadZipFile, EOFError, zlib.error, OSError) as exc:
        raise DatasetFormatError(f"cannot read the archive {str(path)!r}: {type(exc).__name__}: {exc} "
                                 "(corrupt or truncated file?)") from exc


def read_archive(path, pattern) -> dict:
    """``{member_name: bytes}`` for the members of an archive matching ``pattern`` (see :func:`iter_archive`)."""
    with archive_errors(path):
        return {name: f.read() for name, f in iter_archive(path, pattern)}


# --------------------------------------------------------------------------- restricted pickles
def _numpy_reconstruct():
    try:  # numpy >= 2 (numpy 1.26 has the alias too)
        from numpy._core.multiarray import _reconstruct
    except ImportError:  # pragma: no cover - older numpy
        from numpy.core.multiarray import _reconstruct
    return _reconstruct


class RestrictedUnpickler(pickle.Unpickler):
    """An unpickler that rebuilds dicts, lists, bytes, numbers and numpy arrays as CIFAR-10's batch files hold them,
    and nothing else.

    What it reads: Python 2's pickles of CIFAR-10 (``encoding="bytes"``) and pickles of protocols 3 and 4. It refuses
    what needs another global: numpy arrays pickled with protocol 5 (``numpy._core.numeric._frombuffer``) and bytes
    pickled by Python 3 with protocols 0-2 (``_codecs.encode``); neither occurs in CIFAR-10's files, and each global
    allowed widens what a file may call.

    A pickled ``numpy.ndarray`` refers to three globals:
    ``numpy.core.multiarray._reconstruct`` (``numpy._core.multiarray`` when
    written by numpy >= 2), ``numpy.ndarray`` and ``numpy.dtype``.  These are the
    only globals :meth:`find_class` resolves; any other (``os.system``,
    ``builtins.eval``, ``subprocess.Popen``...) raises
    :class:`pickle.UnpicklingError` before it can be called, and so does a
    persistent id.

    Parameters
    ----------
    file, fix_imports, encoding, errors, buffers
        As for :class:`pickle.Unpickler` (``encoding="bytes"`` reads the
        Python 2 pickles of CIFAR-10).

    Examples
    --------
    >>> import io
    >>> import os
    >>> import pickle
    >>> import numpy as np
    >>> from orbitkernels.datasets import RestrictedUnpickler
    >>> batch = {"data": np.arange(6, dtype=np.uint8).reshape(2, 3), "labels": [1, 2]}
    >>> loaded = RestrictedUnpickler(io.BytesIO(pickle.dumps(batch, protocol=4))).load()
    >>> loaded["data"].tolist(), loaded["labels"]
    ([[0, 1, 2], [3, 4, 5]], [1, 2])

    A pickle that would call anything else is refused before the call:

    >>> try:
    ...     RestrictedUnpickler(io.BytesIO(pickle.dumps(os.system))).load()
    ... except pickle.UnpicklingError as exc:
    ...     print(exc)
    refusing to load the global ...system: only numpy arrays (...) are allowed in these pickles
    """

    _ALLOWED = {
        ("numpy.core.multiarray", "_reconstruct"),
        ("numpy._core.multiarray", "_reconstruct"),
        ("numpy", "ndarray"),
        ("numpy", "dtype"),
    }

    def find_class(self, module, name):
        if (module, name) not in self._ALLOWED:
            raise pickle.UnpicklingError(
                f"refusing to load the global {module}.{name}: only numpy arrays "
                "(numpy.core.multiarray._reconstruct, numpy.ndarray, numpy.dtype) are allowed in these pickles")
        if name == "_reconstruct":
            return _numpy_reconstruct()
        return getattr(np, name)

    def persistent_load(self, pid):
        raise pickle.UnpicklingError(f"refusing persistent id {pid!r}")


def restricted_loads(data: bytes, *, encoding="bytes"):
    """Unpickle ``data`` with :class:`RestrictedUnpickler` (``encoding="bytes"`` for Python 2 pickles)."""
    return RestrictedUnpickler(io.BytesIO(data), encoding=encoding).load()
