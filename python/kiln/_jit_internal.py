"""The markers for scripting modules (export, ignore, unused) and the eager
meanings of TorchScript builtins (annotate, is_scripting), as torch keeps
them in torch._jit_internal. A leaf: kiln.jit re-exports these, and
kiln.nn._script reads the markers."""

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
