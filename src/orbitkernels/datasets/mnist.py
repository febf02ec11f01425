"""MNIST (LeCun et al. 1998) from this project's ``mnist.npz`` or the four original IDX files."""
from __future__ import annotations

import numpy as np
from sklearn.utils import Bunch

from ._base import check_array, expect, expect_records, load_npz, resolve
from ._formats import read_idx

__all__ = ["load_mnist"]

_KEYS = ("x_train", "y_train", "x_test", "y_test")
_IDX_FILES = {
    "x_train": "train-images-idx3-ubyte.gz",
    "y_train": "train-labels-idx1-ubyte.gz",
    "x_test": "t10k-images-idx3-ubyte.gz",
    "y_test": "t10k-labels-idx1-ubyte.gz",
}

DESCRIPTION = """MNIST handwritten digits (LeCun, Bottou, Bengio, Haffner 1998).

x_train: (60000, 28, 28) uint8 grey levels 0-255 (0 = background), y_train: (60000,) uint8 digit 0-9;
x_test: (10000, 28, 28) uint8, y_test: (10000,) uint8. Source: {source}.
Reference: Y. LeCun, L. Bottou, Y. Bengio, P. Haffner. Gradient-based learning applied to document
recognition. Proceedings of the IEEE 86(11):2278-2324, 1998. http://yann.lecun.com/exdb/mnist/
"""


def _check_mnist(arrays, source):
    for split in ("train", "test"):
        x, y = arrays[f"x_{split}"], arrays[f"y_{split}"]
        check_array(x, f"x_{split}", ndim=3, shape=(None, 28, 28), dtype=np.uint8, source=source)
        check_array(y, f"y_{split}", ndim=1, dtype=np.uint8, source=source)
        expect(len(x) == len(y), f"{source}: x_{split} has {len(x)} images but y_{split} has {len(y)} labels")
        expect(y.size == 0 or int(y.max()) <= 9, f"{source}: y_{split} holds labels above 9 (max {y.max()})")
        expect_records("mnist", f"x_{split}", len(x), source)


def load_mnist(data_home=None, download=True) -> Bunch:
    """Load MNIST (LeCun et al. 1998): 60,000 training and 10,000 test digits.

    Looks in the data folder (see :func:`get_data_home`) for ``mnist.npz``
    (this project's conversion, or Keras' file with the same arrays), else for
    the four original IDX files (``train-images-idx3-ubyte.gz``...), which are
    downloaded when ``download=True``.  Every file is checked against its known
    checksum before it is read.

    Reference: Y. LeCun, L. Bottou, Y. Bengio, P. Haffner, "Gradient-based
    learning applied to document recognition", Proc. IEEE 86(11), 1998.

        Parameters
        ----------
        data_home : str, os.PathLike or None, default=None
            The data folder (see :func:`get_data_home`).
        download : bool, default=True
            Download the original IDX files into ``data_home`` when no usable file is there.

    Returns
    -------
    data : sklearn.utils.Bunch
        With the keys:

        x_train : ndarray of shape (60000, 28, 28), uint8
            Grey levels 0-255 (0 = background).
        y_train : ndarray of shape (60000,), uint8
            The digit 0-9.
        x_test : ndarray of shape (10000, 28, 28), uint8
            Test images.
        y_test : ndarray of shape (10000,), uint8
            Test labels.
        source : str
            "mnist.npz" or "idx" (which files were read).
        files : list of str
            The paths read.
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
    >>> from orbitkernels.datasets import load_mnist
    >>> mnist = load_mnist()  # doctest: +SKIP
    >>> mnist.x_train.shape, mnist.y_test.shape  # doctest: +SKIP
    ((60000, 28, 28), (10000,))

    Without the files (here an empty folder) and with ``download=False``, the error says what to put where:

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as home:
    ...     load_mnist(data_home=home, download=False)
    Traceback (most recent call last):
        ...
    orbitkernels.datasets._base.DatasetNotFoundError: MNIST handwritten digits ('mnist'): no usable files in the
    data folder ... mnist.npz ... download=False, so nothing was fetched. ...
    """
    found = resolve("mnist", data_home, download=download)
    if found.form == "converted":
        path = found["mnist.npz"]
        arrays = load_npz(path, _KEYS)
        source = "mnist.npz"
    else:
        arrays = {key: read_idx(found[name]) for key, name in _IDX_FILES.items()}
        source = "idx"
    _check_mnist(arrays, ", ".join(str(p) for p in found.paths.values()))  # errors name the files read
    return Bunch(**arrays, source=source, files=[str(p) for p in found.paths.values()],
                 description=DESCRIPTION.format(source=", ".join(found.paths)))
