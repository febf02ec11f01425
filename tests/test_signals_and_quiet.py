"""Findings of an audit of long runs (stop 64): SIGTERM (timeout, Slurm, docker stop) killed a reproduction outright,
leaving the hidden temporary file of its figure behind in 8 of 12 tries; ORBITKERNELS_QUIET was read once, at
import, and the command line's default overrode it (its bars were drawn with ORBITKERNELS_QUIET=1)."""
import os
import subprocess
import sys
from pathlib import Path

SRC = str(Path(__file__).resolve().parents[1] / "src")

TERMINATE_IN_FIGURE = """
import os, signal, sys
import matplotlib
matplotlib.use("Agg")
from matplotlib.figure import Figure
from orbitkernels import cli

save = Figure.savefig

def savefig(self, *a, **k):  # the figure file is half-written when SIGTERM comes
    save(self, *a, **k)
    os.kill(os.getpid(), signal.SIGTERM)

Figure.savefig = savefig
sys.exit(cli.main(["reproduce", "mroueh2015", "-e", "theorems", "--quick", "--no-resume", "--out", sys.argv[1]]))
"""


def test_sigterm_is_an_interrupt_that_cleans_up(tmp_path):
    env = {**os.environ, "PYTHONPATH": SRC, "MPLBACKEND": "Agg"}
    proc = subprocess.run([sys.executable, "-c", TERMINATE_IN_FIGURE, str(tmp_path)], env=env, capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 143, proc.stderr[-2000:]
    assert "terminated: finished cells are saved; run the same command again to resume" in proc.stderr
    left = sorted(p.name for p in tmp_path.rglob("*") if p.is_file())
    assert not [name for name in left if name.startswith(".")], left  # no hidden temporary file
    assert any(name.endswith(".partial.json") for name in left), left  # the cells are kept for the resume


def test_the_quiet_variable_is_read_when_a_bar_is_made_and_the_command_line_keeps_it(tmp_path):
    from orbitkernels.utils import progress

    before = progress._QUIET
    try:
        progress.set_quiet(None)
        os.environ["ORBITKERNELS_QUIET"] = "0"
        assert not progress.is_quiet()
        os.environ["ORBITKERNELS_QUIET"] = "1"  # after import: it was ignored
        assert progress.is_quiet()
        progress.set_quiet(False)  # an explicit choice wins over the variable
        assert not progress.is_quiet()
    finally:
        progress._QUIET = before
        os.environ["ORBITKERNELS_QUIET"] = "1"  # conftest's default
    env = {**os.environ, "PYTHONPATH": SRC, "MPLBACKEND": "Agg", "ORBITKERNELS_QUIET": "1"}
    argv = [sys.executable, "-m", "orbitkernels", "reproduce", "mroueh2015", "-e", "theorems", "--quick",
            "--no-resume", "--out", str(tmp_path)]
    err = subprocess.run(argv, env=env, capture_output=True, text=True, check=True, timeout=300).stderr
    assert "theorem 2:" not in err and "it/s" not in err, err
    env["ORBITKERNELS_QUIET"] = "0"
    err = subprocess.run(argv, env=env, capture_output=True, text=True, check=True, timeout=300).stderr
    assert "theorem 2:" in err
