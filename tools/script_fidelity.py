"""How closely kiln's TorchScript frontend follows torch 1.13: compiles every
program of tests/python/script_programs.py (the shared corpus included) with
both, and prints the share of functions whose unoptimized graphs have the
same node kinds in the same order (blocks included), then each mismatch with
a short diff of the kinds.

    /usr/bin/python3 tools/script_fidelity.py [-v] [--optimized] [NAME_SUBSTRING ...]

-v prints the whole kind diff and both graphs for each mismatch.
--optimized compares the optimized graphs of each program's called function
for its first arguments instead: torch's legacy executor's `graph_for` (the
pipeline seed 001 describes, specialized to ranks) with kiln's, whose
executor is set to specialize to ranks only as well."""
import argparse
import math  # noqa: F401  (torch resolves the programs' names in this module)
import os
import sys
from typing import Dict, List, Optional, Tuple  # noqa: F401

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "python"))
sys.path.insert(0, os.path.join(ROOT, "tests", "python"))

import torch  # noqa: E402
from torch import Tensor  # noqa: E402,F401

import kiln  # noqa: E402
from script_programs import PROGRAMS, kinds_diff, node_kinds  # noqa: E402


def first_line(error):
    lines = [line for line in str(error).splitlines() if line.strip()]
    return lines[0].strip() if lines else type(error).__name__


_LOOSE_SKIP = ("prim::Constant", "prim::Uninitialized")


def loose(kinds):
    """Kinds without constants and placeholders: the structure alone."""
    return [k for k in kinds if k not in _LOOSE_SKIP]


def unoptimized_graphs(prog, torch_cu, kiln_cu):
    """(name, torch graph, kiln graph function) for every function."""
    return [(f.name, str(f.graph), lambda name=f.name: str(getattr(kiln_cu, name).graph))
            for f in torch_cu.get_functions()]


def optimized_graphs(prog, torch_cu, kiln_cu):
    """(name, torch graph, kiln graph function) for the called function and
    its first arguments; nothing when torch raises on them."""
    from conftest import convert
    if not prog["args"]:
        return []
    args = prog["args"][0]
    fn = getattr(torch_cu, prog["fn"])
    try:
        fn(*convert(list(args), "torch"))
        torch_graph = str(fn.graph_for(*convert(list(args), "torch")))
    except Exception:  # noqa: BLE001 - programs that raise have no plan to compare
        return []
    return [(prog["fn"], torch_graph,
             lambda: str(getattr(kiln_cu, prog["fn"]).graph_for(*convert(list(args), "kiln"))))]


def compare(prog, graphs=unoptimized_graphs):
    """[(function name, None if the kinds match else (summary, details, loosely equal))]."""
    torch_cu = torch.jit.CompilationUnit(prog["src"], _frames_up=0)
    try:
        kiln_cu = kiln.compile(prog["src"])
    except Exception as e:  # noqa: BLE001 - reported as a mismatch
        return [(f.name, (f"kiln.compile failed: {first_line(e)}", str(e), False)) for f in torch_cu.get_functions()]
    results = []
    for name, torch_graph, kiln_graph_of in graphs(prog, torch_cu, kiln_cu):
        f = argparse.Namespace(name=name)
        try:
            kiln_graph = kiln_graph_of()
        except Exception as e:  # noqa: BLE001
            results.append((f.name, (f"no graph: {first_line(e)}", str(e), False)))
            continue
        k, t = node_kinds(kiln_graph), node_kinds(torch_graph)
        if k == t:
            results.append((f.name, None))
            continue
        at = next((i for i, (a, b) in enumerate(zip(k, t)) if a != b), min(len(k), len(t)))
        summary = (f"{len(k)} kinds vs torch's {len(t)}; first difference at {at}: "
                   f"kiln {k[at] if at < len(k) else '<end>'} / torch {t[at] if at < len(t) else '<end>'}")
        details = (kinds_diff(k, t, context=3) + "\n--- torch graph:\n" + torch_graph + "--- kiln graph:\n" + kiln_graph)
        results.append((f.name, (summary, details, loose(k) == loose(t))))
    return results


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("-v", "--verbose", action="store_true", help="whole kind diffs and both graphs")
    parser.add_argument("--optimized", action="store_true", help="the optimized graphs (graph_for)")
    parser.add_argument("names", nargs="*", help="only programs whose name contains one of these")
    args = parser.parse_args()
    graphs = unoptimized_graphs
    if args.optimized:
        graphs = optimized_graphs
        torch._C._jit_set_profiling_executor(False)
        torch._C._jit_set_profiling_mode(False)
        kiln._C._set_shape_specialization_limit(0)
    programs = [p for p in PROGRAMS if not args.names or any(n in p["name"] for n in args.names)]
    total = matched = loosely = 0
    corpus_total = corpus_matched = 0
    mismatches = []
    for prog in programs:
        for fn, diff in compare(prog, graphs):
            total += 1
            matched += diff is None
            loosely += diff is None or diff[2]
            if prog["name"].startswith("corpus_"):
                corpus_total += 1
                corpus_matched += diff is None
            if diff is not None:
                mismatches.append((prog["name"], fn, diff))
    for name, fn, (summary, details, _) in mismatches:
        print(f"MISMATCH {name}.{fn}: {summary}")
        if args.verbose:
            print("    " + details.replace("\n", "\n    "))
        else:
            short = [line for line in details.split("\n--- torch graph:")[0].splitlines()
                     if line[:1] in "+-" and not line.startswith(("+++", "---"))]
            for line in short[:6]:
                print("    " + line)
    share = matched / total if total else 0.0
    print(f"\nnode-kind fidelity: {matched}/{total} functions match ({100 * share:.1f}%) "
          f"in {len(programs)} programs; corpus {corpus_matched}/{corpus_total}")
    print(f"without prim::Constant / prim::Uninitialized: {loosely}/{total} match ({100 * loosely / max(total, 1):.1f}%)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
