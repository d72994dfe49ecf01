"""The CPU fuser (issue 7): fused and unfused runs agree, for every program of
script_programs.py and for randomized pointwise expressions (dtypes,
broadcasting, non-contiguous inputs, Python scalars, 0-dim and zero-size
tensors), and both agree with torch 1.13. Also: the kernel cache (a second
process compiles nothing; a corrupt cache file is rebuilt), the fallback to
running a group node by node, and the KILN_FUSION switch."""
import os
import random
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import torch

import kiln
from conftest import Fusion, convert, to_numpy

sys.path.insert(0, os.path.dirname(__file__))
from script_programs import PROGRAMS  # noqa: E402

UNSUPPORTED = {"with_no_grad"}
PYTHON_DIR = os.path.join(os.path.dirname(__file__), "..", "..", "python")


def _run(src, fn_name, args, fused):
    """Runs a fresh compilation (so plans are made with fusion as asked)."""
    fn = getattr(kiln.compile(src), fn_name)
    kargs = convert(list(args), "kiln")
    with Fusion(fused):
        try:
            return fn(*kargs), None, kargs
        except Exception as e:  # noqa: BLE001 - compared by the caller
            return None, e, kargs


def _close(a, b, where):
    if isinstance(a, kiln.Tensor):
        assert isinstance(b, (kiln.Tensor, torch.Tensor)), f"{where}: {type(b)}"
        assert str(a.dtype).split(".")[-1] == str(b.dtype).split(".")[-1], f"{where}: dtype {a.dtype} vs {b.dtype}"
        x, y = to_numpy(a), to_numpy(b)
        assert x.shape == y.shape, f"{where}: shape {x.shape} vs {y.shape}"
        if x.dtype.kind == "f":
            tol = 1e-5 if x.dtype == np.float64 else 1e-4
            np.testing.assert_allclose(x, y, rtol=tol, atol=tol, equal_nan=True, err_msg=where)
        else:
            np.testing.assert_array_equal(x, y, err_msg=where)
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b), f"{where}: lengths differ"
        for i, (x, y) in enumerate(zip(a, b)):
            _close(x, y, f"{where}[{i}]")
    elif isinstance(a, dict):
        assert list(a.keys()) == list(b.keys()), f"{where}: keys differ"
        for k in a:
            _close(a[k], b[k], f"{where}[{k!r}]")
    elif isinstance(a, float) and a != a:
        assert b != b, f"{where}: nan vs {b}"
    elif isinstance(a, float):
        assert a == pytest.approx(b, rel=1e-4, abs=1e-5), f"{where}: {a} vs {b}"
    else:
        assert a == b, f"{where}: {a} vs {b}"


CALLS = [pytest.param(p, i, id=f"{p['name']}-{i}") for p in PROGRAMS if p["name"] not in UNSUPPORTED
         for i in range(len(p["args"]))]


@pytest.mark.parametrize("prog, index", CALLS)
def test_fusion_keeps_results(prog, index):
    args = prog["args"][index]
    expected, expected_error, expected_args = _run(prog["src"], prog["fn"], args, fused=False)
    result, error, kargs = _run(prog["src"], prog["fn"], args, fused=True)
    assert (error is None) == (expected_error is None), f"unfused raised {expected_error!r}, fused {error!r}"
    if error is not None:
        assert str(error).splitlines()[-1] == str(expected_error).splitlines()[-1]
        return
    _close(result, expected, "result")
    _close(kargs, expected_args, "arguments after the call")


# Randomized pointwise expressions ------------------------------------------

UNARY = ["torch.tanh({})", "torch.sigmoid({})", "torch.exp(torch.clamp({}, -20.0, 20.0))", "torch.relu({})",
         "torch.abs({})", "-{}", "torch.sqrt(torch.abs({}))", "torch.log1p(torch.abs({}))", "torch.floor({})",
         "torch.sin({})", "torch.reciprocal(torch.abs({}) + 1)", "torch.clamp({}, min=-0.5)",
         "torch.clamp({}, -1.0, 2)", "({}).float()", "({}).double()", "torch.erf({})", "torch.round({})",
         "torch.trunc({})", "torch.sign({})"]
# Binary templates; in those marked True the last operand may be a Python number.
BINARY = [("({} + {})", True), ("({} - {})", True), ("({} * {})", True), ("({} / ({} * {} + 3))", False),
          ("torch.maximum({}, {})", False), ("torch.minimum({}, {})", False),
          ("torch.where({} > {}, {}, {})", True), ("torch.atan2({}, {})", False),
          ("torch.lerp(({}).float(), ({}).float(), 0.25)", False), ("({} < {}).float()", True),
          ("torch.pow(torch.abs({}) + 1, {} * 0.5)", True)]
SCALARS = ["2", "0.5", "-3", "s"]
DTYPES = ["float32", "float32", "float32", "float64", "int64", "int32", "bool"]
SHAPES = [(3, 4, 5), (4, 5), (1, 5), (3, 1, 5), (), (5,), (3, 4, 1)]


def _random_case(seed):
    rnd = random.Random(seed)
    nargs = rnd.randint(1, 3)
    base = rnd.choice([(3, 4, 5), (2, 0, 5), (6, 7, 33)])
    names, params, args, prep = [], [], [], []
    for i in range(nargs):
        dtype = rnd.choice(DTYPES)
        shape = rnd.choice(SHAPES)
        shape = tuple(base[len(base) - len(shape) + d] if s != 1 else 1 for d, s in enumerate(shape))
        layout = rnd.choice(["contiguous", "contiguous", "transposed", "sliced"]) if len(shape) >= 2 else "contiguous"
        data = np.asarray(np.random.RandomState(seed * 10 + i).randn(*shape) * 3)
        if dtype == "bool":
            data = np.asarray(data > 0)
        if layout == "transposed":
            data = np.ascontiguousarray(np.swapaxes(data, -1, -2))
            prep.append(f"    a{i} = a{i}.transpose(-1, -2)")
        elif layout == "sliced":
            data = np.concatenate([data, data], axis=-1)
            prep.append(f"    a{i} = a{i}[..., ::2]")
        args.append(data.astype(dtype))
        names.append(f"a{i}")
        params.append(f"a{i}")
    params.append("s: float")
    args.append(rnd.choice([0.75, -1.5]))

    def expr(depth, scalar_ok=False):
        if depth == 0 or rnd.random() < 0.2:
            return rnd.choice(SCALARS) if scalar_ok and rnd.random() < 0.3 else rnd.choice(names)
        if rnd.random() < 0.45:
            return rnd.choice(UNARY).format(expr(depth - 1))
        template, last_scalar_ok = rnd.choice(BINARY)
        count = template.count("{}")
        operands = [expr(depth - 1, scalar_ok=last_scalar_ok and i == count - 1) for i in range(count)]
        return template.format(*operands)

    outputs = [expr(rnd.randint(2, 4)) for _ in range(rnd.choice([1, 1, 2]))]
    body = "\n".join(prep + [f"    return {', '.join(outputs)}" if len(outputs) > 1 else f"    return {outputs[0]}"])
    src = f"def f({', '.join(params)}):\n{body}\n"
    return src, args


RANDOM_CASES = 70


@pytest.mark.parametrize("seed", range(RANDOM_CASES))
def test_random_pointwise_expressions(seed):
    src, args = _random_case(seed)
    cu = torch.jit.CompilationUnit(src, _frames_up=0)
    try:
        expected, expected_error = cu.f(*convert(list(args), "torch")), None
    except Exception as e:  # noqa: BLE001
        expected, expected_error = None, e
    unfused, unfused_error, _ = _run(src, "f", args, fused=False)
    fused, fused_error, _ = _run(src, "f", args, fused=True)
    assert (fused_error is None) == (expected_error is None), f"{src}\ntorch: {expected_error!r}\nkiln: {fused_error!r}"
    assert (unfused_error is None) == (expected_error is None), src
    if expected_error is None:
        _close(fused, expected, f"fused vs torch\n{src}")
        _close(fused, unfused, f"fused vs unfused\n{src}")


def test_random_expressions_mostly_run_as_kernels():
    """The randomized cases above must exercise kernels, not only the fallback."""
    kiln._C._reset_fusion_stats()
    for seed in range(0, RANDOM_CASES, 3):
        src, args = _random_case(seed)
        _run(src, "f", args, fused=True)
    stats = kiln._C._fusion_stats()
    assert stats["kernel_runs"] >= 0.6 * (stats["kernel_runs"] + stats["fallback_runs"]), stats
    assert stats["kernel_runs"] > 5, stats


# Groups in graphs ---------------------------------------------------------

LSTM_CELL = textwrap.dedent("""\
    def cell(x, hx, cx, w_ih, w_hh, b_ih, b_hh):
        gates = torch.mm(x, w_ih.t()) + torch.mm(hx, w_hh.t()) + b_ih + b_hh
        ingate, forgetgate, cellgate, outgate = gates.chunk(4, 1)
        ingate = torch.sigmoid(ingate)
        forgetgate = torch.sigmoid(forgetgate)
        cellgate = torch.tanh(cellgate)
        outgate = torch.sigmoid(outgate)
        cy = (forgetgate * cx) + (ingate * cellgate)
        hy = outgate * torch.tanh(cy)
        return hy, cy
    """)


def _lstm_args(batch=3, inp=5, hidden=4, seed=0):
    r = np.random.RandomState(seed)
    f = lambda *s: r.randn(*s).astype("float32")  # noqa: E731
    return [f(batch, inp), f(batch, hidden), f(batch, hidden), f(4 * hidden, inp), f(4 * hidden, hidden),
            f(4 * hidden), f(4 * hidden)]


def test_lstm_cell_is_one_group_and_matches_torch():
    args = _lstm_args()
    fn = kiln.compile(LSTM_CELL).cell
    kargs = convert(args, "kiln")
    with Fusion(True):
        graph = fn.graph_for(*kargs)
        kiln._C._reset_fusion_stats()
        result = fn(*kargs)
        stats = kiln._C._fusion_stats()
    text = str(graph)
    assert text.count("= prim::FusionGroup_") == 1, text
    group = text[text.index("with prim::FusionGroup_0"):]
    for kind in ("aten::sigmoid", "aten::tanh", "aten::mul", "prim::ConstantChunk"):
        assert kind in group, text
    assert stats["kernel_runs"] == 1 and stats["fallback_runs"] == 0, stats
    expected = torch.jit.CompilationUnit(LSTM_CELL, _frames_up=0).cell(*convert(args, "torch"))
    _close(result, expected, "lstm cell")


def test_fusion_off_by_switch():
    src = "def f(x):\n    return torch.tanh(x * 2 + 1) * torch.sigmoid(x) + x\n"
    x = kiln.from_numpy(np.ones((4, 4), dtype="float32"))
    with Fusion(False):
        assert "FusionGroup" not in str(kiln.compile(src).f.graph_for(x))
    with Fusion(True):
        assert "FusionGroup" in str(kiln.compile(src).f.graph_for(x))


def _in_process(code, env):
    full_env = dict(os.environ, PYTHONPATH=PYTHON_DIR, **env)
    out = subprocess.run([sys.executable, "-c", code], env=full_env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    return out.stdout


def test_kiln_fusion_env_turns_it_off():
    code = ("import kiln, numpy as np\n"
            "f = kiln.compile('def f(x):\\n    return torch.tanh(x * 2) + x\\n').f\n"
            "print('FusionGroup' in str(f.graph_for(kiln.from_numpy(np.ones(3, dtype='float32')))))\n")
    assert _in_process(code, {"KILN_FUSION": "0"}).strip() == "False"
    assert _in_process(code, {"KILN_FUSION": "1"}).strip() == "True"


CACHE_PROGRAM = textwrap.dedent("""\
    import json, kiln, numpy as np
    src = '''
    def f(x, y):
        return torch.tanh(x * 2 + 1) * torch.sigmoid(y) + x
    def g(x):
        return torch.relu(x) * 3 - x
    '''
    cu = kiln.compile(src)
    x = kiln.from_numpy(np.linspace(-2, 2, 24, dtype='float32').reshape(4, 6))
    a = cu.f(x, x).numpy().tolist()
    b = cu.g(x).numpy().tolist()
    s = kiln._C._fusion_stats()
    print(json.dumps({"a": a, "b": b, "compiled": s["compiled"], "disk_hits": s["disk_hits"],
                      "kernel_runs": s["kernel_runs"], "fallbacks": s["fallback_reasons"]}))
    """)


def test_kernel_cache_across_processes(tmp_path):
    import json
    env = {"KILN_KERNEL_CACHE": str(tmp_path)}
    first = json.loads(_in_process(CACHE_PROGRAM, env))
    assert first["compiled"] == 2 and first["kernel_runs"] == 2, first
    second = json.loads(_in_process(CACHE_PROGRAM, env))
    assert second["compiled"] == 0 and second["disk_hits"] == 2, second
    assert second["a"] == first["a"] and second["b"] == first["b"]
    # A corrupt cache file is ignored and rebuilt.
    files = [p for p in tmp_path.iterdir() if p.suffix == ".so"]
    assert len(files) == 2, list(tmp_path.iterdir())
    for p in files:
        p.write_bytes(p.read_bytes()[:100])
    third = json.loads(_in_process(CACHE_PROGRAM, env))
    assert third["compiled"] == 2 and third["kernel_runs"] == 2, third
    assert third["a"] == first["a"]


SHAPES_PROGRAM = textwrap.dedent("""\
    import json, kiln
    cu = kiln.compile('def f(x):\\n    return torch.tanh(x * 2 + 1) * torch.sigmoid(x) + x\\n')
    for shape in [(1000,), (2000,), (3, 4), (5, 6)]:
        cu.f(kiln.randn(*shape))
    s = kiln._C._fusion_stats()
    print(json.dumps({"compiled": s["compiled"], "kernel_runs": s["kernel_runs"]}))
    """)


def test_other_sizes_reuse_the_kernel(tmp_path):
    """The source, and so the kernel, depends on dtypes, ranks and layouts,
    not on sizes: contiguous inputs of four shapes run one kernel."""
    import json
    out = json.loads(_in_process(SHAPES_PROGRAM, {"KILN_KERNEL_CACHE": str(tmp_path)}))
    assert out == {"compiled": 1, "kernel_runs": 4}, out


def test_compile_failure_falls_back(tmp_path):
    import json
    env = {"KILN_KERNEL_CACHE": str(tmp_path), "KILN_CXX": "/bin/false"}
    out = json.loads(_in_process(CACHE_PROGRAM, env))
    reference = json.loads(_in_process(CACHE_PROGRAM, {"KILN_FUSION": "0", "KILN_KERNEL_CACHE": ""}))
    assert out["kernel_runs"] == 0 and out["compiled"] == 0, out
    assert any("compil" in reason for reason in out["fallbacks"]), out
    assert out["a"] == reference["a"] and out["b"] == reference["b"]


def test_output_smaller_than_the_loop_falls_back():
    """tanh(a) covers x's shape only, the loop covers x and y broadcast: the
    group runs node by node, with the reason counted."""
    src = "def f(x, y):\n    a = x * 2\n    return torch.tanh(a), a + y\n"
    x = np.linspace(-1, 1, 3, dtype="float32").reshape(3, 1)
    y = np.ones((3, 4), dtype="float32")
    kiln._C._reset_fusion_stats()
    result, error, _ = _run(src, "f", [x, y], fused=True)
    assert error is None, error
    stats = kiln._C._fusion_stats()
    assert stats["kernel_runs"] == 0 and stats["fallback_runs"] == 1, stats
    assert any("smaller" in reason for reason in stats["fallback_reasons"]), stats
    expected = torch.jit.CompilationUnit(src, _frames_up=0).f(*convert([x, y], "torch"))
    _close(result, expected, "fallback")
