"""`kiln run MODEL.pt` and `kiln info MODEL.pt` on archives torch 1.13 writes."""
import io
import os
import subprocess
import sys

import numpy as np
import torch

from test_cli_run import KILN

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "tools"))
import make_archive_corpus as corpus  # noqa: E402
from test_load import malformed  # noqa: E402


def kiln_cli(*args):
    return subprocess.run([KILN, *map(str, args)], capture_output=True, text=True, timeout=120)


def test_run_writes_what_torch_computes(tmp_path):
    torch.manual_seed(0)
    model = torch.jit.script(corpus.Leaf())
    path = tmp_path / "leaf.pt"
    torch.jit.save(model, str(path))
    x = np.random.default_rng(0).standard_normal((4, 3)).astype(np.float32)
    np.save(tmp_path / "x.npy", x)
    done = kiln_cli("run", path, tmp_path / "x.npy", "-o", tmp_path / "y.npy")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("tensor(")
    np.testing.assert_allclose(np.load(tmp_path / "y.npy"), model(torch.from_numpy(x)).detach().numpy(),
                               rtol=1e-5, atol=1e-6)


def test_run_other_methods_and_several_outputs(tmp_path):
    model = torch.jit.script(corpus.Rich())
    path = tmp_path / "rich.pt"
    torch.jit.save(model, str(path))
    done = kiln_cli("run", path, "--method", "other", "'x'")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "1"
    np.save(tmp_path / "x.npy", np.ones((2, 3), np.float32))
    done = kiln_cli("run", path, tmp_path / "x.npy", "-o", tmp_path / "out.npy")
    assert done.returncode == 0, done.stderr
    expected = model(torch.ones(2, 3))
    np.testing.assert_allclose(np.load(tmp_path / "out.npy"), expected.a.detach().numpy(), rtol=1e-5)
    # A wrong argument count names the method and its declaration.
    done = kiln_cli("run", path)
    assert done.returncode == 1 and "forward" in done.stderr and "missing value for argument 'x'" in done.stderr


def test_info_lists_methods_sizes_and_operators(tmp_path):
    model = torch.jit.script(corpus.Rich())
    path = tmp_path / "rich.pt"
    torch.jit.save(model, str(path))
    done = kiln_cli("info", path)
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "other(str k) -> int" in out
    assert "forward(Tensor x) ->" in out
    n_params = sum(p.numel() for p in model.parameters())
    assert f"parameters: {len(list(model.parameters()))} tensors, {n_params} elements, {4 * n_params} bytes" in out
    assert "aten::linear" in out and "MISSING" not in out


def test_info_names_the_operators_kiln_lacks(tmp_path):
    path = tmp_path / "unknown.pt"
    path.write_bytes(malformed()["unknown_op"][0])
    done = kiln_cli("info", path)
    assert done.returncode == 0, done.stderr
    assert "kiln cannot load it" in done.stdout
    assert "aten::kiln_no_such_op  1  MISSING in kiln" in done.stdout
    done = kiln_cli("run", path)
    assert done.returncode == 1 and "kiln_no_such_op" in done.stderr
