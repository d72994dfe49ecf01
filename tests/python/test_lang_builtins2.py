"""Differential tests of TorchScript builtins and forms (issue 20), second
part: torch.complex(out=), the return_indices boolean dispatch of
torch.nn.functional's max pools, torch.jit.is_tracing and
torch._C._get_tracing_state, torch builtins bound to other names
(`neg = torch.add`, `from torch._C import _infer_size`), torch.device(type=)
and Device.type/.index, legacy constructors (torch.LongTensor...), the
ntuple helpers of torch.nn.modules.utils, tensordot with a tensor `dims`,
torch.jit._overload declarations with type comments and defaults, dict([]),
Tensor.__getitem__ and Tensor.grad. Each function is compiled by torch 1.13
and by kiln and run on copies of the same inputs."""
from typing import Dict, List, Optional, Tuple  # noqa: F401

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from torch import Tensor  # noqa: F401
from torch import device
from torch._C import _infer_size
from torch.nn.modules.utils import _pair, _quadruple, _single, _triple
from torch.nn.utils.rnn import pad_sequence

import kiln
from conftest import assert_same_values, convert

_X = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
_X4 = np.arange(48, dtype=np.float32).reshape(1, 3, 4, 4)


def _both(fn, args):
    """fn scripted by torch and by kiln, run on copies of args: (torch, kiln) results."""
    expected = torch.jit.script(fn)(*convert(list(args), "torch"))
    got = kiln.script(fn)(*convert(list(args), "kiln"))
    return expected, got


def check(fn, *args):
    expected, got = _both(fn, args)
    assert_same_values(got, expected)


# --- torch.complex with out= ------------------------------------------------------------

def complex_out(real: Tensor, imag: Tensor, out: Tensor) -> Tensor:
    return torch.complex(real, imag, out=out)


@pytest.mark.parametrize("dtype, out_dtype, out_shape", [
    (np.float32, np.complex64, (3, 4)),
    (np.float64, np.complex128, (2,)),
])
def test_complex_out(dtype, out_dtype, out_shape):
    real = np.array([1, 2], dtype=dtype)
    imag = np.array([3, 4], dtype=dtype)
    out = np.zeros(out_shape, dtype=out_dtype)
    check(complex_out, real, imag, out)


def test_complex_out_dtype_mismatch():
    real = np.ones((1, 2), np.float32)
    out = np.zeros((1, 2), np.complex128)
    with pytest.raises(RuntimeError):
        torch.jit.script(complex_out)(*convert([real, real, out], "torch"))
    with pytest.raises(RuntimeError):
        kiln.script(complex_out)(*convert([real, real, out], "kiln"))


# --- boolean dispatch on return_indices ---------------------------------------------------

def pool_kwarg_false(x: Tensor) -> Tensor:
    return F.max_pool1d(x, 1, 1, return_indices=False)


def pool_kwarg_true(x: Tensor) -> Tuple[Tensor, Tensor]:
    return F.max_pool1d(x, 1, 1, return_indices=True)


def pool_full_kwarg_true(x: Tensor) -> Tuple[Tensor, Tensor]:
    return F.max_pool1d(x, 2, 1, ceil_mode=False, return_indices=True)


def pool_default(x: Tensor) -> Tensor:
    return F.max_pool1d(x, 1, 1)


def pool_arg_false(x: Tensor) -> Tensor:
    return F.max_pool1d(x, 1, 1, 0, 1, False, False)


def pool_arg_true(x: Tensor) -> Tuple[Tensor, Tensor]:
    return F.max_pool1d(x, 1, 1, 0, 1, False, True)


def pool2d_stride_none(x: Tensor) -> Tuple[Tensor, Tensor, Tensor]:
    a, b = F.max_pool2d(x, 2, None, return_indices=True)
    return a, b, F.max_pool2d(x, 2, stride=None)


def adaptive_pools(x: Tensor) -> Tuple[Tensor, Tuple[Tensor, Tensor], Tensor]:
    return (F.adaptive_max_pool2d(x, 2), F.adaptive_max_pool2d(x, [2, 1], True),
            F.adaptive_max_pool1d(x[0], 3, return_indices=False))


@pytest.mark.parametrize("fn", [pool_kwarg_false, pool_kwarg_true, pool_full_kwarg_true, pool_default,
                                pool_arg_false, pool_arg_true])
def test_bool_dispatch_pool1d(fn):
    check(fn, _X)


@pytest.mark.parametrize("fn", [pool2d_stride_none, adaptive_pools])
def test_bool_dispatch_more(fn):
    check(fn, _X4)


def pool_flag_not_constant(x: Tensor, flag: bool):
    return F.max_pool1d(x, 1, 1, return_indices=flag)


def test_bool_dispatch_needs_constant():
    message = "for boolean dispatch at position was not constant"
    with pytest.raises(RuntimeError, match=message):
        torch.jit.script(pool_flag_not_constant)
    with pytest.raises(RuntimeError, match=message):
        kiln.script(pool_flag_not_constant)


# --- tracing state ------------------------------------------------------------------------

def if_is_tracing(x: Tensor) -> Tensor:
    if torch.jit.is_tracing():
        return x + 1
    else:
        return x - 1


def if_tracing_state(x: Tensor) -> Tensor:
    if torch._C._get_tracing_state():
        return x + 1
    else:
        return x - 1


@pytest.mark.parametrize("fn", [if_is_tracing, if_tracing_state])
def test_tracing_state(fn):
    check(fn, _X)


# --- torch builtins under other names -----------------------------------------------------

neg = torch.add  # the name misleads: the builtin is found by the function


def misnamed_builtin(x: Tensor) -> Tensor:
    return neg(x, x)


def infer_size(x: Tensor, y: Tensor) -> List[int]:
    return _infer_size(x.size(), y.size())


def test_builtin_by_function():
    check(misnamed_builtin, _X)
    check(infer_size, _X, np.ones((3, 1), np.float32))


def test_infer_size_mismatch():
    args = (_X, np.ones((2, 2), np.float32))
    with pytest.raises(RuntimeError):
        torch.jit.script(infer_size)(*convert(list(args), "torch"))
    with pytest.raises(RuntimeError, match="must match"):
        kiln.script(infer_size)(*convert(list(args), "kiln"))


# --- devices ------------------------------------------------------------------------------

def device_kwarg():
    return device(type='cpu'), torch.device(type='cpu')


def device_fields(name: str) -> Tuple[str, Optional[int]]:
    x = torch.device(name)
    return x.type, x.index


def test_device_kwarg():
    expected, got = _both(device_kwarg, ())
    assert [str(d) for d in got] == [str(d) for d in expected]


@pytest.mark.parametrize("name", ["cpu", "cuda:1"])
def test_device_fields(name):
    assert kiln.script(device_fields)(name) == torch.jit.script(device_fields)(name)


# --- legacy constructors ------------------------------------------------------------------

def legacy_dtypes():
    return (torch.BoolTensor([2]), torch.LongTensor([3]), torch.ByteTensor([4]), torch.CharTensor([5]),
            torch.DoubleTensor([6]), torch.FloatTensor([7]), torch.IntTensor([8]), torch.ShortTensor([1]),
            torch.HalfTensor([1]), torch.DoubleTensor(), torch.FloatTensor([[1.5, 2.0]]))


def legacy_sizes():
    return torch.LongTensor(2, 3, 4).shape


def test_legacy_constructors():
    check(legacy_dtypes)
    check(legacy_sizes)


# --- ntuple helpers -----------------------------------------------------------------------

def ntuple_ints():
    return _single(1), _pair(2), _triple(3), _quadruple(4)


def ntuple_floats():
    return _single(1), _pair(2.1), _triple(3.1), _quadruple(4.1)


def ntuple_list(x: List[int]):
    return _pair(x)


def test_ntuples():
    check(ntuple_ints)
    check(ntuple_floats)
    check(ntuple_list, [3, 4])


# --- tensordot with a tensor dims ---------------------------------------------------------

def tensordot_dims_tensor(a: Tensor, b: Tensor, dims: Tensor):
    return torch.tensordot(a, b, dims=dims)


@pytest.mark.parametrize("a, b, dims", [
    (np.arange(120.).reshape(2, 3, 4, 5), np.arange(840.).reshape(4, 5, 6, 7), np.array([2])),
    (np.arange(60.).reshape(3, 4, 5), np.arange(24.).reshape(4, 3, 2), np.array([[1, 0], [0, 1]])),
    (np.arange(6.).reshape(2, 3), np.arange(6.).reshape(2, 3), np.array(0)),
])
def test_tensordot_tensor_dims(a, b, dims):
    check(tensordot_dims_tensor, a.astype(np.float32), b.astype(np.float32), dims)


# --- overloads declared with torch.jit._overload ------------------------------------------

@torch.jit._overload  # noqa: F811
def overloaded_simple(x1):  # noqa: F811
    # type: (int) -> int
    pass


@torch.jit._overload  # noqa: F811
def overloaded_simple(x1):  # noqa: F811
    # type: (float) -> float
    pass


def overloaded_simple(x1):  # noqa: F811
    return x1


@torch.jit._overload  # noqa: F811
def overloaded_identity(x1):  # noqa: F811
    # type: (str) -> str
    pass


@torch.jit._overload  # noqa: F811
def overloaded_identity(x1):  # noqa: F811
    # type: (float) -> float
    pass


def overloaded_identity(x1=1.0):  # noqa: F811
    return x1


def call_simple():
    return overloaded_simple(1), overloaded_simple(.5)


def call_identity():
    return overloaded_identity(), overloaded_identity(.5), overloaded_identity("hi")


@pytest.mark.parametrize("fn", [call_simple, call_identity])
def test_torch_overloads(fn):
    check(fn)


# --- dict([]), Tensor.__getitem__, Tensor.grad, tuple() ----------------------------------

def dict_of_empty_list():
    return dict([])


def getitem_with_tensor(inp: Tensor):
    indices = torch.tensor([0, 2], dtype=torch.long)
    return inp.__getitem__(indices)


def getitem_with_int(inp: Tensor):
    return inp.__getitem__(1)


def tensor_grad(x: Tensor) -> Optional[Tensor]:
    return x.grad


def test_small_forms():
    check(dict_of_empty_list)
    check(getitem_with_tensor, np.arange(12, dtype=np.float32).reshape(3, 4))
    check(tensor_grad, _X)


@pytest.mark.parametrize("fn, message", [
    (lambda: tuple_two_args, "tuple expected exactly 1 arguments but found 2"),
    (lambda: getitem_with_int, "Expected a list element that subtypes 'Optional\\[Tensor\\]' but got an element of type 'int'"),
])
def test_form_errors(fn, message):
    with pytest.raises(RuntimeError, match=message):
        torch.jit.script(fn())
    with pytest.raises(RuntimeError, match=message):
        kiln.script(fn())


def tuple_two_args():
    return tuple(1, 2)


# --- augmented assignment on objects ------------------------------------------------------

class AddInPlace:
    def __init__(self):
        self.num = 99

    def __iadd__(self, x: int):
        self.num += x
        return self


class AddOutOfPlace:
    def __init__(self):
        self.num = 99

    def __add__(self, x: int):
        self.num = x
        return self


class NotAddable:
    def __init__(self):
        self.num = 99


def aug_assign_objects():
    a = AddInPlace()
    a_copy = a
    a += 20
    b = AddOutOfPlace()
    b_copy = b
    b += 7
    c = [1, 2]
    c_copy = c
    c *= 2
    return a is a_copy, a.num, b is b_copy, b.num, c is c_copy, c


def aug_assign_not_addable():
    a = NotAddable()
    a += 1
    return a.num


def test_aug_assign_objects():
    check(aug_assign_objects)
    with pytest.raises(RuntimeError, match="Cannot emit inplace op"):
        torch.jit.script(aug_assign_not_addable)
    with pytest.raises(RuntimeError, match="Cannot emit inplace op"):
        kiln.script(aug_assign_not_addable)


# --- torch.nn.utils.rnn.pad_sequence (is_tracing, torch._C._nn) -------------------------

def pad_sequence_func(tensor_list: List[Tensor], batch_first: bool = False, padding_value: float = 0.0) -> Tensor:
    return pad_sequence(tensor_list, batch_first, padding_value)


@pytest.mark.parametrize("args", [
    ([np.ones((3, 5), np.float32), np.ones((4, 5), np.float32), np.ones((2, 5), np.float32)],),
    ([np.ones((3, 5), np.float32), np.ones((4, 5), np.float32)], True),
    ([np.ones((3, 5), np.float32), np.ones((4, 5), np.float32)], True, 2.5),
    ([np.array([1, 2, 3]), np.array([4])], False, 2.5),
])
def test_pad_sequence(args):
    check(pad_sequence_func, *args)
