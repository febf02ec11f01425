"""The docstrings of orbitkernels.features against the code: parameters, defaults, accepted values, fitted
attributes and their shapes, transform's output, and ProjectionPlan's validation of its inputs."""
from __future__ import annotations

import ast
import inspect
import re
import warnings

import numpy as np
import pytest
from numpydoc.docscrape import NumpyDocString
from sklearn.utils._param_validation import StrOptions

import orbitkernels.features as features
from orbitkernels.features import (
    GroupCDFFeatures,
    MolecularOrbitFeatures,
    OrbitFourierFeatures,
    OrbitNystroem,
    ProjectionPlan,
)
from orbitkernels.groups import CyclicShift, ImageRotation, encode_molecules

ESTIMATORS = [GroupCDFFeatures, OrbitFourierFeatures, OrbitNystroem, MolecularOrbitFeatures]


# ---------------------------------------------------------------------------------------------- ProjectionPlan
def _plan_inputs():
    g = CyclicShift(6)
    E, w = g.support()
    return g, E, w, np.random.default_rng(0).normal(size=(3, 6))


def test_projection_plan_accepts_what_the_estimators_give_it():
    g, E, w, T = _plan_inputs()
    X = np.random.default_rng(1).normal(size=(4, 6))
    plan = ProjectionPlan(g, E, w, T)
    ref = np.einsum("kid,jd->ijk", g.act(X, E), T)  # S[i, j, k] = <g_k x_i, t_j>
    np.testing.assert_allclose(plan.similarities(X), ref, atol=1e-12)
    # lists, a 1-D element array of a one-parameter group, integer templates: converted, as documented
    plan = ProjectionPlan(g, E.ravel().tolist(), list(w), np.rint(T).astype(int))
    np.testing.assert_allclose(plan.similarities(X), np.einsum("kid,jd->ijk", g.act(X, E), np.rint(T)), atol=1e-12)
    # the estimators' plan holds their fitted templates themselves, not a copy
    f = OrbitFourierFeatures(g, n_components=3, random_state=0).fit(X)
    assert f.plan_.templates is f.templates_


@pytest.mark.parametrize("change, error, match", [
    (dict(group=None), TypeError, r"group must be an orbitkernels.groups.Group.*NoneType"),
    (dict(group="shift"), TypeError, r"group must be an orbitkernels.groups.Group.*str"),
    (dict(templates=None), TypeError, r"templates"),
    (dict(templates="abc"), TypeError, r"templates"),
    (dict(templates=np.ones(6)), ValueError, r"templates must be 2-D"),
    (dict(templates=np.ones((3, 4))), ValueError, r"CyclicShift acts on rows of 6 features.*templates has 4"),
    (dict(templates=np.ones((0, 6))), ValueError, r"templates is empty"),
    (dict(templates=np.full((3, 6), np.nan)), ValueError, r"templates contains NaN"),
    (dict(templates=np.ones((3, 6)) + 1j), TypeError, r"templates is complex"),
    (dict(elements=np.zeros((6, 2))), ValueError, r"elements for CyclicShift must have shape \(n_elements, 1\)"),
    (dict(elements=np.zeros((0, 1)), weights=np.zeros(0)), ValueError, r"elements is empty"),
    (dict(elements=np.full((6, 1), np.nan)), ValueError, r"elements contains NaN"),
    (dict(elements=np.full((6, 1), 0.5)), ValueError, r"elements: cyclic shifts must be whole numbers"),
    (dict(weights=None), TypeError, r"weights must be .*one weight per group element.*None"),
    (dict(weights=np.ones(2)), ValueError, r"weights must have shape \(6,\).*got \(2,\)"),
    (dict(weights=np.ones((6, 1))), ValueError, r"weights must have shape \(6,\).*got \(6, 1\)"),
    (dict(weights=np.full(6, np.inf)), ValueError, r"weights contains NaN or inf"),
    (dict(weights=np.ones(6) + 1j), TypeError, r"weights is complex"),
    (dict(weights=["a"] * 6), TypeError, r"weights"),
    (dict(similarity="gaussian"), ValueError, r"similarity must be 'dot', a scikit-learn pairwise kernel"),
    (dict(similarity=3), TypeError, r"similarity must be"),
    (dict(similarity="rbf", kernel_params=0.1), TypeError, r"kernel_params must be a dict or None; got float"),
    (dict(invariant_similarity="no"), TypeError, r"invariant_similarity must be a bool"),
    (dict(define_on_templates=1), TypeError, r"define_on_templates must be a bool"),
    (dict(action="both"), ValueError, r"action must be"),
    (dict(fast_path="fastest"), ValueError, r"fast_path must be"),
    (dict(dtype="float16"), ValueError, r"dtype must be"),
    (dict(max_memory_mb=0), ValueError, r"max_memory_mb"),
    (dict(backend="jax"), ValueError, r"backend must be"),
])
def test_projection_plan_refuses_bad_inputs_at_construction_naming_them(change, error, match):
    """ProjectionPlan is public (features.__all__): a wrong input is refused when the plan is made, by name, not
    as an AttributeError or a reshape error at the first transform (or never: NaN weights gave NaN features)."""
    g, E, w, T = _plan_inputs()
    args = dict(group=g, elements=E, weights=w, templates=T)
    kw = {k: v for k, v in change.items() if k not in args}
    args.update({k: v for k, v in change.items() if k in args})
    with pytest.raises(error, match=match):
        ProjectionPlan(args["group"], args["elements"], args["weights"], args["templates"], **kw)


def test_projection_plan_checks_elements_by_the_groups_own_rules():
    images = ImageRotation((4, 4))
    T = np.ones((2, 16))
    ProjectionPlan(images, np.zeros((1, 1)), np.ones(1), T)  # the page's example (tests/test_docs_pages_audit.py)
    with pytest.raises(ValueError, match=r"ImageRotation acts on rows of 16 features.*templates has 9"):
        ProjectionPlan(images, np.zeros((1, 1)), np.ones(1), np.ones((2, 9)))


# ---------------------------------------------------------------------------------------------- docstrings
def _doc(obj):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # numpydoc warns on unknown sections and malformed entries
        return NumpyDocString(inspect.getdoc(obj) or "")


def _public_objects():
    """features.__all__ without TrivialGroup (a groups object, re-exported: the groups' docstrings cover it)."""
    return [getattr(features, name) for name in features.__all__ if name != "TrivialGroup"]


def _documented_methods():
    """The public methods and properties the files of orbitkernels.features define on the exported classes."""
    out = []
    for cls in (c for c in _public_objects() if inspect.isclass(c)):
        for klass in cls.__mro__:
            if not klass.__module__.startswith("orbitkernels.features"):
                continue
            for name, member in vars(klass).items():
                if not name.startswith("_") and (inspect.isfunction(member) or isinstance(member, property)):
                    out.append((f"{cls.__name__}.{name}", member.fget if isinstance(member, property) else member))
    return sorted(dict(out).items())


def _params(doc):
    return {p.name: p for p in doc["Parameters"]}


@pytest.mark.parametrize("obj", _public_objects(), ids=lambda o: o.__name__)
def test_docstring_sections_parse_with_one_entry_per_name(obj):
    doc = _doc(obj)
    for section in ("Parameters", "Attributes", "Returns"):
        for entry in doc[section]:
            assert re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", entry.name), (obj.__name__, section, entry.name)
            assert entry.type and entry.desc, (obj.__name__, section, entry.name)


@pytest.mark.parametrize("name, method", _documented_methods(), ids=lambda v: v if isinstance(v, str) else "")
def test_public_methods_have_docstrings_that_parse(name, method):
    doc = inspect.getdoc(method)
    assert doc, f"{name} has no docstring"
    parsed = _doc(method)
    sig = [p for p in inspect.signature(method).parameters if p != "self"]
    if parsed["Parameters"]:
        assert [p.name for p in parsed["Parameters"]] == sig, name


@pytest.mark.parametrize("obj", _public_objects(), ids=lambda o: o.__name__)
def test_every_parameter_is_documented_in_order_with_its_default(obj):
    """The Parameters section names the signature's parameters, in its order, each with ``default=`` equal to the
    signature's default (parameters without a default state none)."""
    sig = inspect.signature(obj).parameters
    params = _params(_doc(obj))
    assert list(params) == list(sig), obj.__name__
    for name, p in sig.items():
        stated = re.search(r"default=(.+)$", params[name].type)
        if p.default is inspect.Parameter.empty:
            assert stated is None, (obj.__name__, name, params[name].type)
            continue
        assert stated, f"{obj.__name__}({name}=...) states no default: {params[name].type!r}"
        value = ast.literal_eval(stated.group(1))
        assert value == p.default and type(value) is type(p.default), (obj.__name__, name, value, p.default)


def _quoted(text):
    return set(re.findall(r'"([^"]*)"', text))


@pytest.mark.parametrize("cls", ESTIMATORS + [ProjectionPlan], ids=lambda c: c.__name__)
def test_documented_string_values_are_the_validated_ones(cls):
    """The quoted values a parameter's type line states are exactly the strings its validation accepts
    (``_parameter_constraints``' StrOptions; ProjectionPlan's checks), and None is stated where it is accepted."""
    params = _params(_doc(cls))
    if cls is ProjectionPlan:
        from orbitkernels.backends import BACKENDS
        from orbitkernels.features._engine import DTYPES, FAST_PATHS

        accepted = {"action": ({"auto", "templates", "data"}, False), "fast_path": (set(FAST_PATHS), False),
                    "dtype": (set(DTYPES), True), "backend": (set(BACKENDS), False), "similarity": ({"dot"}, False)}
    else:
        accepted = {}
        for name, constraints in cls._parameter_constraints.items():
            options = set().union(*[c.options for c in constraints if isinstance(c, StrOptions)])
            # scikit-learn's "random_state" constraint takes None (a fresh seed) too
            accepted[name] = (options, None in constraints or "random_state" in constraints)
    for name, (options, none_ok) in accepted.items():
        text = re.sub(r",? ?default=.*$", "", params[name].type)
        if name == "device":  # its examples are names of devices, not an enumeration
            assert "str" in text and ("None" in text) == none_ok, (cls.__name__, name, text)
            continue
        assert _quoted(text) == options, (cls.__name__, name, text, options)
        assert ("None" in text) == none_ok, (cls.__name__, name, text)


def _fitted(cls):
    rng = np.random.default_rng(0)
    if cls is MolecularOrbitFeatures:
        Z = np.array([[6, 1, 1, 0], [8, 1, 1, 1], [7, 1, 0, 0]])
        X = encode_molecules(Z, rng.normal(size=(3, 4, 3)))
        return cls(n_wavevectors=3, n_components=4, n_group_samples=5, random_state=0).fit(X), X
    X = rng.normal(size=(8, 6))
    kw = dict(n_templates=3, n_bins=2) if cls is GroupCDFFeatures else dict(n_components=4)
    return cls(CyclicShift(6), random_state=0, **kw).fit(X), X


#: attributes that exist after some fits only (a DataFrame's column names, a Dask array's sample)
CONDITIONAL = {"feature_names_in_", "fit_sample_indices_"}


def _namespace(est):
    ns = dict(est.get_params(deep=False))
    ns.update({k: v for k, v in vars(est).items() if k.endswith("_") and np.isscalar(v)})
    ns.update(r=len(est.group_elements_), p=est.group_elements_.shape[1], n_features=est.n_features_in_, len=len)
    if isinstance(est, MolecularOrbitFeatures):
        ns["n_channels"] = len(est.species_) if est.weighting_ == "species" else 1
    return ns


@pytest.mark.parametrize("cls", ESTIMATORS, ids=lambda c: c.__name__)
def test_fitted_attributes_are_the_documented_ones_with_their_shapes(cls):
    est, _ = _fitted(cls)
    doc = {a.name: a.type for a in _doc(cls)["Attributes"]}
    fitted = {k for k in vars(est) if k.endswith("_") and not k.startswith("_")}
    assert fitted <= set(doc), f"{cls.__name__}: undocumented fitted attributes {sorted(fitted - set(doc))}"
    missing = [k for k in doc if k not in CONDITIONAL and not hasattr(est, k)]
    assert not missing, f"{cls.__name__}: documented attributes missing after fit: {missing}"
    ns = _namespace(est)
    for name, typ in doc.items():
        if name in CONDITIONAL:
            continue
        value = getattr(est, name)
        if value is None:
            assert typ.endswith("or None"), (cls.__name__, name, typ)
        elif typ.startswith("ndarray"):
            assert isinstance(value, np.ndarray), (cls.__name__, name)
            shape = re.match(r"ndarray of shape (\(.*\))(?: or None)?$", typ)
            if shape:
                assert value.shape == tuple(np.atleast_1d(eval(shape.group(1), {}, ns))), (cls.__name__, name, typ)
        elif typ.startswith("{"):
            assert value in _quoted(typ), (cls.__name__, name, value, typ)
        else:
            kinds = {"int": int, "float": float, "bool": bool, "dict": dict, "str": str}
            first = typ.split()[0]
            if first in kinds:
                assert isinstance(value, kinds[first]), (cls.__name__, name, type(value), typ)
            else:
                assert type(value).__name__ == first or any(k.__name__ == first for k in type(value).__mro__), \
                    (cls.__name__, name, type(value), typ)


def test_dask_fit_sets_the_documented_sample_attribute():
    da = pytest.importorskip("dask.array")
    X = np.random.default_rng(0).normal(size=(12, 6))
    f = OrbitFourierFeatures(CyclicShift(6), n_components=4, random_state=0).fit(da.from_array(X, chunks=5))
    np.testing.assert_array_equal(f.fit_sample_indices_, np.arange(12))


def test_feature_names_in_is_set_from_a_dataframe():
    pd = pytest.importorskip("pandas")
    X = pd.DataFrame(np.random.default_rng(0).normal(size=(8, 6)), columns=list("abcdef"))
    f = GroupCDFFeatures(CyclicShift(6), n_templates=2, n_bins=2, random_state=0).fit(X)
    assert list(f.feature_names_in_) == list("abcdef") and f.feature_names_in_.shape == (f.n_features_in_,)


def _notes_width(cls, est):
    """The output width the class docstring's Notes state, evaluated on the fitted estimator."""
    notes = " ".join(_doc(cls)["Notes"])
    if cls is GroupCDFFeatures:
        return eval(re.search(r"The output has ``([^`]+)`` columns", notes).group(1), {}, _namespace(est))
    if cls is OrbitFourierFeatures:
        m = re.search(r"``([^`]+)`` columns for ``output=\"cos_sin\"``, ``([^`]+)`` for \"cos\"", notes)
        return eval(m.group(1 if est.output == "cos_sin" else 2), {}, _namespace(est))
    if cls is OrbitNystroem:
        return eval(re.search(r"The output has ``([^`]+)`` columns", notes).group(1), {}, _namespace(est))
    return est.n_components * (len(est.species) if est.centres == "atoms" else 1)


@pytest.mark.parametrize("cls", ESTIMATORS, ids=lambda c: c.__name__)
def test_transform_output_shape_dtype_and_feature_names_are_as_documented(cls):
    est, X = _fitted(cls)
    width = _notes_width(cls, est)
    returns = _doc(cls.transform)["Returns"][0]
    assert returns.type == "ndarray of shape (n_samples, n_features_out)"
    names = est.get_feature_names_out()
    assert list(names) == [f"{cls.__name__.lower()}{i}" for i in range(width)]
    for dt in (np.float64, np.float32):
        F = est.transform(X.astype(dt))
        assert F.shape == (len(X), width) and F.dtype == dt


def test_fourier_cos_width_and_molecular_atoms_width():
    X = np.random.default_rng(0).normal(size=(5, 6))
    f = OrbitFourierFeatures(CyclicShift(6), n_components=3, output="cos", random_state=0).fit(X)
    assert f.transform(X).shape == (5, _notes_width(OrbitFourierFeatures, f)) == (5, 3)
    Z = np.array([[6, 1, 1, 0], [8, 1, 1, 1]])
    Xm = encode_molecules(Z, np.random.default_rng(1).normal(size=(2, 4, 3)))
    m = MolecularOrbitFeatures(n_wavevectors=2, n_components=3, n_group_samples=2, centres="atoms",
                               random_state=0).fit(Xm)
    assert m.transform(Xm).shape == (2, 3 * 5) == (2, len(m.get_feature_names_out()))


def test_the_formulas_of_the_class_docstrings():
    """GICDF's Φ(x)_{j,k} (Mroueh §2) in column j·(2n+1) + k + n; LGIKA-RF's [Re ψ, -Im ψ] (cosines, then sines) and
    its "cos" output with offsets (Raj Eq. 7); LGIKA-Nys's L Σ_k w_k K_{Z, g_k x} with K_ZZ^+ = L^T L (Raj Eq. 8)."""
    from sklearn.metrics.pairwise import rbf_kernel

    g = CyclicShift(6)
    E = g.elements()
    X = np.random.default_rng(0).normal(size=(4, 6))
    f = GroupCDFFeatures(g, n_templates=3, n_bins=2, random_state=0).fit(X)
    Xn = X / np.linalg.norm(X, axis=1, keepdims=True)
    P = np.einsum("id,kjd->ijk", Xn, g.act(f.templates_, E))  # <x_i, g_k t_j>
    s, n, m = f.range_, 2, 3
    Phi = np.sqrt(s / (n * m)) * (P[..., None] <= s * np.arange(-n, n + 1) / n).mean(2)  # (i, j, k + n)
    np.testing.assert_allclose(f.transform(X), Phi.reshape(4, -1), atol=1e-12)

    for output in ("cos_sin", "cos"):
        o = OrbitFourierFeatures(g, n_components=3, gamma=0.3, output=output, random_state=0).fit(X)
        ph = np.einsum("kid,jd->ijk", g.act(X, E), o.templates_)  # <ω_j, g_k x_i>
        if output == "cos_sin":
            ref = np.hstack([np.cos(ph).mean(2), np.sin(ph).mean(2)]) / np.sqrt(3)
        else:
            ref = np.sqrt(2 / 3) * np.cos(ph + o.random_offset_[None, :, None]).mean(2)
        np.testing.assert_allclose(o.transform(X), ref, atol=1e-12)

    ny = OrbitNystroem(g, n_components=3, gamma=0.2, random_state=0).fit(X)
    K = np.mean([rbf_kernel(Y, ny.components_, gamma=0.2) for Y in g.act(X, E)], axis=0)
    np.testing.assert_allclose(ny.transform(X), K @ ny.normalization_.T, atol=1e-12)
    L = ny.normalization_
    np.testing.assert_allclose(L.T @ L, np.linalg.pinv(rbf_kernel(ny.components_, ny.components_, gamma=0.2)),
                               atol=1e-9)


def test_multi_resolution_returns_are_as_documented():
    X = np.random.default_rng(0).normal(size=(5, 6))
    f = GroupCDFFeatures(CyclicShift(6), n_templates=2, n_bins=3, random_state=0).fit(X)
    shape = re.search(r"shape (\(.*\))$", _doc(GroupCDFFeatures.transform_multi)["Returns"][0].type).group(1)
    out = f.transform_multi(X, [1, 4])
    for n, F in out.items():
        assert F.shape == eval(shape, {}, dict(n_samples=5, n_templates=f.n_templates_, n=n))
    f.set_params(n_bins=7)  # the fitted n_bins_ is the one the docstring's identity names
    np.testing.assert_array_equal(f.transform_multi(X, [f.n_bins_])[f.n_bins_], f.transform(X))
    Z = np.array([[6, 1, 1, 0], [8, 1, 1, 1]])
    Xm = encode_molecules(Z, np.random.default_rng(1).normal(size=(2, 4, 3)))
    m = MolecularOrbitFeatures(n_wavevectors=2, n_components=3, n_group_samples=2, random_state=0).fit(Xm)
    np.testing.assert_array_equal(m.transform_gammas(Xm, [m.gamma_])[m.gamma_], m.transform(Xm))


def test_helper_functions_return_what_they_document():
    from orbitkernels.features import average_over_copies, sample_cdf_templates

    T = sample_cdf_templates(50, 4, 0, epsilon=0.2)
    assert T.shape == (50, 4) and T.dtype == np.float64 and (T ** 2).sum(1).max() < 1.2
    np.testing.assert_array_equal(sample_cdf_templates(3, 4, 1, sampling="sphere", epsilon=7.0),
                                  sample_cdf_templates(3, 4, 1, sampling="sphere"))  # "sphere" ignores epsilon
    g = CyclicShift(6)
    X = np.random.default_rng(0).normal(size=(5, 6))
    plain = GroupCDFFeatures(None, n_templates=2, n_bins=3, random_state=0).fit(X)
    pooled = GroupCDFFeatures(g, n_templates=2, n_bins=3, random_state=0).fit(X)
    for dt in (np.float64, np.float32):
        F = average_over_copies(plain, g, g.elements(), X.astype(dt), chunk_rows=2)
        assert F.shape == (5, 2 * 7) and F.dtype == dt
    # GICDF's pooling is linear in the indicators: the average over copies is the orbit feature (same templates)
    np.testing.assert_allclose(average_over_copies(plain, g, g.elements(), X), pooled.transform(X), atol=1e-12)
