"""Unitary actions of rotations, translations and isotropic scalings on images.

Raj et al. 2017, Lemma 2.1: for an image I and an invertible affine map g,
``T_g[I](u) = |J_g|^{-1/2} I(g^{-1} u)`` preserves inner products. Here g acts on
pixel coordinates ``u = (row, col)`` about the image centre ``c``:
``g(u) = A (u - c) + c + b`` and ``|J_g| = |det A|``. Images are sampled on their
pixel grid with bilinear interpolation and zeros outside the frame, so the
action is unitary up to interpolation and border effects (exactly so for
rotations by multiples of 90° on square images and for integer shifts of
content that stays inside the frame).

Each element becomes a sparse ``d × d`` interpolation matrix with at most four
entries per row, so applying r elements to N images costs O(4 r N d), and a
product of image groups is fused into one warp (one interpolation, not one per
factor).
"""
from __future__ import annotations

import threading

import numpy as np
import scipy.sparse as sp

from ..utils.validation import MAX_COUNT, check_data, check_int, check_real_dtype
from .base import Group, ProductGroup
from .distributions import Discrete, Distribution, Normal, Uniform, VonMises

__all__ = ["ImageRotation", "ImageTranslation", "ImageScaling", "AffineImageGroup", "warp_images"]


def _check_image_shape(image_shape):
    if np.isscalar(image_shape):
        raise ValueError(f"image_shape must be (height, width) or (height, width, channels); got {image_shape!r}")
    if not hasattr(image_shape, "__iter__"):  # None: "'NoneType' object is not iterable" named no argument
        raise TypeError(f"image_shape must be a tuple (height, width) or (height, width, channels); "
                        f"got {image_shape!r}")
    shape = tuple(check_int(s, "image_shape", min_value=1) for s in image_shape)
    if len(shape) not in (2, 3):
        raise ValueError(f"image_shape must be (height, width) or (height, width, channels); got {shape}")
    return shape


def _check_distribution(dist, name, kind):
    if not isinstance(dist, Distribution):
        raise TypeError(f"{name} must be a Distribution (e.g. Uniform, VonMises, Normal); got {dist!r}")
    dist.check_kind(kind)
    return dist


def bilinear_weights(src, hw):
    """Four-neighbour indices and weights for sampling at ``src`` (..., 2) (row, col) on a ``hw`` grid.

    Returns ``(idx, w)``, each (..., 4): flat pixel indices and bilinear weights, zero outside
    the frame. Used by the image warps here and by the polar resampling of the engine.
    """
    H, W = hw
    # Rounding makes grid-aligned maps (90° turns, integer shifts) exact permutations.
    src = np.round(src, 9)
    r0 = np.floor(src[..., 0])
    c0 = np.floor(src[..., 1])
    fr = src[..., 0] - r0
    fc = src[..., 1] - c0
    r0 = r0.astype(np.int64)
    c0 = c0.astype(np.int64)
    idx, wts = [], []
    for dr, dc, w in ((0, 0, (1 - fr) * (1 - fc)), (0, 1, (1 - fr) * fc), (1, 0, fr * (1 - fc)), (1, 1, fr * fc)):
        rr, cc = r0 + dr, c0 + dc
        ok = (rr >= 0) & (rr < H) & (cc >= 0) & (cc < W) & (w > 0)
        idx.append(np.where(ok, rr * W + cc, 0))
        wts.append(np.where(ok, w, 0.0))
    return np.stack(idx, axis=-1), np.stack(wts, axis=-1)


def _source_coords(A, b, hw):
    """g^{-1}(u) for every pixel u and element: (n, H*W, 2)."""
    H, W = hw
    c = np.array([(H - 1) / 2.0, (W - 1) / 2.0])
    u = np.indices((H, W)).reshape(2, -1).T.astype(float)  # (d, 2)
    Ainv = np.linalg.inv(A)  # (n, 2, 2)
    return np.einsum("nij,ndj->ndi", Ainv, (u[None, :, :] - c - b[:, None, :])) + c


def warp_images(X, image_shape, A, b, *, normalize=True):
    """Apply the affine maps ``u -> A[k](u - c) + c + b[k]`` to every image row of X.

    The warped image is ``I(g^{-1} u)``, sampled bilinearly with zeros outside the frame;
    ``u = (row, col)`` and ``c = ((H - 1) / 2, (W - 1) / 2)`` is the image centre. With
    ``normalize`` the intensities are multiplied by ``|det A|^{-1/2}`` (Lemma 2.1) so the
    action is unitary.

    Parameters
    ----------
    X : array-like of shape (n_samples, H * W * C)
        Images as rows (channels last); float32 stays float32, everything else becomes float64.
    image_shape : (H, W) or (H, W, C)
    A : array-like of shape (2, 2) or (n_maps, 2, 2)
        Invertible linear parts, on (row, col) coordinates.
    b : array-like of shape (2,) or (n_maps, 2)
        Shifts in pixels, one per matrix.
    normalize : bool, default=True

    Returns
    -------
    Y : ndarray of shape (n_maps, n_samples, H * W * C)

    Raises
    ------
    ValueError
        X not of ``H * W * C`` columns, A and b of different counts or shapes, NaN or inf, a
        singular A.
    TypeError
        Complex or non-numeric A or b.

    Examples
    --------
    >>> import numpy as np
    >>> from orbitkernels.groups import warp_images
    >>> X = np.arange(9.0).reshape(1, 9)  # one 3 x 3 image as a row
    >>> Y = warp_images(X, (3, 3), np.eye(2), [0, 1])  # content one column to the right
    >>> Y.shape
    (1, 1, 9)
    >>> Y[0, 0].reshape(3, 3).tolist()
    [[0.0, 0.0, 1.0], [0.0, 3.0, 4.0], [0.0, 6.0, 7.0]]
    >>> quarter_turn = [[0.0, -1.0], [1.0, 0.0]]
    >>> Y = warp_images(X, (3, 3), quarter_turn, [0, 0])
    >>> np.array_equal(Y[0, 0].reshape(3, 3), np.rot90(X.reshape(3, 3)))
    True
    """
    shape = _check_image_shape(image_shape)
    X = check_data(X, "X", n_features=int(np.prod(shape)))
    A = _real_array(A, "A", (2, 2))
    b = _real_array(b, "b", (2,))
    if len(A) != len(b):
        raise ValueError(f"warp_images needs one shift per map: {len(A)} matrices A but {len(b)} shifts b")
    if (np.abs(np.linalg.det(A)) == 0).any():  # no inverse map to sample from (and |det A|^{-1/2} = inf)
        raise ValueError("A holds a singular matrix (det A = 0); an affine map of the pixel grid must be invertible")
    return _warp(X, shape, A, b, normalize)


def _real_array(a, name, shape):
    """``a`` as a finite float array of ``shape`` items ((n,) + shape, or one item of ``shape``), else an error."""
    arr = check_real_dtype(a, name).astype(float)
    if arr.shape == shape:
        arr = arr[None]
    if arr.shape[1:] != shape:
        raise ValueError(f"{name} must be {shape} or (n,) + {shape}; got shape {arr.shape}")
    if not np.isfinite(arr).all():
        raise ValueError(f"{name} contains NaN or inf")
    return arr


def _warp_weights(A, b, hw, normalize):
    """Each map's four source neighbours of every pixel and their bilinear weights, (n, d_pix, 4) each, the weights
    times ``|det A|^{-1/2}`` with ``normalize`` (Lemma 2.1): what the stacked matrix and the per-row warp share."""
    idx, w = bilinear_weights(_source_coords(A, b, hw), hw)
    if normalize:
        w = w * np.abs(np.linalg.det(A))[:, None, None] ** -0.5
    return idx, w


def _warp_matrix(shape, A, b, normalize, dtype):
    """The (r d_pix, d_pix) sparse bilinear interpolation of the r warps, kept for the last few sets of elements.

    Building it costs ~200 bytes per element and pixel in temporaries and most of a warp's time; a transform in
    chunks (the data side of a scaling, HaarKernel's blocks) rebuilt it for every chunk with the same elements:
    19.7 s at an 8 MB budget against 1.7 s at 64 MB on 128 x 128 images (an audit, stop 64). It is built a block
    of elements at a time (:data:`_WARP_BUILD_BYTES` of temporaries) into arrays of the matrix's own size: built at
    once, 64 scalings of 128 x 128 images took 201 MB of temporaries beside a matrix of 28 MB (float32)."""
    key = (tuple(shape), bool(normalize), np.dtype(dtype).str, A.shape, A.tobytes(), b.tobytes())
    with _WARP_LOCK:  # dask's threads warp blocks side by side
        M = _WARP_CACHE.pop(key, None)
        if M is not None:
            _WARP_CACHE[key] = M  # the most recently used last
            return M
        M = _build_warp_matrix(shape[:2], A, b, normalize, dtype)
    size = M.data.nbytes + M.indices.nbytes + M.indptr.nbytes
    # a matrix up to the whole cache is kept (evicting the older ones): it is alive through every chunk's warp
    # anyway, and one over a quarter of the cache (28 MB for 64 scalings of 128 x 128 images) rebuilt for every
    # chunk made a 16 MB budget's transform 5x slower than a 64 MB one's
    if size <= _WARP_CACHE_BYTES:
        with _WARP_LOCK:
            _WARP_CACHE[key] = M
            while sum(m.data.nbytes + m.indices.nbytes + m.indptr.nbytes for m in _WARP_CACHE.values()) \
                    > _WARP_CACHE_BYTES:
                _WARP_CACHE.pop(next(iter(_WARP_CACHE)))
    return M


def _build_warp_matrix(hw, A, b, normalize, dtype):
    """:func:`_warp_matrix`'s matrix, a block of elements at a time. Each block goes through scipy's COO to CSR
    conversion as the whole did (duplicate neighbours summed, each row's columns sorted, zeros dropped), so the
    matrix and every product with it are the same to the bit."""
    d_pix = hw[0] * hw[1]
    r = len(A)
    # int32 indices where they fit, as scipy would pick for the matrix built at once
    index_dtype = np.int32 if 4 * r * d_pix < np.iinfo(np.int32).max else np.int64
    data = np.empty(4 * r * d_pix, dtype=dtype)
    indices = np.empty(4 * r * d_pix, dtype=index_dtype)
    indptr = np.zeros(r * d_pix + 1, dtype=index_dtype)
    step = max(1, int(_WARP_BUILD_BYTES // (_WARP_BUILD_BYTES_PER_ENTRY * d_pix)))
    nnz = 0
    for a in range(0, r, step):
        Ab, bb = A[a : a + step], b[a : a + step]
        k = len(Ab)
        idx, w = _warp_weights(Ab, bb, hw, normalize)  # (k, d_pix, 4)
        rows = np.repeat(np.arange(k * d_pix), 4)
        B = sp.csr_matrix((w.ravel().astype(dtype), (rows, idx.ravel())), shape=(k * d_pix, d_pix))
        del idx, w, rows
        B.eliminate_zeros()
        data[nnz : nnz + B.nnz] = B.data
        indices[nnz : nnz + B.nnz] = B.indices
        # in the index dtype: a block's int32 offsets plus an int past 2**31 wrapped (NumPy 2 keeps the int32)
        indptr[a * d_pix + 1 : (a + k) * d_pix + 1] = np.add(B.indptr[1:], nnz, dtype=index_dtype)
        nnz += B.nnz
    # neighbours outside the frame, grid-aligned maps (one neighbour of four): trimmed in place (a copy would hold
    # the matrix twice); the arrays are this function's own, nothing else refers to them
    data.resize(nnz, refcheck=False)
    indices.resize(nnz, refcheck=False)
    return sp.csr_matrix((data, indices, indptr), shape=(r * d_pix, d_pix), copy=False)


#: the warp matrices of the last element sets (a transform's data side, a kernel's two sides), at most 64 MB
_WARP_CACHE: dict = {}
_WARP_CACHE_BYTES = 64 * 2**20
_WARP_LOCK = threading.Lock()
#: temporaries of one block of a warp matrix's construction, and what each element and pixel takes of them
_WARP_BUILD_BYTES = 8 * 2**20
_WARP_BUILD_BYTES_PER_ENTRY = 256


def _pixels_by_columns(X, shape, A, b, normalize):
    """The warps' stacked matrix M (r d_pix, d_pix) and the rows as (d_pix, C n) columns, each channel's rows in
    order: what every product takes (each column is warped alone, so its order changes no value)."""
    d_pix = shape[0] * shape[1]
    C = shape[2] if len(shape) == 3 else 1
    M = _warp_matrix(shape, A, b, normalize, X.dtype)
    return M, X.reshape(len(X), d_pix, C).transpose(1, 2, 0).reshape(d_pix, C * len(X)), d_pix, C


def _warp(X, shape, A, b, normalize):
    M, Xp, d_pix, C = _pixels_by_columns(X, shape, A, b, normalize)
    r, n = len(A), len(X)
    out = np.asarray(M @ Xp).reshape(r, d_pix, C, n).transpose(0, 3, 1, 2)
    return np.ascontiguousarray(out.reshape(r, n, d_pix * C))


def _warp_columns(X, shape, A, b, normalize):
    """The warps of every row as columns, (r, d_pix C, n): what the stacked matrix makes from the rows taken as
    columns (:func:`_pixels_by_columns`), reshaped without a copy.

    :func:`_warp`'s transposition into the rows' layout (r, n, d) took as long as the dot products with 500
    templates that follow it on 64 x 64 images (:meth:`AffineImageGroup._act_columns`)."""
    M, Xp, d_pix, C = _pixels_by_columns(X, shape, A, b, normalize)
    return np.asarray(M @ Xp).reshape(len(A), d_pix * C, len(X))


def _warp_adjoint(X, shape, A, b, normalize):
    """``Y[k] = W_k^T x`` for every row: the transpose of each warp's interpolation matrix (the rows of the stacked
    matrix that belong to element k), so that <W_k x, t> = <x, W_k^T t> to rounding for any warp."""
    M, Xp, d_pix, C = _pixels_by_columns(X, shape, A, b, normalize)
    r, n = len(A), len(X)
    out = np.empty((r, n, d_pix * C), dtype=X.dtype)
    for k in range(r):
        Yk = np.asarray(M[k * d_pix : (k + 1) * d_pix].T @ Xp)  # (d_pix, C n)
        out[k] = Yk.reshape(d_pix, C, n).transpose(2, 0, 1).reshape(n, d_pix * C)
    return out


def _warp_each(X, shape, A, b, normalize):
    hw = shape[:2]
    C = shape[2] if len(shape) == 3 else 1
    n = len(X)
    idx, w = _warp_weights(A, b, hw, normalize)  # (n, d_pix, 4)
    Xp = X.reshape(n, -1, C)
    out = np.zeros(Xp.shape, dtype=X.dtype)
    rows = np.arange(n)[:, None]
    for j in range(4):
        out += w[:, :, j, None].astype(X.dtype) * Xp[rows, idx[:, :, j]]
    return out.reshape(n, -1)


class AffineImageGroup(Group):
    """Base class of image groups acting through affine maps of the pixel grid.

    Element g with map ``g(u) = A (u - c) + c + b`` (:meth:`affine`) acts on an image row as
    :func:`warp_images` with ``normalize=True``. Products of these groups on the same images
    act through one warp.

    Parameters
    ----------
    image_shape : (H, W) or (H, W, C)
        Shape of the images; rows of X hold ``H * W * C`` values, channels last.

    Examples
    --------
    The image groups are affine image groups; each element has its map ``(A, b)``:

    >>> import numpy as np
    >>> from orbitkernels.groups import AffineImageGroup, Discrete, ImageRotation, ImageTranslation
    >>> rotation = ImageRotation((4, 4), n_angles=4)
    >>> isinstance(rotation, AffineImageGroup)
    True
    >>> A, b = rotation.affine(np.array([[np.pi / 2]]))
    >>> A.round(3).tolist(), b.tolist()
    ([[[0.0, -1.0], [1.0, 0.0]]], [[0.0, 0.0]])

    A product of them acts through one warp: here a shift one row down, then a quarter turn.

    >>> group = rotation * ImageTranslation((4, 4), Discrete([-1.0, 0.0, 1.0]))
    >>> X = np.zeros((1, 16))
    >>> X[0, 5] = 1.0  # one bright pixel at (1, 1)
    >>> Y = group.act(X, [[np.pi / 2, 1.0, 0.0]])
    >>> shifted = np.roll(X.reshape(4, 4), 1, axis=0)
    >>> np.array_equal(Y[0, 0].reshape(4, 4), np.rot90(shifted))
    True
    """

    kind = "additive"

    #: What an image group derives from the form of its affine map rather than through :meth:`affine`: the library
    #: group of grid angles that replaces it (:meth:`grid_subgroup`), the polar FFT (a rotation about the centre is
    #: a roll of polar samples), its claims about other groups. A subclass with its own ``affine`` (a rotation about
    #: another point, a shear) keeps the warps, their transposes and one warp for a product, all computed through
    #: its map, and takes these back to :class:`Group`'s (``Group.__init_subclass__``) unless it defines them beside.
    _FROM_AFFINE = ("grid_subgroup", "is_polar", "n_shifts", "shift_index", "commutes_with", "law_invariant_under")
    _ACTION_SOURCES = Group._ACTION_SOURCES + (("affine", _FROM_AFFINE),)

    def __init__(self, image_shape):
        self.image_shape = _check_image_shape(image_shape)

    @property
    def n_features(self):
        return int(np.prod(self.image_shape))

    def _shape_text(self):
        return f"images of shape {self.image_shape}"

    def affine(self, E):
        """``(A, b)`` of each element: ``g(u) = A (u - c) + c + b``, shapes (len(E), 2, 2) and (len(E), 2)."""
        raise NotImplementedError

    def _act(self, X, E):
        A, b = self.affine(E)
        return _warp(X, self.image_shape, A, b, True)

    def _act_each(self, X, E):
        A, b = self.affine(E)
        return _warp_each(X, self.image_shape, A, b, True)

    def inverse_affine(self, E):
        """``(A^{-1}, -A^{-1} b)``: the map g^{-1} (exact for any composition of affine factors)."""
        A, b = self.affine(E)
        Ainv = np.linalg.inv(A)
        return Ainv, -np.einsum("nij,nj->ni", Ainv, b)

    def _act_inverse(self, X, E):
        A, b = self.inverse_affine(E)
        return _warp(X, self.image_shape, A, b, True)

    def _act_inverse_each(self, X, E):
        A, b = self.inverse_affine(E)
        return _warp_each(X, self.image_shape, A, b, True)

    def _act_adjoint(self, X, E):
        A, b = self.affine(E)
        return _warp_adjoint(X, self.image_shape, A, b, True)

    #: the stacked warp matrix makes the moved rows as columns (Group._act_columns)
    _makes_columns = True

    def _act_columns(self, X, E, inverse=False):
        A, b = self.inverse_affine(E) if inverse else self.affine(E)
        return _warp_columns(X, self.image_shape, A, b, True)

    # No is_unitary here: an affine map keeps dot products only where it keeps areas (|det A| = 1), which a
    # rotation and a translation do and a scaling or a subclass's own map need not; inherited True, a user's
    # stretch of the grid had its features computed on the templates, <x, g^-1 t>, |det A| away from Eq. 7's.
    #: the warp is a sparse linear map of the pixels (bilinear interpolation): its transpose is known
    has_adjoint = True

    @property
    def is_symmetric(self):
        return self.distribution_symmetric()

    def distribution_symmetric(self):
        raise NotImplementedError

    def fuse_product(self, product):
        """One warp for a product of affine image groups on the same images."""
        # a factor with its own _act (Group.__init_subclass__) acts otherwise than the warp of its affine map
        if all(isinstance(f, AffineImageGroup) and type(f)._act is AffineImageGroup._act
               and f.image_shape == self.image_shape for f in product.factors):
            return _FusedAffine(product)
        return None


class _FusedAffine(AffineImageGroup):
    def __init__(self, product: ProductGroup):
        self.product = product
        self.image_shape = product.factors[0].image_shape

    def affine(self, E):
        parts = self.product.split(E)
        A, b = self.product.factors[0].affine(parts[0])
        for f, p in zip(self.product.factors[1:], parts[1:]):
            A2, b2 = f.affine(p)
            # (A, b) ∘ (A2, b2) = (A A2, A b2 + b)
            b = np.einsum("nij,nj->ni", A, b2) + b
            A = A @ A2
        return A, b


class ImageRotation(AffineImageGroup):
    """Rotations of images about their centre, SO(2) (angles in radians).

    An element is the angle θ, counterclockwise as the array is displayed
    (θ = π/2 is ``np.rot90`` of the image); turns by multiples of 90° of a square image move
    whole pixels (exact), every other angle interpolates bilinearly (unitary up to
    interpolation and what leaves the frame).

    Parameters
    ----------
    image_shape : (H, W) or (H, W, C)
        Shape of the images; channels are rotated alike.
    angle : Distribution, default=None
        Law of the angle (a circular parameter). None: ``Uniform(-pi, pi)``, the Haar
        measure of the full circle. Mroueh's local invariance uses
        ``Uniform(-np.radians(20), np.radians(20))``; Raj uses ``VonMises``.
    n_angles : int, default=None
        Use the finite subgroup of the ``n_angles`` rotations by ``2πk/n_angles``
        with uniform q (``n_angles=4``: the exact 90° turns of a square grid).
        Not together with ``angle`` (``ValueError``).

    Examples
    --------
    >>> import numpy as np
    >>> from orbitkernels.groups import ImageRotation, Uniform
    >>> X = np.arange(32.0).reshape(2, 16)  # two 4 x 4 images as rows
    >>> group = ImageRotation((4, 4), n_angles=4)
    >>> group
    ImageRotation(image_shape=(4, 4), n_angles=4)
    >>> Y = group.act(X, group.elements())  # the four quarter turns of both images
    >>> Y.shape
    (4, 2, 16)
    >>> np.array_equal(Y[1, 0].reshape(4, 4), np.rot90(X[0].reshape(4, 4)))
    True

    Mroueh et al.'s local invariance, rotations of up to 20 degrees either way:

    >>> local = ImageRotation((4, 4), angle=Uniform(-np.radians(20), np.radians(20)))
    >>> local.sample(3, random_state=0).shape
    (3, 1)
    """

    kind = "circular"
    #: a rotation keeps areas (det A = 1): exact on the image inside its inscribed disc, up to interpolation
    is_unitary = True

    def __init__(self, image_shape, angle=None, n_angles=None):
        super().__init__(image_shape)
        if angle is not None and n_angles is not None:
            raise ValueError("give either angle (a distribution) or n_angles (a finite subgroup), not both")
        self.n_angles = check_int(n_angles, "n_angles", min_value=1, max_value=MAX_COUNT, allow_none=True)
        self.angle = _check_distribution(angle if angle is not None else Uniform(-np.pi, np.pi), "angle", "circular")
        self.is_finite = self.n_angles is not None

    def _repr_args(self):
        extra = f"n_angles={self.n_angles}" if self.is_finite else f"angle={self.angle!r}"
        return f"image_shape={self.image_shape}, {extra}"

    def elements(self):
        if not self.is_finite:
            return super().elements()
        return (2 * np.pi * np.arange(self.n_angles) / self.n_angles)[:, None]

    def _sample(self, n, rng):
        return np.asarray(self.angle.sample(n, rng), dtype=float)[:, None]

    def _unit_laws(self):
        return None if self.is_finite else [self.angle]

    def is_haar(self):
        """Whether q is the Haar measure of the full circle (uniform over 2π)."""
        law = self.angle
        if self.is_finite:
            return False
        if isinstance(law, VonMises):
            return law.kappa == 0
        # a whole number of turns: Uniform(-π, 1.5π) wraps to a non-uniform law on the circle
        return isinstance(law, Uniform) and law._wrap()[1] == 0.0

    def grid_subgroup(self, n):
        """The n rotations by 2πk/n, when q is the full circle's Haar measure.

        Averaging over the n-element subgroup C_n integrates exactly every
        function of the angle band-limited below n (no sampling noise). The
        features are exactly invariant to the quarter turns among its elements
        only: every other turn of a pixel grid interpolates (measured on 8x8
        digits padded to 12x12, n = 36: changes of 1e-16 at 90 degrees, about 0.09
        at 10-330 degrees, ``tests/test_docs_audit.py``). Measured on MNIST digits, upright
        train (3000), randomly rotated test (2000), 2000 random Fourier features +
        ridge (``benchmarks/rotation_default.py``): 64 i.i.d. angles 0.714 accuracy,
        64 grid angles with bilinear warps 0.942, on the polar grid 0.943 in a fifth
        of the time. For single-channel images the group is therefore
        :class:`~orbitkernels.groups.polar.PolarRotation` (the polar FFT path of the
        engine; bilinear grid warps where the engine cannot use it, e.g. non-dot
        kernels), otherwise ``ImageRotation(shape, n_angles=n)``. Every path stays
        reachable explicitly: ``ImageRotation(shape, n_angles=n)`` (bilinear grid),
        ``PolarRotation(shape, n_angles=n)``, or i.i.d. angles with ``sampling="iid"``.
        """
        if not self.is_haar():
            return None
        if len(self.image_shape) == 2:
            from .polar import PolarRotation  # polar builds on this module

            return PolarRotation(self.image_shape, n_angles=n)
        return ImageRotation(self.image_shape, n_angles=n)

    def identity(self):
        return np.zeros((1, 1))

    def inverse(self, E):
        E = self._check_elements(E)
        return np.mod(-E + np.pi, 2 * np.pi) - np.pi if not self.is_finite else np.mod(-E, 2 * np.pi)

    def affine(self, E):
        # a product's angles are a strided column of its elements: NumPy 1.x takes its scalar cos for those (another
        # last bit than its vector loop for the same angles, 610 of 1000), or for a few angles either by where the
        # result lands next to them (a rotation moved by an ulp in one test run of ~40); contiguous, always the same
        t = np.ascontiguousarray(E[:, 0])
        c, s = np.cos(t), np.sin(t)
        A = np.stack([np.stack([c, -s], -1), np.stack([s, c], -1)], -2)
        return A, np.zeros((len(E), 2))

    def distribution_symmetric(self):
        return True if self.is_finite else self.angle.is_symmetric("circular")

    def commutes_with(self, other):
        return isinstance(other, (ImageRotation, ImageScaling)) and other.image_shape == self.image_shape


class ImageTranslation(AffineImageGroup):
    """Translations of images by ``(d_row, d_col)`` pixels, zeros shifted in.

    An element ``(d_row, d_col)`` moves the content ``d_row`` pixels down and ``d_col``
    pixels right; integer shifts of content that stays inside the frame are exact,
    fractional ones interpolate bilinearly.

    Parameters
    ----------
    image_shape : (H, W) or (H, W, C)
        Shape of the images.
    shift : Distribution or pair of Distributions
        Law of the shift in pixels (additive): one law for both axes, drawn
        independently on each, or one law per axis ``(rows, cols)``
        (Mroueh: ``Uniform(-3, 3)``; Raj §4.3: ``Normal(sigma)``).

    Examples
    --------
    >>> import numpy as np
    >>> from orbitkernels.groups import ImageTranslation, Uniform
    >>> group = ImageTranslation((3, 3), Uniform(-1, 1))
    >>> group.sample(4, random_state=0).shape  # (d_row, d_col) per element
    (4, 2)
    >>> X = np.arange(9.0).reshape(1, 9)  # one 3 x 3 image as a row
    >>> Y = group.act(X, [[1.0, 0.0]])  # one row down, zeros shifted in
    >>> Y[0, 0].reshape(3, 3).tolist()
    [[0.0, 0.0, 0.0], [0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]
    """

    kind = "additive"
    n_params = 2
    #: a translation keeps areas: exact for content that stays inside the frame, up to interpolation
    is_unitary = True

    def __init__(self, image_shape, shift):
        super().__init__(image_shape)
        if isinstance(shift, (tuple, list)):
            if len(shift) != 2:
                raise ValueError(f"shift must be one Distribution or a pair (rows, cols); got {len(shift)} items")
            self.shift = tuple(_check_distribution(s, "shift", "additive") for s in shift)
        else:
            self.shift = (_check_distribution(shift, "shift", "additive"),) * 2

    def _repr_args(self):
        return f"image_shape={self.image_shape}, shift={self.shift!r}"

    def _sample(self, n, rng):
        return np.stack([np.asarray(s.sample(n, rng), dtype=float) for s in self.shift], axis=1)

    def _unit_laws(self):
        return list(self.shift)

    def identity(self):
        return np.zeros((1, 2))

    def inverse(self, E):
        return -self._check_elements(E)

    def affine(self, E):
        return np.broadcast_to(np.eye(2), (len(E), 2, 2)).copy(), E.copy()

    def distribution_symmetric(self):
        return all(s.is_symmetric("additive") for s in self.shift)

    def commutes_with(self, other):
        return isinstance(other, ImageTranslation) and other.image_shape == self.image_shape

    def law_invariant_under(self, other):
        """An isotropic centred Gaussian shift has the same law after a rotation."""
        a, b = self.shift
        iso = isinstance(a, Normal) and a == b and a.mean == 0.0
        return bool(iso and isinstance(other, ImageRotation))


class ImageScaling(AffineImageGroup):
    """Isotropic scalings about the image centre, intensities times ``1/scale`` (Lemma 2.1).

    An element is the factor ``s > 0``; ``s > 1`` enlarges the content about the centre. The action is
    unitary on the continuous image (``is_unitary_in_continuum``), not on the pixel grid (``is_unitary`` is
    False): by default the feature maps compute Raj et al.'s Eq. 7-8 exactly, orbit Fourier features by moving
    the scalings to their frequencies through the warps' transposes (:meth:`act_adjoint`) where the moved
    frequencies fit in ``max_memory_mb``, the other maps on the data (GICDF on its templates, by definition);
    the paper's §4.3 shortcut, g^{-1} applied to the templates, is an explicit ``action="templates"``, an
    approximation.

    Parameters
    ----------
    image_shape : (H, W) or (H, W, C)
        Shape of the images.
    scale : Distribution
        Law of the factor (> 0, a multiplicative parameter), e.g. ``LogNormal(0.3)``
        (Raj §4.3) or ``Discrete([0.85, 1.15])``.

    Examples
    --------
    Doubling the size of a one-pixel dot spreads it over its neighbours, intensities times ``1/2``:

    >>> import numpy as np
    >>> from orbitkernels.groups import Discrete, ImageScaling
    >>> group = ImageScaling((5, 5), Discrete([0.5, 2.0]))
    >>> X = np.zeros((1, 25))
    >>> X[0, 12] = 1.0  # the centre pixel of a 5 x 5 image
    >>> Y = group.act(X, [[2.0]])
    >>> Y[0, 0].reshape(5, 5)[1:4, 1:4].tolist()
    [[0.125, 0.25, 0.125], [0.25, 0.5, 0.25], [0.125, 0.25, 0.125]]
    >>> group.inverse([[2.0]]).tolist()
    [[0.5]]
    >>> group.is_unitary, group.is_unitary_in_continuum
    (False, True)
    """

    kind = "multiplicative"
    # Lemma 2.1 holds for the continuous image; on the grid, shrinking resamples without a prefilter and
    # enlarging pushes content out of the frame: <g x, t> and <x, g^{-1} t> differ by far more than the
    # interpolation of a rotation (kernel ratios 0.48-2.0 on white-noise templates), so the defaults are exact
    # (the data side, or the transposes: act_adjoint) and the paper's g^{-1} shortcut an explicit action="templates"
    is_unitary = False
    is_unitary_in_continuum = True

    def __init__(self, image_shape, scale):
        super().__init__(image_shape)
        self.scale = _check_distribution(scale, "scale", "multiplicative")
        if isinstance(scale, Discrete) and min(scale.values) <= 0:
            raise ValueError(f"scale values must be positive; got {scale.values}")

    def _repr_args(self):
        return f"image_shape={self.image_shape}, scale={self.scale!r}"

    def _sample(self, n, rng):
        return np.asarray(self.scale.sample(n, rng), dtype=float)[:, None]

    def _unit_laws(self):
        return [self.scale]

    def _check_elements(self, E, name="elements"):
        E = super()._check_elements(E, name)
        if (E <= 0).any():
            raise ValueError(f"{name}: scale factors must be positive")
        return E

    def identity(self):
        return np.ones((1, 1))

    def inverse(self, E):
        return 1.0 / self._check_elements(E)

    def affine(self, E):
        A = E[:, 0, None, None] * np.eye(2)[None]
        return A, np.zeros((len(E), 2))

    def distribution_symmetric(self):
        return self.scale.is_symmetric("multiplicative")

    def commutes_with(self, other):
        return isinstance(other, (ImageRotation, ImageScaling)) and other.image_shape == self.image_shape
