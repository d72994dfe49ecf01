"""Inlining and loop unrolling keep results: every program of
script_programs.py (the shared corpus included) is compiled by kiln, its
called function's graph inlined and its loops unrolled (`kiln opt FILE.py FN
-p inline,unroll_loops,dce`), and the graph that comes out runs on the same
inputs as the function as compiled: same results, bit for bit, same mutated
inputs, same printed output, same raised-or-not. Plus loops around the unroll
factor from source, with trip counts that are 0, 1, 7, 8, 9, 17 or negative;
and unrolled IR compared node for node (names included) with what torch
1.13's torch._C._jit_pass_loop_unrolling makes of the same IR text."""
import math  # noqa: F401  (torch resolves the sources' names in this module)
import os
import re
import subprocess
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
from test_script import KNOWN_UNSUPPORTED  # noqa: E402

ROOT = os.path.join(os.path.dirname(__file__), "..", "..")
KILN = os.path.join(os.environ.get("KILN_BUILD_DIR", os.path.join(ROOT, "build")), "kiln")


def optimized_graph(tmp_path, src, fn, passes="inline,unroll_loops,dce"):
    path = tmp_path / "program.py"
    path.write_text(src)
    out = subprocess.run([KILN, "opt", str(path), fn, "-p", passes], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    return out.stdout


def plain(value):
    """A value with tensors as (dtype, shape, bytes): compared bit for bit."""
    if isinstance(value, kiln.Tensor):
        array = value.numpy()
        return ("tensor", str(array.dtype), array.shape, array.tobytes())
    if isinstance(value, (list, tuple)):
        return (type(value).__name__, [plain(v) for v in value])
    if isinstance(value, dict):
        return ("dict", [(plain(k), plain(v)) for k, v in value.items()])
    if isinstance(value, float) and value != value:
        return ("float", "nan")
    return (type(value).__name__, value)


def outcome(fn, args, capsys, defaults=()):
    """(result, raised, printed, the arguments after the call)."""
    kiln.manual_seed(0)
    kargs = convert(list(args), "kiln")
    capsys.readouterr()
    try:
        result, raised = plain(fn(*kargs, *defaults)), False
    except Exception:  # noqa: BLE001 - compared by the caller
        result, raised = None, True
    return result, raised, capsys.readouterr().out, plain(kargs)


def defaults(prog, args):
    """The default values of the arguments after `args`: a function made from
    a graph has none. torch's schema holds them as Python values."""
    schema = getattr(torch.jit.CompilationUnit(prog["src"], _frames_up=0), prog["fn"]).schema
    return tuple(convert(a.default_value, "kiln") for a in schema.arguments[len(args):])


# IR text names class types but cannot carry their methods: a graph still
# entering an object (`with torch.no_grad():`) cannot run once reparsed.
NEEDS_CLASS_METHODS = {"with_no_grad"}
RUNNABLE = [pytest.param(p, id=p["name"]) for p in PROGRAMS
            if p["name"] not in KNOWN_UNSUPPORTED and p["name"] not in NEEDS_CLASS_METHODS]


@pytest.mark.parametrize("prog", RUNNABLE)
def test_same_results_after_inlining_and_unrolling(prog, tmp_path, capsys):
    text = optimized_graph(tmp_path, prog["src"], prog["fn"])
    assert "prim::CallFunction" not in text
    compiled = getattr(kiln.compile(prog["src"]), prog["fn"])
    graph = kiln.parse_ir(text)
    optimized = kiln.function_from_graph(prog["fn"], graph)
    for args in prog["args"]:
        missing = defaults(prog, args) if len(args) < len(graph.inputs()) else ()
        assert outcome(optimized, args, capsys, missing) == outcome(compiled, args, capsys), text


LOOPS = '''
def counter(n: int, x: Tensor):
    k = 1
    out: List[int] = []
    for i in range(n):
        k = k * 2 + i
        x = x + i
        out.append(i)
    return k, x, out

def nested(n: int, p: int):
    k = 1
    for i in range(n):
        for j in range(p):
            k = (k * i + j) % 1000 + i
    return k

def from_range(a: int, b: int, step: int):
    s: List[int] = []
    for i in range(a, b, step):
        s.append(i)
    return s

def helper(x: int, i: int):
    return x * 3 + i

def calls(n: int):
    x = 0
    for i in range(n):
        x = helper(x, i) % 10007
    return x
'''

CONSTANT_LOOP = '''
def constant(x: Tensor):
    s = 0
    for i in range(TRIP):
        s += i * i
        x = x * 2 - i
    return s, x
'''

TRIPS = [0, 1, 7, 8, 9, 17, -3]


def unrolled(tmp_path, src, fn):
    text = optimized_graph(tmp_path, src, fn)
    return kiln.function_from_graph(fn, kiln.parse_ir(text)), text


@pytest.mark.parametrize("fn, args", [
    ("counter", [(n, np.ones(3, np.float32)) for n in TRIPS]),
    ("nested", [(n, p) for n in TRIPS for p in (0, 1, 8, 9)]),
    ("from_range", [(a, b, s) for a in (-5, 0, 3) for b in (-9, 0, 9, 40) for s in (1, 2, 3, -1, -4)]),
    ("calls", [(n,) for n in TRIPS + [70]]),
])
def test_loops_around_the_unroll_factor(fn, args, tmp_path, capsys):
    optimized, text = unrolled(tmp_path, LOOPS, fn)
    assert "aten::__round_to_zero_floordiv" in text
    compiled = getattr(kiln.compile(LOOPS), fn)
    for a in args:
        assert outcome(optimized, a, capsys) == outcome(compiled, a, capsys), a


@pytest.mark.parametrize("trip", [0, 1, 7, 8, 9, 17, -3, 63, 64])
def test_constant_trip_counts(trip, tmp_path, capsys):
    src = CONSTANT_LOOP.replace("TRIP", str(trip))
    optimized, text = unrolled(tmp_path, src, "constant")
    assert ("prim::Loop" in text) == (trip >= 64)
    compiled = kiln.compile(src).constant
    x = np.arange(4, dtype=np.float32)
    assert outcome(optimized, (x,), capsys) == outcome(compiled, (x,), capsys)


# --- the unrolled graph node for node against torch 1.13 ----------------------------

def numbered_values_renamed(ir):
    """Numbered values (%12) renamed %v<n> in order of appearance, named ones
    kept; source locations dropped."""
    names = {}

    def rename(match):
        return names.setdefault(match.group(0), f"%v{len(names)}")

    lines = [line.split(" # ")[0].rstrip() for line in ir.strip().splitlines()]
    return re.sub(r"%[0-9]+\b", rename, "\n".join(lines))


BODIES = {
    "counter": """
      %a : int = aten::mul(%k.1, %i)
      %b : int = aten::add(%a, %one)
      -> (%t, %b)""",
    "no_counter": """
      %a : int = aten::mul(%k.1, %k.1)
      -> (%t, %a)""",
    "list_write": """
      %a : int[] = aten::append(%l, %i)
      -> (%t, %k.1)""",
    "if": """
      %c : bool = aten::gt(%i, %one)
      %r : int = prim::If(%c)
        block0():
          %a : int = aten::mul(%k.1, %i)
          -> (%a)
        block1():
          %b : int = aten::add(%k.1, %one)
          -> (%b)
      -> (%t, %r)""",
    "inner_constant": """
      %three : int = prim::Constant[value=3]()
      %m : int = prim::Loop(%three, %t, %k.1)
        block0(%j : int, %m.1 : int):
          %a : int = aten::mul(%m.1, %i)
          %b : int = aten::add(%a, %j)
          -> (%t, %b)
      -> (%t, %m)""",
    "inner_variable": """
      %m : int = prim::Loop(%n, %t, %k.1)
        block0(%j : int, %m.1 : int):
          %a : int = aten::mul(%m.1, %i)
          -> (%t, %a)
      -> (%t, %m)""",
    "while": """
      %c : bool = aten::lt(%k.1, %n)
      -> (%c, %k.1)""",
}


def loop_ir(trip, body):
    return f"""
graph(%n : int, %l : int[]):
  %t : bool = prim::Constant[value=1]()
  %one : int = prim::Constant[value=1]()
  %c : int = prim::Constant[value={trip if trip != "n" else 0}]()
  %k : int = prim::Loop({"%n" if trip == "n" else "%c"}, %t, %one)
    block0(%i : int, %k.1 : int):{body}
  return (%k)
"""


@pytest.mark.parametrize("trip", ["n", 0, 1, 5, 64])
@pytest.mark.parametrize("body", list(BODIES))
def test_unrolled_graph_matches_torch(trip, body, tmp_path):
    ir = loop_ir(trip, BODIES[body])
    path = tmp_path / "loop.ir"
    path.write_text(ir)
    out = subprocess.run([KILN, "opt", str(path), "-p", "unroll_loops"], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    expected = torch._C.parse_ir(ir)
    torch._C._jit_pass_loop_unrolling(expected)
    assert numbered_values_renamed(out.stdout) == numbered_values_renamed(str(expected))
