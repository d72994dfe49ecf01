"""kiln.trace against torch.jit.trace (1.13): the same Python function,
written against a namespace `T` bound to torch or to kiln, traced on the
same numpy inputs. The traces must have the same operator counts (constants
aside) and, run on new inputs of the same shape, give the same results."""
import threading
import warnings
from collections import Counter
from typing import List, Tuple

import numpy as np
import pytest
import torch

import kiln
from conftest import assert_same, convert
from script_programs import node_kinds

# Kinds that may differ: constants (torch wraps Python numbers in tensor
# constants) and what x.size(d) records in torch (kiln makes it a constant).
IGNORED = {"prim::Constant", "aten::size", "prim::NumToTensor"}


def op_counts(graph):
    return Counter(k for k in node_kinds(str(graph)) if k not in IGNORED and k not in "{}")


def trace_both(make, *inputs, **kwargs):
    """(torch trace, kiln trace) of make(torch) and make(kiln) on the same inputs."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", torch.jit.TracerWarning)
        warnings.simplefilter("ignore", kiln.TracerWarning)
        t = torch.jit.trace(make(torch), convert(tuple(inputs), "torch"), **kwargs)
        k = kiln.trace(make(kiln), convert(tuple(inputs), "kiln"), **kwargs)
    return t, k


def check_traces(make, inputs, new_inputs, **kwargs):
    """Same op counts; same results (and mutated inputs) on new inputs."""
    t, k = trace_both(make, *inputs, **kwargs)
    assert op_counts(k.graph) == op_counts(t.graph), f"kiln:\n{k.graph}\ntorch:\n{t.graph}"
    targs = convert(tuple(new_inputs), "torch")
    kargs = convert(tuple(new_inputs), "kiln")
    assert_same(k(*kargs), t(*targs))
    for ka, ta in zip(kargs, targs):
        if isinstance(ta, torch.Tensor):
            assert_same(ka, ta)
    return t, k


@pytest.fixture
def arrays(rng):
    def make(*shape):
        return rng.standard_normal(shape).astype(np.float32)
    return make


def test_python_loops_are_unrolled(arrays):
    def make(T):
        def f(x, y):
            z = x + y
            for i in range(3):
                z = z * 2 + i
            return T.relu(z)
        return f

    t, k = check_traces(make, (arrays(2, 3), arrays(2, 3)), (arrays(2, 3), arrays(2, 3)))
    assert op_counts(k.graph)["aten::mul"] == 3


def test_graph_inputs_have_complete_types_and_parameter_names(arrays):
    def make(T):
        def f(inp, other):
            return inp * other
        return f

    t, k = trace_both(make, arrays(2, 3), arrays(3).reshape(1, 3))
    header = lambda g: str(g).split("):")[0]  # noqa: E731
    assert header(k.graph) == header(t.graph)
    assert "%inp : Float(2, 3, strides=[3, 1], requires_grad=0, device=cpu)" in str(k.graph)
    assert k.schema.startswith("f(Tensor inp, Tensor other)")


def test_tuples_and_lists_in_and_out(arrays):
    def make(T):
        def f(xs, ys):
            a, b = xs
            return (a + ys[0], [b * ys[1], a - b])
        return f

    t, k = check_traces(make, ((arrays(2), arrays(2)), [arrays(2), arrays(2)]),
                        ((arrays(2), arrays(2)), [arrays(2), arrays(2)]))
    assert op_counts(k.graph)["prim::TupleUnpack"] == 1
    assert op_counts(k.graph)["prim::ListUnpack"] == 1
    assert op_counts(k.graph)["prim::ListConstruct"] == 1


def test_list_output_warns_in_strict_mode(arrays):
    def f(x):
        return [x + 1, x * 2]

    with pytest.warns(kiln.TracerWarning, match="Encountering a list at the output of the tracer"):
        kiln.trace(f, kiln.from_numpy(arrays(2)))


def test_in_place_ops(arrays):
    def make(T):
        def f(x, y):
            x.add_(1)
            y.mul_(x)
            x += y
            return x * y
        return f

    t, k = check_traces(make, (arrays(3), arrays(3)), (arrays(3), arrays(3)))
    assert op_counts(k.graph)["aten::add_"] == 2


def test_indexing(arrays):
    def make(T):
        def f(x):
            a = x[0]
            b = x[:, 1]
            c = x[x > 0]
            d = x[[0, 1]]
            e = x[None, 1:, ::2]
            return a.sum() + b.sum() + c.sum() + d.sum() + e.sum()
        return f

    check_traces(make, (arrays(3, 4),), (arrays(3, 4),))


def test_setitem(arrays):
    def make(T):
        def f(x, m):
            x[0] = 1
            x[:, 1] = m[0]
            x[x > 0.5] = 0
            x[1:, :2] += 1
            return x * 2
        return f

    check_traces(make, (arrays(3, 4), arrays(2, 3)), (arrays(3, 4), arrays(2, 3)))


def test_python_scalars_are_constants(arrays):
    def make(T):
        def f(x):
            scale = 2.5
            return T.clamp(x * scale + 3, min=-1.0, max=4) / 7
        return f

    t, k = check_traces(make, (arrays(4),), (arrays(4),))
    constants = [n for n in k.graph.nodes() if n.kind() == "prim::Constant"]
    assert constants


def test_size_is_a_constant_with_equal_results(arrays):
    def make(T):
        def f(x):
            n = x.size(0)
            return x.view(n * x.size(1)) * n
        return f

    # Arithmetic on sizes is traced in torch (aten::size, NumToTensor, aten::mul,
    # aten::Int) and folded to constants in kiln: only results are compared.
    t, k = trace_both(make, arrays(2, 3))
    assert "aten::size" in str(t.graph) and "aten::size" not in str(k.graph)
    x = arrays(2, 3)
    assert_same(k(kiln.from_numpy(x)), t(torch.from_numpy(x)))


@pytest.mark.parametrize("convert_fn, word", [(int, "integer"), (float, "float"), (lambda t: t.item(), "number")])
def test_number_conversions_warn_and_become_constants(arrays, convert_fn, word):
    def f(x):
        return x * convert_fn(x.sum())

    x = kiln.from_numpy(arrays(3))
    with pytest.warns(kiln.TracerWarning, match=f"Converting a tensor to a Python {word} might cause the trace "
                                                "to be incorrect"):
        k = kiln.trace(f, x, check_trace=False)
    # The number is baked in: new inputs still multiply by the example's sum.
    y = np.ones(3, np.float32)
    expected = y * convert_fn(torch.from_numpy(x.numpy()).sum())
    np.testing.assert_allclose(k(kiln.from_numpy(y)).numpy(), expected, rtol=1e-6)


def test_truthiness_warns(arrays):
    def f(x):
        if x.sum() > -100:
            return x + 1
        return x - 1

    with pytest.warns(kiln.TracerWarning, match="Converting a tensor to a Python boolean"):
        kiln.trace(f, kiln.from_numpy(arrays(3)), check_trace=False)
    assert issubclass(kiln.TracerWarning, Warning)


def test_no_warning_outside_a_trace(arrays):
    x = kiln.from_numpy(arrays(3))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        int(x.sum()), float(x.sum()), x.sum().item(), bool(x.sum() > 0)


def test_scripted_calls_stay_calls(arrays):
    def make(T):
        def pick(x):
            if bool(x.sum() > 0):
                return x * 2
            return x - 1

        pick = torch.jit.script(pick) if T is torch else kiln.script(pick)

        def f(x, y):
            return pick(x) + pick(y)
        return f

    t, k = check_traces(make, (np.ones(3, np.float32), np.ones(3, np.float32)),
                        (-np.ones(3, np.float32), np.ones(3, np.float32)))
    assert op_counts(k.graph)["prim::CallFunction"] == 2
    assert "aten::sum" not in str(k.graph)
    assert 'prim::Constant[name="pick"]' in str(k.graph)


def test_check_inputs_detects_divergence():
    def make(T):
        def f(x):
            if x.sum() > 0:
                return x * 2
            return x - 1
        return f

    pos, neg = np.ones(3, np.float32), -np.ones(3, np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", torch.jit.TracerWarning)
        warnings.simplefilter("ignore", kiln.TracerWarning)
        with pytest.raises(torch.jit.TracingCheckError, match="Graphs differed across invocations"):
            torch.jit.trace(make(torch), torch.from_numpy(pos), check_inputs=[(torch.from_numpy(neg),)])
        with pytest.raises(kiln.TracingCheckError, match="Graphs differed across invocations"):
            kiln.trace(make(kiln), kiln.from_numpy(pos), check_inputs=[(kiln.from_numpy(neg),)])
        # Inputs that take the same path pass.
        k = kiln.trace(make(kiln), kiln.from_numpy(pos), check_inputs=[(kiln.from_numpy(pos * 3),)])
    assert_same(k(kiln.from_numpy(pos)), torch.from_numpy(pos) * 2)


def test_check_inputs_with_different_constants_raises(arrays):
    def f(x):
        return x * float(x.sum())

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", kiln.TracerWarning)
        with pytest.raises(kiln.TracingCheckError):
            kiln.trace(f, kiln.ones(3), check_inputs=[(kiln.ones(3) * 2,)])


def test_tracing_twice_gives_the_same_graph(arrays):
    def f(x, y):
        return (x * y).sum(0)

    x, y = kiln.from_numpy(arrays(2, 3)), kiln.from_numpy(arrays(2, 3))
    a = kiln.trace(f, (x, y))
    b = kiln.trace(f, (x, y))
    assert str(a.graph) == str(b.graph)
    assert_same(a(x, y), torch.from_numpy(x.numpy() * y.numpy()).sum(0))
    assert not kiln.is_tracing()


def test_tracing_is_thread_local(arrays):
    started, main_done = threading.Event(), threading.Event()
    result = {}

    def f(x):
        y = x * 2
        started.set()
        assert main_done.wait(10)
        return y + 1

    def tracer_thread():
        result["fn"] = kiln.trace(f, kiln.from_numpy(arrays(3)), check_trace=False)

    worker = threading.Thread(target=tracer_thread)
    worker.start()
    assert started.wait(10)
    assert not kiln.is_tracing()
    a = kiln.from_numpy(arrays(3))
    for _ in range(3):
        a = kiln.sub(a, a)  # on the main thread: not in the trace
    main_done.set()
    worker.join()
    assert op_counts(result["fn"].graph) == Counter({"aten::mul": 1, "aten::add": 1})


def test_nested_trace(arrays):
    def g(x):
        return x * 3

    def f(x):
        inner = kiln.trace(g, x)  # its checks are not recorded in the outer trace
        return inner(x) + 1

    k = kiln.trace(f, kiln.from_numpy(arrays(3)), check_trace=False)
    # The inner trace is a function: the outer trace calls it.
    assert op_counts(k.graph) == Counter({"prim::CallFunction": 1, "aten::add": 1})
    y = arrays(3)
    np.testing.assert_allclose(k(kiln.from_numpy(y)).numpy(), y * 3 + 1, rtol=1e-6)


def test_numpy_inputs_and_single_tensor(arrays):
    x = arrays(2, 2)
    k = kiln.trace(lambda a: a.exp(), x)
    np.testing.assert_allclose(k(kiln.from_numpy(x)).numpy(), np.exp(x), rtol=1e-6)


@pytest.mark.parametrize("fn, inputs", [
    (lambda x: 3, (np.ones(2, np.float32),)),
    (lambda x: x, (3,)),
    (lambda x: {"a": x}, (np.ones(2, np.float32),)),
    (lambda x, n: x * n, (np.ones(2, np.float32), 3)),
    (lambda x: (x, 1), (np.ones(2, np.float32),)),
    (lambda d: d["a"], ({"a": 1},)),
])
def test_errors_match_torch(fn, inputs):
    with pytest.raises(RuntimeError) as torch_error:
        torch.jit.trace(fn, convert(inputs, "torch"))
    with pytest.raises(RuntimeError) as kiln_error:
        kiln.trace(fn, convert(inputs, "kiln"))
    assert str(torch_error.value).split("\n")[0] == str(kiln_error.value).split("\n")[0]
    assert not kiln.is_tracing()


def test_dict_output_when_not_strict(arrays):
    def f(x):
        return {"a": x + 1}

    k = kiln.trace(f, kiln.from_numpy(arrays(2)), strict=False)
    out = k(kiln.ones(2))
    assert list(out) == ["a"]
    np.testing.assert_allclose(out["a"].numpy(), np.full(2, 2, np.float32))


def test_errors_in_the_traced_function_end_the_trace():
    def f(x):
        return x.view(7)

    with pytest.raises(RuntimeError):
        kiln.trace(f, kiln.ones(2))
    assert not kiln.is_tracing()
    k = kiln.trace(lambda x: x + 1, kiln.ones(2))
    assert op_counts(k.graph) == Counter({"aten::add": 1})


def test_tracing_a_script_function_returns_it():
    s = kiln.script(_double)
    with pytest.warns(UserWarning, match="already a ScriptModule"):
        assert kiln.trace(s, kiln.ones(2)) is s


def _double(x):
    return x * 2


def test_check_trace_warns_when_outputs_differ():
    def make(T):
        def f(x):
            return x + T.rand(3)
        return f

    with pytest.warns(torch.jit.TracerWarning, match="Output nr 1. of the traced function does not match"):
        torch.jit.trace(make(torch), torch.ones(3))
    with pytest.warns(kiln.TracerWarning, match="Output nr 1. of the traced function does not match"):
        kiln.trace(make(kiln), kiln.ones(3))


def test_a_list_of_example_inputs_holds_the_arguments(arrays):
    def make(T):
        def f(x, y):
            return x - y
        return f

    x, y = arrays(2), arrays(2)
    t = torch.jit.trace(make(torch), [torch.from_numpy(x), torch.from_numpy(y)])
    k = kiln.trace(make(kiln), [kiln.from_numpy(x), kiln.from_numpy(y)])
    assert op_counts(k.graph) == op_counts(t.graph)
    assert_same(k(kiln.from_numpy(y), kiln.from_numpy(x)), t(torch.from_numpy(y), torch.from_numpy(x)))


def test_aliases_are_normalized_and_dead_code_removed(arrays):
    def make(T):
        def f(x):
            unused = x.sum() * 3  # noqa: F841
            return T.absolute(x)
        return f

    t, k = check_traces(make, (arrays(3),), (arrays(3),))
    assert op_counts(k.graph) == Counter({"aten::abs": 1})


def test_lists_of_tensors_multiple_results_and_out_arguments(arrays):
    def make(T):
        def f(x, y):
            c = T.cat([x, y], 0)
            s = T.stack((x, y))
            a, b = c.chunk(2)
            u = s.unbind(1)
            m, i = T.max(c, 1)
            w = T.where(x > 0, x, y)
            z = T.add(x, y, alpha=2)
            o = T.empty(2, 3)
            T.mul(x, y, out=o)
            return (a + b + u[0].sum() + m.sum() + i.sum() + w + z + x @ y.t() @ x + o
                    + x.transpose(0, 1).contiguous().t() + x.mean(dim=1, keepdim=True) + x.softmax(-1))
        return f

    check_traces(make, (arrays(2, 3), arrays(2, 3)), (arrays(2, 3), arrays(2, 3)))


def _without_constants(graph):
    """The graph's lines without constants and source locations."""
    import re
    return [re.sub(r" #.*", "", line) for line in str(graph).splitlines() if "prim::Constant" not in line]


def test_values_are_named_after_variables_as_in_torch(arrays):
    def make(T):
        def f(x, y):
            z = x + y
            for i in range(3):
                z = z * 2
            a = z[0]
            b = x[:, 1]
            d = z + 1
            x.add_(1)
            return d, [a, b]
        return f

    t, k = trace_both(make, arrays(2, 3), arrays(2, 3))
    assert _without_constants(k.graph) == _without_constants(t.graph)
    assert "%z.1 : Float(2, 3" in str(k.graph)


def test_nodes_carry_the_python_line_as_in_torch(arrays):
    def make(T):
        def f(x):
            y = x * 2
            return y.relu()
        return f

    t, k = trace_both(make, arrays(3))
    def locations(graph):
        import re
        return [re.sub(r".*# ", "", line) for line in str(graph).splitlines() if "aten::" in line]
    assert locations(k.graph) == locations(t.graph)
    assert locations(k.graph)[0].endswith(f"test_trace.py:{make.__code__.co_firstlineno + 2}:0")


def test_an_output_that_does_not_depend_on_the_inputs_raises():
    def make(T):
        c = T.ones(2)

        def f(x):
            return x + 1, c
        return f

    with pytest.raises(RuntimeError, match="of traced region did not have observable data dependence"):
        torch.jit.trace(make(torch), torch.ones(2))
    with pytest.raises(RuntimeError, match=r"(?s)^output 1 \(.*\) of traced region did not have observable data "
                                           "dependence with trace inputs; this probably indicates your program "
                                           "cannot be understood by the tracer.$"):
        kiln.trace(make(kiln), kiln.ones(2))
    assert not kiln.is_tracing()


def test_dict_inputs(arrays):
    def make(T):
        def f(d):
            return d["a"] * d["b"] + 1
        return f

    t, k = check_traces(make, ({"a": arrays(2), "b": arrays(2)},), ({"a": arrays(2), "b": arrays(2)},))
    assert op_counts(k.graph)["aten::__getitem__"] == 2
    assert str(k.graph).startswith("graph(%d : Dict(str, Tensor)):")
    assert k.schema.startswith("f(Dict(str, Tensor) d)")


def test_scripted_call_with_a_list_argument_and_a_tuple_result(arrays):
    def make(T):
        def pair(x, ys: List[torch.Tensor]) -> Tuple[torch.Tensor, torch.Tensor]:
            s = x
            for y in ys:
                s = s + y
            return s, s * 2

        sp = torch.jit.script(pair) if T is torch else kiln.script(pair)

        def f(x, y):
            a, b = sp(x, [y, y])
            return a - b
        return f

    t, k = check_traces(make, (arrays(2), arrays(2)), (arrays(2), arrays(2)))
    assert _without_constants(k.graph) == _without_constants(t.graph)
