"""InvariantSVC (Teo et al. 2007): Lemma 2, Algorithm 1 against the full finite dual, Crammer-Singer
special case, invariance on transformed points, Algorithm 2, oracle, scikit-learn conformity."""
import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning
from sklearn.metrics.pairwise import rbf_kernel
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import LinearSVC

from orbitkernels.models import IDENTITY, InvariantSVC


class Shift:
    """x -> x + delta (a finite transformation for the tests)."""

    def __init__(self, delta):
        self.delta = np.asarray(delta, dtype=float)

    def __call__(self, X):
        return X + self.delta

    def __repr__(self):
        return f"Shift({self.delta.tolist()})"


class Flip:
    def __call__(self, X):
        return -X

    def __repr__(self):
        return "Flip()"


def _blobs(rng, n_per=6, n_classes=3, d=2, spread=0.8):
    centers = 3.0 * rng.standard_normal((n_classes, d))
    X = np.vstack([c + spread * rng.standard_normal((n_per, d)) for c in centers])
    y = np.repeat(np.arange(n_classes), n_per)
    return X, y


def _full_finite_dual(X, y, trans, C, gamma, cost=None):
    """Optimum of the dual (Eq. 6-7) with every (i, s, y') variable at once, solved by clarabel.

    Written independently of InvariantSVC: one variable per example, transformation and wrong label.
    """
    import qpsolvers
    import scipy.sparse as sp

    classes = np.unique(y)
    vecs, ex, yp, d = [], [], [], []
    for i in range(len(X)):
        for s in [IDENTITY] + list(trans):
            xs = s(X[i:i + 1])[0]
            for c in classes:
                if c == y[i]:
                    continue
                vecs.append(xs)
                ex.append(i)
                yp.append(c)
                d.append(1.0 if cost is None else cost(y[i], c, s))
    V, ex, yp, d = np.array(vecs), np.array(ex), np.array(yp), np.array(d)
    ya = y[ex]
    pattern = ((yp[:, None] == yp[None, :]).astype(float) - (yp[:, None] == ya[None, :])
               - (ya[:, None] == yp[None, :]) + (ya[:, None] == ya[None, :]))
    Q = rbf_kernel(V, V, gamma=gamma) * pattern
    Q = 0.5 * (Q + Q.T) + 1e-12 * np.eye(len(Q))
    G = sp.csc_matrix((np.ones(len(ex)), (ex, np.arange(len(ex)))), shape=(len(X), len(ex)))
    a = qpsolvers.solve_qp(sp.csc_matrix(Q), -d, G, np.full(len(X), C), lb=np.zeros(len(ex)), solver="clarabel",
                           tol_gap_abs=1e-10, tol_gap_rel=1e-10, tol_feas=1e-10)
    return float(d @ a - 0.5 * a @ Q @ a)


def test_lemma2_loss_upper_bounds_worst_case_cost():
    # Lemma 2 on random instances: several data sets, transformation sets, costs and (partly trained) models.
    for seed in range(6):
        rng = np.random.default_rng(seed)
        X, y = _blobs(rng, n_per=5, n_classes=3, spread=1.5)
        trans = [Shift(rng.normal(scale=1.0, size=2)) for _ in range(3)]
        cost = None if seed % 2 == 0 else (lambda a, b, s: 0.0 if a == b else (0.5 if s is not IDENTITY else 1.0))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            model = InvariantSVC(C=float(rng.uniform(0.05, 5)), gamma=0.3, transformations=trans, cost=cost,
                                 max_iter=1 + seed % 3).fit(X, y)
        Xt = X + rng.normal(scale=0.5, size=X.shape)
        loss = model.invariant_loss(Xt, y)
        worst = model.worst_case_cost(Xt, y)
        assert np.all(loss >= worst - 1e-9)
        assert np.all(loss >= 0)
        # the bound is tight for the 0/1 cost only up to the margin: some examples are misclassified
        # under a transformation (so the comparison is not vacuous)
        assert worst.max() > 0


def test_column_generation_reaches_full_finite_dual_optimum():
    rng = np.random.default_rng(3)
    X, y = _blobs(rng, n_per=4, n_classes=3, spread=1.2)
    trans = [Shift([0.7, 0.0]), Shift([0.0, -0.7]), Flip()]
    C, gamma = 2.0, 0.5
    model = InvariantSVC(C=C, gamma=gamma, transformations=trans, tol=1e-6, max_iter=200).fit(X, y)
    assert model.converged_
    full = _full_finite_dual(X, y, trans, C, gamma)
    assert model.dual_objective_ == pytest.approx(full, rel=1e-4, abs=1e-6)
    # strong duality: the primal objective over the finite set equals the dual optimum
    assert model.primal_objective_ == pytest.approx(full, rel=1e-3, abs=1e-5)
    # column generation did not need every variable of the full problem
    n_full = len(X) * (len(trans) + 1) * 2
    assert model.n_constraints_ < n_full
    # primal objective recomputed from the fitted function (Eq. 5 with C = 1/(lambda m))
    sv, coef = model.support_vectors_, model.dual_coef_
    wnorm2 = float(np.einsum("ic,ij,jc->", coef, rbf_kernel(sv, sv, gamma=gamma), coef))
    primal = 0.5 * wnorm2 + C * model.invariant_loss(X, y).sum()
    assert primal == pytest.approx(full, rel=1e-3, abs=1e-5)


def test_without_transformations_equals_crammer_singer():
    # S = {identity}, linear kernel, Gamma = 1, 0/1 cost: Eq. (5) is the Crammer-Singer multi-class SVM.
    rng = np.random.default_rng(1)
    X, y = _blobs(rng, n_per=15, n_classes=3, d=4, spread=2.0)
    C = 0.5
    ours = InvariantSVC(C=C, kernel="linear", tol=1e-7, max_iter=300).fit(X, y)
    W = ours.dual_coef_.T @ ours.support_vectors_
    with warnings.catch_warnings():
        # scikit-learn 1.6's liblinear (the oldest pins) stops short of tol=1e-10 and says so; the reference only
        # needs to be as close as the assertions below ask, which they check
        warnings.simplefilter("ignore", ConvergenceWarning)
        ref = LinearSVC(multi_class="crammer_singer", C=C, fit_intercept=False, tol=1e-10, max_iter=200000).fit(X, y)

    def primal(W):
        S = X @ W.T
        own = S[np.arange(len(y)), y]
        loss = np.max(S - own[:, None] + (np.arange(3)[None, :] != y[:, None]), axis=1)
        return 0.5 * np.sum(W * W) + C * loss.sum()

    assert primal(W) == pytest.approx(primal(ref.coef_), rel=1e-4)
    assert ours.primal_objective_ == pytest.approx(primal(W), rel=1e-6)
    np.testing.assert_allclose(W, ref.coef_, atol=2e-3 * np.abs(ref.coef_).max())
    assert np.mean(ours.predict(X) == ref.predict(X)) >= 0.97


def test_invariance_on_transformed_training_points():
    # Class 0 near (0, 0) must keep its label under a shift by +1.4 that carries it next to class 1
    # near (2, 0): trained with that (label-dependent) transformation every shifted class-0 training
    # point is classified 0 and class 1 stays correct; the plain model gives the shifted points to class 1.
    rng = np.random.default_rng(0)
    X0 = rng.normal(size=(10, 2)) * 0.1 + [0, 0]
    X1 = rng.normal(size=(10, 2)) * 0.1 + [2, 0]
    X = np.vstack([X0, X1])
    y = np.repeat([0, 1], 10)
    shift = Shift([1.4, 0.0])
    inv = InvariantSVC(C=100.0, gamma=2.0, transformations={0: [shift]}, tol=1e-4).fit(X, y)
    plain = InvariantSVC(C=100.0, gamma=2.0, tol=1e-4).fit(X, y)
    assert np.all(inv.predict(shift(X0)) == 0)
    assert np.all(inv.predict(X) == y)
    assert np.all(plain.predict(X) == y)
    assert np.mean(plain.predict(shift(X0)) == 0) < 0.5
    margins, ex, tr = inv.transformed_margins(X, y)
    assert margins.min() > 0 and set(tr.tolist()) == {0, 1}
    assert np.all(inv.worst_case_cost(X, y) == 0)
    assert plain.worst_case_cost(X0, np.zeros(10, int)).max() == 0  # plain has no transformations to check
    assert InvariantSVC(C=100.0, gamma=2.0, transformations={0: [shift]}).fit(X, y).invariant_loss(X, y).max() < 1


def test_label_dependent_transformations():
    # Reflection only for class 0 (as the paper's "reflection for 0 and 8 but not 2").
    rng = np.random.default_rng(2)
    X = np.vstack([rng.normal(size=(8, 2)) * 0.3 + [2, 0], rng.normal(size=(8, 2)) * 0.3 + [0, 2]])
    y = np.repeat([0, 1], 8)
    model = InvariantSVC(C=50.0, gamma=0.5, transformations={0: [Flip()]}, tol=1e-4).fit(X, y)
    assert np.all(model.predict(-X[y == 0]) == 0)
    _, ex, tr = model.transformed_margins(X, y)
    assert np.all(tr[y[ex] == 1] == 0)  # class 1 is only checked untransformed
    assert np.sum(tr[y[ex] == 0] == 1) == 8
    with pytest.raises(ValueError, match="transformations has keys"):
        InvariantSVC(transformations={7: [Flip()]}).fit(X, y)


def test_oracle_reaches_the_finite_set_optimum():
    rng = np.random.default_rng(4)
    X, y = _blobs(rng, n_per=4, n_classes=3, spread=1.2)
    trans = [Shift([0.6, 0.3]), Flip()]

    def oracle(model, x, label):
        best = None
        for s in [IDENTITY] + trans:
            xs = s(x[None, :])[0]
            f = model.class_scores(xs[None, :])[0]
            own = f[np.flatnonzero(model.classes_ == label)[0]]
            for k, c in enumerate(model.classes_):
                v = f[k] - own + (c != label)
                if best is None or v > best[0]:
                    best = (v, xs, c)
        return best[1], best[2]

    a = InvariantSVC(C=1.0, gamma=0.5, transformations=trans, tol=1e-6, max_iter=200).fit(X, y)
    b = InvariantSVC(C=1.0, gamma=0.5, oracle=oracle, tol=1e-6, max_iter=200).fit(X, y)
    assert b.dual_objective_ == pytest.approx(a.dual_objective_, rel=1e-4)
    np.testing.assert_allclose(b.decision_function(X), a.decision_function(X), atol=1e-3)


def test_pegasos_reduces_the_objective():
    rng = np.random.default_rng(5)
    X, y = _blobs(rng, n_per=20, n_classes=3, d=3, spread=1.5)
    trans = [Shift([0.3, 0.0, 0.0]), Shift([0.0, -0.3, 0.0])]
    C = 0.1

    def primal(model):
        W = model.coef_ if hasattr(model, "coef_") else model.dual_coef_.T @ model.support_vectors_
        return 0.5 * np.sum(W * W) + C * model.invariant_loss(X, y).sum()

    zero = C * len(X) * 1.0  # objective at w = 0: every loss equals max cost 1
    short = InvariantSVC(C=C, kernel="linear", transformations=trans, solver="pegasos", max_iter=2,
                         random_state=0).fit(X, y)
    long = InvariantSVC(C=C, kernel="linear", transformations=trans, solver="pegasos", max_iter=200,
                        random_state=0).fit(X, y)
    exact = InvariantSVC(C=C, kernel="linear", transformations=trans, tol=1e-6, max_iter=300).fit(X, y)
    assert primal(long) < primal(short) < zero
    assert primal(long) <= 1.05 * exact.primal_objective_
    assert primal(long) >= exact.primal_objective_ - 1e-6  # column generation is the optimum
    # Theorem 3's projection: ||w||^2 <= 2 R[0] / lambda
    assert np.sum(long.coef_ ** 2) <= 2.0 * C * len(X) + 1e-9
    with pytest.raises(ValueError, match="kernel='linear'"):
        InvariantSVC(solver="pegasos", kernel="rbf").fit(X, y)


def test_n_support_counts_distinct_vectors():
    rng = np.random.default_rng(6)
    X, y = _blobs(rng, n_per=5, n_classes=2, spread=2.0)
    model = InvariantSVC(C=10.0, gamma=0.5, transformations=[Shift([0.5, 0.5])], tol=1e-5).fit(X, y)
    assert model.n_support_ == len(model.support_vectors_) == len(np.unique(model.support_vectors_, axis=0))
    assert np.all(np.abs(model.dual_coef_).max(axis=1) > 0)
    # Eq. 8: f(x, y) = sum_v k(v, x) dual_coef_[v, y]
    np.testing.assert_allclose(model.class_scores(X),
                               rbf_kernel(X, model.support_vectors_, gamma=model._gamma) @ model.dual_coef_)


@pytest.mark.parametrize("params, match", [
    ({"C": 0.0}, "C"), ({"tol": -1}, "tol"), ({"solver": "bmrm"}, "solver"), ({"kernel": "nope"}, "kernel"),
    ({"max_constraints_per_pass": 0}, "max_constraints_per_pass"), ({"oracle": 3}, "oracle"),
    ({"transformations": [1]}, r"transformations\[0\]"), ({"margin_scale": lambda a, b: -1.0}, "margin_scale"),
])
def test_bad_parameters(params, match):
    X, y = _blobs(np.random.default_rng(0), n_per=3, n_classes=2)
    with pytest.raises(ValueError, match=match):
        InvariantSVC(**params).fit(X, y)


def test_sklearn_conformity_pipeline_and_gridsearch():
    from sklearn.utils.estimator_checks import check_estimator

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        check_estimator(InvariantSVC(max_iter=20))
        check_estimator(InvariantSVC(kernel="linear", solver="pegasos", max_iter=5, random_state=0))
    rng = np.random.default_rng(7)
    X, y = _blobs(rng, n_per=12, n_classes=3, d=3, spread=1.0)
    pipe = make_pipeline(StandardScaler(), InvariantSVC(transformations=[Shift([0.1, 0, 0])]))
    gs = GridSearchCV(pipe, {"invariantsvc__C": [0.1, 10.0]}, cv=3).fit(X, y)
    assert gs.best_score_ > 0.8
    assert gs.predict(X).shape == y.shape


class Roll:
    """x -> x cyclically shifted by k features (np.roll)."""

    def __init__(self, k):
        self.k = k

    def __call__(self, X):
        return np.roll(X, self.k, axis=1)


def test_finite_group_equals_its_elements_as_callables():
    # a finite Group stands for all its elements: same fit as the callables
    from orbitkernels.groups import CyclicShift

    rng = np.random.default_rng(5)
    X = rng.standard_normal((18, 4))
    y = np.repeat([0, 1, 2], 6)
    a = InvariantSVC(C=1.0, transformations=CyclicShift(4), tol=1e-6).fit(X, y)
    b = InvariantSVC(C=1.0, transformations=[Roll(1), Roll(2), Roll(3)], tol=1e-6).fit(X, y)
    assert np.allclose(a.decision_function(X), b.decision_function(X), atol=1e-6)
    assert abs(a.primal_objective_ - b.primal_objective_) < 1e-6
    # label-dependent: a group for one label only
    c = InvariantSVC(C=1.0, transformations={0: CyclicShift(4)}, tol=1e-6).fit(X, y)
    assert np.all(np.isfinite(c.decision_function(X)))


def test_infinite_group_is_refused():
    from orbitkernels.groups import ImageRotation

    X = np.random.default_rng(0).standard_normal((6, 16))
    with pytest.raises(ValueError, match="finite"):
        InvariantSVC(transformations=ImageRotation((4, 4))).fit(X, [0, 1] * 3)


def test_sampled_infinite_group():
    from orbitkernels.groups import ImageRotation

    rng = np.random.default_rng(1)
    X = rng.random((12, 16))
    y = np.repeat([0, 1], 6)
    model = InvariantSVC(transformations=ImageRotation((4, 4)), n_transformations=3, random_state=0).fit(X, y)
    assert len(model._tlists[0]) == 4  # identity and 3 sampled rotations
    again = InvariantSVC(transformations=ImageRotation((4, 4)), n_transformations=3, random_state=0).fit(X, y)
    np.testing.assert_array_equal(model.decision_function(X), again.decision_function(X))


def test_refit_with_another_solver_leaves_nothing_behind():
    """A fit's attributes come from that fit only: switching solver removes the other model's
    attributes, and class_scores follows the model just fitted (no stale ``coef_``)."""
    rng = np.random.default_rng(3)
    X = rng.normal(size=(40, 4))
    y = (X[:, 0] + 0.3 * X[:, 1] > 0).astype(int)
    model = InvariantSVC(kernel="linear", solver="pegasos", max_iter=5, random_state=0).fit(X, y)
    W = model.coef_.copy()
    assert not hasattr(model, "support_vectors_") and not hasattr(model, "dual_objective_")
    with pytest.raises(AttributeError, match="column_generation"):
        model.dual_coef_
    model.set_params(kernel="rbf", solver="column_generation").fit(X, y)
    assert not hasattr(model, "coef_")  # an RBF expansion has no primal weights
    np.testing.assert_allclose(model.class_scores(X),
                               rbf_kernel(X, model.support_vectors_, gamma=model._gamma) @ model.dual_coef_)
    model.set_params(kernel="linear").fit(X, y)
    # a linear kernel's expansion has primal weights, as SVC's coef_
    np.testing.assert_allclose(model.coef_, model.dual_coef_.T @ model.support_vectors_)
    np.testing.assert_allclose(model.class_scores(X), X @ model.coef_.T, atol=1e-10)
    assert not np.allclose(model.coef_, W)
    with pytest.raises(AttributeError, match="after fit"):
        InvariantSVC().n_iter_


def test_rbf_cache_clips_at_one():
    """Cached RBF columns never exceed 1, even when rounding makes 2<x, x'> > |x|² + |x'|²."""
    from orbitkernels.utils.kernels import rbf_from_dots

    x = (np.full((3, 50), 0.1) + 1e-7 * np.arange(3)[:, None]).astype(np.float32)
    sq = np.einsum("ij,ij->i", x, x)
    K = rbf_from_dots(x @ x.T, sq[:, None], sq[None, :], 5.0, clip=True)
    assert K.max() <= 1.0 and K.dtype == np.float32


@pytest.mark.parametrize("qp_chunk_size", [300, 8])
def test_direct_clarabel_is_qpsolvers_clarabel(monkeypatch, qp_chunk_size):
    """The block QPs go to clarabel directly, with the problem qpsolvers would hand it ([G; -I] a <= [h; 0],
    same settings): the fit is the same to the bit as through qpsolvers, whole-union QPs (chunk 300) and
    single-example block steps (chunk 8) alike."""
    from orbitkernels.groups import ImageTranslation, Normal
    from orbitkernels.models import invariant_svm

    rng = np.random.default_rng(3)
    X = rng.random((30, 16))
    y = np.digitize(X[:, :4].sum(1) - X[:, 4:8].sum(1), [-0.3, 0.3])
    params = dict(transformations=ImageTranslation((4, 4), shift=Normal(1.0)), n_transformations=4,
                  qp_chunk_size=qp_chunk_size, random_state=0)
    direct = InvariantSVC(**params).fit(X, y)
    monkeypatch.setattr(invariant_svm, "_DIRECT_CLARABEL", False)
    via_qpsolvers = InvariantSVC(**params).fit(X, y)
    assert direct.n_iter_ == via_qpsolvers.n_iter_ and direct.n_constraints_ == via_qpsolvers.n_constraints_
    np.testing.assert_array_equal(direct.dual_coef_, via_qpsolvers.dual_coef_)
    np.testing.assert_array_equal(direct.support_vectors_, via_qpsolvers.support_vectors_)
    assert direct.n_constraints_ > qp_chunk_size or qp_chunk_size == 300  # chunk 8 took block steps


def test_direct_clarabel_block_solves_a_known_qp():
    """_clarabel_block against a QP solved by hand: two blocks, one with its sum bound active."""
    from orbitkernels.models.invariant_svm import _clarabel_block

    # block 0: min 1/2 (a0^2 + a1^2) - 2 a0 - 2 a1, a0 + a1 <= 1 -> (0.5, 0.5)
    # block 1: min 1/2 a2^2 + a2 -> 0 (bound a2 >= 0 active); zeros in Q take csc_matrix's path
    Q = np.diag([1.0, 1.0, 1.0])
    a = _clarabel_block(Q, np.array([-2.0, -2.0, 1.0]), np.array([0, 0, 1]), np.array([1.0, 1.0]))
    np.testing.assert_allclose(a, [0.5, 0.5, 0.0], atol=1e-8)
    dense = np.array([[2.0, 1.0], [1.0, 2.0]])  # all entries non-zero: the dense fast path
    a = _clarabel_block(dense, np.array([-1.0, -1.0]), np.array([0, 0]), np.array([10.0]))
    np.testing.assert_allclose(a, [1 / 3, 1 / 3], atol=1e-8)
