"""Running graphs: kiln.function_from_graph, kiln.CompilationUnit and the
ScriptFunction objects they make (kiln._C.ScriptFunction)."""
from . import _C

ScriptFunction = _C.ScriptFunction


def function_from_graph(name, graph):
    """A callable running `graph` (a kiln.Graph, e.g. from kiln.parse_ir).

    Arguments may be kiln tensors, numpy arrays, Python scalars, lists,
    tuples, dicts and None; tensors come back as kiln.Tensor."""
    return _C.function_from_graph(name, graph)


class CompilationUnit:
    """A namespace of functions. Calls between them (prim::CallFunction of a
    prim::Constant[name="g"]) resolve here, as do forked functions."""

    def __init__(self):
        self._cu = _C.CompilationUnit()

    def create_function(self, name, graph):
        """Adds a function made of `graph` (a kiln.Graph) and returns it."""
        return self._cu.create_function(name, graph)

    def find_function(self, name):
        return self._cu.find_function(name)

    def __getattr__(self, name):
        f = self._cu.find_function(name)
        if f is None:
            raise AttributeError(f"the compilation unit has no function '{name}'")
        return f
