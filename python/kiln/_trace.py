"""kiln.trace: record what a Python function does to tensors as a graph,
as torch.jit.trace does (docs/tracing.md)."""
import inspect
import re
import linecache
import os
import sys
import threading
import warnings

import numpy as np

from . import _C
from .nn import _script
from .nn import module as module_py

ScriptFunction = _C.ScriptFunction


class TracerWarning(Warning):
    """A trace may not generalize to other inputs (a tensor became a Python
    number, a list was returned, check_inputs gave different outputs), as
    torch.jit.TracerWarning."""


class TracingCheckError(Exception):
    """check_trace found that tracing again gives a different graph, as
    torch.jit.TracingCheckError."""

    def __init__(self, graph_diff_error, tensor_compare_error, extra_msg=None):
        self.message = "Tracing failed sanity checks!\n"
        if extra_msg is not None:
            self.message += extra_msg + "\n"
        if graph_diff_error is not None:
            self.message += "ERROR: Graphs differed across invocations!\n"
            self.message += _indent(graph_diff_error) + "\n"
        if tensor_compare_error is not None:
            self.message += (
                "ERROR: Tensor-valued Constant nodes differed in value across invocations. This often indicates "
                "that the tracer has encountered untraceable code.\n")
            self.message += _indent(tensor_compare_error) + "\n"
        super().__init__(self.message)


def _indent(text):
    return "\n".join("\t" + line for line in text.splitlines())


def _warn(message):
    # stacklevel: past the C++ frame, at the user's line that converted a
    # tensor (int(t), t.item(), `if t:`) or at their kiln.trace call.
    warnings.warn(message, TracerWarning, stacklevel=2)


_C._set_tracer_warning_handler(_warn)


_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep
_IN_PACKAGE = {}  # code file name -> whether it is one of kiln's


def _in_package(filename):
    inside = _IN_PACKAGE.get(filename)
    if inside is None:
        inside = _IN_PACKAGE[filename] = os.path.abspath(filename).startswith(_PACKAGE_DIR)
    return inside


def _user_frame():
    """The innermost frame outside the kiln package: the code that ran the operator."""
    frame = sys._getframe(2)
    while frame is not None and _in_package(frame.f_code.co_filename):
        frame = frame.f_back
    return frame


def _source_location():
    """(file, line, line text) of the code recording a node, or None."""
    try:
        frame = _user_frame()
        if frame is None:
            return None
        filename, line = frame.f_code.co_filename, frame.f_lineno
        return filename, line, linecache.getline(filename, line, frame.f_globals).rstrip("\n")
    except Exception:  # noqa: BLE001 - a location is a nicety; tracing goes on without it
        return None


def _variable_name(tensor):
    """The name of a local variable holding `tensor` in the code that ran the
    operator, or "" - how torch 1.13's tracer names values
    (_create_interpreter_name_lookup_fn)."""
    try:
        frame = _user_frame()
        if frame is None:
            return ""
        for name, value in frame.f_locals.items():
            if isinstance(value, _C.Tensor) and value._same_tensor(tensor):
                return name if name != "self" else ""
    except Exception:  # noqa: BLE001 - a name is a nicety; tracing goes on without it
        pass
    return ""


def is_tracing():
    """Whether this thread is tracing."""
    return _C._is_tracing()


def _as_tensors(value):
    """numpy arrays (also inside tuples and lists) as kiln tensors."""
    if isinstance(value, np.ndarray):
        return _C.from_numpy(value)
    if isinstance(value, tuple):
        return tuple(_as_tensors(v) for v in value)
    if isinstance(value, list):
        return [_as_tensors(v) for v in value]
    if isinstance(value, dict):
        return {k: _as_tensors(v) for k, v in value.items()}
    return value


def _parameter_names(fn, count):
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        return []
    names = []
    for p in params:
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
            names.append(p.name)
        elif p.kind == p.VAR_POSITIONAL:
            break
    return names[:count]


def _flat_tensors(value):
    """The tensors of an output, in order (tuples, lists and dict values)."""
    if isinstance(value, _C.Tensor):
        return [value]
    if isinstance(value, (tuple, list)):
        return [t for v in value for t in _flat_tensors(v)]
    if isinstance(value, dict):
        return [t for v in value.values() for t in _flat_tensors(v)]
    return []


def _clone(value):
    if isinstance(value, _C.Tensor):
        return _C.from_numpy(value.numpy().copy())
    if isinstance(value, tuple):
        return tuple(_clone(v) for v in value)
    if isinstance(value, list):
        return [_clone(v) for v in value]
    if isinstance(value, dict):
        return {k: _clone(v) for k, v in value.items()}
    return value


def _arguments(example_inputs):
    """As torch: a tensor (or array, or dict) is the one argument; another
    sequence holds the arguments."""
    if isinstance(example_inputs, (_C.Tensor, np.ndarray, dict)):
        example_inputs = (example_inputs,)
    elif not isinstance(example_inputs, tuple):
        example_inputs = tuple(example_inputs)
    return _as_tensors(example_inputs)


_MANGLE = re.compile(r"___torch_mangle_[0-9]+\.")


def _canonical_text(graph):
    # Calls inlined and type names unmangled: a module traced again has new types (as torch compares).
    return _MANGLE.sub("", _C._canonical_trace_text(graph))


def _check_trace(check_inputs, func, traced, retrace, rtol, atol):
    """torch 1.13's _check_trace: for each input tuple, trace again
    (`retrace(inputs)`; graphs must be equal up to shapes, else
    TracingCheckError) and run the trace, the Python function and the new
    trace (outputs must be close, else a TracerWarning)."""
    for inputs in check_inputs:
        inputs = _arguments(inputs)
        with warnings.catch_warnings():
            # The conversions warned about already in the first trace.
            warnings.simplefilter("ignore", TracerWarning)
            check = retrace(_clone(inputs))
        traced_text = _canonical_text(traced.graph)
        check_text = _canonical_text(check.graph)
        if traced_text != check_text:
            import difflib
            diff = "".join(difflib.ndiff(traced_text.splitlines(True), check_text.splitlines(True)))
            raise TracingCheckError("Graph diff:\n" + _indent(diff), None)

        def outputs(fn, what):
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", TracerWarning)
                    return _flat_tensors(fn(*_clone(inputs)))
            except Exception as e:
                raise TracingCheckError(None, None, f"encountered an exception while running the {what} with "
                                                    f"test inputs.\nException:\n{_indent(str(e))}") from e

        traced_outs = outputs(traced, "trace")
        for what, reference in (("Python function", outputs(func, "Python function")),
                                ("repeated trace", outputs(check, "repeated trace"))):
            if len(traced_outs) != len(reference):
                warnings.warn(f"the traced function and the {what} return different numbers of tensors",
                              TracerWarning, stacklevel=3)
                break
            for i, (a, b) in enumerate(zip(traced_outs, reference)):
                x, y = a.numpy(), b.numpy()
                if x.shape != y.shape or x.dtype != y.dtype or not np.allclose(x, y, rtol=rtol, atol=atol,
                                                                                 equal_nan=True):
                    warnings.warn(f"Output nr {i + 1}. of the traced function does not match the corresponding "
                                  f"output of the {what}. Detailed error:\nTensor-likes are not close!",
                                  TracerWarning, stacklevel=3)
                    break
            else:
                continue
            break


def trace(func, example_inputs, check_inputs=None, check_trace=True, strict=True, check_tolerance=1e-5):
    """Runs `func(*example_inputs)` and records the operators it runs on
    tensors as a graph; returns a ScriptFunction that runs the graph
    (`.graph` shows it), as torch.jit.trace does for a function.

    example_inputs: a tensor or a tuple of arguments (tensors, numpy arrays,
    and tuples and lists of them). Python control flow is not recorded: loops
    are unrolled and branches fixed as the example took them; Python numbers
    (also from int(t), float(t), t.item(), `if t:`, which warn with
    TracerWarning) are constants. Calls of scripted functions stay calls.

    check_trace: traces again on each of check_inputs (a list of argument
    tuples; default: the example inputs) and raises TracingCheckError when
    the graph differs, warns (TracerWarning) when outputs do.
    strict: as torch's (a dict output raises, a list output warns)."""
    if isinstance(func, (ScriptFunction, _script.ScriptModule)):
        warnings.warn("The input to trace is already a ScriptModule, tracing it is a no-op. Returning the object "
                      "as is.", stacklevel=2)
        return func
    if isinstance(func, module_py.Module):
        return trace_module(func, {"forward": example_inputs}, check_trace=check_trace,
                            check_inputs=None if check_inputs is None else [{"forward": c} for c in check_inputs],
                            strict=strict, check_tolerance=check_tolerance)
    if not callable(func):
        raise TypeError(f"kiln.trace expects a function, got {type(func).__name__}")
    example_inputs = _arguments(example_inputs)
    name = getattr(func, "__name__", "forward")
    if name == "<lambda>":
        name = "_lambda"

    def retrace(inputs):
        return _C._trace(name, func, inputs, _parameter_names(func, len(inputs)), strict, _variable_name,
                         _source_location)[0]

    traced, _ = _C._trace(name, func, example_inputs, _parameter_names(func, len(example_inputs)), strict,
                          _variable_name, _source_location)
    if check_trace:
        # Inside another trace (kiln.trace called by traced code), the checks
        # must not be recorded in it.
        _C._untraced(lambda: _check_trace(check_inputs if check_inputs is not None else [example_inputs], func,
                                          traced, retrace, check_tolerance, check_tolerance))
    return traced


def trace_module(mod, inputs, check_trace=True, check_inputs=None, strict=True, check_tolerance=1e-5):
    """Traces methods of a kiln.nn.Module, as torch.jit.trace_module:
    `inputs` maps method names to their example inputs ({"forward": x}).
    Returns a ScriptModule of the module's own types (not shared with other
    instances) whose methods are the traces: their first input is the module
    (`self`), parameters and buffers are read with prim::GetAttr, and each
    call of a submodule is prim::CallMethod of a method traced into the
    submodule's type (forward, forward1, ... when it is called more than
    once). Scripted submodules and functions stay calls. check_inputs: a
    list of such dicts; the checks are kiln.trace's."""
    if not isinstance(mod, module_py.Module):
        raise AttributeError("expected kiln.nn.Module as the first argument")
    if not isinstance(inputs, dict):
        raise AttributeError("expected a dictionary of (method_name, input) pairs")
    traced = _trace_methods(mod, inputs, strict)
    if check_trace:
        for method_name, example in inputs.items():
            method_checks = [_arguments(c[method_name]) for c in check_inputs] if check_inputs is not None \
                else [_arguments(example)]

            def retrace(args, method_name=method_name):
                check = _trace_methods(mod, {method_name: args}, strict)
                return getattr(check, method_name)

            eager = mod if method_name == "forward" else getattr(mod, method_name)  # forward hooks included
            _C._untraced(lambda: _check_trace(method_checks, eager,
                                              getattr(traced, method_name), retrace, check_tolerance,
                                              check_tolerance))
    return traced


# The submodules of the module traces running on each thread (innermost
# last): eager submodule id -> (submodule, its ScriptModule).
_module_traces = threading.local()
_module_traces_lock = threading.Lock()
_module_traces_running = 0


def _traced_call(module, args, kwargs):
    """kiln.nn.Module.__call__ while a module trace runs (torch's
    _slow_forward): a call of a traced submodule is traced into a method."""
    traces = getattr(_module_traces, "stack", None)
    if traces and _C._is_tracing():
        entry = traces[-1].get(id(module))
        if entry is not None and entry[0] is module:
            return _C._trace_method_call(entry[1]._c, "forward", module.forward, args, kwargs)
    return module.forward(*args, **kwargs)


def _push_module_trace(traced_modules):
    global _module_traces_running
    if not hasattr(_module_traces, "stack"):
        _module_traces.stack = []
    _module_traces.stack.append(traced_modules)
    with _module_traces_lock:
        _module_traces_running += 1
        module_py._trace_call = _traced_call


def _pop_module_trace():
    global _module_traces_running
    _module_traces.stack.pop()
    with _module_traces_lock:
        _module_traces_running -= 1
        if _module_traces_running == 0:
            module_py._trace_call = None


def _trace_methods(mod, inputs, strict):
    """A new ScriptModule for `mod` with the methods of `inputs` traced into it."""
    scripted = _script.script_module_for_trace(mod)
    # eager submodule -> its ScriptModule, to trace their calls into methods (torch's _trace_module_map).
    traced_modules = {}

    def collect(eager, script):
        for name, sub in eager._modules.items():
            if sub is None or isinstance(sub, _script.ScriptModule):
                continue
            traced_modules[id(sub)] = (sub, script._modules[name])
            collect(sub, script._modules[name])

    collect(mod, scripted)

    _push_module_trace(traced_modules)
    try:
        for method_name, example in inputs.items():
            example = _arguments(example)
            fn = getattr(mod, method_name)
            # torch traces `mod(...)` for forward, so the module's own forward hooks are traced too.
            call = mod if method_name == "forward" else fn
            _C._trace_method(scripted._c, method_name, call, example, _parameter_names(fn, len(example)), strict,
                             _variable_name, _source_location)
    finally:
        _pop_module_trace()
    # The traced methods are found before Module's (forward, ...), as _create binds compiled ones.
    for module in scripted.modules():
        if isinstance(module, _script.ScriptModule):
            for name in module._c.type.method_names():
                module.__dict__[name] = module._c.get_method(name)
    return scripted
