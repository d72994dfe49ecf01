"""kiln.load_pickle / kiln.save_pickle against torch 1.13's torch.save and
torch.load: real files (paths and file objects), the zip layer with mapped
tensors, state dicts that kiln.nn modules load, and malformed files."""
import collections
import io
import os
import zipfile

import numpy as np
import pytest
import torch

from conftest import assert_same
import kiln
from test_pickle import state_dicts


def flat(value):
    if isinstance(value, dict):
        return [x for v in value.values() for x in flat(v)]
    if isinstance(value, (list, tuple)):
        return [x for v in value for x in flat(v)]
    return [value]


@pytest.mark.parametrize("name", ["conv", "linear", "views", "dtypes", "nested"])
@pytest.mark.parametrize("via", ["path", "file"])
def test_loads_what_torch_saves(tmp_path, name, via):
    sd = state_dicts()[name]
    path = tmp_path / "weights.pt"
    torch.save(sd, path)
    if via == "path":
        loaded = kiln.load_pickle(path)
    else:
        with open(path, "rb") as f:
            loaded = kiln.load_pickle(f)
    assert isinstance(loaded, collections.OrderedDict)
    assert list(loaded.keys()) == list(sd.keys())
    for k, t in zip(flat(loaded), flat(sd)):
        if isinstance(t, torch.Tensor):
            assert_same(k, t, rtol=0, atol=0)
            assert tuple(k.stride()) == t.stride()
        else:
            assert k == t
    # Views of one storage stay views of one storage.
    tensors_t = [t for t in flat(sd) if isinstance(t, torch.Tensor)]
    tensors_k = [k for k in flat(loaded) if isinstance(k, kiln.Tensor)]
    for i in range(len(tensors_t)):
        for j in range(len(tensors_t)):
            same_t = tensors_t[i].storage().data_ptr() == tensors_t[j].storage().data_ptr()
            assert same_t == (tensors_k[i]._storage_ptr() == tensors_k[j]._storage_ptr())


@pytest.mark.parametrize("name", ["conv", "linear", "views", "dtypes", "nested"])
@pytest.mark.parametrize("via", ["path", "file"])
def test_torch_loads_what_kiln_saves(tmp_path, name, via):
    sd = state_dicts()[name]
    path = tmp_path / "weights.pt"
    torch.save(sd, path)
    loaded = kiln.load_pickle(path)
    out = tmp_path / "kiln.pt"
    if via == "path":
        kiln.save_pickle(loaded, out)
    else:
        with open(out, "wb") as f:
            kiln.save_pickle(loaded, f)
    back = torch.load(out)
    # kiln's dicts do not remember whether they were OrderedDicts: the root
    # is written as one, as torch.save writes a state dict.
    assert isinstance(back, collections.OrderedDict)
    for b, t in zip(flat(back), flat(sd)):
        if isinstance(t, torch.Tensor):
            assert b.dtype == t.dtype and b.stride() == t.stride() and torch.equal(b, t)
        else:
            assert b == t
    # Tensor records are stored uncompressed at 64-byte aligned offsets.
    with open(out, "rb") as f:
        raw = f.read()
    with zipfile.ZipFile(out) as z:
        for info in z.infolist():
            # The top folder is the file's stem, or "archive" for file objects (as torch names them).
            assert info.filename.startswith("kiln/" if via == "path" else "archive/")
            if "/data/" in info.filename:
                assert info.compress_type == zipfile.ZIP_STORED
                name_len = int.from_bytes(raw[info.header_offset + 26:info.header_offset + 28], "little")
                extra_len = int.from_bytes(raw[info.header_offset + 28:info.header_offset + 30], "little")
                assert (info.header_offset + 30 + name_len + extra_len) % 64 == 0


def test_kiln_reads_its_own_files_and_bytes(tmp_path):
    a = kiln.from_numpy(np.arange(12, dtype=np.float32).reshape(3, 4))
    value = {"a": a, "row": a[1], "n": 3, "names": ["x", "y"], "t": (1.5, None)}
    buffer = io.BytesIO()
    kiln.save_pickle(value, buffer)
    back = kiln.load_pickle(io.BytesIO(buffer.getvalue()))
    np.testing.assert_array_equal(back["a"].numpy(), a.numpy())
    np.testing.assert_array_equal(back["row"].numpy(), a.numpy()[1])
    assert back["row"]._storage_ptr() == back["a"]._storage_ptr()
    assert back["n"] == 3 and back["names"] == ["x", "y"] and back["t"] == (1.5, None)


def test_tensors_from_files_are_writable_and_private(tmp_path):
    path = tmp_path / "w.pt"
    torch.save({"w": torch.ones(64)}, path)
    before = path.read_bytes()
    w = kiln.load_pickle(path)["w"]
    w.add_(1)
    assert w.numpy()[0] == 2
    assert path.read_bytes() == before
    assert torch.load(path)["w"][0] == 1


def test_kiln_modules_take_torch_weights(tmp_path):
    torch.manual_seed(0)
    t = torch.nn.Sequential(torch.nn.Linear(5, 7), torch.nn.ReLU(), torch.nn.Linear(7, 3))
    path = tmp_path / "mlp.pt"
    torch.save(t.state_dict(), path)
    k = kiln.nn.Sequential(kiln.nn.Linear(5, 7), kiln.nn.ReLU(), kiln.nn.Linear(7, 3))
    k.load_state_dict(kiln.load_pickle(path))
    x = np.random.default_rng(0).standard_normal((4, 5)).astype(np.float32)
    assert_same(k(kiln.from_numpy(x)), t(torch.from_numpy(x)))
    # ... and torch takes them back.
    kiln.save_pickle(k.state_dict(), tmp_path / "back.pt")
    t2 = torch.nn.Sequential(torch.nn.Linear(5, 7), torch.nn.ReLU(), torch.nn.Linear(7, 3))
    t2.load_state_dict(torch.load(tmp_path / "back.pt"))
    assert torch.equal(t2(torch.from_numpy(x)), t(torch.from_numpy(x)))


def test_map_location():
    buffer = io.BytesIO()
    torch.save({"w": torch.ones(2)}, buffer)
    for location in (None, "cpu", torch.device("cpu")):
        assert kiln.load_pickle(io.BytesIO(buffer.getvalue()), map_location=location)["w"].numpy()[0] == 1
    with pytest.raises(ValueError, match="CPU only"):
        kiln.load_pickle(io.BytesIO(buffer.getvalue()), map_location="cuda:0")


def good_file():
    buffer = io.BytesIO()
    torch.save(collections.OrderedDict(w=torch.arange(16.0), b=torch.zeros(3, dtype=torch.int64)), buffer)
    return buffer.getvalue()


class Evil:
    def __reduce__(self):
        return (os.system, ("echo pwned > /tmp/kiln_pwned",))


def malformed_files():
    good = good_file()
    files = {"empty": b"", "garbage": b"not a zip at all" * 10, "truncated": good[: len(good) // 2],
             "tail_cut": good[:-10]}
    legacy = io.BytesIO()
    torch.save({"w": torch.ones(2)}, legacy, _use_new_zipfile_serialization=False)
    files["legacy"] = legacy.getvalue()
    evil = io.BytesIO()
    torch.save({"w": Evil()}, evil)
    files["os_system"] = evil.getvalue()
    # A storage byte flipped: the CRC no longer matches.
    with zipfile.ZipFile(io.BytesIO(good)) as z:
        info = next(i for i in z.infolist() if i.filename.endswith("data/0"))
    bad = bytearray(good)
    bad[info.header_offset + 200] ^= 0xFF
    files["bad_crc"] = bytes(bad)
    # A record missing: rebuild the zip without data/1.
    missing = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(good)) as z, zipfile.ZipFile(missing, "w") as out:
        for i in z.infolist():
            if not i.filename.endswith("data/1"):
                out.writestr(i, z.read(i.filename))
    files["missing_record"] = missing.getvalue()
    # A record not inside a top folder.
    flat_zip = io.BytesIO()
    with zipfile.ZipFile(flat_zip, "w") as out:
        out.writestr("data.pkl", b"\x80\x02K\x01.")
    files["no_top_folder"] = flat_zip.getvalue()
    return files


@pytest.mark.parametrize("name", sorted(malformed_files()))
def test_malformed_files_raise(tmp_path, name):
    data = malformed_files()[name]
    path = tmp_path / f"{name}.pt"
    path.write_bytes(data)
    with pytest.raises(kiln.Error) as e:
        kiln.load_pickle(path)
    assert f"{name}.pt" in str(e.value)
    with pytest.raises(kiln.Error):
        kiln.load_pickle(io.BytesIO(data))
    assert not os.path.exists("/tmp/kiln_pwned")
    expected = {"bad_crc": "CRC", "missing_record": "data/1", "legacy": "legacy", "os_system": "os",
                "empty": "empty", "no_top_folder": "top folder"}
    if name in expected:
        assert expected[name] in str(e.value)


@pytest.mark.parametrize("threads", [1, 2])
def test_large_records_are_crc_checked_in_pieces(tmp_path, threads):
    """Records over 2 MiB are checked in 1 MiB pieces on kiln's threads and
    the pieces' CRCs combined: the result must be the record's CRC, and a
    byte flipped in any piece must be caught."""
    w = torch.arange(3 * 1024 * 1024 + 123, dtype=torch.float32)
    path = tmp_path / "big.pt"
    torch.save({"w": w}, path)
    old = kiln.get_num_threads()
    kiln.set_num_threads(threads)
    try:
        np.testing.assert_array_equal(kiln.load_pickle(path)["w"].numpy(), w.numpy())
        data = bytearray(path.read_bytes())
        with zipfile.ZipFile(path) as z:
            info = next(i for i in z.infolist() if i.filename.endswith("data/0"))
        start = info.header_offset + 30 + len(info.filename) + int.from_bytes(
            data[info.header_offset + 28:info.header_offset + 30], "little")
        for at in (0, 1024 * 1024 + 5, info.file_size - 1):
            bad = bytearray(data)
            bad[start + at] ^= 0x01
            (tmp_path / "bad.pt").write_bytes(bytes(bad))
            with pytest.raises(kiln.Error, match="CRC mismatch"):
                kiln.load_pickle(tmp_path / "bad.pt")
    finally:
        kiln.set_num_threads(old)
