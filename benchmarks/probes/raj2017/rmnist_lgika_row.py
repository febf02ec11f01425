"""What the Rotated MNIST probes of Raj et al. 2017's LGIKA (RF) row start from: the regenerated split, the
reproduction's "reduced" configuration and the rotation law and γ its validation chose (cell ``select|lgika_rf`` of
``results/raj2017/rotated_mnist.json``), with γ's scale, the median squared distance of the training rows."""
from pathlib import Path
from types import SimpleNamespace

from orbitkernels.experiments import raj2017
from orbitkernels.experiments._raj_eval import median_sq_dist
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
