"""Shared helpers for the differential tests: the same call in kiln and in
torch 1.13 on copies of the same numpy inputs, results compared."""
import math  # noqa: F401  (TorchScript sources in tests resolve `math` from here)
import os
import sys
from typing import Dict, List, Optional, Tuple  # noqa: F401  (likewise)

import numpy as np
import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "python"))

import kiln  # noqa: E402
import torch  # noqa: E402

torch.set_num_threads(1)

DTYPE_PAIRS = {
    "float32": (kiln.float32, torch.float32),
    "float64": (kiln.float64, torch.float64),
    "int64": (kiln.int64, torch.int64),
    "int32": (kiln.int32, torch.int32),
    "int16": (kiln.int16, torch.int16),
    "int8": (kiln.int8, torch.int8),
    "uint8": (kiln.uint8, torch.uint8),
    "bool": (kiln.bool, torch.bool),
}


def kiln_dtype(torch_dtype):
    for k, t in DTYPE_PAIRS.values():
        if t == torch_dtype:
            return k
    raise KeyError(torch_dtype)


def convert(value, to):
    """Turns numpy arrays (and containers of them) into kiln or torch tensors;
    torch dtypes into kiln dtypes for the kiln side."""
    if isinstance(value, np.ndarray):
        copy = np.array(value, copy=True)
        return kiln.from_numpy(copy) if to == "kiln" else torch.from_numpy(copy)
    if isinstance(value, (list, tuple)):
        return type(value)(convert(v, to) for v in value)
    if isinstance(value, dict):
        return {k: convert(v, to) for k, v in value.items()}
    if isinstance(value, torch.dtype) and to == "kiln":
        return kiln_dtype(value)
    return value


def to_numpy(value):
    if isinstance(value, torch.Tensor):
        return value.detach().numpy()
    if isinstance(value, kiln.Tensor):
        return value.numpy()
    return value


def assert_same(kiln_value, torch_value, rtol=1e-5, atol=1e-6, check_dtype=True):
    """Equal values (within tolerance for floats), shapes and dtypes."""
    if isinstance(torch_value, torch.Tensor):
        assert isinstance(kiln_value, kiln.Tensor), f"expected a tensor, got {type(kiln_value)}"
        assert tuple(kiln_value.shape) == tuple(torch_value.shape), \
            f"shape {tuple(kiln_value.shape)} != torch {tuple(torch_value.shape)}"
        if check_dtype:
            assert kiln_value.dtype._name == str(torch_value.dtype).replace("torch.", ""), \
                f"dtype {kiln_value.dtype} != torch {torch_value.dtype}"
        k, t = kiln_value.numpy(), torch_value.detach().numpy()
        if t.dtype.kind == "f":
            np.testing.assert_allclose(k.astype(np.float64), t.astype(np.float64), rtol=rtol, atol=atol,
                                       equal_nan=True)
        else:
            np.testing.assert_array_equal(k, t)
    elif isinstance(torch_value, (tuple, list)):
        assert len(kiln_value) == len(torch_value)
        for k, t in zip(kiln_value, torch_value):
            assert_same(k, t, rtol, atol, check_dtype)
    elif isinstance(torch_value, float):
        assert kiln_value == pytest.approx(torch_value, rel=rtol, abs=atol, nan_ok=True)
    else:
        assert kiln_value == torch_value


class Fusion:
    """Fusion on or off for the plans compiled inside, restored afterwards."""

    def __init__(self, enabled):
        self.enabled = enabled

    def __enter__(self):
        self.saved = kiln._C._jit_fusion_enabled()
        kiln._C._jit_set_fusion_enabled(self.enabled)

    def __exit__(self, *exc):
        kiln._C._jit_set_fusion_enabled(self.saved)


def run_both(fn, args, kwargs=None):
    """Runs fn(lib, *args) with lib = kiln, then torch, on converted copies of args.
    Returns [(result, error, args) for kiln, (result, error, args) for torch];
    `error` is the exception raised (result None) or None."""
    kwargs = kwargs or {}
    results = []
    for lib, name in ((kiln, "kiln"), (torch, "torch")):
        a = convert(list(args), name)
        kw = convert(dict(kwargs), name)
        try:
            results.append((fn(lib, *a, **kw), None, a))
        except Exception as e:  # noqa: BLE001 - the error itself is compared
            results.append((None, e, a))
    return results


def check_both(fn, *args, rtol=1e-5, atol=1e-6, check_dtype=True, check_args=True, **kwargs):
    """Asserts kiln and torch agree on result, on raising, and on mutated inputs."""
    (kr, ke, ka), (tr, te, ta) = run_both(fn, args, kwargs)
    if te is not None:
        assert ke is not None, f"torch raised {type(te).__name__}: {te} but kiln returned {kr}"
        return
    if ke is not None:
        raise AssertionError(f"kiln raised {type(ke).__name__}: {ke}; torch returned {tr}") from ke
    assert_same(kr, tr, rtol, atol, check_dtype)
    if check_args:
        for k, t in zip(ka, ta):
            if isinstance(t, torch.Tensor):
                assert_same(k, t, rtol, atol, check_dtype)


@pytest.fixture
def rng():
    return np.random.default_rng(1234)


def assert_same_types(kiln_value, torch_value):
    """Python scalars must agree in type too (an int is not a float, a bool not an int)."""
    if isinstance(torch_value, (bool, int, float, str)) or torch_value is None:
        assert type(kiln_value) is type(torch_value), \
            f"kiln returned {type(kiln_value).__name__} {kiln_value!r}, torch {type(torch_value).__name__} {torch_value!r}"
    elif isinstance(torch_value, (list, tuple)):
        assert type(kiln_value) is type(torch_value), f"kiln returned a {type(kiln_value).__name__}, torch a {type(torch_value).__name__}"
        for k, t in zip(kiln_value, torch_value):
            assert_same_types(k, t)
    elif isinstance(torch_value, dict):
        assert isinstance(kiln_value, dict), f"kiln returned a {type(kiln_value).__name__}, torch a dict"
        assert list(kiln_value.keys()) == list(torch_value.keys()) or all(
            isinstance(k, torch.Tensor) for k in torch_value)
        for k, t in zip(kiln_value.values(), torch_value.values()):
            assert_same_types(k, t)


def assert_same_values(kiln_value, torch_value, rtol=1e-5, atol=1e-6):
    """assert_same, extended to dicts, with Python types checked."""
    assert_same_types(kiln_value, torch_value)
    if isinstance(torch_value, dict):
        assert len(kiln_value) == len(torch_value)
        for (kk, kv), (tk, tv) in zip(kiln_value.items(), torch_value.items()):
            assert_same_values(kk, tk, rtol, atol)
            assert_same_values(kv, tv, rtol, atol)
    elif isinstance(torch_value, (list, tuple)):
        assert len(kiln_value) == len(torch_value)
        for k, t in zip(kiln_value, torch_value):
            assert_same_values(k, t, rtol, atol)
    else:
        assert_same(kiln_value, torch_value, rtol, atol)


def script_graph_text(src, fn):
    """The graph torch 1.13's TorchScript compiler makes for `fn` in `src`, as text."""
    return str(script_function(src, fn).graph)


def script_function(src, fn):
    # Names in the source (torch, math, List, ...) resolve in this module.
    return getattr(torch.jit.CompilationUnit(src, _frames_up=0), fn)


def torch_function_for(text, fn, scripted=None):
    """torch running graph `text`. torch 1.13's IR parser cannot read nodes
    without outputs (` = prim::RaiseException(...)`); for those graphs the
    scripted function the text was printed from runs the same graph."""
    try:
        return torch._C._create_function_from_graph(fn, torch._C.parse_ir(text))
    except RuntimeError:
        if scripted is None:
            raise
        return scripted


def check_graph(text, fn, args, raises=None, rtol=1e-5, atol=1e-6, scripted=None, kiln_fn=None, torch_fn=None):
    """Runs graph `text` in torch (torch._C._create_function_from_graph) and
    in kiln (kiln.function_from_graph) on copies of `args`; compares results,
    Python types, the inputs afterwards (mutation), and raising or not.
    Returns kiln's exception when both raised."""
    if torch_fn is None:
        torch_fn = torch_function_for(text, fn, scripted)
    if kiln_fn is None:
        kiln_fn = kiln.function_from_graph(fn, kiln.parse_ir(text))
    targs, kargs = convert(args, "torch"), convert(args, "kiln")
    t_error = k_error = None
    try:
        t_result = torch_fn(*targs)
    except Exception as e:  # noqa: BLE001 - any torch error is an expected outcome
        t_error = e
    try:
        k_result = kiln_fn(*kargs)
    except Exception as e:  # noqa: BLE001
        k_error = e
    assert (t_error is None) == (k_error is None), f"torch raised {t_error!r}; kiln raised {k_error!r}"
    if raises is not None:
        assert (t_error is not None) == raises, f"expected raises={raises}, torch raised {t_error!r}"
    if t_error is not None:
        return k_error
    assert_same_values(k_result, t_result, rtol, atol)
    assert_same_values(list(kargs), list(targs), rtol, atol)
    return None


def check_script(src, fn, *args, raises=None, rtol=1e-5, atol=1e-6):
    """check_graph on the graphs torch compiles from TorchScript source: every
    function of the source goes into one kiln.CompilationUnit, so calls
    between them (prim::CallFunction, fork) resolve as in torch. Graphs with
    calls run in torch as the scripted function (its IR parser cannot make
    function constants)."""
    cu = torch.jit.CompilationUnit(src, _frames_up=0)
    kiln_cu = kiln.CompilationUnit()
    for f in cu.get_functions():
        kiln_cu.create_function(f.name, kiln.parse_ir(str(f.graph)))
    scripted = getattr(cu, fn)
    text = str(scripted.graph)
    if "prim::CallFunction" in text or "prim::fork" in text:
        return check_graph(text, fn, list(args), raises, rtol, atol, kiln_fn=getattr(kiln_cu, fn),
                           torch_fn=scripted)
    return check_graph(text, fn, list(args), raises, rtol, atol, scripted, kiln_fn=getattr(kiln_cu, fn))
