"""In-place operations on views against torch 1.13: the write rewrites the
base's history (torch's CopySlices) so that the base's gradient sees it, the
view's grad_fn afterwards (AsStridedBackward0), and torch's errors for an
in-place write on a view of a leaf and on one of several views a function
returned (unbind, split, chunk)."""
import numpy as np
import pytest
import torch

import kiln
from autograd_check import arrays, assert_gradients_match_torch


def _slice_mul(m, a, w):
    x = a * 1.0
    x[1:3].mul_(w)
    return x


def _transposed_row_add(m, a, w):
    x = a * 2.0
    x.t()[0].add_(w)
    return x * x


def _view_of_view(m, a, w):
    a = a.contiguous()
    x = a * 2.0
    v = x.view(12)[2:8].view(2, 3)
    v.mul_(w)
    return x.sum(0) + v.sum()


def _twice(m, a, w):
    x = a * 1.0
    v = x[:, 1]
    v.mul_(2.0)
    v.add_(w[0])
    return x


def _base_then_view_used(m, a, w):
    x = a.sin()
    v = x[0]
    v.mul_(w[0])
    return x * v


def _select_mul(m, a, w):
    x = a * 1.0
    x.select(1, 2).mul_(w[:, 0])
    return x


PROGRAMS = {
    "slice_mul": (_slice_mul, [(4, 3), (2, 3)]),
    "transposed_row_add": (_transposed_row_add, [(4, 3), (4,)]),
    "view_of_view": (_view_of_view, [(4, 3), (2, 3)]),
    "twice": (_twice, [(4, 3), (3,)]),
    "base_then_view_used": (_base_then_view_used, [(4, 3), (3,)]),
    "select_mul": (_select_mul, [(4, 3), (4, 1)]),
}


@pytest.mark.parametrize("noncontiguous", [False, True], ids=["contiguous", "noncontiguous"])
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_inplace_on_view_gradients_match_torch(name, noncontiguous):
    fn, shapes = PROGRAMS[name]
    assert_gradients_match_torch(fn, arrays(shapes), noncontiguous)


def test_grad_fns_after_inplace_on_view():
    for lib in (kiln, torch):
        a = lib.ones(4, 3, requires_grad=True)
        x = a * 1.0
        v = x[1:3]
        v.mul_(2.0)
        assert v.grad_fn.name() == "AsStridedBackward0"
        assert x.grad_fn.name() == "torch::autograd::CopySlices"
        assert x.grad_fn.next_functions[0][0].name() == "MulBackward0"


def test_inplace_on_view_of_leaf_raises():
    for lib in (kiln, torch):
        a = lib.ones(4, 3, requires_grad=True)
        with pytest.raises(RuntimeError, match="a view of a leaf Variable that requires grad is being used in an "
                                               "in-place operation"):
            a[0].mul_(2.0)
        # Without grad mode it is allowed, as in torch.
        with lib.no_grad():
            a[0].mul_(2.0)


@pytest.mark.parametrize("make", ["unbind", "split", "chunk"])
def test_inplace_on_multi_output_view_raises(make):
    for lib in (kiln, torch):
        x = lib.ones(4, 3, requires_grad=True) * 1.0
        views = {"unbind": lambda: x.unbind(0), "split": lambda: x.split(2), "chunk": lambda: x.chunk(2)}[make]()
        name = {"unbind": "UnbindBackward0", "split": "SplitBackward0", "chunk": "SplitBackward0"}[make]
        with pytest.raises(RuntimeError, match=f"Output 1 of {name} is a view and is being modified inplace. This "
                                               "view is the output of a function that returns multiple views."):
            views[1].add_(1.0)


# ------------------------------------------------ views of tensors that do not require grad

def _base_gradient(lib, make_view, write):
    """A base that does not require grad, a view of it made first, then an
    in-place write of a tensor that requires grad into the view: the base's
    history, the gradient that reaches the written tensor, and grad_fn names."""
    b = lib.from_numpy(np.arange(12, dtype=np.float32).reshape(3, 4).copy())
    w = lib.from_numpy(np.array([1.5, -2.0, 0.5, 3.0], dtype=np.float32)).requires_grad_()
    v = make_view(b)
    write(v, w)
    names = (type(b.grad_fn).__name__ if lib is torch else b.grad_fn.name(),
             type(v.grad_fn).__name__ if lib is torch else v.grad_fn.name())
    (b * b).sum().backward()
    return b.requires_grad, b.is_leaf, w.grad.numpy().copy(), names


_VIEW_WRITES = {
    "row_mul": (lambda b: b[1], lambda v, w: v.mul_(w)),
    "row_copy": (lambda b: b[2], lambda v, w: v.copy_(w * 2)),
    "view_of_view_add": (lambda b: b.view(12)[4:8], lambda v, w: v.add_(w)),
    "transposed_column": (lambda b: b.t()[:, 0], lambda v, w: v.mul_(w)),
}


@pytest.mark.parametrize("name", list(_VIEW_WRITES))
def test_write_into_view_of_tensor_without_grad(name):
    make_view, write = _VIEW_WRITES[name]
    k = _base_gradient(kiln, make_view, write)
    t = _base_gradient(torch, make_view, write)
    assert k[0] == t[0] and k[1] == t[1]
    np.testing.assert_allclose(k[2], t[2], rtol=1e-6)
    assert k[3][0].split("::")[-1] == t[3][0], (k[3], t[3])


def test_write_into_view_in_script():
    src = """
def f(w):
    b = torch.ones(3, 4)
    row = b[1]
    row.mul_(w)
    (b * b).sum().backward()
    return b.requires_grad, w.grad
"""
    w0 = np.array([1.0, 2.0, 3.0, 4.0], dtype=np.float32)
    t = torch.jit.CompilationUnit(src, _frames_up=0).f(torch.from_numpy(w0.copy()).requires_grad_())
    k = kiln.compile(src).f(kiln.from_numpy(w0.copy()).requires_grad_())
    assert k[0] == t[0]
    np.testing.assert_allclose(k[1].numpy(), t[1].numpy())


def test_views_without_grad_stay_plain():
    """Tracking views costs no history: no grad_fn, no requires_grad."""
    b = kiln.ones(3, 4)
    v = b[1].view(2, 2)
    v.mul_(2.0)
    assert not v.requires_grad and v.grad_fn is None and not b.requires_grad
    np.testing.assert_allclose(b.numpy()[1], [2.0] * 4)
