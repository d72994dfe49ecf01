"""Grad mode as torch's: kiln.no_grad(), kiln.enable_grad(),
kiln.set_grad_enabled(mode) (a function and a context manager) and
kiln.is_grad_enabled(), per thread. Scripts read the same flag
(aten::is_grad_enabled), so a torch 1.13 module that decides on it (the
Transformer encoder's inference fast path) decides as in torch. Eager
autograd records operations only while it is on."""
import functools

from ._C import _set_grad_enabled, is_grad_enabled


class _GradModeContext:
    """Sets grad mode to `self._mode` inside a `with` block or a decorated function."""

    _mode = None

    def __enter__(self):
        self._previous = is_grad_enabled()
        _set_grad_enabled(self._mode)
        return self

    def __exit__(self, *exc):
        _set_grad_enabled(self._previous)
        return False

    def __call__(self, fn):
        mode = self._mode

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            previous = is_grad_enabled()
            _set_grad_enabled(mode)
            try:
                return fn(*args, **kwargs)
            finally:
                _set_grad_enabled(previous)
        return wrapper


class no_grad(_GradModeContext):
    _mode = False


class enable_grad(_GradModeContext):
    _mode = True


class set_grad_enabled(_GradModeContext):
    """Sets grad mode at once (as a function), and restores the previous mode
    at the end of a `with` block (as a context manager), as torch's does."""

    def __init__(self, mode):
        self._previous = is_grad_enabled()
        self._mode = bool(mode)
        _set_grad_enabled(self._mode)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        _set_grad_enabled(self._previous)
        return False
