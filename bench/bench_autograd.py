"""Eager autograd overhead: a small chain of ops on small tensors, forward
plus backward, kiln against torch 1.13 in one process, calls alternated, one
thread. Prints the median time per iteration and per recorded op, and the
ratio. Usage: PYTHONPATH=python /usr/bin/python3 bench/bench_autograd.py"""
import statistics
import sys
import time

import numpy as np
import torch

sys.path.insert(0, "python")
import kiln  # noqa: E402

torch.set_num_threads(1)
kiln.set_num_threads(1)

OPS_PER_ITER = 8  # mul, sin, add, mul, tanh, mul(scalar), sum, + AccumulateGrad


def chain(x, w):
    y = (x * w).sin() + x
    return ((y * y).tanh() * 0.5).sum()


def make(lib, n):
    rng = np.random.default_rng(0)
    x = lib.from_numpy(rng.standard_normal(n).astype(np.float32))
    w = lib.from_numpy(rng.standard_normal(n).astype(np.float32))
    x.requires_grad_(True)
    return x, w


def step(x, w):
    chain(x, w).backward()


def main(n=16, reps=200, rounds=15):
    libs = {"torch": make(torch, n), "kiln": make(kiln, n)}
    times = {"torch": [], "kiln": []}
    for lib in libs:
        for _ in range(20):
            step(*libs[lib])
    for _ in range(rounds):
        for lib in ("torch", "kiln"):
            x, w = libs[lib]
            start = time.perf_counter()
            for _ in range(reps):
                step(x, w)
            times[lib].append((time.perf_counter() - start) / reps)
    for lib in ("torch", "kiln"):
        med = statistics.median(times[lib])
        spread = (min(times[lib]), max(times[lib]))
        print(f"{lib:6s} forward+backward {med * 1e6:8.1f} us/iter, {med * 1e6 / OPS_PER_ITER:6.1f} us/op "
              f"(min {spread[0] * 1e6:.1f}, max {spread[1] * 1e6:.1f})")
    print(f"kiln/torch: {statistics.median(times['kiln']) / statistics.median(times['torch']):.2f}x")


if __name__ == "__main__":
    main()
