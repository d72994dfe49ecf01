"""Module-level functions generated from the operator registry."""
from . import _C

_ATEN = _C._operators("aten")


def op(name):
    """The dispatcher for aten::<name> (all overloads)."""
    return _ATEN[name]


def _make_function(dispatcher):
    def function(*args, **kwargs):
        # torch's Python factories take requires_grad=, which no schema has.
        requires_grad = kwargs.pop("requires_grad", False)
        result = dispatcher(*args, **kwargs)
        if requires_grad:
            result.requires_grad_(True)
        return result

    function.__name__ = dispatcher.name
    function.__qualname__ = dispatcher.name
    function.__doc__ = "\n".join(dispatcher.signatures)
    return function


def install(namespace):
    """Adds every aten operator as a function of `namespace` (kiln's globals)."""
    for name, dispatcher in _ATEN.items():
        if name.startswith("_") or name in namespace:
            continue
        namespace[name] = _make_function(dispatcher)
