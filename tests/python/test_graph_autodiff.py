"""Gradients of scripted functions (issue 21, graph autodiff): for every
differential test program (script_programs.py, which includes the shared
corpus) called with float tensor inputs, the float inputs require grad in
kiln and in torch 1.13, the outputs' float tensors are weighted by the same
random tensors and summed, and backward's gradients of the inputs must agree,
with the executor's optimization on and off. Calls torch rejects (forward or
backward) must be rejected by kiln too."""
import os
import sys

import numpy as np
import pytest
import torch

import kiln
from conftest import convert

sys.path.insert(0, os.path.dirname(__file__))
from script_programs import PROGRAMS  # noqa: E402

# Programs kiln cannot compile yet (see test_script.py).
UNSUPPORTED = {"with_no_grad"}

# Programs whose gradients need an operator that has no derivative in kiln
# yet (other helpers of issue 21 are adding them): the operator named.
MISSING_DERIVATIVE = {}

_RNG = np.random.default_rng(21)


def _is_float_array(a):
    return isinstance(a, np.ndarray) and a.dtype in (np.float32, np.float64)


def _has_float_input(args):
    for a in args:
        if _is_float_array(a):
            return True
        if isinstance(a, (list, tuple)) and any(_is_float_array(e) for e in a):
            return True
    return False


def _cases():
    cases = []
    for prog in PROGRAMS:
        if prog["name"] in UNSUPPORTED or prog.get("prints"):
            continue
        for k, args in enumerate(prog["args"]):
            if _has_float_input(args):
                cases.append((prog, k))
    return cases


CASES = _cases()


def _leaves(value, lib, out):
    """Converts the arguments; float arrays become leaves that require grad (collected in `out`)."""
    if _is_float_array(value):
        t = convert(value, lib)
        t.requires_grad_(True)
        out.append(t)
        return t
    if isinstance(value, (list, tuple)):
        return type(value)(_leaves(v, lib, out) for v in value)
    return convert(value, lib)


def _float_tensors(value, out):
    if isinstance(value, (torch.Tensor, kiln.Tensor)):
        if value.dtype in (torch.float32, torch.float64, kiln.float32, kiln.float64) and value.requires_grad:
            out.append(value)
    elif isinstance(value, (list, tuple)):
        for v in value:
            _float_tensors(v, out)
    elif isinstance(value, dict):
        for v in value.values():
            _float_tensors(v, out)
    return out


_torch_units = {}
_kiln_units = {}


def _unit(prog, lib):
    units = _torch_units if lib == "torch" else _kiln_units
    if prog["name"] not in units:
        units[prog["name"]] = (torch.jit.CompilationUnit(prog["src"], _frames_up=0)
                               if lib == "torch" else kiln.compile(prog["src"]))
    return units[prog["name"]]


def _gradients(prog, args, lib, weights):
    """(outputs' count, the leaves' gradients) or the exception raised."""
    leaves = []
    call_args = [_leaves(a, lib, leaves) for a in args]
    try:
        result = getattr(_unit(prog, lib), prog["fn"])(*call_args)
        outs = _float_tensors(result, [])
        if not outs:
            return 0, []
        total = None
        for k, o in enumerate(outs):
            w = weights(k, tuple(o.shape), o.dtype)
            w = convert(w, lib)
            term = (o * w).sum()
            total = term if total is None else total + term
        total.backward()
    except Exception as e:  # noqa: BLE001 - compared below
        return e
    grads = []
    for t in leaves:
        g = t.grad
        grads.append(None if g is None else np.array(g.detach().numpy() if lib == "torch" else g.numpy()))
    return len(outs), grads


@pytest.fixture(params=[True, False], ids=["optimized", "plain"])
def optimize(request):
    saved = kiln._C._get_graph_executor_optimize()
    kiln._C._set_graph_executor_optimize(request.param)
    yield request.param
    kiln._C._set_graph_executor_optimize(saved)


@pytest.mark.parametrize("prog,k", [
    pytest.param(p, k, id=f"{p['name']}-{k}",
                 marks=[pytest.mark.xfail(strict=True, reason=MISSING_DERIVATIVE[p["name"]])]
                 if p["name"] in MISSING_DERIVATIVE else [])
    for p, k in CASES
])
def test_gradients_match_torch(prog, k, optimize):
    args = prog["args"][k]
    cache = {}

    def weights(i, shape, dtype):
        key = (i, shape)
        if key not in cache:
            cache[key] = _RNG.standard_normal(shape)
        w = cache[key]
        return w.astype(np.float64 if str(dtype).endswith("float64") else np.float32)

    expected = _gradients(prog, args, "torch", weights)
    if isinstance(expected, Exception):
        got = _gradients(prog, args, "kiln", weights)
        assert isinstance(got, Exception), f"torch raised {expected!r}, kiln did not"
        return
    if expected[0] == 0:
        pytest.skip("no output requires grad")
    got = _gradients(prog, args, "kiln", weights)
    if isinstance(got, Exception):
        raise got
    assert got[0] == expected[0], "outputs that require grad"
    rtol = max(prog.get("rtol", 1e-5), 1e-4)
    for i, (g, e) in enumerate(zip(got[1], expected[1])):
        if e is None:
            assert g is None or not np.any(g), f"input {i}: kiln has a gradient, torch none"
            continue
        assert g is not None, f"input {i}: no gradient in kiln"
        np.testing.assert_allclose(g, e, rtol=rtol, atol=1e-5, err_msg=f"gradient of input {i}")
