"""kiln against torch 1.13, side by side in one process, on the same data.

Both libraries run at the same thread count (1 by default). Each op is timed
`--repeats` times, alternating kiln and torch call by call so that drift in
the machine's speed hits both alike; the table reports the median, the
min-max spread and the ratio of medians (kiln / torch, lower is better).
Ops kiln does not have yet are listed as skipped.

    PYTHONPATH=python /usr/bin/python3 bench/bench_tensor.py [--repeats N] [--threads T]
"""
import argparse
import statistics
import sys
import time

import numpy as np
import torch

import kiln

ELEMENTS = 4 * 1024 * 1024
SHAPE = (1024, ELEMENTS // 1024)  # 4M float32, softmax along the last dim
MM_SIZE = 512


def _cases():
    """(label, aten ops kiln needs, make the arguments, run with lib)."""
    rng = np.random.default_rng(0)
    a = rng.standard_normal(SHAPE, dtype=np.float32)
    b = rng.standard_normal(SHAPE, dtype=np.float32)
    m1 = rng.standard_normal((MM_SIZE, MM_SIZE), dtype=np.float32)
    m2 = rng.standard_normal((MM_SIZE, MM_SIZE), dtype=np.float32)
    big = f"{ELEMENTS // (1024 * 1024)}M float32"
    return [
        (f"add {big}", ["add"], (a, b), lambda lib, x, y: lib.add(x, y)),
        (f"mul {big}", ["mul"], (a, b), lambda lib, x, y: lib.mul(x, y)),
        (f"tanh {big}", ["tanh"], (a,), lambda lib, x: lib.tanh(x)),
        (f"sigmoid {big}", ["sigmoid"], (a,), lambda lib, x: lib.sigmoid(x)),
        (f"sum {big}", ["sum"], (a,), lambda lib, x: lib.sum(x)),
        (f"softmax {big} (dim=-1, rows of {SHAPE[1]})", ["softmax"], (a,), lambda lib, x: lib.softmax(x, -1)),
        (f"mm {MM_SIZE}x{MM_SIZE} float32", ["mm"], (m1, m2), lambda lib, x, y: lib.mm(x, y)),
    ]


def _time_once(fn, args):
    start = time.perf_counter()
    fn(*args)
    return time.perf_counter() - start


def _check_same(label, kiln_result, torch_result):
    k = kiln_result.numpy().astype(np.float64)
    t = torch_result.numpy().astype(np.float64)
    scale = max(1.0, float(np.abs(t).max()) if t.size else 1.0)
    if k.shape != t.shape or not np.allclose(k, t, rtol=1e-3, atol=1e-4 * scale):
        raise SystemExit(f"{label}: kiln and torch disagree; not timing it")


def _fmt_ms(seconds):
    return f"{seconds * 1e3:.3f}"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=41, help="timed calls per op and library")
    parser.add_argument("--warmup", type=int, default=3, help="untimed calls first")
    parser.add_argument("--threads", type=int, default=1, help="threads for both libraries")
    opts = parser.parse_args()

    torch.set_num_threads(opts.threads)
    kiln.set_num_threads(opts.threads)
    available = kiln._C._operators("aten")

    rows, skipped = [], []
    for label, needs, arrays, fn in _cases():
        missing = [name for name in needs if name not in available]
        if missing:
            skipped.append(f"{label}: aten::{', aten::'.join(missing)} not registered in this build")
            continue
        kiln_args = tuple(kiln.from_numpy(x) for x in arrays)
        torch_args = tuple(torch.from_numpy(x) for x in arrays)
        run_kiln = lambda *xs: fn(kiln, *xs)  # noqa: E731
        run_torch = lambda *xs: fn(torch, *xs)  # noqa: E731
        _check_same(label, run_kiln(*kiln_args), run_torch(*torch_args))
        for _ in range(opts.warmup):
            run_kiln(*kiln_args)
            run_torch(*torch_args)
        kiln_times, torch_times = [], []
        for _ in range(opts.repeats):
            kiln_times.append(_time_once(run_kiln, kiln_args))
            torch_times.append(_time_once(run_torch, torch_args))
        km, tm = statistics.median(kiln_times), statistics.median(torch_times)
        rows.append((label, km, min(kiln_times), max(kiln_times), tm, min(torch_times), max(torch_times), km / tm))

    print(f"kiln vs torch {torch.__version__}, {opts.threads} thread(s), median of {opts.repeats} calls "
          f"(spread: min-max), times in ms\n")
    print("| op | kiln median | kiln min-max | torch median | torch min-max | kiln/torch |")
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    for label, km, kmin, kmax, tm, tmin, tmax, ratio in rows:
        print(f"| {label} | {_fmt_ms(km)} | {_fmt_ms(kmin)}-{_fmt_ms(kmax)} | {_fmt_ms(tm)} | "
              f"{_fmt_ms(tmin)}-{_fmt_ms(tmax)} | {ratio:.2f} |")
    if skipped:
        print("\nskipped (ops from other parts of kiln not present in this build):")
        for line in skipped:
            print(f"- {line}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
