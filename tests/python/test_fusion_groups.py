"""The fusion pass against torch 1.13's legacy CPU fuser: for each program,
kiln's optimized graph for the arguments (fn.graph_for, with plans
specialized to shapes and to ranks only) has as many prim::FusionGroup
nodes as torch's graph_for with its CPU fuser forced on, holding the same
nodes (constants aside). Where kiln fuses differently on purpose,
EXPECTED_DIFFERENCES (and EXPECTED_DIFFERENCES_WITH_SIZES, for plans that
know sizes) says how and why, and the test checks kiln's grouping
and that torch's still differs. Each program also gives the same results
(and mutated arguments) fused as with fusion off."""
import numpy as np
import pytest
import torch

import kiln
from conftest import convert

SOURCE = '''
def chain(x, y):
    return torch.tanh((x + y) * x - y)

def two_uses(x, y):
    a = x * y
    return torch.sigmoid(a) + a, a

def split_by_mm(x, y):
    a = torch.relu(x + y)
    m = torch.mm(a, y)
    return torch.tanh(m * x + 1.0)

def float_scalar(x, s: float):
    return (x * s + 1.0) * x

def constant_scalars(x):
    return torch.sigmoid(x * 2.0 + 1) - 0.5

def single(x, y):
    return x + y

def cat_outputs(x, y):
    a = torch.sigmoid(x) * y
    b = torch.tanh(y) + x
    return torch.cat([a, b], 1)

def cat_three(x, y):
    return torch.cat([x * y, x + y, torch.relu(x - y)], 0)

def chunk_input(x, y):
    a, b = x.chunk(2, 1)
    return torch.sigmoid(a) * torch.tanh(b) + y

def branches(x, y, flag: bool):
    if flag:
        z = torch.relu(x * y + x)
    else:
        z = torch.sigmoid(x - y) * y
    return z

def int_tensors(x, y):
    return (x + y) * x - y

def broadcast(x, b):
    return torch.relu(x * b + b)

def div_chain(x, y):
    return (x / (y * y + 1.0)) - x

def in_place_between(x, y):
    a = x * y + x
    x.add_(1)
    return torch.tanh(a * x) - y

def diamond(x, y):
    a = x + y
    b = torch.sigmoid(a)
    c = torch.tanh(a)
    return b * c

def lstm_cell(x, hx, cx, w_ih, w_hh, b_ih, b_hh):
    gates = torch.mm(x, w_ih.t()) + torch.mm(hx, w_hh.t()) + b_ih + b_hh
    ingate, forgetgate, cellgate, outgate = gates.chunk(4, 1)
    ingate = torch.sigmoid(ingate)
    forgetgate = torch.sigmoid(forgetgate)
    cellgate = torch.tanh(cellgate)
    outgate = torch.sigmoid(outgate)
    cy = (forgetgate * cx) + (ingate * cellgate)
    hy = outgate * torch.tanh(cy)
    return hy, cy

def int_scalar(x, n: int):
    return (x * n + 1) * x

def grad_inside(x):
    w = torch.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
    return torch.tanh(x * w + w)
'''

_rng = np.random.default_rng(0)


def _f32(*shape):
    return _rng.standard_normal(shape).astype(np.float32)


ARGS = {
    "chain": (_f32(3, 4), _f32(3, 4)),
    "two_uses": (_f32(3, 4), _f32(3, 4)),
    "split_by_mm": (_f32(4, 4), _f32(4, 4)),
    "float_scalar": (_f32(3, 4), 0.5),
    "constant_scalars": (_f32(3, 4),),
    "single": (_f32(3, 4), _f32(3, 4)),
    "cat_outputs": (_f32(3, 4), _f32(3, 4)),
    "cat_three": (_f32(2, 5), _f32(2, 5)),
    "chunk_input": (_f32(3, 4), _f32(3, 2)),
    "branches": (_f32(3, 4), _f32(3, 4), True),
    "int_tensors": (np.arange(12, dtype=np.int64).reshape(3, 4), np.ones((3, 4), dtype=np.int64)),
    "broadcast": (_f32(3, 4), _f32(4)),
    "div_chain": (_f32(3, 4), _f32(3, 4)),
    "in_place_between": (_f32(3, 4), _f32(3, 4)),
    "diamond": (_f32(3, 4), _f32(3, 4)),
    "lstm_cell": (_f32(3, 10), _f32(3, 20), _f32(3, 20), _f32(80, 10), _f32(80, 20), _f32(80), _f32(80)),
    "int_scalar": (_f32(3, 4), 3),
    "grad_inside": (_f32(3, 4),),
}

# kiln's groups where they differ from 1.13's on purpose.
EXPECTED_DIFFERENCES = {
    # 1.13 passes only float scalars to kernels and leaves `x * n` out; kiln
    # passes int (and bool) scalars as kernel arguments too.
    "int_scalar": [("aten::add", "aten::mul", "aten::mul")],
    # Values that require grad: 1.13's legacy executor only asks whether an
    # input does, and fuses; kiln leaves them unfused, so that results keep
    # their requires_grad flag (a kernel's outputs would not have it). Graph
    # inputs that require grad are tests/lit/fuser/requires_grad.ir (kiln's
    # Python tensors cannot require grad).
    "grad_inside": [],
}

# Differences only where plans know sizes.
EXPECTED_DIFFERENCES_WITH_SIZES = {
    # kiln adds the second matrix product into the first inside the GEMM
    # (aten::addmm_, kiln/passes/accumulate_products.h: only where the sizes
    # prove it safe), so the group starts from their sum: one chunk and four
    # adds fewer than 1.13's group.
    "lstm_cell": [("aten::add",) * 9 + ("aten::mul",) * 3 + ("aten::sigmoid",) * 3 + ("aten::tanh",) * 2
                  + ("prim::ConstantChunk",) * 3],
}


def fusion_groups(graph):
    """The node kinds of each group (constants aside), for torch's and
    kiln's graphs alike; groups inside DifferentiableGraphs count."""
    groups = []

    def walk(nodes):
        for n in nodes:
            for b in n.blocks():
                walk(b.nodes())
            if n.kind() == "prim::FusionGroup":
                groups.append(tuple(sorted(m.kind() for m in n.g("Subgraph").nodes() if m.kind() != "prim::Constant")))
            elif n.kind() == "prim::DifferentiableGraph":
                walk(n.g("Subgraph").nodes())

    walk(graph.nodes())
    return sorted(groups)


@pytest.fixture(scope="module")
def torch_unit():
    """The programs in torch with the legacy executor and its CPU fuser on
    (restored afterwards)."""
    saved_executor = torch._C._jit_set_profiling_executor(False)
    saved_mode = torch._C._jit_set_profiling_mode(False)
    saved_cpu = torch._C._jit_can_fuse_on_cpu()
    saved_legacy = torch._C._jit_can_fuse_on_cpu_legacy()
    saved_texpr = torch._C._jit_texpr_fuser_enabled()
    torch._C._jit_override_can_fuse_on_cpu(True)
    torch._C._jit_override_can_fuse_on_cpu_legacy(True)
    torch._C._jit_set_texpr_fuser_enabled(False)
    try:
        yield torch.jit.CompilationUnit(SOURCE)
    finally:
        torch._C._jit_set_profiling_executor(saved_executor)
        torch._C._jit_set_profiling_mode(saved_mode)
        torch._C._jit_override_can_fuse_on_cpu(saved_cpu)
        torch._C._jit_override_can_fuse_on_cpu_legacy(saved_legacy)
        torch._C._jit_set_texpr_fuser_enabled(saved_texpr)


class _Settings:
    """Fusion on or off and the shape specialization limit for the plans
    compiled inside, restored afterwards."""

    def __init__(self, fusion, shape_limit=4):
        self.fusion, self.shape_limit = fusion, shape_limit

    def __enter__(self):
        self.saved = (kiln._C._jit_fusion_enabled(), kiln._C._get_shape_specialization_limit())
        kiln._C._jit_set_fusion_enabled(self.fusion)
        kiln._C._set_shape_specialization_limit(self.shape_limit)

    def __exit__(self, *exc):
        kiln._C._jit_set_fusion_enabled(self.saved[0])
        kiln._C._set_shape_specialization_limit(self.saved[1])


@pytest.fixture(scope="module", params=[4, 0], ids=["shapes", "ranks"])
def kiln_unit(request):
    """The programs in kiln, fusing, with plans specialized to the
    arguments' shapes or to their ranks only."""
    with _Settings(fusion=True, shape_limit=request.param):
        unit = kiln.compile(SOURCE)
        unit.knows_sizes = request.param > 0
        yield unit


def torch_groups(unit, name):
    args = convert(list(ARGS[name]), "torch")
    fn = getattr(unit, name)
    fn(*args)
    fn(*args)
    return fusion_groups(fn.graph_for(*args))


def kiln_fused_graph(unit, name):
    return getattr(unit, name).graph_for(*convert(list(ARGS[name]), "kiln"))


@pytest.mark.parametrize("name", sorted(ARGS))
def test_groups_match_torch(name, torch_unit, kiln_unit):
    ours = fusion_groups(kiln_fused_graph(kiln_unit, name))
    theirs = torch_groups(torch_unit, name)
    expected = dict(EXPECTED_DIFFERENCES, **(EXPECTED_DIFFERENCES_WITH_SIZES if kiln_unit.knows_sizes else {}))
    if name in expected:
        assert ours == sorted(expected[name])
        assert theirs != ours, "torch now groups %s as kiln does: %s" % (name, theirs)
    else:
        assert ours == theirs


def _run(name, fusion):
    """Result and arguments after the call, from a fresh compilation."""
    with _Settings(fusion):
        args = convert(list(ARGS[name]), "kiln")
        return getattr(kiln.compile(SOURCE), name)(*args), args


def _assert_close(a, b, where):
    if isinstance(a, (list, tuple)):
        assert type(a) is type(b) and len(a) == len(b), where
        for i, (x, y) in enumerate(zip(a, b)):
            _assert_close(x, y, "%s[%d]" % (where, i))
    elif isinstance(a, kiln.Tensor):
        assert a.dtype == b.dtype and tuple(a.shape) == tuple(b.shape), where
        # Generated kernels may round differently in the last bits.
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-5, atol=1e-6, err_msg=where)
    else:
        assert a == b, where


@pytest.mark.parametrize("name", sorted(ARGS))
def test_fused_results_equal_unfused(name):
    fused, fused_args = _run(name, fusion=True)
    unfused, unfused_args = _run(name, fusion=False)
    _assert_close(fused, unfused, "result")
    _assert_close(fused_args, unfused_args, "arguments")


def test_lstm_cell_is_one_group_with_its_chunks(kiln_unit):
    """One group that chunks the gates' terms: the products' sum accumulated
    in place and the two biases where sizes are known, else both products
    and both biases."""
    graph = kiln_fused_graph(kiln_unit, "lstm_cell")
    accumulated = [n.kind() for n in graph.nodes()].count("aten::addmm_")
    assert accumulated == (1 if kiln_unit.knows_sizes else 0)
    chunks = 4 - accumulated
    groups = [n for n in graph.nodes() if n.kind() == "prim::FusionGroup"]
    assert len(groups) == 1
    kinds = [n.kind() for n in groups[0].g("Subgraph").nodes()]
    assert kinds[:chunks] == ["prim::ConstantChunk"] * chunks
    assert all(n.inputs()[0].node().kind() == "prim::Param" for n in groups[0].g("Subgraph").nodes()[:chunks])
    assert len(groups[0].outputs()) == 2


@pytest.mark.parametrize(
    "shapes",
    [[(2, 3), (2, 3)], [(2, 3), (3,)], [(4, 1, 3), (1, 5, 1), (5, 3)], [(), (2,)], [(0, 3), (1, 3)]],
    ids=["same", "trailing", "three", "zero_dim", "empty"],
)
def test_broadcast_tensors(shapes):
    arrays = [_f32(*s) for s in shapes]
    ours = kiln.broadcast_tensors(convert(arrays, "kiln"))
    theirs = torch.broadcast_tensors(*convert(arrays, "torch"))
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs):
        assert tuple(a.shape) == tuple(b.shape)
        np.testing.assert_array_equal(a.numpy(), b.numpy())


def test_broadcast_tensors_mismatch_raises():
    with pytest.raises(RuntimeError):
        torch.broadcast_tensors(torch.ones(2, 3), torch.ones(4))
    with pytest.raises(RuntimeError, match="broadcast_tensors"):
        kiln.broadcast_tensors([kiln.ones(2, 3), kiln.ones(4)])
