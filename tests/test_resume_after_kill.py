"""An interrupted ``orbitkernels reproduce`` resumes from the cells it finished (issue: kill it, rerun, same file)."""
import json
import os
import signal
import subprocess
import sys
import time

import pytest

CMD = [sys.executable, "-m", "orbitkernels", "--quiet", "reproduce", "mroueh2015", "--experiment", "theorems",
       "--quick", "--seed", "3"]


def _final(root):
    res = json.loads((root / "mroueh2015" / "theorems_quick.json").read_text())
    return res["data"], res["headline"], res["resumed_cells"]


@pytest.mark.timeout(300)
def test_killed_reproduce_resumes_to_the_same_file(tmp_path):
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1")
    ref_root, run_root = tmp_path / "reference", tmp_path / "interrupted"
    subprocess.run(CMD + ["--out", str(ref_root)], check=True, env=env, timeout=240)
    ref_data, ref_head, _ = _final(ref_root)

    partial = run_root / "mroueh2015" / "theorems_quick.partial.json"
    proc = subprocess.Popen(CMD + ["--out", str(run_root)], env=env)
    deadline = time.monotonic() + 200
    n_done = 0
    while time.monotonic() < deadline and proc.poll() is None:
        try:
            n_done = len(json.loads(partial.read_text())["cells"])
        except (OSError, ValueError, KeyError):
            n_done = 0
        if n_done >= 2:
            break
        time.sleep(0.05)
    if proc.poll() is not None:
        pytest.fail("the run finished before it could be interrupted: the test did not test anything")
    proc.send_signal(signal.SIGKILL)  # no clean-up: what survives is what was written atomically
    proc.wait(timeout=30)
    assert partial.exists() and not (run_root / "mroueh2015" / "theorems_quick.json").exists()
    kept = len(json.loads(partial.read_text())["cells"])
    assert kept >= 2

    subprocess.run(CMD + ["--out", str(run_root)], check=True, env=env, timeout=240)
    data, head, resumed = _final(run_root)
    assert resumed == kept  # the rerun started from the finished cells...
    assert data == ref_data and head == ref_head  # ...and ends with exactly the uninterrupted numbers
    assert not partial.exists()
