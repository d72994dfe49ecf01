"""What the graph executor's pipeline costs: for every program of
tests/python/script_programs.py, the time of the first `graph_for` on a
freshly compiled unit (graph copy, input specialization, every optimization
pass, Code), median of 5 runs each; prints the median, 90th percentile and the
slowest programs over all of them.

  PYTHONPATH=python /usr/bin/python3 bench/bench_plans.py
"""
import os
import statistics
import sys
import time

ROOT = os.path.join(os.path.dirname(__file__), "..")
sys.path.insert(0, os.path.join(ROOT, "python"))
sys.path.insert(0, os.path.join(ROOT, "tests", "python"))
import kiln  # noqa: E402
from conftest import convert  # noqa: E402
from script_programs import PROGRAMS  # noqa: E402


def plan_time(prog, repeat=5):
    times = []
    for _ in range(repeat):
        fn = getattr(kiln.compile(prog["src"]), prog["fn"])
        args = convert(list(prog["args"][0]), "kiln")
        start = time.perf_counter()
        fn.graph_for(*args)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main():
    rows = []
    for prog in PROGRAMS:
        if not prog["args"]:
            continue
        try:
            rows.append((plan_time(prog) * 1e6, prog["name"]))
        except Exception:  # noqa: BLE001 - programs kiln cannot compile yet
            continue
    rows.sort()
    times = [t for t, _ in rows]
    print(f"plan compile time over {len(rows)} programs: median {statistics.median(times):.0f} us, "
          f"p90 {times[int(0.9 * len(times))]:.0f} us")
    print("slowest: " + ", ".join(f"{name} {t:.0f} us" for t, name in rows[-3:]))


if __name__ == "__main__":
    main()
