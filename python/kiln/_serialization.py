"""Reading and writing torch's files: state dicts (torch.save / torch.load)
and TorchScript archives (torch.jit.save / torch.jit.load).

Paths are str or os.PathLike; file objects are read or written whole
(`read()` / `write()`). docs/serialization.md has the format and the
security model: loading runs no code from the file."""
import os
from collections import OrderedDict

from . import _C


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
    value = _C._load_pickle(path) if path is not None else _C._load_pickle_bytes(data, _name_of(f))
    if isinstance(value, dict) and not isinstance(value, OrderedDict):
        value = OrderedDict(value)
    return value


def save_pickle(obj, f):
    """Writes `obj` (tensors, numbers, strings, None, and lists, tuples and
    dicts of them; a kiln.nn.Module's state_dict()) as torch.save does, for
    torch.load."""
    if isinstance(f, (str, os.PathLike)):
        _C._save_pickle(obj, os.fspath(f))
    elif hasattr(f, "write"):
        f.write(_C._save_pickle(obj))
    else:
        raise TypeError(f"kiln.save_pickle: expected a path or a binary file object, got {type(f).__name__}")


def _check_map_location(map_location):
    if map_location is None:
        return
    text = str(map_location) if not isinstance(map_location, str) else map_location
    if text != "cpu":
        raise ValueError(f"kiln loads tensors to the CPU only; map_location={map_location!r} is not supported")
