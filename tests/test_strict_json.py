"""Results files, partial files and ``--json`` output are strict JSON: a NaN or an infinity is ``null``, never a bare
``NaN`` / ``Infinity`` that ``jq``, JavaScript's ``JSON.parse`` and other strict readers refuse."""
import json

import numpy as np
import pytest

from orbitkernels.utils.io import atomic_write_json, dumps, json_safe


def _strict(text):
    def refuse(constant):
        raise ValueError(f"not JSON: {constant}")

    return json.loads(text, parse_constant=refuse)


def test_non_finite_floats_are_written_as_null(tmp_path):
    obj = {"nan": float("nan"), "inf": [np.float32("inf"), -np.inf, 1.5], "array": np.array([[1.0, np.nan]]),
           "int": np.int64(3), "flag": (np.bool_(True),), "half": np.float16(0.5)}
    atomic_write_json(tmp_path / "r.json", obj)
    expected = {"nan": None, "inf": [None, None, 1.5], "array": [[1.0, None]], "int": 3, "flag": [True], "half": 0.5}
    assert _strict((tmp_path / "r.json").read_text()) == expected
    assert _strict(dumps(obj)) == expected == json_safe(obj)


def test_finite_values_are_unchanged_bit_for_bit():
    values = [0.1, -0.0, 5e-324, 1.7976931348623157e308, np.float64(1 / 3)]
    assert [float(v) for v in _strict(dumps(values))] == [float(v) for v in values]


def test_an_experiment_cell_that_computes_nan_is_stored_and_resumed_as_none(tmp_path):
    """A fresh run and a resumed one see the same value (the round trip happens when the cell is computed)."""
    from orbitkernels.experiments._runner import ExperimentRun

    run = ExperimentRun("toy", "exp", {"a": 1}, out_dir=tmp_path)
    fresh = run.cell("c", lambda: {"acc": float("nan"), "curve": np.array([0.5, np.inf])})
    assert fresh == {"acc": None, "curve": [0.5, None]}
    _strict(run.partial_path.read_text())
    result = run.finish({"mean": np.float64("nan")}, headline=[{"name": "acc", "ours": float("nan")}])
    stored = _strict(run.path.read_text())
    assert stored["data"] == {"mean": None} and stored["headline"][0]["ours"] is None
    assert result["cells"]["c"] == fresh
    again = ExperimentRun("toy", "exp", {"a": 1}, out_dir=tmp_path)
    assert again.n_resumed == 1 and again.cell("c", pytest.fail) == fresh


def test_resumed_files_are_recorded_only_inside_the_block_that_asks(tmp_path):
    """The list of files whose cells were kept was a process-wide global that only the command line cleared: a
    process running experiments from Python grew it forever."""
    from orbitkernels.experiments import _runner

    first = _runner.ExperimentRun("toy", "exp", {"a": 1}, out_dir=tmp_path)
    first.cell("c", lambda: 1.0)
    first.finish({})
    assert not hasattr(_runner, "RESUMED_FILES")
    _runner.ExperimentRun("toy", "exp", {"a": 1}, out_dir=tmp_path)  # resumes, outside any block
    with _runner.recording_resumed_files() as files:
        assert files == []
        _runner.ExperimentRun("toy", "exp", {"a": 1}, out_dir=tmp_path)
        with _runner.recording_resumed_files() as inner:
            _runner.ExperimentRun("toy", "exp", {"a": 1}, out_dir=tmp_path)
    assert files == [first.path] and inner == [first.path]
