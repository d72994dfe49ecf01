"""Gradients inside TorchScript (issue 21): torch.autograd.grad and backward,
Tensor.backward, `x.grad`, requires_grad_, retain_grad, detach and the leaf
queries in functions compiled by kiln, against torch 1.13 running the same
source (results, the inputs' .grad afterwards, and raising or not), with
the executor's optimization on and off, several calls each (1.13 optimizes
from its third)."""
import numpy as np
import pytest
import torch

import kiln
from conftest import convert

PROGRAMS = [
    # PyTorch's test_script_autograd_grad.
    ("simple_grad", """
def f(x, y):
    # type: (Tensor, Tensor) -> List[Optional[Tensor]]
    z = x + 2 * y + x * y
    return torch.autograd.grad((z.sum(), ), (x, y))
""", [(2, 2), (2, 2)], [True, True]),
    ("grad_with_grad_outputs", """
def f(x, y):
    # type: (Tensor, Tensor) -> List[Optional[Tensor]]
    z = x + 2 * y + x * y
    grad_outputs = torch.jit.annotate(List[Optional[torch.Tensor]], [torch.ones((2, 2)), ])
    return torch.autograd.grad((z, ), (x, y), grad_outputs)
""", [(2, 2), (2, 2)], [True, True]),
    ("one_output_not_requires_grad", """
def f(x, y):
    # type: (Tensor, Tensor) -> List[Optional[Tensor]]
    z = 2 * y + y
    return torch.autograd.grad((z.sum(),), (x, y), allow_unused=True)
""", [(2, 2), (2, 2)], [True, True]),
    ("unused_without_allow_unused", """
def f(x, y):
    # type: (Tensor, Tensor) -> List[Optional[Tensor]]
    z = 2 * y + y
    return torch.autograd.grad((z.sum(),), (x, y))
""", [(2, 2), (2, 2)], [True, True]),
    ("retain_graph", """
def f(x, y):
    # type: (Tensor, Tensor) -> Tensor
    z = x + 2 * y + x * y
    a = torch.autograd.grad((z.sum(), ), (x, y), retain_graph=True)
    b = torch.autograd.grad((z.sum(), ), (x, y))
    ga = a[0]
    gb = b[1]
    assert ga is not None and gb is not None
    return ga + gb
""", [(2, 2), (2, 2)], [True, True]),
    ("grad_twice_without_retain_graph", """
def f(x):
    z = (x * x.exp()).sum()
    torch.autograd.grad([z], [x])
    return torch.autograd.grad([z], [x])
""", [(3,)], [True]),
    ("grad_of_input_without_requires_grad", """
def f(x, y):
    z = (x * y).sum()
    return torch.autograd.grad([z], [y])
""", [(3,), (3,)], [True, False]),
    ("second_derivative_in_script", """
def f(x):
    y = (x * x * x).sum()
    g = torch.autograd.grad([y], [x], create_graph=True)[0]
    assert g is not None
    h = torch.autograd.grad([g.sum()], [x])[0]
    return g, h
""", [(4,)], [True]),
    ("tensor_backward_and_grad", """
def f(x, w):
    y = torch.tanh(x @ w).sum()
    y.backward()
    return x.grad, w.grad
""", [(2, 3), (3, 4)], [True, True]),
    ("backward_with_gradient", """
def f(x):
    y = x.sin() * 2
    y.backward(torch.ones_like(y) * 3)
    return x.grad
""", [(5,)], [True]),
    ("autograd_backward_list", """
def f(x, y):
    a = (x * y).sum()
    b = (x + y).sum()
    torch.autograd.backward([a, b])
    return x.grad, y.grad
""", [(3,), (3,)], [True, True]),
    ("autograd_backward_grad_tensors", """
def f(x):
    a = x * 2
    torch.autograd.backward([a], [torch.ones_like(a) * 0.5])
    return x.grad
""", [(3,)], [True]),
    ("backward_non_scalar_raises", """
def f(x):
    y = x * 2
    y.backward()
    return x.grad
""", [(3,)], [True]),
    ("backward_twice_raises", """
def f(x):
    y = (x.exp() * x).sum()
    y.backward()
    y.backward()
    return x.grad
""", [(3,)], [True]),
    ("grad_of_tensor_without_grad", """
def f(x):
    return x.grad
""", [(3,)], [False]),
    ("requires_grad_then_backward", """
def f(x):
    y = x.detach().requires_grad_()
    z = (y * y).sum()
    z.backward()
    return y.grad, y.is_leaf, y.requires_grad, z.requires_grad
""", [(3,)], [False]),
    ("requires_grad_off", """
def f(x):
    y = x.detach()
    y.requires_grad_(False)
    return y.requires_grad, x.requires_grad, (x * 2).requires_grad
""", [(3,)], [True]),
    ("detach_stops_gradients", """
def f(x):
    y = x.detach() * x
    y.sum().backward()
    return x.grad, x.detach().requires_grad
""", [(3,)], [True]),
    ("retain_grad", """
def f(x):
    y = x * 3
    y.retain_grad()
    (y * y).sum().backward()
    return y.grad, x.grad, y.retains_grad, y.is_leaf, x.is_leaf
""", [(3,)], [True]),
    ("grad_accumulates", """
def f(x):
    (x * 2).sum().backward()
    (x * 3).sum().backward()
    return x.grad
""", [(3,)], [True]),
    ("grad_in_loop", """
def f(x):
    total = torch.zeros_like(x)
    for i in range(3):
        y = (x * float(i + 1)).pow(2).sum()
        g = torch.autograd.grad([y], [x])[0]
        assert g is not None
        total = total + g
    return total
""", [(3,)], [True]),
]


def _inputs(shapes, requires, lib, seed):
    rng = np.random.default_rng(seed)
    out = []
    for shape, req in zip(shapes, requires):
        t = convert(rng.standard_normal(shape).astype(np.float32), lib)
        if req:
            t.requires_grad_(True)
        out.append(t)
    return out


def _plain(value):
    """Results as numpy arrays / Python values, comparable across libraries."""
    if isinstance(value, torch.Tensor):
        return ("tensor", value.detach().numpy().copy(), value.requires_grad)
    if isinstance(value, kiln.Tensor):
        return ("tensor", value.detach().numpy().copy(), value.requires_grad)
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def _assert_same(k, t, where):
    if isinstance(t, tuple) and t and t[0] == "tensor":
        assert isinstance(k, tuple) and k[0] == "tensor", f"{where}: expected a tensor, got {k!r}"
        np.testing.assert_allclose(k[1], t[1], rtol=1e-5, atol=1e-5, err_msg=where)
        assert k[2] == t[2], f"{where}: requires_grad {k[2]} != torch {t[2]}"
    elif isinstance(t, list):
        assert isinstance(k, list) and len(k) == len(t), f"{where}: {k!r} != {t!r}"
        for i, (a, b) in enumerate(zip(k, t)):
            _assert_same(a, b, f"{where}[{i}]")
    else:
        assert k == t, f"{where}: {k!r} != torch {t!r}"


def _run(fn, shapes, requires, lib, seed):
    args = _inputs(shapes, requires, lib, seed)
    try:
        result = _plain(fn(*args))
    except Exception as e:  # noqa: BLE001 - compared below
        return e, None
    grads = [None if a.grad is None else _plain(a.grad) for a in args]
    return result, grads


@pytest.fixture(params=[True, False], ids=["optimized", "plain"])
def optimize(request):
    saved = kiln._C._get_graph_executor_optimize()
    kiln._C._set_graph_executor_optimize(request.param)
    yield request.param
    kiln._C._set_graph_executor_optimize(saved)


@pytest.mark.parametrize("name,src,shapes,requires", PROGRAMS, ids=[p[0] for p in PROGRAMS])
def test_matches_torch(name, src, shapes, requires, optimize):
    try:
        torch_fn = torch.jit.CompilationUnit(src, _frames_up=0).f
    except Exception:  # noqa: BLE001 - then kiln must reject it too
        with pytest.raises(Exception):
            kiln.compile(src)
        return
    kiln_fn = kiln.compile(src).f
    for call in range(3):
        expected, expected_grads = _run(torch_fn, shapes, requires, "torch", call)
        got, got_grads = _run(kiln_fn, shapes, requires, "kiln", call)
        if isinstance(expected, Exception):
            assert isinstance(got, Exception), f"torch raised {expected!r}, kiln returned {got!r}"
            continue
        if isinstance(got, Exception):
            raise got
        _assert_same(got, expected, f"call {call} result")
        for i, (g, e) in enumerate(zip(got_grads, expected_grads)):
            assert (g is None) == (e is None), f"call {call}: .grad of input {i}: {g!r} vs torch {e!r}"
            if e is not None:
                _assert_same(g, e, f"call {call}: .grad of input {i}")


def test_error_messages_are_torchs():
    src = """
def f(x):
    y = x * 2
    y.backward()
    return x
"""
    with pytest.raises(Exception, match="grad can be implicitly created only for scalar outputs"):
        kiln.compile(src).f(kiln.ones(3).requires_grad_())
    src = """
def f(x, y):
    return torch.autograd.grad([(x * 2).sum()], [x, y])
"""
    x, y = kiln.ones(3).requires_grad_(), kiln.ones(3).requires_grad_()
    with pytest.raises(Exception, match="appears to not have been used in the graph"):
        kiln.compile(src).f(x, y)


def test_graph_keeps_backward_and_grad():
    """aten::backward has no outputs and prim::grad reads what it wrote: the
    optimizer must keep both, in order."""
    src = """
def f(x):
    a = x.grad
    (x * x).sum().backward()
    b = x.grad
    return a, b
"""
    fn = kiln.compile(src).f
    x = kiln.ones(2).requires_grad_()
    for _ in range(3):
        x.grad = None
        a, b = fn(x)
        assert a is None
        np.testing.assert_allclose(b.numpy(), [2.0, 2.0])
