"""The one wrapper of scikit-learn's pairwise kernels used by the feature maps, the exact kernels and the models.

Below ``features`` and ``kernels`` in the layers (docs/architecture.md), so both use it without importing each other.
"""
from __future__ import annotations

import numpy as np
from sklearn.metrics.pairwise import pairwise_kernels

__all__ = ["PairwiseKernel", "rbf_from_dots"]


class PairwiseKernel:
    """A scikit-learn pairwise kernel with bound parameters: ``PairwiseKernel(metric, params)(A, B)``.

    ``metric`` is a name of ``sklearn.metrics.pairwise.PAIRWISE_KERNEL_FUNCTIONS`` or a
    callable; parameters a kernel does not take are dropped (``filter_params=True``), as
    ``sklearn.kernel_approximation.Nystroem`` does. A class rather than a lambda so that
    fitted estimators holding one pickle.
    """

    def __init__(self, metric, params=None):
        self.metric = metric
        self.params = dict(params or {})

    def __call__(self, A, B):
        return pairwise_kernels(A, B, metric=self.metric, filter_params=True, **self.params)


def rbf_from_dots(dots, x_sq, t_sq, gamma, exp=np.exp, clip=False):
    """Gaussian kernel values from inner products: ``exp(γ (2<x, t> - |x|² - |t|²))``.

    ``x_sq`` and ``t_sq`` must broadcast against ``dots``; ``exp`` is the exponential of
    the array library holding them (a back-end's ``exp`` for torch tensors). For a unitary
    action the norms are those of the untransformed rows, so the FFT paths get k(g x, t) from
    their correlations alone (Raj et al. 2017, §2.2.2). ``clip=True`` (NumPy arrays) caps the
    exponent at 0: rounding can make ``2<x, t> - |x|² - |t|²`` slightly positive for ``x ≈ t``,
    and a solver that needs a positive semi-definite Gram matrix must not see ``k > 1``.
    """
    arg = dots * 2.0 - x_sq - t_sq
    if clip:
        np.minimum(arg, 0.0, out=arg)
    arg *= gamma
    return exp(arg)
