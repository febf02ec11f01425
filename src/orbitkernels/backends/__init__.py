"""Array back-ends for the heavy loops of the projection engine.

The engine (:mod:`orbitkernels.features._engine`) is written once against a small
interface, in the manner of kymatio's front-end/back-end split: a back-end
provides array conversion, matmul, real FFTs, cos/sin and the weighted
bincount-CDF of GICDF. ``"numpy"`` (NumPy + SciPy's pocketfft) is always
available; ``"torch"`` runs the same loops on any PyTorch device and is an
optional extra (``pip install orbitkernels[torch]``), imported only when asked.

On the CPU the two poolings run fused numba kernels (:mod:`._fused`) when numba is
installed (the ``fast`` extra); :func:`use_numba` switches them off or on (also
``ORBITKERNELS_NUMBA=0``), :func:`numba_active` says which code runs.

Back-end objects are cheap and stateless apart from the device, and pickle by
name so fitted estimators stay portable.
"""
from __future__ import annotations

from ._fused import numba_active, numba_available, use_numba

__all__ = ["get_backend", "BACKENDS", "use_numba", "numba_active", "numba_available"]

BACKENDS = ("numpy", "torch")


def get_backend(name="numpy", device=None):
    """The back-end called ``name`` ("numpy" or "torch") on ``device``.

    Parameters
    ----------
    name : {"numpy", "torch"}, default="numpy"
        The back-end (:data:`BACKENDS`).
    device : str, int, torch.device or None, default=None
        For torch, the device ("cpu", "cuda", "cuda:1"...; None: "cpu"). NumPy
        runs on the CPU: it takes only None or "cpu".

    Returns
    -------
    NumpyBackend or TorchBackend
        A stateless back-end object (pickled by name and device).

    Raises
    ------
    ValueError
        An unknown name, a device other than the CPU for NumPy, or a string that is no torch device.
    RuntimeError
        A torch device this machine or this torch build cannot use (e.g. "cuda" without a GPU).
    ImportError
        ``name="torch"`` without torch installed (the message says how to install it).

    Examples
    --------
    >>> import numpy as np
    >>> from orbitkernels.backends import get_backend
    >>> bk = get_backend("numpy")
    >>> bk.name
    'numpy'
    >>> bk.matmul(np.eye(2), np.array([1.0, 2.0])).tolist()
    [1.0, 2.0]
    >>> get_backend("torch", device="cuda").name  # doctest: +SKIP
    'torch'

    NumPy runs on the CPU only:

    >>> get_backend("numpy", device="cuda")
    Traceback (most recent call last):
        ...
    ValueError: the numpy backend runs on the CPU only; got device='cuda' (use backend='torch')
    """
    if not isinstance(name, str) or name not in BACKENDS:
        raise ValueError(f"backend must be one of {BACKENDS}; got {name!r}")
    if name == "numpy":
        if device is not None and str(device) != "cpu":  # "cpu" or torch.device("cpu")
            raise ValueError(f"the numpy backend runs on the CPU only; got device={device!r} (use backend='torch')")
        from .numpy import NumpyBackend

        return NumpyBackend()
    from .torch import TorchBackend

    return TorchBackend(device)
