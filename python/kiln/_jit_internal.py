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


# torch.jit's markers (`_torchscript_modifier`, a FunctionModifiers string
# such as "unused (ignored and replaced with raising of an exception)"): code
# written for torch.jit.script keeps its meaning under kiln.script.
_TORCH_MODIFIER = "_torchscript_modifier"


# The declarations of overloaded functions (kiln.jit._overload), by the
# module and qualified name they share with their implementation.
_OVERLOADS = {}


def _overload(fn):
    """Declares one signature of an overloaded function, as
    torch.jit._overload: several declarations (bodies `...`), then the
    implementation, a def of the same name. Script code calling it runs the
    implementation's body compiled for the first declaration its arguments
    match."""
    _OVERLOADS.setdefault((fn.__module__, fn.__qualname__), []).append(fn)
    return fn


def overloads(fn):
    """The declarations kiln.jit._overload made for the name of `fn`, or None."""
    if not hasattr(fn, "__qualname__"):
        return None
    declared = _OVERLOADS.get((fn.__module__, fn.__qualname__))
    return [d for d in declared if d is not fn] if declared else None


def modifier(fn):
    """The marker export/ignore/unused put on `fn` (a function or bound
    method) by kiln.jit or torch.jit, or None."""
    fn = getattr(fn, "__func__", fn)
    marker = getattr(fn, _MODIFIER, None)
    if marker is None:
        torch_marker = getattr(fn, _TORCH_MODIFIER, None)
        if isinstance(torch_marker, str):
            word = torch_marker.split(" ", 1)[0]
            marker = word if word in ("export", "ignore", "unused") else None
    return marker


def stub_source(source, name, marker, method=False, definition=None):
    """`source` (dedented, decorators included) with the body of its def
    `definition` (an ast node of it; the first statement when None) replaced
    by a raise, keeping every line where it was (errors point into the
    user's file): how an @unused function or method compiles in 1.13, and
    how an @ignore'd one compiles in kiln, which cannot call back into
    Python from TorchScript."""
    import ast
    if definition is None:
        definition = ast.parse(source).body[0]
    if marker == "unused":
        message = "Cannot call @unused methods" if method else \
            "This Python function is annotated to be ignored and cannot be run"
    else:
        message = f"'{name}' is @ignore'd: kiln cannot call back into Python from TorchScript"
    first = definition.body[0]
    lines = source.splitlines(keepends=True)
    raise_line = f"raise RuntimeError({message!r})"
    if first.lineno == definition.lineno:  # `def f(x): return x`: the body shares the def line
        line = lines[first.lineno - 1]
        lines[first.lineno - 1] = line[:first.col_offset] + raise_line + "\n"
        return "".join(lines)
    indent = " " * first.col_offset
    body = [f"{indent}{raise_line}\n"] + ["\n"] * (definition.end_lineno - first.lineno)
    return "".join(lines[:first.lineno - 1] + body + lines[definition.end_lineno:])


def interface(obj):
    """Marks a class as an interface, as torch.jit.interface: its defs
    declare methods (bodies ignored); script code annotated with it accepts
    any script class (or, for a class subclassing nn.Module, any module)
    whose methods match."""
    if not isinstance(obj, type):
        raise RuntimeError("interface must be applied to a class")
    obj.__kiln_interface__ = True
    return obj


def annotate(the_type, the_value):
    """Eagerly, the value itself; in TorchScript, gives the value the type."""
    return the_value


def is_scripting():
    """False in Python; True in TorchScript."""
    return False
