"""kiln.autograd.Function (a backward written in Python) against torch 1.13's torch.autograd.Function."""
import numpy as np
import pytest
import torch

import kiln


def make_functions(lib):
    """The same custom Functions written against kiln or torch."""

    class Exp(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            y = x.exp()
            ctx.save_for_backward(y)
            return y

        @staticmethod
        def backward(ctx, grad):
            (y,) = ctx.saved_tensors
            return grad * y

    class MulAdd(lib.autograd.Function):
        # Non-tensor arguments, several outputs, an input saved, needs_input_grad.
        @staticmethod
        def forward(ctx, a, scale, b):
            ctx.save_for_backward(a, b)
            ctx.scale = scale
            return a * b * scale, a + b

        @staticmethod
        def backward(ctx, g_prod, g_sum):
            a, b = ctx.saved_tensors
            ga = g_prod * b * ctx.scale + g_sum if ctx.needs_input_grad[0] else None
            gb = g_prod * a * ctx.scale + g_sum if ctx.needs_input_grad[2] else None
            return ga, None, gb

    class Broadcasting(lib.autograd.Function):
        # backward returns a gradient of the output's shape: summed to the input's.
        @staticmethod
        def forward(ctx, x, row):
            return x + row

        @staticmethod
        def backward(ctx, grad):
            return grad, grad

    class Identity(lib.autograd.Function):
        # An input returned as is: a view of it gets the node.
        @staticmethod
        def forward(ctx, x):
            return x

        @staticmethod
        def backward(ctx, grad):
            return grad * 2

    class Square(lib.autograd.Function):
        # Differentiable backward: second derivatives through create_graph.
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, grad):
            (x,) = ctx.saved_tensors
            return 2 * x * grad

    class MulInPlace(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            x.mul_(3)
            ctx.mark_dirty(x)
            return x

        @staticmethod
        def backward(ctx, grad):
            return grad * 3

    class ArgMax(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            idx = x.argmax(1)
            ctx.mark_non_differentiable(idx)
            return x * 1, idx

        @staticmethod
        def backward(ctx, grad, grad_idx):
            return grad

    return dict(Exp=Exp, MulAdd=MulAdd, Broadcasting=Broadcasting, Identity=Identity, Square=Square,
                MulInPlace=MulInPlace, ArgMax=ArgMax)


K, T = make_functions(kiln), make_functions(torch)


def pair(shape, seed=0, requires_grad=True):
    x = np.random.RandomState(seed).randn(*shape).astype(np.float32)
    k = kiln.from_numpy(x.copy())
    t = torch.from_numpy(x.copy())
    if requires_grad:
        k.requires_grad_()
        t.requires_grad_()
    return k, t


def close(k, t):
    np.testing.assert_allclose(k.detach().numpy(), t.detach().numpy(), rtol=1e-5, atol=1e-6)


def test_saved_output_and_grad_fn_name():
    kx, tx = pair((3, 4))
    ky, ty = K["Exp"].apply(kx), T["Exp"].apply(tx)
    close(ky, ty)
    assert ky.grad_fn.name() == ty.grad_fn.name() == "ExpBackward"
    (ky * 2).sum().backward()
    (ty * 2).sum().backward()
    close(kx.grad, tx.grad)


def test_non_tensor_arguments_several_outputs_and_needs_input_grad():
    ka, ta = pair((2, 3), 1)
    kb, tb = pair((2, 3), 2, requires_grad=False)
    kp, ks = K["MulAdd"].apply(ka, 1.5, kb)
    tp, ts = T["MulAdd"].apply(ta, 1.5, tb)
    close(kp, tp)
    close(ks, ts)
    (kp.sum() + (ks * ks).sum()).backward()
    (tp.sum() + (ts * ts).sum()).backward()
    close(ka.grad, ta.grad)
    assert kb.grad is None and tb.grad is None


def test_unused_output_gets_zeros_and_gradient_is_summed_to_the_inputs_shape():
    ka, ta = pair((2, 3), 3)
    kb, tb = pair((2, 3), 4)
    kp, _ = K["MulAdd"].apply(ka, 2.0, kb)
    tp, _ = T["MulAdd"].apply(ta, 2.0, tb)
    kp.sum().backward()
    tp.sum().backward()
    close(ka.grad, ta.grad)
    close(kb.grad, tb.grad)
    kx, tx = pair((4, 3), 5)
    kr, tr = pair((1, 3), 6)
    K["Broadcasting"].apply(kx, kr).sum().backward()
    T["Broadcasting"].apply(tx, tr).sum().backward()
    close(kr.grad, tr.grad)
    assert list(kr.grad.shape) == [1, 3]


def test_input_returned_as_output_and_second_derivatives():
    kx, tx = pair((5,), 7)
    ky, ty = K["Identity"].apply(kx), T["Identity"].apply(tx)
    assert ky.grad_fn.name() == "IdentityBackward"
    ky.sum().backward()
    ty.sum().backward()
    close(kx.grad, tx.grad)
    kx, tx = pair((5,), 8)
    (kg,) = kiln.autograd.grad(K["Square"].apply(kx).sum(), kx, create_graph=True)
    (tg,) = torch.autograd.grad(T["Square"].apply(tx).sum(), tx, create_graph=True)
    close(kg, tg)
    (kgg,) = kiln.autograd.grad(kg.sum(), kx)
    (tgg,) = torch.autograd.grad(tg.sum(), tx)
    close(kgg, tgg)


def test_mark_dirty_and_mark_non_differentiable():
    kx, tx = pair((2, 3), 9)
    ky = K["MulInPlace"].apply(kx * 1)
    ty = T["MulInPlace"].apply(tx * 1)
    close(ky, ty)
    ky.sum().backward()
    ty.sum().backward()
    close(kx.grad, tx.grad)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
        K["MulInPlace"].apply(pair((2,), 1)[0])
    kx, tx = pair((2, 3), 10)
    kv, ki = K["ArgMax"].apply(kx)
    tv, ti = T["ArgMax"].apply(tx)
    assert not ki.requires_grad and not ti.requires_grad
    assert kv.requires_grad
    np.testing.assert_array_equal(ki.numpy(), ti.numpy())


def test_no_recording_without_grad():
    kx, _ = pair((3,), requires_grad=False)
    y = K["Exp"].apply(kx)
    assert not y.requires_grad and y.grad_fn is None
    kx, _ = pair((3,))
    with kiln.no_grad():
        y = K["Exp"].apply(kx)
    assert not y.requires_grad


def test_saved_tensor_modified_in_place_and_backward_twice_raise():
    kx, _ = pair((3,), 11)
    y = K["Square"].apply(kx * 1)
    z = kx * 1
    y = K["Square"].apply(z)
    z.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()
    kx, _ = pair((3,), 12)
    y = K["Exp"].apply(kx).sum()
    y.backward()
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        y.backward()


def test_bad_backward_results_raise_torchs_errors():
    class TooFew(kiln.autograd.Function):
        @staticmethod
        def forward(ctx, a, b):
            return a + b

        @staticmethod
        def backward(ctx, grad):
            return grad

    class GradForNumber(kiln.autograd.Function):
        @staticmethod
        def forward(ctx, a, n):
            return a * n

        @staticmethod
        def backward(ctx, grad):
            return grad, grad

    class BadShape(kiln.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            return a * 1

        @staticmethod
        def backward(ctx, grad):
            return kiln.ones(7)

    a, _ = pair((3,))
    b, _ = pair((3,), 1)
    with pytest.raises(RuntimeError, match=r"function TooFewBackward returned an incorrect number of gradients "
                                           r"\(expected 2, got 1\)"):
        TooFew.apply(a, b).sum().backward()
    with pytest.raises(RuntimeError, match="returned a gradient different than None at position 2"):
        GradForNumber.apply(a, 2.0).sum().backward()
    with pytest.raises(RuntimeError, match=r"returned an invalid gradient at index 0 - got \[7\] but expected shape "
                                           r"compatible with \[3\]"):
        BadShape.apply(a).sum().backward()


def test_once_differentiable():
    class Cube(kiln.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x ** 3

        @staticmethod
        @kiln.autograd.once_differentiable
        def backward(ctx, grad):
            (x,) = ctx.saved_tensors
            return 3 * x * x * grad

    kx, tx = pair((4,), 13)
    Cube.apply(kx).sum().backward()
    close(kx.grad, 3 * tx.detach() ** 2)
    # As torch: the incoming gradient of sum() does not require grad, so neither does the result...
    kx, _ = pair((4,), 14)
    (g,) = kiln.autograd.grad(Cube.apply(kx).sum(), kx, create_graph=True)
    with pytest.raises(RuntimeError, match="element 0 of tensors does not require grad"):
        g.sum().backward()
    # ... but one that does makes differentiating the result raise.
    y = Cube.apply(kx * kx)
    (g,) = kiln.autograd.grad((y * y).sum(), kx, create_graph=True)
    assert g.requires_grad
    with pytest.raises(RuntimeError, match="trying to differentiate twice a function that was marked with "
                                           "@once_differentiable"):
        g.sum().backward()


def test_runs_with_several_threads():
    # The engine runs nodes of a wave on the thread pool; a Python backward stays on the calling thread.
    previous = kiln.get_num_threads()
    kiln.set_num_threads(2)
    try:
        kx, tx = pair((64, 64), 15)
        ky = sum(K["Exp"].apply(kx * i).sum() for i in range(1, 5))
        ty = sum(T["Exp"].apply(tx * i).sum() for i in range(1, 5))
        ky.backward()
        ty.backward()
        np.testing.assert_allclose(kx.grad.numpy(), tx.grad.numpy(), rtol=1e-4)
    finally:
        kiln.set_num_threads(previous)
