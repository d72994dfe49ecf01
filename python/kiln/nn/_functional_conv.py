"""torch.nn.functional's pooling functions that are Python functions in
torch (not bare aten builtins): the max pools with `return_indices`, the
adaptive pools (None in output_size keeps the input's size). In TorchScript
these names resolve to the aten operators, as kiln.nn's layers call them:
the functions are callable objects rather than Python functions, so a
script compiler that compiles kiln.nn.functional's Python functions leaves
them to the builtins (return_indices changes their result type, which
torch resolves with its boolean_dispatch)."""
from .. import _functions


class _Eager:
    """A function of kiln.nn.functional that runs eagerly only."""

    def __init__(self, name, fn):
        self.__name__ = self.__qualname__ = name
        self._fn = fn

    def __call__(self, *args, **kwargs):
        return self._fn(*args, **kwargs)

    def __repr__(self):
        return f"<function kiln.nn.functional.{self.__name__}>"


def _stride(stride):
    return [] if stride is None else stride


def _max_pool(name):
    plain, with_indices = _functions.op(name), _functions.op(name + "_with_indices")

    def max_pool(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
        args = (input, kernel_size, _stride(stride), padding, dilation, ceil_mode)
        return with_indices(*args) if return_indices else plain(*args)

    def max_pool_with_indices(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
                              return_indices=False):
        return with_indices(input, kernel_size, _stride(stride), padding, dilation, ceil_mode)

    return _Eager(name, max_pool), _Eager(name + "_with_indices", max_pool_with_indices)


max_pool1d, max_pool1d_with_indices = _max_pool("max_pool1d")
max_pool2d, max_pool2d_with_indices = _max_pool("max_pool2d")
max_pool3d, max_pool3d_with_indices = _max_pool("max_pool3d")


def _with_default(output_size, input, spatial):
    """torch's _list_with_default: None entries take the input's size."""
    if isinstance(output_size, int):
        return [output_size] * spatial
    sizes = list(output_size)
    if len(sizes) == 1 and spatial > 1:
        sizes = sizes * spatial
    shape = input.shape
    return [shape[len(shape) - len(sizes) + i] if s is None else s for i, s in enumerate(sizes)]


def _adaptive_avg(name, spatial):
    aten = _functions.op(name)

    def adaptive_avg_pool(input, output_size):
        return aten(input, _with_default(output_size, input, spatial))

    return _Eager(name, adaptive_avg_pool)


adaptive_avg_pool1d = _adaptive_avg("adaptive_avg_pool1d", 1)
adaptive_avg_pool2d = _adaptive_avg("adaptive_avg_pool2d", 2)
adaptive_avg_pool3d = _adaptive_avg("adaptive_avg_pool3d", 3)


def _adaptive_max(name, spatial):
    aten = _functions.op(name)

    def adaptive_max_pool(input, output_size, return_indices=False):
        result = aten(input, _with_default(output_size, input, spatial))
        return result if return_indices else result[0]

    def adaptive_max_pool_with_indices(input, output_size, return_indices=False):
        return aten(input, _with_default(output_size, input, spatial))

    return _Eager(name, adaptive_max_pool), _Eager(name + "_with_indices", adaptive_max_pool_with_indices)


adaptive_max_pool1d, adaptive_max_pool1d_with_indices = _adaptive_max("adaptive_max_pool1d", 1)
adaptive_max_pool2d, adaptive_max_pool2d_with_indices = _adaptive_max("adaptive_max_pool2d", 2)
adaptive_max_pool3d, adaptive_max_pool3d_with_indices = _adaptive_max("adaptive_max_pool3d", 3)

__all__ = [
    "max_pool1d", "max_pool2d", "max_pool3d",
    "max_pool1d_with_indices", "max_pool2d_with_indices", "max_pool3d_with_indices",
    "adaptive_avg_pool1d", "adaptive_avg_pool2d", "adaptive_avg_pool3d",
    "adaptive_max_pool1d", "adaptive_max_pool2d", "adaptive_max_pool3d",
    "adaptive_max_pool1d_with_indices", "adaptive_max_pool2d_with_indices", "adaptive_max_pool3d_with_indices",
]
