"""dtype objects: kiln.float32, kiln.int64, ... (PyTorch's numbering)."""
import builtins

from . import _C


class dtype:
    __slots__ = ("_kiln_dtype_code", "_name", "itemsize", "is_floating_point", "is_signed")

    def __init__(self, code, name, itemsize, is_floating_point, is_signed):
        self._kiln_dtype_code = code
        self._name = name
        self.itemsize = itemsize
        self.is_floating_point = is_floating_point
        self.is_signed = is_signed

    def __repr__(self):
        return "kiln." + self._name

    def __reduce__(self):
        return self._name

    @property
    def is_complex(self):
        return self._name.startswith("complex")

    def to_numpy(self):
        import numpy as np
        return np.dtype(self._name if self._name != "bool" else builtins.bool)


uint8 = dtype(0, "uint8", 1, False, False)
int8 = dtype(1, "int8", 1, False, True)
int16 = dtype(2, "int16", 2, False, True)
int32 = dtype(3, "int32", 4, False, True)
int64 = dtype(4, "int64", 8, False, True)
float16 = dtype(5, "float16", 2, True, True)
float32 = dtype(6, "float32", 4, True, True)
float64 = dtype(7, "float64", 8, True, True)
bool = dtype(11, "bool", 1, False, False)
bfloat16 = dtype(15, "bfloat16", 2, True, True)
complex64 = dtype(9, "complex64", 8, False, True)
complex128 = dtype(10, "complex128", 16, False, True)

half, float, double = float16, float32, float64
short, int, long = int16, int32, int64
cfloat, cdouble = complex64, complex128

ALL = [uint8, int8, int16, int32, int64, float16, float32, float64, bool, bfloat16, complex64, complex128]
for _d in ALL:
    _C._register_dtype(_d._kiln_dtype_code, _d)
