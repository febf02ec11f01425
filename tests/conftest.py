import os
from pathlib import Path

import numpy as np
import pytest

os.environ.setdefault("MPLBACKEND", "Agg")
os.environ.setdefault("ORBITKERNELS_QUIET", "1")


@pytest.fixture
def rng():
    return np.random.default_rng(0)


def shared_data_dir():
    """The folder of real data files (CI points ORBITKERNELS_DATA at ../shared/data), or None."""
    env = os.environ.get("ORBITKERNELS_DATA")
    if env and Path(env).is_dir():
        return Path(env)
    here = Path(__file__).resolve().parents[2] / "shared" / "data"
    return here if here.is_dir() else None
