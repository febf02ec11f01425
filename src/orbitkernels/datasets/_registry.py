"""The files each dataset can be read from, with their checksums and addresses.

Checksums are only those known with certainty:

* this project's ``.npz`` conversions: the sha256 values of the shared data
  README;
* MNIST's four IDX files: the MD5s published with the dataset and used by
  torchvision (``datasets.MNIST.resources``), plus Keras' ``mnist.npz`` sha256
  (``keras.datasets.mnist``), which has the same arrays as our conversion;
* CIFAR-10's python archive: the MD5 published on the dataset's page.

``qm7.mat``, the FSDD GitHub archive, ``lingspam_public.tar.gz`` and
``mnist_rotation_new.zip`` have no checksum published by their authors that we
could confirm, so none is recorded (``hashes=()``): they are downloaded without
a hash check and their *structure* is checked by the loader instead (keys,
shapes, dtypes, value ranges, file-name patterns).  If you know a trustworthy
digest, add it here.

Tests replace entries of :data:`REGISTRY` (it is a plain dict) with copies that
carry the checksums of the small stand-in files they build.
"""
from __future__ import annotations

from ._base import DataFile, DatasetInfo

__all__ = ["EXPECTED_RECORDS", "REGISTRY"]

_MNIST_MIRROR = "https://ossci-datasets.s3.amazonaws.com/mnist/"  # torchvision's mirror of LeCun's files

REGISTRY: dict[str, DatasetInfo] = {
    "mnist": DatasetInfo(
        name="mnist",
        title="MNIST handwritten digits",
        reference="Y. LeCun, L. Bottou, Y. Bengio, P. Haffner. Gradient-based learning applied to document "
                  "recognition. Proceedings of the IEEE 86(11):2278-2324, 1998.",
        homepage="http://yann.lecun.com/exdb/mnist/",
        converted=(DataFile(
            "mnist.npz",
            hashes=(
                "sha256:06af5dfe73b70e3bc1c36439982b18a8d76803db9b544f6fdf838a37fbb01b64",  # orbitkernels
                "sha256:731c5ac602752760c8e48fbffcf8c3b850d9dc2a2aedcf2cc48468fc17b673d1",  # Keras' mnist.npz
            ),
            note="orbitkernels' .npz conversion (Keras' mnist.npz, same arrays, is accepted too)",
        ),),
        canonical=(
            DataFile("train-images-idx3-ubyte.gz", ("md5:f68b3c2dcbeaaa9fbdd348bbdeb94873",),
                     _MNIST_MIRROR + "train-images-idx3-ubyte.gz"),
            DataFile("train-labels-idx1-ubyte.gz", ("md5:d53e105ee54ea40749a09fcbcd1e9432",),
                     _MNIST_MIRROR + "train-labels-idx1-ubyte.gz"),
            DataFile("t10k-images-idx3-ubyte.gz", ("md5:9fb629c4189551a2d022fa330f9573f3",),
                     _MNIST_MIRROR + "t10k-images-idx3-ubyte.gz"),
            DataFile("t10k-labels-idx1-ubyte.gz", ("md5:ec29112dd5afa0611ce80d1b7f02629c",),
                     _MNIST_MIRROR + "t10k-labels-idx1-ubyte.gz"),
        ),
    ),
    "rotated_mnist": DatasetInfo(
        name="rotated_mnist",
        title="Rotated MNIST (mnist-rot, 'mnist_rotation_new')",
        reference="H. Larochelle, D. Erhan, A. Courville, J. Bergstra, Y. Bengio. An empirical evaluation of deep "
                  "architectures on problems with many factors of variation. ICML 2007.",
        homepage="https://sites.google.com/a/lisa.iro.umontreal.ca/public_static_twiki/variations-on-the-mnist-digits",
        converted=(),
        canonical=(DataFile(
            "mnist_rotation_new.zip", (),
            "http://www.iro.umontreal.ca/~lisa/icml2007data/mnist_rotation_new.zip",
            note="no published checksum; the two .amat files' shape and value range are checked",
        ),),
    ),
    "qm7": DatasetInfo(
        name="qm7",
        title="QM7 molecular atomization energies",
        reference="M. Rupp, A. Tkatchenko, K.-R. Mueller, O. A. von Lilienfeld. Fast and accurate modeling of "
                  "molecular atomization energies with machine learning. Phys. Rev. Lett. 108:058301, 2012; "
                  "G. Montavon et al. Learning invariant representations of molecules for atomization energy "
                  "prediction. NIPS 2012; L. C. Blum, J.-L. Reymond. J. Am. Chem. Soc. 131:8732, 2009.",
        homepage="http://quantum-machine.org/datasets/",
        converted=(DataFile(
            "qm7.npz", ("sha256:2913acae45d3953b2bc919eddda25b6f857996dcf3c33602b98feecb14817aff",),
            note="orbitkernels' .npz conversion (R in angstrom, Z, T; no Coulomb matrices, no folds)",
        ),),
        canonical=(DataFile(
            "qm7.mat", (), "http://quantum-machine.org/data/qm7.mat",
            note="no published checksum; keys X, T, P, Z, R and their shapes are checked",
        ),),
    ),
    "fsdd": DatasetInfo(
        name="fsdd",
        title="Free Spoken Digit Dataset (FSDD) v1.0.10",
        reference="Z. Jackson et al. Free Spoken Digit Dataset (FSDD), v1.0.10. Zenodo, doi:10.5281/zenodo.1342401.",
        homepage="https://github.com/Jakobovski/free-spoken-digit-dataset",
        converted=(DataFile(
            "fsdd.npz", ("sha256:cbd024488933cb9541a6575c9946d59d31b374fd515decda877fa4bf057c6e8d",),
            note="orbitkernels' .npz conversion (3,000 recordings, zero-padded)",
        ),),
        canonical=(DataFile(
            # GitHub builds tag archives on the fly; no checksum is published for them.
            "free-spoken-digit-dataset-1.0.10.tar.gz", (),
            "https://github.com/Jakobovski/free-spoken-digit-dataset/archive/refs/tags/v1.0.10.tar.gz",
            note="no published checksum; recordings/{digit}_{speaker}_{index}.wav names and wav format are checked",
        ),),
    ),
    "lingspam": DatasetInfo(
        name="lingspam",
        title="Ling-Spam corpus",
        reference="I. Androutsopoulos, J. Koutsias, K. V. Chandrinos, G. Paliouras, C. D. Spyropoulos. An evaluation "
                  "of naive Bayesian anti-spam filtering. Workshop on Machine Learning in the New Information Age, "
                  "ECML 2000, pp. 9-17.",
        homepage="http://www.aueb.gr/users/ion/data/",
        converted=(DataFile(
            "lingspam.npz", ("sha256:4385b9e1d63f7fa22af54b2b1d670aae1d57173c54a0c603a1d555e96c0e413f",),
            note="orbitkernels' .npz conversion (four versions, bag of words of 'bare')",
        ),),
        canonical=(DataFile(
            "lingspam_public.tar.gz", (), "http://www.aueb.gr/users/ion/data/lingspam_public.tar.gz",
            note="no published checksum; lingspam_public/<version>/part<k>/*.txt layout is checked",
        ),),
    ),
    "cifar10": DatasetInfo(
        name="cifar10",
        title="CIFAR-10 (python version)",
        reference="A. Krizhevsky. Learning multiple layers of features from tiny images. Technical report, "
                  "University of Toronto, 2009.",
        homepage="https://www.cs.toronto.edu/~kriz/cifar.html",
        converted=(),
        canonical=(DataFile(
            "cifar-10-python.tar.gz", ("md5:c58f30108f718f92721af3b95e8e0a9d",),
            "https://www.cs.toronto.edu/~kriz/cifar-10-python.tar.gz",
        ),),
    ),
}


#: Records in each part of the published datasets (both forms: original files and this project's conversion).
#: A file that passes its checksum (or has none) but holds another number of records is truncated or another
#: release: the loaders raise :class:`DatasetFormatError` rather than return a silently smaller dataset.
#: Tests that build small stand-in files replace these counts with the stand-ins' own.
EXPECTED_RECORDS: dict[str, dict[str, int]] = {
    "mnist": {"x_train": 60000, "x_test": 10000},
    "rotated_mnist": {"train_valid": 12000, "test": 50000},
    "qm7": {"molecules": 7165},
    "fsdd": {"recordings": 3000},
    "lingspam": {"messages": 2893},
    "cifar10": {"train": 50000, "test": 10000},
}
