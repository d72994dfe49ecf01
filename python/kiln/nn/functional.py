"""kiln.nn.functional: the functional forms, from the operator registry."""
import types

from .._functions import _ATEN
# Python functions where torch.nn.functional's signature is not the aten operator's.
from ._functional_loss import (binary_cross_entropy, binary_cross_entropy_with_logits, cross_entropy,  # noqa: F401
                               huber_loss, kl_div, l1_loss, mse_loss, nll_loss, smooth_l1_loss)
from ._functional_norm import batch_norm, group_norm, instance_norm  # noqa: F401
from ._functional_sparse import embedding, embedding_bag  # noqa: F401


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


_FUNCTIONAL_MODULES = ("torch.nn.functional", "kiln.nn.functional")


def _functional_override(module, name):
    """What `F.<name>` means in script code when F is torch.nn.functional or
    kiln.nn.functional: one of kiln's Python functions (the script compiler
    asks, and compiles it), or None for the aten operator."""
    if module not in _FUNCTIONAL_MODULES:
        return None
    fn = globals().get(name)
    if not isinstance(fn, types.FunctionType) or not fn.__module__.startswith("kiln.nn._functional"):
        return None
    return fn
