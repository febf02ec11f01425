"""Models that scikit-learn lacks: learning with invariances (Teo et al. 2007).

* :class:`InvariantSVC`: the invariance-sensitive max-margin loss (Eq. 2, Eq. 5),
  trained by column generation over worst-case transformations (Algorithm 1)
  or by its Pegasos variant (Algorithm 2).
* :class:`InvariantLinearClassifier` and :func:`worst_case_scaling`: FSCALE/FDROP,
  the worst-case scaling of at most K features (Eq. 10, Algorithm 3).

* :class:`~orbitkernels.models.ridge.RidgePath`: the one ridge / RLS path solver (GURLS-style,
  Mroueh §6, Raj §4): a grid of α from one eigendecomposition, exact leave-one-out;
  :func:`~orbitkernels.models.ridge.cholesky_path`: a few α from one Gram matrix (validation splits, D in the
  thousands).
* :class:`DistributedRidge`, :class:`DistributedRidgeClassifier`: the same ridge from moments
  accumulated over numpy or dask blocks (their dask plumbing is the adapter :mod:`orbitkernels.dask`).

SVC, k-NN and kernel ridge come from scikit-learn.
"""
from .distributed_ridge import DistributedRidge, DistributedRidgeClassifier
from .feature_scaling import (
    InvariantLinearClassifier,
    check_scaling_params,
    fscale_worst_case,
    worst_case_attack,
    worst_case_scaling,
)
from .invariant_svm import IDENTITY, GroupElement, Identity, InvariantSVC, unit_margin, zero_one_cost
from .ridge import RidgePath, centre_gram, cholesky_path

__all__ = [
    "RidgePath",
    "cholesky_path",
    "centre_gram",
    "DistributedRidge",
    "DistributedRidgeClassifier",
    "InvariantSVC",
    "Identity",
    "IDENTITY",
    "GroupElement",
    "zero_one_cost",
    "unit_margin",
    "InvariantLinearClassifier",
    "check_scaling_params",
    "fscale_worst_case",
    "worst_case_scaling",
    "worst_case_attack",
]
