"""Differential tests of TorchScript's builtins and forms (issue 20, item 2):
torch.jit.isinstance on containers, hash(), dict(...), slice() objects and
Ellipsis, `%` formatting, f-strings, tensordot, tril/triu_indices, the
Tensor properties mT/mH/H, cpu() and narrow_copy. Each program is compiled
by torch 1.13 and by kiln and run on copies of the same inputs; results,
Python types, and raised errors (with their messages) must agree."""
import math  # noqa: F401  (torch resolves the sources' names in this module)
from typing import Any, Dict, List, Optional, Tuple  # noqa: F401

import numpy as np
import pytest
import torch
from torch import Tensor  # noqa: F401

import kiln
from conftest import assert_same_values, check_both, convert, script_graph_text

_X = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
_M = np.arange(6, dtype=np.float32).reshape(2, 3)

# name -> (source of `f`, argument tuples)
PROGRAMS = {
    # torch.jit.isinstance: container types, refinement, Optional, nesting
    "isinstance_list_refines": ("""
def f(x: Any) -> int:
    if torch.jit.isinstance(x, List[Tensor]):
        return len(x) + int(x[0].sum())
    if torch.jit.isinstance(x, List[int]):
        return x[0]
    return -1
""", [([np.ones(2, np.float32)],), ([5, 6],), (["a"],), ((1, 2),)]),
    "isinstance_dict_refines": ("""
def f(x: Any) -> int:
    if torch.jit.isinstance(x, Dict[str, int]):
        return x["a"]
    if torch.jit.isinstance(x, Dict[str, str]):
        return len(x["a"])
    return -1
""", [({"a": 3},), ({"a": "xyz"},), ({1: 2},)]),
    "isinstance_static": ("""
def f(x: List[int], y: Dict[str, Tensor]) -> List[bool]:
    return [torch.jit.isinstance(x, List[int]), torch.jit.isinstance(x, List[float]),
            torch.jit.isinstance(y, Dict[str, Tensor]), torch.jit.isinstance(y, Dict[int, Tensor])]
""", [([1], {"a": _M})]),
    "isinstance_optional": ("""
def f(x: Optional[List[int]]) -> int:
    if torch.jit.isinstance(x, List[int]):
        return len(x)
    return -1
""", [([1, 2, 3],), (None,)]),
    "isinstance_optional_type": ("""
def f(x: Any) -> Tuple[bool, bool]:
    return torch.jit.isinstance(x, Optional[Tensor]), torch.jit.isinstance(x, Optional[str])
""", [(None,), (_M,), ("s",)]),
    "isinstance_tuple_nested": ("""
def f(x: Any) -> int:
    if torch.jit.isinstance(x, Tuple[Dict[str, Tuple[str, int]], List[bool], Optional[str]]):
        return x[0]["a"][1] + len(x[1])
    return -1
""", [(({"a": ("q", 7)}, [True, False], None),), ((1, 2),)]),
    "isinstance_while": ("""
def f(x: Any) -> int:
    count = 0
    while torch.jit.isinstance(x, List[Dict[str, int]]) and count <= 2:
        count = count + 1
    return count
""", [([{"a": 1}],), ([1],)]),
    "isinstance_no_contained_type": ("""
def f(x: Any) -> bool:
    return torch.jit.isinstance(x, List)
""", [([1],)]),
    # hash(): 1.13's values for ints, floats, strings, bools, None and tuples
    "hash_values": ("""
def f(i: int, x: float, s: str, b: bool) -> List[int]:
    return [hash(i), hash(x), hash(s), hash(b), hash(None), hash((i, s)), hash(torch.device("cpu"))]
""", [(0, 0.0, "", False), (-123, 1.2345, "foo", True), (2 ** 62, -0.0, "abc", True), (5, float("inf"), "é", False),
      (1, float("nan"), "a b", True)]),
    "hash_tensor_identity": ("""
def f(t1: Tensor, t2: Tensor) -> Tuple[bool, bool]:
    return hash(t1) == hash(t1), hash(t1) == hash(t2)
""", [(_M, _M)]),
    "hash_unhashable": ("""
def f(t: Tuple[int, List[int]]) -> int:
    return hash(t)
""", [((1, [2]),)]),
    # dict(...)
    "dict_forms": ("""
def f(keys: List[str], values: List[int], d: Dict[str, int]) -> List[Dict[str, int]]:
    empty: Dict[str, int] = dict()
    copy = dict(d)
    copy["new"] = 0
    return [empty, dict([("a", 1), ("b", 2)]), dict(zip(keys, values)), copy, d, dict(a=1, b=2), dict(d, z=26)]
""", [(["x", "y", "z"], [1, 2], {"k": 5})]),
    "dict_default_type": ("""
def f() -> Dict[str, Tensor]:
    return dict()
""", [()]),
    "dict_int_keys": ("""
def f(pairs: List[Tuple[int, float]]) -> Dict[int, float]:
    return dict(pairs)
""", [([(1, 2.0), (3, 4.5), (1, 0.5)],)]),
    # slice() objects and Ellipsis
    "slice_list": ("""
def f(x: List[int]) -> List[List[int]]:
    s = slice(1, 3)
    return [x[s], x[slice(5)], x[slice(None)], x[slice(None, None, None)], x[slice(0, 6, 2)], x[slice(1000)],
            x[slice(None, None, -1)], x[slice(3, None, -1)], x[slice(-2, None)]]
""", [(list(range(10)),)]),
    "slice_str": ("""
def f(x: str) -> List[str]:
    return [x[slice(None, 3, 1)], x[slice(2)], x[slice(None, None, -1)]]
""", [("foo_bar",)]),
    "slice_tensor": ("""
def f(x: Tensor) -> List[Tensor]:
    return [x[slice(None, 1)], x[slice(0, 2), 1], x[slice(None, 3, 1), ...], x[Ellipsis, 1], x[..., slice(1, None, 2)],
            x[0, Ellipsis, None]]
""", [(_X,)]),
    "slice_tuple_and_dynamic": ("""
def f(t: Tuple[int, int, int], x: List[int], a: int, b: int) -> Tuple[Tuple[int, int], List[int]]:
    return t[slice(0, 2)], x[slice(a, b)]
""", [((1, 2, 3), [1, 2, 3, 4], 1, 3), ((1, 2, 3), [1, 2, 3, 4], -1, 9)]),
    "slice_keyword": ("""
def f(x: List[int]) -> List[int]:
    return x[slice(1, stop=2)]
""", [([1, 2, 3],)]),
    "dict_items_and_empty": ("""
def f(d: Dict[str, int]) -> Tuple[Dict[str, int], Dict[str, int]]:
    x: List[Tuple[str, int]] = []
    return dict(d.items()), dict(x)
""", [({"a": 1, "b": 2},)]),
    "slice_assign": ("""
def f(x: Tensor) -> Tensor:
    x[slice(0, 1)] = 5.0
    x[Ellipsis, 0] = -1.0
    return x
""", [(_X,)]),
    # % formatting (aten::percentFormat) and its errors
    "percent_format": ("""
def f(a: str, n: int, x: float) -> List[str]:
    return ["%d items" % n, "%s %s" % (a, n), "%s in template %%" % a, "%i|%e|%E|%f" % (n, x, x, x),
            "%c%c" % (97, "z"), "%s" % [n, n], a % "q", "%f" % n]
""", [("foo", 3, 1.5), ("%s!", -7, -2.25e-8)]),
    "percent_format_tensor": ("""
def f(t: Tensor) -> str:
    return "%s and %d" % (t, 3)
""", [(_M,)]),
    "percent_incomplete": ("""
def f(a: str) -> str:
    return "%s in template %" % a
""", [("foo",)]),
    "percent_d_string": ("""
def f(a: str) -> str:
    return "%d in template" % a
""", [("1",)]),
    "percent_c_string": ("""
def f(a: str) -> str:
    return "%c in template" % a
""", [("foo",)]),
    "percent_too_few": ("""
def f(a: str) -> str:
    return "%s %s in template" % a
""", [("foo",)]),
    "percent_too_many": ("""
def f(a: str, b: str) -> str:
    return "%s in template" % (a, b)
""", [("foo", "bar")]),
    "percent_unknown": ("""
def f(a: str) -> str:
    return "%a in template" % a
""", [("foo",)]),
    # operators
    "tensordot": ("""
def f(a: Tensor, b: Tensor, c: Tensor, d: int) -> List[Tensor]:
    return [torch.tensordot(a, b, dims=([1, 2], [0, 1])), torch.tensordot(a, b), torch.tensordot(a, c, 1),
            torch.tensordot(a, b, [[0], [2]]), torch.tensordot(a, b, d), torch.tensordot(a, c, 0)]
""", [(_X, _X.reshape(3, 4, 2).copy(), _M.reshape(3, 2).T.copy().repeat(2, 0), 2),
      (_X, _X.reshape(3, 4, 2).copy(), np.ones((4, 5), np.float32), 0)]),
    "tensordot_mismatch": ("""
def f(a: Tensor, b: Tensor) -> Tensor:
    return torch.tensordot(a, b, ([1], [1]))
""", [(_M, _M.T.copy())]),
    "tril_triu_indices": ("""
def f(r: int, c: int, o: int) -> List[Tensor]:
    return [torch.tril_indices(r, c), torch.tril_indices(r, c, o), torch.triu_indices(r, c, o),
            torch.triu_indices(r, c, o, dtype=torch.int32)]
""", [(3, 4, 1), (4, 3, -1), (0, 3, 0), (3, 3, 5)]),
    "tril_indices_negative": ("""
def f(r: int) -> Tensor:
    return torch.tril_indices(r, 3)
""", [(-1,)]),
    "matrix_properties": ("""
def f(x: Tensor, m: Tensor) -> List[Tensor]:
    return [x.mT, x.mH, m.H, m.T, m.mT, x.cpu(), m.narrow_copy(1, 1, 2), x.narrow_copy(-1, -2, 2)]
""", [(_X, _M)]),
    "H_of_batch": ("""
def f(x: Tensor) -> Tensor:
    return x.H
""", [(_X,)]),
    "mT_of_vector": ("""
def f(x: Tensor) -> Tensor:
    return x.mT
""", [(np.ones(3, np.float32),)]),
    "narrow_copy_out_of_range": ("""
def f(x: Tensor) -> Tensor:
    return x.narrow_copy(1, 1, 5)
""", [(_M,)]),
}


def _last_line(error):
    lines = [line for line in str(error).strip().splitlines() if line.strip()]
    return lines[-1].strip() if lines else ""


def _run(fn, args):
    try:
        return fn(*args), None
    except Exception as e:  # noqa: BLE001 - compared by the caller
        return None, e


CALLS = [pytest.param(name, i, id=f"{name}-{i}") for name, (_, arg_sets) in PROGRAMS.items()
         for i in range(len(arg_sets))]


@pytest.mark.parametrize("name, index", CALLS)
def test_program(name, index):
    src, arg_sets = PROGRAMS[name]
    args = arg_sets[index]
    try:
        torch_fn, torch_error = torch.jit.CompilationUnit(src, _frames_up=0).f, None
    except RuntimeError as e:
        torch_fn, torch_error = None, e
    if torch_fn is not None:
        expected, torch_error = _run(torch_fn, convert(list(args), "torch"))
    try:
        kiln_fn = kiln.compile(src).f
    except RuntimeError as e:
        assert torch_error is not None, f"kiln failed to compile what torch runs: {e}"
        return
    got, kiln_error = _run(kiln_fn, convert(list(args), "kiln"))
    if torch_error is not None:
        assert kiln_error is not None, f"torch raised {torch_error!r}, kiln returned {got!r}"
        assert _last_line(kiln_error) == _last_line(torch_error)
        return
    assert kiln_error is None, f"kiln raised {kiln_error!r}; torch returned {expected!r}"
    assert_same_values(got, expected)


def isinstance_bare_list(x: Any) -> bool:
    return torch.jit.isinstance(x, List)


def isinstance_bare_dict(x: Any) -> bool:
    return torch.jit.isinstance(x, Dict)


@pytest.mark.parametrize("fn, message", [
    (isinstance_bare_list, r"Attempted to use List without a contained type. Please add a contained type, e.g. List\[int\]"),
    (isinstance_bare_dict, r"Attempted to use Dict without contained types. Please add contained type, e.g. Dict\[int, int\]"),
])
def test_isinstance_without_contained_type(fn, message):
    with pytest.raises(RuntimeError, match=message):
        torch.jit.script(fn)
    with pytest.raises(RuntimeError, match=message):
        kiln.script(fn)


def test_hash_device_values():
    """c10::Device's hash: type in the high half, the index as one byte."""
    src = "def f() -> List[int]:\n    return [hash(torch.device('cpu')), hash(torch.device('cpu'))]\n"
    assert kiln.compile(src).f() == torch.jit.CompilationUnit(src, _frames_up=0).f()


# f-strings: torch's Python frontend (torch.jit.script) makes them
# "...{}...".format(...) calls; kiln's parser does the same.
def fstring_values(a: int, b: float, s: str, xs: List[int], d: Dict[str, int]) -> str:
    return f"{a} and {b}; {s} {xs[0] + 1} {d['k']} {{lit}} {len(xs)} {a != 2}"


def fstring_tensor(t: Tensor) -> str:
    return f"t={t}!"


def fstring_plain() -> str:
    return f"plain"  # noqa: F541


def fstring_multiline(x: float, s: str) -> str:
    return f"""x={x}
s={s}"""


def fstring_format_spec(x: float) -> str:
    return f"{x:.2f}"


def fstring_conversion(x: float) -> str:
    return f"{x!r}"


@pytest.mark.parametrize("fn, args", [
    (fstring_plain, ()),
    (fstring_tensor, (_M,)),
    (fstring_multiline, (1e-7, "q")),
], ids=["plain", "tensor", "multiline"])
def test_fstring(fn, args):
    expected = torch.jit.script(fn)(*convert(list(args), "torch"))
    assert kiln.script(fn)(*convert(list(args), "kiln")) == expected


def test_fstring_values():
    args = (3, 1.5, "q", [1, 2], {"k": 5})
    expected = torch.jit.script(fstring_values)(*args)
    assert expected == "3 and 1.5; q 2 5 {lit} 2 True"
    assert kiln.script(fstring_values)(*args) == expected
    # kiln.compile reads the same syntax (1.13's string compiler has none).
    src = ("def f(a: int, b: float, s: str, xs: List[int], d: Dict[str, int]) -> str:\n"
           "    return f\"{a} and {b}; {s} {xs[0] + 1} {d['k']} {{lit}} {len(xs)} {a != 2}\"\n")
    assert kiln.compile(src).f(*args) == expected


@pytest.mark.parametrize("fn, message", [
    (fstring_format_spec, "Don't support formatting in JoinedStr"),
    (fstring_conversion, "Don't support conversion in JoinedStr"),
])
def test_fstring_errors(fn, message):
    with pytest.raises(Exception, match=message):
        torch.jit.script(fn)
    with pytest.raises(RuntimeError, match=message):
        kiln.script(fn)


@pytest.mark.parametrize("name, kinds", [
    ("percent_too_few", ["aten::percentFormat"]),
    ("matrix_properties", ["aten::mT", "aten::mH", "aten::matrix_H"]),
    ("slice_list", ["aten::slice"]),
])
def test_graph_has_torch_ops(name, kinds):
    src = PROGRAMS[name][0]
    torch_graph = script_graph_text(src, "f")
    kiln_graph = str(kiln.compile(src).f.graph)
    for kind in kinds:
        assert kind in torch_graph and kind in kiln_graph


@pytest.mark.parametrize("overload, args", [
    ("tril_indices.out", (3, 4, 1)),
    ("triu_indices.out", (4, 3, -1)),
    ("narrow_copy.out", (_M, 1, 1, 2)),
    ("tensordot.out", (_M, _M.T.copy(), [1], [0])),
], ids=lambda v: v if isinstance(v, str) else "")
def test_out_overloads(overload, args):
    name, _, variant = overload.partition(".")
    dtype = "int64" if "indices" in name else "float32"
    expected = getattr(getattr(torch.ops.aten, name), variant)(*convert(list(args), "torch"),
                                                              out=torch.empty(0, dtype=getattr(torch, dtype)))
    got = kiln._C._overload("aten::" + overload)(*convert(list(args), "kiln"),
                                                 out=kiln.empty([0], dtype=getattr(kiln, dtype)))
    assert_same_values(got, expected)


# torch.nn.functional functions 1.13 scripts that kiln writes in
# python/kiln/nn/_functional_more.py: called from scripts and eagerly.
_rng = np.random.default_rng(0)
_A = _rng.standard_normal((4, 5)).astype(np.float32)
_B = _rng.standard_normal((4, 5)).astype(np.float32)
_C = _rng.standard_normal((4, 5)).astype(np.float32)
_SIGN4 = np.array([1, -1, -1, 1], np.float32)
_SIGN45 = np.sign(_rng.standard_normal((4, 5))).astype(np.float32)
_BITS45 = (_rng.random((4, 5)) > 0.5).astype(np.float32)
_POS = np.abs(_A) + 0.5
_IDX = np.array([[0, 2], [1, 3]], dtype=np.int64)
_X3 = _rng.standard_normal((2, 3, 8)).astype(np.float32)
_X4 = np.abs(_rng.standard_normal((2, 3, 6, 6))).astype(np.float32)

FUNCTIONAL_CALLS = [
    ("softsign(x)", [_A]), ("tanhshrink(x)", [_A]), ("softmin(x, 1)", [_A]), ("softmin(x)", [_A]),
    ("normalize(x)", [_A]), ("normalize(x, 1.0, 0)", [_A]),
    ("one_hot(x)", [_IDX]), ("one_hot(x, 6)", [_IDX]), ("one_hot(x, 2)", [_IDX]),
    ("cosine_similarity(x, y)", [_A, _B]), ("cosine_similarity(x, y, 0)", [_A, _B]),
    ("pairwise_distance(x, y)", [_A, _B]), ("pairwise_distance(x, y, 1.0, 1e-6, True)", [_A, _B]),
    ("lp_pool1d(x, 2.0, 3)", [_X3]), ("lp_pool1d(x, 1.5, 2, [1])", [_X3]), ("lp_pool2d(x, 2.0, [2, 2])", [_X4]),
    ("margin_ranking_loss(x, y, z)", [_A[:, 0].copy(), _B[:, 0].copy(), _SIGN4]),
    ("margin_ranking_loss(x, y, z, 0.5, reduction='none')", [_A[:, 0].copy(), _B[:, 0].copy(), _SIGN4]),
    ("hinge_embedding_loss(x, y)", [_A, _SIGN45]), ("hinge_embedding_loss(x, y, 0.5, reduction='sum')", [_A, _SIGN45]),
    ("soft_margin_loss(x, y)", [_A, _SIGN45]), ("multilabel_soft_margin_loss(x, y)", [_A, _BITS45]),
    ("multilabel_soft_margin_loss(x, y, reduction='none')", [_A, _BITS45]),
    ("cosine_embedding_loss(x, y, z)", [_A, _B, _SIGN4]),
    ("cosine_embedding_loss(x, y, z, 0.2, reduction='sum')", [_A, _B, _SIGN4]),
    ("poisson_nll_loss(x, y)", [_A, _POS]), ("poisson_nll_loss(x, y, False, True)", [_POS, _POS * 3]),
    ("triplet_margin_loss(x, y, z)", [_A, _B, _C]),
    ("triplet_margin_loss(x, y, z, swap=True, reduction='none')", [_A, _B, _C]),
]


@pytest.mark.filterwarnings("ignore:Implicit dimension choice")
@pytest.mark.parametrize("call, args", FUNCTIONAL_CALLS, ids=[c for c, _ in FUNCTIONAL_CALLS])
def test_functional_scripted(call, args):
    params = ", ".join(f"{n}: Tensor" for n in "xyz"[:len(args)])
    src = f"def f({params}):\n    return torch.nn.functional.{call}\n"
    expected, torch_error = _run(torch.jit.CompilationUnit(src, _frames_up=0).f, convert(list(args), "torch"))
    got, kiln_error = _run(kiln.compile(src).f, convert(list(args), "kiln"))
    if torch_error is not None:
        assert kiln_error is not None and _last_line(torch_error).split(": ", 1)[1] in _last_line(kiln_error)
        return
    assert kiln_error is None, f"kiln raised {kiln_error!r}"
    assert_same_values(got, expected)


@pytest.mark.filterwarnings("ignore:Implicit dimension choice")
@pytest.mark.parametrize("call, args", FUNCTIONAL_CALLS[:16], ids=[c for c, _ in FUNCTIONAL_CALLS[:16]])
def test_functional_eager(call, args):
    def fn(lib, *values):
        return eval("F." + call, {"F": lib.nn.functional}, dict(zip("xyz", values)))  # noqa: S307 - the test's text
    check_both(fn, *args)
