"""Gradient checks shared by the autograd tests: an operator's gradients
in kiln against torch 1.13's on the same random inputs (contiguous or
stored transposed), and a float64 central finite-difference gradcheck of
kiln's own gradients.

A test program is a function of (lib, *inputs) where lib is `torch` or
`kiln`, so one program runs on both."""
import numpy as np
import torch

import kiln

RNG = np.random.default_rng(21)


def arrays(shapes, positive=False, dtype=np.float32):
    """Random inputs of the given shapes (|x| + 0.5 when `positive`)."""
    out = []
    for shape in shapes:
        a = RNG.standard_normal(shape)
        if positive:
            a = np.abs(a) + 0.5
        out.append(a.astype(dtype))
    return out


def leaves(lib, values, noncontiguous=False):
    tensors = []
    for a in values:
        if noncontiguous and a.ndim >= 2:
            # The same values, stored transposed: a leaf that is not contiguous.
            stored = np.ascontiguousarray(np.swapaxes(a, -1, -2))
            t = lib.from_numpy(stored.copy()).transpose(-1, -2)
            if lib is torch:
                t = t.detach()
        else:
            t = lib.from_numpy(a.copy())
        t.requires_grad_(True)
        tensors.append(t)
    return tensors


def outputs(out):
    return list(out) if isinstance(out, (tuple, list)) else [out]


def to_numpy(t):
    return t.detach().numpy() if isinstance(t, torch.Tensor) else t.numpy()


def run_backward(lib, fn, values, noncontiguous=False, grad_arrays=None):
    """fn's outputs and its leaves' gradients, for output gradients `grad_arrays` (random when None)."""
    inputs = leaves(lib, values, noncontiguous)
    outs = outputs(fn(lib, *inputs))
    if grad_arrays is None:
        grad_arrays = [RNG.standard_normal(tuple(o.shape)).astype(to_numpy(o).dtype) for o in outs]
    grads = [lib.from_numpy(g.copy()) for g in grad_arrays]
    lib.autograd.backward(outs, grads)
    return outs, [leaf.grad for leaf in inputs], grad_arrays


def assert_gradients_match_torch(fn, values, noncontiguous=False, rtol=1e-4, atol=1e-5):
    """Outputs, requires_grad and every input's gradient of fn agree between kiln and torch."""
    t_outs, t_grads, g = run_backward(torch, fn, values, noncontiguous)
    k_outs, k_grads, _ = run_backward(kiln, fn, values, noncontiguous, g)
    for t_out, k_out in zip(t_outs, k_outs):
        np.testing.assert_allclose(to_numpy(k_out), to_numpy(t_out), rtol=1e-5, atol=1e-5)
        assert k_out.requires_grad == t_out.requires_grad
    for t_grad, k_grad in zip(t_grads, k_grads):
        assert (k_grad is None) == (t_grad is None)
        if t_grad is not None:
            assert tuple(k_grad.shape) == tuple(t_grad.shape)
            np.testing.assert_allclose(to_numpy(k_grad), to_numpy(t_grad), rtol=rtol, atol=atol)


def gradcheck(fn, values, eps=1e-6, tol=1e-5):
    """Analytic gradients of sum(f(x) * v) against central finite differences, in float64."""
    inputs = leaves(kiln, values)
    outs = outputs(fn(kiln, *inputs))
    vs = [RNG.standard_normal(tuple(o.shape)) for o in outs]
    kiln.autograd.backward(outs, [kiln.from_numpy(v.copy()) for v in vs])
    analytic = [leaf.grad.numpy() if leaf.grad is not None else np.zeros(a.shape) for leaf, a in zip(inputs, values)]

    def objective(points):
        with kiln.no_grad():
            results = outputs(fn(kiln, *[kiln.from_numpy(v.copy()) for v in points]))
            return sum(float((r.numpy().astype(np.float64) * v).sum()) for r, v in zip(results, vs))

    for i, a in enumerate(values):
        numeric = np.zeros(a.shape)
        for idx in np.ndindex(a.shape):
            plus = [x.copy() for x in values]
            minus = [x.copy() for x in values]
            plus[i][idx] += eps
            minus[i][idx] -= eps
            numeric[idx] = (objective(plus) - objective(minus)) / (2 * eps)
        np.testing.assert_allclose(analytic[i], numeric, rtol=tol, atol=tol)


def away_from_kinks(values):
    """Distinct values at least ~0.05 away from 0 and from +-0.5: where relu, abs,
    max and clamp(-0.5, 0.5) have no derivative, finite differences are wrong."""
    values = [np.where(np.abs(a) < 0.05, a + 0.2, a) for a in values]
    values = [np.where(np.abs(np.abs(a) - 0.5) < 0.05, a + 0.2, a) for a in values]
    return [a + np.arange(a.size).reshape(a.shape) * 1e-3 for a in values]
