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


@pytest.mark.parametrize("page", PAGES_WITH_CODE, ids=lambda p: str(p.relative_to(ROOT)))
def test_page_code_blocks_run(page, tmp_path, monkeypatch):
    from orbitkernels.datasets import DatasetNotFoundError

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("MPLBACKEND", "Agg")
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
