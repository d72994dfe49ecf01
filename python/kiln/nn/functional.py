"""kiln.nn.functional: the functional forms, from the operator registry, and
the functions torch.nn.functional writes in Python (_functional_*.py), which
kiln.script compiles where a script calls them (_script_function)."""
from .._functions import _ATEN
from . import _functional_activation, _functional_resample

# The Python-written functions, by name: these win over same-named builtins.
_PYTHON = {}
for _module in (_functional_activation, _functional_resample):
    for _name in _module.__all__:
        _PYTHON[_name] = getattr(_module, _name)
        globals()[_name] = _PYTHON[_name]


def _script_function(name):
    """The compiled function that `F.<name>` means in script code, or None
    (then it is the builtin of that name)."""
    fn = _PYTHON.get(name)
    if fn is None:
        return None
    from .._jit import script
    return script(fn)


def _get(name):
    dispatcher = _ATEN[name]

    def function(*args, **kwargs):
        return dispatcher(*args, **kwargs)

    function.__name__ = name
    return function


def __getattr__(name):
    # Resolved lazily so ops registered by any part of kiln appear here.
    if name in _ATEN:
        return _get(name)
    raise AttributeError(f"module 'kiln.nn.functional' has no attribute '{name}'")
