"""kiln's Python printer (kiln/serialization/python_print.h) against torch
1.13's, text for text: `.code` of every function of the differential
programs (script_programs.py, the shared corpus included), `.code` of the
methods of scripted modules, and the code/ files torch.jit.save writes for a
module. Class names are normalized where the two sides load the same
source under different Python module names."""
import io
import math  # noqa: F401  (torch resolves the sources' names in this module)
import os
import re
import sys
import zipfile
from typing import Dict, List, Optional, Tuple  # noqa: F401

import pytest
import torch
from torch import Tensor  # noqa: F401

import kiln

sys.path.insert(0, os.path.dirname(__file__))
from nn_programs import NET, copy_weights, load  # noqa: E402
from script_programs import PROGRAMS  # noqa: E402

# Programs whose printed code differs from torch's, with the reason (strict
# xfail: a program that starts matching fails until taken off the list).
KNOWN_CODE_DIFFS = {
}


def _functions(prog):
    """[(name, torch code, kiln code or the exception kiln raised)]."""
    tcu = torch.jit.CompilationUnit(prog["src"], _frames_up=0)
    kcu = kiln.compile(prog["src"])
    out = []
    for f in tcu.get_functions():
        try:
            kcode = getattr(kcu, f.name).code
        except Exception as e:  # noqa: BLE001 - reported by the test
            kcode = e
        out.append((f.name, f.code, kcode))
    return out


def _params():
    return [pytest.param(p, id=p["name"],
                         marks=[pytest.mark.xfail(strict=True, reason=KNOWN_CODE_DIFFS[p["name"]])]
                         if p["name"] in KNOWN_CODE_DIFFS else [])
            for p in PROGRAMS]


@pytest.mark.parametrize("prog", _params())
def test_function_code_matches_torch(prog):
    for name, tcode, kcode in _functions(prog):
        if isinstance(kcode, Exception):
            raise AssertionError(f"function {name}: kiln could not print it: {kcode}")
        assert kcode == tcode, f"function {name}:\n--- kiln\n{kcode}\n--- torch\n{tcode}"


def test_code_of_a_tiny_function():
    src = "def f(x: Tensor, n: int = 2) -> Tensor:\n    return x * n + 1.5\n"
    code = kiln.compile(src).f.code
    assert code == torch.jit.CompilationUnit(src, _frames_up=0).f.code
    assert code == "def f(x: Tensor,\n    n: int=2) -> Tensor:\n  return torch.add(torch.mul(x, n), 1.5)\n"


def test_code_with_constants_names_tensor_constants():
    src = ("def f(x: Tensor) -> Tensor:\n"
           "    return x + torch.tensor([1.0, 2.0])\n")
    code, constants = kiln.compile(src).f.code_with_constants
    assert code == torch.jit.CompilationUnit(src, _frames_up=0).f.code
    assert constants == {}


def _plain(text, lib):
    """Class names of the loaded program module made alike on both sides."""
    text = re.sub(r"nn_program_(kiln|torch)_\d+", "PROGRAM", text)
    return re.sub(r"___torch_mangle_\d+\.", "", text)


@pytest.fixture
def nets(tmp_path):
    k, t = load(NET, kiln, tmp_path).Net(), load(NET, torch, tmp_path).Net()
    copy_weights(k, t)
    return kiln.script(k), torch.jit.script(t)


def _torch_methods(ts):
    return [m for m in ts._c._method_names()]


def test_module_code_matches_torch(nets):
    ks, ts = nets
    assert _plain(ks.code, "kiln") == _plain(ts.code, "torch")
    assert ks.code == ks.forward.code


def test_every_method_code_matches_torch(nets):
    ks, ts = nets
    checked = 0
    for (kname, kmod), (tname, tmod) in zip(ks.named_modules(), ts.named_modules()):
        assert kname == tname
        for method in _torch_methods(tmod):
            kcode = getattr(kmod, method).code
            tcode = getattr(tmod, method).code
            assert _plain(kcode, "kiln") == _plain(tcode, "torch"), f"{tname or 'root'}.{method}"
            checked += 1
    assert checked >= 5


def _torch_archive_code(ts):
    buffer = io.BytesIO()
    torch.jit.save(ts, buffer)
    archive = zipfile.ZipFile(buffer)
    files = {}
    for name in archive.namelist():
        if "/code/" in name and name.endswith(".py"):
            files[name.split("/", 1)[1]] = archive.read(name).decode()
    return files


def test_archive_code_files_match_torch(nets):
    ks, ts = nets
    files, constants = ks._c._archive_code()
    kfiles = {_plain(path, "kiln"): _plain(text, "kiln") for path, text in files}
    tfiles = {_plain(path, "torch"): _plain(text, "torch") for path, text in _torch_archive_code(ts).items()}
    assert sorted(kfiles) == sorted(tfiles)
    for path in tfiles:
        assert kfiles[path] == tfiles[path], path
