"""kiln.autograd.Function: operations with a backward written in Python, as
torch.autograd.Function.

    class Exp(kiln.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            y = x.exp()
            ctx.save_for_backward(y)
            return y

        @staticmethod
        def backward(ctx, grad):
            y, = ctx.saved_tensors
            return grad * y

    y = Exp.apply(x)

forward runs without recording; when an input requires grad, the outputs
get one backward node (named `ExpBackward`, in C++: python/src/autograd.cpp)
whose backward calls the class's `backward` on the thread that runs the
engine. Gradients for inputs are checked and shaped as torch checks them."""
import functools

from . import _C
from ._grad_mode import is_grad_enabled, no_grad


class FunctionCtx:
    """The `ctx` passed to forward and backward: what forward leaves for backward."""

    def save_for_backward(self, *tensors):
        """Keeps tensors for backward (`ctx.saved_tensors`), checked there for in-place changes."""
        for t in tensors:
            if t is not None and not isinstance(t, _C.Tensor):
                raise TypeError("save_for_backward can only save variables, but argument "
                                f"{tensors.index(t)} is of type {type(t).__name__}")
        self._to_save = tensors

    def mark_dirty(self, *tensors):
        """Declares inputs that forward modified in place (they must be returned as outputs)."""
        self._dirty = tensors

    def mark_non_differentiable(self, *tensors):
        """Declares outputs that get no gradient (they do not require grad)."""
        self._non_differentiable = tensors

    def set_materialize_grads(self, value):
        """Whether backward sees zeros (True, the default) or None for outputs that got no gradient."""
        self._materialize_grads = bool(value)

    @property
    def saved_tensors(self):
        saved = self.__dict__.get("_saved")
        if saved is None:
            raise RuntimeError("saved_tensors is only available in backward (save them with save_for_backward)")
        return saved


class _FunctionMeta(type):
    def __init__(cls, name, bases, attrs):
        super().__init__(name, bases, attrs)
        cls._backward_name = name + "Backward"  # torch's name for the node


class Function(metaclass=_FunctionMeta):
    """Subclass with static `forward(ctx, *args)` and `backward(ctx, *grads)`; call `apply(*args)`."""

    @staticmethod
    def forward(ctx, *args, **kwargs):
        raise NotImplementedError("You must implement the forward function for custom autograd.Function.")

    @staticmethod
    def backward(ctx, *grad_outputs):
        raise NotImplementedError("You must implement either the backward or vjp method for your custom "
                                  "autograd.Function to use it with backward mode AD.")

    @classmethod
    def apply(cls, *args):
        ctx = FunctionCtx()
        grad_on = is_grad_enabled()
        tensor_positions = [i for i, a in enumerate(args) if isinstance(a, _C.Tensor)]
        ctx.needs_input_grad = tuple(grad_on and isinstance(a, _C.Tensor) and a.requires_grad for a in args)
        with no_grad():
            outputs = cls.forward(ctx, *args)
        if not any(ctx.needs_input_grad):
            return outputs
        single = not isinstance(outputs, tuple)
        outs = (outputs,) if single else outputs
        inputs = [args[i] if ctx.needs_input_grad[i] else None for i in tensor_positions]
        name = cls._backward_name
        materialize = ctx.__dict__.get("_materialize_grads", True)
        # What backward's checks need of the arguments, without keeping the tensors alive.
        arg_meta = [(list(a.shape), a.dtype) if isinstance(a, _C.Tensor) else None for a in args]

        def run_backward(grads, saved):
            ctx._saved = saved
            try:
                result = cls.backward(ctx, *grads)
            finally:
                del ctx._saved
            return _check_gradients(name, result, arg_meta, tensor_positions)

        node = _C._FunctionNode(name, run_backward)
        recorded = _C._record_function(
            node, inputs, [o if isinstance(o, _C.Tensor) else None for o in outs],
            ctx.__dict__.get("_to_save", ()), ctx.__dict__.get("_dirty", ()),
            ctx.__dict__.get("_non_differentiable", ()), materialize)
        outs = tuple(r if isinstance(o, _C.Tensor) else o for r, o in zip(recorded, outs))
        return outs[0] if single else outs


def _check_gradients(name, result, args, tensor_positions):
    """backward's result as one gradient per tensor input, checked as torch checks it; `args` holds
    (shape, dtype) for each tensor argument and None for the others."""
    if not isinstance(result, tuple):
        result = (result,)
    if len(result) != len(args):
        if len(result) > len(args) and all(g is None for g in result[len(args):]):
            result = result[:len(args)]
        else:
            raise RuntimeError(f"function {name} returned an incorrect number of gradients "
                               f"(expected {len(args)}, got {len(result)})")
    for i, g in enumerate(result):
        if g is not None and args[i] is None:
            raise RuntimeError(f"function {name} returned a gradient different than None at position {i + 1}, "
                               "but the corresponding forward input was not a Variable")
    grads = []
    for i in tensor_positions:
        g = result[i]
        if g is not None:
            g = _shaped_like(name, i, g, args[i])
        grads.append(g)
    return grads


def _shaped_like(name, index, grad, input):
    """torch's validate_outputs: a broadcastable gradient is summed to the input's shape, dtype cast
    (`input` is the input's (shape, dtype))."""
    if not isinstance(grad, _C.Tensor):
        raise TypeError(f"function {name} returned a gradient of type {type(grad).__name__} at index {index}, "
                        "expected a Tensor or None")
    target, dtype = input
    shape = list(grad.shape)
    if shape != target:
        lead = len(shape) - len(target)
        compatible = lead >= 0 and all(s == t or t == 1 for s, t in zip(shape[lead:], target))
        if not compatible:
            raise RuntimeError(f"Function {name} returned an invalid gradient at index {index} - got {shape} but "
                               f"expected shape compatible with {target}")
        if lead:
            grad = grad.sum(list(range(lead)))
        ones = [d for d, (s, t) in enumerate(zip(shape[lead:], target)) if t == 1 and s != 1]
        if ones:
            grad = grad.sum(ones, keepdim=True)
    if grad.dtype != dtype:
        grad = grad.to(dtype)
    return grad


def once_differentiable(backward):
    """Marks a backward that is not itself differentiable: it runs without
    recording, and differentiating its result (create_graph) raises."""

    @functools.wraps(backward)
    def wrapper(ctx, *grads):
        with no_grad():
            result = backward(ctx, *grads)
        if not is_grad_enabled() or not any(isinstance(g, _C.Tensor) and g.requires_grad for g in grads):
            return result
        single = not isinstance(result, tuple)
        outs = (result,) if single else result

        def refuse(grads, saved):
            raise RuntimeError("trying to differentiate twice a function that was marked with @once_differentiable")

        node = _C._FunctionNode("DelayedError", refuse)
        wrapped = _C._record_function(node, [g for g in grads if isinstance(g, _C.Tensor) and g.requires_grad],
                                      [o if isinstance(o, _C.Tensor) else None for o in outs], (), (), (), True)
        outs = tuple(w if isinstance(o, _C.Tensor) else o for w, o in zip(wrapped, outs))
        return outs[0] if single else outs

    return wrapper
