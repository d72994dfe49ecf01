"""kiln: a standalone TorchScript compiler and runtime.

The tensor functions and methods here are generated from kiln's operator
registry (each operator is declared once in C++ with its PyTorch schema), so
`kiln.add`, `Tensor.add` and `a + b` all run the same declaration.
"""
from . import _C
from ._C import Error, Tensor, from_numpy, set_num_threads, get_num_threads, parallel_info
from ._C import parse_ir
from ._dtype import (dtype, uint8, int8, int16, int32, int64, float16, float32, float64, bool,
                     bfloat16, half, float, double, short, int, long, complex64, complex128, cfloat, cdouble)
from . import _tensor  # noqa: F401  (installs Tensor methods and operators)
from ._functions import install as _install_functions
from ._stats import cdist
from ._factories import tensor, as_tensor, manual_seed
from ._jit import function_from_graph, ScriptFunction, CompilationUnit, compile
from ._jit import ScriptClass, ScriptObject, ScriptMethod
from ._trace import trace, trace_module, TracerWarning, TracingCheckError, is_tracing
from . import nn
from . import jit  # noqa: F401  (kiln.jit.export, kiln.jit.ignore)
from .jit import script
from ._serialization import load, load_pickle, save, save_pickle
from ._freeze import freeze
from ._optimize import optimize_for_inference
from ._grad_mode import no_grad, enable_grad, set_grad_enabled, is_grad_enabled
from . import autograd  # noqa: F401  (kiln.autograd.grad, kiln.autograd.backward)
from . import optim  # noqa: F401  (kiln.optim.SGD, Adam, AdamW)
from . import linalg  # noqa: F401  (kiln.linalg.inv, solve, svd, cross, multi_dot, ...)

from ._functional import meshgrid, einsum, cartesian_prod, block_diag, chain_matmul  # noqa: F401
_install_functions(globals())

__all__ = ["Error", "Tensor", "tensor", "from_numpy", "set_num_threads", "get_num_threads", "parallel_info", "dtype", "parse_ir",
           "function_from_graph", "ScriptFunction", "CompilationUnit", "compile", "script",
           "trace", "trace_module", "TracerWarning", "TracingCheckError", "is_tracing",
           "ScriptClass", "ScriptObject", "ScriptMethod", "load", "load_pickle", "save", "save_pickle", "freeze",
           "optimize_for_inference", "no_grad", "enable_grad", "set_grad_enabled", "is_grad_enabled"]
