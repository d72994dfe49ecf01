"""Compile speed, side by side with TorchScript (torch 1.13) in one process:
seed 001's LSTM cell compiled from source, N times each way, medians.

  kiln.compile(src)   vs torch.jit.script(fn)              (fn from a temp file holding src)
  kiln.script(fn)     vs torch.jit.script(fn)
  kiln.compile(src)   vs torch.jit.CompilationUnit(src)

Target (issue 5): kiln at most 0.1x torch's time.

  PYTHONPATH=python /usr/bin/python3 bench/bench_compile.py [--repeat N]
"""
import argparse
import importlib.util
import os
import statistics
import sys
import tempfile
import time
import types

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "python"))
import kiln  # noqa: E402
import torch  # noqa: E402

# The function alone: torch.jit.CompilationUnit refuses import lines (its
# `torch` comes from this module's globals); the temp file imports torch.
LSTM_CELL = '''def LSTMCell(x, hx, cx, w_ih, w_hh, b_ih, b_hh):
    gates = x.mm(w_ih.t()) + hx.mm(w_hh.t()) + b_ih + b_hh
    ingate, forgetgate, cellgate, outgate = gates.chunk(4, 1)
    ingate = torch.sigmoid(ingate)
    forgetgate = torch.sigmoid(forgetgate)
    cellgate = torch.tanh(cellgate)
    outgate = torch.sigmoid(outgate)
    cy = (forgetgate * cx) + (ingate * cellgate)
    hy = outgate * torch.tanh(cy)
    return hy, cy
'''


def paired_medians(kiln_fn, torch_fn, repeat, block=10):
    """Median times of the two, measured in alternating blocks so that a
    machine whose speed drifts (shared, throttled) affects both alike; each
    block's first call (cold caches after the other compiler ran) is not counted."""
    kiln_times, torch_times = [], []
    for _ in range(max(1, repeat // block)):
        for fn, times in ((torch_fn, torch_times), (kiln_fn, kiln_times)):
            fn()
            for _ in range(block):
                start = time.perf_counter()
                fn()
                times.append(time.perf_counter() - start)
    return statistics.median(kiln_times), statistics.median(torch_times)


def load_module(path):
    spec = importlib.util.spec_from_file_location("lstm_cell_bench", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def fresh(fn):
    """A new function object with fn's code: both torch.jit.script and
    kiln.script cache their result on (or by) the function object."""
    return types.FunctionType(fn.__code__, fn.__globals__, fn.__name__)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=51)
    opts = parser.parse_args()
    torch.set_num_threads(1)
    kiln.set_num_threads(1)

    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "lstm_cell.py")
        with open(path, "w") as f:
            f.write("import torch\n\n\n" + LSTM_CELL)
        fn = load_module(path).LSTMCell
        # The measure is the first row: compiling the source against
        # torch.jit.script of the same source. The others are for context.
        cases = [
            ("kiln.compile vs jit.script", lambda: kiln.compile(LSTM_CELL), lambda: torch.jit.script(fresh(fn))),
            ("kiln.script vs jit.script", lambda: kiln.script(fresh(fn)), lambda: torch.jit.script(fresh(fn))),
            ("kiln.compile vs CompilationUnit", lambda: kiln.compile(LSTM_CELL),
             lambda: torch.jit.CompilationUnit(LSTM_CELL, _frames_up=0)),
        ]
        print(f"{'LSTM cell compile':32s} {'torch us':>10s} {'kiln us':>10s} {'kiln/torch':>10s}  (target <= 0.1)")
        for name, kiln_compile, torch_compile in cases:
            for _ in range(3):
                kiln_compile()
                torch_compile()
            k, t = paired_medians(kiln_compile, torch_compile, opts.repeat)
            print(f"{name:32s} {t * 1e6:10.1f} {k * 1e6:10.1f} {k / t:10.3f}")


if __name__ == "__main__":
    main()
