"""Compiling and running TorchScript: kiln.compile, kiln.script,
kiln.function_from_graph, kiln.CompilationUnit and the ScriptFunction objects
they make (kiln._C.ScriptFunction)."""
import inspect
import linecache
import re
import textwrap
import types

from . import _C

ScriptFunction = _C.ScriptFunction


def function_from_graph(name, graph):
    """A callable running `graph` (a kiln.Graph, e.g. from kiln.parse_ir).

    Arguments may be kiln tensors, numpy arrays, Python scalars, lists,
    tuples, dicts and None; tensors come back as kiln.Tensor."""
    return _C.function_from_graph(name, graph)


class CompilationUnit:
    """A namespace of functions, as torch.jit.CompilationUnit: compiled from
    TorchScript source (`CompilationUnit(source)`, or kiln.compile), or built
    from graphs with create_function. Its functions are attributes
    (`cu.f(x)`); iterating gives them in definition order. Calls between them
    (prim::CallFunction of a prim::Constant[name="g"]) resolve here."""

    def __init__(self, source=None, filename="<string>"):
        if source is None:
            self._cu = _C.CompilationUnit()
        else:
            self._cu = _C._compile(source, filename)

    def create_function(self, name, graph):
        """Adds a function made of `graph` (a kiln.Graph) and returns it."""
        return self._cu.create_function(name, graph)

    def find_function(self, name):
        return self._cu.find_function(name)

    @property
    def functions(self):
        """The ScriptFunctions, in definition order."""
        return [self._cu.find_function(name) for name in self._cu.function_names()]

    def __iter__(self):
        return iter(self.functions)

    def __dir__(self):
        return sorted(set(super().__dir__()) | set(self._cu.function_names()))

    def __getattr__(self, name):
        # Only reached when normal lookup fails; `_cu` itself must not recurse.
        if name.startswith("__") or name == "_cu":
            raise AttributeError(name)
        f = self._cu.find_function(name)
        if f is None:
            raise AttributeError(f"'CompilationUnit' has no attribute '{name}'")
        return f


def compile(source, filename="<string>"):  # noqa: A001  (kiln.compile, as the issue names it)
    """Compiles TorchScript source (defs; `import` lines accepted) and
    returns a CompilationUnit whose functions are attributes:

        cu = kiln.compile("def f(x: Tensor) -> Tensor:\\n    return x * 2\\n")
        cu.f(kiln.ones(2)), cu.f.graph, cu.f.schema

    `filename` names the source in errors and tracebacks. Invalid programs
    raise RuntimeError with TorchScript's message."""
    return CompilationUnit(source, filename)


_DEF_LINE = re.compile(r"(async\s+)?def\s")

# The value kiln.script caches on a function while compiling it: finding it
# again means the function calls itself.
_COMPILING = object()


def _last_line(code):
    """The last source line `code` (and the functions defined in it) covers."""
    last = max((end for _, end, _, _ in code.co_positions() if end is not None), default=code.co_firstlineno)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            last = max(last, _last_line(const))
    return last


def _function_lines(fn):
    """(lines of fn's source, decorators included, and the file line of the
    first). The code object knows where the function ends, which is much
    cheaper than inspect.getsourcelines tokenizing the file to find out."""
    code = fn.__code__
    lines = linecache.getlines(code.co_filename, fn.__globals__)
    if hasattr(code, "co_positions") and lines:
        return lines[code.co_firstlineno - 1:_last_line(code)], code.co_firstlineno
    return inspect.getsourcelines(fn)


def _function_source(fn):
    """(source of the def alone, file name, file line of its first line)."""
    try:
        lines, first_line = _function_lines(fn)
    except (OSError, TypeError) as e:
        raise RuntimeError(f"kiln.script: cannot get the source of {fn.__qualname__}: {e}") from None
    lines = textwrap.dedent("".join(lines)).splitlines(keepends=True)
    # Decorators (`@kiln.script`) precede the def line; TorchScript ignores them.
    for skipped, line in enumerate(lines):
        if _DEF_LINE.match(line):
            break
    else:
        raise RuntimeError(f"kiln.script: {fn.__qualname__} is not a def (lambdas are not supported)")
    return "".join(lines[skipped:]), fn.__code__.co_filename, first_line + skipped


def _free_names(fn):
    """A lookup for the names `fn` does not define: its closure, then its globals."""
    closure = {}
    for name, cell in zip(fn.__code__.co_freevars, fn.__closure__ or ()):
        try:
            closure[name] = cell.cell_contents
        except ValueError:  # a cell not yet assigned
            pass

    def lookup(name):
        if name in closure:
            value = closure[name]
        elif name in fn.__globals__:
            value = fn.__globals__[name]
        elif name == fn.__name__:
            return ()  # a decorated function calling itself: its name is bound only afterwards
        else:
            return None
        if isinstance(value, types.FunctionType):
            if value.__dict__.get("__kiln_script__") is _COMPILING:
                return ()
            value = script(value)
        return (value,)

    return lookup


def script(fn):
    """Compiles a Python function as TorchScript from its source and returns
    a ScriptFunction (callable; `.graph`, `.schema`, `.name`). Usable as a
    decorator (`@kiln.script`).

    Names the function does not define are looked up in its closure, then
    its globals: ScriptFunctions are called; plain Python functions are
    compiled too (once: the result is kept as `fn.__kiln_script__`); the
    modules torch, math and kiln (and aliases such as `F` for
    torch.nn.functional) give their builtins; None, bool, int, float, str and
    tuples of these are constants. Python's builtins need no lookup. Errors
    are RuntimeError with TorchScript's message, pointing at the file and
    line of the function."""
    if isinstance(fn, ScriptFunction):
        return fn
    if not isinstance(fn, types.FunctionType):
        raise TypeError(f"kiln.script expects a Python function, got {type(fn).__name__}")
    cached = fn.__dict__.get("__kiln_script__")
    if cached is not None and cached is not _COMPILING:
        return cached
    source, filename, first_line = _function_source(fn)
    fn.__kiln_script__ = _COMPILING
    try:
        cu = _C._compile(source, filename, first_line, _free_names(fn), fn.__name__)
    except BaseException:
        del fn.__kiln_script__
        raise
    # find_function keeps the unit alive as long as the function.
    compiled = cu.find_function(fn.__name__)
    fn.__kiln_script__ = compiled
    return compiled
