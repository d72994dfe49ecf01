"""Second derivatives (create_graph=True) against torch 1.13's double
backward: with create_graph the backward formulas run with grad mode on, so
their operations record and the gradients have a history of their own."""
import numpy as np
import pytest
import torch

import kiln
from autograd_check import arrays, to_numpy

# name: (function of (lib, *inputs) returning a tensor, input shapes, positive inputs)
PROGRAMS = {
    "mul": (lambda m, a, b: a * b * a, [(3, 4), (4,)], False),
    "div": (lambda m, a, b: a / b, [(3, 4), (3, 4)], True),
    "exp": (lambda m, a: a.exp(), [(3, 4)], False),
    "log": (lambda m, a: a.log(), [(3, 4)], True),
    "sin": (lambda m, a: a.sin(), [(3, 4)], False),
    "tanh": (lambda m, a: a.tanh(), [(3, 4)], False),
    "sigmoid": (lambda m, a: a.sigmoid(), [(3, 4)], False),
    "pow_scalar": (lambda m, a: a ** 3, [(3, 4)], False),
    "pow_tensor": (lambda m, a, b: a.pow(b), [(3, 4), (3, 4)], True),
    "matmul": (lambda m, a, b: a.matmul(b), [(3, 4), (4, 5)], False),
    "softmax": (lambda m, a: a.softmax(-1), [(3, 4)], False),
    "log_softmax": (lambda m, a: a.log_softmax(1), [(3, 4)], False),
    "sum": (lambda m, a: (a * a).sum(0), [(3, 4)], False),
    "mean": (lambda m, a: (a * a).mean(), [(3, 4)], False),
    "chain": (lambda m, a, b: (a.sin() * b.exp()).tanh(), [(3, 4), (3, 1)], False),
}


def _second(lib, fn, values, v, w):
    """d/dx <w, d/dx <v, f(x)>> through autograd.grad(create_graph=True) then grad again."""
    xs = [lib.from_numpy(a.copy()).requires_grad_(True) for a in values]
    out = fn(lib, *xs)
    firsts = lib.autograd.grad([out], xs, [lib.from_numpy(v.copy())], create_graph=True)
    assert all(g.requires_grad for g in firsts)
    total = sum((g * lib.from_numpy(wi.copy())).sum() for g, wi in zip(firsts, w))
    seconds = lib.autograd.grad([total], xs, allow_unused=True)
    return [to_numpy(g) for g in firsts], [None if g is None else to_numpy(g) for g in seconds]


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_double_backward_matches_torch(name):
    fn, shapes, positive = PROGRAMS[name]
    values = arrays(shapes, positive, dtype=np.float64)
    with torch.no_grad():
        out_shape = tuple(fn(torch, *[torch.from_numpy(a) for a in values]).shape)
    rng = np.random.default_rng(5)
    v = rng.standard_normal(out_shape)
    w = [rng.standard_normal(a.shape) for a in values]
    t_first, t_second = _second(torch, fn, values, v, w)
    k_first, k_second = _second(kiln, fn, values, v, w)
    for k, t in zip(k_first, t_first):
        np.testing.assert_allclose(k, t, rtol=1e-7, atol=1e-9)
    for k, t in zip(k_second, t_second):
        assert (k is None) == (t is None)
        if t is not None:
            np.testing.assert_allclose(k, t, rtol=1e-7, atol=1e-9)


@pytest.mark.filterwarnings("ignore:Using backward")
def test_backward_create_graph_leaves_grad_with_history():
    for lib in (kiln, torch):
        x = lib.tensor([0.5, -1.0, 2.0], dtype=lib.float64, requires_grad=True)
        (x ** 3).sum().backward(create_graph=True)
        assert x.grad.requires_grad
        g = x.grad
        x.grad = None
        g.sum().backward()
        np.testing.assert_allclose(to_numpy(x.grad), 6 * np.array([0.5, -1.0, 2.0]))


def test_grad_without_create_graph_has_no_history():
    x = kiln.tensor([1.0, 2.0], requires_grad=True)
    (g,) = kiln.autograd.grad([(x * x).sum()], [x])
    assert not g.requires_grad and g.grad_fn is None


def test_third_derivative():
    for lib in (kiln, torch):
        x = lib.tensor([0.3, 1.2], dtype=lib.float64, requires_grad=True)
        (g1,) = lib.autograd.grad([x.sin().sum()], [x], create_graph=True)
        (g2,) = lib.autograd.grad([g1.sum()], [x], create_graph=True)
        (g3,) = lib.autograd.grad([g2.sum()], [x])
        np.testing.assert_allclose(to_numpy(g3), -np.cos([0.3, 1.2]))
