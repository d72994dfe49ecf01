"""Writes the seed corpus of the archive fuzz target (tests/fuzz_corpus/archive/):
small files torch 1.13 writes with torch.jit.save and torch.save.

    /usr/bin/python3 tools/make_archive_corpus.py
"""
import collections
import io
import os
from typing import Dict, List, NamedTuple, Optional, Tuple

import torch

CORPUS = os.path.join(os.path.dirname(__file__), "..", "tests", "fuzz_corpus", "archive")


class Pair(NamedTuple):
    a: torch.Tensor
    b: int


@torch.jit.script
class Counter:
    def __init__(self, start: int):
        self.count = start

    def bump(self) -> int:
        self.count += 1
        return self.count


class Leaf(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(3, 2)
        self.register_buffer("scale", torch.tensor([2.0, 3.0]))

    def forward(self, x):
        return self.lin(x) * self.scale


class Rich(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.leaf = Leaf()
        self.w = torch.nn.Parameter(torch.arange(6.0).reshape(2, 3))
        self.row = self.w[1]
        self.names: List[str] = ["a", "b"]
        self.table: Dict[str, int] = {"x": 1}
        self.pair: Tuple[int, float] = (1, 2.5)
        self.maybe: Optional[int] = None
        self.counter = Counter(3)

    def forward(self, x: torch.Tensor) -> Pair:
        y = self.leaf(x)
        for i in range(2):
            if bool(y.sum() > 0):
                y = y + self.w.sum()
        return Pair(y, self.counter.bump() + len(self.names))

    @torch.jit.export
    def other(self, k: str) -> int:
        return self.table.get(k, -1)


class WithState(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.n = 4

    def forward(self, x):
        return x + self.n

    @torch.jit.export
    def __getstate__(self):
        return (self.n, self.training)

    @torch.jit.export
    def __setstate__(self, state: Tuple[int, bool]):
        self.n = state[0] + 1
        self.training = state[1]


def traced():
    def f(x):
        return x * torch.tensor([1.0, 2.0]) + 1

    return torch.jit.trace(f, torch.ones(2))


def main():
    os.makedirs(CORPUS, exist_ok=True)
    torch.manual_seed(0)
    files = {
        "linear.pt": torch.jit.script(torch.nn.Linear(2, 2)),
        "rich.pt": torch.jit.script(Rich()),
        "setstate.pt": torch.jit.script(WithState()),
        "frozen.pt": torch.jit.freeze(torch.jit.script(Leaf()).eval()),
    }
    for name, module in files.items():
        buffer = io.BytesIO()
        torch.jit.save(module, buffer, _extra_files={"meta.txt": "kiln"})
        with open(os.path.join(CORPUS, name), "wb") as f:
            f.write(buffer.getvalue())
    traced_module = torch.jit.trace(Leaf(), torch.ones(1, 3))
    torch.jit.save(traced_module, os.path.join(CORPUS, "traced.pt"))
    torch.save(collections.OrderedDict(w=torch.arange(4.0), i=torch.arange(3)), os.path.join(CORPUS, "state_dict.pt"))


if __name__ == "__main__":
    main()
