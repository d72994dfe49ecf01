"""kiln.nn.Parameter: a tensor that a Module registers as one of its parameters."""
from .. import _C
from .. import _functions


class Parameter(_C.Tensor):
    """A kiln.Tensor marked as a module parameter, as torch.nn.Parameter.

    Assigning a Parameter to a Module attribute registers it (it appears in
    parameters() and state_dict()). `Parameter(t)` aliases `t`: both name the
    same tensor, so in-place changes through either are seen by both (torch
    shares the storage the same way). `requires_grad` (True by default) makes
    it a leaf that accumulates gradients in `.grad`, and is written to
    archives and state dicts (torch.jit.load sees it)."""

    def __init__(self, data=None, requires_grad=True):
        if data is None:
            data = _functions.op("empty")(0)
        if not isinstance(data, _C.Tensor):
            raise TypeError(f"Parameter: expected a kiln.Tensor, got {type(data).__name__}")
        super().__init__(data)
        self.requires_grad = requires_grad

    def __repr__(self):
        return "Parameter containing:\n" + super().__repr__()

    __str__ = __repr__
