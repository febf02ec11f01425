"""orbitkernels: learning with group invariances through kernels.

Subpackages
-----------
groups       actions of groups on data and distributions over them
kernels      exact Haar-integration / orbit kernels (Gram matrices)
features     GICDF (Mroueh et al. 2015), orbit random Fourier and Nystroem
             features (Raj et al. 2017), all sharing one projection engine
models       invariant SVM (Teo et al. 2007), FSCALE/FDROP, distributed ridge
datasets     loaders with checksums and generators
experiments  reproductions of the three papers' tables and figures
backends     NumPy and torch array back-ends of the projection engine (fused numba kernels on the CPU)

Modules: ``dask`` (feature maps and ridge models on dask arrays), ``diagnostics`` (invariance error),
``demo``, ``bench`` (benchmarks) and ``cli`` (the ``orbitkernels`` command).
"""
from ._version import __version__

__all__ = ["__version__"]
