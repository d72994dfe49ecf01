"""kiln demo: one LSTM cell step on kiln tensors, checked against numpy and timed.

    gates = x @ w_ih.t() + h @ w_hh.t() + b
    i, f, g, o = gates.chunk(4, 1)
    c' = sigmoid(f) * c + sigmoid(i) * tanh(g)
    h' = sigmoid(o) * tanh(c')

Batch 64, input and hidden size 512, float32, both libraries on the same
number of threads (1 by default; OpenBLAS follows it).

    PYTHONPATH=python /usr/bin/python3 examples/demo.py [--threads T] [--repeats N]
"""
import argparse
import os
import statistics
import sys
import time

BATCH, INPUT, HIDDEN = 64, 512, 512
# The aten ops the cell uses (matmul via @, t, add via +, chunk, sigmoid, tanh, mul via *).
NEEDED_OPS = ["matmul", "t", "add", "chunk", "sigmoid", "tanh", "mul"]


def _parse():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--repeats", type=int, default=51)
    return parser.parse_args()


OPTS = _parse()
# numpy's BLAS reads its thread count when it loads: set it before the import.
os.environ.setdefault("OPENBLAS_NUM_THREADS", str(OPTS.threads))
os.environ.setdefault("OMP_NUM_THREADS", str(OPTS.threads))

import numpy as np  # noqa: E402

import kiln  # noqa: E402


def lstm_cell(x, h, c, w_ih, w_hh, b, sigmoid, tanh):
    """The cell on kiln tensors."""
    gates = x @ w_ih.t() + h @ w_hh.t() + b
    i, f, g, o = gates.chunk(4, 1)
    i, f, g, o = sigmoid(i), sigmoid(f), tanh(g), sigmoid(o)
    cy = f * c + i * g
    hy = o * tanh(cy)
    return hy, cy


def lstm_cell_numpy(x, h, c, w_ih, w_hh, b):
    gates = x @ w_ih.T + h @ w_hh.T + b
    i, f, g, o = np.split(gates, 4, axis=1)

    def sigmoid(v):
        return 1 / (1 + np.exp(-v))

    i, f, g, o = sigmoid(i), sigmoid(f), np.tanh(g), sigmoid(o)
    cy = f * c + i * g
    hy = o * np.tanh(cy)
    return hy, cy


def median_ms(fn, repeats):
    fn()  # warm up
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e3, min(times) * 1e3, max(times) * 1e3


def main():
    missing = [name for name in NEEDED_OPS if name not in kiln._C._operators("aten")]
    if missing:
        print("kiln demo: this build lacks the operators " + ", ".join(f"aten::{m}" for m in missing) +
              ", which the LSTM cell needs.\nThey come from other parts of kiln that are not merged into this "
              "build yet; the demo runs once they are.", file=sys.stderr)
        return 1

    kiln.set_num_threads(OPTS.threads)
    rng = np.random.default_rng(0)
    scale = 1 / np.sqrt(HIDDEN)
    arrays = {
        "x": rng.standard_normal((BATCH, INPUT), dtype=np.float32),
        "h": rng.standard_normal((BATCH, HIDDEN), dtype=np.float32),
        "c": rng.standard_normal((BATCH, HIDDEN), dtype=np.float32),
        "w_ih": (rng.uniform(-scale, scale, (4 * HIDDEN, INPUT))).astype(np.float32),
        "w_hh": (rng.uniform(-scale, scale, (4 * HIDDEN, HIDDEN))).astype(np.float32),
        "b": (rng.uniform(-scale, scale, (4 * HIDDEN,))).astype(np.float32),
    }
    tensors = {name: kiln.from_numpy(a) for name, a in arrays.items()}

    def run_kiln():
        return lstm_cell(**tensors, sigmoid=kiln.sigmoid, tanh=kiln.tanh)

    def run_numpy():
        return lstm_cell_numpy(**arrays)

    hy, cy = run_kiln()
    hy_ref, cy_ref = run_numpy()
    err = max(float(np.abs(hy.numpy() - hy_ref).max()), float(np.abs(cy.numpy() - cy_ref).max()))
    print(f"LSTM cell, batch {BATCH}, input {INPUT}, hidden {HIDDEN}, float32, {OPTS.threads} thread(s)")
    print(f"hy {tuple(hy.shape)}, cy {tuple(cy.shape)}; max |kiln - numpy| = {err:.2e}")
    if not err < 1e-4:
        print("kiln demo: results differ from numpy", file=sys.stderr)
        return 1

    k_med, k_min, k_max = median_ms(run_kiln, OPTS.repeats)
    n_med, n_min, n_max = median_ms(run_numpy, OPTS.repeats)
    print(f"kiln : {k_med:7.3f} ms median ({k_min:.3f}-{k_max:.3f})")
    print(f"numpy: {n_med:7.3f} ms median ({n_min:.3f}-{n_max:.3f})")
    print(f"kiln/numpy: {k_med / n_med:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
