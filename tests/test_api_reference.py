"""The API reference (docs/api.rst) lists every public name, so that it cannot drift from the code.

A module is public when no part of its dotted name starts with "_"; its public names are its
``__all__``. The reference covers a name when the name appears in an ``autosummary`` list under
``.. currentmodule::`` of its module, or when the object is the same one as a name listed under
another module (a re-export, e.g. ``orbitkernels.distributed.DistributedRidge`` is
``orbitkernels.models.DistributedRidge``). Only the package's own modules and its direct
subpackages and modules count: deeper modules (``orbitkernels.groups.image``) are
implementation homes whose public names their package re-exports.
"""
from __future__ import annotations

import importlib
import pkgutil
import re
from pathlib import Path

import pytest

import orbitkernels

API_PAGE = Path(__file__).resolve().parents[1] / "docs" / "api.rst"
CURRENTMODULE = re.compile(r"^\.\. currentmodule:: (\S+)\s*$")
DIRECTIVE = re.compile(r"^\.\. (\S+)::")
ENTRY = re.compile(r"^\s+([A-Za-z_][A-Za-z0-9_]*)\s*$")


def documented_entries(text):
    """(module, name) for each entry of each ``autosummary`` list of the page, in order."""
    entries, module, in_list = [], None, False
    for line in text.splitlines():
        if m := CURRENTMODULE.match(line):
            module, in_list = m.group(1), False
        elif m := DIRECTIVE.match(line):
            in_list = m.group(1) == "autosummary"
        elif in_list and line and not line[0].isspace():
            in_list = False  # the list ends at the next unindented paragraph or heading
        elif in_list and (m := ENTRY.match(line)) and not line.strip().startswith(":"):
            if module is None:
                raise AssertionError(f"{API_PAGE.name}: autosummary entry {m.group(1)!r} before any currentmodule")
            entries.append((module, m.group(1)))
    return entries


def public_modules():
    """orbitkernels and its direct public submodules that declare ``__all__``."""
    names = ["orbitkernels"] + [f"orbitkernels.{m.name}" for m in pkgutil.iter_modules(orbitkernels.__path__)
                                if not m.name.startswith("_")]
    modules = [importlib.import_module(name) for name in names]
    return [m for m in modules if hasattr(m, "__all__")]


def test_the_parser_reads_autosummary_lists():
    text = """
.. currentmodule:: pkg.a

.. autosummary::
   :toctree: generated/

   One
   two

Prose that ends the list, not an entry:

   Three

.. currentmodule:: pkg.b

.. autosummary::

   Four
"""
    assert documented_entries(text) == [("pkg.a", "One"), ("pkg.a", "two"), ("pkg.b", "Four")]


def test_every_public_name_is_in_the_api_reference():
    entries = documented_entries(API_PAGE.read_text())
    documented = set(entries)
    documented_objects = {id(getattr(importlib.import_module(mod), name)) for mod, name in entries}
    modules = public_modules()
    assert {"orbitkernels.groups", "orbitkernels.features", "orbitkernels.models"} <= {m.__name__ for m in modules}
    missing = []
    for module in modules:
        headed = any(mod == module.__name__ for mod, _ in entries)
        for name in module.__all__:
            if (module.__name__, name) in documented or id(getattr(module, name)) in documented_objects:
                continue
            where = (f"under '.. currentmodule:: {module.__name__}'" if headed else
                     f"in a new section with '.. currentmodule:: {module.__name__}' and an autosummary list")
            missing.append(f"{module.__name__}.{name}: add the line '   {name}' to an autosummary list {where} "
                           f"in docs/api.rst")
    assert not missing, "public names missing from the API reference:\n" + "\n".join(missing)


@pytest.mark.parametrize("module, name", documented_entries(API_PAGE.read_text()))
def test_every_api_entry_exists_and_is_public(module, name):
    mod = importlib.import_module(module)
    assert hasattr(mod, name), f"docs/api.rst lists {module}.{name}, which does not exist"
    public = getattr(mod, "__all__", None)
    assert public is None or name in public, (
        f"docs/api.rst lists {module}.{name}, which is not in {module}.__all__: add it there or drop the entry")


def implementation_modules():
    """The public modules one level below a subpackage (``orbitkernels.groups.image``) that declare ``__all__``."""
    found = []
    for package in public_modules():
        if package.__name__ == "orbitkernels" or not hasattr(package, "__path__"):
            continue
        for m in pkgutil.iter_modules(package.__path__):
            if not m.name.startswith("_"):
                module = importlib.import_module(f"{package.__name__}.{m.name}")
                if hasattr(module, "__all__"):
                    found.append((package, module))
    return found


def test_implementation_modules_public_names_are_reexported_by_their_package():
    """A name in a deeper module's ``__all__`` is public, so its package (or another public module, as
    ``orbitkernels.distributed``) re-exports it and the reference then lists it; a helper that no public module
    offers stays out of ``__all__``."""
    pairs = implementation_modules()
    assert any(module.__name__ == "orbitkernels.groups.image" for _, module in pairs)
    offered = {id(getattr(m, name)) for m in public_modules() for name in m.__all__}
    missing = [f"{module.__name__}.{name}: re-export it from {package.__name__} (and list it in docs/api.rst) "
               f"or drop it from {module.__name__}.__all__"
               for package, module in pairs for name in module.__all__
               if id(getattr(module, name)) not in offered]
    assert not missing, "\n".join(missing)
