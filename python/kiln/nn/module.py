"""kiln.nn.Module: the base class of models, as torch.nn.Module.

A Module runs eagerly (its forward is plain Python over kiln tensors) and can
be compiled with kiln.script (see _script.py). Parameters, buffers and
submodules live in three ordered dicts (`_parameters`, `_buffers`,
`_modules`) filled by attribute assignment and the register_* methods; every
traversal (parameters(), state_dict(), ...) walks them in torch's order, so
names and key orders match torch's."""
import copy
import itertools
import weakref
from collections import OrderedDict, namedtuple

from .. import _C
from .. import _dtype
from .._grad_mode import is_grad_enabled, no_grad
from ..autograd import Function, _zero_grads
from .parameter import Parameter


def _type_name(value):
    """torch.typename's form: builtins bare, other classes with their module."""
    cls = type(value)
    if cls is _C.Tensor:
        return "kiln.Tensor"
    return cls.__name__ if cls.__module__ == "builtins" else cls.__module__ + "." + cls.__qualname__


def _add_indent(text, spaces):
    lines = text.split("\n")
    if len(lines) == 1:
        return text
    return lines[0] + "\n" + "\n".join(" " * spaces + line for line in lines[1:])


class _IncompatibleKeys(namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])):
    def __repr__(self):
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return super().__repr__()

    __str__ = __repr__


# Set by kiln._trace while a module is traced (torch's _slow_forward): a
# call of a submodule becomes a call of a method traced into its type.
_trace_call = None


class RemovableHandle:
    """What register_forward_hook and register_forward_pre_hook return
    (torch.utils.hooks.RemovableHandle): `remove()` unregisters the hook; as
    a context manager it removes it on exit."""

    _next_id = itertools.count()

    def __init__(self, hooks):
        self.hooks_dict_ref = weakref.ref(hooks)
        self.id = next(RemovableHandle._next_id)

    def remove(self):
        hooks = self.hooks_dict_ref()
        if hooks is not None:
            hooks.pop(self.id, None)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


class BackwardHookFunction(Function):
    """The identity, recorded on a module's inputs and outputs while it has
    full backward hooks: its backward sees grad_output (outputs) and
    grad_input (inputs), as torch's BackwardHookFunction."""

    @staticmethod
    def forward(ctx, hooks, is_output, *tensors):
        ctx.hooks = hooks
        ctx.is_output = is_output
        # As torch's: grad_output keeps None for outputs that got no gradient; grad_input has zeros.
        ctx.set_materialize_grads(not is_output)
        ctx.mark_non_differentiable(*[t for t in tensors if not t.requires_grad])
        return tensors

    @staticmethod
    def backward(ctx, *grads):
        if ctx.is_output:
            ctx.hooks.grad_outputs = grads
            if not ctx.hooks.wraps_inputs:  # no input requires grad: grad_input is all None
                ctx.hooks.run((None,) * ctx.hooks.num_args)
        else:
            grads = ctx.hooks.run_for_inputs(grads)
        return (None, None) + tuple(grads)


class _BackwardHooks:
    """One call's full backward hooks (torch's torch.utils.hooks.BackwardHook):
    grad_input has one entry per positional argument (None for those that
    are not tensors, zeros for tensors that got no gradient)."""

    def __init__(self, module, hooks):
        self.module = module
        self.hooks = hooks
        self.grad_outputs = None
        self.wraps_inputs = False
        self.num_args = 0
        self.positions = []

    def setup_inputs(self, args):
        self.num_args = len(args)
        self.positions = [i for i, a in enumerate(args) if isinstance(a, _C.Tensor)]
        if not any(args[i].requires_grad for i in self.positions):
            return args
        self.wraps_inputs = True
        wrapped = BackwardHookFunction.apply(self, False, *[args[i] for i in self.positions])
        args = list(args)
        for i, t in zip(self.positions, wrapped):
            args[i] = t
        return tuple(args)

    def setup_outputs(self, output):
        single = isinstance(output, _C.Tensor)
        outs = (output,) if single else output
        if not isinstance(outs, tuple) or not all(isinstance(o, _C.Tensor) for o in outs) or \
                not any(o.requires_grad for o in outs):
            return output
        wrapped = BackwardHookFunction.apply(self, True, *outs)
        return wrapped[0] if single else wrapped

    def run_for_inputs(self, grads):
        grad_input = [None] * self.num_args
        for i, g in zip(self.positions, grads):
            grad_input[i] = g
        grad_input = self.run(tuple(grad_input))
        return [grad_input[i] for i in self.positions]

    def run(self, grad_input):
        for hook in self.hooks:
            result = hook(self.module, grad_input, self.grad_outputs)
            if result is None:
                continue
            result = tuple(result) if isinstance(result, (tuple, list)) else (result,)
            if len(result) != len(grad_input):
                raise RuntimeError(f"Backward hook returned an invalid number of grad_input, got {len(result)}, "
                                   f"but expected {len(grad_input)}")
            grad_input = result
        return grad_input


class Module:
    """Base class of all kiln modules; subclass it and define `forward`.

        class Net(kiln.nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = kiln.nn.Linear(4, 2)
            def forward(self, x):
                return kiln.relu(self.fc(x))

    Assigning a Parameter, a Module or (for a registered buffer name) a tensor
    to an attribute registers it. Call super().__init__() before assigning."""

    training: bool

    def __init__(self):
        # object.__setattr__: our __setattr__ looks these dicts up.
        object.__setattr__(self, "training", True)
        object.__setattr__(self, "_parameters", OrderedDict())
        object.__setattr__(self, "_buffers", OrderedDict())
        object.__setattr__(self, "_non_persistent_buffers_set", set())
        object.__setattr__(self, "_modules", OrderedDict())
        object.__setattr__(self, "_forward_pre_hooks", OrderedDict())
        object.__setattr__(self, "_forward_hooks", OrderedDict())
        object.__setattr__(self, "_backward_hooks", OrderedDict())

    def forward(self, *args, **kwargs):
        raise NotImplementedError(f'Module [{type(self).__name__}] is missing the required "forward" function')

    def __call__(self, *args, **kwargs):
        d = self.__dict__
        if d.get("_forward_pre_hooks") or d.get("_forward_hooks") or d.get("_backward_hooks"):
            return self._call_with_hooks(args, kwargs)
        if _trace_call is not None:  # kiln.trace of a module is running: it records submodule calls
            return _trace_call(self, args, kwargs)
        return self.forward(*args, **kwargs)

    def _call_with_hooks(self, args, kwargs):
        # torch 1.13's order: pre-hooks see the positional arguments as a tuple and may replace them (a
        # non-tuple result is one argument); hooks see those arguments and the output and may replace it.
        # Under kiln.trace the hooks' ops are traced into the caller, around the call of forward.
        # Full backward hooks wrap the inputs after the pre-hooks and the output after the hooks.
        d = self.__dict__
        for hook in list(d.get("_forward_pre_hooks", {}).values()):
            result = hook(self, args)
            if result is not None:
                args = result if isinstance(result, tuple) else (result,)
        backward_hooks = None
        if d.get("_backward_hooks") and is_grad_enabled():
            backward_hooks = _BackwardHooks(self, list(d["_backward_hooks"].values()))
            args = backward_hooks.setup_inputs(args)
        output = _trace_call(self, args, kwargs) if _trace_call is not None else self.forward(*args, **kwargs)
        for hook in list(d.get("_forward_hooks", {}).values()):
            result = hook(self, args, output)
            if result is not None:
                output = result
        if backward_hooks is not None:
            output = backward_hooks.setup_outputs(output)
        return output

    def register_forward_pre_hook(self, hook):
        """Calls `hook(module, args)` before each forward; a result other than
        None replaces the positional arguments. Returns a RemovableHandle."""
        return self._add_hook("_forward_pre_hooks", hook)

    def register_forward_hook(self, hook):
        """Calls `hook(module, args, output)` after each forward; a result
        other than None replaces the output. Returns a RemovableHandle."""
        return self._add_hook("_forward_hooks", hook)

    def register_full_backward_hook(self, hook):
        """Calls `hook(module, grad_input, grad_output)` when the gradients of
        the module's inputs are computed (grad_input: one per positional
        argument, None where none flows); a result other than None replaces
        grad_input. Returns a RemovableHandle."""
        return self._add_hook("_backward_hooks", hook)

    def _add_hook(self, store, hook):
        hooks = self.__dict__.get(store)
        if hooks is None:  # a module made before hooks existed (unpickled) or without Module.__init__
            hooks = OrderedDict()
            object.__setattr__(self, store, hooks)
        handle = RemovableHandle(hooks)
        hooks[handle.id] = hook
        return handle

    # --- registration -----------------------------------------------------------------------

    def _check_new_name(self, what, name, store):
        if not isinstance(name, str):
            raise TypeError(f"{what} name should be a string. Got {type(name).__name__}")
        if "." in name:
            raise KeyError(f"{what} name can't contain \".\"")
        if name == "":
            raise KeyError(f"{what} name can't be empty string \"\"")
        if hasattr(self, name) and name not in store:
            raise KeyError(f"attribute '{name}' already exists")

    def register_buffer(self, name, tensor, persistent=True):
        """Adds a tensor (or None) that is module state but not a parameter;
        persistent buffers are part of state_dict()."""
        if "_buffers" not in self.__dict__:
            raise AttributeError("cannot assign buffer before Module.__init__() call")
        self._check_new_name("buffer", name, self._buffers)
        if tensor is not None and not isinstance(tensor, _C.Tensor):
            raise TypeError(f"cannot assign '{_type_name(tensor)}' object to buffer '{name}' "
                            "(kiln Tensor or None required)")
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent_buffers_set.discard(name)
        else:
            self._non_persistent_buffers_set.add(name)

    def register_parameter(self, name, param):
        """Adds a Parameter (or None) under `name`."""
        if "_parameters" not in self.__dict__:
            raise AttributeError("cannot assign parameter before Module.__init__() call")
        self._check_new_name("parameter", name, self._parameters)
        if param is not None and not isinstance(param, Parameter):
            raise TypeError(f"cannot assign '{_type_name(param)}' object to parameter '{name}' "
                            "(kiln.nn.Parameter or None required)")
        self._parameters[name] = param

    def add_module(self, name, module):
        """Adds a submodule (or None) under `name`."""
        if module is not None and not isinstance(module, Module):
            raise TypeError(f"{_type_name(module)} is not a Module subclass")
        if not isinstance(name, str):
            raise TypeError(f"module name should be a string. Got {type(name).__name__}")
        if hasattr(self, name) and name not in self._modules:
            raise KeyError(f"attribute '{name}' already exists")
        if "." in name:
            raise KeyError(f"module name can't contain \".\", got: {name}")
        if name == "":
            raise KeyError("module name can't be empty string \"\"")
        self._modules[name] = module

    register_module = add_module

    def get_submodule(self, target):
        """The submodule at dotted path `target` ("" is self)."""
        module = self
        if target == "":
            return module
        for item in target.split("."):
            if not hasattr(module, item):
                raise AttributeError(f"{module._get_name()} has no attribute `{item}`")
            module = getattr(module, item)
            if not isinstance(module, Module):
                raise AttributeError(f"`{item}` is not an nn.Module")
        return module

    # --- attribute protocol -----------------------------------------------------------------

    def __getattr__(self, name):
        # Reached only when normal lookup fails: registered names live in the dicts.
        d = self.__dict__
        for store in ("_parameters", "_buffers", "_modules"):
            if store in d and name in d[store]:
                return d[store][name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __setattr__(self, name, value):
        def remove_from(*stores):
            for store in stores:
                if name in store:
                    if isinstance(store, dict):
                        del store[name]
                    else:
                        store.discard(name)

        params = self.__dict__.get("_parameters")
        if isinstance(value, Parameter):
            if params is None:
                raise AttributeError("cannot assign parameters before Module.__init__() call")
            remove_from(self.__dict__, self._buffers, self._modules, self._non_persistent_buffers_set)
            self.register_parameter(name, value)
        elif params is not None and name in params:
            if value is not None:
                raise TypeError(f"cannot assign '{_type_name(value)}' as parameter '{name}' "
                                "(kiln.nn.Parameter or None expected)")
            self.register_parameter(name, value)
        else:
            modules = self.__dict__.get("_modules")
            if isinstance(value, Module):
                if modules is None:
                    raise AttributeError("cannot assign module before Module.__init__() call")
                remove_from(self.__dict__, self._parameters, self._buffers, self._non_persistent_buffers_set)
                modules[name] = value
            elif modules is not None and name in modules:
                if value is not None:
                    raise TypeError(f"cannot assign '{_type_name(value)}' as child module '{name}' "
                                    "(kiln.nn.Module or None expected)")
                modules[name] = value
            else:
                buffers = self.__dict__.get("_buffers")
                if buffers is not None and name in buffers:
                    if value is not None and not isinstance(value, _C.Tensor):
                        raise TypeError(f"cannot assign '{_type_name(value)}' as buffer '{name}' "
                                        "(kiln.Tensor or None expected)")
                    buffers[name] = value
                else:
                    object.__setattr__(self, name, value)

    def __delattr__(self, name):
        for store in ("_parameters", "_buffers", "_modules"):
            if name in self.__dict__.get(store, ()):
                del self.__dict__[store][name]
                self._non_persistent_buffers_set.discard(name)
                return
        object.__delattr__(self, name)

    def __dir__(self):
        keys = list(object.__dir__(self)) + list(self._parameters) + list(self._modules) + list(self._buffers)
        return sorted(k for k in set(keys) if not k[:1].isdigit())

    # --- traversal ----------------------------------------------------------------------------

    def _named_members(self, members, prefix="", recurse=True):
        seen = set()
        modules = self.named_modules(prefix=prefix) if recurse else [(prefix, self)]
        for module_prefix, module in modules:
            for name, value in members(module):
                if value is None or id(value) in seen:
                    continue
                seen.add(id(value))
                yield module_prefix + ("." if module_prefix else "") + name, value

    def named_parameters(self, prefix="", recurse=True):
        """(name, parameter) pairs, each parameter once: this module's, then its submodules' ("sub.weight")."""
        return self._named_members(lambda m: m._parameters.items(), prefix, recurse)

    def parameters(self, recurse=True):
        for _, param in self.named_parameters(recurse=recurse):
            yield param

    def named_buffers(self, prefix="", recurse=True):
        return self._named_members(lambda m: m._buffers.items(), prefix, recurse)

    def buffers(self, recurse=True):
        for _, buf in self.named_buffers(recurse=recurse):
            yield buf

    def named_children(self):
        seen = set()
        for name, module in self._modules.items():
            if module is not None and id(module) not in seen:
                seen.add(id(module))
                yield name, module

    def children(self):
        for _, module in self.named_children():
            yield module

    def named_modules(self, memo=None, prefix="", remove_duplicate=True):
        """(name, module) pairs of this module ("") and all below it, depth first."""
        if memo is None:
            memo = set()
        if id(self) in memo:
            return
        if remove_duplicate:
            memo.add(id(self))
        yield prefix, self
        for name, module in self._modules.items():
            if module is None:
                continue
            yield from module.named_modules(memo, prefix + ("." if prefix else "") + name, remove_duplicate)

    def modules(self):
        for _, module in self.named_modules():
            yield module

    def apply(self, fn):
        """Calls fn on every submodule (children first) and then self; returns self."""
        for module in self.children():
            module.apply(fn)
        fn(self)
        return self

    # --- modes --------------------------------------------------------------------------------

    def train(self, mode=True):
        """Sets `training` on this module and all below it; returns self."""
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        self.training = mode
        for module in self.children():
            module.train(mode)
        return self

    def eval(self):
        return self.train(False)

    # --- conversions --------------------------------------------------------------------------

    def _apply(self, fn):
        """Replaces every parameter and buffer t (submodules' first) with fn(t)."""
        for module in self.children():
            module._apply(fn)
        for name, param in self._parameters.items():
            if param is not None:
                self._parameters[name] = Parameter(fn(param), getattr(param, "requires_grad", True))
        for name, buf in self._buffers.items():
            if buf is not None:
                self._buffers[name] = fn(buf)
        return self

    def _cast_floating(self, dtype):
        return self._apply(lambda t: t.to(dtype) if t.is_floating_point() else t)

    def float(self):
        return self._cast_floating(_dtype.float32)

    def double(self):
        return self._cast_floating(_dtype.float64)

    def to(self, *args, **kwargs):
        """module.to(dtype) (floating point tensors only, as torch) and
        module.to("cpu") (kiln runs on the CPU: nothing to do)."""
        dtype_class = _dtype.dtype
        target = kwargs.get("dtype")
        for arg in args:
            if isinstance(arg, dtype_class):
                target = arg
            elif arg not in ("cpu", None):
                raise TypeError(f"to() received an invalid combination of arguments: {arg!r} (kiln runs on the CPU)")
        return self if target is None else self._cast_floating(target)

    def cpu(self):
        return self

    def requires_grad_(self, requires_grad=True):
        for p in self.parameters():
            p.requires_grad = requires_grad
        return self

    def zero_grad(self, set_to_none=False):
        """Zeroes the .grad of every parameter in place (or sets it to None), as torch 1.13."""
        _zero_grads(self.parameters(), set_to_none)

    # --- state --------------------------------------------------------------------------------

    def _save_to_state_dict(self, destination, prefix, keep_vars):
        for name, param in self._parameters.items():
            if param is not None:
                destination[prefix + name] = param if keep_vars else param.detach()
        for name, buf in self._buffers.items():
            if buf is not None and name not in self._non_persistent_buffers_set:
                destination[prefix + name] = buf if keep_vars else buf.detach()

    def state_dict(self, *args, destination=None, prefix="", keep_vars=False):
        """An OrderedDict of parameters and persistent buffers by dotted name,
        in torch's order (a module's own entries, then each submodule's). The
        values alias the module's tensors (they are detached views, as in torch)."""
        if args:  # torch's deprecated positional form state_dict(destination, prefix, keep_vars)
            destination = args[0]
            if len(args) > 1:
                prefix = args[1]
            if len(args) > 2:
                keep_vars = args[2]
        if destination is None:
            destination = OrderedDict()
        self._save_to_state_dict(destination, prefix, keep_vars)
        for name, module in self._modules.items():
            if module is not None:
                module.state_dict(destination=destination, prefix=prefix + name + ".", keep_vars=keep_vars)
        return destination

    def _load_from_state_dict(self, state_dict, prefix, missing_keys, unexpected_keys, error_msgs):
        persistent = {k: v for k, v in self._buffers.items() if k not in self._non_persistent_buffers_set}
        local_state = {k: v for k, v in list(self._parameters.items()) + list(persistent.items()) if v is not None}
        for name, param in local_state.items():
            key = prefix + name
            if key not in state_dict:
                missing_keys.append(key)
                continue
            value = state_dict[key]
            if not isinstance(value, _C.Tensor):
                error_msgs.append(f'While copying the parameter named "{key}", expected kiln.Tensor or '
                                  f"Tensor-like object from checkpoint but received {type(value)}")
                continue
            if len(param.shape) == 0 and len(value.shape) == 1:
                value = value[0]  # torch's backward compatibility rule for 0-dim parameters
            if tuple(value.shape) != tuple(param.shape):
                error_msgs.append(f"size mismatch for {key}: copying a param with shape {_size(value)} from "
                                  f"checkpoint, the shape in current model is {_size(param)}.")
                continue
            try:
                self._assign_state(name, param, value)
            except Exception as e:  # noqa: BLE001  (reported like torch, with the others)
                error_msgs.append(f'While copying the parameter named "{key}", whose dimensions in the model '
                                  f"are {_size(param)} and whose dimensions in the checkpoint are {_size(value)}, "
                                  f"an exception occurred : {e.args}.")
        for key in state_dict:
            if key.startswith(prefix):
                local_name = key[len(prefix):].split(".", 1)[0]
                if local_name not in self._modules and local_name not in local_state:
                    unexpected_keys.append(key)

    def _assign_state(self, name, param, value):
        # In place, as torch does: everything sharing the tensor (a scripted
        # copy of this module, an optimizer) sees the loaded values; not
        # recorded by autograd (parameters are leaves that require grad).
        with no_grad():
            param.copy_(value)

    def load_state_dict(self, state_dict, strict=True):
        """Copies tensors from `state_dict` into this module's parameters and
        persistent buffers (in place). With strict, missing or unexpected keys
        raise RuntimeError listing them, as torch does; returns
        (missing_keys, unexpected_keys)."""
        if not hasattr(state_dict, "keys") or not hasattr(state_dict, "__getitem__"):
            raise TypeError(f"Expected state_dict to be dict-like, got {type(state_dict)}.")
        missing_keys, unexpected_keys, error_msgs = [], [], []
        state_dict = OrderedDict(state_dict)

        def load(module, local_state_dict, prefix=""):
            module._load_from_state_dict(local_state_dict, prefix, missing_keys, unexpected_keys, error_msgs)
            for name, child in module._modules.items():
                if child is not None:
                    child_prefix = prefix + name + "."
                    load(child, {k: v for k, v in local_state_dict.items() if k.startswith(child_prefix)},
                         child_prefix)

        load(self, state_dict)
        if strict:
            if unexpected_keys:
                error_msgs.insert(0, "Unexpected key(s) in state_dict: {}. ".format(
                    ", ".join(f'"{k}"' for k in unexpected_keys)))
            if missing_keys:
                error_msgs.insert(0, "Missing key(s) in state_dict: {}. ".format(
                    ", ".join(f'"{k}"' for k in missing_keys)))
        if error_msgs:
            raise RuntimeError("Error(s) in loading state_dict for {}:\n\t{}".format(
                type(self).__name__, "\n\t".join(error_msgs)))
        return _IncompatibleKeys(missing_keys, unexpected_keys)

    # --- copying ------------------------------------------------------------------------------

    def __deepcopy__(self, memo):
        """copy.deepcopy(module): a module with cloned parameters and buffers
        (tied ones stay tied). Tensors kept outside them are not copyable."""
        for module in self.modules():
            for store in (module._parameters, module._buffers):
                for tensor in store.values():
                    if tensor is not None and id(tensor) not in memo:
                        clone = tensor.clone()
                        if isinstance(tensor, Parameter):
                            clone = Parameter(clone, getattr(tensor, "requires_grad", True))
                        memo[id(tensor)] = clone
        new = type(self).__new__(type(self))
        memo[id(self)] = new
        for name, value in self.__dict__.items():
            object.__setattr__(new, name, copy.deepcopy(value, memo))
        return new

    # --- printing -----------------------------------------------------------------------------

    def _get_name(self):
        return type(self).__name__

    def extra_repr(self):
        """Extra text for repr(); subclasses override it (e.g. Linear's sizes)."""
        return ""

    def __repr__(self):
        extra = self.extra_repr()
        extra_lines = extra.split("\n") if extra else []
        child_lines = [f"({name}): " + _add_indent(repr(module), 2) for name, module in self._modules.items()]
        lines = extra_lines + child_lines
        text = self._get_name() + "("
        if lines:
            if len(extra_lines) == 1 and not child_lines:
                text += extra_lines[0]
            else:
                text += "\n  " + "\n  ".join(lines) + "\n"
        return text + ")"


def _size(tensor):
    # torch prints shapes as torch.Size([2, 3]); kiln has no Size type.
    return "[" + ", ".join(str(s) for s in tensor.shape) + "]"
