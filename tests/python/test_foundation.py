"""The package itself: import, dtypes, numpy sharing, operator dispatch, errors."""
import numpy as np
import pytest
import torch

import kiln
from conftest import check_both


def test_numpy_round_trip_shares_memory():
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    t = kiln.from_numpy(a)
    a[0, 0] = 42
    assert t.numpy()[0, 0] == 42
    back = t.numpy()
    back[1, 2] = -1
    assert a[1, 2] == -1


def test_from_numpy_keeps_array_alive():
    t = kiln.from_numpy(np.arange(4, dtype=np.int64) * 3)
    assert t.tolist() == [0, 3, 6, 9]


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "int32", "int16", "int8", "uint8", "bool"])
def test_dtype_round_trip(dtype):
    a = np.ones(3, dtype=dtype)
    t = kiln.from_numpy(a)
    assert t.dtype._name == dtype
    assert t.numpy().dtype == a.dtype


def test_tensor_factory_defaults_like_torch():
    for data in ([1.0, 2.0], [1, 2], [True, False], [[1, 2], [3, 4]], 3.5, 7):
        assert kiln.tensor(data).dtype._name == str(torch.tensor(data).dtype).replace("torch.", "")


def test_negative_strides_rejected():
    with pytest.raises(RuntimeError, match="negative"):
        kiln.from_numpy(np.arange(4.0)[::-1])


def test_unsupported_numpy_dtype_is_type_error():
    with pytest.raises(TypeError):
        kiln.from_numpy(np.zeros(2, dtype=np.uint16))  # complex arrays are supported since issue 20


def test_add_overloads_and_promotion(rng):
    x = rng.standard_normal((2, 3)).astype(np.float32)
    i = rng.integers(-5, 5, (2, 3)).astype(np.int32)
    check_both(lambda lib, a, b: lib.add(a, b, alpha=2), x, x)
    check_both(lambda lib, a: a + 1, i)
    check_both(lambda lib, a: a + 1.5, i)
    check_both(lambda lib, a: 2 + a, i)
    check_both(lambda lib, a, b: a + b, i, x)


def test_no_matching_overload_is_type_error():
    with pytest.raises(TypeError, match="expected one of"):
        kiln.add(kiln.tensor([1.0]), "x")


def test_broadcast_error_names_the_shapes():
    with pytest.raises(RuntimeError, match=r"\[2\] and \[3\]"):
        kiln.tensor([1.0, 2.0]) + kiln.tensor([1.0, 2.0, 3.0])


def test_every_schema_round_trips_through_the_parser():
    for text in kiln._C._schemas():
        assert kiln._C._parse_schema(text) == text


def test_float16_storage_matches_numpy_rounding(rng):
    x = (rng.standard_normal(1000) * 1000).astype(np.float32)
    x[:4] = [65520.0, -1e-8, 6.1e-5, np.nan]
    h = kiln.from_numpy(x).to(kiln.float16)
    np.testing.assert_array_equal(h.numpy(), x.astype(np.float16))


def test_zero_dim_tensor_from_python_number():
    for value in (3, 2.5, True):
        t = kiln.tensor(value)
        assert t.dim() == 0 and t.item() == value


def test_size_of_zero_dim_tensor_raises_index_error():
    with pytest.raises(IndexError):
        kiln.tensor(1.0).size(0)


def test_where_method_takes_self_as_the_value_where_true(rng):
    x = rng.standard_normal((3, 4)).astype(np.float32)
    y = rng.standard_normal((3, 4)).astype(np.float32)
    check_both(lambda lib, a, b: a.where(a > 0, b), x, y)
    check_both(lambda lib, a: a.where(a > 0, 0.0), x)
