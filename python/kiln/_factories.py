"""Tensors from Python data."""
import builtins

import numpy as np

from . import _C
from . import _dtype


def _numpy_dtype(dt):
    return np.dtype(builtins.bool) if dt is _dtype.bool else np.dtype(dt._name)


def tensor(data, dtype=None, requires_grad=False):
    """A new tensor holding a copy of `data` (nested lists, numbers, numpy arrays, tensors).

    Like torch.tensor: Python floats become float32, ints int64, bools bool.
    """
    result = _tensor(data, dtype)
    if requires_grad:
        result.requires_grad_(True)
    return result


def _tensor(data, dtype):
    if isinstance(data, _C.Tensor):
        data = data.numpy()
    from_python = not isinstance(data, np.ndarray)
    array = np.array(data)
    if dtype is not None:
        array = array.astype(_numpy_dtype(dtype))
    elif from_python and array.dtype == np.float64:
        array = array.astype(np.float32)
    elif from_python and array.dtype == np.complex128:  # Python complex numbers become complex64, as in torch
        array = array.astype(np.complex64)
    elif array.dtype.kind in "iu" and from_python:
        array = array.astype(np.int64)
    # np.array(..., copy) keeps 0-d arrays 0-d (ascontiguousarray would make them 1-d).
    return _C.from_numpy(np.array(array, order="C", copy=True))


def as_tensor(data, dtype=None):
    """Shares memory with a numpy array when possible, like torch.as_tensor.

    A tensor comes back as it is (its graph kept), or converted by `to` when
    `dtype` differs (ToCopyBackward0), as in torch."""
    if isinstance(data, _C.Tensor):
        return data if dtype is None or data.dtype == dtype else data.to(dtype)
    if isinstance(data, np.ndarray) and dtype is None:
        return _C.from_numpy(data)
    return tensor(data, dtype)


def manual_seed(seed):
    """Seeds kiln's random generator (aten::manual_seed, which is not a
    tensor operator and so is not generated into the kiln namespace)."""
    _C._overload("aten::manual_seed")(seed)
