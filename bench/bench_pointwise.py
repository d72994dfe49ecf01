"""Pointwise ops, kiln vs torch 1.13 side by side on 4M float32 elements:
median times and kiln/torch ratios.

    PYTHONPATH=python /usr/bin/python3 bench/bench_pointwise.py [threads] [op ...]

threads defaults to 1; naming ops runs only those."""
import sys
import timeit

import numpy as np
import torch

import kiln

N = 4 * 1024 * 1024


def paired_medians(kiln_fn, torch_fn, repeat=31):
    """Alternates the two calls so that load from other processes hits both alike."""
    kiln_fn()
    torch_fn()
    tk, tt = [], []
    for _ in range(repeat):
        tk.append(timeit.timeit(kiln_fn, number=1))
        tt.append(timeit.timeit(torch_fn, number=1))
    return float(np.median(tk)), float(np.median(tt))


def main():
    threads = int(sys.argv[1]) if len(sys.argv) > 1 else 1
    torch.set_num_threads(threads)
    kiln.set_num_threads(threads)
    rng = np.random.default_rng(0)
    a = rng.standard_normal(N).astype(np.float32)
    b = rng.standard_normal(N).astype(np.float32) + 3
    ka, kb = kiln.from_numpy(a.copy()), kiln.from_numpy(b.copy())
    ta, tb = torch.from_numpy(a.copy()), torch.from_numpy(b.copy())
    cases = {
        "add": lambda lib, x, y: lib.add(x, y),
        "mul": lambda lib, x, y: lib.mul(x, y),
        "sub": lambda lib, x, y: lib.sub(x, y),
        "div": lambda lib, x, y: lib.div(x, y),
        "mul_scalar": lambda lib, x, y: x * 2.5,
        "add_": lambda lib, x, y: x.add_(y),
        "maximum": lambda lib, x, y: lib.maximum(x, y),
        "gt": lambda lib, x, y: lib.gt(x, y),
        "where": lambda lib, x, y: lib.where(x > 0, x, y),
        "pow2": lambda lib, x, y: lib.pow(x, 2),
        "clamp": lambda lib, x, y: lib.clamp(x, -1, 1),
        "neg": lambda lib, x, y: lib.neg(x),
        "abs": lambda lib, x, y: lib.abs(x),
        "relu": lambda lib, x, y: lib.relu(x),
        "exp": lambda lib, x, y: lib.exp(x),
        "log": lambda lib, x, y: lib.log(y.abs()),
        "sqrt": lambda lib, x, y: lib.sqrt(y.abs()),
        "tanh": lambda lib, x, y: lib.tanh(x),
        "sigmoid": lambda lib, x, y: lib.sigmoid(x),
        "gelu": lambda lib, x, y: lib.ops.aten.gelu(x) if lib is torch else kiln.gelu(x),
        "erf": lambda lib, x, y: lib.erf(x),
        "sin": lambda lib, x, y: lib.sin(x),
        "addcmul": lambda lib, x, y: lib.addcmul(x, x, y),
        "lerp": lambda lib, x, y: lib.lerp(x, y, 0.3),
    }
    only = set(sys.argv[2:])
    print(f"{'op':12s} {'kiln ms':>9s} {'torch ms':>9s} {'ratio':>7s}   ({threads} thread(s), {N} float32)")
    for name, fn in cases.items():
        if only and name not in only:
            continue
        tk, tt = paired_medians(lambda: fn(kiln, ka, kb), lambda: fn(torch, ta, tb))
        print(f"{name:12s} {tk * 1e3:9.3f} {tt * 1e3:9.3f} {tk / tt:7.2f}")


if __name__ == "__main__":
    main()
