"""The one engine behind every orbit feature map: group-transformed projections.

Every feature map of the three papers pools, over group elements g_k with
weights w_k, a nonlinearity of the similarity between a transformed input and
a template (docs/architecture.md, "One engine")::

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

Each strategy is one small path object (:class:`GemmPath`, :class:`DataPath`,
:class:`CyclicFFTPath`, :class:`PolarFFTPath`) owning its preparation (built lazily
per precision, never pickled), its row cost and its similarities. The plan picks one
from what the group declares (``Group.cyclic_shape``, ``Group.is_polar``,
``is_unitary``, ``is_symmetric``), never from its type. Fast paths (``fast_path``),
chosen automatically where they apply and are faster:

* **fft** (:mod:`._fft`): for a cyclic group (``cyclic_shape``, e.g.
  :class:`~orbitkernels.groups.CyclicShift`) with all shifts, the similarities with
  every shift are one circular cross-correlation by real FFTs, O(N s r log r)
  instead of O(N s r d);
* **polar** (:mod:`._polar`): for a polar group (``is_polar``,
  :class:`~orbitkernels.groups.polar.PolarRotation`), images and templates are
  resampled on a polar grid where the A rotations are cyclic shifts of the angle
  axis; all A similarities then cost one FFT pass and one complex GEMM per
  angular frequency;
* **gemm**: the templates side above, in the compute precision ``dtype``.

The heavy arrays live on a back-end (:mod:`orbitkernels.backends`: NumPy, or
PyTorch on any device) and the pooling runs there too when the feature map
gives an engine pooling (:class:`CDFPool`, :class:`TrigPool`,
:class:`LinearPool`); only the pooled features come back to NumPy. What differs
between back-ends is declared by them (``prefers_cache_blocks``, ``sparse`` /
``sparse_matmul``), never tested by name.

The feature maps supply only their templates, their η and their pooling.
"""
from __future__ import annotations

import contextlib
from concurrent.futures import ThreadPoolExecutor

import numpy as np
from sklearn.metrics.pairwise import KERNEL_PARAMS

from ..backends import get_backend
from ..backends._common import wsum
from ..groups.base import Group, can_move_to_templates
from ..utils.kernels import PairwiseKernel, rbf_from_dots
from ..utils.validation import check_real
from ._fft import CyclicCorrelator
from ._polar import polar_matrix

__all__ = ["ProjectionPlan", "DEFAULT_MAX_MEMORY_MB", "FAST_PATHS", "EnginePool", "GemmPath", "DataPath",
           "CyclicFFTPath", "PolarFFTPath",
           "CDFPool", "TrigPool", "LinearPool"]

DEFAULT_MAX_MEMORY_MB = 256.0
FAST_PATHS = ("auto", "gemm", "fft", "polar", "none")
DTYPES = ("auto", "float32", "float64")
#: size of the similarity block pooled at once on the CPU, for the FFT paths (the block is also
#: the unit of the inverse FFTs, which want it larger)
POOL_BLOCK_BYTES = 2 * 2**20
#: the same for the direct (GEMM / data) paths: the pooling's temporaries (the CDF's int64 bin
#: counts are (2n+2)·8 / (r·itemsize) times the block, 3x at 50 bins and r = 64 in float32) then stay in L2
#: (measured, GICDF 500 templates x 64 elements, 1 thread: 1050 images/s at 128 KiB against 737 at 2 MiB;
#: LGIKA-RF 1035 against 968)
POOL_BLOCK_BYTES_DIRECT = 128 * 2**10


class _Workspace:
    """The large arrays of one :meth:`ProjectionPlan.map` call, kept from chunk to chunk.

    A chunk's similarities (or their spectrum) are tens to hundreds of MB. glibc serves every
    allocation above 32 MB with a fresh ``mmap``, whose pages fault in, zeroed, on first write: a new
    array per chunk cost the default rotation estimator (polar path, 52 MB of spectrum per chunk)
    ~12 % of its transform (``benchmarks/probes/perf/chunk_workspace.py``). Each role (``key``) has one
    buffer, which its chunk's products write into (``out=``) and which is consumed before the next
    chunk asks for it. Back-ends whose allocator keeps freed blocks (PyTorch's) get ``None``: they
    allocate per chunk as before.
    """

    def __init__(self, enabled):
        self.enabled = bool(enabled)
        self._buffers = {}

    def take(self, key, shape, dtype):
        """A C-contiguous (shape, dtype) array over the role's buffer, grown when too small; None when disabled."""
        if not self.enabled:
            return None
        dtype = np.dtype(dtype)
        n = int(np.prod(shape)) * dtype.itemsize
        buf = self._buffers.get(key)
        if buf is None or buf.nbytes < n:
            # the old buffer goes (unless a view still holds it) before the new one is mapped
            self._buffers.pop(key, None)
            buf = None
            buf = self._buffers[key] = np.empty(max(n, 1), np.uint8)
        return buf[:n].view(dtype).reshape(shape)


class EnginePool:
    """An engine pooling: ``pool(S, bk, layout)`` runs on the back-end that holds the block ``S``."""

    #: whether the pooled features are finite whatever the (finite) inputs: the estimator then skips its
    #: output check, a pass over the whole output
    finite_by_construction = False

    def work_bytes_per_row(self, n_similarities, bk=None):
        """Working memory per row beyond the similarities (counted in the chunk budget) on back-end ``bk``."""
        return 0

    def pool_into(self, S, bk, layout, out):
        """Pool the block ``S`` into ``out``, the (rows, n_out) NumPy rows of the engine's output.

        This default pools, then copies with ``bk.to_numpy_into`` (from a device straight into ``out``); a
        pooling whose back-end writes NumPy memory (``bk.pools_into_numpy``) may write there directly and skip
        the pooled block.
        """
        bk.to_numpy_into(self(S, bk, layout), out)

    def stages(self, dtype):
        """``(pooling, post)``: a pooling that ends with a linear map ``post`` returns itself without it and
        the map as a NumPy matrix in ``dtype``, so that the engine pools cache-sized blocks and applies
        ``post`` once per chunk (one GEMM instead of one small product per block, each reading all of
        ``post``); ``(self, None)`` otherwise."""
        return self, None

    #: whether the pooling takes Gaussian similarities as dot products and norms (``pool_dots_into``): the FFT
    #: paths compute k(g x, t) from them (Raj et al. 2017, §2.2.2), and such a pooling fuses the exponential
    fuses_gaussian = False


class CDFPool(EnginePool):
    """GICDF pooling (Mroueh §2's Φ): ``scale · Σ_k w_k 1{S_k <= range·b/n}``, b = -n..n, on the back-end.

    ``n_bins`` may be a sequence of bin counts (with one ``scale`` each): the features at every
    resolution are then pooled from the same projections and returned side by side, in that
    order (Mroueh et al. 2015, Fig. 2's bin sweep costs one projection pass).
    """

    #: clipped bin counts times finite weights and scale: in [0, scale · Σ w] for any similarity, NaN aside
    #: (inputs are checked finite and GICDF normalises them, so its similarities are finite)
    finite_by_construction = True

    def __init__(self, weights, n_bins, value_range, scale):
        self.weights = np.asarray(weights, dtype=float)
        self.multi = not np.isscalar(n_bins)
        self.bins = tuple(int(n) for n in (n_bins if self.multi else [n_bins]))
        self.scales = tuple(float(c) for c in (scale if self.multi else [scale]))
        if len(self.scales) != len(self.bins):
            raise ValueError(f"one scale per bin count: {len(self.bins)} bin counts, {len(self.scales)} scales")
        self.n_bins, self.scale = (self.bins, self.scales) if self.multi else (self.bins[0], self.scales[0])
        self.value_range = float(value_range)

    def work_bytes_per_row(self, n_similarities, bk=None):
        # what the back-end's cdf_pool holds per similarity (NumPy: the int64 bin indices)
        return n_similarities * getattr(bk, "cdf_work_bytes", 8)

    def n_out(self, n_templates):
        return sum(n_templates * (2 * n + 1) for n in self.bins)

    def __call__(self, S, bk, layout="nsr"):
        S = self._nsr(S, bk, layout)
        parts = [bk.cdf_pool(S, self.weights, n, self.value_range, c).reshape(S.shape[0], -1)
                 for n, c in zip(self.bins, self.scales)]
        return parts[0] if len(parts) == 1 else bk.concatenate(parts, 1)

    def pool_into(self, S, bk, layout, out):
        # a narrower output (float64 similarities of float32 rows, dtype="float64") takes the pooled
        # block rounded into it by the copy; the fused kernel writes S's precision or wider only
        if not bk.pools_into_numpy or out.dtype.itemsize < S.dtype.itemsize:
            return super().pool_into(S, bk, layout, out)
        # each bin count's features straight into its columns of the output rows: the CDF output is
        # (2n+1)/r times the block it pools (1.6x at 50 bins and r = 64), so a temporary, a scaled copy
        # and the copy into the output cost more than the pooling itself
        S = self._nsr(S, bk, layout)
        rows, m, _ = S.shape
        col = 0
        for n, c in zip(self.bins, self.scales):
            width = m * (2 * n + 1)
            view = out[:, col : col + width].reshape(rows, m, 2 * n + 1)
            if not np.shares_memory(view, out):  # pragma: no cover - a column slice of C-order rows reshapes as a view
                raise AssertionError("the output columns of one bin count must reshape to a view")
            bk.cdf_pool(S, self.weights, n, self.value_range, c, out=view)
            col += width

    @staticmethod
    def _nsr(S, bk, layout):
        if layout == "rns":  # a cache-sized block: the transposition is cheap here
            return bk.contiguous(bk.permute(S, (1, 2, 0)))
        return S


class MaxAbsPool(EnginePool):
    """max |S| over each row's similarities, (rows, 1), on the back-end that holds them: GICDF's
    ``value_range="auto"`` at fit. A device back-end then returns one number per row to the host, where a
    callable pooling copies every row's similarities there first."""

    finite_by_construction = True

    def __call__(self, S, bk, layout="nsr"):
        return bk.row_max_abs(S, 1 if layout == "rns" else 0)


class TrigPool(EnginePool):
    """LGIKA-RF pooling (Raj Eq. 7): ``scale · Σ_k w_k [cos S_k, sin S_k]`` or ``cos(S_k + b_j)``.

    One back-end primitive (``trig_pool``): on the CPU a fused kernel (phase, cosine and
    weighted mean in one pass over the cache-sized block, :mod:`orbitkernels.backends._fused`)
    when numba is there, else NumPy passes in place in the block.
    """

    def __init__(self, weights, scale, offset=None):
        self.weights = np.asarray(weights, dtype=float)
        self.scale = float(scale)
        self.offset = None if offset is None else np.asarray(offset, dtype=float)

    def __call__(self, S, bk, layout="nsr"):
        res = bk.trig_pool(S, self.weights, self.offset, layout)
        if self.offset is not None:
            return res * self.scale
        return bk.concatenate(list(res), 1) * self.scale


class LinearPool(EnginePool):
    """LGIKA-Nys pooling (Raj Eq. 8): ``(Σ_k w_k S_k) @ post``."""

    fuses_gaussian = True

    def __init__(self, weights, post=None):
        self.weights = np.asarray(weights, dtype=float)
        self.post = None if post is None else np.asarray(post, dtype=float)
        self._cast = (None, None)  # (dtype name, post in it)

    def stages(self, dtype):
        if self.post is None:
            return self, None
        # the map in the compute precision, cast once per pooling object (a transform maps its rows in
        # several calls: 196 MB to cast each time for 7000 landmarks in float32)
        key = np.dtype(dtype).name
        if self._cast[0] != key:
            self._cast = (key, self.post.astype(dtype, copy=False))
        return LinearPool(self.weights), self._cast[1]

    def __call__(self, S, bk, layout="nsr"):
        pooled = wsum(bk, S, bk.asarray(self.weights, S.dtype), layout)
        return self._post(pooled, bk)

    def _post(self, pooled, bk):
        return pooled if self.post is None else bk.matmul(pooled, bk.asarray(self.post, pooled.dtype))

    def pool_dots_into(self, D, x_sq, t_sq, gamma, bk, out):
        """Pool the Gaussian values of the dot products ``D`` (rows, m, r) and the norms into ``out``."""
        # the orbit mean of exp(γ(2<g x, t> - |x|² - |t|²)) in one pass over D where the back-end fuses it
        # (NumPy with numba: the pooling 2.2-2.6x the five NumPy passes, benchmarks/probes/perf/rbf_pool_fused.py)
        bk.to_numpy_into(self._post(bk.rbf_pool(D, x_sq, t_sq, gamma, self.weights), bk), out)


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
    MNIST 0.9425 against 0.9420 with the dense whitener, digits 0.9916 against 0.9933, one
    test digit of 597).
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


def _check_plan_inputs(group, elements, weights, templates):
    """``(group, elements, weights, templates)`` of a :class:`ProjectionPlan`, checked: the group's own rules for its
    elements (shape, values) and for the rows it acts on (the templates), one finite weight per element."""
    if not isinstance(group, Group):
        raise TypeError(f"group must be an orbitkernels.groups.Group; got {type(group).__name__} (the feature maps "
                        "take None for the trivial group: pass orbitkernels.groups.TrivialGroup() here)")
    templates = group._check_X(templates, "templates")
    elements = group._check_some_elements(elements)
    r = len(elements)
    if weights is None:
        raise TypeError(f"weights must be an array of one weight per group element ({r}; np.full({r}, 1 / {r}) for "
                        "uniform draws); got None")
    w = np.asarray(weights)
    if np.iscomplexobj(w):
        raise TypeError(f"weights is complex ({w.dtype}); the weights of q are real")
    if not np.issubdtype(w.dtype, np.number):
        raise TypeError(f"weights has non-numeric dtype {w.dtype}; pass one real weight per group element")
    w = w.astype(float, copy=False)
    if w.shape != (r,):
        raise ValueError(f"weights must have shape ({r},), one weight per group element; got {w.shape}")
    if not np.isfinite(w).all():
        raise ValueError("weights contains NaN or inf")
    return group, elements, w, templates


def _check_similarity(similarity, kernel_params):
    if callable(similarity):
        pass
    elif not isinstance(similarity, str):
        raise TypeError(f"similarity must be 'dot', the name of a scikit-learn pairwise kernel or a callable; got "
                        f"{similarity!r} ({type(similarity).__name__})")
    elif similarity != "dot" and similarity not in KERNEL_PARAMS:
        raise ValueError(f"similarity must be 'dot', a scikit-learn pairwise kernel ({sorted(KERNEL_PARAMS)}) or a "
                         f"callable; got {similarity!r}")
    if kernel_params is not None and not isinstance(kernel_params, dict):
        raise TypeError(f"kernel_params must be a dict or None; got {type(kernel_params).__name__}")


class ProjectionPlan:
    """Computes ``S[i, j, k] = sim(g_k x_i, t_j)`` in bounded-memory chunks.

    The engine of the orbit feature maps: each of them pools, over the elements, a
    nonlinearity of these similarities (:meth:`map`). Every input is checked when
    the plan is made; the templates side's moved templates are built at the first
    :meth:`map` or :meth:`similarities`, in its precision.

    Parameters
    ----------
    group : Group
        The group acting on the rows (:class:`~orbitkernels.groups.TrivialGroup` for none;
        None is refused here, unlike in the feature maps).
    elements : array-like of shape (r, p)
        The r group elements, ``p = group.n_params`` parameters each (a 1-D array when
        p = 1), checked by the group's own rules (shape, finite, its values).
    weights : array-like of shape (r,)
        One finite real weight per element (q's weights; 1/r for Monte Carlo draws).
    templates : array-like of shape (s, d)
        The s templates t_j, rows the group acts on (``d = group.n_features`` where the
        group fixes it); finite, real, at least one.
    action : {"auto", "templates", "data"}, default="auto"
        Which side the group acts on. With ``define_on_templates=False`` (LGIKA,
        Raj et al. 2017, §2.2.1-2.2.2, S_k = sim(g_k x, t)): "auto" moves the action to
        the templates when :func:`orbitkernels.groups.can_move_to_templates` holds and
        the similarity is invariant under the common action; for "dot" similarities and a
        linear action that is not unitary on the rows (``Group.has_adjoint``: a scaling, a time
        warp) it moves it by the transposes, g_k^T t_j (<g_k x, t_j> = <x, g_k^T t_j> exactly);
        else it acts on the data. "templates" forces it (g_k^{-1} t_j via ``act_inverse``: exact for every
        unitary, data-independent action, an approximation for one unitary only in the continuum
        (``Group.is_unitary_in_continuum``: a scaling, a time warp); a ValueError otherwise). With
        ``define_on_templates=True`` the templates side is the *definition* (GICDF,
        Mroueh: ψ(x, t, τ) = P_g(<x, g t> <= τ)): "auto" and "templates" transform the
        templates by the elements themselves, and "data" applies their inverses to
        the data (a unitary, data-independent action only; a ValueError otherwise).
    similarity : "dot", str or callable, default="dot"
        "dot" for <g x, t>, else a scikit-learn pairwise kernel k(g x, t), by name
        (a key of ``sklearn.metrics.pairwise.KERNEL_PARAMS``) or as a callable.
    kernel_params : dict or None, default=None
        Keyword arguments of the pairwise kernel (``{"gamma": 0.1}``).
    invariant_similarity : bool, default=True
        Whether ``sim(g x, g t) = sim(x, t)`` for this group's action.
    max_memory_mb : float > 0, default=256.0
        Budget for the intermediate arrays of one chunk (its similarities and
        their pooling's temporaries); the rows of a chunk are sized to fit in it.
    define_on_templates : bool, default=False
        Whether the similarities are defined as ``sim(x, g_k t_j)`` (GICDF, Mroueh
        et al. 2015, §2) rather than ``sim(g_k x_i, t_j)`` (LGIKA, Raj et al. 2017).
    fast_path : {"auto", "gemm", "fft", "polar", "none"}, default="auto"
        "auto": for a similarity of dot products ("dot", "linear" or "rbf"), "fft"
        for a cyclic group (``group.cyclic_shape``, e.g. :class:`~orbitkernels.groups.CyclicShift`)
        when every shift is used, "polar" for a polar group (``group.is_polar``,
        :class:`~orbitkernels.groups.polar.PolarRotation`); else the GEMM (templates side)
        or data path that ``action`` selects. "fft"/"polar" force the
        correlation path (also with sampled elements, gathered from all shifts);
        "gemm"/"none" force the direct path of ``action``. The FFT paths need
        a similarity of dot products ("dot", "linear" or "rbf"; a ValueError otherwise).
    dtype : {"auto", "float32", "float64"} or None, default="auto"
        Precision of the heavy loops (None is "auto"). "auto" follows the input (float32 data,
        as every loader returns, run in float32: BLAS sgemm, complex64 FFTs);
        "float32" forces single precision for float64 input too (features stay
        float64, with about 1e-6 relative error in the similarities).
    backend : {"numpy", "torch"}, default="numpy"
        Where the heavy loops run (:func:`orbitkernels.backends.get_backend`).
    device : str, int, torch.device or None, default=None
        The torch back-end's device ("cuda", "cuda:1", an index); the numpy back-end
        takes None or "cpu" only.

    Attributes
    ----------
    mode : {"templates", "data"}
        The side the group acts on (the estimators' ``action_``).
    path : {"gemm", "data", "fft", "polar"}
        The strategy that computes the similarities.
    n_templates : int
        s, the number of templates.
    n_elements : int
        r, the number of group elements.
    weights : ndarray of shape (r,)
        The elements' weights, float64.

    Raises
    ------
    TypeError
        ``group`` is not a :class:`~orbitkernels.groups.Group`; complex or non-numeric
        ``templates``, ``elements`` or ``weights``; ``weights`` None; a ``similarity``
        neither a string nor a callable; ``kernel_params`` not a dict; a flag not a bool.
    ValueError
        Any other input out of its range or of the wrong shape (each error names its
        argument), or an ``action`` / ``fast_path`` the group or the similarity does not allow.

    Examples
    --------
    >>> import numpy as np
    >>> from orbitkernels.features import ProjectionPlan
    >>> from orbitkernels.groups import CyclicShift
    >>> group = CyclicShift(8)
    >>> elements, weights = group.support()  # the 8 shifts, weight 1/8 each
    >>> T = np.random.default_rng(0).normal(size=(3, 8))  # 3 templates t_j
    >>> X = np.random.default_rng(1).normal(size=(4, 8))
    >>> plan = ProjectionPlan(group, elements, weights, T)
    >>> plan.path, plan.mode, plan.n_templates, plan.n_elements
    ('fft', 'templates', 3, 8)
    >>> S = plan.similarities(X)  # S[i, j, k] = <g_k x_i, t_j>
    >>> S.shape
    (4, 3, 8)
    >>> np.allclose(S[1, 2, 5], np.roll(X[1], 5) @ T[2])
    True

    A pooling over the elements (here the maximum, as a callable) gives invariant features:

    >>> M = plan.map(X, lambda S: S.max(axis=2), 3)
    >>> M.shape
    (4, 3)
    >>> np.allclose(plan.map(np.roll(X, 3, axis=1), lambda S: S.max(axis=2), 3), M)
    True
    """

    #: whether the templates side moves the templates by the transposes of the elements' linear maps (a linear,
    #: non-unitary action under dot-product similarities); a class default, so plans pickled before it load
    _template_adjoint = False

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
        # a public class: its inputs are checked here, once, by name (they failed at the first transform as an
        # AttributeError or a reshape error, or never: NaN weights gave NaN features); the estimators pass
        # float64 arrays, kept as they are (no copy), so their plans are what they were
        group, elements, weights, templates = _check_plan_inputs(group, elements, weights, templates)
        _check_similarity(similarity, kernel_params)
        for name, flag in (("invariant_similarity", invariant_similarity),
                           ("define_on_templates", define_on_templates)):
            if not isinstance(flag, (bool, np.bool_)):
                raise TypeError(f"{name} must be a bool; got {flag!r} ({type(flag).__name__})")
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
        # an explicit action= may also ask for the paper's shortcut where the action is unitary only on the
        # continuous signal (Lemma 2.1 for a scaling): an approximation the user chose; "auto" never takes it
        exact_swap = bool((group.is_unitary or group.is_unitary_in_continuum) and not group.is_data_dependent
                          and invariant_similarity)
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
            self._template_adjoint = False
        else:
            if action == "templates" and not exact_swap:
                raise ValueError(
                    "action='templates' needs a unitary, data-independent action (and a similarity "
                    f"invariant under it); {group!r} does not qualify. Use action='data'."
                )
            # a linear action that is not unitary on the rows (a scaling, a time warp) moves to the templates by its
            # transpose, <g x, t> = <x, g^T t>, exact element by element, where similarities are dot products alone
            # (a kernel of g x would need |g x|, which its transpose does not give): "auto" takes it; an explicit
            # "templates" keeps the paper's g^{-1} shortcut (§4.3), which the CIFAR-10 reproduction records
            # only where the s·r moved templates (the fitted model's, outside the budget) fit in max_memory_mb: the
            # data side of a small budget stays small (64 scalings of 128 x 128 images, 100 templates: 448 MB of
            # moved templates against a 58 MB peak on the data side at 16 MB)
            moved_bytes = len(templates) * len(elements) * templates.shape[1] * (4 if dtype == "float32" else 8)
            adjoint = bool(action == "auto" and not movable and similarity == "dot" and group.has_adjoint
                           and not group.is_unitary and not group.is_data_dependent
                           and moved_bytes <= self.max_memory_mb * 2**20)
            mode = "templates" if (action == "templates" or (action == "auto" and movable) or adjoint) else "data"
            # <g x, t> = <x, g^{-1} t> for the sampled elements themselves (exact for a unitary action)
            self._data_elements = elements
            self._data_inverse = False
            self._template_inverse = not adjoint
            self._template_adjoint = adjoint
        if (self._data_inverse or (mode == "templates" and self._template_inverse)) \
                and type(group)._act_inverse is Group._act_inverse:
            # Group's act_inverse goes through inverse(E): a group that has no inverse by parameters (a product
            # subclass with its own action, whose factors do not commute) failed at the first transform, after a
            # fit that succeeded, with advice to use act_inverse (what failed); say so here, by name
            try:
                group.inverse(elements[:1])
            except ValueError as e:
                other = "data" if mode == "templates" else "templates"
                raise ValueError(f"action={action!r} applies the inverses of the group's elements, which {group!r} "
                                 f"cannot give ({e}); use action={other!r}") from e
        self.mode = mode
        s, r = len(templates), len(elements)
        self.n_templates, self.n_elements = s, r
        # one path object per strategy; each builds its template data at the first transform,
        # in the precision it runs in, and does not pickle it (recomputed deterministically from
        # the templates and the elements), so fit and pickles hold one small copy
        if path == "fft":
            self.strategy = CyclicFFTPath(group, elements)
        elif path == "polar":
            self.strategy = PolarFFTPath(group, elements)
        elif mode == "templates":
            self.strategy = GemmPath()
        else:
            self.strategy = DataPath()

    @property
    def path(self):
        """The strategy's name: "gemm", "data", "fft" or "polar"."""
        return self.strategy.name

    def _choose_fast_path(self, fast_path, group, elements):
        """"fft", "polar" or None (the direct GEMM / data path), from the structure the group declares."""
        if fast_path in ("gemm", "none"):
            return None
        cyclic = group.cyclic_shape is not None
        polar = group.is_polar
        if fast_path == "auto":
            if not self._similarity_of_dots():
                return None
            if polar:
                return "polar"
            # all shifts: the FFT computes them anyway; with few sampled shifts the GEMM is cheaper
            if cyclic and len(elements) >= group.n_shifts:
                return "fft"
            return None
        if not self._similarity_of_dots():
            raise ValueError(
                f"fast_path={fast_path!r} needs dot-product similarities (dot, linear or rbf kernels); "
                f"got {self.similarity!r}"
            )
        if fast_path == "fft" and not cyclic:
            raise ValueError(f"fast_path='fft' applies to cyclic groups such as CyclicShift; got {group!r}")
        if fast_path == "polar" and not polar:
            raise ValueError(f"fast_path='polar' applies to polar groups such as PolarRotation; got {group!r}")
        return fast_path

    def _similarity_of_dots(self):
        """Whether the similarity is a function of dot products (and norms): what the FFT paths and the GEMM
        path's dots compute. A unitary action keeps norms, so the Gaussian's |x|² + |t|² - 2<x, t> is one."""
        return self.similarity in ("dot", "linear", "rbf")

    def _rbf_gamma(self, d):
        """The Gaussian's γ: the kernel parameter, else sklearn's 1/d default."""
        gamma = self._kernel_params.get("gamma")
        return 1.0 / d if gamma is None else float(gamma)

    def _from_dots(self, S, x_sq, t_sq, d):
        """Kernel values from dot products (rbf: exp(-γ(|x|² + |t|² - 2<x, t>)), sklearn's γ = 1/d default)."""
        if self.similarity != "rbf":
            return S
        gamma = self._rbf_gamma(d)
        return rbf_from_dots(S, x_sq.reshape(-1, 1, 1), t_sq.reshape(1, -1, 1), gamma, self.backend.exp)  # S: (n, s, r)

    @property
    def from_dots(self):
        """Whether the similarities are computed from dot products (and norms) in the compute precision:
        the FFT paths, and the GEMM and data paths for "dot", "linear" and "rbf" (a Gaussian's squared distances
        expanded as ``|x|² + |t|² - 2<x, t>``, with the error :func:`~orbitkernels.utils.validation.check_rbf_precision`
        bounds); other pairwise kernels are scikit-learn's, in float64."""
        return self.strategy.dots_kernels and self._similarity_of_dots()

    def _transformed_templates(self, dtype, half_sq_norms=False):
        """(s·r, d) host array: row j·r + k is template j moved by element k to its side.

        LGIKA (Raj Eq. 7-8): g_k^{-1} t_j, so that <x, g_k^{-1} t_j> = <g_k x, t_j>, or, for a linear action
        that is not unitary on the rows (``Group.act_adjoint``), g_k^T t_j, so that <x, g_k^T t_j> = <g_k x, t_j>
        exactly; GICDF (Mroueh §2): g_k t_j by definition. Computed in float64 a block of
        templates at a time and stored in ``dtype`` (one copy, the working precision):
        the same values whatever precision was built first, and before/after pickling.
        ``half_sq_norms=True`` appends a column |g t|²/2 (of the float64 moved template: an
        interpolating action such as a bilinear rotation is not exactly unitary, so each moved
        template has its own norm), (s·r, d + 1).
        """
        T0 = np.asarray(self.templates)
        s, d = T0.shape
        r = self.n_elements
        T = np.empty((s * r, d + bool(half_sq_norms)), dtype=dtype)
        T3 = T.reshape(s, r, -1)  # T3[j, k] is row j·r + k
        if self._template_adjoint:
            move = self.group.act_adjoint
        elif self._template_inverse:
            move = self.group.act_inverse
        else:
            move = self.group.act
        # ~8 MB float64 blocks, elements outside and templates inside: an element block's action (an image warp's
        # interpolation matrix) is made once for all the templates. With every element in each block of templates,
        # a matrix larger than the warp cache was rebuilt for every block (128 scalings of 128 x 128 images, 40
        # templates: 40 builds, 8.8 s, against 1.7 s). Each moved template is computed alone, whatever the blocks.
        kstep = max(1, min(r, int(2**23 // max(1, s * d * 8))))
        sstep = max(1, int(2**23 // max(1, kstep * d * 8)))
        for k in range(0, r, kstep):
            E = self.elements[k : k + kstep]
            for j in range(0, s, sstep):
                blk = T0[j : j + sstep].astype(np.float64, copy=False)
                Y = move(blk, E).transpose(1, 0, 2)  # (templates, elements, d)
                sb, kb = Y.shape[:2]
                Y = Y.reshape(-1, d)  # a copy in row order, as the norms below were always computed on
                T3[j : j + sb, k : k + kb, :d] = Y.reshape(sb, kb, d)
                if half_sq_norms:
                    T3[j : j + sb, k : k + kb, d] = (0.5 * np.einsum("ij,ij->i", Y, Y)).reshape(sb, kb)
        return T

    # ------------------------------------------------------------------
    def compute_dtype(self, input_dtype):
        """The precision the similarities of rows of ``input_dtype`` are computed in (``dtype``; "auto": theirs, and
        float64 for integer or boolean rows, which ``transform`` converts block by block)."""
        if self.dtype != "auto":
            return np.dtype(self.dtype)
        return np.dtype(input_dtype) if np.dtype(input_dtype).kind == "f" else np.dtype(np.float64)

    def row_bytes(self, d, itemsize):
        """Working bytes of one row of ``d`` features in the path's similarities, at ``itemsize`` bytes a value."""
        return self.strategy.row_bytes(self, d, itemsize)

    @property
    def pool_block_bytes(self):
        """Similarities pooled at once on the CPU: the path's cache-sized block, at most 1/16 of the budget, so that
        the few blocks' temporaries (:meth:`_Path.block_reserve`) stay within the quarter of a small budget that
        :meth:`chunk_rows` sets aside for them."""
        return min(self.strategy.pool_block_bytes, self.max_memory_mb * 2**20 / 16)

    def pool_bytes(self, pool, n_out, itemsize):
        """The pooling's memory beyond the similarities: (bytes per chunk row, bytes per pooled block).

        An engine pooling on a back-end that pools cache-sized blocks straight into the output rows
        (NumPy: ``prefers_cache_blocks`` and ``pools_into_numpy``) holds its temporaries (a block of
        pooled features, the CDF's bin indices) for one block at a time: a fixed amount, not one per
        chunk row. Counted per row, they made GICDF's chunks half the size its budget allows, and every
        chunk streams the templates through the GEMM once more (GICDF at 86-87 % of sgemm in two chunks,
        89-90 % in one, ``benchmarks/probes/perf/gicdf_chunks.py``); the estimators leave the output rows
        themselves out of their working memory for the same reason (``OrbitFeaturesBase._map``). Elsewhere
        (a device back-end or a callable pools the whole chunk) they are per row.
        """
        n_sim = self.n_templates * self.n_elements
        engine = isinstance(pool, EnginePool)
        block = n_out * itemsize + (pool.work_bytes_per_row(n_sim, self.backend) if engine else 0)
        bk = self.backend
        if engine and bk.prefers_cache_blocks and bk.pools_into_numpy:
            return 0, max(1, int(self.pool_block_bytes // (n_sim * itemsize))) * block
        return block, 0

    def chunk_rows(self, n, d, itemsize, extra_per_row=0, reserve=0):
        """Rows of a chunk (1 to ``n``) whose :meth:`row_bytes` plus ``extra_per_row`` each fit in ``max_memory_mb``
        less the fixed ``reserve`` (at most a quarter of it); a ValueError when not even one row fits."""
        budget = self.max_memory_mb * 2**20
        budget -= min(reserve, budget / 4)  # fixed working memory, at most a quarter of the budget
        sim = self.row_bytes(d, itemsize)
        need = sim + extra_per_row
        rows = int(budget // need)
        if rows < 1:
            # name the larger part: a row's similarities, or its output features and their pooling (GICDF's bins)
            part = (f"{sim / 2**20:.3f} MB for {self.n_templates} templates x {self.n_elements} group elements"
                    if sim >= extra_per_row else f"{extra_per_row / 2**20:.3f} MB for its output features and "
                    "their pooling")
            raise ValueError(
                f"max_memory_mb={self.max_memory_mb} is smaller than one row needs ({need / 2**20:.3f} MB, of "
                f"which {part}); raise max_memory_mb or use fewer templates, group samples or output features"
            )
        return max(1, min(n, rows))

    def pooling_blocks(self, pool, n_out, itemsize, fixed=0):
        """``(bytes per chunk row, bytes per pooling thread, threads)`` of the pooling of ``n_out`` features per row:
        :meth:`pool_bytes`, with each pooled block's own temporaries (:meth:`_Path.block_reserve`) where the
        back-end pools cache-sized blocks, and the :meth:`_pool_threads` that pool them side by side beside a
        ``fixed`` reserve. :meth:`map` and the estimators' outer blocks of rows count the same threads."""
        per_row, per_block = self.pool_bytes(pool, n_out, itemsize)
        if self.backend.prefers_cache_blocks:
            per_block += self.strategy.block_reserve(self, itemsize)
        return per_row, per_block, self._pool_threads(isinstance(pool, EnginePool), per_block, fixed)

    def _pool_threads(self, engine_pool, per_block, reserve):
        """Threads that pool a chunk's cache-sized blocks side by side: the back-end's count (NumPy:
        ``ORBITKERNELS_NUM_THREADS``, else the cores, :func:`orbitkernels.backends.numpy.pool_threads`) for an
        engine pooling, as many as the budget holds each one's block temporaries (``per_block``) beside the
        fixed ``reserve``, within the quarter of ``max_memory_mb`` that :meth:`chunk_rows` keeps for them.

        One thread pooled the blocks while the GEMM and the FFTs ran on every core: at 2 cores the default
        rotation estimator gained 1.16-1.25x over one core (``benchmarks/probes/perf/pool_threads.py``). A callable
        pooling (not an :class:`EnginePool`) runs in the caller's thread: it need not be thread-safe.
        """
        want = getattr(self.backend, "pool_threads", None)
        if not engine_pool or not want or not self.backend.prefers_cache_blocks:
            return 1
        want = int(want())
        if want <= 1 or per_block <= 0:
            return 1
        room = self.max_memory_mb * 2**20 / 4 - reserve
        return int(max(1, min(want, room // per_block)))

    def _similarities(self, Xc, dtype, ws=None):
        """``S`` for one chunk and its layout: a back-end array (n, s, r) "nsr" or (r, n, s) "rns", or a
        "deferred" object (:class:`_Deferred`) that makes its rows' similarities block by block.
        ``ws``: the map's :class:`_Workspace` (the chunk's large arrays then live in its buffers,
        valid until the next chunk)."""
        return self.strategy.similarities(self, Xc, dtype, ws)

    def similarities(self, Xc):
        """``S`` for one chunk: (n_rows, s, r), as a NumPy array."""
        Xc = np.asarray(Xc)
        S, layout = self._similarities(Xc, self.compute_dtype(Xc.dtype))
        if layout == "deferred":
            S, layout = S.block(0, len(Xc))
        S = self.backend.to_numpy(S)
        return np.ascontiguousarray(S.transpose(1, 2, 0)) if layout == "rns" else S

    def cached(self, key, build):
        """``build()``, kept for this plan's later calls under ``key`` (never pickled: rebuilt after a load): what a
        map derives from its fitted state and would otherwise rebuild at every transform."""
        scratch = self.__dict__.setdefault("_scratch", {})
        if key not in scratch:
            scratch[key] = build()
        return scratch[key]

    def __getstate__(self):
        state = self.__dict__.copy()
        state.pop("_scratch", None)
        return state

    def workspace(self):
        """A :class:`_Workspace` for this plan's back-end: buffers kept across chunks (and :meth:`map` calls)."""
        return _Workspace(getattr(self.backend, "reuses_buffers", False))

    def map(self, X, pool, n_out, *, out_dtype=None, progress=None, out=None, workspace=None):
        """Apply ``pool`` to ``S`` over X in chunks and stack the results (rows, n_out).

        ``pool`` is an engine pooling (:class:`EnginePool`: runs on the back-end)
        or any callable ``pool(S_numpy) -> (rows, n_out)``. ``out_dtype``: the output's dtype (X's by
        default). ``out``: a (rows, n_out) NumPy array (the caller's output rows) to write the features
        into instead of a new one (a ValueError for another shape); it is returned.
        ``workspace``: the :meth:`workspace` of a caller that maps X block by block (one per
        transform), so that its large arrays outlive a call; a new one otherwise.
        ``progress``: a callable ``progress(n_rows)``, called after each chunk with the number of
        its rows (a progress bar's ``update``).

        Threads: each chunk's similarities (or spectrum) come from one product that BLAS runs on its threads;
        the chunk's cache-sized blocks are then pooled side by side by :meth:`_pool_threads` threads, each
        writing its own output rows, so the same chunks give the same bits on any number of threads.
        """
        n, d = X.shape
        bk = self.backend
        cdt = self.compute_dtype(X.dtype)
        if out is None:
            out = np.empty((n, n_out), dtype=out_dtype or X.dtype)
        elif out.shape != (n, n_out):
            raise ValueError(f"out must have shape {(n, n_out)}; got {out.shape}")
        engine_pool = isinstance(pool, EnginePool)
        post = None
        if engine_pool and bk.prefers_cache_blocks:
            # a final linear map (Nyström's K_ZZ^{-1/2}, s x s) once per chunk, not once per cache-sized block:
            # per block it read all of the map for a row or two: the transform 3x slower at 2000 landmarks, 5x at
            # 7000 (benchmarks/probes/perf/rbf_pool_fused.py)
            pool, post = pool.stages(cdt)
        n_pooled = n_out if post is None else post.shape[0]
        # the map cast to the compute precision
        reserve = post.nbytes if post is not None and post.dtype != np.float64 else 0
        extra, per_block, threads = self.pooling_blocks(pool, n_pooled, max(cdt.itemsize, X.dtype.itemsize), reserve)
        if post is not None:
            extra += n_pooled * cdt.itemsize  # the chunk's pooled rows before the map
        reserve += per_block * threads  # each pooling thread holds its own block's temporaries
        rows = self.chunk_rows(n, d, cdt.itemsize, extra_per_row=extra, reserve=reserve)
        starts = range(0, n, rows)
        # Where the back-end prefers it (the CPU), the pooling runs on sub-blocks that fit in
        # cache: the GEMM wants many rows, the CDF's histogram and cos/sin temporaries want few
        # (measured 6x faster GICDF pooling at 16 rows than at 256, docs/performance.md).
        per_row_S = self.n_templates * self.n_elements * cdt.itemsize
        sub = max(1, int(self.pool_block_bytes // per_row_S)) if bk.prefers_cache_blocks else rows
        pooled = None if post is None else np.empty((min(rows, n), n_pooled), cdt)
        ws = self.workspace() if workspace is None else workspace

        def pool_block(S, layout, b, dest):
            if layout == "deferred" and engine_pool:  # this block only (inverse FFTs): in cache for the pooling
                S.pool_into(pool, b, b + sub, dest)
                return
            if layout == "deferred":
                Sb, lay = S.block(b, b + sub)
            else:
                Sb, lay = (S[b : b + sub], layout) if layout == "nsr" else (S[:, b : b + sub], layout)
            if engine_pool:
                pool.pool_into(Sb, bk, lay, dest)
            else:
                Sb = bk.to_numpy(Sb)
                dest[...] = pool(np.ascontiguousarray(Sb.transpose(1, 2, 0) if lay == "rns" else Sb))

        def pool_blocks_in_thread(group):
            with bk.in_pool_thread():
                for args in group:
                    pool_block(*args)

        # the blocks of a chunk are independent (disjoint output rows, read-only similarities or spectrum), and
        # each is computed the same way in any thread: the features do not depend on the thread count
        executor = ThreadPoolExecutor(threads, thread_name_prefix="orbitkernels-pool") if threads > 1 else None
        # the FFT paths' per-frequency products split among the same threads, BLAS on one thread
        # (NumpyBackend.split_products: spinning BLAS workers held the cores the pooling threads need); not where a
        # chunk has a plain matrix product too (Nyström's map, a GEMM path's): on one BLAS thread it would run alone
        split = getattr(bk, "split_products", None)
        products = (split(executor, threads) if executor is not None and split and post is None
                    and self.strategy.splits_products else contextlib.nullcontext())
        try:
            with products:
                for a in starts:
                    S = blocks = runs = None  # the previous chunk's similarities live in the workspace's buffers
                    S, layout = self._similarities(X[a : a + rows], cdt, ws)
                    m = min(rows, n - a)
                    target = out[a : a + m] if post is None else pooled[:m]
                    blocks = [(S, layout, b, target[b : min(b + sub, m)]) for b in range(0, m, sub)]
                    if executor is None or len(blocks) < 2:
                        for args in blocks:
                            pool_block(*args)
                    else:
                        # a few runs of consecutive blocks per thread, not a task per block: a direct path's block
                        # is 128 KiB (one row of GICDF's 500 x 64 similarities), pooled in tens of microseconds
                        k = min(len(blocks), 4 * threads)
                        runs = [blocks[i * len(blocks) // k : (i + 1) * len(blocks) // k] for i in range(k)]
                        for f in [executor.submit(pool_blocks_in_thread, run) for run in runs]:
                            f.result()  # in order: the first failure is raised here, the rest are waited for
                    if post is not None:
                        if out.dtype == cdt:
                            np.matmul(target, post, out=out[a : a + m])
                        else:
                            out[a : a + m] = target @ post
                    if progress is not None:
                        progress(m)
        finally:
            if executor is not None:
                executor.shutdown(wait=True, cancel_futures=True)
        return out


# ---------------------------------------------------------------------- the path objects
class _Path:
    """One strategy for ``S[i, j, k] = sim(g_k x_i, t_j)``: its preparation, row cost and similarities.

    The preparation (template data on the back-end) is built lazily, once per precision,
    and never pickled: it is a deterministic function of the plan's templates and elements.
    """

    name = None
    #: whether S is computed from dot products by FFT correlation (kernels from dots and norms)
    spectral = False
    #: whether each chunk is transformed by the r elements (r copies of the rows)
    transforms_data = False
    #: whether a chunk's products are stacks of planes (the FFT paths' per-frequency GEMMs), which the engine splits
    #: among its pooling threads (``NumpyBackend.split_products``)
    splits_products = False
    #: whether the kernels of dot products ("linear", "rbf") come from the path's dot products and norms in the
    #: compute precision (:attr:`ProjectionPlan.from_dots`), rather than from scikit-learn's pairwise kernel
    dots_kernels = False

    def __init__(self):
        self._cache = {}

    def __getstate__(self):
        state = self.__dict__.copy()
        state["_cache"] = {}
        return state

    @property
    def pool_block_bytes(self):
        """Similarities pooled at once where the back-end prefers cache-sized blocks."""
        return POOL_BLOCK_BYTES_DIRECT

    def prepared(self, plan, dtype):
        key = np.dtype(dtype).name
        if key not in self._cache:
            # one precision at a time: the moved templates are outside max_memory_mb (the model's own state,
            # s·r·d values), and a float64 transform after a float32 one kept both (1163 MB instead of 397)
            self._cache.clear()
            self._cache[key] = self._prepare(plan, key)
        return self._cache[key]

    def _prepare(self, plan, dtype):
        raise NotImplementedError

    def row_bytes(self, plan, d, itemsize):
        per_row = plan.n_templates * plan.n_elements  # the similarity tensor
        # where the chunk is pooled whole (a device back-end), headroom for the nonlinearity's temporaries (cos
        # and sin) of the chunk's size; where it is pooled in cache-sized blocks (NumPy), those are one block's,
        # in the map's reserve (:meth:`block_reserve`)
        return per_row * itemsize * (1 if plan.backend.prefers_cache_blocks else 2)

    def block_reserve(self, plan, itemsize):
        """Fixed working memory of the cache-sized pooling: a few blocks, each at least one row's similarities."""
        return 4 * max(plan.pool_block_bytes, plan.n_templates * plan.n_elements * itemsize)

    def similarities(self, plan, Xc, dtype, ws=None):
        """The chunk's similarities and their layout; ``ws`` (a :class:`_Workspace` or None) holds its large arrays."""
        raise NotImplementedError


class GemmPath(_Path):
    """Templates side (Mroueh Remark 2; Raj §2.2.1-2.2.2): one GEMM against the s·r moved templates.

    Dot products, and the kernels that are functions of them ("linear"; "rbf", Raj §2.2.2's Gaussian
    k(x, g^{-1} t) = exp(γ(2<x, g^{-1} t> - |x|² - |g^{-1} t|²))), run as one GEMM in the compute
    precision: for the Gaussian the moved templates carry |g^{-1} t|²/2 as one more column and the rows a
    column of -1, so the GEMM gives <x, g^{-1} t> - |g^{-1} t|²/2 and the pooling (fused where the back-end
    fuses it, :meth:`LinearPool.pool_dots_into`) adds the exponential, block by block. Scikit-learn's
    pairwise kernel in float64 (the path before 2026-11-25 for these two) built three float64 temporaries
    of the chunk's s·r similarities: at 2000 landmarks x 64 rotations the GEMM form is 3.5x it in the same
    rounds, 2.1-2.2x the naive path where it was 0.6-0.8x, with features within 1.1e-5 of it in float32
    (``results/bench/rotations_nystroem.json``); on Rotated MNIST's i.i.d. LGIKA (Nys) row (62k digits, 7000
    landmarks x 100 rotations) the features took 1582 s against 4496 s, with the same accuracy
    (``results/raj2017/rotated_mnist.json``, ``lgika_nys_r100|7000``). Other pairwise kernels stay scikit-learn's,
    on float64 templates: |x - t| or x·z/(x + z) have no such GEMM form.
    """

    name = "gemm"
    dots_kernels = True

    def _prepare(self, plan, dtype):
        if not plan.from_dots:
            return plan._transformed_templates(np.float64)
        T = plan._transformed_templates(dtype, half_sq_norms=plan.similarity == "rbf")
        return plan.backend.asarray(T, dtype)

    def row_bytes(self, plan, d, itemsize):
        return super().row_bytes(plan, d, itemsize) + (d + 1) * itemsize  # the rows with their -1 column

    def similarities(self, plan, Xc, dtype, ws=None):
        bk, T = plan.backend, self.prepared(plan, dtype)
        shape = (len(Xc), plan.n_templates, plan.n_elements)
        if not plan.from_dots:
            return bk.asarray(plan._kernel(Xc, T), dtype).reshape(shape), "nsr"
        out = None if ws is None else ws.take("S", (len(Xc), T.shape[0]), dtype)
        if plan.similarity != "rbf":
            return bk.matmul(bk.asarray(Xc, dtype), T.T, out=out).reshape(shape), "nsr"
        n, d = Xc.shape
        Xa = np.empty((n, d + 1), dtype)
        Xa[:, :d] = Xc
        Xa[:, d] = -1.0
        x_sq = np.einsum("ij,ij->i", Xc, Xc, dtype=np.float64)
        D = bk.matmul(bk.asarray(Xa), T.T, out=out).reshape(shape)  # <x, g^{-1} t> - |g^{-1} t|² / 2
        zeros = bk.asarray(np.zeros(plan.n_templates), dtype)
        return _Dots(plan, D, bk.asarray(x_sq, dtype), zeros, d), "deferred"


class DataPath(_Path):
    """Data side: each chunk is moved by the r elements and compared with the plain templates.

    Dot products and the kernels of them ("linear"; "rbf", Raj §2.2.2's Gaussian k(g x, t) = exp(-γ|g x - t|²))
    run as one product on the back-end in the compute precision: the moved rows carry the columns
    (-1, -|g x|²/2) and the templates (|t|²/2, 1), so the product is -|g x - t|²/2 (each moved row's own norm: an
    interpolating action is not unitary) and the exponential is taken in place. Scikit-learn's pairwise kernel, in
    float64 on the CPU whatever the back-end, was the path before 2026-11-28: on QM7's sortings the device only
    pooled (``benchmarks/probes/perf/data_path_rbf.py``). Other pairwise kernels stay scikit-learn's.
    """

    name = "data"
    transforms_data = True
    dots_kernels = True

    def _prepare(self, plan, dtype):
        if plan.from_dots and plan.similarity == "rbf":
            T0 = np.asarray(plan.templates, dtype=np.float64)
            T = np.empty((len(T0), T0.shape[1] + 2), dtype)
            T[:, :-2] = T0
            T[:, -2] = 0.5 * np.einsum("ij,ij->i", T0, T0)
            T[:, -1] = 1.0
            return plan.backend.asarray(T, dtype)
        return plan.backend.asarray(plan.templates, dtype)

    def row_bytes(self, plan, d, itemsize):
        r = plan.n_elements
        if plan.from_dots and plan.group._makes_columns:
            # the row as a column, its r moved copies as columns (one sparse product) and its similarities, alive
            # together; the Gaussian's float64 norms and their half (tests/test_data_columns.py). One more row: rows of
            # another dtype than the compute precision are converted before the warp's columns are made (float64
            # data at dtype="float32": 1.5x the count with one element, tests/test_audit66_columns.py)
            return (plan.n_templates * r + r * d + 2 * d) * itemsize + 16 * r
        # the r moved copies come from the group's action, whose interpolation holds temporaries of their size
        # (a few (r, n, d) terms at once): the whole count twice on every back-end (tests/test_memory.py went
        # over its budget with the similarities counted once); the Gaussian's two more columns per moved row
        return (plan.n_templates * r + r * (d + 2)) * itemsize * 2

    def similarities(self, plan, Xc, dtype, ws=None):
        bk, T = plan.backend, self.prepared(plan, dtype)
        if plan.from_dots and plan.group._makes_columns:
            return self._similarities_of_columns(plan, T, Xc, dtype, ws)
        act = plan.group.act_inverse if plan._data_inverse else plan.group.act
        # the action in the compute precision too: a data-dependent one (Montavon's sortings by row norm) on float32
        # rows mapped in float64 sorted a near tie otherwise than the float64 rows do, 4.5e-3 of the row's features
        # (benchmarks/probes/perf/nystroem_float32_rows.py)
        Y = act(np.asarray(Xc, dtype=dtype), plan._data_elements).astype(dtype, copy=False)  # (r, n, d)
        flat = Y.reshape(plan.n_elements * len(Xc), -1)
        shape = (plan.n_elements, len(Xc), plan.n_templates)
        if not plan.from_dots:
            return bk.asarray(plan._kernel(flat, plan.templates), dtype).reshape(shape), "rns"
        out = None if ws is None else ws.take("S", (len(flat), T.shape[0]), dtype)
        if plan.similarity != "rbf":
            return bk.matmul(bk.asarray(flat), T.T, out=out).reshape(shape), "rns"
        m, d = flat.shape
        Ya = np.empty((m, d + 2), dtype)
        Ya[:, :d] = flat
        Ya[:, d] = -1.0
        Ya[:, d + 1] = -0.5 * np.einsum("ij,ij->i", flat, flat, dtype=np.float64)
        S = bk.matmul(bk.asarray(Ya), T.T, out=out)  # -|g x - t|² / 2
        S *= 2.0 * plan._rbf_gamma(d)
        return bk.exp_(S).reshape(shape), "rns"

    def _similarities_of_columns(self, plan, T, Xc, dtype, ws):
        """:meth:`similarities` for a group that moves the rows as columns (``Group._act_columns``: image warps),
        each element's dot products one product of its moved rows, transposed in place, with the templates.

        The moved rows in the rows' layout (r, n, d) came out of a transposition that took as long as those products
        on 64 x 64 images, and the Gaussian's two more columns out of another copy of them
        (``benchmarks/probes/perf/data_columns.py``); here the Gaussian's norms are added after the products."""
        group, bk = plan.group, plan.backend
        X = group._check_X(np.asarray(Xc, dtype=dtype))
        Z = group._act_columns(X, group._check_some_elements(plan._data_elements), plan._data_inverse)
        Z = Z.astype(dtype, copy=False)  # (r, d, n)
        r, d, n = Z.shape
        out = None if ws is None else ws.take("S", (r, n, T.shape[0]), dtype)
        S = bk.matmul(bk.permute(bk.asarray(Z), (0, 2, 1)), T[:, :d].T, out=out)  # (r, n, s) <g x, t>
        if plan.similarity != "rbf":
            return S, "rns"
        x_sq = np.einsum("kpi,kpi->ki", Z, Z, dtype=np.float64)
        del Z
        bk.add_(S, bk.asarray(-0.5 * x_sq[:, :, None], dtype))
        bk.add_(S, -T[:, d])  # the templates' |t|² / 2
        S *= 2.0 * plan._rbf_gamma(d)
        return bk.exp_(S), "rns"


class _Deferred:
    """A chunk's similarities made block by block from its dot products (layout "deferred").

    ``dots(b0, b1)`` gives rows b0..b1's dot products (rows, s, r); with squared norms ``x_sq``
    (rows of the chunk) and ``t_sq`` (s,) they are Gaussian kernel values, which a pooling that
    fuses the exponential (:attr:`EnginePool.fuses_gaussian`) takes as they are.
    """

    def __init__(self, plan, x_sq, t_sq, d):
        self.plan, self.x_sq, self.t_sq, self.d = plan, x_sq, t_sq, d

    def dots(self, b0, b1):
        raise NotImplementedError

    def block(self, b0, b1):
        S = self.dots(b0, b1)
        if self.x_sq is not None:
            S = self.plan._from_dots(S, self.x_sq[b0:b1], self.t_sq, self.d)
        return S, "nsr"

    def pool_into(self, pool, b0, b1, out):
        """Pool rows b0..b1 into ``out``: Gaussian similarities go as dot products to a pooling that fuses them."""
        if self.x_sq is None or not pool.fuses_gaussian:
            S, layout = self.block(b0, b1)
            return pool.pool_into(S, self.plan.backend, layout, out)
        pool.pool_dots_into(self.dots(b0, b1), self.x_sq[b0:b1], self.t_sq, self.plan._rbf_gamma(self.d),
                            self.plan.backend, out)


class _Spectral(_Deferred):
    """A chunk's correlations kept as their spectrum; rows are inverted block by block."""

    def __init__(self, plan, path, corr, C, x_sq, t_sq, d):
        super().__init__(plan, x_sq, t_sq, d)
        self.path, self.corr, self.C = path, corr, C

    def dots(self, b0, b1):
        """The dot products <g_k x_i, t_j> of rows b0..b1, (rows, s, r)."""
        S = self.corr.inverse(self.C[:, b0:b1])  # (rows, s, r_all)
        if self.path.gather is not None:
            S = self.plan.backend.take(S, self.path.gather, 2)
        return S


class _Dots(_Deferred):
    """The GEMM path's Gaussian: the chunk's <x, g^{-1} t> - |g^{-1} t|²/2 (n, s, r), with t_sq = 0."""

    def __init__(self, plan, D, x_sq, t_sq, d):
        super().__init__(plan, x_sq, t_sq, d)
        self.D = D

    def dots(self, b0, b1):
        return self.D[b0:b1]


class CyclicFFTPath(_Path):
    """Every cyclic shift at once by real-FFT cross-correlation (:mod:`._fft`), O(N s r log r).

    ``gather`` picks the sampled shifts out of all of them (None when all are used, in order).
    """

    name = "fft"
    spectral = True
    splits_products = True
    dots_kernels = True

    def __init__(self, group, elements):
        super().__init__()
        idx = group.shift_index(elements)
        self.gather = None if np.array_equal(idx, np.arange(group.n_shifts)) else idx

    @property
    def pool_block_bytes(self):
        # the block is also the unit of the inverse FFTs, which want it larger
        return POOL_BLOCK_BYTES

    def _prepare(self, plan, dtype):
        T = np.asarray(plan.templates).reshape((len(plan.templates), 1) + plan.group.cyclic_shape)
        corr = CyclicCorrelator(T, plan.convention, plan.backend, dtype)
        return corr, plan.backend.asarray((T.reshape(len(T), -1) ** 2).sum(1), dtype)

    def _correlator(self, prep):
        return prep[0]

    def row_bytes(self, plan, d, itemsize):
        corr = self._correlator(self.prepared(plan, np.float32 if itemsize == 4 else np.float64))
        extra = corr.B * corr.r * itemsize * 2 + d * itemsize
        return corr.row_bytes(itemsize, blocks=plan.backend.prefers_cache_blocks) + extra

    @staticmethod
    def _spectrum_out(plan, corr, n, dtype, ws):
        """The chunk's spectrum (nf, n, s) in the workspace, its frequency planes an odd number of cache lines apart.

        The engine inverts a block of rows by gathering it from every plane; with planes a multiple of 4 KiB apart
        (64 rows x s = 2000, 128 rows, ... in complex64) the gather's streams share cache sets and the block's
        transposition, inverse FFTs and pooling took 1.3x as long (``benchmarks/probes/perf/spectrum_planes.py``).
        """
        if ws is None or not ws.enabled:
            return None
        cdt = np.dtype(plan.backend.complex_dtype(dtype))
        lines = -(-n * corr.s * cdt.itemsize // 64)
        lines += lines % 2 == 0
        planes = ws.take("C", (corr.nf, lines * 64 // cdt.itemsize), cdt)
        return planes[:, : n * corr.s].reshape(corr.nf, n, corr.s)

    def _spectrum(self, plan, Xc, dtype, ws=None):
        """The rows as the correlator sees them, and the correlations' spectrum (in ``ws``'s buffer)."""
        corr, _ = self.prepared(plan, dtype)
        Xb = plan.backend.asarray(Xc, dtype)
        return Xb, corr.spectrum(Xb.reshape((len(Xc), 1) + plan.group.cyclic_shape),
                                 out=self._spectrum_out(plan, corr, len(Xc), dtype, ws))

    def similarities(self, plan, Xc, dtype, ws=None):
        prep = self.prepared(plan, dtype)
        Xb, C = self._spectrum(plan, Xc, dtype, ws)
        x_sq = (Xb * Xb).sum(1) if plan.similarity == "rbf" else None
        return _Spectral(plan, self, self._correlator(prep), C, x_sq, prep[-1], Xc.shape[1]), "deferred"


class PolarFFTPath(CyclicFFTPath):
    """Rotations on a polar grid (:mod:`._polar`): resample, then the angle axis is cyclic."""

    name = "polar"

    def __init__(self, group, elements):
        super().__init__(group, elements)
        self._host = None

    def __getstate__(self):
        state = super().__getstate__()
        state["_host"] = None
        return state

    def _polar_templates(self, plan):
        """The polar matrix P (sparse, float64) and the (whitened) polar templates (s, R, A), built once."""
        if self._host is None:
            group = plan.group
            P = polar_matrix(group)
            R, A = group.n_radii, group.n_angles
            Tp = np.asarray(P @ np.asarray(plan.templates, dtype=float).T)
            if plan.similarity == "dot":
                Tp = polar_whiten(P, Tp, R, A)
            self._host = (P, np.ascontiguousarray(Tp.T.reshape(-1, R, A)))
        return self._host

    def _prepare(self, plan, dtype):
        bk = plan.backend
        P, Tp = self._polar_templates(plan)
        t_sq = bk.asarray((Tp.reshape(len(Tp), -1) ** 2).sum(1), dtype)
        return bk.sparse(P, dtype), CyclicCorrelator(Tp, plan.convention, bk, dtype), t_sq

    def _correlator(self, prep):
        return prep[1]

    def _spectrum(self, plan, Xc, dtype, ws=None):
        bk = plan.backend
        P, corr, _ = self.prepared(plan, dtype)
        Xb = bk.sparse_matmul(P, bk.asarray(Xc, dtype))
        return Xb, corr.spectrum(bk.contiguous(Xb).reshape(len(Xc), corr.B, *corr.L),
                                 out=self._spectrum_out(plan, corr, len(Xc), dtype, ws))
