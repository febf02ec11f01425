"""Bad input that the models' public functions took in silence or refused only deep inside numpy."""
import warnings

import numpy as np
import pytest
import scipy.sparse as sp

from orbitkernels.models import (InvariantLinearClassifier, InvariantSVC, RidgePath, cholesky_path,
                                 fscale_worst_case, worst_case_attack, worst_case_scaling)


def _data(n=24, d=3, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    return X, np.where(X[:, 0] > 0, "pos", "neg")


@pytest.mark.parametrize("oracle, match", [
    (lambda m, x, y: (x * np.nan, "pos" if y == "neg" else "neg"), "oracle returned a vector .* NaN"),
    (lambda m, x, y: (x[:2], "pos"), r"oracle returned a vector of shape \(2,\)"),
    (lambda m, x, y: (x, "zzz"), "y_prime='zzz', not a label of y"),
    (lambda m, x, y: x, r"oracle must return \(x_transformed, y_prime\)"),
])
@pytest.mark.parametrize("solver", ["pegasos", "column_generation"])
def test_oracle_output_is_checked_by_both_solvers(oracle, match, solver):
    """Algorithm 2 used the oracle's answer unchecked: a NaN vector gave NaN weights (and every prediction
    classes_[0]), an unknown label an IndexError; Algorithm 1 already refused both."""
    X, y = _data()
    model = InvariantSVC(kernel="linear", solver=solver, oracle=oracle, max_iter=2, random_state=0)
    with pytest.raises(ValueError, match=match):
        model.fit(X, y)


@pytest.mark.parametrize("method", ["invariant_loss", "worst_case_cost", "transformed_margins"])
def test_invariant_svc_diagnostics_want_one_label_per_row(method):
    """A y of another length or a column of labels failed deep in numpy (IndexError, broadcasting error)."""
    X, y = _data()
    model = InvariantSVC(C=1.0, transformations=[lambda Z: Z[:, ::-1]], tol=1e-3).fit(X, y)
    getattr(model, method)(X, y)
    for bad in (y[:1], y[:-1], np.concatenate([y, y]), y[:, None]):
        with pytest.raises(ValueError, match=r"y must be 1-D with one label per row of X \(24\); got shape"):
            getattr(model, method)(X, bad)
    with pytest.raises(ValueError, match="labels the model was not trained on"):
        getattr(model, method)(X, np.full(len(y), "other"))


@pytest.mark.parametrize("params", [{}, {"kernel": "linear", "solver": "pegasos", "max_iter": 3, "random_state": 0}])
def test_class_scores_checks_x_as_predict_does(params):
    """class_scores converted X with np.asarray: a complex X lost its imaginary part with a mere ComplexWarning,
    text was parsed, and a wrong width failed in the kernel or in numpy's matmul."""
    X, y = _data()
    model = InvariantSVC(**params).fit(X, y)
    np.testing.assert_allclose(model.class_scores(X)[:, 1] - model.class_scores(X)[:, 0], model.decision_function(X))
    with pytest.raises(ValueError, match="X has 2 features, but InvariantSVC is expecting 3"):
        model.class_scores(X[:, :2])
    with pytest.raises(ValueError, match="[Cc]omplex"):
        model.class_scores(X + 1j)
    with pytest.raises(TypeError, match="text dtype"):
        model.class_scores(X.astype(str))
    with pytest.raises(ValueError, match="NaN"):
        model.class_scores(np.full((2, 3), np.nan))


def test_invariant_loss_of_the_linear_classifier_refuses_unseen_labels():
    """Labels outside classes_ were scored as classes_[0] in silence, and a single label broadcast to every row."""
    X, y = _data(n=40, d=5)
    model = InvariantLinearClassifier(loss="fdrop", K=1, max_iter=5, random_state=0).fit(X, y)
    assert model.invariant_loss(X, y).shape == (40,)
    with pytest.raises(ValueError, match="y has labels outside the classifier's classes"):
        model.invariant_loss(X, np.full(40, "spam"))
    for bad in (y[:1], y[:3], y[:, None]):
        with pytest.raises(ValueError, match=r"y must be 1-D with one label per row of X \(40\)"):
            model.invariant_loss(X, bad)


def test_worst_case_scaling_refuses_text_complex_and_a_short_y():
    """Text was parsed into numbers and complex parts dropped (a ComplexWarning at most); a 1-element y was
    applied to every row and any other length failed in np.broadcast_to without naming y."""
    X, _ = _data(n=10, d=4)
    w = np.array([1.0, -2.0, 0.5, 3.0])
    ys = np.where(X[:, 0] > 0, 1, -1)
    np.testing.assert_array_equal(worst_case_scaling(X, 1, w, 2), worst_case_scaling(X, np.ones(10), w, 2))
    for bad in ([1], [1, -1, 1], ys[:, None]):
        with pytest.raises(ValueError, match=r"y must be a scalar or 1-D with one label per row of X \(10\)"):
            worst_case_scaling(X, bad, w, 2)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a ComplexWarning is not a refusal
        with pytest.raises(TypeError, match="X is complex"):
            worst_case_scaling(X + 1j, ys, w, 2)
        with pytest.raises(TypeError, match="X is complex"):
            worst_case_scaling(sp.csr_matrix(X + 1j), ys, w, 2)
        with pytest.raises(TypeError, match="w is complex"):
            worst_case_scaling(X, ys, w + 1j, 2)
        with pytest.raises(TypeError, match="x is complex"):
            fscale_worst_case(X[0] + 1j, 1, w, 2)
    with pytest.raises(TypeError, match="X has a text dtype"):
        worst_case_scaling(X.astype(str), ys, w, 2)
    with pytest.raises(TypeError, match="x has a text dtype"):
        fscale_worst_case(X[0].astype(str), 1, w, 2)


def test_worst_case_attack_checks_x_and_y_before_scoring():
    X, y = _data(n=30, d=4)
    model = InvariantLinearClassifier(max_iter=5, random_state=0).fit(X, y)
    assert worst_case_attack(model, X, 2, y=y).shape == X.shape
    with pytest.raises(ValueError, match="w has 4 entries, but x has 3 features"):  # was numpy's matmul error
        worst_case_attack(model, X[:, :3], 2)
    with pytest.raises(ValueError, match=r"y must be 1-D with one label per row of X \(30\)"):
        worst_case_attack(model, X, 2, y=y[:1])  # was applied to every row
    with pytest.raises(TypeError, match="y has a text dtype"):  # a raw w needs ±1 labels
        worst_case_attack(model.coef_[0], X, 2, y=y)


def test_cholesky_path_refuses_what_ridge_path_refuses():
    """cholesky_path parsed text, dropped imaginary parts (ComplexWarning) and returned [] for an empty α grid."""
    rng = np.random.default_rng(1)
    X, Y = rng.normal(size=(20, 3)), rng.normal(size=20)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(TypeError, match="X must hold real numbers"):
            cholesky_path(X + 1j, Y, [1.0])
        with pytest.raises(TypeError, match="Y must hold real numbers"):
            cholesky_path(X, Y + 1j, [1.0])
    with pytest.raises(TypeError, match="X must hold real numbers"):
        cholesky_path(X.astype(str), Y, [1.0])
    with pytest.raises(TypeError, match="Y must hold real numbers"):
        cholesky_path(X, Y.astype(str), [1.0])
    for alphas in ([], "abc"):
        with pytest.raises(ValueError, match="alphas must be positive and finite, a non-empty 1-D sequence"):
            cholesky_path(X, Y, alphas)


def test_ridge_path_index_is_an_integer_in_range():
    """predict(X, 1.5) answered for alphas[1] (int(1.5)); predict_gram failed in numpy's indexing."""
    rng = np.random.default_rng(2)
    X, y = rng.normal(size=(15, 3)), rng.normal(size=15)
    path = RidgePath([0.1, 1.0, 10.0]).fit(X, y)
    np.testing.assert_allclose(path.predict(X, np.int64(1)), path.predict(X)[1], rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(path.predict(X, -1), path.predict(X)[2], rtol=1e-12, atol=1e-12)
    gram = RidgePath([0.1, 1.0]).fit_gram(X @ X.T, y)
    for p, call in ((path, lambda i: path.predict(X, i)), (gram, lambda i: gram.predict_gram(X @ X.T, i))):
        for bad in (1.5, "1", True):
            with pytest.raises(TypeError, match="index must be an integer position in alphas"):
                call(bad)
        with pytest.raises(IndexError, match="out of range"):
            call(len(p.alphas))


@pytest.mark.parametrize("kernel", ["linear", "poly"])
def test_a_failed_union_qp_falls_back_to_block_steps(kernel):
    """On the rank-deficient dual Hessian of a linear or poly kernel clarabel stops short of its tolerances
    (AlmostSolved) on the union of the working sets; that QP was then skipped, and the fit reported
    converged_ with a duality gap of 1.06 on a dual objective of 29.9 (linear) and a model that was not
    invariant under the cyclic group it was trained with (0.09 between f(x) and f(roll(x))).
    With the kernel invariant under the group, the optimum of Eq. (5) over the whole group is invariant."""
    from orbitkernels.groups import CyclicShift

    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(30, 4)), np.array(["a", "b", "c"])[rng.integers(0, 3, 30)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = InvariantSVC(C=1.0, kernel=kernel, degree=2, transformations=CyclicShift(4), tol=1e-7,
                             max_iter=300).fit(X, y)
    assert model.converged_
    assert model.primal_objective_ - model.dual_objective_ < 1e-4
    Z = rng.normal(size=(10, 4))
    for k in (1, 2, 3):
        np.testing.assert_allclose(model.class_scores(np.roll(Z, k, axis=1)), model.class_scores(Z), atol=1e-5)


def test_centre_gram_is_the_gram_matrix_of_centred_features_and_checks_its_shapes():
    """orbitkernels.models.centre_gram: the Gram matrices of features centred on the training rows' mean."""
    from orbitkernels.models import centre_gram

    rng = np.random.default_rng(0)
    F, G = rng.normal(size=(7, 3)), rng.normal(size=(4, 3))
    mu = F.mean(axis=0)
    Kc, Knc = centre_gram(F @ F.T, G @ F.T)
    np.testing.assert_allclose(Kc, (F - mu) @ (F - mu).T, atol=1e-12)
    np.testing.assert_allclose(Knc, (G - mu) @ (F - mu).T, atol=1e-12)
    assert centre_gram((F @ F.T).astype(np.float32))[0].dtype == np.float32
    with pytest.raises(ValueError, match="square"):
        centre_gram(F @ G.T)
    with pytest.raises(ValueError, match=r"K_new must be \(m, 7\)"):
        centre_gram(F @ F.T, G @ G.T)
    with pytest.raises(TypeError, match="K_train"):
        centre_gram(np.array([["a"]]))


def test_distributed_ridge_refuses_normal_equations_larger_than_the_machine(monkeypatch):
    """p × p moments of a very wide X are refused by name before the pass, not found out as a MemoryError."""
    from orbitkernels.models import DistributedRidge, DistributedRidgeClassifier, distributed_ridge

    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(40, 300)), rng.normal(size=40)
    monkeypatch.setattr(distributed_ridge, "_physical_memory_bytes", lambda: 2.0 * 2**20)  # a 2 MiB machine
    with pytest.raises(ValueError, match=r"n_features=300: the normal equations need about 3 MB .* machine has 2 MB"):
        DistributedRidge().fit(X, y)
    with pytest.raises(ValueError, match="n_features=300"):
        DistributedRidgeClassifier().fit(X, y > 0)
    DistributedRidge().fit(X[:, :100], y)  # 4 x 100² x 8 bytes = 0.3 MiB fits


def test_ridge_path_fit_gram_refuses_a_matrix_that_is_not_symmetric():
    """eigh reads one triangle: a square non-Gram matrix was fitted silently; float32 rounding still passes."""
    rng = np.random.default_rng(0)
    F, y = rng.normal(size=(30, 2000)).astype(np.float32), rng.normal(size=30)
    K32 = F @ F.T
    # products in another order (blocked, threaded) round each entry differently: a few ulps of asymmetry
    K32 = K32 + np.spacing(K32) * rng.integers(-4, 5, size=K32.shape).astype(np.float32)
    assert not np.array_equal(K32, K32.T)
    RidgePath([1.0]).fit_gram(K32, y)
    scale = float(np.abs(K32).max())
    bumped = K32.astype(np.float64)
    bumped[0, 1] += 2e-4 * scale  # just past rtol = 1e-4 of the largest entry
    with pytest.raises(ValueError, match="symmetric Gram matrix"):
        RidgePath([1.0]).fit_gram(bumped, y)
    with pytest.raises(ValueError, match="symmetric Gram matrix"):
        RidgePath([1.0]).fit_gram(rng.normal(size=(30, 30)), y)


@pytest.mark.parametrize("alphas", [[True, 2.0], (1.0, np.bool_(False)), np.array([True, False])])
def test_distributed_ridge_refuses_booleans_among_its_alphas(alphas):
    from orbitkernels.models import DistributedRidge

    X, y = np.random.default_rng(0).normal(size=(20, 3)), np.arange(20.0)
    with pytest.raises(ValueError, match="must hold numbers, not booleans"):
        DistributedRidge(alphas=alphas).fit(X, y)
