"""Bad-parameter battery generated from each estimator's declared ``_parameter_constraints``.

For every public estimator and every parameter, invalid values are derived from
the constraints themselves (out-of-interval numbers and the bounds of open
intervals, NaN, ±inf, strings such as '3' where a number is expected, booleans
where a number is expected, 10**30 for integers, unknown options, wrong types);
each must be refused at ``fit`` (or first call) with a ``ValueError``/``TypeError``
that names the parameter. A parameter without a constraint is a failure, and so
is an integer parameter without an upper bound (10**30 must not reach NumPy).

To cover a new estimator, add it to ``ESTIMATORS`` with a way to trigger its
validation.
"""
import math
from numbers import Integral

import numpy as np
import pytest
from sklearn.utils._param_validation import Interval, Options, StrOptions, make_constraint

from orbitkernels import distributed
from orbitkernels.features import GroupCDFFeatures, OrbitFourierFeatures, OrbitNystroem
from orbitkernels.groups import ImageRotation
from orbitkernels.kernels import HaarKernel
from orbitkernels.models import InvariantLinearClassifier, InvariantSVC

X = np.random.default_rng(0).normal(size=(12, 16))
Y_CLASS = np.arange(12) % 2
Y_BINARY = np.where(np.arange(12) % 2, 1, -1)
Y_REG = np.linspace(0.0, 1.0, 12)
ROT = ImageRotation((4, 4))


def _fit(y=None):
    def run(est):
        return est.fit(X) if y is None else est.fit(X, y)
    return run


# name -> (factory of a valid, fast estimator; how to trigger its validation)
ESTIMATORS = {
    "GroupCDFFeatures": (lambda: GroupCDFFeatures(ROT, n_templates=2, n_bins=2, n_group_samples=3, random_state=0),
                         _fit()),
    "OrbitFourierFeatures": (lambda: OrbitFourierFeatures(ROT, n_components=4, n_group_samples=3, random_state=0),
                             _fit()),
    "OrbitNystroem": (lambda: OrbitNystroem(ROT, n_components=3, n_group_samples=3, random_state=0), _fit()),
    "HaarKernel": (lambda: HaarKernel(ROT, gamma=0.1, n_group_samples=3, random_state=0), lambda k: k(X)),
    "InvariantSVC": (lambda: InvariantSVC(max_iter=3), _fit(Y_CLASS)),
    "InvariantLinearClassifier": (lambda: InvariantLinearClassifier(max_iter=2, random_state=0), _fit(Y_BINARY)),
    # constraints declared by the distributed module's own maintainers
    "DistributedRidge": (lambda: distributed.DistributedRidge(alphas=[1.0]), _fit(Y_REG)),
    "DistributedRidgeClassifier": (lambda: distributed.DistributedRidgeClassifier(alphas=[1.0]), _fit(Y_CLASS)),
}


def _declared(est):
    """The estimator's own constraints (not inherited from a scikit-learn base), or None."""
    for cls in type(est).__mro__:
        if cls.__module__.startswith("orbitkernels") and "_parameter_constraints" in vars(cls):
            return est._parameter_constraints
    return None


def _make(name):
    make, run = ESTIMATORS[name]
    est = make()
    cons = _declared(est)
    if cons is None:
        # an estimator whose module has not declared its constraints yet (another helper's area)
        pytest.skip(f"{name} declares no _parameter_constraints yet")
    return est, cons, run


GENERIC_BAD = [None, True, False, "3", "__bogus__", "", 2.5, -1, 0, 1, 10**30, -(10**30), math.nan, math.inf,
               -math.inf, 1e-300, object(), [1], {"a": 1}, (lambda: None)]


def _derived(constraint):
    """Values at and just beyond the edges of one constraint."""
    c = make_constraint(constraint)
    out = []
    if isinstance(c, Interval):
        step = 1 if c.type is Integral else 0.5
        for bound, sign in ((c.left, -1), (c.right, +1)):
            if bound is not None:
                out += [bound, bound + sign * step, bound + sign * 1e-9]
        out += [str(c.left if c.left is not None else 1)]  # a numeric string: never parsed
        if c.type is Integral:
            out += [2.0, np.float64(3.0)]  # integral floats are not integers
    if isinstance(c, (StrOptions, Options)):
        for opt in list(c.options)[:3]:
            if isinstance(opt, str):
                out += [opt.upper() if opt.upper() != opt else opt.lower() + "x", " " + opt]
    return out


def _is_valid(value, constraints):
    for c in constraints:
        c = make_constraint(c)
        try:
            if c.is_satisfied_by(value):
                return True
        except Exception:  # a constraint that cannot even look at the value refuses it
            continue
    return False


def _same(a, b):
    try:
        return type(a) is type(b) and (a == b or (a != a and b != b))
    except Exception:
        return a is b


def _cases():
    cases = []
    for name, (make, _) in ESTIMATORS.items():
        est = make()
        cons = _declared(est)
        if cons is None:
            cases.append(pytest.param(name, None, None, id=f"{name}-(no constraints yet)"))
            continue
        for param in sorted(est.get_params(deep=False)):
            if param not in cons or cons[param] == "no_validation":
                continue  # reported by test_every_parameter_has_a_constraint
            values = []
            for v in GENERIC_BAD + [d for c in cons[param] for d in _derived(c)]:
                if not _is_valid(v, cons[param]) and not any(_same(v, u) for u in values):
                    values.append(v)
            for k, v in enumerate(values):
                cases.append(pytest.param(name, param, v, id=f"{name}-{param}-{k}:{v!r:.30}"))
    return cases


@pytest.mark.parametrize("name, param, value", _cases())
def test_invalid_value_is_refused_naming_the_parameter(name, param, value):
    est, cons, run = _make(name)
    est.set_params(**{param: value})
    with pytest.raises((ValueError, TypeError)) as info:
        run(est)
    assert param in str(info.value), (param, value, str(info.value))


@pytest.mark.parametrize("name", list(ESTIMATORS))
def test_every_parameter_has_a_constraint(name):
    est, cons, run = _make(name)
    missing = sorted(set(est.get_params(deep=False)) - set(cons))
    assert not missing, f"{name}: parameters without a declared constraint: {missing}"
    extra = sorted(set(cons) - set(est.get_params(deep=False)))
    assert not extra, f"{name}: constraints for parameters it does not have: {extra}"


@pytest.mark.parametrize("name", list(ESTIMATORS))
def test_integer_parameters_are_capped(name):
    # an unbounded integer interval lets 10**30 through to NumPy (OverflowError, or a huge allocation)
    est, cons, run = _make(name)
    for param, cs in cons.items():
        for c in cs:
            c = make_constraint(c)
            if isinstance(c, Interval) and c.type is Integral and param != "random_state":
                assert c.right is not None, f"{name}.{param} has no upper bound"


@pytest.mark.parametrize("name", list(ESTIMATORS))
def test_the_valid_baseline_runs(name):
    # the battery above is meaningful only if the untouched estimator gets past validation
    est, cons, run = _make(name)
    run(est)


@pytest.mark.parametrize("name", list(ESTIMATORS))
def test_numbers_refuse_booleans_and_nan(name):
    """Explicit, not derived: booleans are numbers in Python, and NaN compares false with every bound."""
    est, cons, run = _make(name)
    for param, cs in cons.items():
        numeric = [make_constraint(c) for c in cs if isinstance(make_constraint(c), Interval)]
        if not numeric or "boolean" in cs or "verbose" in cs:
            continue
        for bad in (True, np.bool_(False), math.nan, np.float32("nan")):
            e = ESTIMATORS[name][0]().set_params(**{param: bad})
            with pytest.raises((ValueError, TypeError), match=param):
                run(e)
