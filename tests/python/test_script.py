"""Differential tests of kiln's TorchScript frontend (issue 5): every program of
script_programs.py (the shared corpus included) is compiled from source by
torch 1.13 and by `kiln.compile`, run on copies of the same inputs, and the
results, Python types, mutated inputs, printed output and raised-or-not are
compared. The unoptimized graphs must have the same node kinds in the same
order (blocks included), and the schemas must print the same."""
import math  # noqa: F401  (torch resolves the sources' names in this module)
import os
import sys
from typing import Dict, List, Optional, Tuple  # noqa: F401

import pytest
import torch
from torch import Tensor  # noqa: F401

import kiln
from conftest import assert_same_values, convert

sys.path.insert(0, os.path.dirname(__file__))
from script_programs import PROGRAMS, kinds_diff, node_kinds  # noqa: E402

# Programs whose kiln graph is known to differ from torch's in node kinds,
# with the reason. A program listed here that starts matching fails too
# (strict xfail): take it off the list then.
KNOWN_GRAPH_DIFFS = {
}

# Programs kiln cannot compile yet, with the reason: every test of such a
# program is a strict xfail.
KNOWN_UNSUPPORTED = {
}


def _marks(name, known=None):
    reason = KNOWN_UNSUPPORTED.get(name) or (known or {}).get(name)
    return [pytest.mark.xfail(strict=True, reason=reason)] if reason else []

_torch_units = {}
_kiln_units = {}


def torch_unit(prog):
    if prog["name"] not in _torch_units:
        _torch_units[prog["name"]] = torch.jit.CompilationUnit(prog["src"], _frames_up=0)
    return _torch_units[prog["name"]]


def kiln_unit(prog):
    """kiln's compilation unit for the program, or the exception compiling raised."""
    if prog["name"] not in _kiln_units:
        try:
            _kiln_units[prog["name"]] = kiln.compile(prog["src"])
        except Exception as e:  # noqa: BLE001 - reported by the tests
            _kiln_units[prog["name"]] = e
    unit = _kiln_units[prog["name"]]
    if isinstance(unit, Exception):
        raise AssertionError(f"kiln.compile failed for {prog['name']}: {unit}") from unit
    return unit


def _user_message(error):
    """The last line of a TorchScript error when it carries a message the
    program chose (raise / assert), else None."""
    lines = [line for line in str(error).strip().splitlines() if line.strip()]
    if lines and ("builtins." in lines[-1] or "AssertionError" in lines[-1]):
        return lines[-1].strip()
    return None


def _call(fn, args, capsys):
    capsys.readouterr()
    try:
        result, error = fn(*args), None
    except Exception as e:  # noqa: BLE001 - compared below
        result, error = None, e
    return result, error, capsys.readouterr().out


CALLS = [pytest.param(p, i, id=f"{p['name']}-{i}", marks=_marks(p["name"]))
         for p in PROGRAMS for i in range(len(p["args"]))]


@pytest.mark.parametrize("prog, index", CALLS)
def test_run(prog, index, capsys):
    args = prog["args"][index]
    torch_fn = getattr(torch_unit(prog), prog["fn"])
    kiln_fn = getattr(kiln_unit(prog), prog["fn"])
    targs, kargs = convert(list(args), "torch"), convert(list(args), "kiln")
    t_result, t_error, t_out = _call(torch_fn, targs, capsys)
    k_result, k_error, k_out = _call(kiln_fn, kargs, capsys)
    if "raises" in prog:
        assert (t_error is not None) == prog["raises"], f"the corpus says raises={prog['raises']}; torch: {t_error!r}"
    assert (k_error is None) == (t_error is None), f"torch raised {t_error!r}; kiln raised {k_error!r}"
    assert k_out == t_out, "printed output differs"
    if t_error is not None:
        expected = _user_message(t_error)
        if expected is not None:
            assert expected in str(k_error), f"kiln's error lacks {expected!r}:\n{k_error}"
        return
    assert_same_values(k_result, t_result, prog["rtol"], 1e-6)
    assert_same_values(list(kargs), list(targs), prog["rtol"], 1e-6)


def _graph_params():
    return [pytest.param(p, id=p["name"], marks=_marks(p["name"], KNOWN_GRAPH_DIFFS)) for p in PROGRAMS]


@pytest.mark.parametrize("prog", _graph_params())
def test_graph_node_kinds(prog):
    """Every function of the program, not only the one called."""
    kiln_cu = kiln_unit(prog)
    for f in torch_unit(prog).get_functions():
        torch_kinds = node_kinds(str(f.graph))
        kiln_kinds = node_kinds(str(getattr(kiln_cu, f.name).graph))
        assert kiln_kinds == torch_kinds, f"function {f.name}:\n{kinds_diff(kiln_kinds, torch_kinds)}"


@pytest.mark.parametrize("prog", [pytest.param(p, id=p["name"], marks=_marks(p["name"])) for p in PROGRAMS])
def test_schema(prog):
    kiln_cu = kiln_unit(prog)
    for f in torch_unit(prog).get_functions():
        assert str(getattr(kiln_cu, f.name).schema) == str(f.schema)


def test_node_kinds_sees_blocks_and_outputless_nodes():
    text = str(torch.jit.CompilationUnit(
        "def f(x: int):\n    if x > 0:\n        raise ValueError('a')\n    return x\n", _frames_up=0).f.graph)
    assert node_kinds(text) == ["prim::Constant", "prim::Constant", "prim::Constant", "aten::gt", "prim::If",
                                "{", "prim::RaiseException", "}", "{", "}"]


def test_program_list_is_large_and_includes_the_corpus():
    names = [p["name"] for p in PROGRAMS]
    assert len(names) >= 150 + 17
    assert sum(n.startswith("corpus_") for n in names) == 17


def test_import_lines_are_accepted():
    """1.13's CompilationUnit refuses import lines; kiln accepts the ones issue 5 names."""
    body = "def f(x: Tensor, n: int) -> List[Tensor]:\n    return [x * math.pi for _ in range(n)]\n"
    header = "import torch\nimport math\nfrom torch import Tensor\nfrom typing import List, Optional\n\n"
    expected = torch.jit.CompilationUnit(body, _frames_up=0).f(torch.ones(2), 2)
    got = kiln.compile(header + body).f(kiln.ones(2), 2)
    assert_same_values(got, expected)
