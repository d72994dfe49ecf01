"""Invalid TorchScript programs: kiln.compile must reject each with a
RuntimeError whose message has torch 1.13's key phrases, names the same
`File "<string>", line N` and starts its `~~~~ <--- HERE` underline at the
same column as torch's message. Each case is checked against torch too, so
the expected phrases stay true to 1.13.

Reasonable Python that 1.13 refuses but kiln accepts on purpose (chained
comparisons, comprehension filters) is not listed here."""
import math  # noqa: F401  (torch resolves the sources' names in this module)
import re
from typing import Dict, List, Optional, Tuple  # noqa: F401

import pytest
import torch
from torch import Tensor  # noqa: F401

import kiln


class Case:
    def __init__(self, name, src, phrases, alt=None):
        self.name = name
        self.src = src
        # Every phrase is in torch's message and must be in kiln's.
        self.phrases = phrases
        # For syntax 1.13's parser trips over (its message names a token, not
        # the construct, at the token's position), kiln may instead name the
        # construct: `alt` in the message is then enough, with any position.
        self.alt = alt


CASES = [
    # names
    Case("undefined_name", "def f(x: int) -> int:\n    return x + y\n", ["undefined value y"]),
    Case("undefined_function", "def f(x: int) -> int:\n    return foo(x)\n", ["undefined value foo"]),
    Case("aug_assign_undefined", "def f(x: int) -> int:\n    y += 1\n    return x\n", ["undefined value y"]),
    Case("del_undefined", "def f(x: int) -> int:\n    del y\n    return x\n", ["undefined value y"]),
    Case("use_var_defined_only_in_loop", "def f(n: int) -> int:\n    for i in range(n):\n        y = i\n    return y\n",
         ["undefined value y"]),
    Case("unknown_torch_op", "def f(x: Tensor) -> Tensor:\n    return torch.nonexistent_op(x)\n",
         ["object has no attribute nonexistent_op"]),
    Case("unknown_math_function", "def f(x: float) -> float:\n    return math.nonexistent(x)\n",
         ["object has no attribute nonexistent"]),
    Case("unknown_tensor_method", "def f(x: Tensor) -> Tensor:\n    y = x * 2\n    return y.nonexistent(1)\n",
         ["'Tensor' object has no attribute or method 'nonexistent'"]),
    Case("method_on_int", "def f(x: int) -> int:\n    return x.foo()\n", ["'int' object has no attribute or method 'foo'"]),
    Case("math_unsupported_builtin", "def f(x: float) -> float:\n    return math.hypot(x, 1.0)\n",
         ["is currently not supported in Torchscript"], alt="hypot"),
    # argument types and arity: builtins, aten ops, functions of the unit
    Case("aten_wrong_type_str", "def f(x: Tensor) -> Tensor:\n    return torch.tanh(\"a\")\n",
         ["Arguments for call are not valid", "aten::tanh(Tensor self) -> Tensor",
          "Expected a value of type 'Tensor' for argument 'self' but instead found type 'str'", "The original call is"]),
    Case("tensor_plus_str", "def f(x: Tensor) -> Tensor:\n    return x + \"a\"\n",
         ["Arguments for call are not valid",
          "Expected a value of type 'Tensor' for argument 'other' but instead found type 'str'"]),
    Case("aten_wrong_keyword_type", "def f(x: Tensor) -> Tensor:\n    return torch.sum(x, dim=\"a\")\n",
         ["Arguments for call are not valid",
          "Expected a value of type 'Optional[List[int]]' for argument 'dim' but instead found type 'str'"]),
    Case("aten_unknown_keyword", "def f(x: Tensor) -> Tensor:\n    return torch.sum(x, foo=1)\n",
         ["Arguments for call are not valid", "Keyword argument foo unknown"]),
    Case("aten_too_many_args", "def f(x: Tensor) -> Tensor:\n    return torch.tanh(x, x, x)\n",
         ["Arguments for call are not valid", "Expected at most 1 arguments but found 3 positional arguments"]),
    Case("str_times_int", "def f(s: str) -> str:\n    return s * 3\n",
         ["Arguments for call are not valid", "found type 'str'"]),
    Case("invert_int", "def f(a: int) -> int:\n    return ~a\n",
         ["Arguments for call are not valid", "aten::bitwise_not(Tensor self) -> Tensor"]),
    Case("bool_plus_int", "def f(a: bool, b: int) -> int:\n    return a + b\n",
         ["Arguments for call are not valid", "found type 'bool'"]),
    Case("list_less_than", "def f(a: List[int], b: List[int]) -> bool:\n    return a < b\n",
         ["Arguments for call are not valid", "found type 'List[int]'"]),
    Case("min_of_strings", "def f(x: List[str]) -> str:\n    return min(x)\n",
         ["Arguments for call are not valid", "prim::min.int(int a, int b) -> int"]),
    Case("sorted_reverse_keyword", "def f(x: List[int]) -> List[int]:\n    return sorted(x, reverse=True)\n",
         ["Arguments for call are not valid", "Keyword argument reverse unknown"]),
    Case("optional_not_refined", "def f(x: Optional[int]) -> int:\n    return x + 1\n",
         ["Arguments for call are not valid", "found type 'Optional[int]'"]),
    Case("dict_wrong_key_type",
         "def f(x: int) -> Dict[str, int]:\n    d: Dict[str, int] = {}\n    d[x] = 2\n    return d\n",
         ["Arguments for call are not valid",
          "Expected a value of type 'str' for argument 'idx' but instead found type 'int'"]),
    Case("append_to_empty_list_wrong_type", "def f(x: int) -> List[int]:\n    xs = []\n    xs.append(x)\n    return xs\n",
         ["Type variable 't' previously matched to type Tensor is matched to type int"]),
    Case("user_fn_too_many_args", "def g(a: int) -> int:\n    return a\n\ndef f(x: int) -> int:\n    return g(x, 2, 3)\n",
         ["g(int a) -> int", "Expected at most 1 arguments but found 3 positional arguments"]),
    Case("user_fn_missing_arg", "def g(a: int, b: int) -> int:\n    return a + b\n\ndef f(x: int) -> int:\n    return g(x)\n",
         ["Argument b not provided"]),
    Case("user_fn_unknown_keyword", "def g(a: int) -> int:\n    return a\n\ndef f(x: int) -> int:\n    return g(x, z=2)\n",
         ["Keyword argument z unknown"]),
    Case("user_fn_keyword_twice", "def g(a: int) -> int:\n    return a\n\ndef f(x: int) -> int:\n    return g(x, a=2)\n",
         ["Keyword argument a specified twice"]),
    Case("user_fn_wrong_arg_type", "def g(a: int) -> int:\n    return a\n\ndef f(x: str) -> int:\n    return g(x)\n",
         ["Expected a value of type 'int' for argument 'a' but instead found type 'str'"]),
    Case("print_keyword", "def f(x: int) -> int:\n    print(x, end='')\n    return x\n",
         ["print doesn't accept any keyword arguments"]),
    Case("isinstance_bad_type", "def f(x: int) -> bool:\n    return isinstance(x, 3)\n",
         ["cannot be used in a type expression"]),
    Case("tolist_without_hint", "def f(x: Tensor):\n    return x.tolist()\n", ["Expected type hint for result of tolist()"]),
    # types of variables, branches and returns
    Case("annotated_var_type_mismatch", "def f(x: int) -> int:\n    y: int = \"a\"\n    return x\n",
         ["Variable 'y' is annotated with type int but is being assigned to a value of type str"]),
    Case("return_type_mismatch", "def f(x: int) -> int:\n    return \"a\"\n",
         ["Return value was annotated as having type int but is actually of type str"]),
    Case("return_none_for_int", "def f(x: int) -> int:\n    if x > 0:\n        return x\n    return None\n",
         ["Return value was annotated as having type int but is actually of type NoneType"]),
    Case("return_missing_on_path", "def f(x: int) -> int:\n    if x > 0:\n        return 1\n",
         ["does not return along all paths"]),
    Case("return_types_differ", "def f(x: int):\n    if x > 0:\n        return 1\n    return \"a\"\n",
         ["Previous return statement returned a value of type int but this return statement returns a value of type str"]),
    Case("if_branch_types_differ_used_later",
         "def f(c: bool):\n    if c:\n        y = 1\n    else:\n        y = \"a\"\n    return y\n",
         ["y is set to type int in the true branch and type str in the false branch", "and was used here"]),
    Case("var_defined_in_one_branch_used", "def f(c: bool) -> int:\n    if c:\n        y = 1\n    return y\n",
         ["y is not defined in the false branch"]),
    Case("ternary_types_differ", "def f(a: int):\n    x = 1 if a > 0 else 2.0\n    return x\n",
         ["if-expression's true branch has type int but false branch has type float"]),
    Case("default_wrong_type", "def f(x: int = \"a\") -> int:\n    return x\n",
         ["Return value was annotated as having type Tuple[int] but is actually of type Tuple[str]"], alt="default"),
    # unpacking, subscripts, iteration, calls
    Case("unpack_too_many", "def f(x: int) -> int:\n    a, b = (x, x, x)\n    return a\n",
         ["too many values to unpack: need 2 but found 3"]),
    Case("unpack_too_few", "def f(x: int) -> int:\n    a, b, c = (x, x)\n    return a\n",
         ["need 3 values to unpack but found only 2"]),
    Case("starred_assign", "def f(x: List[int]) -> List[int]:\n    a, *b = x\n    return b\n",
         ["cannot statically infer the expected size of a list in this context"]),
    Case("for_unpack_non_tuple", "def f(x: List[int]) -> int:\n    for a, b in x:\n        return a\n    return 0\n",
         ["int cannot be used as a tuple"]),
    Case("for_over_int", "def f(x: int) -> int:\n    for a in x:\n        return a\n    return 0\n",
         ["'int' object is not iterable"]),
    Case("subscript_int", "def f(x: int) -> int:\n    return x[0]\n", ["'int' object is not subscriptable"]),
    Case("subscript_assign_float", "def f(x: float) -> float:\n    x[0] = 1.0\n    return x\n",
         ["Arguments for call are not valid", "Could not match type float to List[t]"]),
    Case("tuple_item_assignment", "def f(x: int) -> Tuple[int, int]:\n    t = (x, x)\n    t[0] = 3\n    return t\n",
         ["Tuple[int, int] does not support subscripted assignment"]),
    Case("tuple_index_out_of_range", "def f(x: int) -> int:\n    t = (x, x)\n    return t[5]\n",
         ["Tuple index out of range. Tuple is length 2 and index is 5"]),
    Case("tuple_variable_index_heterogeneous", "def f(t: Tuple[int, str], i: int) -> int:\n    return t[i]\n",
         ["Cannot index into a Tuple[int, str] with a non-integer literal"]),
    Case("tensor_index_with_string", "def f(x: Tensor) -> Tensor:\n    return x[\"a\"]\n",
         ["indexing tensor with unsupported index type 'str'"]),
    Case("list_slice_assignment", "def f(x: List[int]) -> List[int]:\n    x[1:3] = [7]\n    return x\n",
         ["Sliced expression not yet supported for subscripted assignment"]),
    Case("call_int", "def f(x: int) -> int:\n    y = 1\n    return y(2)\n", ["cannot call a value of type 'int'"]),
    Case("call_tensor", "def f(x: Tensor) -> Tensor:\n    return x(2)\n", ["cannot call a value of type 'Tensor'"]),
    Case("recursion", "def f(x: int) -> int:\n    if x <= 1:\n        return 1\n    return x * f(x - 1)\n",
         ["function 'f' is called recursively. Recursive calls are not supported"]),
    Case("nested_def_closure", "def f(x: int) -> int:\n    def g():\n        return x\n    return g()\n",
         ["cannot call a closure"], alt="nested function"),
    Case("assign_to_call", "def f(x: int) -> int:\n    f(x) = 2\n    return x\n",
         ["unexpected expression on left-hand side of assignment"]),
    Case("with_non_context_manager", "def f(x: int) -> int:\n    with x:\n        pass\n    return x\n",
         ["With item expression must return an object"]),
    Case("raise_non_exception", "def f(x: int) -> int:\n    raise 3\n", ["exceptions must derive from BaseException"]),
    # annotations
    Case("unknown_type_annotation", "def f(x: Foo) -> int:\n    return 1\n", ["Unknown type name 'Foo'"]),
    Case("unknown_return_annotation", "def f(x: int) -> Bar:\n    return x\n", ["Unknown type name 'Bar'"]),
    Case("list_annotation_two_types", "def f(x: List[int, int]) -> int:\n    return 1\n",
         ["expected exactly one element type but found 2"]),
    Case("bare_list_annotation", "def f(x: int) -> int:\n    y: List = []\n    return x\n",
         ["Attempted to use List without a contained type"]),
    Case("type_comment_arity", "def f(x, y):\n    # type: (int) -> int\n    return x\n",
         ["Number of type annotations (1) did not match the number of function parameters (2)"]),
    # statements and syntax 1.13 does not support
    Case("break_outside_loop", "def f(x: int) -> int:\n    if x > 0:\n        break\n    return x\n",
         ["SyntaxError: 'break' outside loop"]),
    Case("continue_outside_loop", "def f(x: int) -> int:\n    continue\n    return x\n",
         ["SyntaxError: 'continue' outside loop"]),
    Case("global_stmt", "def f(x: int) -> int:\n    global y\n    return x\n", ["Unrecognized statement kind global"],
         alt="global"),
    Case("lambda", "def f(x: int) -> int:\n    g = lambda y: y\n    return g(x)\n",
         ["expected newline but found 'ident' here"], alt="lambda"),
    # kiln compiles classes in source (1.13's CompilationUnit does not), but not inheritance.
    Case("class_def", "class A(B):\n    pass\n", ["expected def but found 'class'"], alt="class"),
    Case("try_except", "def f(x: int) -> int:\n    try:\n        return x\n    except Exception:\n        return 0\n",
         ["expected ident but found 'indent' here"], alt="try"),
    Case("for_else", "def f(a: int) -> int:\n    for i in range(a):\n        pass\n    else:\n        a = 1\n    return a\n",
         ["expected ident but found 'else' here"], alt="else"),
    Case("while_else", "def f(a: int) -> int:\n    while a > 0:\n        a -= 1\n    else:\n        a = 1\n    return a\n",
         ["expected ident but found 'else' here"], alt="else"),
    Case("walrus", "def f(a: int) -> int:\n    if (b := a) > 0:\n        return b\n    return 0\n",
         ["expected ) but found ':' here"], alt=":="),
    Case("star_args", "def f(*args: int) -> int:\n    return 1\n", ["expected ) but found 'ident' here"], alt="*args"),
    Case("kwargs_param", "def f(**kw: int) -> int:\n    return 1\n", ["expected ident but found 'pow operator' here"],
         alt="**kw"),
    Case("bad_indent", "def f(x: int) -> int:\n    y = 1\n      return y\n", ["expected newline but found 'indent' here"],
         alt="indent"),
    Case("unterminated_paren", "def f(x: int) -> int:\n    return (x + 1\n", ["expected ) but found 'eof' here"], alt="("),
]

# 1.13 fails an internal assert on these (no position): kiln must give a
# positioned error naming the construct.
TORCH_ASSERTS = [
    ("yield_stmt", "def f(x: int) -> int:\n    yield x\n", "yield", 2),
    ("non_default_after_default", "def f(x: int = 1, y: int) -> int:\n    return x\n", "default argument", 1),
]

_FILE_LINE = re.compile(r'\s*File "<string>", line (\d+)')
_UNDERLINE = re.compile(r"\s*~+(\s*<--- HERE)?\s*")


def error_location(message):
    """(line, column) of the first `File "<string>", line N` of an error and
    the column its first underline starts at (None where it has none)."""
    lines = message.splitlines()
    for i, text in enumerate(lines):
        m = _FILE_LINE.match(text)
        if m:
            column = None
            for under in lines[i + 1:]:
                if _FILE_LINE.match(under):
                    break
                if _UNDERLINE.fullmatch(under):
                    column = under.index("~")
                    break
            return int(m.group(1)), column
    return None, None


def torch_error(src):
    with pytest.raises(RuntimeError) as info:
        torch.jit.CompilationUnit(src, _frames_up=0)
    return str(info.value)


def kiln_error(src):
    with pytest.raises(RuntimeError) as info:
        kiln.compile(src)
    return str(info.value)


@pytest.mark.parametrize("case", [pytest.param(c, id=c.name) for c in CASES])
def test_error_matches_torch(case):
    expected = torch_error(case.src)
    for phrase in case.phrases:
        assert phrase in expected, f"stale phrase {phrase!r}; torch says:\n{expected}"
    got = kiln_error(case.src)
    t_line, t_column = error_location(expected)
    k_line, k_column = error_location(got)
    by_alt = case.alt is not None and case.alt in got
    if not by_alt:
        missing = [p for p in case.phrases if p not in got]
        assert not missing, f"kiln's message lacks {missing}:\n{got}\n--- torch:\n{expected}"
    if by_alt:
        assert k_line is not None, f"no position in kiln's message:\n{got}"
        return
    if t_line is None:  # 1.13 gives no position here; kiln's own is not compared
        return
    assert k_line == t_line, f"line {k_line} != torch's {t_line}:\n{got}\n--- torch:\n{expected}"
    assert k_column == t_column, f"underline column {k_column} != torch's {t_column}:\n{got}\n--- torch:\n{expected}"


@pytest.mark.parametrize("name, src, word, line", TORCH_ASSERTS, ids=[c[0] for c in TORCH_ASSERTS])
def test_error_where_torch_asserts(name, src, word, line):
    assert "INTERNAL ASSERT" in torch_error(src)
    got = kiln_error(src)
    assert word in got
    assert error_location(got)[0] == line


def test_augmented_floor_division_is_a_plus():
    """1.13's lexer has no `//=`; kiln accepts it with Python's meaning."""
    assert "expected ident but found '='" in torch_error("def f(x: int) -> int:\n    x //= 2\n    return x\n")
    f = kiln.compile("def f(x: int, y: int) -> int:\n    x //= y\n    return x\n").f
    assert [f(7, 2), f(-7, 2), f(7, -2)] == [3, -4, -4]


def test_fstring_accepted_in_source():
    """1.13's string compiler has no f-strings, its Python frontend makes
    them str.format calls; kiln's one parser does that for both."""
    src = "def f(x: int) -> str:\n    return f'a{x}b'\n"
    assert "expected newline but found 'string_literal' here" in torch_error(src)
    assert kiln.compile(src).f(3) == "a3b"


def test_error_location_parser():
    msg = 'undefined value y:\n  File "<string>", line 2\ndef f(x: int) -> int:\n    return x + y\n               ~ <--- HERE\n'
    assert error_location(msg) == (2, 15)
    assert error_location("no position") == (None, None)


def test_enough_cases():
    assert len(CASES) + len(TORCH_ASSERTS) >= 40
    assert len({c.name for c in CASES}) == len(CASES)
