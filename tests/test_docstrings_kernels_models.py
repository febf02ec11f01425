"""The docstrings of orbitkernels.kernels, orbitkernels.models and orbitkernels.diagnostics against the code.

Each public function and class documents every parameter of its signature (estimators with the signature's
default), the options their ``_parameter_constraints`` accept, the fitted attributes a tiny fit sets, the shapes
they state, and the errors they promise. Also the bugs found while checking them.
"""
import ast
import inspect
import io
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils._param_validation import StrOptions

from orbitkernels import diagnostics, kernels, models
from orbitkernels.groups import CyclicShift
from orbitkernels.kernels import HaarKernel
from orbitkernels.models import (DistributedRidge, DistributedRidgeClassifier, InvariantLinearClassifier,
                                 InvariantSVC, RidgePath, centre_gram, cholesky_path, fscale_worst_case,
                                 worst_case_attack, worst_case_scaling)

ESTIMATORS = [HaarKernel, InvariantSVC, InvariantLinearClassifier, DistributedRidge, DistributedRidgeClassifier]
PUBLIC = ([getattr(models, n) for n in models.__all__ if n != "IDENTITY" and n != "Identity"]
          + [getattr(kernels, n) for n in kernels.__all__] + [diagnostics.invariance_error])


def _doc(obj):
    """The parsed docstring (numpydoc is a docs extra: the tests that read sections skip without it)."""
    docscrape = pytest.importorskip("numpydoc.docscrape")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # numpydoc warns on unknown sections and malformed entries
        return (docscrape.ClassDoc if inspect.isclass(obj) else docscrape.FunctionDoc)(obj)


def _params(obj):
    """{name: type line} of the Parameters section; ``a, b : t`` gives both names."""
    out = {}
    for p in _doc(obj)["Parameters"]:
        for name in p.name.split(","):
            out[name.strip()] = p.type
    return out


def _signature(obj):
    return {k: v for k, v in inspect.signature(obj).parameters.items() if k != "self"}


@pytest.mark.parametrize("obj", PUBLIC, ids=lambda o: o.__name__)
def test_every_parameter_is_documented_and_nothing_else(obj):
    documented, sig = _params(obj), _signature(obj)
    assert set(documented) == set(sig), (sorted(set(sig) - set(documented)), sorted(set(documented) - set(sig)))


def _stated_default(type_line):
    text = type_line.split("default=", 1)[1]
    # the value runs to the end of the line, or to a comma outside brackets
    depth, end = 0, len(text)
    for i, ch in enumerate(text):
        depth += ch in "([{"
        depth -= ch in ")]}"
        if ch == "," and depth == 0:
            end = i
            break
    return ast.literal_eval(text[:end].strip())


@pytest.mark.parametrize("obj", PUBLIC, ids=lambda o: o.__name__)
def test_stated_defaults_are_the_signature_defaults(obj):
    """Estimators state every default (numpydoc's ``default=``); functions where they state one, rightly."""
    documented, sig = _params(obj), _signature(obj)
    for name, p in sig.items():
        if p.default is inspect.Parameter.empty:
            continue
        line = documented[name]
        if "default=" not in line:
            assert obj not in ESTIMATORS, f"{obj.__name__}.{name}: no default stated (signature: {p.default!r})"
            continue
        assert _stated_default(line) == p.default, (obj.__name__, name, line, p.default)


@pytest.mark.parametrize("est", ESTIMATORS, ids=lambda o: o.__name__)
def test_string_options_of_the_constraints_are_documented(est):
    """Each string a ``StrOptions`` constraint accepts is named in the parameter's entry."""
    entries = {}
    for p in _doc(est)["Parameters"]:
        for name in p.name.split(","):
            entries[name.strip()] = p.type + " " + " ".join(p.desc)
    assert set(est._parameter_constraints) == set(entries)
    for name, constraints in est._parameter_constraints.items():
        for c in constraints:
            if isinstance(c, StrOptions):
                missing = [o for o in c.options if f'"{o}"' not in entries[name]]
                assert not missing, (est.__name__, name, missing)


def _fitted(est):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(16, 3))
    if est is HaarKernel:
        return [HaarKernel(CyclicShift(3)).fit(X)]
    if est is InvariantSVC:
        y = np.digitize(X[:, 0], [-0.5, 0.5])
        t = [lambda A: A[:, ::-1]]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            return [InvariantSVC(kernel="linear", transformations=t, max_iter=20).fit(X, y),
                    InvariantSVC(kernel="linear", solver="pegasos", transformations=t, max_iter=2,
                                 random_state=0).fit(X, y)]
    if est is InvariantLinearClassifier:
        return [est(loss="fdrop", K=1, max_iter=2, random_state=0).fit(X, X[:, 0] > 0)]
    if est is DistributedRidgeClassifier:
        return [est().fit(X, X[:, 0] > 0)]
    return [est().fit(X, X @ [1.0, 2.0, 3.0])]


def _attributes(est):
    return [n.strip() for a in _doc(est)["Attributes"] for n in a.name.split(",")]


@pytest.mark.parametrize("est", ESTIMATORS, ids=lambda o: o.__name__)
def test_documented_attributes_are_the_fitted_ones(est):
    """Each documented attribute exists after some tiny fit; each one a fit sets is documented."""
    documented = set(_attributes(est)) - {"feature_names_in_"}  # set only for a DataFrame
    seen = set()
    for model in _fitted(est):
        set_by_fit = {k for k in vars(model) if k.endswith("_") and not k.startswith("_")}
        assert set_by_fit <= documented, sorted(set_by_fit - documented)
        for name in documented:
            try:
                getattr(model, name)
                seen.add(name)
            except AttributeError:  # InvariantSVC: an attribute of the other solver
                pass
    assert seen == documented, sorted(documented - seen)


def test_stated_shapes_of_the_fitted_attributes():
    cg, peg = _fitted(InvariantSVC)
    for m in (cg, peg):
        assert m.classes_.shape == (3,) and m.coef_.shape == (3, 3)
    assert cg.dual_coef_.shape == (cg.n_support_, 3) and cg.support_vectors_.shape == (cg.n_support_, 3)
    np.testing.assert_allclose(cg.coef_, cg.dual_coef_.T @ cg.support_vectors_)
    lin, = _fitted(InvariantLinearClassifier)
    assert lin.coef_.shape == (1, 3) and lin.intercept_.shape == (1,) and lin.classes_.shape == (2,)
    reg, = _fitted(DistributedRidge)
    assert reg.coef_.shape == (1, 3) and reg.intercept_.shape == (1,) and reg.validation_errors_.shape == (7,)
    clf, = _fitted(DistributedRidgeClassifier)
    assert clf.coef_.shape == (1, 3) and clf.intercept_.shape == (1,)
    h, = _fitted(HaarKernel)
    assert h.elements_.shape == (3, 1) and h.weights_.shape == (3,) and h.single_sum_


def test_public_methods_parse_as_numpydoc():
    """The methods' docstrings are well-formed numpydoc (Sphinx builds with -W), and their Parameters match."""
    for cls in ESTIMATORS + [RidgePath]:
        for name, member in vars(cls).items():
            if name.startswith("_") and name != "__call__" or not inspect.isfunction(member):
                continue
            if not member.__doc__:
                continue
            doc = _doc(member)
            if doc["Parameters"]:
                assert set(_params(member)) == set(_signature(member)) - {"cls"}, (cls.__name__, name)


def _documented_members():
    for obj in PUBLIC:
        yield obj.__name__, obj
        if inspect.isclass(obj):
            for name, member in vars(obj).items():
                if (not name.startswith("_") or name == "__call__") and getattr(member, "__doc__", None) and (
                        inspect.isfunction(member) or isinstance(member, (property, classmethod))):
                    yield f"{obj.__name__}.{name}", member


def test_docstrings_render_as_restructured_text():
    """numpydoc's output of every docstring parses without a docutils warning (Sphinx builds with -W): e.g. a
    shape ``(n_features_in_,)`` in a type line is an undefined reference target ``n_features_in``."""
    core = pytest.importorskip("docutils.core")
    from docutils import nodes
    from docutils.parsers.rst import roles

    sphinx_doc = pytest.importorskip("numpydoc.docscrape_sphinx")

    def literal(name, rawtext, text, lineno, inliner, options=None, content=None):
        return [nodes.literal(rawtext, text)], []

    for role in ("class", "meth", "func", "data", "mod", "attr"):  # Sphinx's roles, unknown to plain docutils
        roles.register_local_role(role, literal)
    for name, obj in _documented_members():
        text = str(sphinx_doc.SphinxDocString(inspect.getdoc(obj) or ""))
        stream = io.StringIO()
        core.publish_doctree(text, settings_overrides={"warning_stream": stream, "report_level": 2})
        assert not stream.getvalue().strip(), (name, stream.getvalue())


def test_haar_kernel_auto_keeps_the_double_sum_for_a_callable_base_kernel():
    """single_sum="auto" took the single sum for any base kernel on a permutation group: a callable that is not
    invariant under the common permutation (a weighted rbf) gave a wrong, asymmetric Gram matrix."""
    X = np.random.default_rng(0).normal(size=(4, 5))

    def weighted(a, b):
        return np.exp(-((a - b) ** 2 * np.arange(1, 6)).sum())

    auto = HaarKernel(CyclicShift(5), weighted)
    K = auto(X)
    assert not auto.single_sum_
    np.testing.assert_allclose(K, HaarKernel(CyclicShift(5), weighted, single_sum=False)(X), atol=1e-15)
    np.testing.assert_allclose(K, K.T, atol=1e-15)
    assert HaarKernel(CyclicShift(5), "rbf").fit(X).single_sum_  # named kernels keep the shortcut
    assert HaarKernel(CyclicShift(5), weighted, single_sum=True).fit(X).single_sum_  # explicitly asked


def test_haar_kernel_call_shape_and_raises():
    X = np.random.default_rng(0).normal(size=(4, 3)).astype(np.float32)
    K = HaarKernel(CyclicShift(3))(X, X[:2])
    assert K.shape == (4, 2) and K.dtype == np.float64
    for kw, match in [({"elements": [[0]], "n_group_samples": 2}, "not both"), ({"weights": [1.0]}, "need elements"),
                      ({"gamma": "scale"}, "needs data")]:
        with pytest.raises(ValueError, match=match):
            HaarKernel(CyclicShift(3), **kw).fit()


def test_ridge_path_index_errors_are_clear_and_documented():
    X = np.random.default_rng(0).normal(size=(6, 3))
    path = RidgePath([0.1, 1.0, 10.0]).fit(X, X[:, 0])
    assert "IndexError" in path.predict.__doc__ and "TypeError" in path.predict.__doc__
    with pytest.raises(IndexError, match="index 5 is out of range for 3 alphas"):
        path.predict(X, index=5)
    assert path.predict(X).shape == (3, 6, 1) and path.predict(X, -1).shape == (6, 1)
    # coef / intercept / loo_residuals indexed alphas unchecked: coef(True) was a (1, 3, 3) stack of every α's W
    for method in (path.coef, path.intercept, path.loo_residuals):
        with pytest.raises(TypeError, match="integer position"):
            method(True)
        with pytest.raises(IndexError, match="out of range for 3 alphas"):
            method(3)
    assert path.coef(0).shape == (3, 1) and path.intercept(0).shape == (1,) and path.loo_residuals(0).shape == (6, 1)


def test_ridge_path_dual_and_primal_accessors_refuse_the_other_solution():
    """dual_coef of a primal solution returned W (D, k) under the name of c (n, k); coef after fit_gram was an
    AttributeError of None.T; both before any fit an AttributeError."""
    X = np.random.default_rng(0).normal(size=(6, 3))
    with pytest.raises(ValueError, match="dual_coef needs a dual solution"):
        RidgePath([1.0]).fit(X, X[:, 0]).dual_coef(0)
    Kc, Knew = centre_gram(X @ X.T, X[:2] @ X.T)
    gram = RidgePath([1.0]).fit_gram(Kc, X[:, 0], centred=True)
    assert gram.dual_coef(0).shape == (6, 1) and gram.predict_gram(Knew).shape == (1, 2, 1)
    with pytest.raises(ValueError, match="fitted on a Gram matrix"):
        gram.coef(0)
    with pytest.raises(models.ridge.NotFittedError):
        RidgePath([1.0]).coef(0)
    with pytest.raises(models.ridge.NotFittedError, match="before intercept"):
        RidgePath([1.0]).intercept(0)


def test_cholesky_path_and_centre_gram_return_what_they_state():
    X = np.random.default_rng(0).normal(size=(6, 3))
    for dtype in (np.float32, np.float64):
        out = cholesky_path(X.astype(dtype), X[:, 0], [1.0, 2.0])
        assert len(out) == 2
        W, b = out[0]
        assert W.shape == (3, 1) and b.shape == (1,) and W.dtype == b.dtype == dtype
    Kc, none = centre_gram(X @ X.T)
    assert Kc.shape == (6, 6) and none is None
    with pytest.raises(ValueError, match="positive"):
        cholesky_path(X, X[:, 0], 0.0)


def test_feature_scaling_returns_what_they_state():
    rng = np.random.default_rng(0)
    X, w = rng.normal(size=(5, 4)), rng.normal(size=4)
    assert fscale_worst_case(X[0], 1, w, 2).shape == (4,) and fscale_worst_case(X[:1], 1, w, 2).shape == (1, 4)
    row, alpha = fscale_worst_case(sp.coo_matrix(X[:1]), -1, w, 2, return_scaling=True)
    assert sp.isspmatrix_csr(row) and alpha.shape == (4,)
    assert sp.isspmatrix_csr(worst_case_scaling(sp.csc_matrix(X), 1, w, 1))
    assert sp.isspmatrix_csr(worst_case_attack(w, sp.csc_matrix(X), 1))
    assert isinstance(worst_case_attack(w, X.tolist(), 1), np.ndarray)
    with pytest.raises(ValueError, match="mode='drop' fixes l=0 and u=1"):
        worst_case_attack(w, X, 1, l=0.5)
    with pytest.raises(ValueError, match="y must be -1 or \\+1"):
        fscale_worst_case(X[0], 0, w, 1)


def test_zero_one_cost_documents_scalar_labels():
    assert models.zero_one_cost("a", "a") == 0.0 and models.zero_one_cost(1, 2) == 1.0
    assert "scalar" in _params(models.zero_one_cost)["y"]
    with pytest.raises(ValueError, match="ambiguous"):
        models.zero_one_cost(np.array([1, 2]), np.array([1, 3]))


@pytest.mark.parametrize("method", ["invariant_loss", "worst_case_cost", "transformed_margins"])
def test_invariant_svc_finite_set_diagnostics_refuse_an_oracle_fit(method):
    """After a fit with an oracle, worst_case_cost and transformed_margins failed with an AttributeError
    (_tlists) or, after an earlier fit with transformations, used that fit's set in silence."""
    X = np.random.default_rng(0).normal(size=(12, 3))
    y = (X[:, 0] > 0).astype(int)
    model = InvariantSVC(kernel="linear", transformations=[lambda A: -A], max_iter=5).fit(X, y)
    getattr(model, method)(X, y)
    model.set_params(transformations=None, oracle=lambda m, x, yy: (x, 1 - yy)).fit(X, y)
    with pytest.raises(ValueError, match=f"{method} needs a finite transformation set"):
        getattr(model, method)(X, y)
    assert method in InvariantSVC.__doc__  # the oracle parameter says so


def test_invariance_error_returns_the_documented_keys():
    from sklearn.linear_model import LogisticRegression

    X = np.random.default_rng(0).normal(size=(10, 3))
    clf = LogisticRegression().fit(X, X[:, 0] > 0)
    doc = " ".join(diagnostics.invariance_error.__doc__.split())
    for method, keys in (("auto", {"mean", "max", "per_element", "method", "n_elements"}),
                         ("predict", {"mean", "max", "per_element", "method", "n_elements", "agreement"})):
        out = diagnostics.invariance_error(clf, X, CyclicShift(3), n_elements=2, random_state=0, method=method)
        assert set(out) == keys and len(out["per_element"]) == 2
        assert all(f"``{k}``" in doc for k in keys)
    with pytest.raises(TypeError, match="must be an orbitkernels.groups.Group"):
        diagnostics.invariance_error(clf, X, "shift")
