"""kiln.linalg: torch.linalg's functions, the operators aten::linalg_<name>
(kiln.linalg.cross is aten::linalg_cross), as scripts name them too."""
from ._functions import _ATEN, _make_function


def __getattr__(name):
    # Resolved lazily, as kiln.nn.functional's operators are.
    if "linalg_" + name in _ATEN:
        return _make_function(_ATEN["linalg_" + name])
    raise AttributeError(f"module 'kiln.linalg' has no attribute '{name}'")
