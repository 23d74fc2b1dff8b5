"""finfo/iinfo, logspace, tril/triu_indices, new_* and type_as against PyTorch."""
import pytest
import torch

import torchlike as tl
from parity import both, same


def _info(T, info):
    return [repr(info), info.bits, info.max, info.min, info.dtype]


CASES = {
    "finfo_default": lambda T: _info(T, T.finfo()) + [T.finfo().eps, T.finfo().tiny],
    "finfo_float16": lambda T: _info(T, T.finfo(T.float16)) + [T.finfo(T.float16).resolution],
    "finfo_bfloat16": lambda T: _info(T, T.finfo(T.bfloat16)) + [T.finfo(T.bfloat16).eps],
    "finfo_float64": lambda T: _info(T, T.finfo(T.float64)) + [T.finfo(T.float64).smallest_normal],
    "finfo_complex": lambda T: T.finfo(T.complex128).dtype,
    "iinfo_int8": lambda T: _info(T, T.iinfo(T.int8)),
    "iinfo_uint8": lambda T: _info(T, T.iinfo(T.uint8)),
    "iinfo_int64": lambda T: _info(T, T.iinfo(T.int64)),
    "logspace": lambda T: T.logspace(0, 2, 3),
    "logspace_base2": lambda T: T.logspace(-2, 3, 6, base=2),
    "logspace_int": lambda T: T.logspace(0, 1, 4, dtype=T.int64),
    "logspace_float64": lambda T: T.logspace(-1, 1, 5, dtype=T.float64),
    "logspace_one": lambda T: T.logspace(1.5, 3, 1),
    "tril_indices": lambda T: T.tril_indices(3, 3),
    "tril_indices_offset": lambda T: T.tril_indices(4, 3, -1),
    "tril_indices_int32": lambda T: T.tril_indices(3, 5, 2, dtype=T.int32),
    "triu_indices": lambda T: T.triu_indices(3, 4, 1),
    "triu_indices_empty": lambda T: T.triu_indices(0, 3),
    "new_zeros": lambda T: T.ones(2, dtype=T.float64).new_zeros(2, 3),
    "new_zeros_tuple_dtype": lambda T: T.ones(2).new_zeros((2,), dtype=T.int32),
    "new_ones_requires_grad": lambda T: T.ones(2).new_ones(3, requires_grad=True),
    "new_full": lambda T: T.ones(2, dtype=T.float64).new_full((2, 2), 3),
    "new_empty_shape": lambda T: T.ones(2, dtype=T.int64).new_empty(2, 4).shape,
    "new_tensor": lambda T: T.ones(2, dtype=T.float64).new_tensor([1, 2]),
    "new_tensor_dtype": lambda T: T.ones(2).new_tensor([[1, 2]], dtype=T.int16),
    "type_as": lambda T: T.tensor([1.7, -2.2]).type_as(T.ones(1, dtype=T.int32)),
    "type_as_same": lambda T: T.tensor([1.5]).type_as(T.ones(1)),
}


@pytest.mark.parametrize("name", CASES)
def test_creation_misc_matches_torch(name):
    both(CASES[name])


ERRORS = {
    "finfo_of_int": lambda T: T.finfo(T.int32),
    "iinfo_of_float": lambda T: T.iinfo(T.float32),
    "iinfo_of_bool": lambda T: T.iinfo(T.bool),
    "triu_indices_negative": lambda T: T.triu_indices(-1, 3),
}


@pytest.mark.parametrize("name", ERRORS)
def test_creation_misc_errors_match_torch(name):
    same(ERRORS[name], raises=True)


def test_type_as_records_the_cast():
    both(lambda T: (T.tensor([1.0, 2.0], requires_grad=True) * 2).type_as(
        T.ones(1, dtype=T.float64)))


def test_host_values_reach_their_device_as_device_put_places_them(monkeypatch):
    """A numpy array goes to its device by jax's own batched copy, not through jax.device_put
    (NOTE [ placing host values ] in torchlike/_creation.py), and comes out as device_put would
    give it: committed to that device, with its dtype (64-bit in torchlike's scope) and values,
    a strided one included; inside a trace device_put stages it, as before."""
    import jax
    import numpy as np
    from torchlike import _creation

    real, placed = jax.device_put, []
    monkeypatch.setattr(jax, "device_put", lambda *a, **k: placed.append(a) or real(*a, **k))
    device = jax.devices("cpu")[0]
    for values in (np.arange(6).reshape(2, 3).T, np.array([1.5, -2.0]), np.array(True),
                   np.zeros((0, 3), np.float32)):
        got, want = _creation.put(values, device), real(values, device)
        assert (got.dtype, got.shape, got.committed, got.sharding) == \
            (values.dtype, values.shape, True, want.sharding)
        np.testing.assert_array_equal(np.asarray(got), values)
    assert not placed and tl.arange(3).tolist() == [0, 1, 2] and not placed
    traced = jax.jit(lambda x: x + _creation.put(np.ones(3, np.float32), device))
    assert traced(np.ones(3, np.float32)).tolist() == [2.0] * 3 and len(placed) == 1
