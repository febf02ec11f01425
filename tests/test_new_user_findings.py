"""What a new user met following the README on a fresh clone (stop 62's walkthrough), each fixed and tested here.

- ``InvariantSVC(transformations=<finite group>, n_transformations=5)`` used all 144 shifts without a word (a
  two-minute fit where five copies were asked for): ``n_transformations`` without an infinite Group to sample is
  refused.
- ``orbitkernels datasets | head -1`` printed ``orbitkernels: error: [Errno 32] Broken pipe`` and exited 1.
- ``orbitkernels report`` over quick runs only said "No results yet" and "*Not run yet*" without saying that quick
  results are left out on purpose.
- ``orbitkernels datasets --verify`` with a corrupt MNIST offered to regenerate Rotated MNIST from it.
- The README and docs said ``pip install "orbitkernels[fast]"``; orbitkernels is not on PyPI, so that works only once
  the clone is installed.
"""
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from orbitkernels.groups import CyclicShift, ImageTranslation, Normal
from orbitkernels.models import InvariantSVC

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def two_classes():
    rs = np.random.RandomState(0)
    return rs.rand(20, 16), np.arange(20) % 2


@pytest.mark.parametrize("transformations, what", [
    (CyclicShift(16), r"the finite group CyclicShift\(shape=\(16,\)\) \(16 elements\), which is used whole"),
    ([lambda A: A[:, ::-1]], "no Group"),
    (None, "no Group"),
])
def test_n_transformations_without_an_infinite_group_is_refused(two_classes, transformations, what):
    X, y = two_classes
    with pytest.raises(ValueError, match=r"n_transformations=5 is the number of elements sampled from an infinite "
                                         rf"Group, but transformations has none: it has {what}"):
        InvariantSVC(transformations=transformations, n_transformations=5).fit(X, y)


def test_n_transformations_with_an_oracle_is_refused(two_classes):
    X, y = two_classes
    with pytest.raises(ValueError, match="an oracle finds its own: leave n_transformations=None"):
        InvariantSVC(oracle=lambda model, x, label: (x, label, 0.0), n_transformations=5).fit(X, y)


def test_n_transformations_samples_the_infinite_group_of_a_mixed_dict(two_classes):
    X, y = two_classes
    model = InvariantSVC(transformations={0: CyclicShift(16), 1: ImageTranslation((4, 4), shift=Normal(1.0))},
                         n_transformations=5, random_state=0).fit(X, y)
    # class 0: the identity and the 15 other shifts; class 1: the identity and 5 sampled translations
    assert [len(lst) for lst in model._tlists] == [16, 6]


def test_a_closed_stdout_ends_the_command_without_an_error():
    # the read end is closed before the interpreter has started, so the first write meets EPIPE
    proc = subprocess.Popen([sys.executable, "-m", "orbitkernels", "reproduce", "raj2017", "--list"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=ROOT)
    proc.stdout.close()
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=120) == 141
    assert err == ""  # neither "orbitkernels: error: [Errno 32] Broken pipe" nor Python's "Exception ignored"


def test_report_over_quick_runs_only_says_they_are_left_out(tmp_path):
    from orbitkernels.experiments.report import render_results

    quick = tmp_path / "mroueh2015" / "xperm_quick.json"
    quick.parent.mkdir()
    quick.write_text("{}")
    text = render_results(tmp_path)
    assert ("No results yet: run `orbitkernels reproduce <paper>`. The 1 quick runs here (`*_quick.json`) are "
            "checks of the pipeline on tiny configurations and are not reported.") in text
    assert "quick runs" not in render_results(tmp_path / "empty")


def test_a_missing_page_names_the_quick_run_beside_it(tmp_path):
    from orbitkernels.experiments.report import _not_run

    path = tmp_path / "xperm.json"
    assert _not_run("xperm", path) == ["*Not run yet* (`xperm.json` missing).", ""]
    (tmp_path / "xperm_quick.json").write_text("{}")
    assert _not_run("xperm", path)[0] == ("*Not run yet* (`xperm.json` missing; `xperm_quick.json`, a quick run, "
                                          "is a check of the pipeline on a tiny configuration, not reported).")


def test_a_corrupt_mnist_is_not_offered_as_rotated_mnists_source(tmp_path):
    from orbitkernels.datasets import dataset_status

    (tmp_path / "mnist.npz").write_bytes(b"not an npz")
    rows = {r["name"]: r for r in dataset_status(tmp_path, verify=True)}
    assert rows["mnist"]["status"] == "checksum mismatch"
    assert rows["rotated_mnist"]["status"] == "missing"
    assert "fails its checksum" in rows["rotated_mnist"]["note"]
    # unverified, the file is only seen: the offer stands, as before
    rows = {r["name"]: r for r in dataset_status(tmp_path)}
    assert rows["rotated_mnist"]["status"] == "missing (can be regenerated from MNIST)"


def test_install_commands_install_from_the_clone():
    """orbitkernels is not on PyPI: every pip command of the pages installs the checkout (``.`` or ``".[extra]"``)."""
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")), *sorted((ROOT / "docs").glob("*.rst"))]
    commands = [(page.name, m.split()[0]) for page in pages for m in re.findall(r"pip install ([^`\n]+)",
                                                                            page.read_text())]
    assert len(commands) >= 8
    for page, target in commands:
        assert re.fullmatch(r'\.|"\.\[\w+\]"', target), (page, target)
    # the extras the pages name are the pyproject's
    section = (ROOT / "pyproject.toml").read_text().split("[project.optional-dependencies]")[1].split("\n[")[0]
    declared = set(re.findall(r"^(\w+) = \[", section, flags=re.M))
    assert {t[3:-2] for _, t in commands if t != "."} <= declared == {"dask", "torch", "fast", "test", "docs"}
