"""Compatibility module: the old home of the scale-out code, split by layer. Import from the new places:

* :mod:`orbitkernels.dask` (the Dask adapter, above the core): :func:`~orbitkernels.dask.fit_dask`,
  :func:`~orbitkernels.dask.transform_dask`, :func:`~orbitkernels.dask.fit_sample_indices`,
  :data:`~orbitkernels.dask.FIT_SAMPLE_SIZE`, :func:`~orbitkernels.dask.is_dask_array`;
* :mod:`orbitkernels.models` (:mod:`orbitkernels.models.distributed_ridge`):
  :class:`~orbitkernels.models.DistributedRidge`, :class:`~orbitkernels.models.DistributedRidgeClassifier`,
  :func:`~orbitkernels.models.distributed_ridge.holdout_mask`; their ridge path is
  :class:`orbitkernels.models.ridge.RidgePath`.

Everything that was public here is re-exported, so old imports and old pickles keep working.
"""
from .dask import FIT_SAMPLE_SIZE, fit_dask, fit_sample_indices, is_dask_array, transform_dask
from .models.distributed_ridge import DistributedRidge, DistributedRidgeClassifier, holdout_mask

__all__ = [
    "DistributedRidge",
    "DistributedRidgeClassifier",
    "FIT_SAMPLE_SIZE",
    "fit_dask",
    "fit_sample_indices",
    "holdout_mask",
    "is_dask_array",
    "transform_dask",
]
