"""The variadic forms torch.functional writes in Python over one operator
each: torch.meshgrid(a, b, indexing=...), torch.einsum(equation, a, b) and
its sublist form, torch.cartesian_prod(a, b), torch.block_diag(a, b) and
torch.chain_matmul(a, b). The operators take one list (as scripts call them);
these accept either."""
import warnings

from ._functions import op


def _tensors(args):
    """f(a, b) and f([a, b]) alike."""
    if len(args) == 1 and isinstance(args[0], (list, tuple)):
        return list(args[0])
    return list(args)


def meshgrid(*tensors, indexing=None):
    if indexing is None:
        warnings.warn("torch.meshgrid: in an upcoming release, it will be required to pass the indexing argument.")
        indexing = "ij"
    return tuple(op("meshgrid")(_tensors(tensors), indexing=indexing))


def _subscript(n):
    if n is Ellipsis:
        return "..."
    if 0 <= n < 26:
        return chr(ord("A") + n)
    if 26 <= n < 52:
        return chr(ord("a") + n - 26)
    raise ValueError("einsum(): subscript in subscript list is not within the valid range [0, 52)")


def einsum(*args):
    if len(args) < 2:
        raise ValueError("einsum(): must specify the equation string and at least one operand, "
                         "or at least one operand and its subscripts list")
    if isinstance(args[0], str):
        return op("einsum")(args[0], _tensors(args[1:]))
    # The sublist form: einsum(a, [0, 1], b, [1, 2], [0, 2]) is einsum("AB,BC->AC", a, b).
    operands = list(args[0::2])
    sublists = list(args[1::2])
    output = None
    if len(args) % 2 == 1:
        output = operands.pop()
    equation = ",".join("".join(_subscript(n) for n in sublist) for sublist in sublists)
    if output is not None:
        equation += "->" + "".join(_subscript(n) for n in output)
    return op("einsum")(equation, operands)


def cartesian_prod(*tensors):
    return op("cartesian_prod")(_tensors(tensors))


def block_diag(*tensors):
    return op("block_diag")(_tensors(tensors))


def chain_matmul(*matrices, out=None):
    if out is None:
        return op("chain_matmul")(_tensors(matrices))
    return op("chain_matmul")(_tensors(matrices), out=out)
