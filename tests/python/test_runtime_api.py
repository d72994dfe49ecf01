"""kiln.function_from_graph and kiln.CompilationUnit from Python: argument
conversion, errors, specialization, printing, fork/wait."""
import numpy as np
import pytest

import kiln
import torch
from conftest import assert_same_values, script_function

SCALE = """
graph(%x.1 : Tensor, %n.1 : int):
  %r : Tensor = aten::mul(%x.1, %n.1)
  return (%r)
"""


def test_arguments_from_numpy_kiln_and_keywords():
    f = kiln.function_from_graph("scale", kiln.parse_ir(SCALE))
    assert f.schema == "scale(Tensor x, int n) -> Tensor"
    x = np.arange(3, dtype=np.float32)
    np.testing.assert_array_equal(f(x, 2).numpy(), x * 2)
    np.testing.assert_array_equal(f(kiln.from_numpy(x), n=3).numpy(), x * 3)
    np.testing.assert_array_equal(f(n=4, x=x).numpy(), x * 4)


@pytest.mark.parametrize("args,kwargs,message", [
    ((1, 2), {}, "Expected a value of type 'Tensor' for argument 'x' but instead found type 'int'"),
    ((np.ones(2, np.float32), 2.5), {}, "Expected a value of type 'int' for argument 'n' but instead found type 'float'"),
    ((np.ones(2, np.float32),), {}, "missing value for argument 'n'"),
    ((np.ones(2, np.float32), 1, 2), {}, "expected at most 2 arguments but received 3"),
    ((np.ones(2, np.float32), 1), {"m": 1}, "unexpected keyword argument 'm'"),
    ((np.ones(2, np.float32), 1), {"n": 1}, "multiple values for argument 'n'"),
])
def test_bad_arguments_name_the_parameter(args, kwargs, message):
    f = kiln.function_from_graph("scale", kiln.parse_ir(SCALE))
    with pytest.raises(RuntimeError, match=message):
        f(*args, **kwargs)


def test_containers_and_none_round_trip():
    text = """
graph(%l : int[], %t : (float, str), %d : Dict(str, Tensor), %o : int?):
  %r : (int[], (float, str), Dict(str, Tensor), int?) = prim::TupleConstruct(%l, %t, %d, %o)
  return (%r)
"""
    f = kiln.function_from_graph("f", kiln.parse_ir(text))
    l, t, d, o = f([1, 2], (1.5, "a"), {"w": np.ones(2, np.float32)}, None)
    assert l == [1, 2] and t == (1.5, "a") and o is None
    assert list(d) == ["w"] and isinstance(d["w"], kiln.Tensor)
    assert f([], (0.0, ""), {}, 3)[3] == 3


def test_one_plan_per_specialization():
    f = kiln.function_from_graph("scale", kiln.parse_ir(SCALE))
    f(np.ones(2, np.float32), 1)
    f(np.ones(2, np.float32), 7)
    assert f.num_plans == 1
    f(np.ones(5, np.float32), 1)  # another shape: a plan specialized to it
    assert f.num_plans == 2
    f(np.ones((2, 2), np.float64), 1)
    assert f.num_plans == 3
    assert "Double(2, 2, strides=[2, 1], requires_grad=0, device=cpu)" in str(f.graph_for(np.ones((2, 2)), 1))
    assert "OP aten::mul" in f.code_for(np.ones(2, np.float32), 1)


def test_print_goes_to_sys_stdout_like_torch(capsys):
    src = """
def f(x: Tensor, n: int, s: str) -> int:
    print("n is", n, s, 1.0, 2.5, [1, 2], (n, s), x)
    return n
"""
    scripted = script_function(src, "f")
    x = np.arange(3, dtype=np.float32)
    scripted(torch.from_numpy(x.copy()), 3, "hey")
    torch_out = capsys.readouterr().out
    kiln.function_from_graph("f", kiln.parse_ir(str(scripted.graph)))(x, 3, "hey")
    assert capsys.readouterr().out == torch_out


def test_fork_and_wait_through_a_compilation_unit():
    src = """
def g(x: Tensor, k: int) -> Tensor:
    return x * k

def f(x: Tensor) -> Tensor:
    futures = [torch.jit.fork(g, x, i) for i in range(4)]
    total = torch.zeros_like(x)
    for fut in futures:
        total = total + torch.jit.wait(fut)
    return total
"""
    tcu = torch.jit.CompilationUnit(src)
    cu = kiln.CompilationUnit()
    for name in ("g", "f"):
        cu.create_function(name, kiln.parse_ir(str(getattr(tcu, name).graph)))
    x = np.arange(5, dtype=np.float32)
    assert_same_values(cu.f(x), tcu.f(torch.from_numpy(x.copy())))


def test_unknown_callee_is_an_error():
    text = """
graph(%x : Tensor):
  %f : Function = prim::Constant[name="nowhere"]()
  %r : Tensor = prim::CallFunction(%f, %x)
  return (%r)
"""
    cu = kiln.CompilationUnit()
    f = cu.create_function("f", kiln.parse_ir(text))
    with pytest.raises(RuntimeError, match="no function named 'nowhere'"):
        f(np.ones(1, np.float32))
    with pytest.raises(RuntimeError, match="no compilation unit"):
        kiln.function_from_graph("f", kiln.parse_ir(text))(np.ones(1, np.float32))


def test_constants_of_every_kind():
    """Constant propagation in torch folds values into prim::Constant nodes of
    many kinds (tuple, lists, device, dtype, strings with escapes); kiln reads
    them from the printed graph and loads them as torch does. (Tensor
    constants print in ATen's rounded text, which neither torch's nor kiln's
    IR parser reads back.)"""
    src = """
def f(x: Tensor):
    b = [1, 2, 3]
    c = (1, 'a', 2.5, None, True)
    d = torch.device('cpu')
    e = torch.float64
    return x + 1, b, c, d, e, 1e-3, -7, 'str\\n"q"', [1.5, 2.0], [True, False], ['a', 'b'], x.dtype
"""
    scripted = script_function(src, "f")
    torch._C._jit_pass_constant_propagation(scripted.graph)
    text = str(scripted.graph)
    assert "prim::Constant[value=(1" in text and 'value="str\\n' in text
    x = np.arange(2, dtype=np.float32)
    k = kiln.function_from_graph("f", kiln.parse_ir(text))(x)
    t = scripted(torch.from_numpy(x.copy()))
    assert k[3] == str(t[3]) == "cpu"  # a Device comes back as its name
    assert_same_values(k[:3] + k[4:], t[:3] + t[4:])


def test_broken_graph_is_an_error_not_a_crash():
    text = """
graph(%x : Tensor, %c : bool):
  %r : Tensor = prim::If(%c)
    block0():
      %inner : Tensor = aten::neg(%x)
      -> (%inner)
    block1():
      -> (%x)
  %bad : Tensor = aten::neg(%inner)
  return (%bad)
"""
    with pytest.raises(RuntimeError, match="lint"):
        kiln.function_from_graph("f", kiln.parse_ir(text))
