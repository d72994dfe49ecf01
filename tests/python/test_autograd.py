"""Eager autograd (kiln/autograd) against torch 1.13: the gradients of every
operator with a derivative formula on random inputs (broadcasting,
non-contiguous inputs, in-place forms), a float64 finite-difference
gradcheck of each formula, and the engine's semantics: accumulation,
retain_graph, autograd.grad, hooks, retain_grad, detach, grad_fn names and
torch's error messages."""
import numpy as np
import pytest
import torch

import kiln
from autograd_check import (arrays as _arrays, assert_gradients_match_torch, away_from_kinks, gradcheck,
                            run_backward as _run, to_numpy as _np)

# name: (function of (lib, *inputs), input shapes, positive inputs)
OPS = {
    "add": (lambda m, a, b: a + b, [(3, 4), (4,)], False),
    "add_alpha": (lambda m, a, b: m.add(a, b, alpha=2.5), [(3, 4), (3, 1)], False),
    "add_scalar": (lambda m, a: a + 2.0, [(3, 4)], False),
    "sub": (lambda m, a, b: a - b, [(2, 3, 4), (3, 1)], False),
    "sub_alpha": (lambda m, a, b: m.sub(a, b, alpha=0.5), [(3, 4), (3, 4)], False),
    "rsub_scalar": (lambda m, a: 2.0 - a, [(3, 4)], False),
    "mul": (lambda m, a, b: a * b, [(3, 4), (1, 4)], False),
    "mul_scalar": (lambda m, a: a * 3.0, [(3, 4)], False),
    "div": (lambda m, a, b: a / b, [(3, 4), (4,)], True),
    "div_scalar": (lambda m, a: a / 4.0, [(3, 4)], False),
    "neg": (lambda m, a: -a, [(3, 4)], False),
    "pow_scalar": (lambda m, a: a ** 3, [(3, 4)], False),
    "pow_tensor": (lambda m, a, b: a.pow(b), [(3, 4), (3, 4)], True),
    "exp": (lambda m, a: a.exp(), [(3, 4)], False),
    "log": (lambda m, a: a.log(), [(3, 4)], True),
    "sin": (lambda m, a: a.sin(), [(3, 4)], False),
    "cos": (lambda m, a: a.cos(), [(3, 4)], False),
    "tanh": (lambda m, a: a.tanh(), [(3, 4)], False),
    "sigmoid": (lambda m, a: a.sigmoid(), [(3, 4)], False),
    "relu": (lambda m, a: a.relu(), [(3, 4)], False),
    "sqrt": (lambda m, a: a.sqrt(), [(3, 4)], True),
    "abs": (lambda m, a: a.abs(), [(3, 4)], False),
    "sum": (lambda m, a: a.sum(), [(3, 4)], False),
    "sum_dim": (lambda m, a: a.sum(1), [(3, 4, 2)], False),
    "sum_dims_keepdim": (lambda m, a: a.sum([0, -1], keepdim=True), [(3, 4, 2)], False),
    "mean": (lambda m, a: a.mean(), [(3, 4)], False),
    "mean_dim": (lambda m, a: a.mean(-2), [(3, 4, 2)], False),
    "mm": (lambda m, a, b: a.mm(b), [(3, 4), (4, 5)], False),
    "matmul": (lambda m, a, b: a.matmul(b), [(3, 4), (4, 5)], False),
    "matmul_batched": (lambda m, a, b: a.matmul(b), [(2, 3, 4), (4, 5)], False),
    "matmul_vec": (lambda m, a, b: a.matmul(b), [(3, 4), (4,)], False),
    "matmul_dot": (lambda m, a, b: a.matmul(b), [(4,), (4,)], False),
    "bmm": (lambda m, a, b: a.bmm(b), [(2, 3, 4), (2, 4, 5)], False),
    "addmm": (lambda m, c, a, b: m.addmm(c, a, b), [(5,), (3, 4), (4, 5)], False),
    "addmm_scaled": (lambda m, c, a, b: m.addmm(c, a, b, beta=0.5, alpha=2.0), [(3, 5), (3, 4), (4, 5)], False),
    "linear": (lambda m, x, w, b: m.nn.functional.linear(x, w, b), [(2, 3, 4), (5, 4), (5,)], False),
    "linear_nobias": (lambda m, x, w: m.nn.functional.linear(x, w), [(3, 4), (5, 4)], False),
    "t": (lambda m, a: a.t() * 1.0, [(3, 4)], False),
    "transpose": (lambda m, a: a.transpose(0, 2), [(2, 3, 4)], False),
    "view": (lambda m, a: a.contiguous().view(4, 3), [(3, 4)], False),
    "reshape": (lambda m, a: a.reshape(2, 6), [(3, 4)], False),
    "expand": (lambda m, a: a.expand(2, 3, 4), [(3, 1)], False),
    "permute": (lambda m, a: a.permute(2, 0, 1), [(2, 3, 4)], False),
    "squeeze": (lambda m, a: a.squeeze(), [(3, 1, 4)], False),
    "squeeze_dim": (lambda m, a: a.squeeze(1), [(3, 1, 4)], False),
    "unsqueeze": (lambda m, a: a.unsqueeze(-1), [(3, 4)], False),
    "select": (lambda m, a: a[1], [(3, 4)], False),
    "select_dim": (lambda m, a: a.select(1, -1), [(3, 4)], False),
    "slice": (lambda m, a: a[1:3], [(4, 4)], False),
    "slice_step": (lambda m, a: a[:, ::2], [(3, 5)], False),
    "index": (lambda m, a: a[m.tensor([0, 2, 2])], [(3, 4)], False),
    "cat": (lambda m, a, b: m.cat([a, b], 1), [(3, 2), (3, 4)], False),
    "stack": (lambda m, a, b: m.stack([a, b], -1), [(3, 4), (3, 4)], False),
    "chunk": (lambda m, a: a.chunk(2, 1)[1], [(3, 4)], False),
    "chunk_both": (lambda m, a: (lambda c: c[0] * 2.0 + c[1])(a.chunk(2, 0)), [(4, 3)], False),
    "unbind": (lambda m, a: a.unbind(1)[2], [(3, 4)], False),
    "split": (lambda m, a: a.split([1, 3], 1)[1], [(3, 4)], False),
    "flatten": (lambda m, a: a.flatten(), [(2, 3, 4)], False),
    "softmax": (lambda m, a: a.softmax(1), [(3, 4)], False),
    "log_softmax": (lambda m, a: a.log_softmax(-1), [(3, 4)], False),
    "max": (lambda m, a: a.max(), [(3, 4)], False),
    "min": (lambda m, a: a.min(), [(3, 4)], False),
    "max_dim": (lambda m, a: a.max(1)[0], [(3, 4)], False),
    "max_dim_keepdim": (lambda m, a: a.max(0, keepdim=True)[0], [(3, 4)], False),
    "min_dim": (lambda m, a: a.min(1)[0], [(3, 4)], False),
    "maximum": (lambda m, a, b: m.maximum(a, b), [(3, 4), (3, 4)], False),
    "clamp": (lambda m, a: a.clamp(-0.5, 0.5), [(3, 4)], False),
    "clamp_min": (lambda m, a: a.clamp(min=0.1), [(3, 4)], False),
    "where": (lambda m, a, b: m.where(a > 0, a, b), [(3, 4), (3, 4)], False),
    "contiguous": (lambda m, a: a.t().contiguous(), [(3, 4)], False),
    "clone": (lambda m, a: a.clone(), [(3, 4)], False),
    "to_double": (lambda m, a: a.double() * 2.0, [(3, 4)], False),
    "chain": (lambda m, a, b: ((a * b).sin() + a.exp()).sum(0).tanh(), [(3, 4), (3, 4)], False),
}


@pytest.mark.parametrize("noncontiguous", [False, True], ids=["contiguous", "noncontiguous"])
@pytest.mark.parametrize("name", sorted(OPS))
def test_gradients_match_torch(name, noncontiguous):
    fn, shapes, positive = OPS[name]
    assert_gradients_match_torch(fn, _arrays(shapes, positive), noncontiguous)


# Ops whose derivative is not defined at every point (kinks, ties) get inputs away from those points.
_KINKED = {"relu", "abs", "max", "min", "max_dim", "max_dim_keepdim", "min_dim", "maximum", "clamp", "clamp_min",
           "where"}


@pytest.mark.parametrize("name", sorted(OPS))
def test_gradcheck_float64(name):
    fn, shapes, positive = OPS[name]
    values = _arrays(shapes, positive, dtype=np.float64)
    if name in _KINKED:
        values = away_from_kinks(values)
    gradcheck(fn, values)


# ----- in-place operations -----

def _inplace_program(m, a, b):
    y = a * 1.0
    y.add_(b)
    y.mul_(b)
    y.sub_(a, alpha=2.0)
    y.div_(2.0)
    return y.sin()


def test_inplace_ops_match_torch():
    arrays = _arrays([(3, 4), (3, 4)])
    t_outs, t_grads, g = _run(torch, _inplace_program, arrays, False)
    k_outs, k_grads, _ = _run(kiln, _inplace_program, arrays, False, g)
    np.testing.assert_allclose(k_outs[0].numpy(), _np(t_outs[0]), rtol=1e-5, atol=1e-6)
    for tg, kg in zip(t_grads, k_grads):
        np.testing.assert_allclose(kg.numpy(), tg.numpy(), rtol=1e-5, atol=1e-6)
    assert k_outs[0].grad_fn.name() == t_outs[0].grad_fn.name()


def test_inplace_grad_fn_is_the_last_op():
    t = torch.ones(3, requires_grad=True) * 2.0
    t.mul_(3.0)
    k = kiln.ones(3, requires_grad=True) * 2.0
    k.mul_(3.0)
    assert k.grad_fn.name() == t.grad_fn.name()


def _error(lib, fn):
    with pytest.raises(Exception) as info:
        fn(lib)
    return str(info.value)


def _same_error(fn):
    t_msg = _error(torch, fn)
    k_msg = _error(kiln, fn)
    assert k_msg == t_msg, f"kiln: {k_msg!r}\ntorch: {t_msg!r}"


def test_leaf_inplace_error():
    def fn(lib):
        a = lib.ones(3, requires_grad=True)
        a.add_(1.0)
    _same_error(fn)


def test_saved_tensor_modified_error():
    def fn(lib):
        a = lib.ones(3, requires_grad=True)
        b = a * 2.0
        c = b * b
        b.add_(1.0)
        c.sum().backward()
    _same_error(fn)


def test_saved_leaf_modified_under_no_grad_error():
    def fn(lib):
        a = lib.ones(3, requires_grad=True)
        c = a * a
        with lib.no_grad():
            a.mul_(2.0)
        c.sum().backward()
    _same_error(fn)


def test_saved_result_modified_error():
    def fn(lib):
        a = lib.ones(3, requires_grad=True)
        b = a.exp()
        b.mul_(2.0)
        b.sum().backward()
    _same_error(fn)


# ----- engine semantics -----

def test_accumulates_over_two_backward_calls():
    results = []
    for lib in (torch, kiln):
        a = lib.from_numpy(np.array([1.0, 2.0, 3.0], dtype=np.float32))
        a.requires_grad_(True)
        (a * a).sum().backward()
        (a * 3.0).sum().backward()
        results.append(_np(a.grad))
    np.testing.assert_allclose(results[1], results[0])


def test_shared_subexpression_sums_gradients():
    results = []
    for lib in (torch, kiln):
        a = lib.from_numpy(np.array([0.5, -1.0, 2.0], dtype=np.float32))
        a.requires_grad_(True)
        b = a.sin()
        c = b * b + b.exp() + a
        c.sum().backward()
        results.append(_np(a.grad))
    np.testing.assert_allclose(results[1], results[0], rtol=1e-6)


def test_backward_twice_error():
    def fn(lib):
        a = lib.ones(3, requires_grad=True)
        c = (a * a).sum()
        c.backward()
        c.backward()
    _same_error(fn)


def test_retain_graph():
    results = []
    for lib in (torch, kiln):
        a = lib.from_numpy(np.array([1.0, 2.0], dtype=np.float32))
        a.requires_grad_(True)
        c = (a * a).sum()
        c.backward(retain_graph=True)
        c.backward()
        results.append(_np(a.grad))
    np.testing.assert_allclose(results[1], results[0])


def test_non_scalar_backward_error():
    def fn(lib):
        a = lib.ones(3, requires_grad=True)
        (a * 2.0).backward()
    _same_error(fn)


def test_no_grad_tensor_backward_error():
    def fn(lib):
        lib.ones(3).sum().backward()
    _same_error(fn)


def test_autograd_grad():
    results = []
    for lib in (torch, kiln):
        a = lib.from_numpy(np.array([1.0, 2.0, 3.0], dtype=np.float32))
        b = lib.from_numpy(np.array([0.5, 0.25, 2.0], dtype=np.float32))
        a.requires_grad_(True)
        b.requires_grad_(True)
        h = a * b
        out = (h.exp() + a).sum()
        ga, gh = lib.autograd.grad(out, [a, h], retain_graph=True)
        (gb,) = lib.autograd.grad([out], [b])
        assert a.grad is None and b.grad is None
        results.append([_np(ga), _np(gh), _np(gb)])
    for k, t in zip(results[1], results[0]):
        np.testing.assert_allclose(k, t, rtol=1e-6)


def test_autograd_grad_unused():
    def fn(lib):
        a = lib.ones(3, requires_grad=True)
        b = lib.ones(3, requires_grad=True)
        lib.autograd.grad((a * 2.0).sum(), [a, b])
    _same_error(fn)
    for lib in (torch, kiln):
        a = lib.ones(3, requires_grad=True)
        b = lib.ones(3, requires_grad=True)
        ga, gb = lib.autograd.grad((a * 2.0).sum(), [a, b], allow_unused=True)
        assert gb is None
        np.testing.assert_allclose(_np(ga), [2.0, 2.0, 2.0])


def test_autograd_grad_with_grad_outputs():
    results = []
    for lib in (torch, kiln):
        a = lib.from_numpy(np.array([1.0, 2.0, 3.0], dtype=np.float32))
        a.requires_grad_(True)
        y = a * a
        (g,) = lib.autograd.grad(y, a, grad_outputs=lib.from_numpy(np.array([1.0, 0.5, -1.0], dtype=np.float32)))
        results.append(_np(g))
    np.testing.assert_allclose(results[1], results[0])


def test_no_grad_records_nothing():
    a = kiln.ones(3, requires_grad=True)
    with kiln.no_grad():
        b = a * 2.0
    assert not b.requires_grad and b.grad_fn is None and b.is_leaf
    with kiln.no_grad():
        with kiln.enable_grad():
            c = a * 2.0
    assert c.requires_grad and c.grad_fn.name() == "MulBackward0"


def test_leaf_and_requires_grad():
    a = kiln.ones(3)
    assert a.is_leaf and not a.requires_grad and a.grad is None and a.grad_fn is None
    a.requires_grad_()
    assert a.requires_grad and a.is_leaf
    b = a * 2.0
    assert b.requires_grad and not b.is_leaf
    with pytest.raises(RuntimeError, match="you can only change requires_grad flags of leaf variables"):
        b.requires_grad = False
    with pytest.raises(RuntimeError, match="only Tensors of floating point"):
        kiln.ones(3, dtype=kiln.int64).requires_grad_()
    assert kiln.tensor([1.0, 2.0], requires_grad=True).requires_grad
    assert kiln.zeros(2, requires_grad=True).requires_grad
    assert not (kiln.ones(3) > 0).requires_grad
    assert not (a > 0).requires_grad


def test_detach():
    a = kiln.ones(3, requires_grad=True)
    b = a * 2.0
    d = b.detach()
    assert not d.requires_grad and d.is_leaf
    d.add_(1.0)  # shares memory with b
    np.testing.assert_allclose(b.detach().numpy(), [3.0, 3.0, 3.0])
    c = a * 3.0
    c.detach_()
    assert not c.requires_grad and c.grad_fn is None


def test_as_tensor_of_a_tensor_keeps_its_graph():
    for lib in (torch, kiln):
        a = lib.from_numpy(np.array([1.0, 2.0, 3.0], dtype=np.float32)).requires_grad_(True)
        b = a * 2.0
        assert lib.as_tensor(b) is b and lib.as_tensor(b, dtype=lib.float32) is b
        c = lib.as_tensor(b, dtype=lib.float64)
        assert c.dtype == lib.float64 and c.grad_fn.name() == "ToCopyBackward0"
        c.sum().backward()
        np.testing.assert_allclose(a.grad.numpy(), [2.0, 2.0, 2.0])


def test_retain_grad_and_hooks():
    results = []
    for lib in (torch, kiln):
        a = lib.from_numpy(np.array([1.0, 2.0, 3.0], dtype=np.float32))
        a.requires_grad_(True)
        seen = []
        a.register_hook(lambda g: g * 10.0)
        h = a * a
        h.retain_grad()
        h.register_hook(lambda g: seen.append(_np(g).copy()))
        out = (h * 3.0).sum()
        out.backward()
        results.append((_np(a.grad), _np(h.grad), seen[0], h.retains_grad))
    for k, t in zip(results[1], results[0]):
        np.testing.assert_allclose(k, t)


def test_hook_handle_remove():
    a = kiln.ones(2, requires_grad=True)
    handle = a.register_hook(lambda g: g * 0.0)
    handle.remove()
    (a * 2.0).sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), [2.0, 2.0])


GRAD_FN_NAMES = {
    "add": lambda m, a, b: a + b, "sub": lambda m, a, b: a - b, "mul": lambda m, a, b: a * b,
    "div": lambda m, a, b: a / b, "neg": lambda m, a, b: -a, "exp": lambda m, a, b: a.exp(),
    "sum": lambda m, a, b: a.sum(), "sum_dim": lambda m, a, b: a.sum(0), "mean": lambda m, a, b: a.mean(),
    "mm": lambda m, a, b: a.mm(b.t()), "t": lambda m, a, b: a.t(), "view": lambda m, a, b: a.view(-1),
    "select": lambda m, a, b: a[0], "slice": lambda m, a, b: a[1:], "cat": lambda m, a, b: m.cat([a, b]),
    "stack": lambda m, a, b: m.stack([a, b]), "softmax": lambda m, a, b: a.softmax(0),
    "max_dim": lambda m, a, b: a.max(1)[0], "max": lambda m, a, b: a.max(), "clamp": lambda m, a, b: a.clamp(0, 1),
    "where": lambda m, a, b: m.where(a > 0, a, b), "relu": lambda m, a, b: a.relu(),
    "unsqueeze": lambda m, a, b: a.unsqueeze(0), "permute": lambda m, a, b: a.permute(1, 0),
    "expand": lambda m, a, b: a[0:1].expand(3, 4), "chunk": lambda m, a, b: a.chunk(2)[0],
    "pow": lambda m, a, b: a ** 2, "sigmoid": lambda m, a, b: a.sigmoid(), "tanh": lambda m, a, b: a.tanh(),
}


@pytest.mark.parametrize("name", sorted(GRAD_FN_NAMES))
def test_grad_fn_names(name):
    fn = GRAD_FN_NAMES[name]
    names = []
    for lib in (torch, kiln):
        a = lib.ones(3, 4, requires_grad=True)
        b = lib.ones(3, 4, requires_grad=True)
        names.append(fn(lib, a, b).grad_fn.name())
    assert names[1] == names[0]


def test_inplace_on_view_of_leaf_errors():
    def fn(lib):
        a = lib.ones(3, requires_grad=True)
        a.mul_(2.0)
    _same_error(fn)


def test_integer_ops_do_not_require_grad():
    a = kiln.ones(3, requires_grad=True)
    assert not a.argmax().requires_grad
    assert not (a == 1).requires_grad


# ----- what backward keeps -----

def test_input_read_only_for_its_geometry_is_not_kept():
    """sum and mean read their input only for its sizes: the forward keeps its geometry, not the tensor (as
    torch), so an in-place change to it afterwards is no error."""
    grads = []
    for lib in (kiln, torch):
        a = lib.ones(3, 4, requires_grad=True)
        x = a * 2.0
        s = x.sum() + x.mean() + x.reshape(12).sum()
        x.add_(1.0)
        s.backward()
        grads.append(_np(a.grad))
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-6)


def test_input_read_for_its_values_is_kept():
    for lib in (kiln, torch):
        a = lib.ones(3, requires_grad=True)
        x = a * 2.0
        y = x.sin()
        x.add_(1.0)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            y.sum().backward()


MATMUL_SHAPES = [((3, 4), (4, 5)), ((4,), (4,)), ((3, 4), (4,)), ((4,), (4, 5)), ((2, 3, 4), (4, 5)),
                 ((2, 3, 4), (2, 4, 5)), ((3, 4), (2, 4, 5)), ((2, 3, 4), (4,)), ((4,), (2, 4, 5))]


@pytest.mark.parametrize("shapes", MATMUL_SHAPES, ids=str)
def test_matmul_grad_fn_name_is_torchs(shapes):
    """torch's matmul is a composite: its grad_fn is that of the op it ran (MmBackward0 for 2-D @ 2-D)."""
    names = []
    for lib in (torch, kiln):
        a, b = (lib.ones(*s, requires_grad=True) for s in shapes)
        names.append(lib.matmul(a, b).grad_fn.name())
    assert names[1] == names[0]


# ----- the engine on the thread pool -----

def _wide_program(lib, a, b):
    """Many independent branches: each wave of ready nodes has several to run at once."""
    branches = [(a * float(i)).sin() * b + (b / (i + 1.0)).exp() for i in range(8)]
    total = branches[0]
    for t in branches[1:]:
        total = total + t * a
    return total


@pytest.mark.parametrize("threads", [1, 2, 4])
def test_parallel_backward_matches_torch_and_is_deterministic(threads):
    """With more than one thread, independent ready nodes run on the pool; gradients are summed in a fixed
    order, so repeated runs agree bit for bit."""
    previous = kiln.get_num_threads()
    kiln.set_num_threads(threads)
    try:
        values = _arrays([(6, 5), (6, 5)])
        assert_gradients_match_torch(_wide_program, values)
        runs = [_run(kiln, _wide_program, values, grad_arrays=[np.ones((6, 5), np.float32)])[1] for _ in range(5)]
        for grads in runs[1:]:
            for g, first in zip(grads, runs[0]):
                np.testing.assert_array_equal(_np(g), _np(first))
    finally:
        kiln.set_num_threads(previous)


def test_parallel_backward_raises_errors_of_pool_nodes():
    previous = kiln.get_num_threads()
    kiln.set_num_threads(4)
    try:
        a = kiln.tensor([1.5, 2.5], requires_grad=True)
        y = kiln.floor_divide(a, 0.7) + a.sin() + a.cos()
        with pytest.raises(RuntimeError, match="derivative for aten::floor_divide is not implemented"):
            y.sum().backward()
    finally:
        kiln.set_num_threads(previous)
