"""pyproject.toml's lower bounds are versions the test suite has passed on: .ci/run installs the library and its
test extras against .ci/oldest.txt (every lower bound, exactly) and runs the suite there too. This test keeps the
two files in step, so that raising a bound without moving the pin (or the reverse) fails here, not on a user's
machine. (scikit-learn >= 1.3 was declared while the code imported ``validate_data``, new in 1.6: an install next
to scikit-learn 1.5 kept 1.5 and ``import orbitkernels.features`` failed.)"""
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: pinned in .ci/oldest.txt without a bound of their own: distributed comes with dask's [distributed] extra
#: and is pinned to dask's version
COMPANIONS = {"distributed": "dask"}
#: a dependency of a pinned package, pinned to a release of that package's time (not a bound of ours): pyparsing 3.3
#: deprecates what matplotlib 3.6 calls
CONTEMPORARIES = {"pyparsing": "matplotlib"}
#: extras whose bounds the oldest run does not cover (the docs build, and torch's GPU/CPU wheels of 2.0)
UNTESTED_EXTRAS = {"docs", "torch"}


def _version(text):
    parts = [int(p) for p in text.split(".")]
    return tuple(parts + [0] * (3 - len(parts)))


def _bounds():
    """{distribution: lower bound} of the dependencies and the extras the oldest run covers."""
    text = (ROOT / "pyproject.toml").read_text()
    deps = re.search(r"^dependencies = \[(.*?)^\]", text, re.S | re.M).group(1)
    extras = re.search(r"^\[project\.optional-dependencies\]\n(.*?)(?=^\[)", text, re.S | re.M).group(1)
    blocks = [deps] + [body for name, body in re.findall(r"^(\w+) = \[(.*?)\]\s*$", extras, re.S | re.M)
                       if name not in UNTESTED_EXTRAS]
    out = {}
    for block in blocks:
        for name, low in re.findall(r'"([A-Za-z0-9_.-]+)(?:\[[^\]]*\])?>=([0-9.]+)"', block):
            out[name.lower()] = _version(low)
    return out


def _pins():
    out = {}
    for line in (ROOT / ".ci" / "oldest.txt").read_text().splitlines():
        line = line.split("#")[0].strip()
        if line:
            name, version = line.split("==")
            out[name.strip().lower()] = _version(version.strip())
    return out


def test_every_lower_bound_is_pinned_for_the_oldest_run():
    bounds, pins = _bounds(), _pins()
    assert {"numpy", "scipy", "scikit-learn", "threadpoolctl", "dask", "numba", "pytest"} <= set(bounds)
    assert {n: pins.get(n) for n in bounds} == bounds  # each bound pinned at exactly that version
    extra = set(pins) - set(bounds) - set(CONTEMPORARIES)
    assert extra <= set(COMPANIONS), f"pinned without a bound in pyproject.toml: {sorted(extra - set(COMPANIONS))}"
    assert all(of in pins for of in CONTEMPORARIES.values())
    for companion, of in COMPANIONS.items():
        assert pins[companion] == pins[of]


def test_ci_runs_the_suite_against_the_oldest_pins():
    run = (ROOT / ".ci" / "run").read_text()
    # the package as the wheel .ci/run builds once from this tree, its test extras pinned to the lower bounds
    assert re.search(r"pip wheel -q --no-deps -w \"\$WHEEL_DIR\" \.\n", run)
    assert re.search(r"pip install .*-c \.ci/oldest\.txt \"\$WHEEL\[test\]\"", run)
    assert re.search(r"\.venv-oldest/bin/python -m pytest", run)


#: what the repository holds at its root; a stray file (a script's output written to the working folder) is not in it
ROOT_ENTRIES = {".ci", ".gitignore", "LICENSE", "README.md", "benchmarks", "docs", "examples", "pyproject.toml",
                "results", "src", "tests"}


def _tracked():
    import shutil
    import subprocess

    if shutil.which("git") is None or not (ROOT / ".git").exists():
        import pytest
        pytest.skip("not a git checkout")
    out = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    return [p for p in out.decode().split("\0") if p]


def test_no_stray_file_is_committed():
    # a file named '--help' (a probe's output path read from argv) was committed once beside the README
    files = _tracked()
    assert {p.split("/")[0] for p in files} <= ROOT_ENTRIES, sorted({p.split("/")[0] for p in files} - ROOT_ENTRIES)
    odd = [p for p in files if p.startswith("results/") and not p.endswith((".json", ".jsonl", ".png"))]
    assert not odd, odd  # results hold results files and their figures only


def test_the_newest_wheels_run_names_test_files_that_exist_and_ci_reads_them():
    """.ci/run runs the files .ci/newest-tests.txt lists on the newest Python with the newest wheels (README, "Tests"):
    a renamed or removed test file there would otherwise leave the list in silence."""
    listed = [line.strip() for line in (ROOT / ".ci/newest-tests.txt").read_text().splitlines()
              if line.strip() and not line.startswith("#")]
    assert len(listed) >= 10 and len(set(listed)) == len(listed)
    for path in listed:
        assert (ROOT / path).is_file() and path.startswith("tests/test_"), path
    run = (ROOT / ".ci/run").read_text()
    assert "grep -v '^#' .ci/newest-tests.txt" in run and "3.13" in run and "3.12" in run
    readme = " ".join((ROOT / "README.md").read_text().split())
    assert "`.ci/newest-tests.txt` lists) runs on Python 3.13, else 3.12" in readme


def _ci_code():
    """.ci/run's lines of code, stripped, without its comments."""
    return [line.strip() for line in (ROOT / ".ci/run").read_text().splitlines() if not line.lstrip().startswith("#")]


def test_cis_own_installs_skip_byte_compiling_and_the_readmes_compiles_as_a_users():
    """.ci/run: every install of CI's own (pip, the suites' virtual environments, torch, the documentation's) passes
    --no-compile, which saves most of each install's CPU, and the suites write the bytecode of what they import (a
    sandbox's PYTHONDONTWRITEBYTECODE would have every process compile its imports again); the README's install runs
    as written there."""
    code = _ci_code()
    installs = [line for line in code if "-m pip install" in line]
    readmes = [line for line in installs if line == 'python -m pip install ".[test]" && python -m pytest']
    own = [line for line in installs if line not in readmes]
    assert len(readmes) == 1 and len(own) >= 8, installs
    assert all(" --no-compile " in line for line in own), [line for line in own if " --no-compile " not in line]
    assert "--no-compile" not in readmes[0]
    unset = code.index("unset PYTHONDONTWRITEBYTECODE")
    assert unset < min(code.index(line) for line in installs)


def test_ci_runs_the_suites_beside_the_readmes_as_on_one_core_and_the_readmes_as_a_user_does(monkeypatch):
    """README, "Tests": the oldest pins' and the newest wheels' suites run with OPENBLAS_NUM_THREADS=1 (BLAS and the
    engine's threads), the README's suite with the default threads; the documentation is built in a copy of the
    checkout, beside the suites."""
    from orbitkernels.backends import numpy as npbk

    code = _ci_code()
    suites = [line for line in code if "-m pytest" in line]
    assert 'python -m pip install ".[test]" && python -m pytest' in suites  # the README's, as written there
    beside = [line for line in suites if ".venv-oldest/" in line or ".venv-newest/" in line]
    assert len(beside) == 2 and all(line.startswith("OPENBLAS_NUM_THREADS=1 exec ") for line in beside), beside
    assert not [line for line in code if "OPENBLAS_NUM_THREADS" in line and line not in beside]
    assert 'cd "$DOCS_TREE"' in code and any(line.endswith("-m sphinx -W --keep-going -q -b html docs docs/_build/html"
                                                        " ) > \"$DOCS_LOG\" 2>&1 &") for line in code)
    readme = " ".join((ROOT / "README.md").read_text().split())
    assert ("Those two runs are as on one core (`OPENBLAS_NUM_THREADS=1`: BLAS and the engine's threads)" in readme
            and "the README's suite keeps the default threads" in readme)
    assert "`.ci/run` builds the documentation in a copy of the checkout, beside the test suites" in readme
    # OpenBLAS's idle threads sleep at once in every job (the counts stay), exported before the first job starts
    first_install = min(i for i, line in enumerate(code) if "pip install" in line)
    assert code.index("export OPENBLAS_THREAD_TIMEOUT=4") < first_install
    assert "CI only has OpenBLAS's idle threads sleep at once rather than spin for about 0.1 s" in readme
    # "the engine's threads": the pooling threads and SciPy's FFT workers follow the variable
    for var in ("ORBITKERNELS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("OPENBLAS_NUM_THREADS", "1")
    assert npbk.pool_threads() == 1 and npbk._workers() == 1
