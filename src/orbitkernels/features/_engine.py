"""The one engine behind every orbit feature map: group-transformed projections.

Every feature map of the three papers pools, over group elements g_k with
weights w_k, a nonlinearity of the similarity between a transformed input and
a template (see ``DESIGN.md``)::

    feature_j(x) = Σ_k w_k η( sim(g_k x, t_j) )

This module produces the tensor ``S[i, j, k] = sim(g_k x_i, t_j)`` chunk by chunk
under a memory budget, in one of two ways:

* **templates** (Mroueh et al. 2015, Remark 2; Raj et al. 2017, §2.2.1-2.2.2):
  when the action is unitary and the similarity invariant under a common action,
  ``sim(g x, t) = sim(x, g^{-1} t)`` for each sampled element, with g^{-1} applied
  by ``Group.act_inverse`` (products of non-commuting groups included). The ``s·r``
  transformed templates are computed once, at the first transform, in its
  precision, and ``transform`` is one blocked GEMM (or one pairwise-kernel call)
  of the data against them. ``action="auto"`` takes this side when q is also
  symmetric (as before); an explicit ``action="templates"`` needs only the identity.
* **data**: otherwise each chunk of rows is transformed by the r elements
  (r copies of the chunk at a time) and compared with the plain templates.

Fast paths (``fast_path``), chosen automatically where they apply and are faster:

* **fft** (:mod:`._fft`): for :class:`~orbitkernels.groups.CyclicShift` with all
  shifts, the similarities with every shift are one circular
  cross-correlation by real FFTs, O(N s r log r) instead of O(N s r d);
* **polar** (:mod:`._polar`): for :class:`~orbitkernels.groups.polar.PolarRotation`,
  images and templates are resampled on a polar grid where the A rotations are
  cyclic shifts of the angle axis; all A similarities then cost one FFT pass
  and one complex GEMM per angular frequency;
* **gemm**: the templates side above, in the compute precision ``dtype``.

The heavy arrays live on a back-end (:mod:`orbitkernels.backends`: NumPy, or
PyTorch on any device) and the pooling runs there too when the feature map
gives an engine pooling (:class:`CDFPool`, :class:`TrigPool`,
:class:`LinearPool`); only the pooled features come back to NumPy.

The feature maps supply only their templates, their η and their pooling.
"""
from __future__ import annotations

import numpy as np

from ..backends import get_backend
from ..groups.base import can_move_to_templates
from ..groups.cyclic import CyclicShift
from ..groups.polar import PolarRotation
from ..utils.kernels import PairwiseKernel, rbf_from_dots
from ..utils.validation import check_real
from ._fft import CyclicCorrelator
from ._polar import polar_matrix

__all__ = ["ProjectionPlan", "DEFAULT_MAX_MEMORY_MB", "FAST_PATHS",
           "CDFPool", "TrigPool", "LinearPool"]

DEFAULT_MAX_MEMORY_MB = 256.0
FAST_PATHS = ("auto", "gemm", "fft", "polar", "none")
DTYPES = ("auto", "float32", "float64")
#: size of the similarity block pooled at once on the CPU, for the FFT paths (the block is also
#: the unit of the inverse FFTs, which want it larger)
POOL_BLOCK_BYTES = 2 * 2**20
#: the same for the direct (GEMM / data) paths: the pooling's temporaries (the CDF's int64 bin
#: counts are (2n+2)·8 / (r·itemsize) times the block, 3x at 50 bins and r = 64 in float32) then stay in L2 (measured, GICDF 500 templates x 64 elements, 1 thread:
#: 1050 images/s at 128 KiB against 737 at 2 MiB; LGIKA-RF 1035 against 968)
POOL_BLOCK_BYTES_DIRECT = 128 * 2**10


class CDFPool:
    """GICDF pooling (Mroueh Eq. 3): ``scale · Σ_k w_k 1{S_k <= range·b/n}``, b = -n..n, on the back-end.

    ``n_bins`` may be a sequence of bin counts (with one ``scale`` each): the features at every
    resolution are then pooled from the same projections and returned side by side, in that
    order (Mroueh et al. 2015, Fig. 2's bin sweep costs one projection pass).
    """

    def __init__(self, weights, n_bins, value_range, scale):
        self.weights = np.asarray(weights, dtype=float)
        self.multi = not np.isscalar(n_bins)
        self.bins = tuple(int(n) for n in (n_bins if self.multi else [n_bins]))
        self.scales = tuple(float(c) for c in (scale if self.multi else [scale]))
        if len(self.scales) != len(self.bins):
            raise ValueError(f"one scale per bin count: {len(self.bins)} bin counts, {len(self.scales)} scales")
        self.n_bins, self.scale = (self.bins, self.scales) if self.multi else (self.bins[0], self.scales[0])
        self.value_range = float(value_range)

    def n_out(self, n_templates):
        return sum(n_templates * (2 * n + 1) for n in self.bins)

    def __call__(self, S, bk, layout="nsr"):
        if layout == "rns":  # a cache-sized block: the transposition is cheap here
            S = bk.contiguous(bk.permute(S, (1, 2, 0)))
        parts = [(bk.cdf_pool(S, self.weights, n, self.value_range) * c).reshape(S.shape[0], -1)
                 for n, c in zip(self.bins, self.scales)]
        return parts[0] if len(parts) == 1 else bk.concatenate(parts, 1)


def _wsum(bk, V, w, layout):
    """Σ_k w_k V[..k..] for S laid out (n, s, r) ("nsr") or (r, n, s) ("rns", one GEMV)."""
    if layout == "nsr":
        return bk.matmul(V, w)
    r = V.shape[0]
    return bk.matmul(w.reshape(1, r), V.reshape(r, -1)).reshape(V.shape[1], V.shape[2])


class TrigPool:
    """LGIKA-RF pooling (Raj Eq. 7): ``scale · Σ_k w_k [cos S_k, sin S_k]`` or ``cos(S_k + b_j)``."""

    def __init__(self, weights, scale, offset=None):
        self.weights = np.asarray(weights, dtype=float)
        self.scale = float(scale)
        self.offset = None if offset is None else np.asarray(offset, dtype=float)

    def __call__(self, S, bk, layout="nsr"):
        # S is a block the engine made for this pooling alone, so the phase and the
        # cosine are computed in place: no temporaries of S's size (profiled: ~12% of
        # the polar path's time went to allocating and filling them).
        w = bk.asarray(self.weights, S.dtype)
        if self.offset is not None:
            shape = (1, -1, 1) if layout == "nsr" else (1, 1, -1)
            off = bk.asarray(self.offset, S.dtype).reshape(*shape)
            return _wsum(bk, bk.cos_(bk.add_(S, off)), w, layout) * self.scale
        sin = _wsum(bk, bk.sin(S), w, layout)
        return bk.concatenate([_wsum(bk, bk.cos_(S), w, layout), sin], 1) * self.scale


class LinearPool:
    """LGIKA-Nys pooling (Raj Eq. 8): ``(Σ_k w_k S_k) @ post``."""

    def __init__(self, weights, post=None):
        self.weights = np.asarray(weights, dtype=float)
        self.post = None if post is None else np.asarray(post, dtype=float)

    def __call__(self, S, bk, layout="nsr"):
        pooled = _wsum(bk, S, bk.asarray(self.weights, S.dtype), layout)
        return pooled if self.post is None else bk.matmul(pooled, bk.asarray(self.post, S.dtype))


def _is_engine_pool(pool):
    return isinstance(pool, (CDFPool, TrigPool, LinearPool))


def _shift_index(group, elements):
    """Flat shift index (row-major over the cyclic axes) of each element, for the FFT paths."""
    if isinstance(group, PolarRotation):
        A = group.n_angles
        return np.mod(np.rint(elements[:, 0] * A / (2 * np.pi)).astype(np.int64), A)
    K = np.rint(elements).astype(np.int64)
    return np.ravel_multi_index(tuple(np.mod(K[:, a], group.shape[a]) for a in range(K.shape[1])), group.shape)


def _polar_whitener(P, rel_floor=1e-6):
    """Dense reference ``(P Pᵀ)^{-1/2}`` (pseudo-inverse on the range of P): O((R·A)³) time, O((R·A)²) memory.

    Kept to measure :func:`polar_whiten` against (``benchmarks/polar_setup.py``); the
    engine uses :func:`polar_whiten`.
    """
    M = np.asarray((P @ P.T).todense())
    ev, V = np.linalg.eigh(M)
    keep = ev > rel_floor * ev.max()
    inv = np.zeros_like(ev)
    inv[keep] = ev[keep] ** -0.5
    return (V * inv) @ V.T


def polar_whiten(P, T, n_radii, n_angles, rel_floor=1e-6):
    """Whiten polar templates ``T`` (R·A, s) = P t: ``C^{-1/2} T`` with C the angle-averaged ``P Pᵀ``.

    Random templates t ~ N(0, σ² I_d) resampled as P t are correlated and damped
    by the interpolation (cov σ² P Pᵀ). Whitened, they have covariance σ² I on
    the range of P, so <P x, W P t> ~ N(0, σ² |P x|²): the orbit features then
    estimate the base kernel of the polar (quadrature) inner product,
    k(P x, P y) with |P x - P y| ≈ |x - y|, instead of a blurred one.

    ``P Pᵀ`` is not exactly block-circulant along the angle axis (the bilinear
    weights of a polar sample depend on where it falls between pixels, i.e. on
    its angle); its circulant part C, C[(i,a),(j,b)] = mean_a' (P Pᵀ)[(i,a'),(j,a'+b-a)],
    is, and it is diagonalised by the FFT along the angle axis: one R×R Hermitian
    eigenproblem per angular frequency. Cost O(nnz(P Pᵀ) + A R³ + s R A log A)
    instead of the dense O((R·A)³) eigendecomposition (48×48 images, 128 angles,
    one thread: 0.05 s and 20 MB against 7.0 s and 288 MB, ``benchmarks/polar_setup.py``).
    The angle-averaged Gram differs from P Pᵀ by ~40% (Frobenius; the bilinear
    self-overlap of a sample varies 4x with its position between pixels), yet
    rotated-digit accuracy does not suffer (``benchmarks/rotation_default.py``:
    MNIST 0.941 against 0.9405 with the dense whitener, digits 0.988 against 0.987).
    Being circulant, this whitener commutes with the grid rotations.
    """
    R, A = int(n_radii), int(n_angles)
    M = (P @ P.T).tocoo()
    i, a = np.divmod(M.row, A)
    j, b = np.divmod(M.col, A)
    c = np.zeros((R, R, A))
    np.add.at(c, (i, j, np.mod(b - a, A)), M.data)
    c /= A  # c[i, j, δ]: mean over a of (P Pᵀ)[(i, a), (j, a + δ)]
    # C acts on v[j, b] as Σ_{j,b} c[i, j, b - a] v[j, b]; with v̂[j, f] = Σ_b v[j, b] e^{-2πi f b / A}:
    # (C v)^[i, f] = Σ_j ĉ[i, j, f] v̂[j, f] where ĉ[i, j, f] = Σ_δ c[i, j, δ] e^{+2πi f δ / A}.
    ch = np.fft.ifft(c, axis=2) * A  # (R, R, A), Hermitian in (i, j) for each f
    F = A // 2 + 1
    ch = np.ascontiguousarray(ch[:, :, :F].transpose(2, 0, 1))  # (F, R, R)
    ch = 0.5 * (ch + np.conj(ch.transpose(0, 2, 1)))
    ev, V = np.linalg.eigh(ch)  # (F, R), (F, R, R)
    top = ev.max()
    inv = np.where(ev > rel_floor * top, np.maximum(ev, rel_floor * top) ** -0.5, 0.0)
    Wf = np.einsum("fik,fk,fjk->fij", V, inv, np.conj(V))  # C_f^{-1/2}
    s = T.shape[1]
    Th = np.fft.rfft(np.asarray(T).T.reshape(s, R, A), axis=2)  # (s, R, F)
    Th = np.einsum("fij,sjf->sif", Wf, Th)
    return np.fft.irfft(Th, n=A, axis=2).reshape(s, R * A).T


class _Spectral:
    """A chunk's correlations kept as their spectrum; rows are inverted block by block."""

    def __init__(self, plan, corr, C, x_sq, t_sq, d):
        self.plan, self.corr, self.C, self.x_sq, self.t_sq, self.d = plan, corr, C, x_sq, t_sq, d

    def block(self, b0, b1):
        plan, bk = self.plan, self.plan.backend
        S = self.corr.inverse(self.C[:, b0:b1])  # (rows, s, r_all)
        if plan._gather is not None:
            S = bk.take(S, plan._gather, 2)
        if self.x_sq is not None:
            S = plan._from_dots(S, self.x_sq[b0:b1], self.t_sq, self.d)
        return S, "nsr"


class ProjectionPlan:
    """Computes ``S[i, j, k] = sim(g_k x_i, t_j)`` in bounded-memory chunks.

    Parameters
    ----------
    group : Group
    elements : (r, p) array, weights : (r,) array
    templates : (s, d) array
    action : {"auto", "templates", "data"}
        "auto" moves the action to the templates when
        :func:`orbitkernels.groups.can_move_to_templates` holds and the similarity
        is invariant under the common action, else acts on the data.
        "templates" forces it (g_k^{-1} t_j via ``act_inverse``: exact for every
        unitary, data-independent action); for GICDF it is the *definition*
        (Mroueh: ψ(x, t, τ) = P_g(<x, g t> <= τ)), the templates are then
        transformed by the elements themselves and "data" applies their inverses
        to the data.
    similarity : "dot" or the name of a scikit-learn pairwise kernel
    invariant_similarity : bool
        Whether ``sim(g x, g t) = sim(x, t)`` for this group's action.
    max_memory_mb : float
        Budget for the intermediate arrays of one chunk.
    fast_path : {"auto", "gemm", "fft", "polar", "none"}
        "auto": "fft" for a :class:`CyclicShift` when every shift is used,
        "polar" for a :class:`PolarRotation`, else the GEMM (templates side)
        or data path that ``action`` selects. "fft"/"polar" force the
        correlation path (also with sampled elements, gathered from all shifts);
        "gemm"/"none" force the direct path of ``action``. The FFT paths need
        ``similarity="dot"``.
    dtype : {"auto", "float32", "float64"}
        Precision of the heavy loops. "auto" follows the input (float32 data,
        as every loader returns, run in float32: BLAS sgemm, complex64 FFTs);
        "float32" forces single precision for float64 input too (features stay
        float64, with about 1e-6 relative error in the similarities).
    backend, device : where the heavy loops run (:func:`orbitkernels.backends.get_backend`).
    """

    def __init__(self, group, elements, weights, templates, *, action="auto", similarity="dot",
                 kernel_params=None, invariant_similarity=True, max_memory_mb=DEFAULT_MAX_MEMORY_MB,
                 define_on_templates=False, fast_path="auto", dtype="auto", backend="numpy", device=None):
        if action not in ("auto", "templates", "data"):
            raise ValueError(f"action must be 'auto', 'templates' or 'data'; got {action!r}")
        if fast_path not in FAST_PATHS:
            raise ValueError(f"fast_path must be one of {FAST_PATHS}; got {fast_path!r}")
        if dtype is None:
            dtype = "auto"
        if dtype not in DTYPES:
            raise ValueError(f"dtype must be one of {DTYPES}; got {dtype!r}")
        self.max_memory_mb = check_real(max_memory_mb, "max_memory_mb", low=0.0, low_open=True)
        self.group = group
        self.elements = elements
        self.weights = np.asarray(weights, dtype=float)
        self.templates = templates
        self.similarity = similarity
        self.dtype = dtype
        self.backend = get_backend(backend, device)
        self._kernel = None if similarity == "dot" else PairwiseKernel(similarity, kernel_params)
        self._kernel_params = dict(kernel_params or {})
        self.convention = "templates" if define_on_templates else "data"
        # With the inverses of the *sampled elements themselves* (act_inverse), moving the action
        # is an identity for every unitary, data-independent action, element by element:
        # <g x, t> = <x, g^{-1} t> (exact up to interpolation); a symmetric q is not needed for it.
        # "auto" still moves it only when q is symmetric too (can_move_to_templates), as before,
        # so that the side an existing configuration runs on does not change; an explicit
        # action= needs only the identity.
        exact_swap = bool(group.is_unitary and not group.is_data_dependent and invariant_similarity)
        movable = can_move_to_templates(group) and invariant_similarity
        path = self._choose_fast_path(fast_path, group, elements)
        if define_on_templates:
            # GICDF is defined through <x, g t>: the templates side is exact by definition.
            mode = "data" if action == "data" else "templates"
            if mode == "data" and not exact_swap:
                raise ValueError(
                    "action='data' computes <g^{-1} x, t>, equal to <x, g t> only for a unitary, "
                    f"data-independent action; {group!r} does not qualify"
                )
            # <x, g t> = <g^{-1} x, t>: the data side applies the inverses (act_inverse: also
            # for products of non-commuting groups, whose inverse is no product in the same order)
            self._data_elements = elements if mode == "data" else None
            self._data_inverse = mode == "data"
            self._template_inverse = False
        else:
            if action == "templates" and not exact_swap:
                raise ValueError(
                    "action='templates' needs a unitary, data-independent action (and a similarity "
                    f"invariant under it); {group!r} does not qualify. Use action='data'."
                )
            mode = "templates" if (action == "templates" or (action == "auto" and movable)) else "data"
            # <g x, t> = <x, g^{-1} t> for the sampled elements themselves (exact for a unitary action)
            self._data_elements = elements
            self._data_inverse = False
            self._template_inverse = True
        self.mode = mode
        self.path = path or ("gemm" if mode == "templates" else "data")
        s, r = len(templates), len(elements)
        self.n_templates, self.n_elements = s, r
        # The s·r transformed templates of the gemm path (and the polar matrix, its whitened
        # templates and the FFT spectra) are built at the first transform, in the precision it
        # runs in, and are not pickled: they are recomputed deterministically from the
        # templates and the elements (``_prepared``), so fit and pickles hold one small copy.
        self._polar_host = None
        if path in ("fft", "polar"):
            idx = _shift_index(group, elements)
            n_shifts = group.n_angles if path == "polar" else group.n_features
            self._gather = None if np.array_equal(idx, np.arange(n_shifts)) else idx
        self._cache = {}

    def _choose_fast_path(self, fast_path, group, elements):
        """"fft", "polar" or None (the direct GEMM / data path)."""
        if fast_path in ("gemm", "none"):
            return None
        cyclic = isinstance(group, CyclicShift)
        polar = isinstance(group, PolarRotation)
        if fast_path == "auto":
            if not self._fft_similarity():
                return None
            if polar:
                return "polar"
            # all shifts: the FFT computes them anyway; with few sampled shifts the GEMM is cheaper
            if cyclic and len(elements) >= group.n_features:
                return "fft"
            return None
        if not self._fft_similarity():
            raise ValueError(
                f"fast_path={fast_path!r} needs dot-product similarities (dot, linear or rbf kernels); "
                f"got {self.similarity!r}"
            )
        if fast_path == "fft" and not cyclic:
            raise ValueError(f"fast_path='fft' applies to CyclicShift groups; got {group!r}")
        if fast_path == "polar" and not polar:
            raise ValueError(f"fast_path='polar' applies to PolarRotation groups; got {group!r}")
        return fast_path

    def _fft_similarity(self):
        # a unitary action keeps norms, so rbf is a function of the dot products and the norms
        return self.similarity in ("dot", "linear", "rbf")

    def _from_dots(self, S, x_sq, t_sq, d):
        """Kernel values from dot products (rbf: exp(-γ(|x|² + |t|² - 2<x, t>)), sklearn's γ = 1/d default)."""
        if self.similarity != "rbf":
            return S
        gamma = self._kernel_params.get("gamma")
        gamma = 1.0 / d if gamma is None else float(gamma)
        return rbf_from_dots(S, x_sq.reshape(-1, 1, 1), t_sq.reshape(1, -1, 1), gamma, self.backend.exp)  # S: (n, s, r)

    def __getstate__(self):
        state = self.__dict__.copy()
        # everything derived (device arrays, transformed templates, polar matrices, whiteners,
        # spectra) is rebuilt deterministically on first use: pickles hold templates and elements
        state["_cache"] = {}
        state["_polar_host"] = None
        return state

    def _transformed_templates(self, dtype):
        """(s·r, d) host array: row j·r + k is template j moved by element k to its side.

        LGIKA (Raj Eq. 7-8): g_k^{-1} t_j, so that <x, g_k^{-1} t_j> = <g_k x, t_j>;
        GICDF (Mroueh §2): g_k t_j by definition. Computed in float64 a block of
        templates at a time and stored in ``dtype`` (one copy, the working precision):
        the same values whatever precision was built first, and before/after pickling.
        """
        T0 = np.asarray(self.templates)
        s, d = T0.shape
        r = self.n_elements
        T = np.empty((s * r, d), dtype=dtype)
        # ~8 MB float64 blocks: the warp's output and its transposed copy stay small next to T
        step = max(1, int(2**23 // max(1, r * d * 8)))
        for j in range(0, s, step):
            blk = T0[j : j + step].astype(np.float64, copy=False)
            if self._template_inverse:
                Y = self.group.act_inverse(blk, self.elements)
            else:
                Y = self.group.act(blk, self.elements)
            T[j * r : (j + len(blk)) * r] = Y.transpose(1, 0, 2).reshape(-1, d)
        return T

    def _polar_templates(self):
        """The polar matrix P (sparse, float64) and the (whitened) polar templates (s, R, A), built once."""
        if self._polar_host is None:
            P = polar_matrix(self.group)
            R, A = self.group.n_radii, self.group.n_angles
            Tp = np.asarray(P @ np.asarray(self.templates, dtype=float).T)
            if self.similarity == "dot":
                Tp = polar_whiten(P, Tp, R, A)
            self._polar_host = (P, np.ascontiguousarray(Tp.T.reshape(-1, R, A)))
        return self._polar_host

    # ------------------------------------------------------------------
    def compute_dtype(self, input_dtype):
        return np.dtype(input_dtype if self.dtype == "auto" else self.dtype)

    def _prepared(self, dtype):
        """Per-precision template data on the back-end, built once (at the first transform)."""
        key = np.dtype(dtype).name
        if key in self._cache:
            return self._cache[key]
        bk = self.backend
        if self.path == "gemm" and self._kernel is not None:
            # a pairwise kernel (k(x, t) from |x|² + |t|² - 2<x, t>) cancels catastrophically in single
            # precision and overflows |t|² for large float32 inputs: its templates stay float64, as the
            # distances scikit-learn computes for float32 data do
            prep = self._transformed_templates(np.float64)
        elif self.path == "gemm":
            prep = bk.asarray(self._transformed_templates(key), key)
        elif self.path == "data":
            prep = bk.asarray(self.templates, key)
        elif self.path == "fft":
            T = np.asarray(self.templates).reshape((len(self.templates), 1) + self.group.shape)
            prep = (CyclicCorrelator(T, self.convention, bk, key), bk.asarray((T.reshape(len(T), -1) ** 2).sum(1), key))
        else:  # polar
            P, Tp = self._polar_templates()
            Pb = P.astype(key) if bk.name == "numpy" else bk.asarray(P.toarray(), key)
            t_sq = bk.asarray((Tp.reshape(len(Tp), -1) ** 2).sum(1), key)
            prep = (Pb, CyclicCorrelator(Tp, self.convention, bk, key), t_sq)
        self._cache[key] = prep
        return prep

    def row_bytes(self, d, itemsize):
        s, r = self.n_templates, self.n_elements
        if self.path in ("fft", "polar"):
            prep = self._prepared(np.float32 if itemsize == 4 else np.float64)
            corr = prep[1] if self.path == "polar" else prep[0]
            extra = corr.B * corr.r * itemsize * 2 + d * itemsize
            return corr.row_bytes(itemsize) + extra
        per_row = s * r  # the similarity tensor
        if self.path == "data":
            per_row += r * d  # r transformed copies of the row
        return per_row * itemsize * 2  # headroom for the nonlinearity's temporaries (cos and sin)

    def chunk_rows(self, n, d, itemsize, extra_per_row=0):
        budget = self.max_memory_mb * 2**20
        need = self.row_bytes(d, itemsize) + extra_per_row
        rows = int(budget // need)
        if rows < 1:
            raise ValueError(
                f"max_memory_mb={self.max_memory_mb} is smaller than one row needs "
                f"({need / 2**20:.3f} MB for {self.n_templates} templates x {self.n_elements} group elements); "
                "raise max_memory_mb or use fewer templates or group samples"
            )
        return max(1, min(n, rows))

    def _similarities(self, Xc, dtype):
        """``S`` for one chunk as a back-end array and its layout: (n, s, r) "nsr" or (r, n, s) "rns"."""
        bk = self.backend
        s, r = self.n_templates, self.n_elements
        n = len(Xc)
        prep = self._prepared(dtype)
        if self.path == "gemm":
            if self._kernel is None:
                S = bk.matmul(bk.asarray(Xc, dtype), prep.T)
            else:
                S = bk.asarray(self._kernel(Xc, prep), dtype)
            return S.reshape(n, s, r), "nsr"
        if self.path == "data":
            act = self.group.act_inverse if self._data_inverse else self.group.act
            Y = act(Xc, self._data_elements).astype(dtype, copy=False)  # (r, n, d)
            flat = Y.reshape(r * n, -1)
            if self._kernel is None:
                S = bk.matmul(bk.asarray(flat), prep.T)
            else:
                S = bk.asarray(self._kernel(flat, self.templates), dtype)
            return S.reshape(r, n, s), "rns"
        if self.path == "fft":
            corr, t_sq = prep
            Xb = bk.asarray(Xc, dtype)
            C = corr.spectrum(Xb.reshape((n, 1) + self.group.shape))
        else:
            P, corr, t_sq = prep
            if bk.name == "numpy":
                Xb = np.asarray(P @ np.asarray(Xc, dtype=dtype).T).T
            else:
                Xb = bk.matmul(bk.asarray(Xc, dtype), P.T)
            C = corr.spectrum(bk.contiguous(Xb).reshape(n, corr.B, *corr.L))
        x_sq = (Xb * Xb).sum(1) if self.similarity == "rbf" else None
        return _Spectral(self, corr, C, x_sq, t_sq, Xc.shape[1]), "spectral"

    def similarities(self, Xc):
        """``S`` for one chunk: (n_rows, s, r), as a NumPy array."""
        Xc = np.asarray(Xc)
        S, layout = self._similarities(Xc, self.compute_dtype(Xc.dtype))
        if layout == "spectral":
            S, layout = S.block(0, len(Xc))
        S = self.backend.to_numpy(S)
        return np.ascontiguousarray(S.transpose(1, 2, 0)) if layout == "rns" else S

    def map(self, X, pool, n_out, *, out_dtype=None, progress=None):
        """Apply ``pool`` to ``S`` over X in chunks and stack the results (rows, n_out).

        ``pool`` is an engine pooling (runs on the back-end, see :class:`CDFPool`)
        or any callable ``pool(S_numpy) -> (rows, n_out)``.
        """
        n, d = X.shape
        bk = self.backend
        cdt = self.compute_dtype(X.dtype)
        out = np.empty((n, n_out), dtype=out_dtype or X.dtype)
        engine_pool = _is_engine_pool(pool)
        extra = n_out * max(cdt.itemsize, X.dtype.itemsize)
        if isinstance(pool, CDFPool):
            extra += self.n_templates * self.n_elements * 8  # the CDF's int64 bin indices
        rows = self.chunk_rows(n, d, cdt.itemsize, extra_per_row=extra)
        starts = range(0, n, rows)
        if progress is not None:
            starts = progress(starts, total=len(starts))
        # On the CPU the pooling runs on sub-blocks that fit in cache: the GEMM wants
        # many rows, the CDF's histogram and cos/sin temporaries want few (measured
        # 6x faster GICDF pooling at 16 rows than at 256, docs/performance.md).
        per_row_S = self.n_templates * self.n_elements * cdt.itemsize
        block = POOL_BLOCK_BYTES if self.path in ("fft", "polar") else POOL_BLOCK_BYTES_DIRECT
        sub = rows if bk.name != "numpy" else max(1, int(block // per_row_S))
        for a in starts:
            S, layout = self._similarities(X[a : a + rows], cdt)
            m = min(rows, n - a)
            for b in range(0, m, sub):
                if layout == "spectral":  # inverse FFT of this block only: it stays in cache for the pooling
                    Sb, lay = S.block(b, b + sub)
                else:
                    Sb, lay = (S[b : b + sub], layout) if layout == "nsr" else (S[:, b : b + sub], layout)
                if engine_pool:
                    res = pool(Sb, bk, lay)
                else:
                    Sb = bk.to_numpy(Sb)
                    res = pool(np.ascontiguousarray(Sb.transpose(1, 2, 0) if lay == "rns" else Sb))
                out[a + b : a + b + len(res)] = bk.to_numpy(res)
        return out
