"""kiln.nn.functional: the functional forms, from the operator registry, and
the functions torch.nn.functional writes in Python (F.batch_norm's argument
order is not aten::batch_norm's, F.interpolate is a whole program), which
kiln writes as scriptable Python in kiln/nn/_functional_<area>.py.

Every module of that name is found here: its functions (those in `__all__`,
else every public function it defines) win over same-named operators,
eagerly and in scripts: F.<name> in script code, for any path to
torch.nn.functional or kiln.nn.functional, means _SCRIPTABLE[name] where it
has the name (the frontend's functional hook, python/src/frontend.cpp), the
operator of that name otherwise."""
import importlib
import os
import pkgutil
import types

from .._functions import _ATEN

# The Python-written functions, by name.
_PYTHON = {}
for _info in sorted(pkgutil.iter_modules([os.path.dirname(__file__)]), key=lambda info: info.name):
    if _info.name.startswith("_functional_"):
        _module = importlib.import_module(f"{__package__}.{_info.name}")
        _names = getattr(_module, "__all__", None) or [
            name for name, value in vars(_module).items()
            if not name.startswith("_") and callable(value) and getattr(value, "__module__", None) == _module.__name__]
        for _name in _names:
            _PYTHON[_name] = getattr(_module, _name)
globals().update(_PYTHON)
# Those the script compiler takes; callable objects are eager-only
# (_functional_conv's pools with return_indices): scripts call the operator.
_SCRIPTABLE = {name: fn for name, fn in _PYTHON.items() if isinstance(fn, types.FunctionType)}


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
