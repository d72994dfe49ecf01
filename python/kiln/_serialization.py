"""Reading and writing torch's files: state dicts (torch.save / torch.load)
and TorchScript archives (torch.jit.save / torch.jit.load).

Paths are str or os.PathLike; file objects are read or written whole
(`read()` / `write()`). docs/serialization.md has the format and the
security model: loading runs no code from the file."""
import os
from collections import OrderedDict

from . import _C
from ._jit import ScriptFunction
from .nn._script import ScriptModule, wrap_script_object


def _read_source(f):
    """(path, None) for a path, (None, bytes) for a file object."""
    if isinstance(f, (str, os.PathLike)):
        return os.fspath(f), None
    if hasattr(f, "read"):
        data = f.read()
        if not isinstance(data, (bytes, bytearray, memoryview)):
            raise TypeError("kiln: the file object must be opened in binary mode")
        return None, bytes(data)
    raise TypeError(f"kiln: expected a path or a binary file object, got {type(f).__name__}")


def _write(f, write, caller):
    """write(path) writes the file at a path and returns None; write(None)
    returns its bytes, which go to a file object."""
    if isinstance(f, (str, os.PathLike)):
        write(os.fspath(f))
    elif hasattr(f, "write"):
        f.write(write(None))
    else:
        raise TypeError(f"{caller}: expected a path or a binary file object, got {type(f).__name__}")


def _name_of(f):
    return str(getattr(f, "name", "<file object>"))


def load_pickle(f, map_location=None):
    """The value torch.save wrote to `f` (the zip format): a state dict comes
    back as an OrderedDict of kiln tensors, so kiln.nn.Module.load_state_dict
    takes weights trained in PyTorch. Tensors are on the CPU; `map_location`
    may be None, "cpu" or a torch-style device naming the CPU. Only values
    are built (tensors, numbers, strings, lists, tuples, dicts): a file that
    asks for any other Python object raises kiln.Error."""
    _check_map_location(map_location)
    path, data = _read_source(f)
    value = _C._load_pickle(path, data, path if path is not None else _name_of(f))
    if isinstance(value, dict) and not isinstance(value, OrderedDict):
        value = OrderedDict(value)
    return value


def save_pickle(obj, f):
    """Writes `obj` (tensors, numbers, strings, None, and lists, tuples and
    dicts of them; a kiln.nn.Module's state_dict()) as torch.save does, for
    torch.load."""
    _write(f, lambda path: _C._save_pickle(obj, path), "kiln.save_pickle")


def _check_map_location(map_location):
    if map_location is None:
        return
    if str(map_location) != "cpu":
        raise ValueError(f"kiln loads tensors to the CPU only; map_location={map_location!r} is not supported")


def load(f, map_location=None, _extra_files=None):
    """The module torch.jit.save (or kiln.save) wrote to `f`, as a kiln
    ScriptModule whose methods run on kiln's executor: parameters, buffers,
    attributes and submodules as saved, tensors on the CPU. `_extra_files`
    (a dict) gets, for each name in it, the bytes of the file saved under
    that name (b"" when there is none), as torch.jit.load does."""
    _check_map_location(map_location)
    path, data = _read_source(f)
    names = list(_extra_files.keys()) if _extra_files is not None else []
    obj, files = _C._load(path, data, path if path is not None else _name_of(f), names)
    if _extra_files is not None:
        _extra_files.update(files)
    return wrap_script_object(obj)


def save(m, f, _extra_files=None):
    """Writes the scripted or traced module `m` (or a ScriptFunction, saved
    as torch saves one: the forward of a PlaceholderModule) to `f` as the
    archive torch.jit.save writes: torch.jit.load reads it and runs it with
    the same results, and so does kiln.load. `_extra_files` maps names to
    str or bytes stored beside the model."""
    if isinstance(m, ScriptModule):
        what = m._c
    elif isinstance(m, ScriptFunction):
        what = m
    else:
        raise TypeError(f"kiln.save expects a ScriptModule or ScriptFunction (script or trace it first), "
                        f"got {type(m).__name__}")
    extra = dict(_extra_files or {})
    _write(f, lambda path: _C._save(what, path, extra), "kiln.save")
