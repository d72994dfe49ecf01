"""The graph executor's optimization pipeline (issue 6) keeps every result:
each program of script_programs.py runs without optimization, with the full
pipeline specialized to the arguments' shapes, and with the pipeline
specialized to ranks only, and the three agree exactly (values, dtypes, Python
types, mutated inputs, printed output, raised-or-not). The optimized graphs
are checked for what the pipeline promises: refined input types, no calls
left, nothing that dead code elimination, common subexpression elimination or
constant propagation could still remove."""
import os
import sys

import numpy as np
import pytest

import kiln
from conftest import convert

sys.path.insert(0, os.path.dirname(__file__))
from script_programs import PROGRAMS  # noqa: E402

# Programs kiln cannot compile yet (see test_script.py).
UNSUPPORTED = {"with_no_grad"}

_units = {}


def _unit(prog, variant):
    key = (prog["name"], variant)
    if key not in _units:
        _units[key] = kiln.compile(prog["src"])
    return _units[key]


class _Settings:
    """Executor settings for one variant, restored afterwards. Fusion is off:
    the passes here must keep results bit for bit, while generated kernels
    may differ in the last bits (test_fuser.py compares those)."""

    def __init__(self, optimize, shape_limit):
        self.optimize, self.shape_limit = optimize, shape_limit

    def __enter__(self):
        self.saved = (kiln._C._get_graph_executor_optimize(), kiln._C._get_shape_specialization_limit(),
                      kiln._C._jit_fusion_enabled())
        kiln._C._set_graph_executor_optimize(self.optimize)
        kiln._C._set_shape_specialization_limit(self.shape_limit)
        kiln._C._jit_set_fusion_enabled(False)

    def __exit__(self, *exc):
        kiln._C._set_graph_executor_optimize(self.saved[0])
        kiln._C._set_shape_specialization_limit(self.saved[1])
        kiln._C._jit_set_fusion_enabled(self.saved[2])


VARIANTS = {"plain": _Settings(False, 0), "shapes": _Settings(True, 4), "ranks": _Settings(True, 0)}


def _run(prog, variant, args, capsys):
    fn = getattr(_unit(prog, variant), prog["fn"])
    kargs = convert(list(args), "kiln")
    capsys.readouterr()
    with VARIANTS[variant]:
        try:
            result, error = fn(*kargs), None
        except Exception as e:  # noqa: BLE001 - compared below
            result, error = None, e
    return result, error, capsys.readouterr().out, kargs


def _plain(value):
    """A kiln value with tensors as numpy arrays, for exact comparison."""
    if isinstance(value, kiln.Tensor):
        return ("tensor", str(value.dtype), np.array(value.numpy(), copy=True))
    if isinstance(value, (list, tuple)):
        return (type(value).__name__, [_plain(v) for v in value])
    if isinstance(value, dict):
        return ("dict", [("item", [_plain(k), _plain(v)]) for k, v in value.items()])
    if isinstance(value, float) and value != value:
        return ("float", "nan")
    return (type(value).__name__, value)


def _assert_identical(a, b, where):
    pa, pb = _plain(a), _plain(b)
    _compare(pa, pb, where)


def _compare(a, b, where):
    assert a[0] == b[0], f"{where}: {a[0]} vs {b[0]}"
    if a[0] == "tensor":
        assert a[1] == b[1], f"{where}: dtype {a[1]} vs {b[1]}"
        assert a[2].shape == b[2].shape, f"{where}: shape {a[2].shape} vs {b[2].shape}"
        np.testing.assert_array_equal(a[2], b[2], err_msg=where)
    elif isinstance(a[1], list):
        assert len(a[1]) == len(b[1]), f"{where}: lengths differ"
        for i, (x, y) in enumerate(zip(a[1], b[1])):
            _compare(x, y, f"{where}[{i}]")
    else:
        assert a == b, f"{where}: {a} vs {b}"


CALLS = [pytest.param(p, i, id=f"{p['name']}-{i}") for p in PROGRAMS if p["name"] not in UNSUPPORTED
         for i in range(len(p["args"]))]


@pytest.mark.parametrize("prog, index", CALLS)
def test_optimization_keeps_results(prog, index, capsys):
    args = prog["args"][index]
    expected, expected_error, expected_out, expected_args = _run(prog, "plain", args, capsys)
    for variant in ("shapes", "ranks", "shapes"):  # the second "shapes" call reuses the cached plan
        result, error, out, kargs = _run(prog, variant, args, capsys)
        assert (error is None) == (expected_error is None), \
            f"{variant}: unoptimized raised {expected_error!r}, optimized raised {error!r}"
        assert out == expected_out, f"{variant}: printed output differs"
        if error is not None:
            assert str(error).splitlines()[-1] == str(expected_error).splitlines()[-1], variant
            continue
        _assert_identical(result, expected, f"{variant} result")
        _assert_identical(kargs, expected_args, f"{variant} arguments after the call")


def _graph_for(prog):
    fn = getattr(_unit(prog, "shapes"), prog["fn"])
    with VARIANTS["shapes"]:
        return fn.graph_for(*convert(list(prog["args"][0]), "kiln"))


def _nodes(block):
    for n in block.nodes():
        yield n
        for b in n.blocks():
            yield from _nodes(b)


GRAPHS = [pytest.param(p, id=p["name"]) for p in PROGRAMS if p["name"] not in UNSUPPORTED and p["args"]]


@pytest.mark.parametrize("prog", GRAPHS)
def test_optimized_graph_is_clean(prog):
    graph = _graph_for(prog)
    for value, arg in zip(graph.inputs(), prog["args"][0]):
        if isinstance(arg, np.ndarray):
            assert str(value.type()).startswith(("Float(", "Double(", "Long(", "Int(", "Bool(", "Short(",
                                                 "Char(", "Byte(", "Half(", "BFloat16(")), str(value)
    text = str(graph.copy())  # copies number their values alike
    for name in ("dce", "cse", "constant_propagation"):
        again = graph.copy()
        kiln._C._jit_pass(name, again)
        assert str(again) == text, f"{name} still changes the optimized graph:\n{text}"
    kinds = [n.kind() for n in _nodes(graph.block())]
    assert "prim::CallFunction" not in kinds, text


def test_shape_plans_then_one_rank_plan():
    """The first shapes of a dtype/rank signature get plans of their own with
    complete types; later shapes share one rank-level plan."""
    unit = kiln.compile("def f(x):\n    return x + 1\n")
    with VARIANTS["shapes"]:
        for n in range(1, 5):
            graph = unit.f.graph_for(kiln.ones(n, 3))
            assert f"Float({n}, 3, strides=[3, 1]" in str(graph.inputs()[0].type())
        assert unit.f.num_plans == 4
        graph = unit.f.graph_for(kiln.ones(7, 3))
        assert str(graph.inputs()[0].type()) == "Float(*, *, requires_grad=0, device=cpu)"
        unit.f.graph_for(kiln.ones(8, 3))
        assert unit.f.num_plans == 5
        # Another rank is another signature, with shape plans of its own.
        assert "Float(2, strides=[1]" in str(unit.f.graph_for(kiln.ones(2)).inputs()[0].type())
        assert unit.f.num_plans == 6
        # A transposed input has other strides: a plan of its own.
        unit = kiln.compile("def f(x):\n    return x + 1\n")
        unit.f.graph_for(kiln.ones(1, 3))
        graph = unit.f.graph_for(kiln.ones(3, 1).t())
        assert unit.f.num_plans == 2
        assert "Float(1, 3, strides=[1, 1]" in str(graph.inputs()[0].type())


def test_rank_only_specialization_as_the_legacy_executor():
    unit = kiln.compile("def f(x):\n    return x + 1\n")
    with VARIANTS["ranks"]:
        graph = unit.f.graph_for(kiln.ones(2, 3))
        unit.f.graph_for(kiln.ones(5, 3))
        assert unit.f.num_plans == 1
    assert str(graph.inputs()[0].type()) == "Float(*, *, requires_grad=0, device=cpu)"


def test_optimize_off_keeps_the_graph():
    src = "def f(x: int):\n    y = x + 1\n    z = x + 1\n    return y * z\n"
    unit = kiln.compile(src)
    with VARIANTS["plain"]:
        graph = unit.f.graph_for(3)
    assert str(graph).count("aten::add") == 2
    with VARIANTS["shapes"]:
        assert unit.f(3) == 16
