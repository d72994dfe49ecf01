"""Loading a TorchScript archive: kiln against torch 1.13.

A scripted stack of 11 Linear(1024, 1024) layers with ReLUs between them
(about 46 MB of float32 weights), saved by torch.jit.save. Rows:
  - in one process: kiln.load against torch.jit.load, medians of repeated
    loads taken in turn (target: kiln <= 0.2x torch);
  - a fresh process that loads the archive and runs forward on one input:
    `kiln run model.pt x.npy` against
    `python3 -c "import torch; torch.jit.load(...)(x)"` (target <= 0.1x),
    with each process's peak resident memory next to the archive's tensor
    bytes (kiln maps the tensor records instead of copying them).

  PYTHONPATH=python /usr/bin/python3 bench/bench_load.py [--repeat N] [--quick] [--threads N]
"""
import argparse
import io
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "python"))
import kiln  # noqa: E402
import torch  # noqa: E402

ROOT = os.path.join(os.path.dirname(__file__), "..")
KILN = os.path.join(os.environ.get("KILN_BUILD_DIR", os.path.join(ROOT, "build")), "kiln")


def make_model(layers, width):
    torch.manual_seed(0)
    modules = []
    for i in range(layers):
        modules.append(torch.nn.Linear(width, width))
        if i + 1 < layers:
            modules.append(torch.nn.ReLU())
    return torch.jit.script(torch.nn.Sequential(*modules).eval())


def median_and_spread(times):
    times = sorted(times)
    return statistics.median(times), times[0], times[-1]


def child_run(argv):
    """Wall time and peak RSS (bytes) of one child process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    start = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        raise RuntimeError(f"{argv[0]} failed: {done.stderr}")
    return elapsed, done


def peak_rss(argv):
    """The child's peak resident set, from /usr/bin/time's report (kB)."""
    done = subprocess.run(["/usr/bin/time", "-f", "%M", *argv], capture_output=True, text=True)
    return int(done.stderr.strip().splitlines()[-1]) * 1024 if done.returncode == 0 else None


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--threads", type=int, default=1,
                        help="threads for both (torch's loading uses one; kiln checks CRCs on its threads)")
    args = parser.parse_args()
    repeat = 3 if args.quick else args.repeat
    layers, width = (3, 256) if args.quick else (11, 1024)

    torch.set_num_threads(args.threads)
    kiln.set_num_threads(args.threads)
    os.environ["OMP_NUM_THREADS"] = str(args.threads)  # for the kiln child process
    avx512 = "avx512f" in open("/proc/cpuinfo").read()
    print(f"bench_load: {layers} x Linear({width}, {width}), {args.threads} thread(s), "
          f"CPU {'AVX-512' if avx512 else 'AVX2'}")

    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "model.pt")
        model = make_model(layers, width)
        torch.jit.save(model, path)
        size = os.path.getsize(path)
        tensor_bytes = sum(p.numel() * p.element_size() for p in model.parameters())
        print(f"archive: {size / 1e6:.1f} MB, tensors {tensor_bytes / 1e6:.1f} MB")
        x = np.random.default_rng(0).standard_normal((1, width)).astype(np.float32)
        x_path = os.path.join(tmp, "x.npy")
        np.save(x_path, x)

        # Same results first.
        k_out = kiln.load(path)(kiln.from_numpy(x)).numpy()
        t_out = torch.jit.load(path)(torch.from_numpy(x)).detach().numpy()
        np.testing.assert_allclose(k_out, t_out, rtol=1e-4, atol=1e-5)

        # In one process, loads in turn.
        k_times, t_times = [], []
        for _ in range(repeat):
            start = time.perf_counter()
            kiln.load(path)
            k_times.append(time.perf_counter() - start)
            start = time.perf_counter()
            torch.jit.load(path)
            t_times.append(time.perf_counter() - start)
        k, k_lo, k_hi = median_and_spread(k_times)
        t, t_lo, t_hi = median_and_spread(t_times)
        print(f"load in process      kiln {k * 1e3:8.2f} ms [{k_lo * 1e3:.2f}, {k_hi * 1e3:.2f}]   "
              f"torch {t * 1e3:8.2f} ms [{t_lo * 1e3:.2f}, {t_hi * 1e3:.2f}]   ratio {k / t:.3f}x (target <= 0.2x)")

        # A fresh process that loads and runs forward.
        kiln_argv = [KILN, "run", path, x_path, "-o", os.path.join(tmp, "y.npy")]
        torch_argv = [sys.executable, "-c",
                      f"import sys, numpy, torch; torch.set_num_threads({args.threads}); "
                      "m = torch.jit.load(sys.argv[1]); m(torch.from_numpy(numpy.load(sys.argv[2])))",
                      path, x_path]
        env_runs = max(3, repeat // 3)
        k_times, t_times = [], []
        for _ in range(env_runs):
            k_times.append(child_run(kiln_argv)[0])
            t_times.append(child_run(torch_argv)[0])
        np.testing.assert_allclose(np.load(os.path.join(tmp, "y.npy")), t_out, rtol=1e-4, atol=1e-5)
        k, k_lo, k_hi = median_and_spread(k_times)
        t, t_lo, t_hi = median_and_spread(t_times)
        print(f"fresh process run    kiln {k * 1e3:8.1f} ms [{k_lo * 1e3:.1f}, {k_hi * 1e3:.1f}]   "
              f"torch {t * 1e3:8.1f} ms [{t_lo * 1e3:.1f}, {t_hi * 1e3:.1f}]   ratio {k / t:.3f}x (target <= 0.1x)")
        k_rss, t_rss = peak_rss(kiln_argv), peak_rss(torch_argv)
        if k_rss and t_rss:
            print(f"peak RSS             kiln {k_rss / 1e6:8.1f} MB (tensors + {(k_rss - tensor_bytes) / 1e6:.1f} MB)   "
                  f"torch {t_rss / 1e6:8.1f} MB")


if __name__ == "__main__":
    main()
