"""kiln.jit: scripting and tracing, and the markers for scripting modules, as torch.jit has them.

    class Net(kiln.nn.Module):
        @kiln.jit.export          # compiled too, though forward does not call it
        def reset(self) -> int: ...
        @kiln.jit.ignore          # left as Python; never compiled
        def debug(self): ...

In TorchScript source, `kiln.jit.annotate(T, v)` and `kiln.jit.is_scripting()`
are builtins of the compiler (as `torch.jit.` ones are); the functions here are
their eager (Python) meanings.

The top of kiln's Python layer: functions and classes are scripted by
kiln._jit, modules by kiln.nn._script, and kiln.script (this module's
`script`) picks between them."""
import types
from typing import Final  # noqa: F401  (kiln.jit.Final, as torch.jit.Final)

from . import _jit
from ._jit_internal import (_MODIFIER, _overload, export, ignore, unused, modifier, annotate,  # noqa: F401
                            is_scripting, interface)
from ._trace import trace, trace_module, TracerWarning, TracingCheckError, is_tracing  # noqa: F401  (as torch.jit)
from .nn._script import ScriptModule, script_module
from ._serialization import load, save  # noqa: F401  (kiln.jit.load and save, as torch.jit's)
from ._freeze import freeze, run_frozen_optimizations  # noqa: F401  (as torch.jit's)
from ._optimize import optimize_for_inference  # noqa: F401  (as torch.jit's)
from .nn.module import Module

__all__ = ["Final", "script", "trace", "trace_module", "TracerWarning", "TracingCheckError", "is_tracing", "export",
           "ignore", "unused", "modifier", "annotate", "is_scripting", "ScriptModule", "load", "save", "freeze",
           "run_frozen_optimizations", "optimize_for_inference", "_overload", "interface"]


def script(obj):
    """TorchScript from Python: a kiln.nn.Module instance is scripted as a
    module (a ScriptModule, kiln.nn._script.script_module); a function or a
    class as kiln._jit.script describes (a ScriptFunction or a ScriptClass).
    Usable as a decorator (`@kiln.script`)."""
    if isinstance(obj, Module):
        return script_module(obj)
    if isinstance(obj, (_jit.ScriptFunction, _jit.ScriptClass, type, types.FunctionType)):
        return _jit.script(obj)
    raise TypeError(f"kiln.script expects a Python function, class or kiln.nn.Module, got {type(obj).__name__}")
