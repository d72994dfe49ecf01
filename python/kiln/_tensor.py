"""Tensor methods and Python operators, from the operator registry."""

import numpy as np

from . import _C
from ._C import Tensor
from ._functions import _ATEN

# Methods exist for every aten operator whose first argument is `Tensor self`.
_METHODS = _C._method_names("aten")


def _make_method(dispatcher):
    def method(self, *args, **kwargs):
        return dispatcher(self, *args, **kwargs)

    method.__name__ = dispatcher.name
    method.__doc__ = "\n".join(dispatcher.signatures)
    return method


for _name in _METHODS:
    if not _name.startswith("__") and not hasattr(Tensor, _name):
        setattr(Tensor, _name, _make_method(_ATEN[_name]))


def _binary(op_name):
    dispatcher = _ATEN[op_name]

    def method(self, other):
        return dispatcher(self, other)

    method.__name__ = op_name
    return method


def _reflected(op_name):
    """`number - tensor`: the number becomes a 0-dim wrapped-number tensor on the left,
    which keeps PyTorch's type promotion (it counts only by category)."""
    dispatcher = _ATEN[op_name]

    def method(self, other):
        if not isinstance(other, Tensor):
            other = _C._wrap_number(other)
        return dispatcher(other, self)

    method.__name__ = "r" + op_name
    return method


# Python operators -> aten ops.
_OPERATORS = {
    "__add__": "add", "__sub__": "sub", "__mul__": "mul", "__truediv__": "div",
    "__floordiv__": "floor_divide", "__mod__": "remainder", "__pow__": "pow",
    "__matmul__": "matmul", "__and__": "bitwise_and", "__or__": "bitwise_or",
    "__xor__": "bitwise_xor", "__lshift__": "bitwise_left_shift", "__rshift__": "bitwise_right_shift",
    "__eq__": "eq", "__ne__": "ne", "__lt__": "lt", "__le__": "le", "__gt__": "gt", "__ge__": "ge",
    "__iadd__": "add_", "__isub__": "sub_", "__imul__": "mul_", "__itruediv__": "div_",
    "__ifloordiv__": "floor_divide_", "__imod__": "remainder_", "__ipow__": "pow_",
    "__iand__": "bitwise_and_", "__ior__": "bitwise_or_", "__ixor__": "bitwise_xor_",
}
_REFLECTED = {
    "__radd__": "add", "__rmul__": "mul", "__rfloordiv__": "floor_divide", "__rmod__": "remainder", "__rpow__": "pow",
    "__rmatmul__": "matmul", "__rand__": "bitwise_and", "__ror__": "bitwise_or", "__rxor__": "bitwise_xor",
}


def _install_operators():
    """(Re)installs operator methods for the aten ops that exist."""
    for py_name, aten in _OPERATORS.items():
        if aten in _ATEN:
            setattr(Tensor, py_name, _binary(aten))
    for py_name, aten in _REFLECTED.items():
        if aten in _ATEN:
            setattr(Tensor, py_name, _reflected(aten))
    # As torch 1.13's Tensor: `number - t` is rsub (grad_fn RsubBackward1) and
    # `number / t` is t.reciprocal() * number (MulBackward0 over ReciprocalBackward0).
    Tensor.__rsub__ = lambda self, other: _ATEN["rsub"](self, other)
    Tensor.__rtruediv__ = lambda self, other: _ATEN["reciprocal"](self) * other


_install_operators()
for _py, _aten in {"__neg__": "neg", "__abs__": "abs", "__invert__": "bitwise_not"}.items():
    if _aten in _ATEN:
        setattr(Tensor, _py, _make_method(_ATEN[_aten]))
Tensor.__pos__ = lambda self: self

# __eq__ is defined, so hashing must be restored explicitly (tensors hash by identity).
Tensor.__hash__ = object.__hash__


def _len(self):
    if self.dim() == 0:
        raise TypeError("len() of a 0-d tensor")
    return self.shape[0]


def _iter(self):
    if self.dim() == 0:
        raise TypeError("iteration over a 0-d tensor")
    return (self[i] for i in range(self.shape[0]))


def _repr(self):
    body = np.array2string(self.numpy(), separator=", ", prefix="tensor(")
    extra = ""
    if self.dtype._name not in ("float32", "int64", "bool", "complex64"):
        extra = ", dtype=kiln." + self.dtype._name
    return "tensor(" + body + extra + ")"


def _tolist(self):
    return self.numpy().tolist()


def _array(self, dtype=None):
    a = self.numpy()
    return a if dtype is None else a.astype(dtype)


Tensor.__len__ = _len
Tensor.__iter__ = _iter
# __bool__, __float__, __int__ and __index__ are kiln._C's (a trace warns there).
Tensor.__repr__ = _repr
Tensor.__str__ = _repr
Tensor.__array__ = _array
Tensor.tolist = _tolist
# Attribute-style views are properties, as in torch.
for _attr, _aten in {"T": "numpy_T", "mT": "mT", "real": "real", "imag": "imag"}.items():
    if _aten in _ATEN:
        setattr(Tensor, _attr, property(_make_method(_ATEN[_aten])))


# --- dtype conversion methods (factory helper): wrappers of aten::to ---------
from . import _dtype  # noqa: E402


def _conversion(dtype_name):
    def method(self, memory_format=None):
        return self.to(getattr(_dtype, dtype_name))

    method.__name__ = dtype_name
    method.__doc__ = f"self.to(kiln.{dtype_name})"
    return method


for _method_name, _dtype_name in {"float": "float32", "double": "float64", "half": "float16",
                                  "bfloat16": "bfloat16", "long": "int64", "int": "int32",
                                  "short": "int16", "char": "int8", "byte": "uint8",
                                  "bool": "bool", "cfloat": "complex64", "cdouble": "complex128"}.items():
    setattr(Tensor, _method_name, _conversion(_dtype_name))


# Methods whose schema names `self` in another position than first.
def _where(self, condition, other):
    # torch 1.13's method form takes only a tensor `other` (kiln.where takes numbers too).
    if not isinstance(other, Tensor):
        raise TypeError(f"where(): argument 'other' (position 2) must be Tensor, not {type(other).__name__}")
    return _ATEN["where"](condition, self, other)


Tensor.where = _where
