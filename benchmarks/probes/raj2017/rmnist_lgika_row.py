"""The common start of the Rotated MNIST probes of Raj et al. 2017's LGIKA (RF) row: a module they import.

What those probes start from: the regenerated split, the reproduction's "reduced" configuration and the rotation law
and γ its validation chose (cell ``select|lgika_rf`` of ``results/raj2017/rotated_mnist.json``), with γ's scale, the
median squared distance of the training rows. Imported by ``hyperkernel_seeds.py``, ``orthogonal_lgika_rmnist.py``
and ``rmnist_unit_norm.py``; run as a script it computes nothing (it answers --help).
"""
import argparse
from pathlib import Path
from types import SimpleNamespace

from orbitkernels.experiments import raj2017
from orbitkernels.experiments._common import PAPER_FREQUENCIES
from orbitkernels.experiments._raj_eval import median_sq_dist
from orbitkernels.features import OrbitFourierFeatures
from orbitkernels.groups import ImageRotation
from orbitkernels.utils.io import read_json

RECORD = Path("results/raj2017/rotated_mnist.json")


def lgika_row(seed=0):
    """``X, y, train, valid, test, cfg, chosen`` (the selection cell), ``scale``, ``gamma`` (chosen factor / scale)
    and ``group`` (rotations under the chosen law)."""
    _, X, y, train, valid, test = raj2017.rotated_mnist_split()
    chosen = read_json(RECORD)["cells"]["select|lgika_rf"]
    scale = median_sq_dist(X[train], seed=seed)
    return SimpleNamespace(X=X, y=y, train=train, valid=valid, test=test, chosen=chosen, scale=scale,
                           cfg=raj2017.CONFIGS["rotated_mnist"]["reduced"], gamma=chosen["gamma_factor"] / scale,
                           group=ImageRotation((28, 28), angle=raj2017._angle_law(chosen["law"])))


def lgika_map(row, gamma, seed, dim=14000, r=100):
    """The row's LGIKA (RF) feature map at the paper's size (``dim`` features: dim / 2 i.i.d. frequencies with a cos
    and a sin; ``r`` low-variance rotations under the chosen law), unfitted, where ``raj2017.engine_options`` says."""
    return OrbitFourierFeatures(row.group, sampling="qmc", gamma=gamma, n_components=dim // 2, n_group_samples=r,
                                frequencies=PAPER_FREQUENCIES, random_state=seed, **raj2017.engine_options())


def hyper_cell(F, row, seed=0):
    """The exact Gaussian hyperkernel on first-layer features ``F`` (``raj2017._image_hyper_cell``: γ₂ factor and
    λ on the validation split, refit on train + validation): test accuracy %, γ₂ factor, λ, best validation
    accuracy."""
    r = raj2017._image_hyper_cell(F, row.y, row.train, row.valid, row.test, 10, row.cfg["layer2_exact"]["factors"],
                                  seed)
    return {"accuracy": r["accuracy"], "layer2_factor": r["layer2_factor"], "lambda": r["lambda"],
            "valid_acc": raj2017._best_valid(r)}


if __name__ == "__main__":
    argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter).parse_args()
