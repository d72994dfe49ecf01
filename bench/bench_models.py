"""Whole models: kiln against torch 1.13 on the same CPU, in one process.

Each model (tests/python/model_zoo.py) is built in torch, scripted, saved
with torch.jit.save and loaded by kiln.load, so both run the same archive.
torch runs its best: torch.jit.freeze + torch.jit.optimize_for_inference,
under no_grad. kiln runs its best, under kiln.no_grad(): kiln.optimize_for_inference where kiln
has it, else kiln.freeze where it has that, else the loaded module. Calls are
taken in turn (torch, kiln, torch, ...) so that drift in a shared machine
hits both alike; each row is the median of the repeats with the spread.

  PYTHONPATH=python /usr/bin/python3 bench/bench_models.py [--threads N] [--batch B] [--repeat R]
      [--models a,b] [--quick] [--memory]

--memory reports memory instead of time: each engine runs in a subprocess of
its own (torch; kiln; kiln with KILN_MEMORY_PLAN=0). Each scripts and saves
the model with torch, drops the eager model, measures its resident set
(VmRSS), then loads the archive's bytes with its engine and optimizes it
(torch.jit.load + freeze + optimize_for_inference, or kiln.load +
kiln.optimize_for_inference: each holds its own weights, prepacked or not),
makes three warm-up calls, returns freed heap pages (malloc_trim, on both
sides) and reports what stayed resident, then the peak (VmHWM, reset through
/proc/self/clear_refs) over the steady-state calls. Figures are MiB over the
first measure (taken before the archive file is read, once each engine's
input exists).

Targets (issue 19): kiln <= 0.8x torch at batch 1 on ResNet-18, MobileNetV2,
the Transformer encoder and the LSTM model; <= 1.0x everywhere.
"""
import argparse
import ctypes
import gc
import io
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python"))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "python"))

import numpy as np  # noqa: E402
import torch  # noqa: E402

import kiln  # noqa: E402
import model_zoo as zoo  # noqa: E402

MODELS = {
    "resnet18": (zoo.resnet18, lambda b: torch.randn(b, 3, 224, 224)),
    "mobilenet_v2": (zoo.mobilenet_v2, lambda b: torch.randn(b, 3, 224, 224)),
    "squeezenet1_0": (zoo.squeezenet1_0, lambda b: torch.randn(b, 3, 224, 224)),
    "shufflenet_v2": (zoo.shufflenet_v2_x0_5, lambda b: torch.randn(b, 3, 224, 224)),
    "transformer": (lambda ns: zoo.transformer_encoder(ns, d_model=256, nhead=8, layers=4),
                    lambda b: torch.randn(b, 64, 256)),
    "lstm_lm": (lambda ns: zoo.recurrent_lm(ns, "LSTM", vocab=5000, embed=256, hidden=512),
                lambda b: torch.randint(0, 5000, (b, 35))),
    "gru_lm": (lambda ns: zoo.recurrent_lm(ns, "GRU", vocab=5000, embed=256, hidden=512),
               lambda b: torch.randint(0, 5000, (b, 35))),
    "audio_conv1d": (zoo.audio_conv1d, lambda b: torch.randn(b, 1, 16000)),
    "unet": (zoo.small_unet, lambda b: torch.randn(b, 3, 128, 128)),
}


def torch_best(model, x):
    scripted = torch.jit.script(model)
    frozen = torch.jit.optimize_for_inference(torch.jit.freeze(scripted))
    return scripted, frozen


def kiln_best(archive):
    return kiln_best_of(kiln.load(io.BytesIO(archive)))


def kiln_best_of(module):
    for name in ("optimize_for_inference", "freeze"):
        if hasattr(kiln, name):
            return getattr(kiln, name)(module), name
    return module, "load"


def timed_in_turn(calls, repeat):
    times = [[] for _ in calls]
    for _ in range(repeat):
        for i, fn in enumerate(calls):
            start = time.perf_counter()
            fn()
            times[i].append(time.perf_counter() - start)
    return [(statistics.median(t), min(t), max(t)) for t in times]


def bench(name, batch, repeat, warmup):
    builder, make_input = MODELS[name]
    torch.manual_seed(0)
    model = builder(zoo.TORCH).eval()
    x = make_input(batch)
    with torch.no_grad():
        scripted, frozen = torch_best(model, x)
        buffer = io.BytesIO()
        torch.jit.save(scripted, buffer)
        expected = frozen(x)
    mine, how = kiln_best(buffer.getvalue())
    kx = kiln.from_numpy(x.numpy().copy())
    with kiln.no_grad():
        got = mine(kx).numpy()
    error = float(np.abs(got - expected.numpy()).max() / max(float(expected.abs().max()), 1e-30))

    def run_torch():
        with torch.no_grad():
            frozen(x)

    def run_kiln():
        with kiln.no_grad():
            mine(kx)

    for _ in range(warmup):
        run_torch()
        run_kiln()
    (t_med, t_lo, t_hi), (k_med, k_lo, k_hi) = timed_in_turn([run_torch, run_kiln], repeat)
    print(f"{name:14s} b{batch:<3d} torch {t_med * 1e3:9.2f} ms [{t_lo * 1e3:8.2f} .. {t_hi * 1e3:8.2f}]   "
          f"kiln ({how}) {k_med * 1e3:9.2f} ms [{k_lo * 1e3:8.2f} .. {k_hi * 1e3:8.2f}]   "
          f"{k_med / t_med:6.3f}x torch   rel.err {error:.1e}", flush=True)
    return k_med / t_med


def memory_status():
    """(VmRSS, VmHWM) of this process in MiB."""
    fields = {}
    with open("/proc/self/status") as status:
        for line in status:
            key, _, value = line.partition(":")
            fields[key] = value
    return int(fields["VmRSS"].split()[0]) / 1024, int(fields["VmHWM"].split()[0]) / 1024


def reset_peak():
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")


def trimmed_rss():
    """VmRSS in MiB once freed heap pages are back with the system (either engine's garbage counts for neither)."""
    gc.collect()
    ctypes.CDLL("libc.so.6").malloc_trim(0)
    return memory_status()[0]


def memory_child(engine, name, batch, runs):
    """In a fresh process: MiB over the process before the engine loads the archive, kept after warm-up and at
    the steady-state peak. Each engine loads the same archive bytes (torch.jit.load or kiln.load) and holds
    its own weights: the eager model is gone by then, so torch's frozen module cannot share its tensors."""
    builder, make_input = MODELS[name]
    torch.manual_seed(0)
    model = builder(zoo.TORCH).eval()
    x = make_input(batch)
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, name + ".pt")
        with torch.no_grad():
            torch.jit.save(torch.jit.script(model), path)
        del model

        def archive():  # the file's bytes, freed once the engine has loaded them
            with open(path, "rb") as f:
                return io.BytesIO(f.read())

        # Either engine's input exists before the first measure: kiln's is a copy of torch's (4.6 MiB for an
        # image batch of 8), not memory of the engine's.
        kx = kiln.from_numpy(x.numpy().copy()) if engine == "kiln" else None
        base = trimmed_rss()
        if engine == "torch":
            with torch.no_grad():
                frozen = torch.jit.optimize_for_inference(torch.jit.freeze(torch.jit.load(archive()).eval()))

            def call():
                with torch.no_grad():
                    frozen(x)
        else:
            mine, _ = kiln_best_of(kiln.load(archive()))

            def call():
                with kiln.no_grad():
                    mine(kx)
    for _ in range(3):
        call()
    kept = trimmed_rss() - base
    reset_peak()
    for _ in range(runs):
        call()
    steady = memory_status()[1] - base
    print(json.dumps({"kept": kept, "steady": steady}))


def memory_row(name, batch, threads, runs):
    def child(engine, env=None):
        command = [sys.executable, os.path.abspath(__file__), "--memory-child", engine, "--models", name,
                   "--batch", str(batch), "--threads", str(threads), "--repeat", str(runs)]
        out = subprocess.run(command, capture_output=True, text=True, env={**os.environ, **(env or {})})
        if out.returncode != 0:
            raise RuntimeError((out.stderr.strip().splitlines() or ["?"])[-1])
        return json.loads(out.stdout.strip().splitlines()[-1])

    t = child("torch")
    k = child("kiln")
    n = child("kiln", {"KILN_MEMORY_PLAN": "0"})
    print(f"{name:14s} b{batch:<3d} steady-state peak (MiB over the process before loading): torch {t['steady']:7.1f}   "
          f"kiln {k['steady']:7.1f} ({k['steady'] / max(t['steady'], 0.1):5.2f}x)   "
          f"kiln without plan {n['steady']:7.1f} ({n['steady'] / max(t['steady'], 0.1):5.2f}x)   "
          f"kept after warm-up: torch {t['kept']:.1f}, kiln {k['kept']:.1f}, without plan {n['kept']:.1f}; "
          f"calls add: torch {t['steady'] - t['kept']:.1f}, kiln {k['steady'] - k['kept']:.1f}, "
          f"without plan {n['steady'] - n['kept']:.1f}", flush=True)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--batch", type=str, default="1,8")
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--models", type=str, default=",".join(MODELS))
    parser.add_argument("--quick", action="store_true", help="batch 1, 5 repeats")
    parser.add_argument("--memory", action="store_true", help="peak memory growth instead of time")
    parser.add_argument("--memory-child", choices=["torch", "kiln"], help=argparse.SUPPRESS)
    opts = parser.parse_args()
    torch.set_num_threads(opts.threads)
    kiln.set_num_threads(opts.threads)
    if opts.memory_child:
        memory_child(opts.memory_child, opts.models, int(opts.batch), opts.repeat)
        return
    batches = [1] if opts.quick else [int(b) for b in opts.batch.split(",")]
    repeat = 5 if opts.quick else opts.repeat
    isa = "AVX-512" if kiln._C._vec_isa() == "avx512" else kiln._C._vec_isa()
    print(f"bench_models: {opts.threads} thread(s), CPU {isa}; {kiln.parallel_info().splitlines()[2]}")
    for batch in batches:
        for name in opts.models.split(","):
            try:
                if opts.memory:
                    memory_row(name, batch, opts.threads, repeat)
                    continue
                bench(name, batch, repeat, warmup=2)
            except Exception as error:  # a model kiln cannot run yet is a row, not the end of the table
                print(f"{name:14s} b{batch:<3d} kiln failed: {str(error).splitlines()[0][:150]}", flush=True)


if __name__ == "__main__":
    main()
