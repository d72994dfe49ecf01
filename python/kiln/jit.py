"""kiln.jit: markers for scripting modules, as torch.jit has them.

    class Net(kiln.nn.Module):
        @kiln.jit.export          # compiled too, though forward does not call it
        def reset(self) -> int: ...
        @kiln.jit.ignore          # left as Python; never compiled
        def debug(self): ...

In TorchScript source, `kiln.jit.annotate(T, v)` and `kiln.jit.is_scripting()`
are builtins of the compiler (as `torch.jit.` ones are); the functions here are
their eager (Python) meanings."""
from typing import Final  # noqa: F401  (kiln.jit.Final, as torch.jit.Final)

from ._jit import script  # noqa: F401
from ._trace import trace, trace_module, TracerWarning, TracingCheckError, is_tracing  # noqa: F401  (as torch.jit)

__all__ = ["Final", "script", "trace", "trace_module", "TracerWarning", "TracingCheckError", "is_tracing", "export", "ignore",
           "unused", "modifier", "annotate", "is_scripting", "ScriptModule"]

# The marker kiln.nn._script reads on a function: "export", "ignore" or "unused".
_MODIFIER = "_kiln_jit_modifier"


def export(fn):
    """Marks a module method as an entry point: kiln.script(module) compiles
    it (and what it calls) besides forward."""
    setattr(fn, _MODIFIER, "export")
    return fn


def ignore(drop=False, **kwargs):
    """Marks a module method to stay Python: kiln.script(module) does not
    compile it, and the scripted module keeps it as a Python method. kiln
    cannot call back into Python from TorchScript, so a compiled method
    calling it is a compile error. Usable as `@ignore` and `@ignore()`."""
    if callable(drop):
        setattr(drop, _MODIFIER, "ignore")
        return drop

    def decorator(fn):
        setattr(fn, _MODIFIER, "ignore")
        return fn

    return decorator


def unused(fn):
    """Marks a module method as never run from TorchScript: it is not
    compiled, and a compiled method calling it is a compile error."""
    setattr(fn, _MODIFIER, "unused")
    return fn


def modifier(fn):
    """The marker export/ignore/unused put on `fn` (a function or bound method), or None."""
    return getattr(getattr(fn, "__func__", fn), _MODIFIER, None)


def annotate(the_type, the_value):
    """Eagerly, the value itself; in TorchScript, gives the value the type."""
    return the_value


def is_scripting():
    """False in Python; True in TorchScript."""
    return False


def __getattr__(name):
    # ScriptModule lives with the module system, which imports this module.
    if name == "ScriptModule":
        from .nn._script import ScriptModule
        return ScriptModule
    raise AttributeError(f"module 'kiln.jit' has no attribute '{name}'")
