"""kiln.save against torch 1.13's torch.jit.load: every program of the
differential suite compiled by kiln and saved (a function is saved as the
forward of a PlaceholderModule, as torch saves one), modules scripted in
kiln, and modules kiln loaded from torch's archives, must load in torch and
give kiln's results; kiln reads its own archives too."""
import io
import math  # noqa: F401
import os
import sys
import zipfile
from typing import Dict, List, Optional, Tuple  # noqa: F401

import numpy as np
import pytest
import torch
from torch import Tensor  # noqa: F401

from conftest import assert_same, assert_same_values, convert
import kiln
from script_programs import PROGRAMS
from test_load import modules, same_results, torch_archive, rng_inputs

# Programs whose kiln archive torch cannot load or run alike, with the reason (strict xfail).
KNOWN_UNSAVABLE = {
}


def kiln_archive(what, **kwargs):
    buffer = io.BytesIO()
    kiln.save(what, buffer, **kwargs)
    return buffer.getvalue()


def same_torch(a, b):
    """Two torch results equal (tensors allclose; NamedTuples by fields)."""
    if isinstance(b, torch.Tensor):
        assert isinstance(a, torch.Tensor) and a.dtype == b.dtype and a.shape == b.shape
        assert torch.allclose(a, b, rtol=1e-5, atol=1e-6, equal_nan=True)
    elif isinstance(b, (tuple, list)):
        assert type(a).__name__ == type(b).__name__ and len(a) == len(b)
        for x, y in zip(a, b):
            same_torch(x, y)
    else:
        assert a == b


def _call(fn, args):
    try:
        return fn(*args), None
    except Exception as e:  # noqa: BLE001 - compared by the caller
        return None, e


@pytest.mark.parametrize("prog", [
    pytest.param(p, id=p["name"], marks=[pytest.mark.xfail(strict=True, reason=KNOWN_UNSAVABLE[p["name"]])]
                 if p["name"] in KNOWN_UNSAVABLE else []) for p in PROGRAMS])
def test_programs_saved_by_kiln_run_in_torch(prog):
    fn = getattr(kiln.compile(prog["src"]), prog["fn"])
    data = kiln_archive(fn)
    in_torch = torch.jit.load(io.BytesIO(data))
    in_kiln = kiln.load(io.BytesIO(data))
    assert in_kiln.code == in_torch.code
    for args in prog["args"]:
        kargs, targs, k2args = (convert(list(args), "kiln"), convert(list(args), "torch"),
                                convert(list(args), "kiln"))
        k_result, k_error = _call(fn, kargs)
        t_result, t_error = _call(in_torch, targs)
        k2_result, k2_error = _call(in_kiln, k2args)
        assert (k_error is None) == (t_error is None), f"kiln raised {k_error!r}; torch raised {t_error!r}"
        assert (k_error is None) == (k2_error is None), f"kiln raised {k_error!r}; reloaded {k2_error!r}"
        if t_error is None:
            same_results(k_result, t_result, prog["rtol"])
            same_results(k2_result, t_result, prog["rtol"])
            assert_same_values(list(kargs), list(targs), prog["rtol"], 1e-6)


@pytest.mark.parametrize("name", list(modules()))
def test_torch_archives_round_trip_through_kiln(name):
    module, calls = modules()[name]
    data = torch_archive(module)
    again = kiln_archive(kiln.load(io.BytesIO(data)), _extra_files={"note": b"\x00\xff"})
    files = {"note": ""}
    in_torch = torch.jit.load(io.BytesIO(again), _extra_files=files)
    assert files["note"] == b"\x00\xff"
    # torch's own load, save and load again is the reference (each load runs __setstate__).
    reference = torch.jit.load(io.BytesIO(torch_archive(torch.jit.load(io.BytesIO(data)))))
    in_kiln = kiln.load(io.BytesIO(again))
    for args in calls:
        t = reference(*convert(list(args), "torch"))
        same_torch(in_torch(*convert(list(args), "torch")), t)
        same_results(in_kiln(*convert(list(args), "kiln")), t)
    if hasattr(reference, "state_dict"):
        assert list(in_torch.state_dict().keys()) == list(reference.state_dict().keys())
        for key, value in reference.state_dict().items():
            assert torch.equal(in_torch.state_dict()[key], value)


def test_kiln_scripted_net_runs_in_torch(tmp_path):
    from nn_programs import NET, copy_weights, load
    torch_net = load(NET, torch, tmp_path).Net()
    kiln_net = load(NET, kiln, tmp_path).Net()
    copy_weights(kiln_net, torch_net)
    scripted = kiln.script(kiln_net)
    x = rng_inputs(2, 4)
    for training in (True, False):
        scripted.train(training)
        torch_net.train(training)
        path = tmp_path / "net.pt"
        kiln.save(scripted, path)
        in_torch = torch.jit.load(str(path))
        assert in_torch.training == training
        assert_same(scripted(kiln.from_numpy(x)), in_torch(torch.from_numpy(x)))
        assert_same(scripted(kiln.from_numpy(x)), torch_net(torch.from_numpy(x)))
        assert in_torch.original_name == "Net"
        assert [n for n, _ in in_torch.named_children()] == [n for n, _ in torch_net.named_children()]


def test_tensor_records_are_aligned_and_stored(tmp_path):
    module, _ = modules()["rich"]
    path = tmp_path / "rich.pt"
    kiln.save(kiln.load(io.BytesIO(torch_archive(module))), path)
    raw = path.read_bytes()
    with zipfile.ZipFile(path) as z:
        names = z.namelist()
        assert all(n.startswith("rich/") for n in names)
        for info in z.infolist():
            if "/data/" in info.filename or "/constants/" in info.filename:
                assert info.compress_type == zipfile.ZIP_STORED
                name_len = int.from_bytes(raw[info.header_offset + 26:info.header_offset + 28], "little")
                extra_len = int.from_bytes(raw[info.header_offset + 28:info.header_offset + 30], "little")
                assert (info.header_offset + 30 + name_len + extra_len) % 64 == 0
            if info.filename.endswith(".py"):
                assert info.compress_type == zipfile.ZIP_DEFLATED


def test_save_needs_a_script_module():
    with pytest.raises(TypeError, match="ScriptModule"):
        kiln.save(kiln.nn.Linear(2, 2), io.BytesIO())
