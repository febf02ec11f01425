"""Data folder, checksums and file resolution shared by every loader.

Every loader goes through :func:`resolve`: it looks in the data folder for this
project's ``.npz`` conversion of the dataset, then for the dataset's original
("canonical") files, and, when allowed, downloads the canonical files with
:func:`pooch.retrieve`.  A file is checked against its known checksum before
anything reads it; a mismatch raises :class:`DatasetChecksumError` and the file
is never parsed.
"""
from __future__ import annotations

import dataclasses
import hashlib
import os
import threading
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pooch

from ..utils.errors import ConfigurationError, UserError
from ..utils.progress import is_quiet
from ..utils.validation import check_bool

__all__ = [
    "ENV_VAR",
    "DataFile",
    "DatasetInfo",
    "DatasetChecksumError",
    "DatasetFormatError",
    "DatasetNotFoundError",
    "Resolved",
    "file_hash",
    "get_data_home",
    "load_npz",
    "resolve",
    "verify_file",
]

#: Environment variable naming the data folder (used when no ``data_home`` is given).
ENV_VAR = "ORBITKERNELS_DATA"

_CHUNK = 1 << 20


class DatasetNotFoundError(FileNotFoundError, UserError):
    """The files of a dataset are not in the data folder and could not be downloaded.

    A :class:`FileNotFoundError` (and a :class:`~orbitkernels.utils.errors.UserError`).
    Its message names the dataset, the data folder and the rule that chose it,
    the files that would do and the addresses to download them from.

    Parameters
    ----------
    message : str
        The error message.
    dataset, data_home, missing, urls, failure
        Stored as the attributes of the same names (keyword-only).

    Attributes
    ----------
    dataset : str or None
        Name of the dataset in :data:`REGISTRY` (e.g. ``"mnist"``).
    data_home : pathlib.Path or None
        The data folder that was searched.
    missing : tuple of str
        Names of the files (of either form of the dataset) absent from ``data_home``.
    urls : tuple of str
        Download addresses of the original files.
    failure : str or None
        Why a download was not possible; ``None`` when none was tried.
    """

    def __init__(self, message, *, dataset=None, data_home=None, missing=(), urls=(), failure=None):
        super().__init__(message)
        self.dataset = dataset
        self.data_home = data_home
        self.missing = tuple(missing)
        self.urls = tuple(urls)
        self.failure = failure


class DatasetChecksumError(ValueError, UserError):
    """A data file's checksum differs from the known one; the file was not read.

    A :class:`ValueError` (and a :class:`~orbitkernels.utils.errors.UserError`).

    Parameters
    ----------
    message : str
        The error message (names the file, the expected and the actual checksums).
    path, expected, actual
        Stored as the attributes of the same names (keyword-only).

    Attributes
    ----------
    path : pathlib.Path or None
        The file that failed.
    expected : tuple of str
        The accepted checksums, ``"<algorithm>:<hex digest>"``.
    actual : str or None
        The file's digests, ``"<algorithm>:<hex digest>"`` joined by ", "; ``None`` when not computed
        (a download that pooch refused, a file without a registered checksum).
    """

    def __init__(self, message, *, path=None, expected=(), actual=None):
        super().__init__(message)
        self.path = path
        self.expected = tuple(expected)
        self.actual = actual


class DatasetFormatError(ValueError, UserError):
    """A data file passed its checksum (or has none) but its content is not as expected."""


# --------------------------------------------------------------------------- data folder
def _data_home_and_origin(data_home=None):
    """Return ``(folder, origin)`` where origin says which rule chose the folder."""
    if data_home is not None:
        if not isinstance(data_home, (str, os.PathLike)):
            raise TypeError(f"data_home must be a path (str or os.PathLike); got {data_home!r} "
                            f"({type(data_home).__name__})")
        origin = "the data_home argument"
        if not os.fspath(data_home).strip():  # Path("") is the current folder: a blank option, not a choice
            raise ConfigurationError(f"data_home is empty ({data_home!r}); give a folder, or None for "
                                     f"{ENV_VAR} or the user cache")
        path = Path(os.fspath(data_home)).expanduser().absolute()
    elif os.environ.get(ENV_VAR, "").strip():
        origin = f"the {ENV_VAR} environment variable"
        path = Path(os.environ[ENV_VAR].strip()).expanduser().absolute()
    else:
        path = Path(pooch.os_cache("orbitkernels"))
        path.mkdir(parents=True, exist_ok=True)
        return path, "the default cache folder"
    if not path.exists():
        raise FileNotFoundError(f"data folder {str(path)!r} (from {origin}) does not exist; create it or point "
                                f"data_home / {ENV_VAR} at the folder that holds the data files")
    if not path.is_dir():
        raise NotADirectoryError(f"data folder {str(path)!r} (from {origin}) is not a folder")
    return path, origin


def get_data_home(data_home=None) -> Path:
    """The folder where datasets are looked for and downloaded to.

    Precedence: the ``data_home`` argument, else the ``ORBITKERNELS_DATA``
    environment variable (when set and not blank), else the per-user cache folder
    (``pooch.os_cache("orbitkernels")``, e.g. ``~/.cache/orbitkernels``).
    The default cache folder is created if needed; a folder given by the
    argument or the environment variable must already exist
    (:class:`FileNotFoundError` naming it otherwise).

    Parameters
    ----------
    data_home : str, os.PathLike or None, default=None
        The data folder; ``~`` is expanded. ``None``: the environment variable, else the cache.

    Returns
    -------
    pathlib.Path
        The folder, as an absolute path.

    Raises
    ------
    FileNotFoundError
        The folder named by ``data_home`` or ``ORBITKERNELS_DATA`` does not exist.
    NotADirectoryError
        It is a file, not a folder.
    TypeError
        ``data_home`` is neither a string nor a path.
    ConfigurationError
        ``data_home`` is an empty (or blank) string.

    Examples
    --------
    >>> import tempfile
    >>> from pathlib import Path
    >>> from orbitkernels.datasets import get_data_home
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     home = get_data_home(folder)
    ...     print(home.is_absolute(), home == Path(folder).absolute())
    True True

    A folder named by the argument (or the environment variable) must exist:

    >>> get_data_home("/no/such/folder")
    Traceback (most recent call last):
        ...
    FileNotFoundError: data folder '...folder' (from the data_home argument) does not exist; ...
    """
    return _data_home_and_origin(data_home)[0]


# --------------------------------------------------------------------------- registry types
@dataclass(frozen=True)
class DataFile:
    """One file a dataset can be read from.

    ``hashes`` holds the accepted checksums as ``"sha256:<hex>"`` or
    ``"md5:<hex>"`` (any one matching is enough); an empty tuple means no
    checksum is published/known, in which case the loader checks the content's
    structure instead.  ``url`` is where the file can be downloaded from
    (``None`` for this project's own conversions, which are not hosted).
    """

    name: str
    hashes: tuple = ()
    url: str | None = None
    note: str = ""


@dataclass(frozen=True)
class DatasetInfo:
    """What the library accepts for one dataset.

    ``converted``: this project's ``.npz`` conversion (tried first);
    ``canonical``: the original distribution files, all of which are needed.
    """

    name: str
    title: str
    reference: str
    homepage: str
    converted: tuple = ()
    canonical: tuple = ()

    def files(self, form):
        return {"converted": self.converted, "canonical": self.canonical}[form]


@dataclass
class Resolved:
    """Result of :func:`resolve`: which form was found and the verified paths."""

    info: DatasetInfo
    form: str  # "converted" or "canonical"
    paths: dict = field(default_factory=dict)  # file name -> Path
    checksum_verified: bool = True  # False when some file has no known checksum

    def __getitem__(self, name):
        return self.paths[name]


# --------------------------------------------------------------------------- checksums
_HASH_CACHE: dict = {}
_HASH_LOCK = threading.Lock()


def _split_hash(spec):
    alg, sep, hexdigest = spec.partition(":")
    if not sep:  # pooch's convention: a bare digest is sha256
        alg, hexdigest = "sha256", spec
    alg = alg.lower()
    if alg not in hashlib.algorithms_available:
        raise ValueError(f"unknown hash algorithm {alg!r} in checksum {spec!r}")
    return alg, hexdigest.lower()


def file_hash(path, algorithm="sha256") -> str:
    """Hex digest of a file, read in 1 MiB chunks.

    Digests are cached in memory per (path, size, modification time, algorithm),
    so loading the same file again in one process does not hash it again; a file
    that is replaced or modified gets a new key and is hashed again.

    Parameters
    ----------
    path : str or os.PathLike
        The file.
    algorithm : str, default="sha256"
        A name :func:`hashlib.new` knows ("sha256", "md5", ...); another raises ``ValueError``.

    Returns
    -------
    str
        The lowercase hexadecimal digest.

    Examples
    --------
    >>> import hashlib
    >>> import os
    >>> import tempfile
    >>> from orbitkernels.datasets import file_hash
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     path = os.path.join(folder, "data.bin")
    ...     with open(path, "wb") as f:
    ...         _ = f.write(b"abc")
    ...     print(file_hash(path))
    ...     print(file_hash(path, "md5") == hashlib.md5(b"abc").hexdigest())
    ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad
    True
    """
    path = Path(path).resolve()
    st = path.stat()
    key = (str(path), st.st_size, st.st_mtime_ns, algorithm)
    with _HASH_LOCK:
        cached = _HASH_CACHE.get(key)
    if cached is not None:
        return cached
    h = hashlib.new(algorithm)
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(_CHUNK), b""):
            h.update(chunk)
    digest = h.hexdigest()
    with _HASH_LOCK:
        _HASH_CACHE[key] = digest
    return digest


def verify_file(path, datafile: DataFile) -> bool:
    """Check ``path`` against ``datafile.hashes``.

    Returns ``True`` when a known checksum matched, ``False`` when the registry
    has no checksum for this file (nothing to compare), and raises
    :class:`DatasetChecksumError` on a mismatch.
    """
    if not datafile.hashes:
        return False
    actual = {}
    for spec in datafile.hashes:
        alg, expected = _split_hash(spec)
        if alg not in actual:
            actual[alg] = file_hash(path, alg)
        if actual[alg] == expected:
            return True
    got = ", ".join(f"{alg}:{d}" for alg, d in actual.items())
    want = " or ".join(datafile.hashes)
    raise DatasetChecksumError(
        f"checksum mismatch for {str(path)!r}: expected {want}, got {got} "
        f"({Path(path).stat().st_size} bytes). The file is corrupt, truncated or another version; "
        "it was not read. Delete or replace it"
        + (f" (the original is at {datafile.url})" if datafile.url else "") + ".",
        path=Path(path), expected=datafile.hashes, actual=got,
    )


# --------------------------------------------------------------------------- resolution
def _describe_files(files):
    return ", ".join(f.name for f in files)


def _not_found(info, home, origin, *, forms, download, failure=None):
    lines = [f"{info.title} ({info.name!r}): no usable files in the data folder {str(home)!r} (chosen by {origin})."]
    if "converted" in forms and info.converted:
        lines.append(f"  - this project's conversion: {_describe_files(info.converted)}")
    if "canonical" in forms and info.canonical:
        present = [f.name for f in info.canonical if (home / f.name).is_file()]
        lines.append(f"  - {'or ' if len(lines) > 1 else ''}the original file(s): {_describe_files(info.canonical)}"
                     + (f" (found only {', '.join(present)})" if present else ""))
        lines.extend(f"    from {f.url}" for f in info.canonical if f.url)
    if failure is not None:
        lines.append(f"Downloading failed: {failure}")
    elif not download:
        lines.append("download=False, so nothing was fetched.")
    lines.append(f"Put the files in that folder, or point data_home= or the {ENV_VAR} environment variable "
                 "at a folder that holds them" + ("" if download else ", or pass download=True") + ".")
    missing = [f.name for form in forms for f in info.files(form) if not (home / f.name).is_file()]
    return DatasetNotFoundError(
        "\n".join(lines), dataset=info.name, data_home=home, missing=missing,
        urls=[f.url for f in info.canonical if f.url], failure=failure,
    )


def _download(datafile, home):
    """Fetch one canonical file into ``home`` (atomically, verified by pooch when a hash is known)."""
    known = datafile.hashes[0] if datafile.hashes else None
    try:
        pooch.retrieve(datafile.url, known_hash=known, fname=datafile.name, path=home,
                       progressbar=not is_quiet())
    except ValueError as exc:
        if "hash" in str(exc).lower():
            raise DatasetChecksumError(
                f"downloaded {datafile.name} from {datafile.url} does not match the known checksum "
                f"{known}; pooch deleted it. {exc}", path=home / datafile.name, expected=datafile.hashes,
            ) from exc
        raise


def _not_a_file(path):
    """What stands at ``path`` where a data file should: "a folder", "a broken link (to ...)" or "not a regular
    file"; None for a regular file or nothing (a broken link was reported as missing, and downloaded over)."""
    path = Path(path)
    if path.is_file() or not (path.exists() or path.is_symlink()):
        return None
    if path.is_dir():
        return "a folder"
    return f"a broken link (to {str(path.readlink())!r})" if not path.exists() else "not a regular file"


def resolve(name, data_home=None, *, download=True, forms=("converted", "canonical"), registry=None) -> Resolved:
    """Find (and verify, and if allowed download) the files of dataset ``name``.

    Order: this project's ``.npz`` conversion, then the canonical files already in
    the folder, then (``download=True``) the canonical files fetched with
    :func:`pooch.retrieve` into the data folder.  Every file with a known
    checksum is verified before the path is returned; a mismatch raises
    :class:`DatasetChecksumError`.  When nothing usable is found a
    :class:`DatasetNotFoundError` names the files, the folder, the environment
    variable and the download URL.
    """
    from ._registry import REGISTRY

    check_bool(download, "download")  # download="no" is truthy: it went to the network
    info = (REGISTRY if registry is None else registry)[name]
    home, origin = _data_home_and_origin(data_home)
    # A folder (or anything but a regular file) with a data file's name is a mistake to report, not a reason
    # to look further, let alone to download over it.
    for f in (*info.converted, *info.canonical):
        path = home / f.name
        what = _not_a_file(path)
        if what:
            raise DatasetFormatError(f"{str(path)!r} is {what}, not the {info.title} file {f.name}; move it away "
                                     "or put the file itself there")
    for form in forms:
        files = info.files(form)
        if files and all((home / f.name).is_file() for f in files):
            return _verified(info, form, home)
    if download and "canonical" in forms and info.canonical:
        fetchable = [f for f in info.canonical if not (home / f.name).is_file()]
        no_url = [f.name for f in fetchable if not f.url]
        if no_url:
            raise _not_found(info, home, origin, forms=forms, download=download,
                             failure=f"no download address is known for {', '.join(no_url)}")
        for f in fetchable:
            try:
                _download(f, home)
            except DatasetChecksumError:
                raise
            except Exception as exc:  # network errors, HTTP errors, read-only folder...
                raise _not_found(info, home, origin, forms=forms, download=download,
                                 failure=f"{f.url}: {type(exc).__name__}: {exc}") from exc
        return _verified(info, "canonical", home)
    raise _not_found(info, home, origin, forms=forms, download=download)


def _verified(info, form, home):
    paths, all_checked = {}, True
    for f in info.files(form):
        path = home / f.name
        all_checked &= verify_file(path, f)
        paths[f.name] = path
    return Resolved(info=info, form=form, paths=paths, checksum_verified=all_checked)


def replace_hashes(info: DatasetInfo, form: str, hashes: dict) -> DatasetInfo:
    """A copy of ``info`` whose ``form`` files use ``hashes`` (file name -> tuple of checksums).

    Meant for tests that build small stand-in files and register their checksums.
    """
    new = tuple(dataclasses.replace(f, hashes=tuple(hashes.get(f.name, f.hashes))) for f in info.files(form))
    return dataclasses.replace(info, **{form: new})


# --------------------------------------------------------------------------- reading helpers
def load_npz(path, keys) -> dict:
    """Read ``keys`` from an ``.npz`` archive with ``allow_pickle=False``.

    Raises :class:`DatasetFormatError` naming the file when it is not a valid
    archive, holds object arrays, or lacks one of ``keys``.
    """
    try:
        with np.load(path, allow_pickle=False) as f:
            missing = [k for k in keys if k not in f.files]
            if missing:
                raise DatasetFormatError(f"{str(path)!r} lacks the arrays {missing}; it holds {sorted(f.files)}")
            return {k: f[k] for k in keys}
    except DatasetFormatError:
        raise
    except Exception as exc:  # zipfile.BadZipFile, ValueError (object arrays), OSError, EOFError...
        raise DatasetFormatError(f"cannot read {str(path)!r} as an .npz archive: {type(exc).__name__}: {exc}") from exc


def expect(condition, message):
    """Raise :class:`DatasetFormatError` with ``message`` unless ``condition``."""
    if not condition:
        raise DatasetFormatError(message)


_KINDS = {"number": "biuf", "float": "f", "integer": "iu", "string": "US"}


def check_array(arr, name, *, ndim=None, shape=None, dtype=None, source="", kind=None, finite=None,
                low=None, high=None):
    """Structural check of one loaded array (dimension, trailing shape, dtype, kind of values, range).

    ``kind`` is "number", "float", "integer" or "string"; ``finite`` (default: True for numbers) refuses
    NaN and inf; ``low`` / ``high`` bound the values. Every failure is a :class:`DatasetFormatError`
    naming the field and the file.
    """
    where = f" in {source}" if source else ""
    arr = np.asarray(arr)
    if ndim is not None:
        expect(arr.ndim == ndim, f"{name}{where} should be {ndim}-D; got shape {arr.shape}")
    if shape is not None:
        for axis, size in enumerate(shape):
            expect(size is None or arr.shape[axis] == size,
                   f"{name}{where} should have shape {tuple('n' if s is None else s for s in shape)}; got {arr.shape}")
    if dtype is not None:
        expect(arr.dtype == np.dtype(dtype), f"{name}{where} should have dtype {np.dtype(dtype)}; got {arr.dtype}")
    if kind is not None:
        expect(arr.dtype.kind in _KINDS[kind], f"{name}{where} should hold {kind} values; got dtype {arr.dtype}")
    if finite is None:
        finite = arr.dtype.kind in "fc"
    if finite and arr.dtype.kind in "fc":
        bad = arr.size - int(np.count_nonzero(np.isfinite(arr)))
        expect(not bad, f"{name}{where} holds {bad} NaN or infinite value(s) (first at index "
                        f"{tuple(int(i) for i in np.argwhere(~np.isfinite(arr))[0]) if bad else ()})")
    if arr.size and (low is not None or high is not None):
        lo, hi = arr.min(), arr.max()
        expect((low is None or lo >= low) and (high is None or hi <= high),
               f"{name}{where} should hold values in [{low}, {high}]; got values from {lo} to {hi}")
    return arr


def as_numbers(value, name, source, dtype=np.float64, **checks):
    """``value`` (e.g. a MATLAB variable) as a ``dtype`` array, checked by :func:`check_array`; text or
    objects that are not numbers are a :class:`DatasetFormatError` naming the field and the file."""
    arr = np.asarray(value)
    expect(arr.dtype.kind in "biuf", f"{name} in {source} should hold numbers; got dtype {arr.dtype}")
    return check_array(arr.astype(dtype, copy=False), name, source=source, **checks)


def expect_records(dataset, field, n, source):
    """Refuse a file whose ``field`` holds another number of records than the published dataset has
    (:data:`~orbitkernels.datasets._registry.EXPECTED_RECORDS`): a truncated archive, or another release."""
    from . import _registry

    want = _registry.EXPECTED_RECORDS.get(dataset, {}).get(field)
    expect(want is None or n == want,
           f"{source}: {field} holds {n} records but the published dataset has {want}; the file is truncated, "
           "incomplete or another release. Replace it (or delete it and load with download=True)")
