"""kiln.nn.functional: the functional forms, from the operator registry, and
the functions torch.nn.functional writes in Python (F.batch_norm's argument
order is not aten::batch_norm's, F.interpolate is a whole program), which
kiln writes as scriptable Python in kiln/nn/_functional_<area>.py.

Every module of that name is found here: its functions (those in `__all__`,
else every public function it defines) win over
same-named operators, eagerly and in scripts (the script compiler asks _script_function what `F.<name>` means when F is
torch.nn.functional or kiln.nn.functional)."""
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


def _script_function(name):
    """The compiled function that `F.<name>` means in script code, or None
    (then it is the operator of that name)."""
    fn = _PYTHON.get(name)
    if not isinstance(fn, types.FunctionType):
        # Absent, or eager-only (a callable object, _functional_conv's pools
        # with return_indices): the operator of that name.
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
