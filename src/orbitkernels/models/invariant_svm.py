"""Invariant SVM: max-margin learning with invariances, Teo et al. (NIPS 2007).

The loss of Eq. (2) charges, for an example ``(x, y)``, the worst combination of
an invariance transformation ``s`` and a competing label ``y'``::

    l(x, y, f) = sup_{s in S, y' in Y}  Gamma(y, y') (f(s(x), y') - f(s(x), y)) + Delta(y, y', s)

with ``f(x, y) = <phi(x, y), w>`` and the joint kernel
``k((x, y), (x', y')) = [y == y'] k(x, x')`` (a multi-class structured SVM, Eq. 4).
It upper-bounds the worst-case cost of Eq. (1) (Lemma 2). :class:`InvariantSVC`
minimises the regularised risk of Eq. (5) written with ``C = 1 / (lambda m)``::

    1/2 ||w||^2 + C sum_i l(x_i, y_i, f)

Its dual (Eqs. 6-7; the paper's simplex constraint of Eq. 6b, ``sum_{s, y'} alpha_isy' = 1``,
here scaled to ``= C`` and counting the zero-loss pair ``y' = y_i``) has one variable per
``(i, s, y')``::

    min_alpha 1/2 alpha' Q alpha - Delta' alpha    s.t. alpha >= 0, sum_{(s, y') in S_i} alpha_isy' <= C
    Q_(isy'),(jtz') = Gamma Gamma' k(s x_i, t x_j) ([y'=z'] - [y'=y_j] - [y_i=z'] + [y_i=y_j])

and ``f(x, y) = sum alpha_isy' Gamma(y_i, y') k(s x_i, x) ([y = y_i] - [y = y'])``
(Eq. 8; the paper's listing of Eq. 8 has the opposite overall sign convention).

Two solvers:

* ``solver="column_generation"``, Algorithm 1 (SVMStruct): per-example working
  sets ``S_i``; each pass finds, for every example, the most violating
  ``(s, y')`` (up to ``max_constraints_per_pass`` of them) and adds it when it
  exceeds ``xi_i + tol``; the dual restricted to the union of the working sets is
  then re-optimised with a real QP solver (clarabel by default, called directly;
  any other solver of ``qpsolvers`` by name),
  warm-started from the previous ``alpha``: all at once when the union has at
  most ``qp_chunk_size`` variables, otherwise (or when that QP fails) by exact
  block (decomposition) steps over the examples with the largest KKT violation. Stops when a pass
  adds nothing. Kernel columns of every added transformed vector are cached.
* ``solver="pegasos"``, Algorithm 2: stochastic sub-gradient steps ``1/(lambda t)``
  with projection onto ``||w||^2 <= 2 R[0] / lambda``, for the linear kernel
  (explicit features; put any feature map before it in a Pipeline).

Transformations are given either as a finite set (``transformations``: a list
of callables ``X -> X'`` mapping a 2-D array of rows to transformed rows, a
dict ``{label: [callables]}`` or a callable ``label -> [callables]``; the identity
is always included) or as a worst-case ``oracle(model, x, y) -> (x', y')``
(optionally ``(x', y', s)``, ``s`` being passed to the cost).
"""
from __future__ import annotations

import copy
import warnings

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassifierMixin, _fit_context
from sklearn.exceptions import ConvergenceWarning
from sklearn.metrics.pairwise import PAIRWISE_KERNEL_FUNCTIONS
from sklearn.utils._param_validation import StrOptions
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from ..groups.base import Group, resolve_group
from ..utils.kernels import PairwiseKernel, rbf_from_dots
from ..utils.params import ReplacesNestedParams
from ..utils.persistence import VersionedPickleMixin
from ..utils.validation import (
    RANDOM_STATE_CONSTRAINT,
    check_labels_per_row,
    check_not_text,
    check_random_state,
    check_rbf_precision,
    count_constraint,
    finite_real_constraint,
    max_sq_norm,
    physical_memory_bytes as _physical_memory_bytes,
    positive_real_constraint,
    scale_gamma,
)

__all__ = ["InvariantSVC", "GroupElement", "Identity", "IDENTITY", "zero_one_cost", "unit_margin"]


class Identity:
    """The identity transformation (always part of the invariance set).

    Examples
    --------
    >>> import numpy as np
    >>> from orbitkernels.models import IDENTITY, Identity
    >>> X = np.arange(6.0).reshape(2, 3)
    >>> Identity()(X) is X  # the rows themselves, not a copy
    True
    >>> Identity() == IDENTITY, IDENTITY
    (True, Identity())
    """

    def __call__(self, X):
        return X

    def __repr__(self):
        return "Identity()"

    def __eq__(self, other):
        return isinstance(other, Identity)

    def __hash__(self):
        return hash("orbitkernels.Identity")


IDENTITY = Identity()


def zero_one_cost(y, y_prime, s=None):
    """Default cost Delta(y, y', s) = [y != y'] (the paper's experiments).

    Parameters
    ----------
    y, y_prime : scalar labels
        One pair of labels (``InvariantSVC`` calls the cost once per pair); arrays are not compared
        elementwise (numpy refuses their truth value).
    s : object, default=None
        The transformation; ignored.

    Returns
    -------
    cost : float
        0.0 when ``y == y_prime``, else 1.0.

    Examples
    --------
    >>> from orbitkernels.models import zero_one_cost
    >>> zero_one_cost(3, 3), zero_one_cost(3, 5), zero_one_cost("a", "b")
    (0.0, 1.0, 1.0)
    """
    return 0.0 if y == y_prime else 1.0


def unit_margin(y, y_prime):
    """Default margin scale Gamma(y, y') = 1 (the paper's experiments).

    Parameters
    ----------
    y, y_prime : labels
        Ignored.

    Returns
    -------
    scale : float
        1.0.

    Examples
    --------
    >>> from orbitkernels.models import unit_margin
    >>> unit_margin(0, 1), unit_margin("a", "a")
    (1.0, 1.0)
    """
    return 1.0


class GroupElement:
    """One element ``g`` of a :class:`~orbitkernels.groups.Group` as a transformation ``X -> g X``.

    A finite group given as ``transformations`` becomes the finite invariance set
    S of Eq. (2) through these (its identity is the always-included
    :data:`IDENTITY`); ``cost(y, y', s)`` receives them as ``s``.

    Parameters
    ----------
    group : Group
    element : array-like of shape (n_params,)
        The element's parameters, as a row of ``group.elements()``.

    Examples
    --------
    >>> import numpy as np
    >>> from orbitkernels.groups import CyclicShift
    >>> from orbitkernels.models import GroupElement
    >>> shift = GroupElement(CyclicShift(4), [1])
    >>> shift
    GroupElement(CyclicShift(shape=(4,)), [1.0])
    >>> shift(np.array([[1.0, 2.0, 3.0, 4.0], [0.0, 0.0, 0.0, 1.0]])).tolist()
    [[4.0, 1.0, 2.0, 3.0], [1.0, 0.0, 0.0, 0.0]]

    A list of them is a finite invariance set for :class:`InvariantSVC` (``transformations=[shift]``).
    """

    def __init__(self, group, element):
        self.group = resolve_group(group)  # anything but a Group failed only when the transformation was applied
        self.element = np.asarray(element, dtype=np.float64).reshape(-1)

    def __call__(self, X):
        return self.group.act(X, self.element[None, :])[0]

    def __repr__(self):
        return f"GroupElement({self.group!r}, {self.element.tolist()})"


def _group_transformations(group, where, n_sample=None, random_state=None):
    """The non-identity elements of a finite group, or ``n_sample`` elements drawn
    from an infinite one (shared by all examples), as :class:`GroupElement` callables."""
    if group.is_finite:
        E = np.atleast_2d(np.asarray(group.elements(), dtype=np.float64))
    elif n_sample is not None:
        E = np.atleast_2d(np.asarray(group.sample(int(n_sample), random_state=random_state), dtype=np.float64))
    else:
        raise ValueError(
            f"transformations{where} is the infinite group {group!r}: column generation over a finite "
            "set needs a finite group (e.g. group.grid_subgroup(n)), n_transformations sampled elements "
            "or an oracle"
        )
    e0 = np.asarray(group.identity(), dtype=np.float64).reshape(-1)
    # the identity is IDENTITY, already first in every list
    return [GroupElement(group, e) for e in E if not np.allclose(e, e0)]


def _as_list(lst):
    return lst if isinstance(lst, Group) else list(lst)


def _transformation_lists(transformations, classes, n_sample=None, random_state=None):
    """Per class: [IDENTITY, T1, T2, ...] (identity first, duplicates of it dropped). ``n_sample`` where no list
    is an infinite Group, which alone takes it, is refused: it would be dropped in silence."""
    sampled, finite = [], []  # the infinite groups that take n_sample, and the finite ones (for the error)

    def clean(lst, where):
        if lst is None:
            lst = []
        if isinstance(lst, Group):
            if lst.is_finite:
                finite.append(lst)
            else:
                sampled.append(lst)
            lst = _group_transformations(lst, where, n_sample, random_state)
        if callable(lst) and not isinstance(lst, (list, tuple)):
            raise ValueError(f"transformations{where} must be a list of callables, got a single callable")
        out = [IDENTITY]
        for k, t in enumerate(lst):
            if not callable(t):
                raise ValueError(f"transformations{where}[{k}] is not callable: {t!r}")
            if not isinstance(t, Identity):
                out.append(t)
        return out

    if transformations is None:
        lists = [[IDENTITY] for _ in classes]
    elif isinstance(transformations, dict):
        unknown = [k for k in transformations if k not in set(classes.tolist())]
        if unknown:
            raise ValueError(f"transformations has keys {unknown[:5]} that are not labels of y")
        lists = [clean(transformations.get(c, []), f"[{c!r}]") for c in classes]
    elif isinstance(transformations, (list, tuple, Group)):
        lst = clean(transformations, "")
        lists = [lst for _ in classes]
    elif callable(transformations):
        lists = [clean(_as_list(transformations(c)), f"({c!r})") for c in classes]
    else:
        raise ValueError(
            "transformations must be None, a list of callables, a dict {label: [callables]} "
            f"or a callable label -> list; got {type(transformations).__name__}"
        )
    if n_sample is not None and not sampled:
        what = (f"the finite group {finite[0]!r} ({len(finite[0].elements())} elements), which is used whole"
                if finite else "no Group")
        raise ValueError(
            f"n_transformations={n_sample} is the number of elements sampled from an infinite Group, but "
            f"transformations has none: it has {what}. Leave n_transformations=None, or pass the "
            "transformations to use as a list of callables"
        )
    return lists


def _real_output(value, what):
    """What a user's callable returned, as float64; complex values lost their imaginary part (with a mere warning)
    and text was parsed, so both are refused."""
    arr = np.asarray(value)
    if np.iscomplexobj(arr) or arr.dtype.kind in "USmM":
        raise TypeError(f"{what} returned values of dtype {arr.dtype}; it must return real numbers")
    return arr.astype(np.float64)


def _apply(t, X, name):
    out = _real_output(t(X), f"transformation {name}")
    if out.shape != X.shape:
        raise ValueError(f"transformation {name} returned shape {out.shape} for input of shape {X.shape}")
    if not np.isfinite(out).all():
        raise ValueError(f"transformation {name} returned NaN or inf")
    return out


_QP_OPTIONS = {
    "clarabel": {"tol_gap_abs": 1e-10, "tol_gap_rel": 1e-10, "tol_feas": 1e-10},
}


# False: clarabel through qpsolvers' generic interface, the way before _clarabel_block (same
# solutions; the benchmark and tests switch it off to compare)
_DIRECT_CLARABEL = True
#: the most variables a block step of the union's re-optimisation takes (qp_chunk_size, where smaller): clarabel's
#: time grows as the cube of a dense block's size, its coupling's gain does not (the Invar-SVM benchmark's fit, 200
#: digits: 4.9 / 24.0 s at K = 10 / 50 with blocks of 100 variables, 6.2 / 25.1 s with 150, 11.4 / 39.4 s with 300;
#: benchmarks/probes/perf/invariant_svm_blocks.py)
_JOINT_BLOCK_VARS = 100
#: False: an AlmostSolved block point is taken whole where it goes down and refused otherwise, the way before
#: _descent_fraction (the probe benchmarks/probes/perf/invariant_svm_almost_solved.py switches it off to compare)
_ALMOST_SOLVED_LINE_SEARCH = True
#: the largest box (in units of the block's own weight scale) handed to the QP solver at first
_BOX_CAP = 1e6
#: the largest tolerance the working sets' dual is solved to (a duality gap of at most ``C m min(tol, _UNION_TOL_MAX)
#: / 2``): Algorithm 1's inner step is an exact QP, and SVMstruct solves it with SVMlight, whose termination
#: epsilon_crit (0.001) does not follow the epsilon of the constraints. Solved to C m tol / 2 at SVMstruct's
#: epsilon = 0.1, the multi-class VIR-SVM on Teo's 10,500 MNIST samples (50 per class x 21) ended 0.3 point of test
#: error worse (4.99 % against 4.68 %; benchmarks/probes/perf/invariant_svm_union_gap.py)
_UNION_TOL_MAX = 1e-3


def _clarabel_block(Q, q, local, h, almost=False):
    """``argmin 1/2 a'Qa + q'a`` s.t. ``a >= 0`` and, per block ``b``,
    ``sum_{local[j] = b} a_j <= h_b``, solved by clarabel directly, or None; with ``almost``, ``(a, solved)``
    for clarabel's AlmostSolved point too (``solved`` False: the caller steps toward it as far as the objective
    goes down, ``_descent_fraction``).

    The same problem, matrices and settings as ``qpsolvers.solve_qp(csc(Q), q,
    G, h, lb=0, solver="clarabel")`` (constraints ``[G; -I] a <= [h; 0]`` in one
    nonnegative cone), hence the same solution; without qpsolvers' generic
    conversions, which cost ~8x clarabel's own solve on the small blocks of
    Algorithm 1 (cProfile: 26 s of a 44 s fit, 100 rows x 30 sampled shifts).
    """
    import clarabel

    n, nb = len(q), len(h)
    # [G; -I] column by column: each variable's row of G (its block), then -1 on its own row
    indices = np.empty(2 * n, dtype=np.int64)
    indices[0::2] = local
    indices[1::2] = nb + np.arange(n)
    data = np.tile([1.0, -1.0], n)
    A = sp.csc_matrix((data, indices, np.arange(0, 2 * n + 1, 2)), shape=(nb + n, n))
    b = np.concatenate([h, -np.zeros(n)])
    settings = clarabel.DefaultSettings()
    settings.verbose = False
    for key, value in _QP_OPTIONS["clarabel"].items():
        setattr(settings, key, value)
    if Q.all():  # the usual dense block: csc_matrix(Q)'s arrays without its COO round trip
        P = sp.csc_matrix((Q.T.ravel(), np.tile(np.arange(n), n), np.arange(0, n * n + 1, n)), shape=(n, n))
    else:
        P = sp.csc_matrix(Q)
    result = clarabel.DefaultSolver(P, q, A, b, [clarabel.NonnegativeConeT(nb + n)], settings).solve()
    solved = result.status == clarabel.SolverStatus.Solved
    if not almost:
        return np.array(result.x) if solved else None
    return (np.array(result.x), solved) if solved or result.status == clarabel.SolverStatus.AlmostSolved else None


def _descent_fraction(Q, grad, d):
    """How far along ``d`` to step from a point where ``1/2 b'Qb + q'b`` has gradient ``grad``: the exact minimum
    of the objective on the segment (a fraction in (0, 1]), or None where ``d`` does not go down.

    Clarabel's AlmostSolved point of a block QP (a rank-deficient Q of a linear kernel) can overshoot the block's
    minimum along the way to it: taken whole, such a step goes up, and refused, the block was halved and solved
    again. On the segment between two feasible points every point is feasible, so its minimum is a step down
    wherever the slope is negative (benchmarks/probes/perf/invariant_svm_almost_solved.py).
    """
    slope, curv = float(grad @ d), float(d @ Q @ d)
    if not slope < 0.0:
        return None
    return min(1.0, -slope / curv) if curv > 0.0 else 1.0


def _snap_weights(a, local, n_blocks, C, floor):
    """A block QP's weights without the interior-point residue: clipped to [0, C], weights below ``floor`` 0 and
    nearly full blocks (``local``: each weight's block) scaled to C exactly."""
    a = np.clip(a, 0.0, C)
    # clarabel leaves ~1e-9 of the weights' scale on inactive constraints; counted as support
    # vectors they would inflate n_support_ by ~10% (measured on MNIST)
    a[a < floor] = 0.0
    sums = np.bincount(local, weights=a, minlength=n_blocks)
    full = sums > C * (1.0 - 1e-7)
    if full.any():
        a *= np.where(full, C / np.maximum(sums, 1e-300), 1.0)[local]
    return a


def _cache_dtype(n_cand):
    """Kernel cache precision: float64 up to 4000 candidate rows, float32 beyond (half the memory)."""
    return np.dtype(np.float64 if n_cand <= 4000 else np.float32)


def _topk_per_group(values, group, n_groups, k):
    """Indices of the k largest values of each group (any order)."""
    order = np.lexsort((-values, group))
    counts = np.bincount(group, minlength=n_groups)
    starts = np.concatenate(([0], np.cumsum(counts)[:-1]))
    rank = np.arange(order.size) - starts[group[order]]
    return order[rank < k]


class _Growing:
    """Kernel cache: a Fortran-ordered array growing by columns (and rows when square)."""

    def __init__(self, n_rows, square=False, dtype=np.float64, max_bytes=None, refuse=None):
        self.square = square
        self.n_rows = n_rows
        self.n = 0
        self.dtype = dtype
        # a cache above max_bytes is refused: refuse(n_cols, nbytes) raises the estimator's error
        self.max_bytes, self.refuse = max_bytes, refuse
        self._buf = np.zeros((0 if square else n_rows, 0), dtype=dtype, order="F")

    def nbytes(self, n_cols):
        return (n_cols if self.square else self._buf.shape[0]) * n_cols * np.dtype(self.dtype).itemsize

    def _reserve(self, n_new):
        cap = self._buf.shape[1]
        if n_new <= cap:
            return
        new_cap = max(n_new, int(cap * 1.5), 64)
        if self.max_bytes is not None:
            # while it grows, the old cache (its filled columns) and the new one are both held
            held = self.nbytes(self.n)
            if held + self.nbytes(n_new) > self.max_bytes:
                self.refuse(n_new, held + self.nbytes(n_new))
            while held + self.nbytes(new_cap) > self.max_bytes:  # less spare room near the budget
                new_cap = max(n_new, (new_cap + n_new) // 2)
        rows = new_cap if self.square else self._buf.shape[0]
        buf = np.zeros((rows, new_cap), dtype=self.dtype, order="F")
        r = self.n if self.square else self._buf.shape[0]
        buf[:r, : self.n] = self._buf[:r, : self.n]
        self._buf = buf

    def append_columns(self, cols):
        k = cols.shape[1]
        self._reserve(self.n + k)
        self._buf[:, self.n:self.n + k] = cols
        self.n += k

    def append_square(self, row, diag):
        n = self.n
        self._reserve(n + 1)
        self._buf[:n, n] = row
        self._buf[n, :n] = row
        self._buf[n, n] = diag
        self.n = n + 1

    @property
    def buf(self):
        if self.square:
            return self._buf[: self.n, : self.n]
        return self._buf[:, : self.n]


class _WorkingSetDual:
    """The dual (6) of Eq. (5) restricted to the working sets S_i of Algorithm 1.

    Variables, one per constraint ``(i, s, y')`` added so far: example ``ex``,
    kernel row ``row`` (the candidate in the finite case, the vector in the oracle
    case), vector ``vec`` (a column of the kernel cache ``K``), competing class
    ``yp``, margin scale ``g``, cost ``d`` and dual weight ``alpha``. ``coef``
    holds the coefficients of Eq. (8) per vector and ``F[row]`` the scores
    ``f(row, .)``, updated after every block step, so that the violation H of any
    cached row (the candidate search of Algorithm 1) costs no kernel evaluation.
    All solver state lives here, none on the estimator.
    """

    def __init__(self, m, nc, n_rows, K, block_solver, union_solver, chunk):
        self.v = {k: np.zeros(64, dtype=np.int64) for k in ("ex", "row", "vec", "yp")}
        self.v.update({k: np.zeros(64) for k in ("g", "d", "alpha")})
        self.nv = 0
        self.ex_vars = [[] for _ in range(m)]
        self.coef = np.zeros((0, nc))  # per vector, per class (Eq. 8)
        self.F = np.zeros((n_rows, nc))
        self.K = K
        self.row_of_vec = np.zeros(0, dtype=np.int64)
        self.block_solver, self.union_solver, self.chunk = block_solver, union_solver, int(chunk)

    def add_vectors(self, n):
        """Room for ``n`` new transformed vectors (zero weight)."""
        self.coef = np.vstack([self.coef, np.zeros((n, self.coef.shape[1]))])

    def var(self, name):
        return self.v[name][: self.nv]

    def add_var(self, ex, row, vec, yp, g, d):
        if self.nv == len(self.v["ex"]):
            for k, a in self.v.items():
                self.v[k] = np.concatenate([a, np.zeros_like(a)])
        n = self.nv
        for k, val in (("ex", ex), ("row", row), ("vec", vec), ("yp", yp), ("g", g), ("d", d), ("alpha", 0.0)):
            self.v[k][n] = val
        self.ex_vars[ex].append(n)
        self.nv += 1

    def H(self, B, yi):
        """Margin violation H_a = Gamma (f(s x_i, y') - f(s x_i, y_i)) + Delta of variables B."""
        v = self.v
        r, yp, ya = v["row"][B], v["yp"][B], yi[v["ex"][B]]
        return v["g"][B] * (self.F[r, yp] - self.F[r, ya]) + v["d"][B]

    def violations(self, yi, m, C):
        """Per example: xi_i = max(0, max_{S_i} H) and its block's share of the duality gap.

        The block is the simplex of Eq. (6b) with the zero-loss slack alpha_i0 = C - sum alpha (H = 0). Its gap
        ``C xi_i - sum_a alpha_a H_a = sum_a alpha_a (xi_i - H_a) + alpha_i0 xi_i`` (>= 0; the blocks' gaps sum to
        the primal (5) minus the dual (6) over the working sets) is at most C times the block's KKT violation
        ``xi_i - min_{alpha_a > 0} H_a``, and unlike that violation it is not held up by an interior-point
        residue (a weight of 1e-7 C on a constraint that should have none).
        """
        nv = self.nv
        ex = self.var("ex")
        H = self.H(np.arange(nv), yi)
        alpha = self.var("alpha")
        hi = np.zeros(m)
        np.maximum.at(hi, ex, H)
        gap = C * hi - np.bincount(ex, weights=alpha * H, minlength=m)
        return hi, np.maximum(gap, 0.0)

    def Q(self, B, yi):
        """Dual Hessian block (Eq. 7) of variables B."""
        v = self.v
        ya = yi[v["ex"][B]]
        pa = v["yp"][B]
        pattern = ((pa[:, None] == pa[None, :]).astype(float) - (pa[:, None] == ya[None, :])
                   - (ya[:, None] == pa[None, :]) + (ya[:, None] == ya[None, :]))
        Kb = self.K.buf[np.ix_(v["row"][B], v["vec"][B])].astype(np.float64)
        Q = (v["g"][B][:, None] * v["g"][B][None, :]) * Kb * pattern
        return 0.5 * (Q + Q.T)

    def solve_block(self, exs, yi, C, solver, warn=True):
        """Exactly re-optimise the dual (6) over the working sets of examples ``exs``,
        the other weights fixed (warm start), with clarabel or a qpsolvers QP solver.
        Whether the solver succeeded (the weights are left unchanged when it did not)."""
        exs = np.asarray(exs)
        B = np.concatenate([np.asarray(self.ex_vars[e], dtype=np.int64) for e in exs])
        if B.size == 0:
            return True
        Q = self.Q(B, yi)
        a_old = self.v["alpha"][B].copy()
        q = -self.H(B, yi) - Q @ a_old
        local = np.searchsorted(exs, self.v["ex"][B]) if len(exs) > 1 else np.zeros(len(B), dtype=np.int64)
        # Solved in units where the objective and the weights are of order 1: a = t b with t the weights' natural
        # size (at most C), the objective divided by t^2 max diag Q. clarabel's tolerances are partly absolute
        # (1e-10): scaled by diag Q alone, the block of a linear kernel on raw pixels (|x| ~ 1e3, weights ~ 1e-6)
        # had an objective of 1e-13, "solved" at a point worse than a = 0, and a large C snapped every weight to 0.
        dq = float(np.abs(np.diag(Q)).max())
        dq = dq if dq > 0 else 1.0
        t = min(float(C), float(np.abs(q).max()) / dq)
        t = t if t > 0 else float(C)
        Q /= dq
        q /= t * dq
        b_old = a_old / t
        # clarabel fails on boxes far beyond the weights' size (b = 1 under a box of 2e9 at C = 1e7): the box is
        # capped, and lifted again below in the rare case a block reaches the cap
        box = float(C) / t
        h = np.full(len(exs), min(box, _BOX_CAP))
        a_new, exact = self._solve_scaled(Q, q, local, h, solver)
        if a_new is not None and box > _BOX_CAP and np.bincount(local, weights=a_new).max() > 0.5 * _BOX_CAP:
            # where no block is near the cap its constraints are inactive: the KKT point is the uncapped problem's
            a_new, exact = self._solve_scaled(Q, q, local, np.full(len(exs), box), solver)
        if a_new is not None:
            a_new = _snap_weights(t * np.asarray(a_new), local, len(exs), C, floor=1e-7 * t)
            da = a_new - a_old
            db = da / t
            if not exact:
                # an AlmostSolved point is a direction (q holds -H - Q a_old: the gradient at b_old is q + Q b_old)
                grad = q + Q @ b_old
                if _ALMOST_SOLVED_LINE_SEARCH:
                    frac = _descent_fraction(Q, grad, db)
                else:  # the way before: the whole step where it goes down
                    frac = 1.0 if 0.5 * db @ Q @ db + grad @ db < 0.0 else None
                if frac is None:
                    a_new = None
                elif frac < 1.0:
                    da *= frac
                    a_new = a_old + da
        if a_new is None:
            if warn:
                warnings.warn(f"QP solver {solver!r} failed on a block of {len(B)} variables",
                              ConvergenceWarning, stacklevel=3)
            return False
        self.v["alpha"][B] = a_new
        self.apply_delta(B, da, yi)
        return True

    @staticmethod
    def _solve_scaled(Q, q, local, h, solver):
        """``argmin 1/2 b'Qb + q'b`` s.t. ``b >= 0`` and the blocks' sums at most ``h``, and whether it is exact
        (False: clarabel's AlmostSolved point); ``(None, True)`` when the solver failed."""
        import qpsolvers

        if len(q) == 1:
            # one variable (Algorithm 1's first constraint of an example): the clipped minimiser, exactly; clarabel
            # 0.6 (the oldest allowed) failed on min b^2 / 2 + b under 0 <= b <= 4426, whose answer is its bound
            Q00, q0 = float(Q[0, 0]), float(q[0])
            b = min(max(-q0 / Q00, 0.0), float(h[0])) if Q00 > 0 else (float(h[0]) if q0 < 0 else 0.0)
            return np.array([b]), True
        exact = True
        if solver == "clarabel" and _DIRECT_CLARABEL:
            # clarabel stops short of its tolerances (AlmostSolved) on the rank-deficient Q of a linear kernel,
            # where its point still shows a way down: a step along it (the duality gap of the sweeps says what is left)
            a_new, exact = _clarabel_block(Q, q, local, h, almost=True) or (None, True)
        elif solver == "clarabel":
            n = len(q)
            Gm = sp.csc_matrix((np.ones(n), (local, np.arange(n))), shape=(len(h), n))
            problem = qpsolvers.Problem(sp.csc_matrix(Q), q, Gm, h, lb=np.zeros(n))
            with warnings.catch_warnings():  # its AlmostSolved warning: the point is judged below, as the direct one
                warnings.simplefilter("ignore", UserWarning)
                sol = qpsolvers.solve_problem(problem, solver=solver, **_QP_OPTIONS.get(solver, {}))
            exact = bool(sol.found)
            a_new = sol.x if exact or str(sol.extras.get("status")).endswith("AlmostSolved") else None
        else:
            n = len(q)
            Gm = np.zeros((len(h), n))
            Gm[local, np.arange(n)] = 1.0
            Qs = Q + 1e-10 * np.eye(n)  # strictly convex for active-set solvers
            a_new = qpsolvers.solve_qp(Qs, q, Gm, h, lb=np.zeros(n), solver=solver, **_QP_OPTIONS.get(solver, {}))
        return a_new, exact

    def apply_delta(self, B, da, yi):
        nz = da != 0
        if not nz.any():
            return
        B, da = B[nz], da[nz]
        v = self.v
        vec = v["vec"][B]
        w = da * v["g"][B]
        touched, loc = np.unique(vec, return_inverse=True)
        dcoef = np.zeros((len(touched), self.coef.shape[1]))
        np.add.at(dcoef, (loc, yi[v["ex"][B]]), w)
        np.add.at(dcoef, (loc, v["yp"][B]), -w)
        self.coef[touched] += dcoef
        self.F += self.K.buf[:, touched] @ dcoef

    def optimize_union(self, yi, m, C, tol, max_sweeps):
        """Re-optimise the dual over the union of all working sets.

        At most ``qp_chunk_size`` variables: one exact QP. Then, where the union
        is larger, that QP failed or left a gap, exact block steps over the
        examples whose share of the duality gap (:meth:`violations`) exceeds
        ``C tol``, the largest first, their working sets together up to
        ``min(qp_chunk_size, 100)`` variables a step, until the working sets'
        whole gap is at most ``m C tol``, or for ``max_sweeps`` sweeps. Returns
        the number of QPs solved and whether the gap was met.
        """
        if self.nv == 0:
            return 0, True
        exs_all = np.flatnonzero([len(s) > 0 for s in self.ex_vars])
        # clarabel stops short of its 1e-10 tolerances (AlmostSolved) on the rank-deficient Q of a linear or
        # poly kernel; the union was then left unoptimised and the fit "converged" with a duality gap of 1 in 30
        n = 0
        if self.nv <= self.chunk and self.solve_block(exs_all, yi, C, self.union_solver, warn=False):
            n = 1
        for _ in range(max_sweeps):
            _, gap = self.violations(yi, m, C)
            if gap.sum() <= m * C * tol:
                return n, True
            todo = np.flatnonzero(gap > C * tol)  # not empty: the gap's sum is above m times that
            # one example's working set a step left a strongly coupled dual (a linear kernel of low rank) 1e-2 from
            # its optimum after 100 sweeps (1500 steps), and the fit "converged" on it: blocks of many examples
            order = todo[np.argsort(-gap[todo])]
            for block in self._blocks(order):
                n += self._solve_joint(block, yi, C)
        _, gap = self.violations(yi, m, C)
        return n, bool(gap.sum() <= m * C * tol)

    def _solve_joint(self, block, yi, C):
        """One block step over the examples ``block``; where it fails (a rank-deficient Q that clarabel leaves short
        of a step down), each half of it in turn. The number of QPs solved."""
        if len(block) == 1:
            self.solve_block(block, yi, C, self.block_solver)
            return 1
        if self.solve_block(block, yi, C, self.block_solver, warn=False):
            return 1
        half = len(block) // 2
        return 1 + self._solve_joint(block[:half], yi, C) + self._solve_joint(block[half:], yi, C)

    def _blocks(self, exs):
        """``exs`` (in order) cut into runs of at most ``min(chunk, _JOINT_BLOCK_VARS)`` variables, one example at
        least per run; each run sorted, as ``solve_block`` takes it."""
        sizes = np.array([len(self.ex_vars[e]) for e in exs])
        out, start, used = [], 0, 0
        for k, size in enumerate(sizes):
            if k > start and used + size > min(self.chunk, _JOINT_BLOCK_VARS):
                out.append(np.sort(exs[start:k]))
                start, used = k, 0
            used += size
        out.append(np.sort(exs[start:]))
        return out

    def objectives(self, loss_sum, C):
        """(dual (6), primal (5)) objectives; ``loss_sum`` is the summed loss of Eq. (2)."""
        # ||w||^2 = sum_v coef_v' f(v, .) over the rows of the vectors
        wnorm2 = float(np.einsum("vc,vc->", self.coef, self.F[self.row_of_vec]))
        return float(self.var("alpha") @ self.var("d")) - 0.5 * wnorm2, 0.5 * wnorm2 + C * float(loss_sum)

    def support(self, Vdata):
        """Distinct vectors with non-zero weight and their merged coefficients of Eq. (8)."""
        nz = np.abs(self.coef).max(axis=1) > 0 if len(self.coef) else np.zeros(0, bool)
        sv = np.asarray(Vdata[nz], dtype=np.float64)
        coef = self.coef[nz]
        if len(sv):
            sv, inv = np.unique(sv, axis=0, return_inverse=True)
            inv = np.ravel(inv)
            merged = np.zeros((len(sv), coef.shape[1]))
            np.add.at(merged, inv, coef)
            keep = np.abs(merged).max(axis=1) > 0
            sv, coef = sv[keep], merged[keep]
        return sv, coef


class _FiniteCandidates:
    """Candidate source of Algorithm 1 for a finite invariance set: every
    transformed copy ``s(x_i)``, ``s in S``, is a kernel row of the cache, so the
    most violated constraints of a batch of examples are read off ``dual.F``."""

    def __init__(self, est, X, yi):
        self.est, self.yi, self.m, self.nc = est, yi, X.shape[0], len(est.classes_)
        self.Xc, self.ex, _, self.ptr, self.D = est._candidates(X, yi)
        self.n_rows = n_cand = len(self.Xc)
        dtype = _cache_dtype(n_cand)
        self.Xk = self.Xc.astype(dtype)
        self.sq = np.einsum("ij,ij->i", self.Xk, self.Xk) if est._is_rbf() else None
        if self.sq is not None:
            m2 = max_sq_norm(self.Xc)
            check_rbf_precision(type(est).__name__, est._gamma, m2, m2, dtype)
        # cached kernel columns of V against every candidate, in what the copies leave of the budget
        self.K = _Growing(n_cand, dtype=dtype, max_bytes=est._budget_bytes() - est._candidate_bytes(
            n_cand, X.shape[1]), refuse=est._cache_refusal(n_cand))
        self.vec_of_cand = np.full(n_cand, -1, dtype=np.int64)

    def add_violators(self, dual, C, tol):
        est, yi, m, nc, ex, ptr, D = self.est, self.yi, self.m, self.nc, self.ex, self.ptr, self.D
        G, vec_of_cand = est._G, self.vec_of_cand
        kmax = int(est.max_constraints_per_pass)
        batch = max(1, int(est.batch_size))
        n_added = 0
        for start in range(0, m, batch):
            exb = np.arange(start, min(m, start + batch))
            rows = np.arange(ptr[exb[0]], ptr[exb[-1] + 1])
            Fr = dual.F[rows]
            Hc = G[yi[ex[rows]]] * (Fr - Fr[np.arange(len(rows)), yi[ex[rows]]][:, None]) + D[rows]
            xi = np.zeros(m)
            if dual.nv:
                hi, _ = dual.violations(yi, m, C)
                xi = hi
            flat = Hc.ravel()
            grp = np.repeat(ex[rows], nc)
            idx = np.flatnonzero(flat > xi[grp] + tol)
            if idx.size == 0:
                continue
            pick = idx[_topk_per_group(flat[idx], grp[idx], m, kmax)]
            c_idx, yp = np.divmod(pick, nc)
            c_idx = rows[c_idx]
            new_c = np.unique(c_idx[vec_of_cand[c_idx] < 0])
            if new_c.size:  # cache the kernel columns of the new transformed vectors
                n_old = len(dual.row_of_vec)
                vec_of_cand[new_c] = np.arange(n_old, n_old + new_c.size)
                dual.row_of_vec = np.concatenate([dual.row_of_vec, new_c])
                self.K.append_columns(est._kernel_cached(self.Xk, self.sq, new_c))
                dual.add_vectors(new_c.size)
            for e in np.unique(ex[c_idx]):
                sel = ex[c_idx] == e
                for c, y2 in zip(c_idx[sel], yp[sel]):
                    dual.add_var(e, c, vec_of_cand[c], y2, G[yi[e], y2], D[c, y2])
                    n_added += 1
                # Algorithm 1: optimise (6) over alpha_iz, z in S_i
                dual.solve_block([e], yi, C, dual.block_solver)
        return n_added

    def loss_sum(self, dual):
        """Summed loss (2) over the whole finite set (for the primal objective)."""
        yi, ex = self.yi, self.ex
        Hc = self.est._G[yi[ex]] * (dual.F - dual.F[np.arange(self.n_rows), yi[ex]][:, None]) + self.D
        loss = np.full(self.m, -np.inf)
        np.maximum.at(loss, ex, Hc.max(axis=1))
        return loss.sum()

    def vectors(self, dual):
        return self.Xc[dual.row_of_vec]


def _oracle_output(out, d, cls_index):
    """``(x', index of y', s)`` of what an oracle returned, checked: Algorithm 1 and Algorithm 2 build the
    model from it, so a NaN vector or an unknown label would otherwise end as NaN weights or an IndexError."""
    if not isinstance(out, tuple) or len(out) not in (2, 3):
        raise ValueError("oracle must return (x_transformed, y_prime) or (x, y_prime, s)")
    xt = _real_output(out[0], "oracle").reshape(-1)
    if xt.shape[0] != d or not np.isfinite(xt).all():
        raise ValueError(f"oracle returned a vector of shape {np.shape(out[0])} or with NaN/inf")
    try:
        c2 = cls_index[out[1]]
    except (KeyError, TypeError):
        raise ValueError(f"oracle returned y_prime={out[1]!r}, not a label of y") from None
    return xt, c2, out[2] if len(out) == 3 else None


class _OracleCandidates:
    """Candidate source of Algorithm 1 from ``oracle(model, x, y) -> (x', y'[, s])``:
    the worst case of Eq. (2) for the current model, one example at a time; each
    returned vector becomes a row and a column of a square kernel cache."""

    n_rows = 0

    def __init__(self, est, X, yi):
        self.est, self.X, self.yi = est, X, yi
        self.cls_index = {c: k for k, c in enumerate(est.classes_.tolist())}
        self.K = _Growing(0, square=True, max_bytes=est._budget_bytes(), refuse=est._cache_refusal())
        self.Vdata = np.zeros((0, X.shape[1]))
        self.loss = np.zeros(X.shape[0])

    def _worst_case(self, i, dual):
        """The oracle's worst case for example ``i`` at the current model: its vector, class index, its kernel
        row against the vectors, the scores f, the cost, its margin violation H and the working set's slack."""
        est, X, yi, Vdata = self.est, self.X, self.yi, self.Vdata
        out = est.oracle(_CurrentModel(est, _KernelExpansion(Vdata, dual.coef.copy())), X[i].copy(),
                         est.classes_[yi[i]])
        xt, c2, s = _oracle_output(out, X.shape[1], self.cls_index)
        kx = est._kernel(xt[None, :], Vdata)[0] if len(Vdata) else np.zeros(0)
        f = kx @ dual.coef if len(Vdata) else np.zeros(len(est.classes_))
        d = est._cost(est.classes_[yi[i]], out[1], s)
        H = est._G[yi[i], c2] * (f[c2] - f[yi[i]]) + d
        Si = np.asarray(dual.ex_vars[i], dtype=np.int64)
        xi = max(0.0, float(dual.H(Si, yi).max())) if Si.size else 0.0
        return xt, c2, kx, f, d, H, xi

    def add_violators(self, dual, C, tol):
        est, X, yi, K = self.est, self.X, self.yi, self.K
        G, n_added = est._G, 0
        for i in range(X.shape[0]):
            Vdata = self.Vdata
            xt, c2, kx, f, d, H, xi = self._worst_case(i, dual)
            self.loss[i] = max(H, xi)
            if H <= xi + tol:
                continue
            n_old = len(Vdata)
            self.Vdata = np.vstack([Vdata, xt[None, :]])
            K.append_square(kx, float(est._kernel(xt[None, :], xt[None, :])[0, 0]))
            dual.add_vectors(1)
            dual.F = np.vstack([dual.F, f[None, :]])
            dual.row_of_vec = np.arange(len(self.Vdata))
            dual.add_var(i, n_old, n_old, c2, G[yi[i], c2], d)
            n_added += 1
            dual.solve_block([i], yi, C, dual.block_solver)  # Algorithm 1
        return n_added

    def loss_sum(self, dual, fresh=False):
        """Summed loss (2) with the oracle's worst cases of the last pass; ``fresh``: asked of the oracle again at
        the final model (a pass that added constraints, or the union's re-optimisation after it, moved the model
        after the oracle was asked: a fit stopped by max_iter reported a primal objective up to 25 % off)."""
        if fresh:
            for i in range(self.X.shape[0]):
                *_, H, xi = self._worst_case(i, dual)
                self.loss[i] = max(H, xi)
        return np.maximum(self.loss, 0.0).sum()

    def vectors(self, dual):
        return self.Vdata


class _LinearExpansion:
    """Algorithm 2's model: ``f(x, y) = <coef[y], x>``."""

    def __init__(self, coef):
        self.coef = coef

    def scores(self, estimator, X):
        return X @ self.coef.T


class _KernelExpansion:
    """Algorithm 1's model: ``f(x, y) = sum_v k(v, x) dual_coef[v, y]`` (Eq. 8)."""

    def __init__(self, support_vectors, dual_coef):
        self.support_vectors, self.dual_coef = support_vectors, dual_coef

    def scores(self, estimator, X):
        return estimator._kernel_scores(X, self.support_vectors, self.dual_coef)


class _FitResult:
    """Everything one call of ``fit`` produced beyond ``classes_``: the model (an
    expansion) and the solver's diagnostics. ``fit`` replaces it whole, so a refit with
    another solver leaves nothing of the previous one behind; ``None`` marks what the
    solver does not produce (the estimator's properties then raise AttributeError)."""

    def __init__(self, expansion, n_iter, converged, n_constraints=None, n_active_constraints=None,
                 dual_objective=None, primal_objective=None):
        self.expansion, self.n_iter, self.converged = expansion, n_iter, converged
        self.n_constraints, self.n_active_constraints = n_constraints, n_active_constraints
        self.dual_objective, self.primal_objective = dual_objective, primal_objective


class _CurrentModel:
    """What an oracle sees of the model being fitted: ``class_scores`` (``f`` of Eq. 8
    for the current dual weights, or the current Pegasos weights), ``classes_`` and,
    read through, the estimator's parameters. Keeps in-fit state off the estimator."""

    def __init__(self, estimator, expansion):
        self._estimator, self._expansion = estimator, expansion

    def class_scores(self, X):
        return self._expansion.scores(self._estimator, np.asarray(X, dtype=np.float64))

    def __getattr__(self, name):
        return getattr(self._estimator, name)


_CG = "column_generation"


def _fitted_property(name, doc, solver=None):
    """A fitted attribute read from the last fit's :class:`_FitResult` (AttributeError,
    as before ``fit``, when that fit did not produce it)."""

    def get(self):
        fit = self.__dict__.get("_fit_result")
        value = None if fit is None else name(fit) if callable(name) else getattr(fit, name)
        if value is None:
            what = f"only with solver={solver!r}" if fit is not None and solver else "after fit"
            raise AttributeError(f"{type(self).__name__} has this attribute {what}")
        return value

    return property(get, doc=doc)


def _expansion_part(kind, attr):
    return lambda fit: getattr(fit.expansion, attr) if isinstance(fit.expansion, kind) else None


def _own_kernel(kernel):
    """The kernel a fit keeps: a copy of a kernel with parameters of its own (a ``HaarKernel``), the kernel itself
    otherwise (a name, a function).

    A ``HaarKernel`` fixes its elements and ``gamma="scale"`` on its first call and keeps them: used as it was given,
    a second ``fit`` on other data kept the first one's gamma, and ``set_params(kernel__gamma=...)`` after ``fit``
    changed the predictions of the fitted model. A copy (not a clone) keeps what the caller resolved on purpose
    (``HaarKernel(...).fit(X)``).
    """
    return copy.deepcopy(kernel) if hasattr(kernel, "get_params") else kernel


def _primal_coef(fit):
    """``coef_`` of either model: Pegasos' weights, or for a linear kernel ``sum_v dual_coef[v] v``."""
    e = fit.expansion
    if isinstance(e, _LinearExpansion):
        return e.coef
    return e.dual_coef.T @ e.support_vectors if getattr(e, "linear", False) else None


class InvariantSVC(VersionedPickleMixin, ReplacesNestedParams, ClassifierMixin, BaseEstimator):
    """Multi-class SVM with the invariance-sensitive max-margin loss of Teo et al. (2007), Eq. (2).

    Parameters
    ----------
    C : float > 0, default=1.0
        Weight of the summed loss (``C = 1 / (lambda m)`` in Eq. 5).
    kernel : str or callable, default="rbf"
        A scikit-learn pairwise kernel name ("rbf", "linear", "poly", "polynomial", "sigmoid",
        "laplacian", "cosine", "chi2", "additive_chi2") or a callable ``kernel(A, B) -> Gram matrix``
        of two 2-D arrays of rows.
    gamma : float > 0, "scale" or "auto", default="scale"
        Kernel width for rbf/poly/sigmoid/laplacian/chi2; "scale" is
        ``1 / (n_features * X.var())`` and "auto" ``1 / n_features``, as in
        :class:`sklearn.svm.SVC`. The value used is ``gamma_``.
    degree : int >= 1, default=3
        Degree of the "poly" kernel (a positive integer: a fractional power of a
        negative γ<x, z> + c0 is NaN).
    coef0 : float, default=0.0
        Kernel parameter of "poly" / "sigmoid" (finite).
    transformations : None, list of callables, finite Group, dict or callable, default=None
        The finite invariance set S (identity always included; None: the identity alone, a plain
        multi-class SVM). Each callable maps a 2-D array of rows to an array of the same shape. A finite
        :class:`~orbitkernels.groups.Group` stands for all its elements (as
        :class:`GroupElement` callables); an infinite one needs ``n_transformations``. A dict
        ``{label: [callables] or Group}`` or a callable ``label -> [callables]`` makes the set label-dependent.
    oracle : callable or None, default=None
        ``oracle(model, x, y) -> (x_transformed, y_prime)`` (or with a third item
        ``s`` passed to ``cost``): the worst case of Eq. (2) for the current
        model (``model.class_scores`` gives ``f(x, .)``). Exclusive with
        ``transformations``. With an oracle there is no finite set: :meth:`invariant_loss`,
        :meth:`worst_case_cost` and :meth:`transformed_margins` raise a ValueError.
    margin_scale : callable or None, default=None
        ``Gamma(y, y') >= 0`` (finite); None: :func:`unit_margin`, 1.
    cost : callable or None, default=None
        ``Delta(y, y', s) >= 0`` (a negative value is a ``ValueError``); None: :func:`zero_one_cost`, the
        0/1 cost. ``s`` is the transformation callable (:data:`IDENTITY` for the original), or what the oracle
        returned.
    solver : {"column_generation", "pegasos"}, default="column_generation"
        Algorithm 1 or Algorithm 2 (Pegasos needs ``kernel="linear"``).
    tol : float > 0, default=1e-3
        Epsilon of Algorithm 1 (a constraint is added when it exceeds ``xi_i + tol``).
    max_iter : int >= 1, default=100
        Passes over the data (column generation) or epochs (Pegasos).
    max_constraints_per_pass : int >= 1, default=1
        Constraints added per example and pass (Algorithm 1 adds 1).
    batch_size : int >= 1, default=64
        Column generation over a finite set: examples whose candidates are searched against one
        snapshot of the slacks ``xi_i`` (each added constraint is still followed by its example's QP).
        Unused by Pegasos and with an oracle.
    qp_solver : str or None, default=None
        Any solver name of ``qpsolvers`` that is installed, for every QP. None
        (default): clarabel (called directly, without qpsolvers' conversions),
        except that single-example block steps use quadprog when it is installed.
    qp_chunk_size : int >= 1, default=300
        Largest QP handed to the solver at once; a larger union of working sets
        is re-optimised by exact block steps over the most violating examples
        (their working sets together, up to ``min(qp_chunk_size, 100)`` variables a step).
    random_state : int, RandomState, Generator or None, default=None
        The ``n_transformations`` elements sampled from an infinite Group, and the example order of Pegasos.
    verbose : bool or int, default=False
        Print one line per pass of column generation.
    n_transformations : int >= 1 or None, default=None
        With an infinite Group as ``transformations``: the number of its elements
        sampled once (``random_state``) to make the finite set S (a finite Group uses all its elements).
        Refused where no infinite Group takes it (a finite Group, callables, an oracle).
    max_memory_mb : float > 0 or None, default=None
        Memory the fit may hold: the transformed copies ``s(x_i)`` of every row
        (all of them, as rows of X; and, for column generation, the kernel cache
        of the candidates against the vectors added, counted twice while it is
        copied to grow). A set that cannot fit is refused at ``fit`` before the
        copies are made, and before a sampled invariance set is drawn; a cache
        that outgrows what is left stops the fit with an error naming its size.
        None (default): three quarters of the machine's physical memory (taken as 8192 MB
        where the platform does not report it). Within the budget the fit is the
        same whatever its value.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    gamma_ : float
        The kernel width used (from ``gamma``; computed whatever the kernel).
    n_features_in_ : int
    support_vectors_ : ndarray of shape (n_SV, n_features)
        Distinct transformed vectors with non-zero dual weight (column generation).
    dual_coef_ : ndarray of shape (n_SV, n_classes)
        ``f(x, y) = sum_v k(v, x) dual_coef_[v, y]`` (Eq. 8; column generation).
    n_support_ : int
        Number of distinct transformed vectors with non-zero dual weight (column generation).
    coef_ : ndarray of shape (n_classes, n_features)
        ``f(x, y) = <coef_[y], x>``: Pegasos' weights, or with ``kernel="linear"``
        ``dual_coef_.T @ support_vectors_`` (as scikit-learn's ``SVC``); one row per class, also for two.
    n_iter_ : int
        Passes (column generation) or epochs (Pegasos, ``max_iter``) made.
    converged_ : bool
        Whether column generation converged: a pass added no constraint after the working sets' dual was solved
        to its tolerance (a duality gap of at most ``C m min(tol, 0.001) / 2`` over the working sets: the inner QP
        is solved to SVMstruct's fixed precision, not to the looser epsilon a user may give), so that the primal
        objective is within ``1.5 C m tol`` of the optimum over the whole invariance set (``C m tol`` for the
        constraints never added, at most ``C m tol / 2`` for the working sets). Always True for Pegasos.
    n_constraints_ : int
        Size of the final union of working sets (column generation).
    n_active_constraints_ : int
        Constraints with alpha > 0 (column generation).
    dual_objective_, primal_objective_ : float
        Objectives of the dual (6) and primal (5) (column generation; the primal evaluated on the finite
        transformation set, or with the oracle's worst case).

    Notes
    -----
    Every fitted attribute but ``classes_``, ``gamma_`` and ``n_features_in_`` comes from the last ``fit``
    alone: one that its solver does not produce raises AttributeError, so a refit with
    another solver never leaves the previous model's attributes behind.

    Examples
    --------
    Two classes of signals of length 6, one spike or two adjacent spikes, seen in training only at position 0.
    With the cyclic shifts as the invariance set the model recognises them wherever they are:

    >>> import numpy as np
    >>> from orbitkernels.groups import CyclicShift
    >>> from orbitkernels.models import InvariantSVC
    >>> rng = np.random.default_rng(0)
    >>> patterns = np.array([[1.0, 0, 0, 0, 0, 0], [1.0, 1.0, 0, 0, 0, 0]])
    >>> y = np.repeat([0, 1], 5)
    >>> X = patterns[y] + 0.1 * rng.normal(size=(10, 6))
    >>> clf = InvariantSVC(C=10.0, transformations=CyclicShift(6)).fit(X, y)
    >>> clf.predict(np.roll(X, 3, axis=1)).tolist()  # every row shifted by 3
    [0, 0, 0, 0, 0, 1, 1, 1, 1, 1]
    >>> all((clf.predict(np.roll(X, k, axis=1)) == y).all() for k in range(6))  # and by any k
    True
    >>> from sklearn.svm import SVC
    >>> SVC(C=10.0).fit(X, y).predict(np.roll(X, 3, axis=1)).tolist()  # a plain SVM does not
    [0, 0, 0, 0, 0, 0, 0, 0, 0, 0]
    """

    _parameter_constraints: dict = {
        "C": [positive_real_constraint()],
        "kernel": [StrOptions(set(PAIRWISE_KERNEL_FUNCTIONS)), callable],
        "gamma": [positive_real_constraint(), StrOptions({"scale", "auto"})],
        "degree": [count_constraint(1)],
        "coef0": [finite_real_constraint()],
        "transformations": [list, tuple, dict, Group, callable, None],
        "oracle": [callable, None],
        "margin_scale": [callable, None],
        "cost": [callable, None],
        "solver": [StrOptions({"column_generation", "pegasos"})],
        "tol": [positive_real_constraint()],
        "max_iter": [count_constraint()],
        "max_constraints_per_pass": [count_constraint()],
        "batch_size": [count_constraint()],
        "qp_solver": [str, None],
        "qp_chunk_size": [count_constraint()],
        "n_transformations": [count_constraint(), None],
        "random_state": RANDOM_STATE_CONSTRAINT,
        "verbose": ["verbose"],
        "max_memory_mb": [positive_real_constraint(), None],
    }

    def __init__(self, C=1.0, kernel="rbf", gamma="scale", degree=3, coef0=0.0,
                 transformations=None, oracle=None, margin_scale=None, cost=None,
                 solver="column_generation", tol=1e-3, max_iter=100,
                 max_constraints_per_pass=1, batch_size=64, qp_solver=None, qp_chunk_size=300,
                 random_state=None, verbose=False, n_transformations=None, max_memory_mb=None):
        self.C = C
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.transformations = transformations
        self.oracle = oracle
        self.margin_scale = margin_scale
        self.cost = cost
        self.solver = solver
        self.tol = tol
        self.max_iter = max_iter
        self.max_constraints_per_pass = max_constraints_per_pass
        self.batch_size = batch_size
        self.qp_solver = qp_solver
        self.qp_chunk_size = qp_chunk_size
        self.random_state = random_state
        self.n_transformations = n_transformations
        self.verbose = verbose
        self.max_memory_mb = max_memory_mb

    # ------------------------------------------------------------------ utils
    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = False
        tags.non_deterministic = self.solver == "pegasos" and self.random_state is None
        return tags

    def _check_params(self):
        # types and ranges: _parameter_constraints (checked by fit's _fit_context); what
        # remains are the checks that involve two parameters or the installed solvers
        if self.oracle is not None and self.transformations is not None:
            raise ValueError("give either transformations or oracle, not both")
        if self.oracle is not None and self.n_transformations is not None:
            raise ValueError(
                f"n_transformations={self.n_transformations} samples elements of an infinite Group given as "
                "transformations; an oracle finds its own: leave n_transformations=None"
            )
        if self.qp_solver is not None:
            import qpsolvers

            if self.qp_solver not in qpsolvers.available_solvers:
                raise ValueError(
                    f"qp_solver {self.qp_solver!r} is not installed; available: {qpsolvers.available_solvers}"
                )

    def _kernel(self, A, B):
        kernel = getattr(self, "_kernel_fitted", self.kernel)
        if callable(kernel):
            K = np.asarray(kernel(A, B), dtype=np.float64)
            if K.shape != (A.shape[0], B.shape[0]):
                raise ValueError(f"kernel callable returned shape {K.shape}, expected {(A.shape[0], B.shape[0])}")
            return K
        with np.errstate(over="ignore", invalid="ignore"):  # an overflow is refused just below, with its cause
            K = PairwiseKernel(kernel, dict(gamma=self._gamma, degree=self._degree, coef0=self._coef0))(A, B)
        if not np.isfinite(K).all():
            # never decide on NaN scores: argmax over NaN still returns a label
            raise ValueError(
                f"the {kernel!r} kernel overflowed on this data (gamma={self._gamma}, degree={self._degree}, "
                f"coef0={self._coef0}); rescale X or choose smaller kernel parameters"
            )
        return K

    def _gamma_value(self, X):
        if self.gamma == "scale":
            return scale_gamma(X)
        if self.gamma == "auto":
            return 1.0 / X.shape[1]
        return float(self.gamma)

    def _cost(self, y, yp, s):
        c = zero_one_cost(y, yp, s) if self.cost is None else self.cost(y, yp, s)
        c = float(c)
        if not (np.isfinite(c) and c >= 0):
            y, yp = (v.item() if isinstance(v, np.generic) else v for v in (y, yp))  # 0, not np.int64(0)
        if not np.isfinite(c):
            raise ValueError(f"cost({y!r}, {yp!r}, s) returned {c}")
        if c < 0:
            # the dual's zero-loss slack (Algorithm 1's xi = max(0, ...)) assumes loss (2) >= 0: with a negative
            # Delta(y, y, s) the fit solved another problem and reported a primal below its dual
            raise ValueError(f"cost({y!r}, {yp!r}, s) returned {c}: Delta must be non-negative (Teo et al. 2007, "
                             "Eq. 2 and Algorithm 1 take the loss to be at least 0)")
        return c

    def _margin_matrix(self):
        cl = self.classes_
        G = np.array([[1.0 if self.margin_scale is None else float(self.margin_scale(a, b)) for b in cl] for a in cl])
        if not np.isfinite(G).all() or (G < 0).any():
            raise ValueError("margin_scale must return finite non-negative values (Gamma >= 0)")
        return G

    def _candidates(self, X, yi):
        """All transformed copies of the rows of X under their label's list.

        Returns (Xc, ex, tr, ptr, D): candidate rows sorted by example, their example
        index, transformation index, example pointers and the cost table (n_cand, n_classes).
        """
        lists = self._tlists
        lengths = np.array([len(lst) for lst in lists])[yi]
        ptr = np.concatenate(([0], np.cumsum(lengths)))
        # written in place, example by example: one array of the copies (what the budget
        # counts), not a list of blocks, their stack and its reordering
        Xc = np.empty((int(ptr[-1]), X.shape[1]))
        for c in range(len(self.classes_)):
            idx = np.flatnonzero(yi == c)
            if idx.size == 0:
                continue
            for t, T in enumerate(lists[c]):
                Xc[ptr[idx] + t] = X[idx] if t == 0 else _apply(T, X[idx], f"{T!r}")
        ex = np.repeat(np.arange(X.shape[0]), lengths)
        tr = np.arange(len(ex)) - ptr[ex]
        D = self._cost_table[yi[ex], tr]
        return Xc, ex, tr, ptr, D

    def _planned_list_lengths(self):
        """Per class, a lower bound of its transformation list's length known before any is
        drawn: the identity + ``n_transformations`` for a sampled infinite group (identity
        draws, dropped later, included), else 1; None when no list is sampled."""
        def sampled(lst):
            return isinstance(lst, Group) and not lst.is_finite and self.n_transformations is not None

        t = self.transformations
        lists = [t.get(c) for c in self.classes_.tolist()] if isinstance(t, dict) else [t] * len(self.classes_)
        if not any(sampled(lst) for lst in lists):
            return None
        return [1 + int(self.n_transformations) if sampled(lst) else 1 for lst in lists]

    def _candidate_bytes(self, n_cand, d):
        """Bytes the fit holds for ``n_cand`` transformed copies of ``d`` features: the copies
        (float64) with their example index and costs, and for column generation their
        kernel-precision copy and scores F."""
        nc = len(self.classes_)
        held = n_cand * (d * 8 + 8 + nc * 8)
        if self.solver == "pegasos":
            return held
        return held + n_cand * (d * _cache_dtype(n_cand).itemsize + nc * 8)

    def _check_candidate_budget(self, counts, lengths, d, planned=False):
        n_cand = int(np.dot(counts, np.asarray(lengths, dtype=np.int64)))
        need = self._candidate_bytes(n_cand, d)
        if need > self._budget_bytes():
            what = (f"n_transformations={self.n_transformations} sampled elements would make up to" if planned
                    else "the invariance set makes")
            raise ValueError(
                f"InvariantSVC: {what} {n_cand:,} transformed copies of the {int(counts.sum()):,} rows "
                f"({d} features), {need / 2**20:,.2f} MB, more than {self._budget_text()}; use "
                "fewer transformations or rows, or a larger max_memory_mb"
            )

    def _budget_bytes(self):
        if self.max_memory_mb is not None:
            return float(self.max_memory_mb) * 2**20
        return 0.75 * _physical_memory_bytes()

    def _budget_text(self):
        if self.max_memory_mb is not None:
            return f"max_memory_mb={self.max_memory_mb}"
        return (f"the default budget of {self._budget_bytes() / 2**20:,.0f} MB (max_memory_mb=None: 3/4 of "
                f"the {_physical_memory_bytes() / 2**20:,.0f} MB of physical memory)")

    def _cache_refusal(self, n_rows=None):
        """The error of a kernel cache that outgrows the budget (what the ``n_rows`` candidates leave
        of it; ``None``: the oracle's square cache)."""
        def refuse(n_cols, nbytes):
            cache = (f"{n_cols:,} oracle vectors against each other" if n_rows is None else
                     f"{n_rows:,} transformed copies against {n_cols:,} added vectors")
            raise ValueError(
                f"InvariantSVC: the kernel cache of {cache} needs {nbytes / 2**20:,.2f} MB (with the smaller "
                f"cache it grows from), more than "
                f"{self._budget_text()} leaves; use fewer transformations or rows, a larger tol, "
                "or a larger max_memory_mb"
            )
        return refuse

    def _build_cost_table(self):
        nc = len(self.classes_)
        T = max(len(lst) for lst in self._tlists)
        table = np.zeros((nc, T, nc))
        for c in range(nc):
            for t, s in enumerate(self._tlists[c]):
                for c2 in range(nc):
                    table[c, t, c2] = self._cost(self.classes_[c], self.classes_[c2], s)
        return table

    # -------------------------------------------------------------------- fit
    @_fit_context(prefer_skip_nested_validation=False)  # user callables (cost, oracle) may fit models
    def fit(self, X, y):
        """Minimise Eq. (5) with Algorithm 1 or Algorithm 2.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
            Class labels (at least two classes).

        Returns
        -------
        self : InvariantSVC

        Raises
        ------
        ValueError
            For a single class, both ``transformations`` and ``oracle``, a ``qp_solver`` that is not installed,
            ``solver="pegasos"`` with a kernel other than "linear", an infinite Group without
            ``n_transformations``, ``n_transformations`` without an infinite Group to sample, an invariance
            set or kernel cache beyond ``max_memory_mb``, or a transformation, oracle, cost or margin scale
            that returns bad values.
        """
        self._check_params()
        check_not_text(X, "X")
        X, y = validate_data(self, X, y, dtype=np.float64)
        check_classification_targets(y)
        self.classes_, yi = np.unique(y, return_inverse=True)
        if len(self.classes_) < 2:
            raise ValueError(
                f"InvariantSVC needs samples of at least 2 classes; got 1 class ({self.classes_[0]!r})"
            )
        # the kernel's arguments are fixed at fit: set_params afterwards changes no prediction
        self._gamma = self.gamma_ = self._gamma_value(X)
        self._degree, self._coef0, self._kernel_fitted = int(self.degree), float(self.coef0), _own_kernel(self.kernel)
        self._G = self._margin_matrix()
        # no finite set with an oracle: the diagnostics over it must not read a previous fit's
        self.__dict__.pop("_tlists", None)
        self.__dict__.pop("_cost_table", None)
        if self.oracle is None:
            counts = np.bincount(yi, minlength=len(self.classes_))
            planned = self._planned_list_lengths()
            if planned is not None:
                self._check_candidate_budget(counts, planned, X.shape[1], planned=True)
            self._tlists = _transformation_lists(self.transformations, self.classes_,
                                                 self.n_transformations, self.random_state)
            self._check_candidate_budget(counts, [len(lst) for lst in self._tlists], X.shape[1])
            self._cost_table = self._build_cost_table()
        if self.solver == "pegasos":
            self._fit_pegasos(X, yi)
        else:
            self._fit_column_generation(X, yi)
        return self

    def _solvers(self):
        import qpsolvers

        if self.qp_solver is not None:
            return self.qp_solver, self.qp_solver
        block = "quadprog" if "quadprog" in qpsolvers.available_solvers else "clarabel"
        return block, "clarabel" if "clarabel" in qpsolvers.available_solvers else block

    # -- Algorithm 1, finite transformation set --------------------------------
    def _fit_column_generation(self, X, yi):
        """Algorithm 1 (SVMStruct): one loop for both candidate sources.

        Each pass adds, per example, the constraints violated by more than
        ``xi_i + tol`` (each followed by an exact QP over that example's working
        set, Algorithm 1's inner step), then re-optimises the union of the working
        sets: a few sweeps while constraints are being added, a thorough "polish"
        once a pass adds none; it has converged when a pass after the polish
        again adds none.
        """
        C, tol = float(self.C), float(self.tol)
        m, nc = X.shape[0], len(self.classes_)
        block_solver, union_solver = self._solvers()
        source = (_FiniteCandidates if self.oracle is None else _OracleCandidates)(self, X, yi)
        dual = _WorkingSetDual(m, nc, source.n_rows, source.K, block_solver, union_solver, self.qp_chunk_size)
        converged = polished = False
        n_pass = 0
        for n_pass in range(1, int(self.max_iter) + 1):
            n_added = source.add_violators(dual, C, tol)
            if n_added == 0 and polished:
                converged = True
                break
            # a few sweeps per pass; a thorough one once no constraint is added. The slacks xi_i that decide which
            # constraint is violated are the working sets' optimum's only once the polish has reached it: until
            # then no pass can end the fit, however few constraints it adds
            polish = n_added == 0
            n_solves, solved = dual.optimize_union(yi, m, C, min(tol, _UNION_TOL_MAX) * 0.5, 100 if polish else 2)
            polished = polish and solved
            if self.verbose:
                print(f"[InvariantSVC] pass {n_pass}: +{n_added} constraints, {dual.nv} in all, "
                      f"{len(dual.row_of_vec)} vectors, {n_solves} union QP steps"
                      + (", working sets not yet at their optimum" if polish and not solved else ""))
        if not converged:
            state = ("the last pass's block steps left the working sets' duality gap above C m min(tol, 0.001) / 2: "
                     "raise max_iter or qp_chunk_size" if polish and not polished
                     else "constraints were still added")
            warnings.warn(f"InvariantSVC did not converge in max_iter={self.max_iter} passes ({state})",
                          ConvergenceWarning, stacklevel=3)
        loss_sum = source.loss_sum(dual, fresh=not converged) if self.oracle is not None else source.loss_sum(dual)
        self._set_fitted(dual, loss_sum, C, source.vectors(dual), n_pass, converged)

    def _is_rbf(self):
        return isinstance(self.kernel, str) and self.kernel == "rbf"

    def _kernel_cached(self, Xk, sq, cols):
        """Kernel columns k(Xk, Xk[cols]); rbf reuses the cached squared norms."""
        if sq is None:
            return self._kernel(Xk, Xk[cols]).astype(Xk.dtype)
        # clipped: rounding must not give k(x, x') > 1, which would break the QP's PSD-ness
        return rbf_from_dots(Xk @ Xk[cols].T, sq[:, None], sq[None, cols], self._gamma, clip=True)

    def _set_fitted(self, dual, loss_sum, C, Vdata, n_pass, converged):
        """The fitted model of Algorithm 1, set once the loop is done."""
        dual_obj, primal_obj = dual.objectives(loss_sum, C)
        expansion = _KernelExpansion(*dual.support(Vdata))
        expansion.linear = isinstance(self._kernel_fitted, str) and self._kernel_fitted == "linear"
        self._fit_result = _FitResult(expansion, n_pass, converged, n_constraints=int(dual.nv),
                                      n_active_constraints=int((dual.var("alpha") > 0).sum()),
                                      dual_objective=dual_obj, primal_objective=primal_obj)

    # -- Algorithm 2 -----------------------------------------------------------
    def _fit_pegasos(self, X, yi):
        """Algorithm 2 (Pegasos for invariances, Teo et al. 2007, §3.2) on the linear kernel.

        Per example in a random order: the constraint violator ``(s*, y*)`` of Eq. (2) for the current
        weights, the step ``W <- (1 - 1/t) W + Gamma / (lambda t) (phi(s* x, y) - phi(s* x, y*))`` and the
        projection onto ``||W||^2 <= 2 R[0] / lambda`` (``R[0]`` the largest cost), ``lambda = 1 / (C m)``.
        """
        if not (isinstance(self.kernel, str) and self.kernel == "linear"):
            raise ValueError(
                "solver='pegasos' works on explicit features: use kernel='linear' and put a "
                f"feature map before the model in a Pipeline; got kernel={self.kernel!r}"
            )
        m, nc = X.shape[0], len(self.classes_)
        lam = 1.0 / (float(self.C) * m)
        G = self._G
        rng = check_random_state(self.random_state)
        if self.oracle is None:
            Xc, ex, tr, ptr, D = self._candidates(X, yi)
            R0 = float(np.max(D)) if D.size else 1.0
        else:
            cls_index = {c: k for k, c in enumerate(self.classes_.tolist())}
            R0 = 1.0 if self.cost is None else max(
                self._cost(a, b, None) for a in self.classes_ for b in self.classes_)
        R0 = max(R0, 1e-12)
        radius2 = 2.0 * R0 / lam
        W = np.zeros((nc, X.shape[1]))
        t = 0
        for epoch in range(int(self.max_iter)):
            for i in rng.permutation(m):
                t += 1
                y = yi[i]
                if self.oracle is None:
                    rows = Xc[ptr[i]:ptr[i + 1]]
                    S = rows @ W.T
                    H = G[y][None, :] * (S - S[:, [y]]) + D[ptr[i]:ptr[i + 1]]
                    a, c2 = np.unravel_index(np.argmax(H), H.shape)
                    xs = rows[a]
                else:
                    out = self.oracle(_CurrentModel(self, _LinearExpansion(W)), X[i].copy(), self.classes_[y])
                    xs, c2, _ = _oracle_output(out, X.shape[1], cls_index)
                W *= 1.0 - 1.0 / t
                if c2 != y:
                    step = G[y, c2] / (lam * t)
                    W[y] += step * xs
                    W[c2] -= step * xs
                n2 = float(np.sum(W * W))
                if n2 > radius2:
                    W *= np.sqrt(radius2 / n2)
        self._fit_result = _FitResult(_LinearExpansion(W), int(self.max_iter), True)

    # ---------------------------------------------------------------- predict
    def class_scores(self, X):
        """``f(x, y)`` for every class: array (n_samples, n_classes) (Eq. 8, or ``X @ coef_.T`` for Pegasos)."""
        check_is_fitted(self, "classes_")
        # checked as predict checks X (a complex X lost its imaginary part, a wrong width failed in numpy)
        return self._scores(validate_data(self, check_not_text(X, "X"), dtype=np.float64, reset=False))

    def _scores(self, X):
        """:meth:`class_scores` of rows already checked (X, or transformed copies of its rows)."""
        return self._fit_result.expansion.scores(self, X)

    support_vectors_ = _fitted_property(_expansion_part(_KernelExpansion, "support_vectors"),
                                        "Distinct transformed vectors with non-zero dual weight (Eq. 8).", _CG)
    dual_coef_ = _fitted_property(_expansion_part(_KernelExpansion, "dual_coef"),
                                  "``f(x, y) = sum_v k(v, x) dual_coef_[v, y]`` (Eq. 8).", _CG)
    n_support_ = _fitted_property(
        lambda fit: len(fit.expansion.support_vectors) if isinstance(fit.expansion, _KernelExpansion) else None,
        "Number of distinct transformed vectors with non-zero dual weight.", _CG)
    coef_ = _fitted_property(_primal_coef, "Primal weights ``f(x, y) = <coef_[y], x>`` (Pegasos, or a linear kernel).",
                             "pegasos (or kernel='linear')")
    n_iter_ = _fitted_property("n_iter", "Passes (column generation) or epochs (Pegasos) made.")
    converged_ = _fitted_property("converged", "Whether column generation converged (see the class docstring).")
    n_constraints_ = _fitted_property("n_constraints", "Size of the final union of working sets.", _CG)
    n_active_constraints_ = _fitted_property("n_active_constraints", "Constraints with alpha > 0.", _CG)
    dual_objective_ = _fitted_property("dual_objective", "Dual objective (6).", _CG)
    primal_objective_ = _fitted_property("primal_objective", "Primal objective (5).", _CG)

    def _kernel_scores(self, X, sv, coef):
        """``f(x, .) = sum_v k(v, x) coef[v]`` (Eq. 8), in row blocks."""
        out = np.zeros((X.shape[0], len(self.classes_)))
        if len(sv) == 0:
            return out
        if getattr(self, "_kernel_fitted", self.kernel) == "rbf":
            check_rbf_precision(type(self).__name__, self._gamma, max_sq_norm(X), max_sq_norm(sv), np.float64)
        step = max(1, int(2e7 // max(1, len(sv))))
        for s in range(0, X.shape[0], step):
            out[s:s + step] = self._kernel(X[s:s + step], sv) @ coef
        return out

    def decision_function(self, X):
        """Scores: (n_samples,) ``f(x, classes_[1]) - f(x, classes_[0])`` for two
        classes, else (n_samples, n_classes) ``f(x, y)``."""
        check_is_fitted(self, "classes_")
        X = validate_data(self, check_not_text(X, "X"), dtype=np.float64, reset=False)
        S = self._scores(X)
        if len(self.classes_) == 2:
            return S[:, 1] - S[:, 0]
        return S

    def predict(self, X):
        """``argmax_y f(x, y)``."""
        check_is_fitted(self, "classes_")
        X = validate_data(self, check_not_text(X, "X"), dtype=np.float64, reset=False)
        return self.classes_[np.argmax(self._scores(X), axis=1)]

    # ------------------------------------------------------------ diagnostics
    def _labels_index(self, y, n):
        y = check_labels_per_row(y, n)
        idx = np.searchsorted(self.classes_, y)
        idx = np.clip(idx, 0, len(self.classes_) - 1)
        if not (self.classes_[idx] == y).all():
            raise ValueError("y has labels the model was not trained on")
        return idx

    def invariant_loss(self, X, y):
        """Per-example loss of Eq. (2) over the finite transformation set: array (n_samples,).

        A ValueError for a model fitted with an oracle (there is no finite set), or labels not in ``classes_``.
        """
        H, ex, _, n = self._transformed_violations(X, y)
        loss = np.full(n, -np.inf)
        np.maximum.at(loss, ex, H.max(axis=1))
        return loss

    def worst_case_cost(self, X, y):
        """Per-example worst-case cost of Eq. (1): ``sup_s Delta(y, argmax f(s(x), .), s)``: array (n_samples,).

        Over the finite transformation set: a ValueError for a model fitted with an oracle.
        """
        self._check_finite_set("worst_case_cost")
        X = validate_data(self, check_not_text(X, "X"), dtype=np.float64, reset=False)
        yi = self._labels_index(y, X.shape[0])
        Xc, ex, tr, ptr, D = self._candidates(X, yi)
        pred = np.argmax(self._scores(Xc), axis=1)
        cost = D[np.arange(len(Xc)), pred]
        out = np.full(X.shape[0], -np.inf)
        np.maximum.at(out, ex, cost)
        return out

    def _check_finite_set(self, method):
        """Fitted, with the finite set of that fit (an oracle's fit has none: ``_tlists`` was an AttributeError,
        or after a refit the previous fit's set, used in silence)."""
        check_is_fitted(self, "classes_")
        if self.__dict__.get("_tlists") is None:
            raise ValueError(f"{method} needs a finite transformation set (the model was fitted with an oracle)")

    def _transformed_violations(self, X, y):
        self._check_finite_set("invariant_loss")
        X = validate_data(self, check_not_text(X, "X"), dtype=np.float64, reset=False)
        yi = self._labels_index(y, X.shape[0])
        Xc, ex, tr, ptr, D = self._candidates(X, yi)
        S = self._scores(Xc)
        H = self._G[yi[ex]] * (S - S[np.arange(len(Xc)), yi[ex]][:, None]) + D
        return H, ex, tr, X.shape[0]

    def transformed_margins(self, X, y):
        """``f(s(x), y) - max_{y' != y} f(s(x), y')`` for every example and transformation.

        Returns (margins, example index, transformation index) over the finite set: three arrays of shape
        (n_candidates,), one entry per pair of an example and a transformation of its label's list (examples
        in order, the identity first). A ValueError for a model fitted with an oracle.
        """
        self._check_finite_set("transformed_margins")
        X = validate_data(self, check_not_text(X, "X"), dtype=np.float64, reset=False)
        yi = self._labels_index(y, X.shape[0])
        Xc, ex, tr, ptr, D = self._candidates(X, yi)
        S = self._scores(Xc)
        own = S[np.arange(len(Xc)), yi[ex]]
        S[np.arange(len(Xc)), yi[ex]] = -np.inf
        return own - S.max(axis=1), ex, tr
