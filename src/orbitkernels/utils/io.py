"""Atomic writes and JSON that understands numpy scalars and arrays."""
from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

import numpy as np


class NumpyJSONEncoder(json.JSONEncoder):
    def default(self, o):  # noqa: D401 - json API
        if isinstance(o, np.integer):
            return int(o)
        if isinstance(o, np.floating):
            return float(o)
        if isinstance(o, np.bool_):
            return bool(o)
        if isinstance(o, np.ndarray):
            return o.tolist()
        if isinstance(o, Path):
            return str(o)
        return super().default(o)


def json_safe(obj):
    """``obj`` with every NaN or infinite float replaced by None (``null``), numpy values made plain Python.

    ``json.dumps`` writes non-finite floats as bare ``NaN`` / ``Infinity``, which is not JSON: ``jq``, JavaScript's
    ``JSON.parse`` and strict readers refuse the whole file. ``null`` is what JavaScript writes for them.
    """
    if isinstance(obj, (float, np.floating)):
        v = float(obj)
        return v if np.isfinite(v) else None
    if isinstance(obj, dict):
        return {k: json_safe(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [json_safe(v) for v in obj]
    if isinstance(obj, np.ndarray):
        return json_safe(obj.tolist())
    if isinstance(obj, np.integer):
        return int(obj)
    if isinstance(obj, np.bool_):
        return bool(obj)
    return obj


def dumps(obj, **kwargs) -> str:
    """``json.dumps`` of ``json_safe(obj)``: strict JSON (no bare NaN), numpy values and paths understood."""
    return json.dumps(json_safe(obj), cls=NumpyJSONEncoder, allow_nan=False, **kwargs)


def _umask() -> int:
    mask = os.umask(0)  # reading the umask means setting it; restore it at once
    os.umask(mask)
    return mask


def give_default_mode(path) -> None:
    """Give ``path`` the mode ``open()`` would have created it with: ``tempfile.mkstemp`` makes files 0600, and a
    results file, page or figure renamed from one must stay readable by whoever could read the one it replaces."""
    os.chmod(path, 0o666 & ~_umask())


def atomic_write_bytes(path, data: bytes) -> None:
    """Write ``data`` to ``path`` so that readers never see a partial file.

    The bytes go to a temporary file in the same folder, are flushed to disk,
    then renamed over ``path`` (``os.replace`` is atomic on POSIX and Windows).
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        give_default_mode(tmp)
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def atomic_write_json(path, obj, *, indent=1) -> None:
    """Write ``obj`` as strict JSON (non-finite floats as ``null``: :func:`json_safe`) to ``path``, atomically."""
    atomic_write_bytes(path, (dumps(obj, indent=indent) + "\n").encode())


def read_json(path):
    with open(path, "rb") as f:
        return json.loads(f.read().decode())
