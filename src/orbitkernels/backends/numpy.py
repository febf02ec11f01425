"""NumPy/SciPy back-end: BLAS GEMM, pocketfft (threaded through ``scipy.fft``), NumPy ufuncs.

The poolings (:meth:`NumpyBackend.trig_pool`, :meth:`NumpyBackend.rbf_pool`, :meth:`NumpyBackend.cdf_pool`)
run the fused numba kernels of :mod:`._fused` when numba is installed and not switched off
(``ORBITKERNELS_NUMBA=0`` or :func:`orbitkernels.backends.use_numba`), else the NumPy
code below, which is their reference.
"""
from __future__ import annotations

import contextlib
import os
import threading

import numpy as np
import scipy.fft

from . import _fused
from ..utils.validation import env_count, is_count_text
from ._common import rbf_pool_passes, trig_pool_passes

__all__: list[str] = []  # reached through orbitkernels.backends.get_backend


#: threads the engine and the FFTs use where the caller sets no other count (``ORBITKERNELS_NUM_THREADS``)
THREADS_ENV = "ORBITKERNELS_NUM_THREADS"
_local = threading.local()


def _env_threads():
    """``ORBITKERNELS_NUM_THREADS`` as a count, or None when unset; anything but a positive integer is an error."""
    return env_count(THREADS_ENV)


def _cores():
    try:
        return len(os.sched_getaffinity(0)) or 1  # the cores this process may run on (containers, taskset)
    except AttributeError:  # pragma: no cover - not on Linux
        return os.cpu_count() or 1


def _workers():
    """Threads for one call of SciPy's FFTs: 1 inside the engine's own pooling threads (they already share the
    cores), else ``ORBITKERNELS_NUM_THREADS``, else the usual knobs, so that OMP_NUM_THREADS=1 really means one core
    (scipy.fft's threads are separate from BLAS's), else every core this process may use."""
    inner = getattr(_local, "fft_workers", None)
    if inner is not None:
        return inner
    n = _env_threads()
    if n is not None:
        return n
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        # OpenMP's list form "4,2" gives the outermost level first: that level's count is this call's
        v = os.environ.get(var, "").split(",")[0].strip()
        if v and is_count_text(v):
            return max(1, int(v))
    return _cores()


def pool_threads():
    """Threads for the engine's cache-sized blocks (inverse FFTs and pooling of a chunk's rows, block by block).

    1 inside one of those threads; else ``ORBITKERNELS_NUM_THREADS`` if set (wherever the call comes from); else 1
    when called off the main thread (a caller that already runs transforms in parallel threads, e.g. dask's threaded
    scheduler or joblib's threading back-end, would otherwise multiply the threads by its own); else the FFT
    workers' count (:func:`_workers`).
    """
    if getattr(_local, "fft_workers", None) is not None:
        return 1
    n = _env_threads()
    if n is not None:
        return n
    if threading.current_thread() is not threading.main_thread():
        return 1
    return _workers()


#: products smaller than this (bytes of output) run whole in the calling thread: a split costs a few tens of µs
SPLIT_MIN_BYTES = 2**18
_controller = None


def _blas():
    """threadpoolctl's controller of the BLAS libraries loaded (NumPy's, SciPy's), made once: making one inspects
    every loaded library (0.36 ms a call), where limiting through a kept one takes 12 µs."""
    global _controller
    if _controller is None:
        from threadpoolctl import ThreadpoolController

        _controller = ThreadpoolController()
    return _controller


_one_blas_lock = threading.Lock()
_one_blas_owner = [None]  # the limiter of the thread that put BLAS on one thread, while that thread is within


@contextlib.contextmanager
def _blas_on_one_thread():
    """BLAS on one thread within, set and restored by the first thread to enter; the threads that enter while it is
    within change nothing.

    The count is the process's: with each thread setting and restoring its own limit, the second of two overlapping
    transforms saved the first one's limit (1) and put it back after both, leaving BLAS on one thread for the rest
    of the process. The setter restores, not the last thread to leave: with NumPy 2.4's OpenBLAS (0.3.31) a count
    restored from another thread than the one that had set the limit was sometimes ignored (measured: NumPy's
    OpenBLAS stayed on one thread, SciPy's was restored). A thread still within after the setter left runs its
    products on BLAS's own count.
    """
    limiter = None
    with _one_blas_lock:
        if _one_blas_owner[0] is None:
            limiter = _one_blas_owner[0] = _blas().limit(limits=1, user_api="blas")
    try:
        yield
    finally:
        if limiter is not None:
            with _one_blas_lock:
                limiter.restore_original_limits()
                _one_blas_owner[0] = None


@contextlib.contextmanager
def split_products(executor, parts):
    """Within: this thread's large stacked products (:meth:`NumpyBackend.matmul`, :meth:`NumpyBackend.multiply` of
    (planes, rows, columns) arrays: the FFT paths' per-frequency GEMMs) are split into ``parts`` ranges of planes
    run by ``executor``'s threads (:func:`_split_planes`), with BLAS on one thread throughout.

    Why: the engine computes each chunk's products (the spectrum's per-frequency GEMMs, the template GEMM,
    Nyström's K_ZZ^{-1/2}) in the caller's thread and then pools the chunk's blocks in its threads. With BLAS on
    every core, OpenBLAS's workers spin for a while after each product, on the cores the pooling threads need:
    those threads ran about 30 % of their time off the cores (2 cores, default rotation estimator, thread CPU time
    against wall time), and the transform on 2 cores was 1.05-1.37x one core. With the products split among the
    pooling threads and BLAS on one thread, no worker spins (``benchmarks/probes/perf/split_products.py``: the
    pooling threads on the cores 0.98-0.99 of their time, 1.15-1.61x faster over six runs). Each plane is the same
    BLAS call as in the whole stack on one BLAS thread (tested): the features do not depend on the number of
    threads.

    BLAS's thread count is the process's (threadpoolctl), so other threads' BLAS calls run on one thread while a
    transform is inside this context; the engine enters it only where it pools in threads (:func:`pool_threads`: on
    the main thread, or where ``ORBITKERNELS_NUM_THREADS`` asks for it), as scikit-learn's ``KMeans`` limits BLAS
    around its own threads.
    """
    saved = getattr(_local, "split", None)
    _local.split = (executor, int(parts))
    try:
        with _blas_on_one_thread():
            yield
    finally:
        _local.split = saved


def _split_planes(op, a, b, out, matmul):
    """``op(a, b, out=out)`` (``matmul``: a stack of matrix products, else an elementwise product) by ranges of its
    first axis (the spectrum's frequency planes) run side by side, or None where no split applies (outside
    :func:`split_products`, a small product, or operands that are not stacks of planes).

    Planes, not rows: a plane's product is then the same BLAS call as in the whole stack, hence the same bits,
    where a GEMM split by rows is not (OpenBLAS's kernels for the leftover rows round some sums another way: 60 x
    200 by 200 x 200 in float32, split in three).
    """
    split = getattr(_local, "split", None)
    if split is None or not isinstance(a, np.ndarray) or not isinstance(b, np.ndarray) or a.ndim != 3:
        return None
    executor, parts = split
    nf = a.shape[0]
    if (b.ndim == 3 and b.shape[0] not in (1, nf)) or (matmul and b.ndim not in (2, 3)):
        return None
    b_planes = b.ndim == 3 and b.shape[0] == nf != 1  # b has the planes too: each range takes its own
    shape = (nf, a.shape[1], b.shape[-1]) if matmul else np.broadcast_shapes(a.shape, b.shape)
    if len(shape) != 3 or shape[0] != nf:
        return None
    dtype = np.result_type(a.dtype, b.dtype)
    parts = min(parts, nf)
    if parts < 2 or np.prod(shape) * dtype.itemsize < SPLIT_MIN_BYTES:
        return None
    if out is None:
        out = np.empty(shape, dtype)
    cuts = [nf * i // parts for i in range(parts + 1)]

    def part(lo, hi):
        op(a[lo:hi], b[lo:hi] if b_planes else b, out=out[lo:hi])

    for f in [executor.submit(part, lo, hi) for lo, hi in zip(cuts, cuts[1:])]:
        f.result()  # in order: the first failure is raised, the others waited for
    return out


@contextlib.contextmanager
def in_pool_thread():
    """Inside one of the engine's pooling threads: the FFTs it runs take one worker each."""
    saved = getattr(_local, "fft_workers", None)
    _local.fft_workers = 1
    try:
        yield
    finally:
        _local.fft_workers = saved


class NumpyBackend:
    name = "numpy"
    device = "cpu"
    #: the engine pools cache-sized sub-blocks of each chunk: on the CPU the pooling's
    #: temporaries then stay in L2 (docs/performance.md)
    prefers_cache_blocks = True
    #: the poolings can write into a NumPy array (the engine's output rows) instead of returning one
    pools_into_numpy = True
    #: working bytes per similarity of :meth:`cdf_pool` beyond the block itself (the int64 bin indices)
    cdf_work_bytes = 8
    #: the engine keeps a chunk's large arrays (similarities, spectra) from chunk to chunk and has the
    #: products write into them (``out=``): glibc maps each allocation above 32 MB afresh, and the pages of
    #: a new one fault in on first write (``orbitkernels.features._engine._Workspace``)
    reuses_buffers = True
    #: threads for the engine's cache-sized blocks, and the context each of those threads runs in
    #: (:func:`pool_threads`, :func:`in_pool_thread`); a back-end without them pools its blocks in the caller's thread
    pool_threads = staticmethod(pool_threads)
    in_pool_thread = staticmethod(in_pool_thread)
    #: the products of a chunk that pools in threads run in those threads, BLAS on one thread (:func:`split_products`)
    split_products = staticmethod(split_products)

    def __reduce__(self):
        return (NumpyBackend, ())

    # conversion ------------------------------------------------------------
    def asarray(self, a, dtype=None):
        return np.asarray(a, dtype=dtype)

    def to_numpy(self, a):
        return np.asarray(a)

    def to_numpy_into(self, a, out):
        """Copy ``a`` into the NumPy array ``out`` (the engine's output rows)."""
        out[...] = a

    def dtype(self, name):
        return np.dtype(name)

    def complex_dtype(self, dtype):
        return np.complex64 if np.dtype(dtype) == np.float32 else np.complex128

    def empty(self, shape, dtype):
        return np.empty(shape, dtype=dtype)

    def permute(self, a, axes):
        return np.transpose(a, axes)

    def contiguous(self, a):
        return np.ascontiguousarray(a)

    def concatenate(self, arrays, axis):
        return np.concatenate(arrays, axis=axis)

    def sparse(self, M, dtype):
        """A SciPy sparse matrix in this back-end's sparse form (here: SciPy CSR) and ``dtype``."""
        return M.astype(dtype)

    # algebra ---------------------------------------------------------------
    def matmul(self, a, b, out=None):
        split = _split_planes(np.matmul, a, b, out, True)
        return np.matmul(a, b, out=out) if split is None else split

    def multiply(self, a, b, out=None):
        split = _split_planes(np.multiply, a, b, out, False)
        return np.multiply(a, b, out=out) if split is None else split

    def sparse_matmul(self, P, X):
        """``P`` (from :meth:`sparse`) applied to every row of ``X``: ``X @ P.T``, one sparse product."""
        return np.asarray(P @ np.asarray(X).T).T

    def conj(self, a):
        return np.conj(a)

    def cos(self, a):
        return np.cos(a)

    def cos_(self, a):
        """In place (``a`` must be a writable array the caller owns)."""
        return np.cos(a, out=a)

    def add_(self, a, b):
        """``a += b`` in place, broadcasting ``b``."""
        return np.add(a, b, out=a)

    def sin(self, a):
        return np.sin(a)

    def exp(self, a):
        return np.exp(a)

    def exp_(self, a):
        """In place (``a`` must be a writable array the caller owns)."""
        return np.exp(a, out=a)

    def rfftn(self, a, axes):
        return scipy.fft.rfftn(a, axes=axes, workers=_workers())

    def irfftn(self, a, shape, axes):
        return scipy.fft.irfftn(a, s=shape, axes=axes, workers=_workers())

    def take(self, a, idx, axis):
        return np.take(a, idx, axis=axis)

    def trig_pool(self, S, weights, offset=None, layout="nsr"):
        """Raj et al. 2017, Eq. 7: ``Σ_k w_k cos(S_k + b_j)`` (``offset`` b given), else the pair
        ``(Σ_k w_k cos S_k, Σ_k w_k sin S_k)``, each (rows, m) in S's precision.

        ``S`` is (rows, m, r) ("nsr") or (r, rows, m) ("rns"), a block the engine made for this
        pooling alone: the NumPy code computes the phase and the cosine in place in it (no
        temporaries of S's size); the fused kernel reads it once and leaves it as it was.
        """
        if _fused.numba_active() and S.dtype in (np.float32, np.float64):
            return _fused.trig_pool(S, weights, offset, layout)
        return trig_pool_passes(self, S, weights, offset, layout)

    def rbf_pool(self, S, x_sq, t_sq, gamma, weights):
        """Raj et al. 2017, Eq. 8: ``Σ_k w_k exp(γ(2 S_k - |x|² - |t|²))`` from dot products S (rows, m, r), the
        squared norms x_sq (rows,) and t_sq (m,): (rows, m) in S's precision. The fused kernel (one pass,
        its own exponential: :func:`orbitkernels.backends._fused.rbf_pool`) when numba is there, else
        ``rbf_from_dots`` and a matrix-vector product."""
        if _fused.numba_active() and S.dtype in (np.float32, np.float64):
            return _fused.rbf_pool(S, x_sq, t_sq, gamma, weights)
        return rbf_pool_passes(self, S, np.asarray(x_sq, S.dtype), np.asarray(t_sq, S.dtype), gamma, weights)

    def row_max_abs(self, S, axis=0):
        """max |S| over every axis but ``axis`` (the rows), as a column: two reductions, no |S| temporary."""
        other = tuple(a for a in range(S.ndim) if a != axis)
        return np.maximum(S.max(axis=other), -S.min(axis=other)).reshape(-1, 1)

    def cdf_pool(self, S, weights, n_bins, value_range, scale=1.0, out=None):
        """Weighted CDF over the last axis at the thresholds ``value_range·k/n``, k = -n..n.

        ``S`` (rows, m, r) -> (rows, m, 2n+1): ``scale · Σ_k w_k 1{S_k <= τ_b}`` (Mroueh §2).
        1{P <= s b / n} <=> ceil(P n / s) <= b, so one bincount of the bin index
        followed by a cumulative sum replaces the 2n+1 comparisons per value; the fused
        kernel (numba) makes the same numbers in one pass over S. ``out``: a (rows, m, 2n+1)
        float array (a view of the engine's output rows) to write the features into.
        """
        if _fused.numba_active() and S.dtype in (np.float32, np.float64):
            return _fused.cdf_pool(S, weights, n_bins, value_range, scale, out)
        res = self._cdf_pool_numpy(S, weights, n_bins, value_range)
        return np.multiply(res, S.dtype.type(scale), out=res if out is None else out)

    def _cdf_pool_numpy(self, S, weights, n_bins, value_range):
        n, s_ = n_bins, value_range
        rows, m, r = S.shape
        nb = 2 * n + 2
        # The bin index in float first (S's precision), clipped, then a small int:
        # the int64 offsets of np.bincount are built in one fused expression.
        t = np.multiply(S, np.asarray(n / s_, dtype=S.dtype))
        np.ceil(t, out=t)
        np.clip(t, -n, n + 1, out=t)
        idx = t.astype(np.intp)
        idx += (np.arange(rows * m, dtype=np.intp) * nb + n).reshape(rows, m, 1)
        w = np.asarray(weights, dtype=np.float64)
        if np.all(w == w[0]):
            # integer counts, integer cumsum, one scaling pass into the output precision
            counts = np.bincount(idx.ravel(), minlength=rows * m * nb).reshape(rows, m, nb)
            np.cumsum(counts, axis=2, out=counts)
            return np.multiply(counts[:, :, : 2 * n + 1], S.dtype.type(w[0]), dtype=S.dtype)
        counts = np.bincount(idx.ravel(), weights=np.broadcast_to(w, S.shape).ravel(), minlength=rows * m * nb)
        counts = counts.reshape(rows, m, nb)
        return np.cumsum(counts, axis=2, dtype=S.dtype)[:, :, : 2 * n + 1]
