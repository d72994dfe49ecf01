"""Running graphs: kiln.function_from_graph and the function objects it makes."""
import numpy as _np

from . import _C


def _to_kiln(value):
    """numpy arrays (also inside lists, tuples and dicts) become kiln tensors."""
    if isinstance(value, _np.ndarray):
        return _C.from_numpy(value)
    if isinstance(value, (list, tuple)):
        converted = [_to_kiln(v) for v in value]
        return converted if isinstance(value, list) else tuple(converted)
    if isinstance(value, dict):
        return {_to_kiln(k): _to_kiln(v) for k, v in value.items()}
    return value


class ScriptFunction:
    """A TorchScript function made of a graph. Calling it specializes the
    graph to the arguments (dtype, rank, ...), caches the compiled plan per
    specialization, and runs it on kiln's interpreter."""

    def __init__(self, function):
        self._function = function

    def __call__(self, *args, **kwargs):
        args = [_to_kiln(a) for a in args]
        kwargs = {k: _to_kiln(v) for k, v in kwargs.items()}
        return self._function(*args, **kwargs)

    @property
    def name(self):
        return self._function.name

    @property
    def graph(self):
        return self._function.graph

    @property
    def schema(self):
        return self._function.schema

    def graph_for(self, *args):
        """The specialized, optimized graph that these arguments run."""
        return self._function.graph_for(*[_to_kiln(a) for a in args])

    def code_for(self, *args):
        """The interpreter instructions that these arguments run, as text."""
        return self._function.code_for(*[_to_kiln(a) for a in args])

    def __repr__(self):
        return f"<kiln.ScriptFunction {self.schema}>"


def function_from_graph(name, graph):
    """A callable running `graph` (a kiln.Graph, e.g. from kiln.parse_ir).

    Arguments may be kiln tensors, numpy arrays, Python scalars, lists,
    tuples, dicts and None; tensors come back as kiln.Tensor."""
    return ScriptFunction(_C.function_from_graph(name, graph))


class CompilationUnit:
    """A namespace of functions. Calls between them (prim::CallFunction of a
    prim::Constant[name="g"]) resolve here, as do forked functions."""

    def __init__(self):
        self._cu = _C.CompilationUnit()

    def create_function(self, name, graph):
        """Adds a function made of `graph` (a kiln.Graph) and returns it."""
        return ScriptFunction(self._cu.create_function(name, graph))

    def find_function(self, name):
        f = self._cu.find_function(name)
        return None if f is None else ScriptFunction(f)

    def __getattr__(self, name):
        f = self._cu.find_function(name)
        if f is None:
            raise AttributeError(f"the compilation unit has no function '{name}'")
        return ScriptFunction(f)
