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



def test_read_only_results_folder_fails_before_the_first_cell(tmp_path, monkeypatch):
    import tempfile

    from orbitkernels.experiments._runner import ExperimentRun

    folder = tmp_path / "paper"
    folder.mkdir()
    folder.chmod(0o555)
    try:
        if os.access(folder, os.W_OK):  # root ignores the mode: refuse new files in that folder as the OS would
            def refuse(real):
                def make(*args, dir=None, **kwargs):
                    if dir is not None and os.path.samefile(dir, folder):
                        raise PermissionError(13, "Permission denied", os.path.join(dir, "tmpxyz"))
                    return real(*args, dir=dir, **kwargs)
                return make
            for name in ("mkstemp", "TemporaryFile"):
                monkeypatch.setattr(tempfile, name, refuse(getattr(tempfile, name)))
        computed = []
        # the run used to compute its first (possibly hours long) cell, then fail naming a temporary file
        with pytest.raises(PermissionError) as info:
            ExperimentRun("paper", "exp", {"a": 1}, out_dir=tmp_path).cell("c", lambda: computed.append(1) or 1)
        assert info.value.filename == str(folder) and not computed
    finally:
        folder.chmod(0o755)
