"""Shape propagation (kiln/passes/analysis/shape_analysis.h) checked on every
program of script_programs.py: the function's graph gets input types from
the actual arguments (complete, and rank-only as the executor specializes),
kiln._C._propagate_shapes refines it, and every fact the refined types state
about a tensor the program computes (dtype, rank, sizes, strides,
requires_grad) must hold for the tensor the program actually computes:
graph outputs, and every tensor value of the graph's top-level block (the
graph is re-parsed with those values added to its outputs). A handful of
programs are also compared with torch 1.13's legacy executor (graph_for),
and the share of tensor values with a known dtype and rank is reported."""
import math  # noqa: F401  (torch resolves the sources' names in this module)
import os
import re
import sys
from typing import Dict, List, Optional, Tuple  # noqa: F401

import numpy as np
import pytest
import torch
from torch import Tensor  # noqa: F401

import kiln
from conftest import convert

sys.path.insert(0, os.path.dirname(__file__))
from script_programs import PROGRAMS  # noqa: E402

UNSUPPORTED = {"with_no_grad"}

SHORT_DTYPES = {"Float": "float32", "Double": "float64", "Long": "int64", "Int": "int32", "Short": "int16",
                "Char": "int8", "Byte": "uint8", "Bool": "bool", "Half": "float16", "BFloat16": "bfloat16"}


# --- reading types ------------------------------------------------------------------

def tensor_facts(text):
    """What an IR tensor type says: dtype, sizes (None entries unknown; the
    list None when the rank is), strides, requires_grad."""
    text = text.replace("[Undefined]", "")
    m = re.fullmatch(r"(\w+?)(Tensor)?(?:\((.*)\))?", text)
    if not m or (m.group(1) not in SHORT_DTYPES and m.group(1) != "Tensor"):
        return None
    name, suffix, body = m.groups()
    facts = {"dtype": SHORT_DTYPES.get(name), "sizes": None, "strides": None, "requires_grad": None}
    body = body or ""
    strides = re.search(r"strides=\[([^\]]*)\]", body)
    if strides:
        facts["strides"] = [int(s) for s in strides.group(1).split(",")]
        body = body.replace(strides.group(0), "")
    entries = [e.strip() for e in body.split(",") if e.strip()]
    sizes = [None if e == "*" else int(e) for e in entries if "=" not in e]
    for e in entries:
        if e.startswith("requires_grad="):
            facts["requires_grad"] = e.endswith("1")
    # `Float(...)` knows its rank (0 when nothing is listed); `FloatTensor` and
    # `Tensor(...)` without sizes do not.
    if sizes or (m.group(3) is not None and suffix is None and name != "Tensor"):
        facts["sizes"] = sizes
    return facts


def type_facts(t):
    """Facts of a kiln Type: a dict for tensors, a list for tuples, else None."""
    if t.kind() == "TensorType":
        return tensor_facts(str(t))
    if t.kind() == "TupleType":
        return [type_facts(c) for c in t.containedTypes()]
    return None


# --- checking facts against values ------------------------------------------------------

def kiln_dtype_name(t):
    return str(t.dtype).replace("kiln.", "")


def check_tensor(facts, value, where, torch_value=None):
    assert isinstance(value, kiln.Tensor), f"{where}: a tensor type for {value!r}"
    if facts["dtype"] is not None:
        assert facts["dtype"] == kiln_dtype_name(value), f"{where}: dtype {facts} vs {value.dtype}"
    if facts["sizes"] is not None:
        assert len(facts["sizes"]) == value.dim(), f"{where}: rank {facts} vs {tuple(value.shape)}"
        for i, s in enumerate(facts["sizes"]):
            assert s is None or s == value.shape[i], f"{where}: sizes {facts} vs {tuple(value.shape)}"
        if facts["strides"] is not None:
            assert facts["strides"] == list(value.stride()), f"{where}: strides {facts} vs {value.stride()}"
    if facts["requires_grad"] is not None:
        expected = torch_value.requires_grad if torch_value is not None else False
        assert facts["requires_grad"] == expected, f"{where}: requires_grad {facts} vs {expected}"


def check(facts, value, where, torch_value=None):
    if facts is None:
        return
    if isinstance(facts, list):
        assert isinstance(value, tuple) and len(value) == len(facts), f"{where}: {value!r}"
        for i, (f, v) in enumerate(zip(facts, value)):
            check(f, v, f"{where}[{i}]", torch_value[i] if torch_value is not None else None)
        return
    check_tensor(facts, value, where, torch_value)


# --- the graph with every top-level tensor value as an output --------------------------

DEF_RE = re.compile(r"^  (%.*?) = ")
NAME_TYPE_RE = re.compile(r"(%[\w.]+) : ")


def top_level_tensor_values(graph_text):
    """(name, type text) of the tensors the top-level block defines."""
    out = []
    for line in graph_text.splitlines():
        m = DEF_RE.match(line)
        if not m:
            continue
        for part in re.split(r", (?=%)", m.group(1)):
            name, _, type_text = part.partition(" : ")
            if tensor_facts(type_text) is not None:
                out.append((name, type_text))
    return out


def with_values_returned(graph_text):
    """The graph's IR with its output and its top-level tensors returned as
    one tuple, and their names and types."""
    values = top_level_tensor_values(graph_text)
    lines = graph_text.rstrip().splitlines()
    ret = re.fullmatch(r"  return \((%[\w.]+)\)", lines[-1])
    if not ret or not values:
        return None, values
    names = ", ".join(v[0] for v in values)
    types = ", ".join("Tensor" for _ in values)
    lines[-1:] = [f"  %__values : ({types}) = prim::TupleConstruct({names})",
                  f"  %__all : (Any, ({types})) = prim::TupleConstruct({ret.group(1)}, %__values)",
                  "  return (%__all)"]
    return "\n".join(lines) + "\n", values


# --- programs -----------------------------------------------------------------------------

_units = {}


def unit(prog):
    if prog["name"] not in _units:
        _units[prog["name"]] = kiln.compile(prog["src"])
    return _units[prog["name"]]


def run(fn, args):
    try:
        return fn(*args), None
    except Exception as e:  # noqa: BLE001 - a program may raise on purpose
        return None, e


CALLS = [pytest.param(p, i, id=f"{p['name']}-{i}") for p in PROGRAMS if p["name"] not in UNSUPPORTED
         for i in range(len(p["args"]))]

STATS = {"checked_values": 0, "graphs_with_values": 0, "graphs": 0}


@pytest.mark.parametrize("complete", [True, False], ids=["complete", "rank_only"])
@pytest.mark.parametrize("prog, index", CALLS)
def test_sound(prog, index, complete, capsys):
    cu = unit(prog)
    fn = getattr(cu, prog["fn"])
    args = prog["args"][index]
    result, error = run(fn, convert(list(args), "kiln"))
    capsys.readouterr()
    if error is not None or len(args) < len(fn.graph.inputs()):
        return  # nothing computed, or default arguments (the binding takes them all)
    graph = kiln._C._propagate_shapes(fn, tuple(convert(list(args), "kiln")), complete=complete)
    graph.lint()
    t_result, t_error = run(getattr(torch.jit.CompilationUnit(prog["src"], _frames_up=0), prog["fn"]),
                            convert(list(args), "torch"))
    capsys.readouterr()
    check(type_facts(graph.outputs()[0].type()), result, "output", t_result if t_error is None else None)
    STATS["graphs"] += 1
    text, values = with_values_returned(graph.str(False))
    if text is None:
        return
    name = f"__check_{prog['fn']}_{index}_{int(complete)}"
    check_fn = cu.create_function(name, kiln.parse_ir(text))
    returned, error = run(check_fn, convert(list(args), "kiln"))
    capsys.readouterr()
    assert error is None, f"the graph returning its values raised: {error}"
    computed = returned[1]
    for (value_name, type_text), value in zip(values, computed):
        check_tensor(tensor_facts(type_text), value, value_name)
        STATS["checked_values"] += 1
    STATS["graphs_with_values"] += 1


# --- operators, one by one ------------------------------------------------------------
#
# Each expression runs on argument combinations of several dtypes and shapes
# (0-dim, broadcasting, transposed); combinations kiln rejects are skipped.
# In rank-only mode the formulas decide; in complete mode mostly the run on
# stand-ins. Expressions marked `partial` may leave dtype or rank unknown
# when only ranks are known; every other one must know both.

_R = np.random.default_rng(7)

ARGS = {
    "f": lambda: _R.standard_normal((2, 3)).astype(np.float32),
    "d": lambda: _R.standard_normal((2, 3)),
    "l": lambda: _R.integers(-3, 4, (2, 3)).astype(np.int64),
    "i": lambda: _R.integers(-3, 4, (2, 3)).astype(np.int32),
    "b": lambda: _R.integers(0, 2, (2, 3)).astype(bool),
    "row": lambda: _R.standard_normal((3,)).astype(np.float32),
    "col": lambda: _R.standard_normal((2, 1)).astype(np.float32),
    "f0": lambda: np.array(1.5, dtype=np.float32),
    "d0": lambda: np.array(-2.5),
    "l0": lambda: np.array(2, dtype=np.int64),
    "ft": lambda: _R.standard_normal((3, 2)).astype(np.float32).T,
    "g": lambda: _R.standard_normal((3, 2)).astype(np.float32),
    "f3": lambda: _R.standard_normal((2, 3, 4)).astype(np.float32),
    "e": lambda: np.zeros((0, 3), dtype=np.float32),
}
FLOATS = ["f", "d", "f0", "ft", "f3", "e"]
ALL = ["f", "d", "l", "i", "b", "f0", "d0", "l0", "ft", "f3", "e"]
PAIRS = [("f", "f"), ("f", "d"), ("f", "l"), ("l", "i"), ("b", "l"), ("f", "row"), ("col", "row"), ("l", "f0"),
         ("i", "d0"), ("f0", "l0"), ("b", "b"), ("ft", "f"), ("f3", "row"), ("l0", "d0"), ("e", "row"),
         ("f", "g"), ("row", "row"), ("f3", "g"), ("row", "g"), ("e", "g"), ("g", "col")]

UNARY = ["torch.sin(a)", "torch.exp(a)", "torch.log1p(a)", "a.sqrt()", "torch.sigmoid(a)", "torch.tanh(a)",
         "a.reciprocal()", "torch.erf(a)", "a.abs()", "-a", "a.floor()", "a.ceil()", "a.round()", "a.trunc()",
         "a.sign()", "a.relu()", "torch.isnan(a)", "torch.isfinite(a)", "a.logical_not()", "a.bitwise_not()",
         "a.clone()", "a.contiguous()", "a.detach()", "torch.nn.functional.gelu(a)", "a.tril()", "a.flip([0])",
         "a.roll(1, 0)", "torch.frexp(a)", "a.angle()", "a.float()", "a.double()", "a.long()", "a.int()",
         "a.bool()", "a.to(torch.float64)", "a.to(torch.int32)", "a.type_as(a)", "torch.zeros_like(a)",
         "torch.ones_like(a, dtype=torch.int64)", "torch.full_like(a, 2)", "torch.empty_like(a)",
         "a.new_zeros([2, 2])", "a.new_full([3], 1.5)", "torch.adjoint(a)"]
BINARY = ["a + b", "a - b", "a * b", "a / b", "a // b", "a % b", "a ** b", "torch.atan2(a, b)",
          "torch.copysign(a, b)", "torch.fmod(a, b)", "torch.maximum(a, b)", "torch.max(a, b)", "a == b", "a < b",
          "a >= b", "a != b", "a & b", "a | b", "a ^ b", "torch.logical_and(a, b)", "torch.where(a > 0, a, b)",
          "torch.div(a, b, rounding_mode='floor')", "torch.div(a, b, rounding_mode='trunc')", "a.add(b, alpha=2)",
          "torch.lerp(a, b, 0.5)", "a.clamp(b)", "torch.addcmul(a, a, b)", "a.masked_fill(b > 0, 1.0)",
          "a.expand_as(b)", "a.type_as(b)", "a.to(b)", "torch.rsub(a, b)", "a.view_as(b)", "a.reshape_as(b)",
          "torch.cat([a, b])", "torch.cat([a, b], 1)", "torch.stack([a, b])", "torch.stack([a, b], -1)",
          "a.mm(b)", "a.matmul(b)", "a @ b", "torch.mv(a, b)", "torch.dot(a, b)", "torch.outer(a, b)",
          "torch.gcd(a, b)", "a << b", "torch.ldexp(a, b)"]
SCALAR = ["a + 2", "a + 2.5", "2 - a", "a / 2", "a // 2", "a % 3", "a ** 2", "a ** 0.5", "2 ** a",
          "a > 0", "a == 1.5", "a.clamp(0, 1)", "a.clamp(min=0.5)", "a.clamp(max=1)", "a.clamp(-1.5, 2)",
          "torch.where(a > 0, 1.0, 0)", "torch.where(a > 0, a, 2.5)", "a.masked_fill(a > 0, 2)", "a & 1",
          "a.pow(3)", "torch.remainder(2, a)", "a.fill_(1)", "a.add_(1)", "a.mul_(2.5)", "a.div_(2)",
          "a.clamp_(0, 1)", "a.zero_()", "a.neg_()", "a.sigmoid_()"]
REDUCE = ["a.sum()", "a.sum(0)", "a.sum(-1, keepdim=True)", "a.sum([0, 1])", "a.sum(dtype=torch.float64)",
          "a.mean()", "a.mean(0)", "a.mean([-1], True)", "a.max()", "a.min()", "a.max(0)", "a.min(-1, True)",
          "a.argmax()", "a.argmax(0)", "a.argmin(1, keepdim=True)", "a.std()", "a.var(0)", "a.std(0, keepdim=True)",
          "torch.var_mean(a, 1)", "torch.std_mean(a)", "torch.logsumexp(a, 0)", "a.cumsum(0)", "a.cumprod(-1)",
          "a.cumsum(0, dtype=torch.float64)", "a.prod()", "a.prod(1)", "a.all()", "a.any(0)", "a.all(1, True)",
          "a.norm()", "a.norm(2, 1)", "a.amax(0)", "a.amin([0, 1])", "a.softmax(0)", "a.log_softmax(-1)",
          "a.softmax(1, dtype=torch.float64)", "a.sort()", "a.sort(0, True)", "a.argsort(0)", "a.msort()",
          "a.topk(1)", "a.topk(1, 0, False)"]
SHAPE = ["a.view(-1)", "a.view(3, 2)", "a.view(a.size(1), a.size(0))", "a.view(-1, a.size(-1))",
         "a.reshape(1, -1)", "a.reshape([6])", "a.flatten()", "a.flatten(1)", "a.ravel()", "a.unflatten(1, (3, 1))",
         "a.unsqueeze(0)", "a.unsqueeze(-1)", "a.squeeze()", "a.squeeze(0)", "a.transpose(0, -1)", "a.t()", "a.T",
         "a.permute(1, 0)", "a.permute(-1, 0, 1)", "a.movedim(0, -1)", "a.expand(4, 2, 3)",
         "a.expand(-1, 3)", "a.select(0, 1)", "a[0]", "a[-1]", "a[:, 1]", "a[1:]", "a[:, ::2]", "a[..., 0]",
         "a[None]", "a[:, None, 1:]", "a.narrow(1, 1, 2)", "a.index_select(1, torch.tensor([0, 2, 2]))",
         "a.diagonal()", "a.unfold(1, 2, 1)", "a.repeat(2, 1)", "a.repeat(2, 1, 2)",
         "a.gather(1, torch.zeros(2, 2, dtype=torch.long))", "a.take(torch.tensor([[0, 1]]))",
         "a[torch.tensor([1, 0])]", "a[torch.tensor([0, 1]), torch.tensor([2, 2])]", "a[a > 0]", "a[:, a[0] > 0]",
         "a.nonzero()", "a.masked_select(a > 0)", "a.chunk(2, 1)", "a.split(2, 1)", "a.split([1, 2], 1)",
         "a.unbind(0)", "a.tensor_split(2, 1)", "a.tensor_split([1], 1)", "torch.where(a > 0)",
         "a.scatter(1, torch.zeros(2, 1, dtype=torch.long), 1.0)", "a.index_fill(1, torch.tensor([0]), -1.0)",
         "a.index_put_((torch.tensor([0]),), torch.tensor(5.0))", "a.as_strided([2, 2], [1, 2])",
         "a.swapaxes(0, 1)", "a.diagonal(1)", "a.unsqueeze_(0)", "a.t_()", "a.squeeze_(0)"]
FACTORIES = ["torch.zeros(2, 3)", "torch.zeros([n, 2])", "torch.ones(n, dtype=torch.int64)", "torch.full([2], 7)",
             "torch.full((n,), 1.5)", "torch.empty(3)", "torch.rand(2, n)",
             "torch.randn(n)", "torch.randint(5, (2, n))", "torch.randperm(n)", "torch.arange(n)",
             "torch.arange(1, n, 2)", "torch.arange(0.0, 1.0, 0.25)", "torch.arange(n, dtype=torch.float64)",
             "torch.linspace(0, 1, n)", "torch.eye(n)", "torch.eye(2, n)", "torch.tensor(1.5)", "torch.tensor(n)",
             "torch.tensor([1, 2, n])", "torch.tensor([[1.0], [2.0]])", "torch.tensor([True], dtype=torch.float64)",
             "torch.scalar_tensor(n)", "torch.zeros(2, 3).t()", "torch.ones(2) + torch.arange(n)"]

# Facts a rank-only input cannot give (sizes decide them), or value-dependent.
PARTIAL = {"a.squeeze()", "a.squeeze(0)", "a.chunk(2, 1)", "a.split(2, 1)",
           "a.split([1, 2], 1)", "a.unbind(0)", "a.tensor_split(2, 1)", "a.tensor_split([1], 1)", "torch.where(a > 0)",
           "a.squeeze_(0)", "a.unsqueeze_(0)", "a.t_()", "a.sum([0, 1])", "a.amin([0, 1])"}


def op_cases():
    cases = []
    for e in UNARY + SCALAR + REDUCE + SHAPE:
        cases += [(e, (k,)) for k in (ALL if e not in SHAPE else ["f", "l", "b", "ft", "f3", "e", "f0"])]
    for e in BINARY:
        cases += [(e, pair) for pair in PAIRS]
    return cases


_op_units = {}


def op_unit(expr, nargs):
    key = (expr, nargs)
    if key not in _op_units:
        params = ", ".join(["a: Tensor", "b: Tensor"][:nargs])
        _op_units[key] = kiln.compile(f"def f({params}):\n    return {expr}\n")
    return _op_units[key]


def outputs_facts(facts):
    return facts if isinstance(facts, list) else [facts]


@pytest.mark.parametrize("expr", sorted({e for e, _ in op_cases()}))
def test_op_sound(expr):
    """Soundness of every formula and of the run on stand-ins, over dtypes and shapes."""
    ran = 0
    for e, keys in op_cases():
        if e != expr:
            continue
        fn = op_unit(expr, len(keys)).f
        arrays = [ARGS[k]() for k in keys]
        result, error = run(fn, convert(arrays, "kiln"))
        if error is not None:
            continue
        ran += 1
        for complete in (True, False):
            graph = kiln._C._propagate_shapes(fn, tuple(convert(arrays, "kiln")), complete=complete)
            facts = type_facts(graph.outputs()[0].type())
            where = f"{expr} on {keys} ({'complete' if complete else 'rank-only'})"
            check(facts, result, where)
            if complete or expr in PARTIAL or graph.outputs()[0].type().kind() != "TensorType":
                continue
            assert facts["dtype"] is not None and facts["sizes"] is not None, f"{where}: not refined: {facts}"
    assert ran > 0, f"{expr} raised on every argument combination"


@pytest.mark.parametrize("expr", FACTORIES)
def test_factory_sound(expr):
    fn = kiln.compile(f"def f(n: int):\n    return {expr}\n").f
    for n in (3, 0):
        result, error = run(fn, [n])
        if error is not None:
            continue
        graph = kiln._C._propagate_shapes(fn, (n,))
        facts = type_facts(graph.outputs()[0].type())
        check(facts, result, expr)
        assert facts["dtype"] is not None and facts["sizes"] is not None, f"{expr}: not refined: {facts}"


# --- requires_grad, against torch -------------------------------------------------------

_make = kiln.compile("""
def requiring_grad(values: List[float], dtype: int) -> Tensor:
    return torch.tensor(values, dtype=dtype, requires_grad=True)
""")


def requiring_grad(array):
    """A kiln tensor holding `array` that requires grad."""
    dtype = {np.dtype(np.float32): 6, np.dtype(np.float64): 7}[array.dtype]
    flat = _make.requiring_grad([float(v) for v in array.ravel()], dtype)
    return flat.view(list(array.shape)) if array.ndim != 1 else flat


def with_grad(args):
    """The argument tuples of a program with every float array made to
    require grad (kiln and torch versions), or None when none is float."""
    floats = [i for i, a in enumerate(args) if isinstance(a, np.ndarray) and a.dtype in (np.float32, np.float64)]
    if not floats:
        return None
    kargs, targs = convert(list(args), "kiln"), convert(list(args), "torch")
    for i in floats:
        kargs[i] = requiring_grad(args[i])
        targs[i] = targs[i].requires_grad_()
    return kargs, targs


GRAD_CALLS = [pytest.param(p, i, id=f"{p['name']}-{i}") for p in PROGRAMS if p["name"] not in UNSUPPORTED
              for i in range(len(p["args"])) if with_grad(p["args"][i]) is not None]


@pytest.mark.parametrize("complete", [True, False], ids=["complete", "rank_only"])
@pytest.mark.parametrize("prog, index", GRAD_CALLS)
def test_requires_grad_matches_torch(prog, index, complete, capsys):
    """Inputs that require grad: the refined output types agree with what
    torch computes (requires_grad included; kiln has no autograd to run)."""
    args = prog["args"][index]
    fn = getattr(unit(prog), prog["fn"])
    if len(args) < len(fn.graph.inputs()):
        return
    kargs, targs = with_grad(args)
    t_result, t_error = run(getattr(torch.jit.CompilationUnit(prog["src"], _frames_up=0), prog["fn"]), targs)
    capsys.readouterr()
    if t_error is not None:
        return
    graph = kiln._C._propagate_shapes(fn, tuple(kargs), complete=complete)
    check_against_torch(type_facts(graph.outputs()[0].type()), t_result, "output")


def check_against_torch(facts, value, where):
    if facts is None:
        return
    if isinstance(facts, list):
        for i, f in enumerate(facts):
            check_against_torch(f, value[i], f"{where}[{i}]")
        return
    assert isinstance(value, torch.Tensor), f"{where}: a tensor type for {value!r}"
    if facts["dtype"] is not None:
        assert facts["dtype"] == str(value.dtype).replace("torch.", ""), f"{where}: {facts} vs {value.dtype}"
    if facts["sizes"] is not None:
        assert len(facts["sizes"]) == value.dim(), f"{where}: {facts} vs {tuple(value.shape)}"
        assert all(s is None or s == value.shape[i] for i, s in enumerate(facts["sizes"])), f"{where}: {facts}"
    if facts["requires_grad"] is not None:
        assert facts["requires_grad"] == value.requires_grad, f"{where}: {facts} vs {value.requires_grad}"


# --- against torch 1.13's legacy executor --------------------------------------------------

# Programs whose graph_for types are compared with kiln's, value by value
# (values matched by debug name), with the differences 1.13 has: where it
# knows a fact kiln must know the same; kiln may know more.
GRAPH_FOR_PROGRAMS = ["torch_pointwise", "torch_reductions", "torch_creation", "torch_shape_ops", "corpus_iou",
                      "assign_unpack_chunk", "tensor_int_div_true_division"]
# 1.13's requires-grad analysis says requires_grad=1 for a cat of tensors
# that do not require grad; kiln says 0 (and torch computes False).
KNOWN_TORCH_DIFFS = {("requires_grad", "aten::cat")}


def value_types(graph):
    """{debug name: (type text, node kind)} of every tensor value, blocks included."""
    out = {}

    def walk(nodes):
        for n in nodes:
            for o in n.outputs():
                if o.type().kind() == "TensorType":
                    out[o.debugName()] = (str(o.type()), n.kind())
            for b in n.blocks():
                walk(b.nodes())
    walk(graph.nodes())
    return out


@pytest.mark.parametrize("name", GRAPH_FOR_PROGRAMS)
def test_agrees_with_torch_graph_for(name):
    prog = next(p for p in PROGRAMS if p["name"] == name)
    args = prog["args"][0]
    torch._C._jit_set_profiling_executor(False)
    torch._C._jit_set_profiling_mode(False)
    try:
        cu = torch.jit.CompilationUnit(prog["src"], _frames_up=0)
        targs = convert(list(args), "torch")
        getattr(cu, prog["fn"])(*targs)
        torch_types = value_types(getattr(cu, prog["fn"]).graph_for(*targs))
    finally:
        torch._C._jit_set_profiling_executor(True)
        torch._C._jit_set_profiling_mode(True)
    kiln_types = value_types(kiln._C._propagate_shapes(getattr(unit(prog), prog["fn"]),
                                                       tuple(convert(list(args), "kiln")), complete=False))
    compared = 0
    for value, (torch_text, kind) in torch_types.items():
        if value not in kiln_types:
            continue
        t, k = tensor_facts(torch_text), tensor_facts(kiln_types[value][0])
        for fact in ("dtype", "sizes", "requires_grad"):
            if t[fact] is None or (fact, kind) in KNOWN_TORCH_DIFFS:
                continue
            assert k[fact] is not None, f"%{value} ({kind}): 1.13 knows {fact}: {torch_text}; kiln: {kiln_types[value][0]}"
            if fact == "sizes":
                assert len(k[fact]) == len(t[fact]), f"%{value}: {torch_text} vs {kiln_types[value][0]}"
                assert all(a is None or b is None or a == b for a, b in zip(k[fact], t[fact])), f"%{value}"
            else:
                assert k[fact] == t[fact], f"%{value} ({kind}): {torch_text} vs {kiln_types[value][0]}"
        compared += 1
    assert compared > 0


# --- coverage ---------------------------------------------------------------------------------

def count_known(graph):
    counts = {"values": 0, "dtype": 0, "rank": 0, "complete": 0}
    for text, _ in value_types(graph).values():
        f = tensor_facts(text)
        counts["values"] += 1
        counts["dtype"] += f["dtype"] is not None
        counts["rank"] += f["sizes"] is not None
        counts["complete"] += f["strides"] is not None
    return counts


def test_coverage(capsys):
    """How many tensor values of the programs (first arguments of each) end
    with a known dtype and rank: the graphs as compiled, after propagation
    from rank-only inputs (what the executor specializes) and from complete
    ones."""
    totals = {mode: {"values": 0, "dtype": 0, "rank": 0, "complete": 0} for mode in ("before", "rank_only", "complete")}
    for prog in PROGRAMS:
        if prog["name"] in UNSUPPORTED:
            continue
        fn = getattr(unit(prog), prog["fn"])
        args = prog["args"][0]
        if len(args) < len(fn.graph.inputs()) or run(fn, convert(list(args), "kiln"))[1] is not None:
            continue
        graphs = {"before": fn.graph,
                  "rank_only": kiln._C._propagate_shapes(fn, tuple(convert(list(args), "kiln")), complete=False),
                  "complete": kiln._C._propagate_shapes(fn, tuple(convert(list(args), "kiln")), complete=True)}
        for mode, graph in graphs.items():
            for key, n in count_known(graph).items():
                totals[mode][key] += n
    capsys.readouterr()
    with capsys.disabled():
        for mode, t in totals.items():
            print(f"\nshape propagation coverage ({mode}): {t['dtype']}/{t['values']} tensor values with a dtype, "
                  f"{t['rank']} with a rank, {t['complete']} complete")
    assert totals["rank_only"]["rank"] >= 0.9 * totals["rank_only"]["values"]


GRAD_PAIRS = [("f", "f"), ("f", "d"), ("f", "row"), ("l", "f"), ("f", "g"), ("row", "row"), ("f3", "g")]


@pytest.mark.parametrize("expr", BINARY + UNARY + SCALAR + REDUCE + SHAPE)
def test_op_requires_grad_matches_torch(expr):
    """One operand requiring grad at a time: requires_grad of the result as
    torch computes it (x.to(y), x.view_as(y), ... do not take y's)."""
    nargs = 2 if expr in BINARY else 1
    fn = op_unit(expr, nargs).f
    params = ", ".join(["a: Tensor", "b: Tensor"][:nargs])
    try:
        tfn = torch.jit.CompilationUnit(f"def f({params}):\n    return {expr}\n").f
    except RuntimeError:
        pytest.skip("TorchScript 1.13 does not compile it")  # e.g. Tensor.bool()
    for keys in (GRAD_PAIRS if nargs == 2 else [("f",), ("d",), ("f3",), ("f0",)]):
        arrays = [ARGS[k]() for k in keys]
        for which in range(nargs):
            if arrays[which].dtype not in (np.float32, np.float64):
                continue
            kargs, targs = convert(arrays, "kiln"), convert(arrays, "torch")
            kargs[which] = requiring_grad(arrays[which])
            targs[which] = targs[which].requires_grad_()
            t_result, t_error = run(tfn, targs)
            if t_error is not None:
                continue
            for complete in (True, False):
                graph = kiln._C._propagate_shapes(fn, tuple(kargs), complete=complete)
                check_against_torch(type_facts(graph.outputs()[0].type()), t_result,
                                    f"{expr} on {keys}, operand {which} requiring grad")
