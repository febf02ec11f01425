"""benchmarks/gpu_session.sh, the GPU checks in one go: every script it calls exists and takes the flags it is given.

A session lent a GPU has minutes of device time: a typo found there costs a machine start. The script itself runs only
on a GPU machine (it refuses elsewhere, which is tested here too)."""
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "benchmarks" / "gpu_session.sh"


def _calls():
    text = re.sub(r"\\\n\s*", " ", SCRIPT.read_text())  # join continued lines
    return [(m[1], re.findall(r"(--[\w-]+)", m[2]))
            for m in re.finditer(r"\$PY (benchmarks/\S+\.py)([^\n;>]*)", text)]


def test_every_script_exists_and_takes_its_flags():
    calls = _calls()
    assert {path for path, _ in calls} >= {"benchmarks/gpu_check.py", "benchmarks/probes/perf/device_copy_into.py",
                                           "benchmarks/probes/perf/data_path_rbf.py"}
    for path, flags in calls:
        source = (ROOT / path).read_text()
        declared = set(re.findall(r"add_argument\(\"(--[\w-]+)\"", source))
        assert set(flags) <= declared, (path, set(flags) - declared)
    assert "tests/test_backends.py" in SCRIPT.read_text()


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
def test_it_parses_and_refuses_a_machine_without_cuda(tmp_path):
    assert subprocess.run(["bash", "-n", str(SCRIPT)]).returncode == 0
    try:
        import torch
    except ImportError:
        pytest.skip("torch is not installed")
    if torch.cuda.is_available():
        pytest.skip("a GPU is here: the script would run")
    r = subprocess.run(["bash", str(SCRIPT), str(tmp_path / "out")], capture_output=True, text=True, cwd=ROOT,
                       env={"PY": sys.executable, "PATH": "/usr/bin:/bin"}, timeout=120)
    assert r.returncode != 0 and "no CUDA device" in r.stderr
    assert not list((tmp_path / "out").iterdir())  # nothing run, nothing written
