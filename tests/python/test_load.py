"""kiln.load on archives torch 1.13's torch.jit.save writes: every program of
the differential suite (tests/python/script_programs.py, which includes the
shared corpus) saved as torch saves a function (a PlaceholderModule whose
forward is the function), and scripted, traced and frozen modules; the
loaded module must give torch's results. Also what loading keeps (views,
extra files, methods, attributes) and malformed archives."""
import io
import math  # noqa: F401  (names the programs' sources use resolve here)
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

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "tools"))
import make_archive_corpus as corpus  # noqa: E402

# Programs whose archive kiln cannot load yet, with the reason (strict xfail).
KNOWN_UNLOADABLE = {
}


def torch_archive(obj, **kwargs):
    buffer = io.BytesIO()
    torch.jit.save(obj, buffer, **kwargs)
    return buffer.getvalue()


def kiln_load(data, **kwargs):
    return kiln.load(io.BytesIO(data), **kwargs)


def _call(fn, args):
    try:
        return fn(*args), None
    except Exception as e:  # noqa: BLE001 - compared by the caller
        return None, e


_saved = {}


def saved_program(prog):
    """The archive torch.jit.save writes for the program's function, and
    torch.jit.load's module of it (or the error loading raised: torch saves
    a function without the functions it calls, so such an archive does not
    load in torch either)."""
    if prog["name"] not in _saved:
        cu = torch.jit.CompilationUnit(prog["src"], _frames_up=0)
        data = torch_archive(getattr(cu, prog["fn"]))
        try:
            reference = torch.jit.load(io.BytesIO(data))
        except Exception as e:  # noqa: BLE001 - kiln must refuse it too
            reference = e
        _saved[prog["name"]] = (reference, data)
    return _saved[prog["name"]]


@pytest.mark.parametrize("prog", [
    pytest.param(p, id=p["name"], marks=[pytest.mark.xfail(strict=True, reason=KNOWN_UNLOADABLE[p["name"]])]
                 if p["name"] in KNOWN_UNLOADABLE else []) for p in PROGRAMS])
def test_programs_saved_by_torch_run_in_kiln(prog):
    reference, data = saved_program(prog)
    if isinstance(reference, Exception):
        with pytest.raises(kiln.Error):
            kiln_load(data)
        return
    module = kiln_load(data)
    # The imported code prints back as torch prints it.
    assert module.code == reference.code
    for args in prog["args"]:
        targs, kargs = convert(list(args), "torch"), convert(list(args), "kiln")
        t_result, t_error = _call(reference, targs)
        k_result, k_error = _call(module, kargs)
        assert (k_error is None) == (t_error is None), f"torch raised {t_error!r}; kiln raised {k_error!r}"
        if t_error is None:
            same_results(k_result, t_result, prog["rtol"])
            assert_same_values(list(kargs), list(targs), prog["rtol"], 1e-6)


def same_results(k, t, rtol=1e-5):
    """assert_same_values, with a NamedTuple matched by its name and fields
    (torch returns its Python class, kiln one made from the TorchScript type)."""
    if hasattr(t, "_fields"):
        assert type(k).__name__ == type(t).__name__ and k._fields == t._fields
        k, t = tuple(k), tuple(t)
    assert_same_values(k, t, rtol, 1e-6)


def rng_inputs(*shape):
    return np.random.default_rng(0).standard_normal(shape).astype(np.float32)


def modules():
    torch.manual_seed(0)
    rich = torch.jit.script(corpus.Rich())
    return {
        "linear": (torch.jit.script(torch.nn.Linear(3, 2)), [(rng_inputs(4, 3),)]),
        "rich": (rich, [(rng_inputs(2, 3),)]),
        "setstate": (torch.jit.script(corpus.WithState()), [(rng_inputs(3),)]),
        "frozen": (torch.jit.freeze(torch.jit.script(corpus.Leaf()).eval()), [(rng_inputs(2, 3),)]),
        "traced": (torch.jit.trace(corpus.Leaf(), torch.ones(1, 3)), [(rng_inputs(1, 3),), (rng_inputs(5, 3),)]),
        "traced_fn": (torch.jit.trace(lambda x: x * torch.tensor([1.0, 2.0]) + 1, torch.ones(2)),
                      [(rng_inputs(2),)]),
        "sequential": (torch.jit.script(torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(),
                                                            torch.nn.Linear(8, 2), torch.nn.Tanh())),
                       [(rng_inputs(3, 4),)]),
    }


@pytest.mark.parametrize("name", list(modules()))
def test_modules_saved_by_torch_run_in_kiln(name):
    module, calls = modules()[name]
    data = torch_archive(module)
    loaded = kiln_load(data)
    # torch's own loaded module is the reference (a __setstate__ may change state).
    module = torch.jit.load(io.BytesIO(data))
    assert loaded.code == module.code
    for args in calls:
        t = module(*convert(list(args), "torch"))
        k = loaded(*convert(list(args), "kiln"))
        same_results(k, t)
    if not hasattr(module, "state_dict"):
        return
    # Parameters and buffers come back with their names, in order.
    t_state = module.state_dict()
    k_state = loaded.state_dict()
    assert list(k_state.keys()) == list(t_state.keys())
    for key in t_state:
        assert_same(k_state[key], t_state[key], rtol=0, atol=0)


def test_nn_program_net_in_train_and_eval(tmp_path):
    from nn_programs import NET, load
    net = load(NET, torch, tmp_path).Net()
    scripted = torch.jit.script(net)
    x = rng_inputs(2, 4)
    for training in (True, False):
        scripted.train(training)
        loaded = kiln_load(torch_archive(scripted))
        assert loaded.training == training
        assert_same(loaded(kiln.from_numpy(x)), scripted(torch.from_numpy(x)))
        loaded.train(not training)
        assert_same(loaded(kiln.from_numpy(x)), scripted.train(not training)(torch.from_numpy(x)))


def test_what_loading_keeps():
    rich = torch.jit.script(corpus.Rich())
    files = {"meta.txt": "", "absent.txt": "x"}
    loaded = kiln_load(torch_archive(rich, _extra_files={"meta.txt": "h\u00e9llo"}), _extra_files=files)
    assert files == {"meta.txt": "h\u00e9llo".encode(), "absent.txt": b""}
    # A view of a parameter is still a view of it.
    assert loaded.row._storage_ptr() == loaded.w._storage_ptr()
    loaded.w.numpy()[1, 0] = 100.0
    assert loaded.row.numpy()[0] == 100.0
    assert loaded.names == ["a", "b"] and loaded.table == {"x": 1} and loaded.pair == (1, 2.5)
    assert loaded.maybe is None
    assert loaded.other("x") == 1 and loaded.other("y") == -1
    assert loaded.counter.count == 3
    # Methods besides forward, the module's class name and submodules.
    assert loaded.original_name == "Rich"
    assert [name for name, _ in loaded.named_children()] == ["leaf"]
    assert loaded.leaf.original_name == "Leaf"
    result = loaded(kiln.from_numpy(rng_inputs(2, 3)))
    assert type(result).__name__ == "Pair" and result.b == 6


def test_paths_and_map_location(tmp_path):
    path = tmp_path / "linear.pt"
    torch.jit.save(torch.jit.script(torch.nn.Linear(2, 2)), str(path))
    for location in (None, "cpu", torch.device("cpu")):
        assert kiln.load(path, map_location=location).weight.shape == (2, 2)
        assert kiln.jit.load(str(path), map_location=location).weight.shape == (2, 2)
    with pytest.raises(ValueError, match="CPU only"):
        kiln.load(path, map_location="cuda")


# --- malformed archives ------------------------------------------------------------------------

def rewrite(data, change):
    """The archive with its records passed through change(name, bytes) -> bytes or None (dropped)."""
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(data)) as z, zipfile.ZipFile(out, "w") as w:
        for info in z.infolist():
            new = change(info.filename, z.read(info.filename))
            if new is not None:
                w.writestr(info.filename, new)
    return out.getvalue()


def malformed():
    good = torch_archive(torch.jit.script(corpus.Leaf()))
    code = "archive/code/__torch__/make_archive_corpus.py"

    def replace_code(old, new):
        return rewrite(good, lambda n, b: b.replace(old.encode(), new.encode(), 1) if n == code else b)

    class Evil:
        def __reduce__(self):
            return (os.system, ("echo pwned > /tmp/kiln_pwned_archive",))

    evil_pickle = io.BytesIO()
    torch.save(Evil(), evil_pickle)
    with zipfile.ZipFile(evil_pickle) as z:
        evil_data = z.read(next(n for n in z.namelist() if n.endswith("data.pkl")))
    return {
        "truncated": (good[: len(good) // 3], "not a zip"),
        "unknown_op": (replace_code("torch.mul(", "torch.kiln_no_such_op("), "kiln_no_such_op"),
        "bad_code": (replace_code("def forward", "def forward(((:"), "code/__torch__/make_archive_corpus.py"),
        "version_11": (rewrite(good, lambda n, b: b"11\n" if n.endswith("/version") else b), "version 11"),
        "no_version": (rewrite(good, lambda n, b: None if n.endswith("/version") else b), "version"),
        "no_data": (rewrite(good, lambda n, b: None if n.endswith("/data.pkl") else b), "data.pkl"),
        "no_code": (rewrite(good, lambda n, b: None if n.endswith(".py") else b), "does not define"),
        "os_system": (rewrite(good, lambda n, b: evil_data if n.endswith("/data.pkl") else b), "os"),
        "state_dict": (rewrite(good, lambda n, b: None if "/code/" in n or "constants" in n else b), "load_pickle"),
    }


@pytest.mark.parametrize("name", list(malformed()))
def test_malformed_archives_raise(name):
    data, expected = malformed()[name]
    with pytest.raises(kiln.Error) as e:
        kiln_load(data)
    assert expected in str(e.value), str(e.value)
    assert not os.path.exists("/tmp/kiln_pwned_archive")
