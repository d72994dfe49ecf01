"""kiln's pickle reader and writer (kiln/serialization/pickle.h) against
Python's pickle and torch 1.13: what they write, kiln reads to equal values;
what kiln writes, they read to equal values. Through the private seam
kiln._C._unpickle / kiln._C._pickle; the zip container is built here with
zipfile, as the archive layer will do it."""
import collections
import io
import math
import os
import pickle
import zipfile

import numpy as np
import pytest
import torch

from conftest import assert_same
import kiln
from kiln import _C

VALUES = [
    0, 1, 255, 256, 65535, 65536, -1, -256, 2**31 - 1, -(2**31), 2**31, 2**40, 2**63 - 1, -(2**63),
    0.0, -0.0, 1.5, -2.25, 1e300, 5e-324, math.inf, -math.inf,
    True, False, None,
    "", "a", "h\u00e9llo \u20ac \U0001f600", "x" * 300,
    [], [1, 2, 3], [1.5, 2.5], ["a", "b"], [True, False], [None, 1], [[1], [2, 3]], list(range(2500)),
    (), (1,), (1, 2), (1, 2, 3), (1, "a", 2.0, None), ((1, 2), (3, (4, 5))),
    {}, {"a": 1}, {1: "a", 2: "b"}, {(1, "a"): [1], (2, "b"): []}, {i: str(i) for i in range(1500)},
    {"nested": {"deeper": [{"x": (1.5, [None])}]}},
    [str(i % 300) for i in range(600)],
]


def unpickle(data, storages=None):
    return _C._unpickle(data, storages or {})


def zip_records(buffer):
    """data.pkl and the storages {key: bytes} of a torch.save / torch.jit.save file."""
    with zipfile.ZipFile(io.BytesIO(buffer)) as z:
        names = z.namelist()
        data = z.read(next(n for n in names if n.endswith("/data.pkl")))
        storages = {n.rsplit("/", 1)[1]: z.read(n) for n in names if "/data/" in n}
    return data, storages


def torch_save(obj):
    buffer = io.BytesIO()
    torch.save(obj, buffer)
    return zip_records(buffer.getvalue())


def torch_load_kiln_pickle(value):
    """What kiln writes for `value`, packed as torch.save packs it, loaded by torch.load."""
    data, storages = _C._pickle(value)
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_STORED) as z:
        z.writestr("archive/data.pkl", data)
        for key, record in storages.items():
            z.writestr("archive/data/" + key, record)
        z.writestr("archive/version", "3\n")
    buffer.seek(0)
    return torch.load(buffer)


def same_plain(a, b):
    """Equality that tells floats from ints, -0.0 from 0.0, and tuples from lists."""
    if isinstance(b, float):
        return isinstance(a, float) and (a == b and math.copysign(1, a) == math.copysign(1, b))
    if isinstance(b, (list, tuple)):
        return type(a) is type(b) and len(a) == len(b) and all(same_plain(x, y) for x, y in zip(a, b))
    if isinstance(b, dict):
        return isinstance(a, dict) and list(a.keys()) == list(b.keys()) and all(
            same_plain(a[k], b[k]) for k in b)
    return type(a) is type(b) and a == b


@pytest.mark.parametrize("protocol", [2, 3, 4, 5])
@pytest.mark.parametrize("value", VALUES, ids=lambda v: repr(v)[:40])
def test_reads_pythons_pickles(value, protocol):
    assert same_plain(unpickle(pickle.dumps(value, protocol=protocol)), value)


@pytest.mark.parametrize("value", VALUES, ids=lambda v: repr(v)[:40])
def test_python_reads_kilns_pickles(value):
    data, storages = _C._pickle(value)
    assert storages == {}
    assert same_plain(pickle.loads(data), value)
    # With TorchScript type tags, torch's helpers give the same values back.
    assert same_plain(pickle.loads(_C._pickle(value, type_tags=True)[0]), value)


def test_writes_what_python_writes():
    # The same bytes as Python's protocol 2, where both make the same choices
    # (ints within 32 bits, no string written twice).
    for value in [{"a": [1, 2, (3, "x")], "b": 1.5, "c": None, "d": True}, list(range(2500)), (1, (2, 3), [])]:
        assert _C._pickle(value)[0] == pickle.dumps(value, protocol=2)
    ordered = collections.OrderedDict(a=1, b=[2])
    assert _C._pickle(ordered)[0] == pickle.dumps(ordered, protocol=2)


def test_sets_and_dtypes_and_sizes():
    assert sorted(unpickle(pickle.dumps({3, 1, 2}, protocol=2))) == [1, 2, 3]
    assert unpickle(pickle.dumps(frozenset([4]), protocol=4)) == [4]
    data, _ = torch_save([torch.float32, torch.int64, torch.device("cpu"), torch.Size([2, 3])])
    # dtypes are their ScalarType numbers, as TorchScript carries them.
    assert unpickle(data) == [6, 4, "cpu", (2, 3)]


def state_dicts():
    torch.manual_seed(0)
    conv = torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3), torch.nn.BatchNorm2d(4), torch.nn.ReLU(),
                               torch.nn.Flatten(), torch.nn.Linear(16, 2))
    base = torch.arange(24, dtype=torch.float32).reshape(4, 6)
    views = collections.OrderedDict(
        base=base, row=base[2], col=base[:, 1], t=base.t(), window=base[1:3, 2:5], empty=base[4:], scalar=base[1, 1])
    dtypes = collections.OrderedDict(
        (name, (torch.arange(10) % 3).to(dtype)) for name, dtype in
        [("f64", torch.float64), ("f16", torch.float16), ("i64", torch.int64), ("i32", torch.int32),
         ("i16", torch.int16), ("i8", torch.int8), ("u8", torch.uint8), ("b", torch.bool)])
    return {"conv": conv.state_dict(), "linear": torch.nn.Linear(3, 5).state_dict(), "views": views,
            "dtypes": dtypes, "nested": {"model": torch.nn.Linear(2, 2).state_dict(), "step": 7, "lr": [0.1]}}


@pytest.mark.parametrize("name", ["conv", "linear", "views", "dtypes", "nested"])
def test_reads_torch_save_state_dicts(name):
    sd = state_dicts()[name]
    loaded = unpickle(*torch_save(sd))
    flat_t, flat_k = [], []

    def walk(k, t):
        expected = dict if isinstance(t, dict) else kiln.Tensor if isinstance(t, torch.Tensor) else type(t)
        assert isinstance(k, expected), (type(k), type(t))
        if isinstance(t, dict):
            assert list(k.keys()) == list(t.keys())
            for key in t:
                walk(k[key], t[key])
        elif isinstance(t, list):
            for x, y in zip(k, t):
                walk(x, y)
        elif isinstance(t, torch.Tensor):
            assert_same(k, t)
            assert k.stride() == t.stride() and k.storage_offset() == t.storage_offset()
            flat_t.append(t)
            flat_k.append(k)
        else:
            assert k == t

    walk(loaded, sd)
    # Tensors share a kiln storage exactly when they shared a torch storage.
    for i in range(len(flat_t)):
        for j in range(len(flat_t)):
            same_torch = flat_t[i].storage().data_ptr() == flat_t[j].storage().data_ptr()
            same_kiln = flat_k[i]._storage_ptr() == flat_k[j]._storage_ptr()
            assert same_torch == same_kiln, (i, j)


def test_views_stay_views_after_loading():
    loaded = unpickle(*torch_save(state_dicts()["views"]))
    # Writing through the base shows in its views: one storage.
    base = loaded["base"].numpy()
    assert np.shares_memory(base, loaded["col"].numpy())
    assert loaded["row"]._storage_ptr() == loaded["base"]._storage_ptr()


@pytest.mark.parametrize("name", ["conv", "views", "dtypes", "nested"])
def test_torch_loads_what_kiln_writes(name):
    sd = state_dicts()[name]
    kiln_sd = unpickle(*torch_save(sd))
    if isinstance(sd, collections.OrderedDict):
        kiln_sd = collections.OrderedDict(kiln_sd)
    back = torch_load_kiln_pickle(kiln_sd)
    assert type(back) is type(sd)

    def walk(b, t):
        if isinstance(t, dict):
            assert list(b.keys()) == list(t.keys())
            for key in t:
                walk(b[key], t[key])
        elif isinstance(t, torch.Tensor):
            assert b.dtype == t.dtype and b.shape == t.shape and b.stride() == t.stride()
            assert b.storage_offset() == t.storage_offset()
            assert torch.equal(b, t)
        else:
            assert b == t

    walk(back, sd)
    if name == "views":
        # torch sees one storage behind the views too.
        assert back["row"].storage().data_ptr() == back["base"].storage().data_ptr()
        back["base"][2, 0] = 100
        assert back["row"][0] == 100


def test_kiln_tensors_round_trip_through_torch():
    a = kiln.from_numpy(np.arange(12, dtype=np.float32).reshape(3, 4))
    value = collections.OrderedDict(a=a, again=a, i=kiln.from_numpy(np.array([1, 2], dtype=np.int64)))
    back = torch_load_kiln_pickle(value)
    assert back["a"] is back["again"]
    np.testing.assert_array_equal(back["a"].numpy(), a.numpy())
    np.testing.assert_array_equal(back["i"].numpy(), [1, 2])


def test_jit_archives_need_an_object_loader():
    class M(torch.nn.Module):
        def forward(self, x):
            return x

    buffer = io.BytesIO()
    torch.jit.save(torch.jit.script(M()), buffer)
    data, storages = zip_records(buffer.getvalue())
    with pytest.raises(RuntimeError, match="is a script class, and nothing was given to build its objects"):
        unpickle(data, storages)


def test_never_runs_code(tmp_path):
    marker = tmp_path / "ran"

    class Evil:
        def __reduce__(self):
            return (os.system, ("touch " + str(marker),))

    for protocol in (2, 4):
        data = pickle.dumps(Evil(), protocol=protocol)
        with pytest.raises(RuntimeError, match=r"global '(os|posix)\.system' is not allowed"):
            unpickle(data)
    assert not marker.exists()
    with pytest.raises(RuntimeError, match="global 'builtins.eval' is not allowed"):
        unpickle(b"\x80\x02cbuiltins\neval\nX\x01\x00\x00\x001\x85R.")


def test_bad_input_raises():
    data, storages = torch_save(state_dicts()["linear"])
    for n in range(len(data)):
        with pytest.raises(RuntimeError, match="unpickler: "):
            unpickle(data[:n], storages)
    with pytest.raises(RuntimeError, match=r"unknown opcode 0xff .*at byte 2"):
        unpickle(b"\x80\x02\xff.")
    with pytest.raises(RuntimeError, match="no storage '0' was given"):
        unpickle(data, {})
    with pytest.raises(RuntimeError, match="fewer than"):
        unpickle(data, {k: v[:4] for k, v in storages.items()})
    with pytest.raises(RuntimeError, match="nested deeper than 1000"):
        unpickle(b"\x80\x02" + b"]" * 5000 + b"a" * 4999 + b".")
