"""Interpreter speed, side by side with TorchScript (torch 1.13) in one
process at one thread: the same TorchScript program, compiled by torch, its
graph text parsed by kiln and run by kiln's interpreter.

  PYTHONPATH=python /usr/bin/python3 bench/bench_interpreter.py [--repeat N]
"""
import argparse
import os
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "python"))
import kiln  # noqa: E402
import torch  # noqa: E402

PROGRAMS = {
    "scalar loop 1e6: s += (i * i) % 7": ('''
def f(n: int) -> int:
    s = 0
    for i in range(n):
        s += (i * i) % 7
    return s
''', lambda lib: (1000000,)),
    "16-elem x = x * 0.5 + 1.0, 1e4 iters": ('''
def f(x, n: int):
    for i in range(n):
        x = x * 0.5 + 1.0
    return x
''', lambda lib: (lib.from_numpy(np.ones(16, dtype=np.float32)), 10000)),
    "one call from Python: a + b on ints": ('''
def f(a: int, b: int) -> int:
    return a + b
''', lambda lib: (3, 4)),
}


def median_time(fn, args, repeat):
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn(*args)
        times.append(time.perf_counter() - start)
    return statistics.median(times), min(times), max(times)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=11)
    opts = parser.parse_args()
    torch.set_num_threads(1)
    kiln.set_num_threads(1)
    print(f"{'program':40s} {'torch us':>10s} {'kiln us':>10s} {'kiln/torch':>10s}  (kiln min-max us)")
    for name, (src, make_args) in PROGRAMS.items():
        cu = torch.jit.CompilationUnit(src)
        graph_text = str(cu.f.graph)
        kf = kiln.function_from_graph("f", kiln.parse_ir(graph_text))
        targs, kargs = make_args(torch), make_args(kiln)
        for _ in range(3):  # warm up: torch's profiling executor compiles on the second call
            cu.f(*targs)
            kf(*kargs)
        t, _, _ = median_time(cu.f, targs, opts.repeat)
        k, kmin, kmax = median_time(kf, kargs, opts.repeat)
        print(f"{name:40s} {t * 1e6:10.1f} {k * 1e6:10.1f} {k / t:10.3f}  ({kmin * 1e6:.1f}-{kmax * 1e6:.1f})")


if __name__ == "__main__":
    main()
