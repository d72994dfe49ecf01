"""kiln.nn.functional: the functional forms, from the operator registry."""
from .._functions import _ATEN
from ._functional_dropout import (dropout, alpha_dropout, feature_alpha_dropout, dropout1d, dropout2d,  # noqa: F401
                                  dropout3d, layer_norm)
from ._functional_attention import multi_head_attention_forward  # noqa: F401


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
