"""The Examples sections of the public docstrings run and print what they say (doctest), and every public class
and function of the library's subpackages has one: a user reading the API reference can paste any example and get
the output it shows.

The examples avoid what differs between the versions pyproject.toml allows (NumPy 1.24's and 2.x's scalar reprs,
BLAS rounding in the last digits): they print shapes, booleans and values rounded to a few decimals.
"""
from __future__ import annotations

import doctest
import importlib
import importlib.util
import inspect
import pkgutil
import re

import pytest

import orbitkernels

FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE

# optional dependencies (extras of pyproject.toml): a module that imports one is not collected without it, an example
# that uses one is skipped without it
_OPTIONAL = {"torch", "dask", "numba", "pandas"}

# the namespaces whose public classes and functions must show an example
PUBLIC_NAMESPACES = (
    "orbitkernels.groups",
    "orbitkernels.features",
    "orbitkernels.kernels",
    "orbitkernels.models",
    "orbitkernels.models.distributed_ridge",  # holdout_mask, public through orbitkernels.distributed
    "orbitkernels.datasets",
    "orbitkernels.backends",
    "orbitkernels.dask",
    "orbitkernels.diagnostics",
)

# public names without an example, each with the reason (kept short: a name belongs here only when no example
# could run without a user's files or a network)
EXEMPT: dict[str, str] = {}


def _module_names():
    names = ["orbitkernels"]
    for info in pkgutil.walk_packages(orbitkernels.__path__, "orbitkernels."):
        if not info.name.endswith("__main__"):  # importing it runs the command line
            names.append(info.name)
    return sorted(names)


def _import(name):
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as exc:
        if (exc.name or "").split(".")[0] in _OPTIONAL:
            return None
        raise


def _collect():
    finder = doctest.DocTestFinder(exclude_empty=True)
    found = {}
    for name in _module_names():
        module = _import(name)
        if module is None:
            continue
        for test in finder.find(module, name):
            if test.examples and test.name not in found:
                found[test.name] = test
    return [found[k] for k in sorted(found)]


DOCTESTS = _collect()


@pytest.mark.parametrize("test", DOCTESTS, ids=[t.name for t in DOCTESTS])
def test_docstring_example_runs_as_shown(test):
    source = "".join(ex.source for ex in test.examples)
    for name in sorted(_OPTIONAL):
        if re.search(rf"\b{name}\b", source) and importlib.util.find_spec(name) is None:
            pytest.skip(f"the example uses {name}, which is not installed (an optional dependency)")
    import matplotlib

    matplotlib.use("Agg")
    lines = []
    runner = doctest.DocTestRunner(optionflags=FLAGS)
    globs = dict(test.globs)
    test = doctest.DocTest(test.examples, globs, test.name, test.filename, test.lineno, test.docstring)
    runner.run(test, out=lines.append, clear_globs=True)
    result = runner.summarize(verbose=False)
    if result.failed:
        pytest.fail("".join(lines), pytrace=False)


def _public_objects():
    for namespace in PUBLIC_NAMESPACES:
        module = importlib.import_module(namespace)
        for name in module.__all__:
            obj = getattr(module, name)
            if not (inspect.isclass(obj) or inspect.isfunction(obj)):
                continue  # constants and singletons document themselves in the module
            if inspect.isclass(obj) and issubclass(obj, (Exception, Warning)):
                continue  # errors and warnings are shown where they are raised
            qualified = f"{obj.__module__}.{obj.__qualname__}"
            yield qualified, obj


PUBLIC = sorted(dict(_public_objects()).items())


@pytest.mark.parametrize("qualified, obj", PUBLIC, ids=[q for q, _ in PUBLIC])
def test_public_object_shows_an_example(qualified, obj):
    if qualified in EXEMPT:
        pytest.skip(EXEMPT[qualified])
    doc = inspect.getdoc(obj) or ""
    assert "Examples\n--------" in doc and ">>> " in doc, f"{qualified}'s docstring has no Examples section"
    examples = doctest.DocTestParser().get_examples(doc)
    assert any(not ex.options.get(doctest.SKIP) for ex in examples), f"{qualified}: every example is skipped"


def test_exemptions_name_public_objects_that_still_lack_an_example():
    """An exemption that outlived its reason (the object gained an example, or is gone) is removed."""
    public = dict(PUBLIC)
    for qualified in EXEMPT:
        assert qualified in public, f"EXEMPT names {qualified}, which is not public"
        assert ">>> " not in (inspect.getdoc(public[qualified]) or ""), f"{qualified} has an example now"


def test_the_collector_finds_a_failing_example():
    """The runner above fails on an example whose output differs (the test can fail)."""

    def f():
        """
        >>> 1 + 1
        3
        """

    (test,) = doctest.DocTestFinder().find(f, "f", globs={})
    runner = doctest.DocTestRunner(optionflags=FLAGS)
    runner.run(test, out=lambda s: None)
    assert runner.summarize(verbose=False).failed == 1


def test_the_readme_names_the_namespaces_whose_objects_show_an_example():
    from pathlib import Path

    text = " ".join((Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8").split())
    m = re.search(r"Every public class and function of (.+?) has an Examples section", text)
    assert m, "the README should say which objects show an example"
    named = set(re.findall(r"`(\w+)`", m.group(1)))
    assert {f"orbitkernels.{n}" for n in named} == {ns for ns in PUBLIC_NAMESPACES if ns.count(".") == 1}
