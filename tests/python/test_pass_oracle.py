"""The pass lit tests against torch 1.13: every tests/lit/passes/*.ir that
names an oracle (`# ORACLE: <torch pass>`) must come out of `kiln opt` (with
its RUN line's passes) as torch's pass prints it, up to value numbering;
files marked `# ORACLE-DIFFERS: <torch pass>` document where kiln is
deliberately better than 1.13, and must still differ."""
import glob
import os
import re
import subprocess

import pytest
import torch

ROOT = os.path.join(os.path.dirname(__file__), "..", "..")
KILN = os.path.join(os.environ.get("KILN_BUILD_DIR", os.path.join(ROOT, "build")), "kiln")
LIT_PASSES = os.path.join(ROOT, "tests", "lit", "passes")

TORCH_PASSES = {
    "cse": torch._C._jit_pass_cse,
    "constant_propagation": torch._C._jit_pass_constant_propagation,
    "constant_pooling": torch._C._jit_pass_constant_pooling,
    "peephole": lambda g: torch._C._jit_pass_peephole(g, False),
    "peephole_list_idioms": torch._C._jit_pass_peephole_list_idioms,
    "remove_mutation": torch._C._jit_pass_remove_mutation,
    "batch_mm": torch._C._jit_pass_batch_mm,
}


def oracle_files():
    for path in sorted(glob.glob(os.path.join(LIT_PASSES, "*.ir"))):
        text = open(path).read()
        m = re.search(r"^# ORACLE(-DIFFERS)?: (\w+)$", text, re.M)
        if m:
            yield pytest.param(path, m.group(2), bool(m.group(1)), id=os.path.basename(path))


def canonical(ir):
    names = {}

    def rename(m):
        return names.setdefault(m.group(0), "%%v%d" % len(names))

    return " ".join(re.sub(r"%[A-Za-z0-9_.]+", rename, ir).split())


@pytest.mark.parametrize("path,torch_pass,differs", list(oracle_files()))
def test_pass_matches_torch(path, torch_pass, differs):
    text = open(path).read()
    kiln_passes = re.search(r"^# RUN: .*-p (\S+)", text, re.M).group(1)
    graph = torch._C.parse_ir(text)
    TORCH_PASSES[torch_pass](graph)
    ours = subprocess.run([KILN, "opt", path, "-p", kiln_passes], capture_output=True, text=True, check=True).stdout
    if differs:
        assert canonical(ours) != canonical(str(graph))
    else:
        assert canonical(ours) == canonical(str(graph)), "torch:\n%s\nkiln:\n%s" % (graph, ours)
