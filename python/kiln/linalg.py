"""kiln.linalg, as torch.linalg: `kiln.linalg.name` is the operator aten::linalg_name
(in TorchScript too, where `torch.linalg.inv(A)` compiles to aten::linalg_inv)."""
from ._functions import _ATEN, _make_function

_PREFIX = "linalg_"

for _name, _dispatcher in _ATEN.items():
    if _name.startswith(_PREFIX):
        globals()[_name[len(_PREFIX):]] = _make_function(_dispatcher)

del _name, _dispatcher
