"""The CPU fuser against torch 1.13 (which does not fuse on CPU), side by side
in one process at one thread (torch, kiln and OpenBLAS; --threads N for
more): the same
TorchScript source compiled by each, medians of repeated calls after warm-up,
torch's and kiln's calls taken in turn so that drift in the machine hits
both alike.

  PYTHONPATH=python /usr/bin/python3 bench/bench_fuser.py [--repeat N] [--quick] [--threads N]

Rows:
  - pointwise: tanh(x * 2 + 1) * sigmoid(x) + x on 4M float32, with the bytes
    it moves per second next to a plain copy (clone) of the same bytes;
  - LSTM cell, batch 64, input and hidden 512;
  - a 100-step LSTM of that cell written as a TorchScript loop;
  - kiln with fusion off (KILN_FUSION=0 semantics) for each, to show what
    fusion itself buys;
  - compile latency: the first call in a process with an empty kernel cache,
    then a second process with the cache warm (it compiles nothing).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

# Before numpy, torch and kiln load OpenBLAS: its thread count at start-up.
_THREADS = int(sys.argv[sys.argv.index("--threads") + 1]) if "--threads" in sys.argv[:-1] else 1
os.environ.setdefault("OPENBLAS_NUM_THREADS", str(_THREADS))

import numpy as np  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "python"))
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests", "python"))
import kiln  # noqa: E402
import torch  # noqa: E402
from seed_lstm import LSTM_CELL as SEED_LSTM_CELL, LSTM_LOOP  # noqa: E402

POINTWISE = """
def f(x):
    return torch.tanh(x * 2 + 1) * torch.sigmoid(x) + x
"""

# The seed's cell with the state as two arguments (the call inlines).
LSTM_CELL = SEED_LSTM_CELL + """
def cell(x, hx, cx, w_ih, w_hh, b_ih, b_hh):
    return lstm_cell(x, (hx, cx), w_ih, w_hh, b_ih, b_hh)
"""


def timed_in_turn(calls, repeat):
    """Median, fastest and slowest time of each (fn, args) in `calls`, called
    in turn in every round, so that drift in the machine hits them alike."""
    times = [[] for _ in calls]
    for _ in range(repeat):
        for k, (fn, args) in enumerate(calls):
            start = time.perf_counter()
            fn(*args)
            times[k].append(time.perf_counter() - start)
    return [(statistics.median(t), min(t), max(t)) for t in times]


def lstm_args(steps, batch=64, size=512, seed=0):
    r = np.random.RandomState(seed)
    f = lambda *s: (r.randn(*s) * 0.1).astype(np.float32)  # noqa: E731
    x = f(steps, batch, size) if steps else f(batch, size)
    return [x, f(batch, size), f(batch, size), f(4 * size, size), f(4 * size, size), f(4 * size), f(4 * size)]


def compare(name, src, fn_name, np_args, repeat, nbytes=None, warmup=3):
    tfn = getattr(torch.jit.CompilationUnit(src), fn_name)
    calls = {"torch": (tfn, [torch.from_numpy(a.copy()) for a in np_args])}
    for label, fused in (("kiln", True), ("kiln unfused", False)):
        # A plan is fused or not as the switch was when it was compiled: the
        # warm-up compiles it.
        kiln._C._jit_set_fusion_enabled(fused)
        calls[label] = (getattr(kiln.compile(src), fn_name), [kiln.from_numpy(a.copy()) for a in np_args])
        for _ in range(warmup):
            calls[label][0](*calls[label][1])
    kiln._C._jit_set_fusion_enabled(True)
    for _ in range(warmup):
        tfn(*calls["torch"][1])
    rows = dict(zip(calls, timed_in_turn(list(calls.values()), repeat)))
    base = rows["torch"][0]
    for label, (med, lo, hi) in rows.items():
        extra = f"  {nbytes / med / 1e9:6.1f} GB/s" if nbytes else ""
        print(f"{name:34s} {label:13s} {med * 1e3:9.3f} ms  [{lo * 1e3:8.3f} .. {hi * 1e3:8.3f}]"
              f"  {med / base:6.3f}x torch{extra}")
    return rows


COMPILE_PROBE = """
import json, time, kiln, numpy as np
src = '''%s'''
fn = kiln.compile(src).f
x = kiln.from_numpy(np.random.RandomState(0).randn(1 << 16).astype(np.float32))
start = time.perf_counter(); fn(x); first = time.perf_counter() - start
start = time.perf_counter(); fn(x); second = time.perf_counter() - start
s = kiln._C._fusion_stats()
print(json.dumps({"first": first, "second": second, "compiled": s["compiled"], "disk_hits": s["disk_hits"],
                  "compile_seconds": s["compile_seconds"]}))
""" % POINTWISE


def compile_latency():
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, KILN_KERNEL_CACHE=cache,
                   PYTHONPATH=os.path.join(os.path.dirname(__file__), "..", "python"))
        runs = []
        for _ in range(2):
            out = subprocess.run([sys.executable, "-c", COMPILE_PROBE], env=env, capture_output=True, text=True,
                                 check=True)
            runs.append(json.loads(out.stdout))
    cold, warm = runs
    per_kernel = cold["compile_seconds"] / max(cold["compiled"], 1)
    print(f"compile latency, empty cache:  first call {cold['first'] * 1e3:7.1f} ms, "
          f"{cold['compiled']} kernel(s) compiled, {per_kernel * 1e3:.1f} ms each; "
          f"second call {cold['second'] * 1e3:.3f} ms")
    print(f"second process, warm cache:    first call {warm['first'] * 1e3:7.1f} ms, "
          f"{warm['compiled']} compiled, {warm['disk_hits']} loaded from disk")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--quick", action="store_true", help="smaller LSTM loop (10 steps), fewer repeats")
    parser.add_argument("--threads", type=int, default=1, help="intra-op threads for torch, kiln and BLAS")
    opts = parser.parse_args()
    torch.set_num_threads(opts.threads)
    kiln.set_num_threads(opts.threads)
    print(f"threads: {opts.threads}; " + kiln.parallel_info().splitlines()[2])
    repeat = 5 if opts.quick else opts.repeat

    x = np.random.RandomState(0).randn(4 << 20).astype(np.float32)
    nbytes = 2 * x.nbytes  # one read and one write of 4M float32
    print(f"{'benchmark':34s} {'runner':13s} {'median':>12s}  {'[min .. max]':>24s}")
    compare("pointwise 4M float32", POINTWISE, "f", [x], repeat, nbytes)
    copies = (("torch", torch.clone, torch.from_numpy(x.copy())), ("kiln", kiln.clone, kiln.from_numpy(x.copy())))
    for _, fn, arg in copies:
        fn(arg)
    for (label, _, _), (med, lo, hi) in zip(copies, timed_in_turn([(fn, [arg]) for _, fn, arg in copies], repeat)):
        print(f"{'copy of the same bytes':34s} {label:13s} {med * 1e3:9.3f} ms  [{lo * 1e3:8.3f} .. {hi * 1e3:8.3f}]"
              f"  {'':13s}{nbytes / med / 1e9:6.1f} GB/s")
    compare("LSTM cell b64 512/512", LSTM_CELL, "cell", lstm_args(0), max(repeat, 30))
    steps = 10 if opts.quick else 100
    compare(f"LSTM loop {steps} steps", LSTM_LOOP, "lstm", lstm_args(steps), max(3, repeat // 3))
    compile_latency()


if __name__ == "__main__":
    main()
