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

_VAR = (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)


def recording_init(init):
    """``init`` made to record the arguments it was called with (defaults filled in) as ``_init_params``, when it is
    the constructor of the object's own class: a subclass's constructor that calls its parent's is recorded once,
    with its own arguments."""
    if init is object.__init__ or getattr(init, "_records_params", False):
        return init
    sig = inspect.signature(init)

    @functools.wraps(init)
    def __init__(self, *args, **kwargs):
        init(self, *args, **kwargs)
        if type(self).__init__ is __init__:
            bound = sig.bind(self, *args, **kwargs)
            bound.apply_defaults()
            params = dict(bound.arguments)
            params.pop(next(iter(sig.parameters)))
            self._init_params = params

    __init__._records_params = True
    return __init__


def _construct(cls, params):
    """``cls`` built from ``params`` by its constructor's signature (``*factors`` given positionally)."""
    sig = list(inspect.signature(cls.__init__).parameters.values())[1:]
    positional = any(p.kind is inspect.Parameter.VAR_POSITIONAL for p in sig)
    args, kwargs = [], {}
    for p in sig:
        if p.name not in params:
            continue
        value = params[p.name]
        if p.kind is inspect.Parameter.VAR_POSITIONAL:
            args.extend(value)
        elif p.kind is inspect.Parameter.VAR_KEYWORD:
            kwargs.update(value)
        elif p.kind is inspect.Parameter.POSITIONAL_ONLY or positional:
            args.append(value)
        else:
            kwargs[p.name] = value
    return cls(*args, **kwargs)


def _has_params(value):
    return hasattr(value, "get_params") and not isinstance(value, type)


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


def _with_nested(value, subs, where):
    """A copy of ``value`` (a group or law, or a tuple of them) with the nested parameters ``subs`` set."""
    if _has_params(value) and hasattr(value, "set_params"):
        # a copy: the object may be shared (one law for both axes of a translation, a group in two estimators)
        fresh = value.__sklearn_clone__() if isinstance(value, Parametrized) else copy.deepcopy(value)
        return fresh.set_params(**subs)
    if isinstance(value, (tuple, list)) and any(_has_params(v) for v in value):
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
    names = ", ".join(f"{where}__{k}" for k in subs)
    raise ValueError(f"{where} is {value!r}, which has no parameters to set ({names})")


class Parametrized:
    """``get_params`` / ``set_params`` / ``__sklearn_clone__`` over the constructor's arguments.

    The arguments are those the constructor recorded (:func:`recording_init`), else the attributes of the same names
    (laws, which keep their arguments as given). ``set_params`` builds the object again from them, so that what the
    constructor derives and checks follows (a bad value fails as it would in the constructor), and takes the new
    object's state in place, as scikit-learn's nested ``set_params`` expects of a parameter object.
    """

    def _params_now(self):
        if "_init_params" in self.__dict__:
            return dict(self.__dict__["_init_params"])
        init = type(self).__init__
        if init is object.__init__:
            return {}
        names = [p.name for p in list(inspect.signature(init).parameters.values())[1:] if p.kind not in _VAR]
        return {name: getattr(self, name) for name in names if hasattr(self, name)}

    def get_params(self, deep=True):
        """The constructor's arguments by name; with ``deep``, also those of the laws and groups among them, as
        ``name__param`` (items of a tuple by position: ``shift__0__sigma``, ``factors__1__angle``)."""
        params = self._params_now()
        if deep:
            for name, value in list(params.items()):
                params.update((f"{name}__{key}", sub) for key, sub in _nested_items(value))
        return params

    def set_params(self, **params):
        """Set constructor arguments, nested ones included (``angle__kappa=4.0``); the object is built again from
        them (``ValueError`` for a name it does not take, or a value its constructor refuses) and returned."""
        if not params:
            return self
        current = self._params_now()
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
            current[name] = _with_nested(current[name], subs, name)
        new = _construct(type(self), current)
        self.__dict__.clear()
        self.__dict__.update(new.__dict__)
        return self

    def __sklearn_clone__(self):
        """A new object from clones of the arguments (``sklearn.base.clone`` of an estimator holding this one)."""
        from sklearn.base import clone

        params = self._params_now()
        if not params and type(self).__init__ is not object.__init__:
            return copy.deepcopy(self)  # arguments unknown (an object unpickled from before they were recorded)
        return _construct(type(self), {k: clone(v, safe=False) for k, v in params.items()})


class ReplacesNestedParams:
    """An estimator whose ``set_params(group__angle=...)`` gives it a new group with that parameter, where
    scikit-learn's would change the group object in place: shared with another estimator, or fitted as ``group_``,
    that object is left as it was."""

    def set_params(self, **params):
        replaced = {}
        for key in [k for k in params if "__" in k]:
            name, _, sub = key.partition("__")
            value = getattr(self, name, None)
            if isinstance(value, Parametrized) or (isinstance(value, (tuple, list))
                                                   and any(isinstance(v, Parametrized) for v in value)):
                replaced.setdefault(name, (value, {}))[1][sub] = params.pop(key)
        for name, (value, subs) in replaced.items():
            if name in params:  # the object itself replaced too: its nested parameters apply to the new one
                value = params.pop(name)
            params[name] = _with_nested(value, subs, name)
        return super().set_params(**params)
