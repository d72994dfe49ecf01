"""Models saved with torch.jit.save for the source import tests
(test_import_source.py): each archive's code/ files are imported with kiln
and the graphs compared with torch's own import of the same archive."""
import importlib.util
import inspect
import itertools
import sys
import zipfile

import torch

# Modules written once in a file (torch.jit.script reads their source).
ZOO = '''
import math
from typing import Any, Dict, List, NamedTuple, Optional, Tuple, Union

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor


class Pair(NamedTuple):
    value: Tensor
    count: int


@torch.jit.script
class Point:
    def __init__(self, x: int, y: float):
        self.x = x
        self.y = y

    def norm(self) -> float:
        return math.sqrt(self.x * self.x + self.y * self.y)

    def shifted(self, d: int) -> "Point":
        return Point(self.x + d, self.y)


@torch.jit.script
class Node:
    def __init__(self, value: int, next: Optional[Point]):
        self.value = value
        self.next = next


class Leaf(nn.Module):
    def __init__(self, n: int):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(n))
        self.register_buffer("mean", torch.zeros(n))
        self.n = n

    def forward(self, x: Tensor) -> Tensor:
        return x * self.weight - self.mean


class Attributes(nn.Module):
    """Attributes of every kind, read and written."""
    opt: Optional[int]
    names: List[str]

    def __init__(self):
        super().__init__()
        self.i = 3
        self.f = 2.5
        self.s = "abc"
        self.b = True
        self.li = [1, 2, 3]
        self.lf = [1.0, 2.0]
        self.lt = [torch.ones(2), torch.zeros(2)]
        self.d = {"a": 1, "b": 2}
        self.di = {1: 1.5}
        self.t = (1, "x", 2.0)
        self.opt = None
        self.names = []
        self.p = Point(1, 2.0)
        self.node = Node(3, Point(4, 5.0))
        self.leaf = Leaf(4)
        self.counter = 0

    def forward(self, x: Tensor) -> Tuple[Tensor, int, str]:
        self.counter += 1
        y = self.leaf(x) * self.f + self.i
        for v in self.li:
            y = y + v
        for k, v in self.d.items():
            y = y * v
        for t in self.lt:
            y = y + t.sum()
        o = self.opt
        if o is not None:
            y = y + o
        nxt = self.node.next
        if nxt is not None:
            y = y + nxt.norm()
        q = self.p.shifted(2)
        self.names.append(self.s)
        return y, q.x + self.t[0] + len(self.names), self.s + self.t[1]


class ControlFlow(nn.Module):
    def __init__(self):
        super().__init__()
        self.depth = 3

    def forward(self, x: Tensor, n: int, flag: bool) -> Tensor:
        acc = torch.zeros_like(x)
        i = 0
        while i < n:
            if i % 2 == 0:
                acc = acc + x
            elif i == 3:
                break
            else:
                acc = acc - 1
                i += 1
                continue
            i += 1
        for j in range(self.depth):
            if flag and j > 1:
                return acc * j
        r: Optional[Tensor] = None
        if n > 2:
            r = acc
        if r is None:
            raise ValueError("no result")
        assert r.dim() > 0, "scalar"
        return r + x.max()


class TupleReturns(nn.Module):
    def forward(self, x: Tensor) -> Pair:
        return Pair(x * 2, x.size(0))

    @torch.jit.export
    def both(self, x: Tensor) -> Tuple[Pair, List[int]]:
        p = self.forward(x)
        return p, [p.count, int(p.value.sum().item())]


class Exported(nn.Module):
    def __init__(self):
        super().__init__()
        self.scale = 2

    def forward(self, x: Tensor) -> Tensor:
        return self.helper(x) + self.other(x.size(0))

    def helper(self, x: Tensor) -> Tensor:
        return x * self.scale

    @torch.jit.export
    def other(self, n: int) -> int:
        return n * self.scale

    @torch.jit.export
    def strings(self, s: str, parts: List[str]) -> Dict[str, int]:
        out: Dict[str, int] = {}
        for p in parts:
            out[p + s] = len(p)
        if s in out:
            out.pop(s)
        return out


class State(nn.Module):
    def __init__(self):
        super().__init__()
        self.x = 4
        self.w = torch.ones(2)

    def forward(self, x: Tensor) -> Tensor:
        return x * self.w * self.x

    @torch.jit.export
    def __getstate__(self) -> Tuple[int, Tensor, bool]:
        return self.x, self.w, self.training

    @torch.jit.export
    def __setstate__(self, state: Tuple[int, Tensor, bool]) -> None:
        self.x = state[0]
        self.w = state[1]
        self.training = state[2]


class Layers(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, padding=1)
        self.bn = nn.BatchNorm2d(4)
        self.pool = nn.MaxPool2d(2)
        self.drop = nn.Dropout(0.1)
        self.seq = nn.Sequential(nn.Flatten(), nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
        self.blocks = nn.ModuleList([Leaf(2) for _ in range(3)])
        self.heads = nn.ModuleDict({"a": nn.Identity(), "b": nn.Softmax(dim=1)})
        self.ln = nn.LayerNorm(2)
        self.emb = nn.Embedding(10, 2)

    def forward(self, x: Tensor, idx: Tensor) -> Tensor:
        y = self.drop(self.pool(F.relu(self.bn(self.conv(x)))))
        y = self.seq(y[:, :1])
        for b in self.blocks:
            y = b(y)
        for name, h in self.heads.items():
            y = h(y)
        return self.ln(y) + self.emb(idx).sum(0)


class Recurrent(nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(4, 3, batch_first=True)
        self.gru = nn.GRU(3, 2)

    def forward(self, x: Tensor) -> Tensor:
        y, (h, c) = self.lstm(x)
        z, _ = self.gru(y)
        return z + h.sum()


class Attention(nn.Module):
    def __init__(self):
        super().__init__()
        self.layer = nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0)

    def forward(self, x: Tensor) -> Tensor:
        return self.layer(x)


class Constants(nn.Module):
    """Constants of every kind the printer writes as `name : Final[T] = v`."""
    __constants__ = ["s", "tup", "lst", "dev", "f", "neg", "big", "none", "dt"]

    def __init__(self):
        super().__init__()
        self.s = "str\\"q"
        self.tup = (1, (2.5, "x"))
        self.lst = [1, 2]
        self.dev = torch.device("cpu")
        self.f = 1e-5
        self.neg = -3
        self.big = float("inf")
        self.none = None
        self.dt = torch.float32

    def forward(self, x: Tensor) -> Tuple[Tensor, str, int]:
        print(self.s, self.tup, self.lst, self.dev, self.f, self.neg, self.big, self.none, self.dt)
        y = x.to(self.dev) * self.f + self.neg
        return y.clamp(max=self.big), self.s + self.tup[1][1], self.lst[0]


def helper(x: Tensor, k: int = 2) -> Tensor:
    return x * k


class Dynamic(nn.Module):
    """Unions, Any, isinstance refinement, dict and list comprehensions, properties."""
    def __init__(self):
        super().__init__()
        self.k = 2

    @property
    def double(self) -> int:
        return self.k * 2

    def forward(self, x: Tensor, u: Union[int, str], a: Any) -> Tensor:
        y = helper(x)
        if isinstance(u, int):
            y = y + u
        else:
            y = y * len(u)
        d = {i: i * 2 for i in range(3)}
        l = [v for v in d.values()]
        z = torch.jit.annotate(Optional[Tensor], None)
        if len(l) > 1:
            z = y
        assert z is not None
        return z + self.double + min(l)


@torch.jit.interface
class ModuleIface(nn.Module):
    def forward(self, x: Tensor) -> Tensor:
        pass


@torch.jit.interface
class ScaleIface:
    def scale(self, x: int) -> int:
        pass


@torch.jit.script
class Doubler:
    def __init__(self, k: int):
        self.k = k

    def scale(self, x: int) -> int:
        return x * 2 * self.k


def use_scale(s: ScaleIface, x: int) -> int:
    return s.scale(x)


class Interfaces(nn.Module):
    """A submodule typed by a module interface, a class passed as an interface."""
    impl: ModuleIface

    def __init__(self):
        super().__init__()
        self.impl = Leaf(3)
        self.plain = Leaf(3)

    def forward(self, x: Tensor) -> Tensor:
        return self.impl.forward(x) + self.plain(x) * use_scale(Doubler(2), 3)


def pre_hook(m: nn.Module, inp: Tuple[Tensor]) -> Tuple[Tensor]:
    return (inp[0] * 2,)


def post_hook(m: nn.Module, inp: Tuple[Tensor], out: Tensor) -> Tensor:
    return out - 1


class Hooked(nn.Module):
    """A submodule with forward hooks (methods of its class the caller calls)."""
    def __init__(self):
        super().__init__()
        self.inner = Leaf(3)
        self.inner.register_forward_pre_hook(pre_hook)
        self.inner.register_forward_hook(post_hook)

    def forward(self, x: Tensor) -> Tensor:
        return self.inner(x)


class Nested(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = Leaf(3)
        self.inner = nn.Sequential(Leaf(3), nn.Sequential(Leaf(3), nn.Tanh()))
        self.attrs = Attributes()

    def forward(self, x: Tensor) -> Tensor:
        return self.inner(self.a(x))
'''

_counter = itertools.count()


def _load(source, tmp_path, name):
    module_name = f"{name}_{next(_counter)}"
    path = tmp_path / f"{module_name}.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(module_name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    spec.loader.exec_module(module)
    return module


def _wrap_program(program, tmp_path):
    """A script_programs.py function as the forward of a module (functions
    alone cannot be saved), or None when torch cannot script it."""
    header = ("import math\nimport torch\nfrom torch import Tensor\n"
              "from typing import Any, Dict, List, NamedTuple, Optional, Tuple, Union\n")
    try:
        mod = _load(header + program["src"], tmp_path, "prog")
        fn = torch.jit.script(getattr(mod, program["fn"]))
    except Exception:
        return None
    schema = fn.schema
    params = ", ".join(f"{a.name}: {a.type.annotation_str}" for a in schema.arguments)
    names = ", ".join(a.name for a in schema.arguments)
    ret = schema.returns[0].type.annotation_str if schema.returns else "None"
    wrapper = (header + program["src"] + "\n\nclass Wrapper(torch.nn.Module):\n"
               f"    def forward(self, {params}) -> {ret}:\n"
               f"        return {program['fn']}({names})\n")
    try:
        mod = _load(wrapper, tmp_path, "prog")
        return torch.jit.script(mod.Wrapper())
    except Exception:
        return None


def build_archives(tmp_path, with_programs=True):
    """[(name, path)] of the archives: the zoo's modules scripted, some frozen
    and traced (tensor constants), the nn_programs net, and the
    script_programs functions wrapped in modules."""
    out = []

    def save(name, scripted):
        path = tmp_path / f"{name}.pt"
        torch.jit.save(scripted, str(path))
        out.append((name, path))

    zoo = _load(ZOO, tmp_path, "zoo")
    for cls in ["Attributes", "ControlFlow", "TupleReturns", "Exported", "State", "Layers", "Recurrent",
                "Attention", "Nested", "Constants", "Dynamic", "Interfaces", "Hooked"]:
        save(cls, torch.jit.script(getattr(zoo, cls)()))
    save("Layers_frozen", torch.jit.freeze(torch.jit.script(zoo.Layers().eval())))
    save("Leaf_frozen", torch.jit.freeze(torch.jit.script(zoo.Leaf(3).eval())))
    save("Layers_traced", torch.jit.trace(zoo.Layers().eval(), (torch.ones(1, 3, 4, 4), torch.tensor([1, 2]))))
    save("Recurrent_traced", torch.jit.trace(zoo.Recurrent(), (torch.ones(2, 3, 4),)))

    import nn_programs
    net = nn_programs.load(nn_programs.NET, torch, tmp_path)
    save("nn_programs_Net", torch.jit.script(net.Net()))

    if with_programs:
        import script_programs
        for program in script_programs.PROGRAMS:
            scripted = _wrap_program(program, tmp_path)
            if scripted is not None:
                save("program_" + program["name"], scripted)
    return out


def read_archive(path):
    """(code files {"code/...py": text}, constants.pkl bytes or None,
    {storage key: bytes} of the constants) of an archive."""
    z = zipfile.ZipFile(path)
    root = z.namelist()[0].split("/")[0]
    files, storages, constants = {}, {}, None
    for n in z.namelist():
        rel = n[len(root) + 1:]
        if rel.startswith("code/") and rel.endswith(".py"):
            files[rel] = z.read(n).decode()
        elif rel == "constants.pkl":
            constants = z.read(n)
        elif rel.startswith("constants/"):
            storages[rel[len("constants/"):]] = z.read(n)
    return files, constants, storages


def torch_graphs(path):
    """{qualified name: graph text} of every function and method torch's
    own import of the archive compiles."""
    cu = torch._C.CompilationUnit()
    torch._C.import_ir_module(cu, str(path), None, {})
    return {f.qualified_name: str(f.graph) for f in cu.get_functions()}


__all__ = ["build_archives", "read_archive", "torch_graphs", "inspect"]
