"""kiln.nn.functional: the functional forms, from the operator registry, and
the functions torch.nn.functional writes in Python (_functional_*.py), which
kiln.script compiles where a script calls them: F.<name> in script code
means _PYTHON[name] where it has the name (the frontend's functional hook,
python/src/frontend.cpp), the builtin of that name otherwise."""
from .._functions import _ATEN
from . import _functional_activation, _functional_resample

# The Python-written functions, by name.
_PYTHON = {}
for _module in (_functional_activation, _functional_resample):
    for _name in _module.__all__:
        _PYTHON[_name] = getattr(_module, _name)
        globals()[_name] = _PYTHON[_name]


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
