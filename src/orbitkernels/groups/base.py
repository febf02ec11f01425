"""The group protocol shared by every feature map, kernel and model.

A group object couples an *action* on rows of a data matrix with a
*distribution* q over its elements (Raj et al. 2017, §2.1). Elements are
represented by a 2-D float array of parameters, one row per element, so that
batches of elements are ordinary arrays (``len``, indexing, ``np.vstack``).

What every group provides
-------------------------
``sample(n, random_state)``   n elements drawn from q
``elements()``                all elements (finite groups only), ``weights()`` their q
``identity()``, ``inverse(E)``
``act(X, E)``                 every element applied to every row: (len(E), n_samples, n_features)
``act_each(X, E)``            element i applied to row i: (n_samples, n_features)
``is_unitary``                <gx, gz> = <x, z> (Raj Lemma 2.1)
``is_symmetric``              q(g) = q(g^{-1})
``is_data_dependent``         the draw depends on the input (Montavon et al.'s sorted Coulomb sampling)

When ``is_unitary and is_symmetric`` and the action does not depend on the data,
<ω, g x> = <g^{-1} ω, x> and g^{-1} has the law of g, so a feature map may move the
action to its templates (Mroueh et al. 2015, Remark 2; Raj et al. 2017, §2.2.1-2.2.2).
"""
from __future__ import annotations

import math

import numpy as np

from ..utils.validation import check_data, check_int, check_random_state

__all__ = ["Group", "ProductGroup", "can_move_to_templates"]


class Group:
    """Abstract base class of group actions with a distribution over the group."""

    #: number of parameters describing one element (columns of an element array)
    n_params: int = 1
    is_finite: bool = False
    is_data_dependent: bool = False

    # ------------------------------------------------------------------ shape
    @property
    def n_features(self):
        """Length of the rows the action applies to (``None``: any length)."""
        return None

    def _check_X(self, X, name="X"):
        X = check_data(X, name)
        n = self.n_features
        if n is not None and X.shape[1] != n:
            raise ValueError(
                f"{type(self).__name__} acts on rows of {n} features ({self._shape_text()}); "
                f"{name} has {X.shape[1]} features"
            )
        return X

    def _shape_text(self):
        return f"{self.n_features} features"

    def _check_elements(self, E, name="elements"):
        E = np.asarray(E, dtype=float)
        if E.ndim == 1 and self.n_params == 1:
            E = E[:, None]
        if E.ndim != 2 or E.shape[1] != self.n_params:
            raise ValueError(
                f"{name} for {type(self).__name__} must have shape (n_elements, {self.n_params}); got {E.shape}"
            )
        if not np.isfinite(E).all():
            raise ValueError(f"{name} contains NaN or inf")
        return E

    # ----------------------------------------------------------- elements
    def sample(self, n, random_state=None) -> np.ndarray:
        """Draw ``n`` elements from the group's distribution q."""
        n = check_int(n, "n", min_value=1)
        rng = check_random_state(random_state)
        if self.is_finite:
            E = self.elements()
            w = self.weights()
            return E[rng.choice(len(E), size=n, p=w)]
        return self._sample(n, rng)

    def _sample(self, n, rng):
        raise NotImplementedError

    @property
    def order(self):
        """Number of elements of a finite group, ``None`` for an infinite one."""
        return len(self.elements()) if self.is_finite else None

    def elements(self) -> np.ndarray:
        """All elements of a finite group (one row each)."""
        raise ValueError(f"{type(self).__name__} is not finite: its elements cannot be enumerated; use sample()")

    def weights(self):
        """Probabilities of :meth:`elements` under q (``None`` means uniform)."""
        return None

    def identity(self) -> np.ndarray:
        raise NotImplementedError

    def inverse(self, E) -> np.ndarray:
        raise NotImplementedError

    # ------------------------------------------------------------ action
    def act(self, X, E) -> np.ndarray:
        """Apply each element of ``E`` to each row of ``X``: shape (len(E), n_samples, n_features)."""
        X = self._check_X(X)
        E = self._check_elements(E)
        return self._act(X, E)

    def act_each(self, X, E) -> np.ndarray:
        """Apply element ``E[i]`` to row ``X[i]``: shape (n_samples, n_features)."""
        X = self._check_X(X)
        E = self._check_elements(E)
        if len(E) != len(X):
            raise ValueError(f"act_each needs one element per row: {len(E)} elements for {len(X)} rows")
        return self._act_each(X, E)

    def _act(self, X, E):
        raise NotImplementedError

    def _act_each(self, X, E):
        # Correct for every group; subclasses override with a gather that avoids
        # building len(E) full actions.
        return np.stack([self._act(X[i : i + 1], E[i : i + 1])[0, 0] for i in range(len(X))])

    # ------------------------------------------------------------- flags
    @property
    def is_unitary(self) -> bool:
        raise NotImplementedError

    @property
    def is_symmetric(self) -> bool:
        raise NotImplementedError

    def __mul__(self, other):
        if not isinstance(other, Group):
            return NotImplemented
        return ProductGroup(self, other)

    def __repr__(self):
        return f"{type(self).__name__}({self._repr_args()})"

    def _repr_args(self):
        return ""


def can_move_to_templates(group: Group) -> bool:
    """True when <ω, g x> may be computed as <g^{-1} ω, x> with g^{-1} ~ q (unitary, symmetric, data-free)."""
    return bool(group.is_unitary and group.is_symmetric and not group.is_data_dependent)


class ProductGroup(Group):
    """Product ``G1 × G2 × ...`` with independent distributions (Raj et al. 2017, §4.3).

    An element ``(g1, g2, ..., gk)`` acts as ``g1 ∘ g2 ∘ ... ∘ gk`` (the last factor
    first). Elements are the factors' parameter columns side by side. The action is
    unitary when every factor is. q is symmetric when every factor's q is and the
    factors commute (or the law of one is invariant under conjugation by the
    other, e.g. an isotropic Gaussian translation under rotations); otherwise the
    inverse of a product has another law and the flag is False.
    """

    def __init__(self, *factors):
        if len(factors) == 1 and isinstance(factors[0], (list, tuple)):
            factors = tuple(factors[0])
        if len(factors) < 2:
            raise ValueError("ProductGroup needs at least two groups")
        flat = []
        for f in factors:
            if not isinstance(f, Group):
                raise TypeError(f"ProductGroup factors must be Group objects; got {type(f).__name__}")
            flat.extend(f.factors if isinstance(f, ProductGroup) else [f])
        sizes = {f.n_features for f in flat if f.n_features is not None}
        if len(sizes) > 1:
            raise ValueError(f"the factors act on rows of different lengths: {sorted(sizes)}")
        if any(f.is_data_dependent for f in flat):
            raise ValueError("a data-dependent sampling scheme cannot be a factor of a product")
        self.factors = tuple(flat)
        self.n_params = sum(f.n_params for f in flat)
        self.is_finite = all(f.is_finite for f in flat)
        self._splits = np.cumsum([f.n_params for f in flat])[:-1]

    def _repr_args(self):
        return ", ".join(repr(f) for f in self.factors)

    @property
    def n_features(self):
        for f in self.factors:
            if f.n_features is not None:
                return f.n_features
        return None

    def split(self, E):
        """The factors' parameter blocks of an element array."""
        return np.split(E, self._splits, axis=1)

    def _sample(self, n, rng):
        return np.hstack([f.sample(n, rng) for f in self.factors])

    def elements(self):
        if not self.is_finite:
            return super().elements()
        parts = [f.elements() for f in self.factors]
        total = math.prod(len(p) for p in parts)
        if total > 10_000_000:
            raise ValueError(f"the product has {total} elements; too many to enumerate")
        idx = np.indices([len(p) for p in parts]).reshape(len(parts), -1)
        return np.hstack([p[i] for p, i in zip(parts, idx)])

    def weights(self):
        if not self.is_finite:
            return None
        ws = []
        for f in self.factors:
            w = f.weights()
            ws.append(np.full(len(f.elements()), 1.0 / len(f.elements())) if w is None else np.asarray(w))
        if all(f.weights() is None for f in self.factors):
            return None
        out = ws[0]
        for w in ws[1:]:
            out = np.outer(out, w).ravel()
        return out

    def identity(self):
        return np.hstack([f.identity() for f in self.factors])

    def inverse(self, E):
        # (g1 ∘ ... ∘ gk)^{-1} = gk^{-1} ∘ ... ∘ g1^{-1}; as a parameter tuple in the
        # original factor order this is exact only when the factors commute.
        if not self._commutes():
            raise ValueError(
                "the inverse of a product of non-commuting groups is not a product in the same order; "
                "act with the factors' inverses in reverse order instead"
            )
        E = self._check_elements(E)
        return np.hstack([f.inverse(p) for f, p in zip(self.factors, self.split(E))])

    def _commutes(self, conjugation_ok=False):
        for i, a in enumerate(self.factors):
            for b in self.factors[i + 1 :]:
                ok = _commute(a, b) or (conjugation_ok and (_conj_invariant(a, b) or _conj_invariant(b, a)))
                if not ok:
                    return False
        return True

    def _act(self, X, E):
        fused = _try_fuse(self)
        if fused is not None:
            return fused._act(X, E)
        parts = self.split(E)
        r, n = len(E), len(X)
        Y = self.factors[-1]._act(X, parts[-1])  # (r, n, d)
        for f, p in zip(self.factors[-2::-1], parts[-2::-1]):
            Y = f._act_each(Y.reshape(r * n, -1), np.repeat(p, n, axis=0)).reshape(r, n, -1)
        return Y

    def _act_each(self, X, E):
        fused = _try_fuse(self)
        if fused is not None:
            return fused._act_each(X, E)
        parts = self.split(E)
        Y = X
        for f, p in zip(self.factors[::-1], parts[::-1]):
            Y = f._act_each(Y, p)
        return Y

    @property
    def is_unitary(self):
        return all(f.is_unitary for f in self.factors)

    @property
    def is_symmetric(self):
        return all(f.is_symmetric for f in self.factors) and self._commutes(conjugation_ok=True)


def _commute(a, b):
    fa = getattr(a, "commutes_with", None)
    fb = getattr(b, "commutes_with", None)
    return bool((fa is not None and fa(b)) or (fb is not None and fb(a)))


def _conj_invariant(a, b):
    f = getattr(a, "law_invariant_under", None)
    return bool(f is not None and f(b))


def _try_fuse(product):
    fuse = getattr(product.factors[0], "fuse_product", None)
    return fuse(product) if fuse is not None else None
