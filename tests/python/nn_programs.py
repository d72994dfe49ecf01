"""Module programs for the differential module tests (test_nn*.py,
test_script_module*.py): each source is written once and loaded twice, with
`torch`, `nn` and `F` bound to torch's modules or to kiln's, so the same
classes run in both."""
import importlib.util
import itertools
import sys

import numpy as np
import torch

import kiln

# A module with parameters, a buffer, submodules, a ModuleList looped over in
# forward, an Optional argument, a helper method, constants (__constants__ and
# Final) and a branch on self.training.
NET = '''
from typing import Final, List, Optional


class Block(nn.Module):
    def __init__(self, n: int, scale: float):
        super().__init__()
        self.fc = nn.Linear(n, n)
        self.scale = scale
        self.register_buffer("offset", torch.ones(n) * 0.25)

    def forward(self, x):
        return torch.relu(self.fc(x)) * self.scale + self.offset


class Net(nn.Module):
    depth: Final[int]
    __constants__ = ["eps"]

    def __init__(self, n: int = 4, depth: int = 3):
        super().__init__()
        self.depth = depth
        self.eps = 0.001
        self.inp = nn.Linear(n, n)
        self.blocks = nn.ModuleList([Block(n, 0.5 + i) for i in range(depth)])
        self.weight = nn.Parameter(torch.ones(n))
        self.register_buffer("running", torch.zeros(n))
        self.register_buffer("scratch", torch.zeros(n), persistent=False)
        self.steps = 0
        self.out = nn.Sequential(nn.Linear(n, 2), nn.Tanh())

    def helper(self, x, k: int):
        return x * k + self.eps

    def forward(self, x, bias: Optional[torch.Tensor] = None):
        x = self.inp(x)
        for block in self.blocks:
            x = block(x)
        if bias is not None:
            x = x + bias
        if self.training:
            x = x * 2.0
        x = self.helper(x, self.depth) + self.blocks[0](x)
        return self.out(x * self.weight + self.running)
'''

_counter = itertools.count()


def load(source, lib, tmp_path, name="nn_program"):
    """Executes `source` as a module file with torch/nn/F bound to `lib`'s
    (torch or kiln) and returns the module. A real file, so both frontends
    can read the methods' source."""
    module_name = f"{name}_{lib.__name__}_{next(_counter)}"
    path = tmp_path / f"{module_name}.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(module_name, path)
    module = importlib.util.module_from_spec(spec)
    module.torch = lib
    module.nn = lib.nn
    module.F = lib.nn.functional
    sys.modules[module_name] = module
    spec.loader.exec_module(module)
    return module


def kiln_state(torch_module):
    """torch_module's state_dict as kiln tensors (copies)."""
    return {k: kiln.from_numpy(v.detach().numpy().copy()) for k, v in torch_module.state_dict().items()}


def copy_weights(kiln_module, torch_module):
    """Makes kiln_module's parameters and persistent buffers equal torch_module's."""
    kiln_module.load_state_dict(kiln_state(torch_module))


def inputs(*shapes, seed=0):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(s).astype(np.float32) for s in shapes]


def both(array):
    return kiln.from_numpy(array.copy()), torch.from_numpy(array.copy())
