"""Fused CPU kernels for the engine's poolings (numba), with the NumPy code as the fallback.

The poolings of the three papers are memory-bound chains of NumPy passes over the
similarity block ``S`` (rows, m, r): for LGIKA-RF (Raj et al. 2017, Eq. 7) a phase
add, a cosine (and a sine) and a weighted mean over the r group elements; for LGIKA-Nys
on the FFT paths (Eq. 8) a Gaussian of the dot products and a weighted mean; for
GICDF (Mroueh et al. 2015, §2) a bin index, a weighted histogram and a
cumulative sum over the 2n+1 thresholds. Here each is one pass over ``S`` that
keeps only a row of r values (and one histogram) in registers / L1:

* :func:`trig_pool` -- ``Σ_k w_k cos(S_k + b_j)`` (and ``Σ_k w_k sin S_k``) with a
  vectorisable cosine (:func:`_cos_turns`, below): the machine's libm ``cosf`` is
  scalar, and NumPy's float32 cosine took 3.7-8 ns/value here (AMD EPYC, AVX2, no
  SVML, shared machine), so the fused loop needs its own. Accuracy (stated and
  tested, ``tests/test_fused.py``): ``|fast - cos| <= 4e-7·(1 + |x|)`` in float32
  (the float32 rounding of the phase, which the similarities already carry from
  their float32 GEMM, dominates) and ``1e-13·(1 + |x|)`` in float64. Its effect on
  accuracy: Rotated MNIST test accuracy is the same with it and with NumPy's
  cosine (``results/bench/polar_accuracy.json``).
* :func:`rbf_pool` -- Nyström's Gaussian orbit mean (Raj et al. 2017, Eq. 8) from dot products,
  ``Σ_k w_k exp(γ(2 S_k - |x|² - |t|²))``, with a vectorisable exponential of its own (NumPy's
  is not callable from the loop and libm's ``exp`` is scalar there): relative error <= 2e-7 in
  float32, 1e-15 in float64 (tested); 2.2-2.6x the NumPy passes on a pooled block
  (``benchmarks/probes/perf/rbf_pool_fused.py``).
* :func:`cdf_pool` -- the same numbers as the NumPy back-end's ``cdf_pool``, bit
  for bit: the bin index is computed by the same float operations in S's
  precision (``ceil(S·(n/range))`` clipped to ``[-n, n+1]``), the weighted counts
  are accumulated in the same order (k ascending, float64 weights; integer counts
  for equal weights) and the cumulative sum is taken in S's precision as
  ``np.cumsum(..., dtype=S.dtype)`` does.

The kernels are serial (one row after another): the engine calls them from
whatever threads run it (its own pooling threads, dask workers), so they add no
thread pool of their own and their results do not depend on any thread count.
``cache=True`` keeps the compiled code between processes (the first compilation
of all kernels and dtypes the tests use costs ~16 s of CPU, once).

Whether the fused kernels run: numba importable, ``ORBITKERNELS_NUMBA`` not "0",
and not switched off by :func:`use_numba` (a context manager, also usable as a
plain call to switch for the rest of the process).
"""
from __future__ import annotations

import os

import numpy as np

from ..utils.validation import check_bool

__all__ = ["numba_available", "numba_active", "use_numba", "trig_pool", "cdf_pool", "rbf_pool", "fast_cos", "fast_exp"]

try:  # pragma: no branch - which side runs depends on the install
    import numba as _nb
except ImportError:  # pragma: no cover - exercised where numba is absent
    _nb = None

_STATE = {"enabled": os.environ.get("ORBITKERNELS_NUMBA", "1").strip().lower() not in ("0", "false", "no", "off")}


def numba_available():
    """Whether numba can be imported (the ``fast`` extra: ``pip install orbitkernels[fast]``).

    Examples
    --------
    >>> from orbitkernels.backends import numba_active, numba_available
    >>> isinstance(numba_available(), bool)
    True
    >>> numba_available() or not numba_active()  # the fused kernels run only where numba is installed
    True
    """
    return _nb is not None


def numba_active():
    """Whether the engine's poolings run the fused numba kernels now (else the NumPy code).

    Examples
    --------
    >>> from orbitkernels.backends import numba_active, use_numba
    >>> isinstance(numba_active(), bool)
    True
    >>> with use_numba(False):
    ...     print(numba_active())
    False
    """
    return _nb is not None and _STATE["enabled"]


class use_numba:
    """Switch the fused numba kernels on or off: ``with use_numba(False): ...`` or ``use_numba(False)``.

    As a context manager the previous setting comes back on exit; as a plain call
    the setting stays. ``use_numba(True)`` without numba installed raises an
    ImportError naming the extra to install. The switch is process-wide (not
    per thread).

    Parameters
    ----------
    enabled : bool, default=True
        Run the fused kernels (True) or the NumPy passes (False); anything but a
        boolean raises ``TypeError`` (``use_numba("0")`` would read as True).

    Examples
    --------
    >>> from orbitkernels.backends import numba_active, use_numba
    >>> before = numba_active()
    >>> with use_numba(False):  # the NumPy passes inside the block, e.g. to compare timings
    ...     print(numba_active())
    False
    >>> numba_active() == before  # the previous setting is back
    True
    >>> use_numba("0")
    Traceback (most recent call last):
        ...
    TypeError: enabled must be True or False; got '0'
    """

    def __init__(self, enabled=True):
        enabled = check_bool(enabled, "enabled")  # use_numba("0") was truthy: it switched the kernels on
        if enabled and _nb is None:
            raise ImportError("use_numba(True) needs numba: install it with `pip install orbitkernels[fast]`")
        self._previous = _STATE["enabled"]
        _STATE["enabled"] = enabled

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        _STATE["enabled"] = self._previous
        return False


# ---------------------------------------------------------------------------- kernels
# Coefficients of sin(2πv) = Σ_i c_i v^(2i+1) for |v| <= 1/4 (Taylor to v^17; the first omitted
# term, (π/2)^19/19!, is 4e-14: below float64 rounding of the reduced argument at |x| ~ 1).
_SIN2PI = tuple(float((-1) ** i * (2 * np.pi) ** (2 * i + 1) / np.prod(np.arange(1.0, 2 * i + 2))) for i in range(9))


_CONSTANTS = {}


def _constants(dtype):
    """[1/(2π), 1/2, 1/4, c_0..c_8] in the kernels' precision: every operand of the cosine then has S's
    dtype (a float64 literal would promote a float32 loop to float64 and halve its vector width)."""
    dtype = np.dtype(dtype)
    if dtype not in _CONSTANTS:
        c = np.array((1.0 / (2.0 * np.pi), 0.5, 0.25) + _SIN2PI, dtype=dtype)
        c.flags.writeable = False
        _CONSTANTS[dtype] = c
    return _CONSTANTS[dtype]


if _nb is not None:
    _jit = _nb.njit(cache=True, nogil=True, fastmath=False)
    # fastmath only where the order of a sum may change (the weighted means): "reassoc" lets
    # LLVM vectorise the reduction over k; the cosine's own operations are not reassociated.
    _jit_fast = _nb.njit(cache=True, nogil=True, fastmath={"reassoc", "contract", "nsz"})

    @_nb.njit(cache=True, nogil=True, fastmath={"contract"})  # FMAs in the polynomial
    def _cos_turns(y, cf):
        """cos(2π y) for y in turns: u = y - round(y) in [-1/2, 1/2]; cos(2πu) = sin(2π(1/4 - |u|)),
        an odd polynomial on [-1/4, 1/4] (no branches, so LLVM vectorises the loops that call it)."""
        u = y - np.floor(y + cf[1])
        v = cf[2] - np.abs(u)
        v2 = v * v
        p = cf[11]
        for i in range(10, 2, -1):  # Horner, c_8 .. c_0
            p = cf[i] + v2 * p
        return v * p

    @_jit
    def _fast_cos_kernel(x, cf, out):
        for i in range(x.size):
            out[i] = _cos_turns(x[i] * cf[0], cf)

    @_jit_fast
    def _cos_pool_nsr(S, w, cf, off, out):
        # out[i, j] = Σ_k w_k cos(S[i, j, k] + off[j]) (off has length m, or 0 for no offset)
        n, m, r = S.shape
        inv = cf[0]
        has_off = off.shape[0] > 0
        for i in range(n):
            for j in range(m):
                b = off[j] if has_off else S.dtype.type(0.0)
                acc = S.dtype.type(0.0)
                for k in range(r):
                    acc += w[k] * _cos_turns((S[i, j, k] + b) * inv, cf)
                out[i, j] = acc

    @_jit_fast
    def _cossin_pool_nsr(S, w, cf, out_c, out_s):
        n, m, r = S.shape
        inv = cf[0]
        q = cf[2]
        for i in range(n):
            for j in range(m):
                ac = S.dtype.type(0.0)
                as_ = S.dtype.type(0.0)
                for k in range(r):
                    y = S[i, j, k] * inv
                    ac += w[k] * _cos_turns(y, cf)
                    as_ += w[k] * _cos_turns(y - q, cf)  # sin(2πy) = cos(2π(y - 1/4))
                out_c[i, j] = ac
                out_s[i, j] = as_

    @_jit_fast
    def _cos_pool_rns(S, w, cf, off, out):
        # S laid out (r, n, m) (the data path): the sum over k is the outer loop, the
        # contiguous m axis the vectorised inner one
        r, n, m = S.shape
        inv = cf[0]
        has_off = off.shape[0] > 0
        out[:, :] = 0.0
        for k in range(r):
            wk = w[k]
            for i in range(n):
                for j in range(m):
                    b = off[j] if has_off else S.dtype.type(0.0)
                    out[i, j] += wk * _cos_turns((S[k, i, j] + b) * inv, cf)

    @_jit_fast
    def _cossin_pool_rns(S, w, cf, out_c, out_s):
        r, n, m = S.shape
        inv = cf[0]
        q = cf[2]
        out_c[:, :] = 0.0
        out_s[:, :] = 0.0
        for k in range(r):
            wk = w[k]
            for i in range(n):
                for j in range(m):
                    y = S[k, i, j] * inv
                    out_c[i, j] += wk * _cos_turns(y, cf)
                    out_s[i, j] += wk * _cos_turns(y - q, cf)

    @_jit
    def _bin_index(S, i, j, factor, n_bins, idx):
        # bin index ceil(S·n/range) clipped to [-n, n+1], by the NumPy code's operations in S's
        # precision (a loop of its own over k, which LLVM vectorises)
        lo, hi = S.dtype.type(-n_bins), S.dtype.type(n_bins + 1)
        for k in range(S.shape[2]):
            t = np.ceil(S[i, j, k] * factor)
            idx[k] = np.int64(min(max(t, lo), hi)) + n_bins

    @_jit
    def _cdf_pool_equal(S, n_bins, factor, w0, scale, out):
        # integer counts, integer cumulation, one scaling into S's precision (as the NumPy code), then
        # the features' scale as a second multiplication in S's precision (the NumPy code's `* scale`);
        # `out` may be a strided view of the caller's output, of S's or a wider float type. The histogram
        # adds a constant 1 in this loop: with the increments in a function shared with the weighted
        # kernel (int64 weights of ones) it was 1.24x slower (benchmarks/probes/perf/cdf_pool_kernel.py)
        idx = np.empty(S.shape[2], np.int64)
        counts = np.zeros(2 * n_bins + 2, np.int64)
        for i in range(S.shape[0]):
            for j in range(S.shape[1]):
                _bin_index(S, i, j, factor, n_bins, idx)
                for k in range(S.shape[2]):  # then counts[index] += 1 in k order (np.bincount's)
                    counts[idx[k]] += 1
                c = 0
                for b in range(2 * n_bins + 1):
                    c += counts[b]
                    counts[b] = 0  # the cumulation also clears the histogram for the next (i, j)
                    out[i, j, b] = (S.dtype.type(c) * w0) * scale
                counts[2 * n_bins + 1] = 0

    @_jit
    def _cdf_pool_weighted(S, n_bins, factor, w, scale, out):
        # float64 weighted counts, cumulated in S's precision (np.cumsum(counts, dtype=S.dtype)), scaled
        idx = np.empty(S.shape[2], np.int64)
        counts = np.zeros(2 * n_bins + 2, np.float64)
        for i in range(S.shape[0]):
            for j in range(S.shape[1]):
                _bin_index(S, i, j, factor, n_bins, idx)
                for k in range(S.shape[2]):  # counts[index] += w_k in k order (np.bincount's)
                    counts[idx[k]] += w[k]
                acc = S.dtype.type(counts[0])
                out[i, j, 0] = acc * scale
                for b in range(1, 2 * n_bins + 1):
                    acc = acc + S.dtype.type(counts[b])
                    out[i, j, b] = acc * scale
                counts[:] = 0.0

    @_nb.njit(cache=True, nogil=True, fastmath={"contract"})  # FMAs only: the reduction's order is kept
    def _exp_reduced(a, n, ce):
        """exp(a - n ln 2) for n = round(a / ln 2): a Cody-Waite reduction (ln 2 as hi + lo parts) to f in
        [-ln2/2, ln2/2], then Taylor to f^13 (truncation 4e-18 relative). The degree is the same in both
        precisions: a loop whose length is a constant unrolls and the calling loop vectorises (a length
        read from ``ce`` kept it scalar, 20x slower), and float32's 6 extra FMAs cost ~15 %."""
        f = (a - n * ce[2]) - n * ce[3]
        p = ce[19]
        for i in range(18, 5, -1):  # Horner, 1/13! .. 1/0!
            p = ce[i] + f * p
        return p

    @_jit_fast
    def _rbf_pool_nsr(S, x_sq, t_sq, gamma, w, ce, ibits, pbuf, nbuf, out):
        # out[i, j] = Σ_k w_k exp(γ(2 S[i, j, k] - |x_i|² - |t_j|²)). The exponential is split over two loops
        # that LLVM vectorises: the first writes p and 2^n's bits ((n + bias) << shift) into row buffers,
        # the second reads the bits as floats (a view of the same buffer) and sums w_k · p · 2^n
        rows, m, r = S.shape
        scale = nbuf.view(S.dtype)
        lo, hi = ce[4], ce[5]
        zero = S.dtype.type(0.0)
        inf = S.dtype.type(np.inf)
        two_g = S.dtype.type(2.0) * gamma
        for i in range(rows):
            for j in range(m):
                c = (x_sq[i] + t_sq[j]) * gamma
                for k in range(r):
                    a = S[i, j, k] * two_g - c
                    b = min(max(a, lo), hi)
                    n = np.floor(b * ce[0] + ce[1])
                    p = _exp_reduced(b, n, ce)  # then selects, not a branch around the call: the loop vectorises
                    p = p if a >= lo else zero  # below lo exp(a) is subnormal: 0
                    pbuf[k] = p if a <= hi else inf  # above hi it overflows (or nearly): inf, never a cap
                    nbuf[k] = (ibits.dtype.type(n) + ibits[0]) << ibits[1]
                acc = zero
                for k in range(r):
                    acc += w[k] * (pbuf[k] * scale[k])
                out[i, j] = acc


_EXP_CONSTANTS = {}


def _exp_constants(dtype):
    """[1/ln 2, 1/2, ln2_hi, ln2_lo, lo, hi, 1/0!, 1/1!, .., 1/13!] in ``dtype``, and [bias, shift] of its
    exponent field in the integer type of its width. ln2_hi has its low mantissa bits zero, so n·ln2_hi is
    exact for every n the clamp [lo, hi] allows; lo is the log of the smallest normal number (rounded
    towards 0), so 2^n stays normal (n >= -126 / -1022)."""
    dtype = np.dtype(dtype)
    if dtype not in _EXP_CONSTANTS:
        single = dtype == np.float32
        ln2_hi = 0.693145751953125 if single else 0.693147180369123816490  # 0x3f317200 / fdlibm's ln2_hi
        ln2_lo = float(np.log(2.0) - ln2_hi) if single else 1.90821492927058770002e-10
        lo = np.nextafter(dtype.type(np.log(np.finfo(dtype).tiny)), dtype.type(0))
        hi = 88.0 if single else 709.0  # exp(hi) below the largest float
        ce = np.array([1.0 / np.log(2.0), 0.5, ln2_hi, ln2_lo, lo, hi]
                      + [1.0 / np.prod(np.arange(1.0, i + 1)) for i in range(14)], dtype=dtype)
        ib = np.array([127, 23] if single else [1023, 52], dtype=np.int32 if single else np.int64)
        ce.flags.writeable = False
        ib.flags.writeable = False
        _EXP_CONSTANTS[dtype] = (ce, ib)
    return _EXP_CONSTANTS[dtype]


def _check_float(S):
    if S.dtype not in (np.float32, np.float64):
        raise TypeError(f"the fused kernels take float32 or float64 similarities; got {S.dtype}")


def _check_lengths(S, r, weights, m=None, offset=None):
    # the kernels do not check bounds: a short weight or offset vector would be read past its end
    if S.ndim != 3:
        raise ValueError(f"the similarities must be a 3-d block; got shape {S.shape}")
    if len(weights) != r:
        raise ValueError(f"one weight per group element: {r} elements, {len(weights)} weights")
    if offset is not None and len(offset) != m:
        raise ValueError(f"one offset per template: {m} templates, {len(offset)} offsets")


def fast_cos(x):
    """The fused kernels' cosine, elementwise (for measuring its accuracy; see the module docstring)."""
    x = np.asarray(x)
    _check_float(x)
    flat = np.ascontiguousarray(x).ravel()
    out = np.empty_like(flat)
    _fast_cos_kernel(flat, _constants(flat.dtype), out)
    return out.reshape(x.shape)


def fast_exp(x):
    """The fused RBF pooling's exponential, elementwise (for measuring its accuracy; see :func:`rbf_pool`).

    Run by the pooling kernel itself, each value as its own one-element orbit with zero norms and γ = 1/2,
    so that the exponent is 2·γ·x - 0 = x exactly and the weighted sum is the value."""
    x = np.asarray(x)
    _check_float(x)
    flat = np.ascontiguousarray(x).ravel()
    return rbf_pool(flat.reshape(-1, 1, 1), np.zeros(flat.size), np.zeros(1), 0.5, np.ones(1)).reshape(x.shape)


def rbf_pool(S, x_sq, t_sq, gamma, weights, out=None):
    """Raj et al. 2017, Eq. 8's Gaussian orbit mean, fused: ``Σ_k w_k exp(γ(2 S_k - |x|² - |t|²))``.

    ``S`` (rows, m, r) holds the dot products ``<g_k x_i, t_j>`` (float32 or float64, any strides),
    ``x_sq`` (rows,) and ``t_sq`` (m,) the squared norms (a unitary action keeps them), ``gamma`` the
    Gaussian's γ; the result is (rows, m) in S's precision, written into ``out`` if given. One pass
    over ``S`` instead of the five NumPy passes of ``rbf_from_dots`` and the weighted sum.

    The exponential is the kernels' own (NumPy's is not callable from a numba loop, and a scalar libm
    ``exp`` there is 1.7-2.1x slower than NumPy's vectorised one, ``benchmarks/probes/perf/rbf_pool_fused.py``):
    a Cody-Waite reduction to [-ln2/2, ln2/2], a Taylor polynomial and the power of two built from its
    bits. Its accuracy (tested, ``tests/test_fused.py``, :func:`fast_exp`): relative error <= 2e-7 in
    float32 and 1e-15 in float64 wherever exp(a) is a normal number; an exponent below log of the smallest
    normal number (-87.3 / -708.4) gives 0 (NumPy: a subnormal number or 0), one above 88 / 709 gives inf
    (a Gaussian's exponent is <= 0 up to rounding). The pooled values' error is that of the float32
    exponent ``γ(2 S - |x|² - |t|²)`` itself, as in the NumPy passes (tested against float64 ones).
    """
    S = np.asarray(S)
    _check_float(S)
    dt = S.dtype
    w = np.ascontiguousarray(weights, dtype=dt).reshape(-1)
    _check_lengths(S, S.shape[-1] if S.ndim == 3 else -1, w)
    rows, m, r = S.shape
    x_sq = np.ascontiguousarray(x_sq, dtype=dt).reshape(-1)
    t_sq = np.ascontiguousarray(t_sq, dtype=dt).reshape(-1)
    if len(x_sq) != rows or len(t_sq) != m:
        raise ValueError(f"one squared norm per row and per template: S is {S.shape}, "
                         f"x_sq has {len(x_sq)}, t_sq {len(t_sq)}")
    if out is None:
        out = np.empty((rows, m), dt)
    elif out.shape != (rows, m) or out.dtype != dt:
        raise ValueError(f"out must be a ({rows}, {m}) {dt} array; got {out.shape} {out.dtype}")
    ce, ib = _exp_constants(dt)
    _rbf_pool_nsr(S, x_sq, t_sq, dt.type(gamma), w, ce, ib, np.empty(r, dt), np.empty(r, ib.dtype), out)
    return out


def trig_pool(S, weights, offset=None, layout="nsr"):
    """Raj et al. 2017, Eq. 7, fused: ``Σ_k w_k cos(S_k + b_j)`` (offset given) or ``(Σ_k w_k cos S_k, Σ_k w_k sin S_k)``.

    ``S`` is (rows, m, r) for ``layout="nsr"`` or (r, rows, m) for ``"rns"``, in float32
    or float64, any strides; the sums are returned in S's precision, (rows, m) each.
    ``S`` is not modified.
    """
    S = np.asarray(S)
    _check_float(S)
    if layout not in ("nsr", "rns"):
        raise ValueError(f"layout must be 'nsr' or 'rns'; got {layout!r}")
    dt = S.dtype
    w = np.ascontiguousarray(weights, dtype=dt).reshape(-1)
    _check_lengths(S, S.shape[2] if layout == "nsr" else S.shape[0], w)
    rows, m = (S.shape[0], S.shape[1]) if layout == "nsr" else (S.shape[1], S.shape[2])
    if offset is None:
        c, s = np.empty((rows, m), dt), np.empty((rows, m), dt)
        (_cossin_pool_nsr if layout == "nsr" else _cossin_pool_rns)(S, w, _constants(dt), c, s)
        return c, s
    off = np.ascontiguousarray(offset, dtype=dt).reshape(-1)
    _check_lengths(S, len(w), w, m, off)
    out = np.empty((rows, m), dt)
    (_cos_pool_nsr if layout == "nsr" else _cos_pool_rns)(S, w, _constants(dt), off, out)
    return out


def cdf_pool(S, weights, n_bins, value_range, scale=1.0, out=None):
    """Mroueh et al. 2015, §2, fused: bit for bit the NumPy back-end's ``cdf_pool`` (S: (rows, m, r)).

    ``scale`` multiplies the features in S's precision, as ``cdf_pool(...) * scale`` would; ``out``, a
    (rows, m, 2n+1) float array of S's precision or wider, any strides (a view of the caller's output
    rows), receives them: the features are written once, with no temporary of their size.
    """
    S = np.asarray(S)
    _check_float(S)
    n = int(n_bins)
    w = np.ascontiguousarray(weights, dtype=np.float64).reshape(-1)
    _check_lengths(S, S.shape[-1] if S.ndim == 3 else -1, w)
    rows, m, _ = S.shape
    factor = np.asarray(n / value_range, dtype=S.dtype)[()]  # the NumPy code's scalar, rounded alike
    if out is None:
        out = np.empty((rows, m, 2 * n + 1), S.dtype)
    elif out.shape != (rows, m, 2 * n + 1) or out.dtype not in (np.float32, np.float64) \
            or out.dtype.itemsize < S.dtype.itemsize:
        raise ValueError(f"out must be a ({rows}, {m}, {2 * n + 1}) float array of {S.dtype} or wider; "
                         f"got {out.shape} {out.dtype}")
    c = S.dtype.type(scale)
    if np.all(w == w[0]):
        _cdf_pool_equal(S, n, factor, S.dtype.type(w[0]), c, out)
    else:
        _cdf_pool_weighted(S, n, factor, w, c, out)
    return out
