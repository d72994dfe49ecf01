"""Shared helpers for the differential tests: the same call in kiln and in
torch 1.13 on copies of the same numpy inputs, results compared."""
import os
import sys

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
