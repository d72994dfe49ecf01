"""Reductions and softmax, kiln vs torch 1.13, one thread, median times.

    PYTHONPATH=python /usr/bin/python3 bench/bench_reduce.py [filter]
"""
import sys
import time

import numpy as np
import torch

import kiln

torch.set_num_threads(1)
kiln.set_num_threads(1)


def timed(fn):
    # CPU time of this thread (both libraries run on it with one thread), so
    # time spent descheduled on a busy machine does not count.
    start = time.thread_time()
    fn()
    return time.thread_time() - start


def case(name, array, fn, repeat=31):
    """kiln and torch calls alternate, so load from other processes hits both alike;
    the ratio of the fastest runs is the steadier figure on a busy machine."""
    k = kiln.from_numpy(array)
    t = torch.from_numpy(array)
    run_kiln, run_torch = (lambda: fn(kiln, k)), (lambda: fn(torch, t))
    run_kiln(), run_torch()
    times = np.array([(timed(run_kiln), timed(run_torch)) for _ in range(repeat)])
    tk, tt = np.median(times, axis=0)
    mk, mt = np.min(times, axis=0)
    print(f"{name:34s} kiln {tk * 1e3:8.3f} ms  torch {tt * 1e3:8.3f} ms  ratio {tk / tt:5.2f}"
          f"  (min ratio {mk / mt:5.2f})")


def main():
    rng = np.random.default_rng(0)
    flat = rng.standard_normal(1 << 22).astype(np.float32)
    mat = flat.reshape(4096, 1024)
    cases = [
        ("sum 4M f32", flat, lambda lib, x: x.sum()),
        ("sum [4096,1024] dim 1", mat, lambda lib, x: x.sum(1)),
        ("sum [4096,1024] dim 0", mat, lambda lib, x: x.sum(0)),
        ("sum [1024,4096]^T dim 1", mat.reshape(1024, 4096).T, lambda lib, x: x.sum(1)),
        ("sum 4M f64", flat.astype(np.float64), lambda lib, x: x.sum()),
        ("sum 4M i32", (flat * 100).astype(np.int32), lambda lib, x: x.sum()),
        ("mean [4096,1024] dim 1", mat, lambda lib, x: x.mean(1)),
        ("max 4M f32", flat, lambda lib, x: x.max()),
        ("amax [4096,1024] dim 1", mat, lambda lib, x: x.amax(1)),
        ("max.dim [4096,1024] dim 1", mat, lambda lib, x: x.max(1)),
        ("max.dim [4096,1024] dim 0", mat, lambda lib, x: x.max(0)),
        ("argmax 4M f32", flat, lambda lib, x: x.argmax()),
        ("prod [4096,1024] dim 0", mat, lambda lib, x: x.prod(0)),
        ("norm 4M f32", flat, lambda lib, x: x.norm()),
        ("var [4096,1024] dim 1", mat, lambda lib, x: x.var(1)),
        ("var [4096,1024] dim 0", mat, lambda lib, x: x.var(0)),
        ("all 4M f32", flat, lambda lib, x: x.all()),
        ("softmax [4096,1024] dim 1", mat, lambda lib, x: x.softmax(1)),
        ("softmax [4096,1024] dim 0", mat, lambda lib, x: x.softmax(0)),
        ("log_softmax [4096,1024] dim 1", mat, lambda lib, x: x.log_softmax(1)),
        ("logsumexp [4096,1024] dim 1", mat, lambda lib, x: x.logsumexp(1)),
        ("logsumexp [4096,1024] dim 0", mat, lambda lib, x: x.logsumexp(0)),
        ("cumsum [4096,1024] dim 1", mat, lambda lib, x: x.cumsum(1)),
        ("cumsum [4096,1024] dim 0", mat, lambda lib, x: x.cumsum(0)),
    ]
    pattern = sys.argv[1] if len(sys.argv) > 1 else ""
    for name, array, fn in cases:
        if pattern in name:
            case(name, array, fn)


if __name__ == "__main__":
    main()
