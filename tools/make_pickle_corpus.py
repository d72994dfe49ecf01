"""Writes the seed corpus of the unpickler fuzz target (tests/fuzz_corpus/pickle/)
from Python's pickle and torch 1.13, and with --cpp prints the same pickles as
the C++ string constants tests/cpp/pickle_test.cpp holds.

    /usr/bin/python3 tools/make_pickle_corpus.py [--cpp]
"""
import collections
import io
import os
import pickle
import sys
import zipfile
from typing import Dict, List, Tuple

import torch

CORPUS = os.path.join(os.path.dirname(__file__), "..", "tests", "fuzz_corpus", "pickle")

VALUE = {
    "int": [0, 255, 256, 65535, 65536, -1, 2**31 - 1, -(2**31), 2**31, 2**62, -(2**63)],
    "float": [1.5, -0.0, 1e300],
    "s": "h\u00e9llo",
    "b": (True, False, None),
    "nested": [(1, 2, 3, 4), {"k": []}],
}


class Sub(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(2, 2)

    def forward(self, x):
        return self.lin(x)


class Model(torch.nn.Module):
    """Attributes of the kinds torch.jit.save tags: typed lists, dicts, tuples, a device."""

    def __init__(self):
        super().__init__()
        self.sub = Sub()
        self.d: Dict[str, int] = {"a": 1}
        self.l: List[int] = [1, 2]
        self.t = [torch.ones(1)]
        self.f = [1.5]
        self.g = [[1]]
        self.bl = [True]
        self.tu: Tuple[int, str] = (1, "x")
        self.dev = torch.device("cpu")
        self.register_buffer("view", self.sub.lin.weight.detach()[1])

    def forward(self, x):
        return self.sub(x)


def data_pkl(obj, jit=False):
    """The data.pkl record of what torch.save (or torch.jit.save) writes."""
    buffer = io.BytesIO()
    (torch.jit.save if jit else torch.save)(obj, buffer)
    with zipfile.ZipFile(io.BytesIO(buffer.getvalue())) as z:
        return z.read(next(n for n in z.namelist() if n.endswith("/data.pkl")))


def samples():
    torch.manual_seed(0)
    sd = collections.OrderedDict(w=torch.arange(6.0).reshape(2, 3))
    sd["v"] = sd["w"][1]
    sd["i"] = torch.tensor([7, 8], dtype=torch.int32)
    return {
        "P2": pickle.dumps(VALUE, protocol=2),
        "P4": pickle.dumps(VALUE, protocol=4),
        "SD": data_pkl(sd),
        "LIN": data_pkl(torch.nn.Linear(2, 2).state_dict()),
        "JIT": data_pkl(torch.jit.script(Model()), jit=True),
    }


def extra_samples():
    """More seeds for the fuzzer only."""
    return {
        "set_p2": pickle.dumps([{1, 2}, frozenset([3])], protocol=2),
        "set_p4": pickle.dumps([{1, 2}, frozenset([3])], protocol=4),
        "bytes_p3": pickle.dumps([b"\x00\xff", "x" * 300], protocol=3),
        "memo_p2": pickle.dumps([str(i % 300) for i in range(600)], protocol=2),
        "dtypes": data_pkl([torch.float64, torch.device("cpu"), torch.Size([2, 3]), torch.nn.Parameter(torch.ones(2))]),
    }


def cpp_literal(name, data):
    lines = []
    for start in range(0, len(data), 40):
        lines.append('"' + "".join("\\x%02x" % b for b in data[start:start + 40]) + '"')
    body = "\n    ".join(lines)
    return "const std::string k%s(\n    %s,\n    %d);" % (name.title(), body, len(data))


def main():
    found = samples()
    os.makedirs(CORPUS, exist_ok=True)
    for name, data in list(found.items()) + list(extra_samples().items()):
        with open(os.path.join(CORPUS, name.lower() + ".pkl"), "wb") as f:
            f.write(data)
    if "--cpp" in sys.argv:
        for name, data in found.items():
            print(cpp_literal(name, data))


if __name__ == "__main__":
    main()
