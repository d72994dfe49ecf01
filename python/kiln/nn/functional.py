"""kiln.nn.functional: the functional forms, from the operator registry, and
the functions torch.nn.functional writes in Python (F.batch_norm's argument
order is not aten::batch_norm's, F.interpolate is a whole program), which
kiln writes as scriptable Python in kiln/nn/_functional_<area>.py.

Every module of that name is found here: each lists its functions in
`__all__`, and they win over same-named operators, eagerly and in scripts
(the script compiler asks _script_function what `F.<name>` means when F is
torch.nn.functional or kiln.nn.functional)."""
import importlib
import os
import pkgutil

from .._functions import _ATEN
from ._functional_dropout import (dropout, alpha_dropout, feature_alpha_dropout, dropout1d, dropout2d,  # noqa: F401
                                  dropout3d, layer_norm)
from ._functional_attention import multi_head_attention_forward  # noqa: F401

# The Python-written functions, by name.
_PYTHON = {}
for _info in sorted(pkgutil.iter_modules([os.path.dirname(__file__)]), key=lambda info: info.name):
    if _info.name.startswith("_functional_"):
        _module = importlib.import_module(f"{__package__}.{_info.name}")
        for _name in _module.__all__:
            _PYTHON[_name] = getattr(_module, _name)
globals().update(_PYTHON)


def _script_function(name):
    """The compiled function that `F.<name>` means in script code, or None
    (then it is the operator of that name)."""
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
