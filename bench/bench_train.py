"""Training speed, kiln against torch 1.13 in one process at one thread,
calls taken in turn so that drift in the (noisy) machine hits both alike;
medians with [min .. max] of the repeats.

  PYTHONPATH=python /usr/bin/python3 bench/bench_train.py [--repeat N] [--quick] [--profile]

Rows:
  - seed 003's LSTM: 100 steps of the LSTM cell (batch 64, input and hidden
    512) as a TorchScript loop, forward + backward of sum(h) + sum(c) into the
    weights. torch runs the scripted function (its graph autodiff); kiln runs
    its compiled function when that records gradients, else the same loop
    eagerly (marked "eager"); torch eager is shown too;
  - one training step of an MLP (batch 64, 784-512-512-10, ReLU,
    cross-entropy, SGD with momentum): zero_grad, forward, backward, step;
    and the same step split into its phases;
  - one training step of ResNet-18 at batch 8 (torchvision's model and
    kiln's from the same weights; SGD with momentum). Skipped with a message
    while kiln cannot differentiate one of its ops.
--profile prints cProfile's view of kiln's MLP step (where the Python time goes).
"""
import argparse
import cProfile
import io
import os
import pstats
import statistics
import sys
import time

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python"))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "python"))
import kiln  # noqa: E402
import torch  # noqa: E402
from seed_lstm import LSTM_LOOP, eager  # noqa: E402


def timed_in_turn(calls, repeat):
    """Median, fastest and slowest time of each fn in `calls`, called in turn in every round."""
    times = [[] for _ in calls]
    for _ in range(repeat):
        for k, fn in enumerate(calls):
            start = time.perf_counter()
            fn()
            times[k].append(time.perf_counter() - start)
    return [(statistics.median(t), min(t), max(t)) for t in times]


def report(name, labels, rows, base="torch"):
    base_time = rows[labels.index(base)][0]
    for label, (med, lo, hi) in zip(labels, rows):
        print(f"{name:30s} {label:14s} {med * 1e3:10.2f} ms  [{lo * 1e3:9.2f} .. {hi * 1e3:9.2f}]"
              f"  {med / base_time:6.3f}x torch", flush=True)


# --- seed 003's LSTM ---------------------------------------------------------------------------

def lstm_inputs(lib, steps, batch=64, size=512):
    r = np.random.RandomState(0)
    f = lambda *s: lib.from_numpy((r.randn(*s) * 0.1).astype(np.float32))  # noqa: E731
    x = f(steps, batch, size)
    weights = [f(4 * size, size), f(4 * size, size), f(4 * size), f(4 * size)]
    for w in weights:
        w.requires_grad_(True)
    return [x, f(batch, size), f(batch, size)] + weights


def lstm_step(fn, args):
    def step():
        for w in args[3:]:
            w.grad = None
        hs, cx = fn(*args)
        (hs.sum() + cx.sum()).backward()

    return step


def bench_lstm(steps, repeat):
    t_args, k_args = lstm_inputs(torch, steps), lstm_inputs(kiln, steps)
    labels = ["torch", "torch eager"]
    calls = [lstm_step(torch.jit.CompilationUnit(LSTM_LOOP).lstm, t_args), lstm_step(eager(torch).lstm, t_args)]
    compiled = kiln.compile(LSTM_LOOP).lstm
    probe = compiled(*lstm_inputs(kiln, 2))[0]
    if probe.grad_fn is not None:
        labels.append("kiln")
        calls.append(lstm_step(compiled, k_args))
    else:
        print("  (kiln's compiled function does not record gradients yet: kiln runs the loop eagerly)")
    labels.append("kiln eager")
    calls.append(lstm_step(eager(kiln).lstm, k_args))
    for call in calls:  # warm-up: torch's profiling executor specializes after two runs
        for _ in range(3):
            call()
    report(f"LSTM {steps} steps b64 512 f+b", labels, timed_in_turn(calls, repeat))


# --- MLP training step -------------------------------------------------------------------------

def mlp(lib):
    nn = lib.nn
    return nn.Sequential(nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(), nn.Linear(512, 10))


def copy_weights(k_module, t_module):
    k_module.load_state_dict({k: kiln.from_numpy(v.detach().numpy().copy()) for k, v in t_module.state_dict().items()})


class Trainer:
    """One library's model, optimizer and batch; step() is one training step, phases() its parts."""

    def __init__(self, lib, model, x, y, lr=0.01):
        self.lib, self.model = lib, model
        self.x, self.y = lib.from_numpy(x.copy()), lib.from_numpy(y.copy())
        self.opt = lib.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
        self.loss = None

    def zero_grad(self):
        self.opt.zero_grad()

    def forward(self):
        self.loss = self.lib.nn.functional.cross_entropy(self.model(self.x), self.y)

    def backward(self):
        self.loss.backward()

    def update(self):
        self.opt.step()

    def step(self):
        self.zero_grad()
        self.forward()
        self.backward()
        self.update()


def trainers(t_model, k_model, x, y):
    copy_weights(k_model, t_model)
    return Trainer(torch, t_model, x, y), Trainer(kiln, k_model, x, y)


def bench_mlp(repeat, profile):
    torch.manual_seed(0)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((64, 784)).astype(np.float32)
    y = rng.integers(0, 10, 64).astype(np.int64)
    t, k = trainers(mlp(torch), mlp(kiln), x, y)
    for _ in range(10):
        t.step()
        k.step()
    report("MLP training step b64", ["torch", "kiln"], timed_in_turn([t.step, k.step], repeat))
    # Where the time goes: each phase timed alone (the others run untimed around it).
    for phase in ("zero_grad", "forward", "backward", "update"):
        times = {"torch": [], "kiln": []}
        for _ in range(max(repeat // 2, 5)):
            for label, tr in (("torch", t), ("kiln", k)):
                tr.zero_grad()
                if phase != "zero_grad":
                    tr.forward()
                if phase in ("update",):
                    tr.backward()
                start = time.perf_counter()
                getattr(tr, phase)()
                times[label].append(time.perf_counter() - start)
                if phase in ("zero_grad", "forward"):
                    if phase == "zero_grad":
                        tr.forward()
                    tr.backward()
                if phase != "update":
                    tr.update()
        rows = [(statistics.median(v), min(v), max(v)) for v in times.values()]
        report(f"  MLP phase: {phase}", list(times), rows)
    if profile:
        prof = cProfile.Profile()
        prof.enable()
        for _ in range(200):
            k.step()
        prof.disable()
        out = io.StringIO()
        pstats.Stats(prof, stream=out).sort_stats("tottime").print_stats(15)
        print("cProfile of 200 kiln MLP steps (by own time):")
        print("\n".join(out.getvalue().splitlines()[:40]))


# --- ResNet-18 training step -------------------------------------------------------------------

def bench_resnet(repeat):
    import model_zoo as zoo
    import torchvision

    torch.manual_seed(0)
    t_model = torchvision.models.resnet18()
    k_model = zoo.resnet18(zoo.KILN)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((8, 3, 224, 224)).astype(np.float32)
    y = rng.integers(0, 1000, 8).astype(np.int64)
    t, k = trainers(t_model, k_model, x, y)
    try:
        k.step()
    except Exception as e:  # noqa: BLE001 (any missing derivative)
        print(f"{'ResNet-18 training step b8':30s} skipped: kiln cannot run its backward yet ({e})")
        return
    for _ in range(2):
        t.step()
        k.step()
    report("ResNet-18 training step b8", ["torch", "kiln"], timed_in_turn([t.step, k.step], repeat))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--quick", action="store_true", help="a 10-step LSTM, fewer repeats")
    parser.add_argument("--profile", action="store_true", help="cProfile kiln's MLP step")
    parser.add_argument("--only", choices=["mlp", "lstm", "resnet"], action="append",
                        help="run only this benchmark (may be repeated)")
    opts = parser.parse_args()
    torch.set_num_threads(1)
    kiln.set_num_threads(1)
    repeat = 3 if opts.quick else opts.repeat
    print(f"threads: 1; {kiln.parallel_info().splitlines()[2]}")
    print(f"{'benchmark':30s} {'runner':14s} {'median':>13s}  {'[min .. max]':>24s}")
    only = set(opts.only or ["mlp", "lstm", "resnet"])
    if "mlp" in only:
        bench_mlp(max(repeat * 10, 30), opts.profile)
    if "lstm" in only:
        bench_lstm(10 if opts.quick else 100, repeat)
    if "resnet" in only:
        bench_resnet(repeat)


if __name__ == "__main__":
    main()
