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


def test_zz_stats():
    print(STATS)
