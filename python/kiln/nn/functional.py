"""kiln.nn.functional: the functional forms, from the operator registry."""
from .._functions import _ATEN
from ._functional_conv import *  # noqa: F401,F403  (torch's Python-level pooling functions)


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
