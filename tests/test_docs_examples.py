"""Every Python code block of the README and of docs/ runs, fitted on small real data.

The blocks of one page run in order in one namespace (as a reader pastes them), in a
temporary folder. A block may state what it prints: a comment ``# -> 0.93`` after a
``print`` promises that number (the last number of the line it prints), and the test
checks each printed line against its promise (to 0.03, the spread over seeds of what the examples print). A block that
cannot run here (it needs a real cluster) is preceded by ``<!-- not run: reason -->``,
and the test checks that the reason is given.
"""
from __future__ import annotations

import contextlib
import io
import os
import re
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md"] + sorted((ROOT / "docs").rglob("*.md"))
FENCE = re.compile(r"(<!--\s*not run:(?P<why>[^>]*)-->\s*\n)?```python\n(?P<code>.*?)```", re.S)
PROMISE = re.compile(r"#\s*->\s*(-?[0-9.]+)")
NUMBER = re.compile(r"-?\d+\.\d+|-?\d+")
TOLERANCE = 0.03


def python_blocks(path):
    """(code, reason-not-run or None) for each ```python block of a Markdown page."""
    out = []
    for m in FENCE.finditer(path.read_text()):
        why = m.group("why")
        out.append((m.group("code"), None if why is None else why.strip()))
    return out


PAGES_WITH_CODE = [p for p in PAGES if python_blocks(p)]


def test_the_readme_has_runnable_examples():
    blocks = python_blocks(ROOT / "README.md")
    assert sum(why is None for _, why in blocks) >= 2
    assert any(PROMISE.search(code) for code, _ in blocks), "the README should state what its example prints"


def _free_dashboard_port(monkeypatch):
    """A page's ``LocalCluster`` puts its dashboard on a free port, as the tests' clusters do: CI runs this test in
    two suites side by side, and the second page's cluster to ask for distributed's 8787 warned "Port 8787 is
    already in use" (CI at 4226dfa). What the page shows a reader stays distributed's default."""
    try:
        import distributed
    except ImportError:
        return

    class FreePortCluster(distributed.LocalCluster):
        def __init__(self, *args, dashboard_address=":0", **kwargs):
            super().__init__(*args, dashboard_address=dashboard_address, **kwargs)

    monkeypatch.setattr(distributed, "LocalCluster", FreePortCluster)


@pytest.mark.parametrize("page", PAGES_WITH_CODE, ids=lambda p: str(p.relative_to(ROOT)))
def test_page_code_blocks_run(page, tmp_path, monkeypatch):
    from orbitkernels.datasets import DatasetNotFoundError

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("MPLBACKEND", "Agg")
    _free_dashboard_port(monkeypatch)
    ns = {"__name__": "__main__"}
    ran = 0
    for i, (code, why) in enumerate(python_blocks(page)):
        if why is not None:
            assert why, f"{page.name} block {i}: 'not run' needs a reason"
            compile(code, f"{page.name}[{i}]", "exec")  # it must at least be valid Python
            continue
        buf = io.StringIO()
        try:
            with contextlib.redirect_stdout(buf):
                exec(compile(code, f"{page.name}[{i}]", "exec"), ns)
        except DatasetNotFoundError as exc:
            pytest.skip(f"{page.name} block {i} needs data that is not here ({exc}); set ORBITKERNELS_DATA")
        ran += 1
        promised = [float(v) for v in PROMISE.findall(code)]
        if promised:
            # one printed line per promise, in order; its last number is the promised value
            lines = [NUMBER.findall(line) for line in buf.getvalue().splitlines()]
            lines = [float(nums[-1]) for nums in lines if nums]
            assert len(lines) == len(promised), f"{page.name} block {i} printed {buf.getvalue()!r}"
            for want, got in zip(promised, lines):
                assert abs(got - want) <= TOLERANCE, (
                    f"{page.name} block {i} promises {want} and printed {got}: update the page or fix the code"
                )
    assert ran > 0
    os.chdir(ROOT)


@pytest.mark.slow
def test_readme_demo_table_is_what_the_demo_measures(tmp_path):
    """The README's demo table and invariance errors are the full demo's numbers (to 0.01)."""
    from orbitkernels.demo import run_demo

    text = (ROOT / "README.md").read_text()
    section = text[text.index("## The demo"):text.index("## Using it")]
    rows = {}
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 3 and re.fullmatch(r"[0-9.]+", cells[1]) and re.fullmatch(r"[0-9.]+", cells[2]):
            rows[cells[0]] = (float(cells[1]), float(cells[2]))
    assert len(rows) == 4, rows
    res = run_demo(out_dir=tmp_path, seed=0, quick=False, verbose=False)
    measured = [(v["upright train -> rotated test"]["accuracy"], v["rotated train -> rotated test"]["accuracy"])
                for v in res["table"].values()]
    for (label, promised), got in zip(rows.items(), measured):
        assert np.allclose(promised, got, atol=0.01), f"README demo row {label!r}: {promised} vs measured {got}"
    inv = list(res["feature_invariance_error (mean relative change under random rotations)"].values())
    promised_inv = [float(v) for v in re.findall(r"plain RFF (\d+\.\d+), orbit RFF (\d+\.\d+), GICDF (\d+\.\d+)",
                                                 section)[0]]
    assert np.allclose(promised_inv, inv, atol=0.01), (promised_inv, inv)
