"""The layers of docs/architecture.md never point upward: every import of every module, parsed with ast.

utils/backends ← groups ← features/kernels ← models ← Dask adapter ← experiments ← cli: a module may
import its own layer and those below, never one above. Imports inside functions (lazy imports) count
too; the only exceptions are listed in ``ALLOWED`` with the reason. ``importlib.import_module`` /
``__import__`` calls are imports as well and must be listed there.
"""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

PKG = Path(__file__).resolve().parents[1] / "src" / "orbitkernels"

#: layer of each top-level module / subpackage of orbitkernels (low to high)
LAYERS = {
    "__init__": 0, "_version": 0, "utils": 0, "backends": 0,
    "groups": 1, "datasets": 1,  # loaders: numpy + utils only, used by experiments / bench
    "features": 2, "kernels": 2, "diagnostics": 2,
    "models": 3,
    "dask": 4, "distributed": 4,  # the Dask adapter; distributed = its compatibility re-exports
    "experiments": 5, "demo": 5, "bench": 5,
    "cli": 6, "__main__": 6,
}

#: (importing module, imported top-level name) -> why the upward import is allowed
ALLOWED = {
    ("utils.dispatch", "<import_module>"):
        "routes a dask array to the adapter: imports orbitkernels.dask by name only when one arrives, so the "
        "core stays free of dask and of the adapter (see the module docstring)",
    ("experiments", "<import_module>"): "loads one paper's module of its own package by name (same layer)",
    ("cli", "<import_module>"): "loads the experiments' paper modules by name (a lower layer)",
}


def _modules():
    for path in sorted(PKG.rglob("*.py")):
        rel = path.relative_to(PKG).with_suffix("")
        parts = list(rel.parts)
        is_pkg = parts[-1] == "__init__"
        if is_pkg and len(parts) > 1:
            parts = parts[:-1]
        yield ".".join(parts), is_pkg, path


def _top(dotted):
    return dotted.split(".")[0]


def _imports(name, is_pkg, tree):
    """(top-level orbitkernels name imported, line) for every import node, plus import_module calls."""
    package = name.split(".") if is_pkg else name.split(".")[:-1]
    if name == "__init__":
        package = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name.split(".")[0] == "orbitkernels" and "." in a.name:
                    yield a.name.split(".")[1], node.lineno
        elif isinstance(node, ast.ImportFrom):
            if node.level == 0:
                mod = node.module or ""
                if mod.split(".")[0] != "orbitkernels":
                    continue
                rest = mod.split(".")[1:]
            else:
                base = package[: len(package) - (node.level - 1)]
                rest = base + (node.module.split(".") if node.module else [])
            if rest:
                yield rest[0], node.lineno
            else:  # from . import x, y: each is a top-level module
                for a in node.names:
                    yield a.name, node.lineno
        elif isinstance(node, ast.Call):
            f = node.func
            fname = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", None)
            if fname in ("import_module", "__import__"):
                yield "<import_module>", node.lineno


def test_every_module_has_a_layer():
    missing = sorted({_top(name) for name, _, _ in _modules()} - set(LAYERS))
    assert not missing, f"give these modules a layer in LAYERS: {missing}"


@pytest.mark.parametrize("name,is_pkg,path", list(_modules()), ids=lambda v: v if isinstance(v, str) else "")
def test_no_import_points_upward(name, is_pkg, path):
    own = LAYERS[_top(name)]
    bad = []
    for target, line in _imports(name, is_pkg, ast.parse(path.read_text(encoding="utf-8"))):
        if (name, target) in ALLOWED:
            continue
        if target == "<import_module>":
            bad.append(f"line {line}: a dynamic import (list it in ALLOWED with the reason)")
        elif LAYERS.get(target, own) > own:
            bad.append(f"line {line}: imports {target} (layer {LAYERS[target]}) from layer {own}")
    assert not bad, f"{name}: " + "; ".join(bad)


def test_core_does_not_load_the_adapter():
    import subprocess
    import sys
    code = ("import sys, numpy as np, orbitkernels.features as f, orbitkernels.models; "
            "from orbitkernels.groups import CyclicShift; "
            "f.OrbitFourierFeatures(group=CyclicShift(5), n_components=4).fit_transform(np.ones((3, 5))); "
            "print('orbitkernels.dask' in sys.modules, 'dask' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False"]
