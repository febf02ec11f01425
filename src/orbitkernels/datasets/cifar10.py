"""CIFAR-10 (Krizhevsky 2009) from the python-batches archive, unpickled with a restricted unpickler."""
from __future__ import annotations

import pickle

import numpy as np
from sklearn.utils import Bunch

from ._base import DatasetChecksumError, DatasetFormatError, expect, expect_records, resolve
from ._formats import read_archive, restricted_loads

__all__ = ["CIFAR10_CLASSES", "load_cifar10"]

_ARCHIVE = "cifar-10-python.tar.gz"
_BATCHES = tuple(f"data_batch_{i}" for i in range(1, 6)) + ("test_batch",)
#: Class names in label order (batches.meta of the archive).
CIFAR10_CLASSES = ("airplane", "automobile", "bird", "cat", "deer", "dog", "frog", "horse", "ship", "truck")

_DESCRIPTION = """CIFAR-10 (Krizhevsky 2009), python version ({path}).

x_train: ({n_train}, 32, 32, 3) uint8 RGB images (height, width, channel), y_train: ({n_train},) uint8 class 0-9;
x_test: ({n_test}, 32, 32, 3) uint8, y_test: ({n_test},) uint8; target_names: the 10 class names in label order.
Reference: A. Krizhevsky. Learning multiple layers of features from tiny images. Technical report, University of
Toronto, 2009. https://www.cs.toronto.edu/~kriz/cifar.html
"""


def _parse_batch(raw, where):
    try:
        batch = restricted_loads(raw, encoding="bytes")
    except pickle.UnpicklingError as exc:
        raise DatasetFormatError(f"{where}: {exc}") from exc
    except Exception as exc:  # truncated or garbled pickle data
        raise DatasetFormatError(f"{where}: not a valid CIFAR-10 batch ({type(exc).__name__}: {exc})") from exc
    expect(isinstance(batch, dict) and b"data" in batch and b"labels" in batch,
           f"{where}: a batch should be a dict with b'data' and b'labels'")
    data, labels = batch[b"data"], np.asarray(batch[b"labels"])
    expect(isinstance(data, np.ndarray) and data.dtype == np.uint8 and data.ndim == 2 and data.shape[1] == 3072,
           f"{where}: b'data' should be a (n, 3072) uint8 array; got "
           f"{getattr(data, 'dtype', type(data).__name__)} {getattr(data, 'shape', '')}")
    expect(labels.shape == (len(data),) and np.issubdtype(labels.dtype, np.integer)
           and (labels.size == 0 or (labels.min() >= 0 and labels.max() <= 9)),
           f"{where}: b'labels' should hold {len(data)} integers 0-9")
    # rows are 1024 red, 1024 green, 1024 blue values of a 32x32 image in row-major order
    x = np.ascontiguousarray(data.reshape(-1, 3, 32, 32).transpose(0, 2, 3, 1))
    return x, labels.astype(np.uint8)


def load_cifar10(data_home=None, download=True) -> Bunch:
    """Load CIFAR-10 (Krizhevsky 2009): 50,000 training and 10,000 test 32x32 colour images, 10 classes.

    Reads ``cifar-10-python.tar.gz`` from the data folder (downloaded from
    https://www.cs.toronto.edu/~kriz/ when ``download=True``).  The archive's
    MD5 must match the published one before anything in it is read; the batches
    (``cifar-10-batches-py/data_batch_1..5``, ``test_batch``) are pickles and
    are read with a restricted unpickler that only rebuilds numpy arrays and
    refuses every other global.  Nothing is extracted to disk.

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

        x_train : ndarray of shape (50000, 32, 32, 3), uint8
            RGB images (height, width, channel).
        y_train : ndarray of shape (50000,), uint8
            The class 0-9.
        x_test : ndarray of shape (10000, 32, 32, 3), uint8
            Test images.
        y_test : ndarray of shape (10000,), uint8
            Test labels.
        target_names : tuple of str
            The 10 class names in label order (:data:`CIFAR10_CLASSES`).
        source : str
            "cifar-10-python.tar.gz".
        description : str
            Text describing the arrays and the reference.

    Raises
    ------
    DatasetNotFoundError
        No archive found (and ``download=False`` or the download failed).
    DatasetChecksumError
        The archive's MD5 does not match (or no checksum is registered for it); nothing in it was read.
    DatasetFormatError
        A batch is missing, is not a valid pickle of the expected arrays, or refers to a forbidden global.

    Examples
    --------
    >>> from orbitkernels.datasets import load_cifar10
    >>> cifar = load_cifar10()  # doctest: +SKIP
    >>> cifar.x_train.shape, cifar.target_names[:3]  # doctest: +SKIP
    ((50000, 32, 32, 3), ('airplane', 'automobile', 'bird'))

    Without the archive (here an empty folder) and with ``download=False``, the error says what to put where:

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as home:
    ...     load_cifar10(data_home=home, download=False)
    Traceback (most recent call last):
        ...
    orbitkernels.datasets._base.DatasetNotFoundError: CIFAR-10 (python version) ('cifar10'): no usable files in
    the data folder ... cifar-10-python.tar.gz ... download=False, so nothing was fetched. ...
    """
    found = resolve("cifar10", data_home, download=download, forms=("canonical",))
    path = found[_ARCHIVE]
    if not found.checksum_verified:
        raise DatasetChecksumError(f"{str(path)!r}: no checksum is registered for the CIFAR-10 archive, and its "
                                   "pickles are only read from an archive whose checksum matched", path=path)
    members = read_archive(path, r"cifar-10-batches-py/(?:data_batch_[1-5]|test_batch)")
    by_name = {name.rsplit("/", 1)[-1]: raw for name, raw in members.items()}
    missing = [b for b in _BATCHES if b not in by_name]
    expect(not missing, f"{str(path)!r} lacks cifar-10-batches-py/{', '.join(missing)}")
    parts = {b: _parse_batch(by_name[b], f"{path}: {b}") for b in _BATCHES}
    x_train = np.concatenate([parts[b][0] for b in _BATCHES[:5]])
    y_train = np.concatenate([parts[b][1] for b in _BATCHES[:5]])
    x_test, y_test = parts["test_batch"]
    expect_records("cifar10", "train", len(x_train), str(path))
    expect_records("cifar10", "test", len(x_test), str(path))
    return Bunch(x_train=x_train, y_train=y_train, x_test=x_test, y_test=y_test, target_names=CIFAR10_CLASSES,
                 source=_ARCHIVE,
                 description=_DESCRIPTION.format(path=path, n_train=len(x_train), n_test=len(x_test)))
