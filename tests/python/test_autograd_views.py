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
