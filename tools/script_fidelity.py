"""How closely kiln's TorchScript frontend follows torch 1.13: compiles every
program of tests/python/script_programs.py (the shared corpus included) with
both, and prints the share of functions whose unoptimized graphs have the
same node kinds in the same order (blocks included), then each mismatch with
a short diff of the kinds.

    /usr/bin/python3 tools/script_fidelity.py [-v] [NAME_SUBSTRING ...]

-v prints the whole kind diff and both graphs for each mismatch."""
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


def compare(prog):
    """[(function name, None if the kinds match else (summary, details, loosely equal))]."""
    torch_cu = torch.jit.CompilationUnit(prog["src"], _frames_up=0)
    try:
        kiln_cu = kiln.compile(prog["src"])
    except Exception as e:  # noqa: BLE001 - reported as a mismatch
        return [(f.name, (f"kiln.compile failed: {first_line(e)}", str(e), False)) for f in torch_cu.get_functions()]
    results = []
    for f in torch_cu.get_functions():
        try:
            kiln_graph = str(getattr(kiln_cu, f.name).graph)
        except Exception as e:  # noqa: BLE001
            results.append((f.name, (f"no graph: {first_line(e)}", str(e), False)))
            continue
        torch_graph = str(f.graph)
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
    parser.add_argument("names", nargs="*", help="only programs whose name contains one of these")
    args = parser.parse_args()
    programs = [p for p in PROGRAMS if not args.names or any(n in p["name"] for n in args.names)]
    total = matched = loosely = 0
    corpus_total = corpus_matched = 0
    mismatches = []
    for prog in programs:
        for fn, diff in compare(prog):
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
