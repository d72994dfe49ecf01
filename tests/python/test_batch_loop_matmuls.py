"""Batching a loop's input products (kiln/passes/batch_loop_matmuls.h): an
LSTM written as a TorchScript loop over the rows of its input gives torch
1.13's results in kiln's optimizing executor, whose plan does one product of
all the steps' inputs before the loop; loops the rule excludes keep their
per-step products and their results."""
import numpy as np
import pytest

import kiln
from conftest import check_script, convert

LSTM = """
def lstm(x, hx, cx, w_ih, w_hh, b_ih, b_hh):
    for t in range(x.size(0)):
        gates = torch.mm(x[t], w_ih.t()) + torch.mm(hx, w_hh.t()) + b_ih + b_hh
        i, f, g, o = gates.chunk(4, 1)
        i = torch.sigmoid(i)
        f = torch.sigmoid(f)
        g = torch.tanh(g)
        o = torch.sigmoid(o)
        cx = f * cx + i * g
        hx = o * torch.tanh(cx)
    return hx, cx
"""

# The same loop with its trip count passed in: it may read fewer rows than x
# has, so its products stay per step.
LSTM_COUNTED = LSTM.replace("def lstm(x,", "def lstm(n: int, x,").replace("range(x.size(0))", "range(n)")


def lstm_args(steps, batch, inputs, hidden, dtype=np.float32, seed=0):
    """Inputs and states in [-1, 1), weights as torch.nn.LSTM initializes
    them: larger weights make the recurrence chaotic, and rounding
    differences of a few ulps grow to O(1) over a hundred steps (unbatched
    kiln and torch differ so too)."""
    rng = np.random.default_rng(seed)
    bound = 1 / np.sqrt(hidden) if hidden else 1

    def r(*shape, scale=1.0):
        return rng.uniform(-scale, scale, shape).astype(dtype)

    return [r(steps, batch, inputs), r(batch, hidden), r(batch, hidden), r(4 * hidden, inputs, scale=bound),
            r(4 * hidden, hidden, scale=bound), r(4 * hidden, scale=bound), r(4 * hidden, scale=bound)]


def nodes(block):
    for n in block.nodes():
        yield n
        for b in n.blocks():
            yield from nodes(b)


def top_level_kinds(graph):
    return [n.kind() for n in graph.block().nodes()]


def products_of_rows(graph):
    """The aten::mm nodes (anywhere) whose left operand selects a row of a graph input."""
    inputs = {v.debugName() for v in graph.inputs()}
    found = []
    for n in nodes(graph.block()):
        if n.kind() == "aten::mm":
            lhs = n.inputs()[0].node()
            if lhs.kind() == "aten::select" and lhs.inputs()[0].debugName() in inputs:
                found.append(n)
    return found


@pytest.mark.parametrize("shape", [(0, 3, 5, 4), (1, 2, 3, 2), (7, 4, 6, 5), (20, 8, 16, 8), (9, 0, 4, 3)],
                         ids=lambda s: "x".join(map(str, s)))
def test_lstm_loop_matches_torch(shape):
    check_script(LSTM, "lstm", *lstm_args(*shape), rtol=1e-5, atol=1e-5)


def test_double_lstm_loop_matches_torch():
    check_script(LSTM, "lstm", *lstm_args(11, 3, 4, 5, dtype=np.float64), rtol=1e-12, atol=1e-12)


def test_large_lstm_matches_torch():
    """The benchmark's shape: 100 steps, batch 64, input and hidden 512."""
    check_script(LSTM, "lstm", *lstm_args(100, 64, 512, 512, seed=1), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("steps", [5, 100])
def test_plan_does_one_input_product_before_the_loop(steps):
    fn = kiln.compile(LSTM).lstm
    graph = fn.graph_for(*convert(lstm_args(steps, 4, 6, 3), "kiln"))
    kinds = top_level_kinds(graph)
    assert kinds.count("aten::matmul") == 1, graph
    if steps == 100:  # a loop remains (unrolled by 8), after the product
        assert kinds.index("aten::matmul") < kinds.index("prim::Loop"), graph
    assert products_of_rows(graph) == [], graph
    # Every remaining product is the hidden one.
    assert all(n.inputs()[0].node().kind() != "aten::select" for n in nodes(graph.block()) if n.kind() == "aten::mm")


def test_trip_count_not_the_rows_keeps_products_per_step():
    args = lstm_args(12, 3, 5, 4)
    fn = kiln.compile(LSTM_COUNTED).lstm
    graph = fn.graph_for(9, *convert(args, "kiln"))
    assert "aten::matmul" not in top_level_kinds(graph), graph
    assert products_of_rows(graph), graph
    check_script(LSTM_COUNTED, "lstm", 9, *args, rtol=1e-5, atol=1e-5)
    check_script(LSTM_COUNTED, "lstm", 13, *args, raises=True)  # a row past the end


def test_rank_level_plan_keeps_products_per_step():
    saved = kiln._C._get_shape_specialization_limit()
    kiln._C._set_shape_specialization_limit(0)
    try:
        fn = kiln.compile(LSTM).lstm
        args = lstm_args(10, 3, 5, 4)
        graph = fn.graph_for(*convert(args, "kiln"))
        assert "aten::matmul" not in [n.kind() for n in nodes(graph.block())], graph
        # No rows, mismatched inner sizes: no step runs, so nothing raises.
        args = lstm_args(0, 3, 5, 4)
        args[3] = np.ones((16, 7), np.float32)
        check_script(LSTM, "lstm", *args, raises=False)
    finally:
        kiln._C._set_shape_specialization_limit(saved)


def test_mismatched_inner_sizes_raise_as_in_torch():
    args = lstm_args(3, 2, 5, 4)
    args[3] = np.ones((16, 7), np.float32)
    check_script(LSTM, "lstm", *args, raises=True)
    args = lstm_args(0, 2, 5, 4)
    args[3] = np.ones((16, 7), np.float32)
    check_script(LSTM, "lstm", *args, raises=False)
