"""Rotated MNIST (Larochelle et al. 2007): the official files, or a regeneration following their protocol."""
from __future__ import annotations

import numpy as np
from sklearn.utils import Bunch

from ..utils.validation import all_finite, check_int, check_random_state, check_real_dtype
from ._base import DatasetFormatError, expect, expect_records, get_data_home, resolve
from ._formats import archive_errors, iter_archive, read_amat
from .mnist import load_mnist

__all__ = ["load_rotated_mnist", "make_rotated_mnist", "rotate_images"]

#: Rows at the end of ``..._train_valid.amat`` that form the validation set (the published split).
OFFICIAL_N_VALID = 2000
_ZIP = "mnist_rotation_new.zip"
_MEMBER = r"(?:.*/)?mnist_all_rotation_normalized_float_(train_valid|test)\.amat"

_REFERENCE = ("H. Larochelle, D. Erhan, A. Courville, J. Bergstra, Y. Bengio. An empirical evaluation of deep "
              "architectures on problems with many factors of variation. ICML 2007.")

_DESCRIPTION = """Rotated MNIST ({source}).

Each MNIST digit rotated by an angle drawn uniformly in [0, 2*pi) (Larochelle et al. 2007).
x_train ({n_train}, 784), x_valid ({n_valid}, 784), x_test ({n_test}, 784): float32 grey levels in [0, 1],
rows are 28x28 images in row-major order; y_*: uint8 digit 0-9.
{detail}
Reference: {reference}
"""


def rotate_images(images, angles, *, chunk_size=2048) -> np.ndarray:
    """Rotate each image about its centre by its angle (radians), bilinear, zero outside.

    Equal (to float rounding) to ``scipy.ndimage.rotate(image, np.degrees(angle), reshape=False,
    order=1, mode="grid-constant")`` for each image, but vectorised over images
    (62,000 MNIST digits take a few seconds on one core).

    Parameters
    ----------
    images : array-like of shape (n, h, w)
        Real numbers (any real dtype; computed in float32), finite.
    angles : array-like of shape (n,)
        The angle of each image, in radians, finite.
    chunk_size : int >= 1, default=2048
        Images rotated at once (bounds the temporaries).

    Returns
    -------
    ndarray of shape (n, h, w), float32
        The rotated images.

    Examples
    --------
    A bright pixel above the centre of a 3x3 image moves to the left of it after a quarter turn
    (counter-clockwise, as :func:`scipy.ndimage.rotate`):

    >>> import numpy as np
    >>> from orbitkernels.datasets import rotate_images
    >>> image = np.zeros((1, 3, 3))
    >>> image[0, 0, 1] = 1.0
    >>> rotated = rotate_images(image, [np.pi / 2])
    >>> rotated.dtype.name, rotated.shape
    ('float32', (1, 3, 3))
    >>> rotated[0].round(3).tolist()
    [[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 0.0]]
    """
    chunk_size = check_int(chunk_size, "chunk_size", min_value=1)
    images = np.asarray(images)
    angles = np.asarray(angles, dtype=np.float64)
    if images.ndim != 3:
        raise ValueError(f"images must be (n, height, width); got shape {images.shape}")
    # the float32 copy below would drop imaginary parts (with a mere warning) and spread NaN to the neighbours
    check_real_dtype(images, "images")
    if images.dtype.kind == "f" and images.size and not all_finite(images):
        raise ValueError("images contain NaN or inf")
    if angles.shape != (images.shape[0],):
        raise ValueError(f"angles must have shape ({images.shape[0]},); got {angles.shape}")
    if not np.isfinite(angles).all():
        raise ValueError("angles contain NaN or inf")
    n, h, w = images.shape
    out = np.empty((n, h, w), dtype=np.float32)
    rows, cols = np.mgrid[0:h, 0:w]
    dr = (rows - (h - 1) / 2).ravel()
    dc = (cols - (w - 1) / 2).ravel()
    H, W = h + 2, w + 2  # one pixel of zeros around each image
    for start in range(0, n, chunk_size):
        stop = min(n, start + chunk_size)
        m = stop - start
        padded = np.zeros((m, H, W), dtype=np.float32)
        padded[:, 1:-1, 1:-1] = images[start:stop]
        flat = padded.reshape(-1)
        cos = np.cos(angles[start:stop])[:, None]
        sin = np.sin(angles[start:stop])[:, None]
        # source coordinates of every output pixel (inverse rotation about the centre)
        r = np.clip(cos * dr + sin * dc + (h - 1) / 2, -1, h)
        c = np.clip(-sin * dr + cos * dc + (w - 1) / 2, -1, w)
        r0, c0 = np.floor(r), np.floor(c)
        fr, fc = (r - r0).astype(np.float32), (c - c0).astype(np.float32)
        base = (np.arange(m) * (H * W))[:, None]
        i0 = r0.astype(np.int64) + 1
        j0 = c0.astype(np.int64) + 1
        i1 = np.minimum(i0 + 1, H - 1)
        j1 = np.minimum(j0 + 1, W - 1)
        top_left, top_right = flat[base + i0 * W + j0], flat[base + i0 * W + j1]
        bottom_left, bottom_right = flat[base + i1 * W + j0], flat[base + i1 * W + j1]
        top = top_left + fc * (top_right - top_left)
        bottom = bottom_left + fc * (bottom_right - bottom_left)
        out[start:stop] = (top + fr * (bottom - top)).reshape(m, h, w)
    return out


def make_rotated_mnist(mnist_bunch, n_train=10000, n_valid=2000, n_test=50000, random_state=0) -> Bunch:
    """Regenerate Rotated MNIST from MNIST following the published protocol (Larochelle et al. 2007).

    The ``n_train + n_valid`` training/validation digits are drawn without
    replacement from MNIST's training set; the ``n_test`` test digits are drawn
    without replacement from the *rest* of MNIST (the unused training digits
    plus MNIST's test set), so no digit appears in two splits.  Every digit is
    rotated about its centre by its own angle drawn uniformly in [0, 2*pi)
    (bilinear interpolation, zeros outside, see :func:`rotate_images`) after
    scaling the grey levels to [0, 1].  The result is deterministic for an
    integer ``random_state``.  This is *not* the official file: results on it
    must say "regenerated".

    Parameters
    ----------
    mnist_bunch : mapping with x_train, y_train, x_test, y_test
        As returned by :func:`load_mnist` (uint8 images (n, h, w)).
    n_train, n_valid, n_test : int >= 0, default=10000, 2000, 50000
        Split sizes (the published ones by default); smaller for tests.
    random_state : int, RandomState instance or None, default=0
        Seed of the draws and angles.

    Returns
    -------
    data : sklearn.utils.Bunch
        With the keys:

        x_train : ndarray of shape (n_train, h*w), float32
            Grey levels in [0, 1], rows of row-major images.
        y_train : ndarray of shape (n_train,), uint8
            The digit 0-9.
        x_valid, y_valid, x_test, y_test
            The same for the other two splits.
        angles : Bunch of train, valid, test
            The angle of each digit (float64 radians).
        mnist_index : Bunch of train, valid, test
            Row of each digit (int64) in MNIST's training set followed by its test set.
        source : str
            "regenerated".
        random_state
            The ``random_state`` given.
        description : str
            Text describing the arrays, their origin and the reference.

    Examples
    --------
    Any MNIST-like mapping will do; here 40 random 28x28 "digits":

    >>> import numpy as np
    >>> from orbitkernels.datasets import make_rotated_mnist
    >>> rng = np.random.default_rng(0)
    >>> mnist = {"x_train": rng.integers(0, 256, (30, 28, 28), dtype=np.uint8), "y_train": np.arange(30) % 10,
    ...          "x_test": rng.integers(0, 256, (10, 28, 28), dtype=np.uint8), "y_test": np.arange(10)}
    >>> rot = make_rotated_mnist(mnist, n_train=20, n_valid=5, n_test=10, random_state=0)
    >>> rot.x_train.shape, rot.x_valid.shape, rot.x_test.shape, rot.source
    ((20, 784), (5, 784), (10, 784), 'regenerated')
    >>> set(rot.mnist_index.train) & set(rot.mnist_index.test)  # no digit in two splits
    set()
    """
    try:
        x_tr, y_tr = np.asarray(mnist_bunch["x_train"]), np.asarray(mnist_bunch["y_train"])
        x_te, y_te = np.asarray(mnist_bunch["x_test"]), np.asarray(mnist_bunch["y_test"])
    except (KeyError, TypeError) as exc:
        raise TypeError("mnist_bunch must be a mapping with x_train, y_train, x_test, y_test "
                        f"(see load_mnist); got {type(mnist_bunch).__name__}") from exc
    for name, x in (("x_train", x_tr), ("x_test", x_te)):
        if x.ndim != 3 or x.dtype != np.uint8:
            raise ValueError(f"mnist_bunch[{name!r}] must be uint8 images (n, height, width); "
                             f"got {x.dtype} of shape {x.shape}")
    if x_tr.shape[1:] != x_te.shape[1:]:
        raise ValueError(f"train and test images differ in size: {x_tr.shape[1:]} vs {x_te.shape[1:]}")
    if len(y_tr) != len(x_tr) or len(y_te) != len(x_te):
        raise ValueError("mnist_bunch: the number of labels differs from the number of images")
    n_train = check_int(n_train, "n_train", min_value=0)
    n_valid = check_int(n_valid, "n_valid", min_value=0)
    n_test = check_int(n_test, "n_test", min_value=0)
    n_tv = n_train + n_valid
    if n_tv > len(x_tr):
        raise ValueError(f"n_train + n_valid = {n_tv} exceeds the {len(x_tr)} MNIST training digits")
    n_pool = len(x_tr) - n_tv + len(x_te)
    if n_test > n_pool:
        raise ValueError(f"n_test = {n_test} exceeds the {n_pool} MNIST digits left after the training and "
                         "validation draws")
    seed_text = repr(random_state) if isinstance(random_state, (int, np.integer)) or random_state is None else \
        type(random_state).__name__
    rng = check_random_state(random_state)
    perm = rng.permutation(len(x_tr))
    pool = np.concatenate([perm[n_tv:], len(x_tr) + np.arange(len(x_te))])
    test_index = rng.choice(pool, size=n_test, replace=False)
    index = np.concatenate([perm[:n_tv], test_index]).astype(np.int64)
    angles = rng.uniform(0.0, 2.0 * np.pi, size=index.size)

    all_x = np.concatenate([x_tr, x_te])
    all_y = np.concatenate([y_tr, y_te]).astype(np.uint8, copy=False)
    images = all_x[index].astype(np.float32) / np.float32(255.0)
    rotated = rotate_images(images, angles)
    np.clip(rotated, 0.0, 1.0, out=rotated)  # bilinear weights are convex; this only removes rounding
    flat = rotated.reshape(index.size, int(np.prod(x_tr.shape[1:])))  # -1 cannot be inferred for 0 digits
    cuts = {"train": slice(0, n_train), "valid": slice(n_train, n_tv), "test": slice(n_tv, index.size)}
    out = Bunch()
    for split, sl in cuts.items():
        out[f"x_{split}"] = flat[sl]
        out[f"y_{split}"] = all_y[index[sl]]
    out.angles = Bunch(**{split: angles[sl] for split, sl in cuts.items()})
    out.mnist_index = Bunch(**{split: index[sl] for split, sl in cuts.items()})
    out.source = "regenerated"
    out.random_state = random_state
    out.description = _DESCRIPTION.format(
        source=f"REGENERATED from MNIST with random_state={seed_text}, not the official file",
        n_train=n_train, n_valid=n_valid, n_test=n_test, reference=_REFERENCE,
        detail=("Regenerated: train/valid digits from MNIST train, test digits from the rest of MNIST train plus "
                "MNIST test (disjoint); angles (radians) and mnist_index (row in MNIST train ++ MNIST test) are "
                "given per split. Label results on this set 'regenerated Rotated MNIST'."),
    )
    return out


def _read_official(path):
    tables = {}
    with archive_errors(path):
        for name, f in iter_archive(path, _MEMBER):
            kind = "train_valid" if name.endswith("train_valid.amat") else "test"
            if kind in tables:
                raise DatasetFormatError(f"{str(path)!r} holds two {kind} .amat files")
            tables[kind] = read_amat(f, dtype=np.float32)
    missing = {"train_valid", "test"} - set(tables)
    expect(not missing, f"{str(path)!r} lacks mnist_all_rotation_normalized_float_{'/'.join(sorted(missing))}.amat")
    out = {}
    for kind, table in tables.items():
        where = f"{path} ({kind}.amat)"
        expect(table.shape[1] == 785, f"{where}: rows should hold 784 pixels and a label; got {table.shape[1]} columns")
        expect_records("rotated_mnist", kind, len(table), where)
        x, y = table[:, :784], table[:, 784]
        expect(np.isfinite(x).all() and x.min() >= 0 and x.max() <= 1,
               f"{where}: pixel values outside [0, 1] (min {x.min()}, max {x.max()})")
        expect(np.array_equal(y, np.round(y)) and y.min() >= 0 and y.max() <= 9,
               f"{where}: labels must be integers 0-9")
        out[kind] = (np.ascontiguousarray(x), y.astype(np.uint8))
    (x_tv, y_tv), (x_te, y_te) = out["train_valid"], out["test"]
    expect(len(x_tv) > OFFICIAL_N_VALID,
           f"{path}: train_valid.amat has {len(x_tv)} rows; the last {OFFICIAL_N_VALID} are the validation set")
    cut = len(x_tv) - OFFICIAL_N_VALID
    return Bunch(x_train=x_tv[:cut], y_train=y_tv[:cut], x_valid=x_tv[cut:], y_valid=y_tv[cut:],
                 x_test=x_te, y_test=y_te)


def load_rotated_mnist(data_home=None, source="auto", download=True, random_state=0, *,
                       n_train=None, n_valid=None, n_test=None) -> Bunch:
    """Load Rotated MNIST (Larochelle et al. 2007): 10,000 train, 2,000 validation, 50,000 test digits.

    The official zip has no published checksum: its two tables' shape, pixel
    range and labels are checked instead.

    Parameters
    ----------
    data_home : str, os.PathLike or None, default=None
        The data folder (see :func:`get_data_home`).
    source : {"auto", "official", "regenerated"}, default="auto"
        "official": the published ``mnist_rotation_new.zip`` (its
        ``..._train_valid.amat``: first 10,000 rows train, last 2,000
        validation; ``..._test.amat``: 50,000 test rows), downloaded when
        missing and ``download=True``.  "regenerated": :func:`make_rotated_mnist`
        applied to :func:`load_mnist` (``download`` applies to MNIST).  "auto":
        official when the zip is already in the data folder (and no split size
        is given), else regenerated.
    download : bool, default=True
        Download the missing files (the zip, or MNIST for a regeneration) into ``data_home``.
    random_state : int, RandomState instance or None, default=0
        Seed of the regeneration (ignored for the official files).
    n_train, n_valid, n_test : int, optional
        Split sizes of the regeneration (default 10,000 / 2,000 / 50,000); not
        allowed with the official files.

    Returns
    -------
    data : sklearn.utils.Bunch
        With the keys:

        x_train : ndarray of shape (10000, 784), float32
            Grey levels in [0, 1] (28x28 images, row-major).
        y_train : ndarray of shape (10000,), uint8
            The digit 0-9.
        x_valid : ndarray of shape (2000, 784), float32
            Validation images.
        y_valid : ndarray of shape (2000,), uint8
            Validation labels.
        x_test : ndarray of shape (50000, 784), float32
            Test images.
        y_test : ndarray of shape (50000,), uint8
            Test labels.
        source : str
            "official" or "regenerated".
        description : str
            Text describing the arrays, their origin and the reference.

        When regenerated, also ``angles``, ``mnist_index`` and ``random_state``
        (see :func:`make_rotated_mnist`).

    Raises
    ------
    ValueError
        An unknown ``source``, or split sizes with ``source="official"``.
    DatasetNotFoundError
        No usable file found (and ``download=False`` or the download failed).
    DatasetChecksumError
        An MNIST file's checksum does not match; it was not read.
    DatasetFormatError
        The zip (or MNIST) has unexpected content.

    Examples
    --------
    >>> from orbitkernels.datasets import load_rotated_mnist
    >>> rot = load_rotated_mnist()  # doctest: +SKIP
    >>> rot.x_train.shape, rot.x_valid.shape, rot.x_test.shape  # doctest: +SKIP
    ((10000, 784), (2000, 784), (50000, 784))

    Without the official zip (here an empty folder) and with ``download=False``, the error says what to put where:

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as home:
    ...     load_rotated_mnist(data_home=home, source="official", download=False)
    Traceback (most recent call last):
        ...
    orbitkernels.datasets._base.DatasetNotFoundError: Rotated MNIST (mnist-rot, 'mnist_rotation_new')
    ('rotated_mnist'): no usable files ... mnist_rotation_new.zip ... download=False, so nothing was fetched. ...
    """
    if source not in ("auto", "official", "regenerated"):
        raise ValueError(f"source must be 'auto', 'official' or 'regenerated'; got {source!r}")
    sizes = {"n_train": n_train, "n_valid": n_valid, "n_test": n_test}
    if source == "auto":
        source = "official" if (get_data_home(data_home) / _ZIP).is_file() else "regenerated"
        if source == "official" and any(v is not None for v in sizes.values()):
            source = "regenerated"  # explicit sizes ask for a regeneration
    if source == "official":
        given = [k for k, v in sizes.items() if v is not None]
        if given:
            raise ValueError(f"{', '.join(given)} only apply to source='regenerated'; the official files have "
                             "fixed splits")
        found = resolve("rotated_mnist", data_home, download=download, forms=("canonical",))
        bunch = _read_official(found[_ZIP])
        bunch.source = "official"
        bunch.description = _DESCRIPTION.format(
            source=f"official file {found[_ZIP]}", n_train=len(bunch.x_train), n_valid=len(bunch.x_valid),
            n_test=len(bunch.x_test), reference=_REFERENCE,
            detail="Official: mnist_rotation_new.zip; the last 2,000 rows of the train_valid table are the "
                   "validation set.")
        return bunch
    defaults = {"n_train": 10000, "n_valid": 2000, "n_test": 50000}
    sizes = {k: defaults[k] if v is None else v for k, v in sizes.items()}
    check_random_state(random_state)  # a bad seed is refused before MNIST is read (and checksummed)
    return make_rotated_mnist(load_mnist(data_home, download=download), random_state=random_state, **sizes)
