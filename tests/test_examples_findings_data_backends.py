"""What writing the datasets' examples found: RestrictedUnpickler reads protocols 3-4 (and CIFAR-10's Python 2
pickles), and refuses, by name, the globals that protocol 5 arrays and Python 3 bytes at protocols 0-2 need; its
docstring said it rebuilt any bytes and numpy arrays."""
import io
import pickle

import numpy as np
import pytest

from orbitkernels.datasets import RestrictedUnpickler


def _load(obj, protocol):
    return RestrictedUnpickler(io.BytesIO(pickle.dumps(obj, protocol=protocol))).load()


@pytest.mark.parametrize("protocol", [3, 4])
def test_protocols_3_and_4_round_trip(protocol):
    batch = {b"data": np.arange(6, dtype=np.uint8).reshape(2, 3), b"labels": [1, 2], b"name": b"batch"}
    out = _load(batch, protocol)
    np.testing.assert_array_equal(out[b"data"], batch[b"data"])
    assert out[b"labels"] == [1, 2] and out[b"name"] == b"batch"


@pytest.mark.parametrize("obj, protocol, global_name", [
    (np.arange(3), 5, "_frombuffer"),
    (b"abc", 2, "_codecs.encode"),
    (b"abc", 0, "_codecs.encode"),
])
def test_what_it_refuses_is_named(obj, protocol, global_name):
    with pytest.raises(pickle.UnpicklingError, match=global_name):
        _load(obj, protocol)
