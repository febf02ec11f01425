"""Atomic results files: whole or absent, with ordinary permissions."""
import os
import stat

import numpy as np
import pytest

from orbitkernels.utils.io import atomic_write_bytes, atomic_write_json, read_json


def test_atomic_write_gives_the_permissions_open_would(tmp_path):
    mask = os.umask(0o022)
    try:
        atomic_write_json(tmp_path / "sub" / "r.json", {"a": np.float32(1.5), "b": np.arange(3)})
        plain = tmp_path / "plain"
        plain.write_text("x")
    finally:
        os.umask(mask)
    mode = stat.S_IMODE((tmp_path / "sub" / "r.json").stat().st_mode)
    assert mode == stat.S_IMODE(plain.stat().st_mode) == 0o644
    assert read_json(tmp_path / "sub" / "r.json") == {"a": 1.5, "b": [0, 1, 2]}


def test_a_failed_write_leaves_the_old_file_and_no_temporary(tmp_path, monkeypatch):
    path = tmp_path / "r.json"
    atomic_write_bytes(path, b"old")

    def boom(*a, **k):
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", boom)
    with pytest.raises(OSError, match="disk full"):
        atomic_write_bytes(path, b"new")
    assert path.read_bytes() == b"old"
    assert [p.name for p in tmp_path.iterdir()] == ["r.json"]


def test_an_experiment_figure_gets_the_permissions_open_would(tmp_path):
    """The figure is plotted into a mkstemp file (0600) and renamed over the PNG: it must end up as readable
    as the results file beside it."""
    from orbitkernels.experiments._runner import ExperimentRun

    mask = os.umask(0o022)
    try:
        run = ExperimentRun("paper", "exp", {"n": 1}, out_dir=tmp_path)
        run.finish({"x": 1}, figure=lambda p: p.write_bytes(b"\x89PNG"))
    finally:
        os.umask(mask)
    assert stat.S_IMODE((tmp_path / "paper" / "exp.png").stat().st_mode) == 0o644
    assert stat.S_IMODE((tmp_path / "paper" / "exp.json").stat().st_mode) == 0o644


def test_benchmark_environment_names_the_cpus_vector_width(tmp_path):
    from orbitkernels.bench import _cpu_simd

    info = tmp_path / "cpuinfo"
    info.write_text("processor\t: 0\nflags\t\t: fpu sse2 avx2 avx512f avx512vl\n")
    assert _cpu_simd(str(info)) == "avx512f"
    info.write_text("flags\t\t: fpu sse2 avx avx2 fma\n")
    assert _cpu_simd(str(info)) == "avx2"
    assert _cpu_simd(str(tmp_path / "absent")) is None
