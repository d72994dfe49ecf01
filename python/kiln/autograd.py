"""kiln.autograd: gradients of eager tensor computations, as torch.autograd.

Operations on tensors that require grad record a graph of grad_fn nodes (in
C++, kiln/autograd); `backward` adds gradients into the leaves' `.grad`,
`grad` returns them. Each operator's derivative is one formula in its
declaration."""
from . import _C
from ._grad_mode import no_grad, enable_grad, set_grad_enabled, is_grad_enabled  # noqa: F401
from ._autograd_function import Function, FunctionCtx, once_differentiable  # noqa: F401


def _as_tuple(value):
    if value is None:
        return None
    if isinstance(value, _C.Tensor):
        return (value,)
    return tuple(value)


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False, grad_variables=None, inputs=None):
    """Adds the gradients of `tensors` (weighted by `grad_tensors`) into the leaves' `.grad`."""
    if grad_tensors is None:
        grad_tensors = grad_variables
    tensors = _as_tuple(tensors)
    grad_tensors = _as_tuple(grad_tensors)
    if grad_tensors is not None and len(grad_tensors) != len(tensors):
        raise RuntimeError(f"grad_tensors has {len(grad_tensors)} elements, but tensors has {len(tensors)}")
    _C._autograd_backward(tensors, grad_tensors, retain_graph, create_graph, _as_tuple(inputs))


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False, only_inputs=True,
         allow_unused=False, is_grads_batched=False):
    """The gradients of `outputs` with respect to `inputs`, as a tuple (None for an unused input
    when `allow_unused`)."""
    outputs = _as_tuple(outputs)
    inputs = _as_tuple(inputs)
    grad_outputs = _as_tuple(grad_outputs)
    if grad_outputs is not None and len(grad_outputs) != len(outputs):
        raise RuntimeError(f"grad_outputs has {len(grad_outputs)} elements, but outputs has {len(outputs)}")
    return _C._autograd_grad(outputs, inputs, grad_outputs, retain_graph, create_graph, allow_unused)


def _zero_grads(params, set_to_none=False):
    """Zeroes each parameter's .grad in place, or sets it to None, as torch
    1.13's Module.zero_grad and Optimizer.zero_grad do (a .grad made by
    create_graph is detached first)."""
    for p in params:
        grad = p.grad
        if grad is None:
            continue
        if set_to_none:
            p.grad = None
            continue
        if grad.grad_fn is not None:
            grad.detach_()
        elif grad.requires_grad:
            grad.requires_grad_(False)
        grad.zero_()
