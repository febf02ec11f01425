"""Dataset loaders with checksums, and generators.

Loaders follow scikit-learn's ``fetch_*`` conventions: they return a
:class:`sklearn.utils.Bunch`, look for files in a data folder
(:func:`get_data_home`: the ``data_home`` argument, else the
``ORBITKERNELS_DATA`` environment variable, else ``~/.cache/orbitkernels``),
and download the original files when ``download=True``.  Each loader accepts
this project's ``.npz`` conversion or the dataset's original files; every file
with a known checksum is verified before it is read (:class:`DatasetChecksumError`
otherwise), and a missing dataset raises :class:`DatasetNotFoundError` saying
what to put where.  :func:`dataset_status` reports what the folder holds.

=====================  ==============================================================
load_mnist             MNIST (LeCun et al. 1998)
load_rotated_mnist     Rotated MNIST (Larochelle et al. 2007), official or regenerated
make_rotated_mnist     regenerate Rotated MNIST from MNIST with a seed
load_qm7               QM7 (Rupp et al. 2012), Coulomb matrices, 5 folds
coulomb_matrices       Coulomb matrices from nuclear charges and positions
load_fsdd              Free Spoken Digit Dataset (stand-in for TIDIGITS)
load_lingspam          Ling-Spam (Androutsopoulos et al. 2000)
load_cifar10           CIFAR-10 (Krizhevsky 2009)
make_xperm             synthetic permutation-invariant sequence task
=====================  ==============================================================
"""
from ._base import (
    ENV_VAR,
    DatasetChecksumError,
    DatasetFormatError,
    DatasetNotFoundError,
    file_hash,
    get_data_home,
)
from ._formats import RestrictedUnpickler, read_amat, read_idx
from ._registry import REGISTRY
from ._status import dataset_status
from .cifar10 import CIFAR10_CLASSES, load_cifar10
from .fsdd import fsdd_split, load_fsdd
from .lingspam import LINGSPAM_VERSIONS, load_lingspam
from .mnist import load_mnist
from .qm7 import BOHR_IN_ANGSTROM, coulomb_matrices, load_qm7, qm7_fold_indices
from .rotated_mnist import load_rotated_mnist, make_rotated_mnist, rotate_images
from .xperm import bag_of_words, make_xperm

__all__ = [
    "BOHR_IN_ANGSTROM",
    "CIFAR10_CLASSES",
    "ENV_VAR",
    "LINGSPAM_VERSIONS",
    "REGISTRY",
    "DatasetChecksumError",
    "DatasetFormatError",
    "DatasetNotFoundError",
    "RestrictedUnpickler",
    "bag_of_words",
    "coulomb_matrices",
    "dataset_status",
    "file_hash",
    "fsdd_split",
    "get_data_home",
    "load_cifar10",
    "load_fsdd",
    "load_lingspam",
    "load_mnist",
    "load_qm7",
    "load_rotated_mnist",
    "make_rotated_mnist",
    "make_xperm",
    "qm7_fold_indices",
    "read_amat",
    "read_idx",
    "rotate_images",
]
