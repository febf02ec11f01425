"""Parameters of groups and laws, the scikit-learn way: ``get_params``, ``set_params`` and ``clone``.

A feature map's group and the group's law are parameters of the model: Raj et al. (2017, §4.2-4.3) choose the
concentration of the von Mises law over rotations on held-out data, and a scikit-learn user writes that as a grid
over ``group__angle__kappa``. Groups and laws are not estimators, so scikit-learn could neither name nor set what
they hold (``GridSearchCV`` failed with "'ImageRotation' object has no attribute 'set_params'").

:class:`Parametrized` gives them the estimator protocol over their constructor's arguments (as given, recorded by
the constructor itself for groups, whose constructors convert them), and nested names into the laws and the factors
of a product (``factors__0__angle__kappa``). :class:`ReplacesNestedParams` makes an estimator's
``set_params(group__...)`` give it a new group rather than change the one it holds: that object may be shared with
other estimators, or be the ``group_`` a fitted model transforms with (``set_params`` after ``fit`` changes nothing
until the next ``fit``).
"""
from __future__ import annotations

import copy
import functools
import inspect

__all__ = ["Parametrized", "ReplacesNestedParams", "recording_init"]

_P = inspect.Parameter
_VAR = (_P.VAR_POSITIONAL, _P.VAR_KEYWORD)


def _snapshot(value):
    """A list, dict or array argument as it was given: the constructor derived its state from it then, and a later
    change to the caller's object would make the recorded arguments describe another group."""
    if isinstance(value, list):
        return list(value)
    if isinstance(value, dict):
        return dict(value)
    if hasattr(value, "__array__") and hasattr(value, "copy") and not hasattr(value, "get_params"):
        return value.copy()
    return value


def recording_init(init):
    """``init`` made to record the arguments it was called with (defaults filled in, lists and arrays copied) as
    ``_init_params``, when it is the constructor of the object's own class: a subclass's constructor that calls its
    parent's is recorded once, with its own arguments."""
    if init is object.__init__ or getattr(init, "_records_params", False):
        return init
    sig = inspect.signature(init)

    @functools.wraps(init)
    def __init__(self, *args, **kwargs):
        init(self, *args, **kwargs)
        if type(self).__init__ is __init__:
            bound = sig.bind(self, *args, **kwargs)
            bound.apply_defaults()
            params = {name: _snapshot(value) for name, value in bound.arguments.items()}
            params.pop(next(iter(sig.parameters)))
            self._init_params = params

    __init__._records_params = True
    return __init__


def _records(cls):
    return getattr(cls.__init__, "_records_params", False)


def _construct(cls, params):
    """``cls`` built from ``params`` by its constructor's signature: positional-only arguments, and those before a
    ``*args``, by position; ``*args`` from a tuple or list; the others by name."""
    sig = list(inspect.signature(cls.__init__).parameters.values())[1:]
    starred = any(p.kind is _P.VAR_POSITIONAL for p in sig)
    args, kwargs = [], {}
    for p in sig:
        if p.name not in params:
            continue
        value = params[p.name]
        if p.kind is _P.VAR_POSITIONAL:
            if not isinstance(value, (tuple, list)):
                raise TypeError(f"{p.name} of {cls.__name__} must be a tuple or list (its *{p.name}); "
                                f"got {type(value).__name__}")
            args.extend(value)
        elif p.kind is _P.VAR_KEYWORD:
            kwargs.update(value)
        elif p.kind is _P.POSITIONAL_ONLY or (p.kind is _P.POSITIONAL_OR_KEYWORD and starred):
            args.append(value)
        else:
            kwargs[p.name] = value
    return cls(*args, **kwargs)


def _has_params(value):
    return hasattr(value, "get_params") and not isinstance(value, type)


def _holds_params(value):
    return isinstance(value, (tuple, list)) and any(_has_params(v) for v in value)


def _nested_items(value):
    if _has_params(value):
        return list(value.get_params(deep=True).items())
    if isinstance(value, (tuple, list)):
        items = []
        for i, v in enumerate(value):
            if _has_params(v):
                items.append((str(i), v))
                items.extend((f"{i}__{k}", s) for k, s in v.get_params(deep=True).items())
        return items
    return []


def _no_params(value, subs, where):
    names = ", ".join(f"{where}__{k}" for k in subs)
    # ImageRotation(shape) holds angle=None (the uniform default): kappa belongs to a law the user gives
    return ValueError(f"{where} is {value!r}, which has no parameters to set ({names}); set {where} itself, or give "
                      f"it a value that has them first (angle=VonMises(1.0) before angle__kappa)")


def _with_nested(value, subs, where):
    """A new ``value`` (a group or law, or a tuple of them) with the nested parameters ``subs`` set; ``value`` itself
    is left as it was (it may be shared: one law for both axes of a translation, a group in two estimators)."""
    if isinstance(value, Parametrized):
        return value._with_params(subs, where)
    if _has_params(value) and hasattr(value, "set_params"):
        return copy.deepcopy(value).set_params(**subs)
    if _holds_params(value):
        items, deeper = list(value), {}
        for key, v in subs.items():
            index, delim, rest = key.partition("__")
            if not (index.isdigit() and int(index) < len(items)):
                raise ValueError(f"{where} holds {len(items)} items: no item {index!r} (from {where}__{key}); "
                                 f"name one by its position, 0 to {len(items) - 1}")
            if delim:
                deeper.setdefault(int(index), {})[rest] = v
            else:
                items[int(index)] = v
        for i, s in deeper.items():
            items[i] = _with_nested(items[i], s, f"{where}__{i}")
        return type(value)(items)
    raise _no_params(value, subs, where)


class Parametrized:
    """``get_params`` / ``set_params`` / ``__sklearn_clone__`` over the constructor's arguments.

    The arguments are those the constructor recorded (:func:`recording_init`), else the attributes of the same names
    (laws, which keep their arguments as given). ``set_params`` builds the object again from them, so that what the
    constructor derives and checks follows (a bad value fails as it would in the constructor, and leaves the object
    as it was), and takes the new object's state in place, as scikit-learn's nested ``set_params`` expects of a
    parameter object.
    """

    def _params_now(self):
        if "_init_params" in self.__dict__:
            return dict(self.__dict__["_init_params"])
        if _records(type(self)):
            return {}  # unpickled from a version that did not record them: unknown (set_params says so)
        init = type(self).__init__
        if init is object.__init__:
            return {}
        names = [p.name for p in list(inspect.signature(init).parameters.values())[1:] if p.kind not in _VAR]
        return {name: self.__dict__[name] for name in names if name in self.__dict__}

    def get_params(self, deep=True):
        """The constructor's arguments by name; with ``deep``, also those of the laws and groups among them, as
        ``name__param`` (items of a tuple by position: ``shift__0__sigma``, ``factors__1__angle``)."""
        params = self._params_now()
        if deep:
            for name, value in list(params.items()):
                params.update((f"{name}__{key}", sub) for key, sub in _nested_items(value))
        return params

    def _with_params(self, params, where=""):
        """A new object of this class with ``params`` (nested names included) set; this one is left as it was.
        ``where``: this object's own nested name, for the errors (``group`` under an estimator)."""
        current = self._params_now()
        if not current and _records(type(self)) and "_init_params" not in self.__dict__:
            raise ValueError(f"{self!r} was unpickled from an orbitkernels version that did not record its "
                             "constructor's arguments: build it again to set its parameters")
        nested = {}
        for key, value in params.items():
            name, delim, sub = key.partition("__")
            if name not in current:
                raise ValueError(f"Invalid parameter {name!r} for {self!r}: valid parameters are {sorted(current)}")
            if delim:
                nested.setdefault(name, {})[sub] = value
            else:
                current[name] = value
        for name, subs in nested.items():
            current[name] = _with_nested(current[name], subs, f"{where}__{name}" if where else name)
        return _construct(type(self), current)

    def set_params(self, **params):
        """Set constructor arguments, nested ones included (``angle__kappa=4.0``); the object is built again from
        them (``ValueError`` for a name it does not take, or a value its constructor refuses) and returned."""
        if not params:
            return self
        new = self._with_params(params)
        self.__dict__.clear()
        self.__dict__.update(new.__dict__)
        return self

    def __sklearn_clone__(self):
        """A new object from clones of the arguments (``sklearn.base.clone`` of an estimator holding this one)."""
        from sklearn.base import clone

        params = self._params_now()
        if not params and type(self).__init__ is not object.__init__:
            return copy.deepcopy(self)  # arguments unknown (unpickled from before they were recorded) or none
        return _construct(type(self), {k: clone(v, safe=False) for k, v in params.items()})


class ReplacesNestedParams:
    """An estimator whose ``set_params(group__angle=...)`` gives it a new group with that parameter, where
    scikit-learn's would change the group object in place: shared with another estimator, or fitted as ``group_``,
    that object is left as it was."""

    def get_params(self, deep=True):
        params = super().get_params(deep=deep)
        if deep:  # the items of a list of groups (InvariantSVC's transformations), as a group names its laws
            for name, value in list(params.items()):
                if "__" not in name and _holds_params(value):
                    params.update((f"{name}__{key}", sub) for key, sub in _nested_items(value))
        return params

    def set_params(self, **params):
        nested = {}
        for key in [k for k in params if "__" in k]:
            name, _, sub = key.partition("__")
            if name not in params and not hasattr(self, name):
                continue  # scikit-learn names the invalid parameter
            value = params[name] if name in params else getattr(self, name)
            if isinstance(value, Parametrized) or _holds_params(value) or not hasattr(value, "set_params"):
                nested.setdefault(name, {})[sub] = params.pop(key)
        for name, subs in nested.items():
            value = params[name] if name in params else getattr(self, name)
            params[name] = _with_nested(value, subs, name)
        return super().set_params(**params)
