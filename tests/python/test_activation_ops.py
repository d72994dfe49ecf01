"""Operators declared by their element expression alone (kiln/ops/activation_ops.cpp,
docs/operators.md "Adding an operator"): aten::silu and aten::mish agree with
torch 1.13 eagerly, in scripts, in shape propagation and inside fusion groups,
where the kernel computes the same bits as the eager op."""
import numpy as np
import pytest
import torch

import kiln
from conftest import Fusion, assert_same

OPS = ["silu", "mish"]
SPECIALS = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-40, -1e-40, 20.0, -20.0, 88.0, -100.0, 0.5],
                    dtype=np.float64)


def _values(dtype, n=257, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.uniform(-8, 8, n)
    x[: len(SPECIALS)] = SPECIALS
    return x.astype(dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", OPS)
def test_eager_matches_torch(name, dtype):
    x = _values(dtype)
    k = getattr(kiln, name)(kiln.from_numpy(x.copy()))
    t = getattr(torch.nn.functional, name)(torch.from_numpy(x.copy()))
    assert_same(k, t, rtol=1e-5 if dtype == np.float32 else 1e-12, atol=1e-30)
    assert_same(getattr(kiln.nn.functional, name)(kiln.from_numpy(x.copy())), t, rtol=1e-5, atol=1e-30)


@pytest.mark.parametrize("name", OPS)
def test_in_place_and_out_forms(name):
    x = _values(np.float32)
    expected = getattr(torch.nn.functional, name)(torch.from_numpy(x.copy()))
    inplace = kiln.from_numpy(x.copy())
    assert getattr(kiln, name + "_")(inplace) is not None
    assert_same(inplace, expected)
    out = kiln.empty([len(x)], dtype=kiln.float32)
    getattr(kiln, name)(kiln.from_numpy(x.copy()), out=out)
    assert_same(out, expected)
    # A strided input gives the same values.
    wide = np.repeat(x, 2)
    assert_same(getattr(kiln, name)(kiln.from_numpy(wide)[::2]), expected)
    with pytest.raises(RuntimeError, match="Found dtype"):
        getattr(kiln, name)(kiln.from_numpy(x.copy()), out=kiln.empty([len(x)], dtype=kiln.float64))


@pytest.mark.parametrize("dtype", ["int64", "int32", "bool"])
@pytest.mark.parametrize("name", OPS)
def test_other_dtypes_raise_as_torch(name, dtype):
    values = np.array([1, 0, 1]).astype(dtype)
    with pytest.raises(RuntimeError) as theirs:
        getattr(torch.nn.functional, name)(torch.from_numpy(values.copy()))
    with pytest.raises(RuntimeError) as ours:
        getattr(kiln, name)(kiln.from_numpy(values.copy()))
    assert str(ours.value) == str(theirs.value)


SOURCE = """
def both(x):
    return torch.nn.functional.silu(x) * 2 + torch.nn.functional.mish(x)
"""


def test_script_shapes_and_fusion():
    x = _values(np.float32)
    theirs = torch.jit.CompilationUnit(SOURCE).both(torch.from_numpy(x.copy()))
    with Fusion(True):
        unit = kiln.compile(SOURCE)
        kiln._C._reset_fusion_stats()
        fused = unit.both(kiln.from_numpy(x.copy()))
        graph = str(unit.both.graph_for(kiln.from_numpy(x.copy())))
        stats = kiln._C._fusion_stats()
    assert_same(fused, theirs)
    # One fusion group holds both ops, and it ran as a kernel.
    assert "prim::FusionGroup" in graph, graph
    assert "aten::silu" in graph and "aten::mish" in graph, graph
    assert stats["kernel_runs"] >= 1, stats
    with Fusion(False):
        unfused = kiln.compile(SOURCE).both(kiln.from_numpy(x.copy()))
    # The kernel computes each op as the eager kernel does; only the final
    # multiply-add may round differently when the compiler contracts it.
    np.testing.assert_allclose(fused.numpy(), unfused.numpy(), rtol=1e-6, atol=0, equal_nan=True)


def test_shape_propagation_types_the_results():
    unit = kiln.compile("def f(x):\n    return torch.nn.functional.silu(x), torch.nn.functional.mish(x.double())\n")
    graph = str(unit.f.graph_for(kiln.ones([2, 3], dtype=kiln.float32)))
    assert "Float(2, 3" in graph and "Double(2, 3" in graph, graph


@pytest.mark.parametrize("name", OPS)
def test_fused_single_op_is_bit_identical(name):
    """A group of the op and a doubling (exact) computes the op's bits exactly."""
    x = _values(np.float32, n=1001, seed=3)
    src = f"def f(x):\n    return torch.nn.functional.{name}(x) * 2.0\n"
    with Fusion(True):
        kiln._C._reset_fusion_stats()
        fused = kiln.compile(src).f(kiln.from_numpy(x.copy()))
        assert kiln._C._fusion_stats()["kernel_runs"] == 1
    eager = getattr(kiln, name)(kiln.from_numpy(x.copy()))
    np.testing.assert_array_equal(fused.numpy(), eager.numpy() * np.float32(2))
