"""The command line's `kiln run FILE.py FN ARG...` (literal and .npy
arguments, --out) and `kiln graph FILE.py`; .npy files kiln writes are read
back with numpy itself, and numpy's files (every dtype, C and Fortran order)
are read by kiln."""
import os
import subprocess

import numpy as np
import pytest
import torch

ROOT = os.path.join(os.path.dirname(__file__), "..", "..")
KILN = os.path.join(os.environ.get("KILN_BUILD_DIR", os.path.join(ROOT, "build")), "kiln")

PROGRAM = '''
import torch
from typing import Dict, List, Optional, Tuple


def add(a: int, b: int = 10) -> int:
    return a + b


def describe(f: float, s: str, flag: bool, maybe: Optional[int]) -> Tuple[float, str, bool, Optional[int]]:
    return f * 2.0, s + "!", not flag, maybe


def containers(xs: List[float], d: Dict[str, int], t: Tuple[int, str]) -> List[float]:
    return [x + float(d["k"]) + float(t[0]) for x in xs]


def ident(x):
    return x


def affine(x, w, b):
    return torch.matmul(x, w) + b, x.t()


def split(x):
    return [x * 2, x.sum()]
'''

NUMPY_DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "float32", "float64"]


@pytest.fixture(scope="module")
def program(tmp_path_factory):
    path = tmp_path_factory.mktemp("prog") / "prog.py"
    path.write_text(PROGRAM)
    return str(path)


def kiln_run(*args):
    return subprocess.run([KILN, *map(str, args)], capture_output=True, text=True, timeout=60)


def ok(*args):
    result = kiln_run(*args)
    assert result.returncode == 0, result.stderr
    return result.stdout


def fails(*args):
    result = kiln_run(*args)
    assert result.returncode == 1, (result.stdout, result.stderr)
    assert result.stderr.startswith("kiln: error: "), result.stderr
    return result.stderr


def test_literal_arguments(program):
    assert ok("run", program, "add", "2", "3") == "5\n"
    assert ok("run", program, "add", "-2") == "8\n"
    assert ok("run", program, "describe", "1", "'a b'", "True", "None") == "(2.0, 'a b!', False, None)\n"
    assert ok("run", program, "describe", "0.25", '"q"', "False", "7") == "(0.5, 'q!', True, 7)\n"
    assert ok("run", program, "containers", "[1, 2.5]", "{'k': 1}", "(10, 'x')") == "[12.0, 13.5]\n"


def test_bad_arguments_name_the_argument(program):
    assert "argument 2 ('b' of add)" in fails("run", program, "add", "1", "x")
    assert "expected a value of type 'int'" in fails("run", program, "add", "1.5")
    assert "argument 1 ('xs' of containers)" in fails("run", program, "containers", "[1, 'a']", "{}", "(1, 'a')")
    assert "expected at most 2 arguments" in fails("run", program, "add", "1", "2", "3")
    assert "missing value for argument 'a'" in fails("run", program, "add")
    assert "has no function 'nope'" in fails("run", program, "nope")
    assert "cannot read" in fails("run", "/nonexistent/prog.py", "f")


@pytest.mark.parametrize("dtype", NUMPY_DTYPES)
@pytest.mark.parametrize("order", ["C", "F"])
def test_npy_round_trip_through_numpy(program, tmp_path, dtype, order):
    rng = np.random.default_rng(0)
    array = np.asarray(rng.integers(0, 100, size=(3, 4)) if dtype != "bool" else rng.random((3, 4)) > 0.5,
                       dtype=dtype)
    array = np.asfortranarray(array) if order == "F" else array
    np.save(tmp_path / "x.npy", array)
    ok("run", program, "ident", tmp_path / "x.npy", "--out", tmp_path / "out")
    back = np.load(tmp_path / "out" / "out0.npy")
    assert back.dtype == array.dtype and back.shape == array.shape
    np.testing.assert_array_equal(back, array)


def test_npy_zero_dim_and_empty(program, tmp_path):
    for name, array in [("scalar", np.array(2.5)), ("empty", np.zeros((0, 3), dtype=np.int32))]:
        np.save(tmp_path / f"{name}.npy", array)
        ok("run", program, "ident", tmp_path / f"{name}.npy", "--out", tmp_path / name)
        back = np.load(tmp_path / name / "out0.npy")
        assert back.dtype == array.dtype and back.shape == array.shape
        np.testing.assert_array_equal(back, array)


def test_tensor_results_match_torch_and_are_saved(program, tmp_path):
    rng = np.random.default_rng(1)
    x, w, b = (rng.standard_normal(s).astype(np.float32) for s in [(2, 3), (3, 4), (4,)])
    for name, value in zip("xwb", (x, w, b)):
        np.save(tmp_path / f"{name}.npy", value)
    out = ok("run", "--out", tmp_path / "out", program, "affine", *(tmp_path / f"{n}.npy" for n in "xwb"))
    assert out.startswith("(tensor([[")
    y, xt = (torch.from_numpy(v) for v in (np.matmul(x, w) + b, x.T))
    np.testing.assert_allclose(np.load(tmp_path / "out" / "out0.npy"), y.numpy(), rtol=1e-5)
    np.testing.assert_array_equal(np.load(tmp_path / "out" / "out1.npy"), xt.numpy())
    assert sorted(os.listdir(tmp_path / "out")) == ["out0.npy", "out1.npy"]


def test_list_of_tensors_saved_in_order(program, tmp_path):
    x = np.arange(3, dtype=np.float64)
    np.save(tmp_path / "x.npy", x)
    out = ok("run", program, "split", tmp_path / "x.npy", "--out", tmp_path / "o")
    assert out == "[tensor([0., 2., 4.], dtype=float64), tensor(3., dtype=float64)]\n"
    np.testing.assert_array_equal(np.load(tmp_path / "o" / "out0.npy"), x * 2)
    assert np.load(tmp_path / "o" / "out1.npy").shape == ()


def test_bad_npy_files(program, tmp_path):
    (tmp_path / "junk.npy").write_bytes(b"not numpy at all")
    assert "not a .npy file" in fails("run", program, "ident", tmp_path / "junk.npy")
    np.save(tmp_path / "c.npy", np.zeros(3, dtype=np.complex64))
    assert "unsupported .npy dtype '<c8'" in fails("run", program, "ident", tmp_path / "c.npy")
    np.save(tmp_path / "t.npy", np.zeros((4, 4), dtype=np.float32))
    data = (tmp_path / "t.npy").read_bytes()
    (tmp_path / "t.npy").write_bytes(data[:-5])
    assert "(truncated)" in fails("run", program, "ident", tmp_path / "t.npy")
    assert "cannot read" in fails("run", program, "ident", tmp_path / "missing.npy")
    assert "argument 1 ('x' of ident)" in fails("run", program, "ident", tmp_path / "missing.npy")


def test_graph_of_a_script_file(program):
    out = ok("graph", program)
    assert "# add\ngraph(%a" in out and "# split\n" in out
    only = ok("graph", program, "add")
    assert only.startswith("graph(%a") and "# add" not in only


def test_usage_errors():
    assert kiln_run("run").returncode == 2
    assert kiln_run("graph").returncode == 2
    assert "run FILE.py FN ARG" in kiln_run("--help").stdout
