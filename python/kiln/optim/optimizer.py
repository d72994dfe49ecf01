"""kiln.optim.Optimizer: parameter groups, per-parameter state and their
state_dict, as torch.optim.Optimizer 1.13."""
from collections import abc as container_abcs
from collections import defaultdict
import copy
from itertools import chain
import warnings

from .. import _C
from .._grad_mode import enable_grad, no_grad
from ..autograd import _zero_grads


def _deepcopy(value):
    """copy.deepcopy that clones kiln tensors (they do not pickle)."""
    memo = {}

    def walk(v):
        if isinstance(v, _C.Tensor):
            if id(v) not in memo:
                memo[id(v)] = v.detach().clone()
            return memo[id(v)]
        if isinstance(v, dict):
            return type(v)((k, walk(x)) for k, x in v.items())
        if isinstance(v, (list, tuple)):
            return type(v)(walk(x) for x in v)
        return copy.deepcopy(v)

    return walk(value)


class _RequiredParameter:
    """The default of an argument every parameter group must give (SGD's lr)."""

    def __repr__(self):
        return "<required parameter>"


required = _RequiredParameter()


def _typename(value):
    if isinstance(value, _C.Tensor):
        return "kiln.Tensor"
    module = type(value).__module__
    name = type(value).__qualname__
    return name if module in (None, "builtins") else module + "." + name


class Optimizer:
    """Base class of the optimizers: holds `param_groups` (a list of dicts,
    each with 'params' and that group's options) and `state` (per parameter).
    Subclasses implement `step`."""

    def __init__(self, params, defaults):
        self.defaults = defaults
        if isinstance(params, _C.Tensor):
            raise TypeError("params argument given to the optimizer should be an iterable of Tensors or dicts, "
                            "but got " + _typename(params))
        self.state = defaultdict(dict)
        self.param_groups = []
        param_groups = list(params)
        if len(param_groups) == 0:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(param_groups[0], dict):
            param_groups = [{"params": param_groups}]
        for param_group in param_groups:
            self.add_param_group(param_group)

    def __getstate__(self):
        return {"defaults": self.defaults, "state": self.state, "param_groups": self.param_groups}

    def __setstate__(self, state):
        self.__dict__.update(state)
        self.defaults.setdefault("differentiable", False)

    def __repr__(self):
        text = self.__class__.__name__ + " ("
        for i, group in enumerate(self.param_groups):
            text += "\nParameter Group {0}\n".format(i)
            for key in sorted(group.keys()):
                if key != "params":
                    text += "    {0}: {1}\n".format(key, group[key])
        return text + ")"

    def state_dict(self):
        """{'state': {index: per-parameter state}, 'param_groups': [group options with 'params' as
        indices]}: parameters are numbered in order across the groups, as torch does."""
        param_mappings = {}
        start_index = 0

        def pack_group(group):
            nonlocal start_index
            packed = {k: v for k, v in group.items() if k != "params"}
            param_mappings.update({id(p): i for i, p in enumerate(group["params"], start_index)
                                   if id(p) not in param_mappings})
            packed["params"] = [param_mappings[id(p)] for p in group["params"]]
            start_index += len(packed["params"])
            return packed

        param_groups = [pack_group(g) for g in self.param_groups]
        packed_state = {(param_mappings[id(k)] if isinstance(k, _C.Tensor) else k): v for k, v in self.state.items()}
        return {"state": packed_state, "param_groups": param_groups}

    def load_state_dict(self, state_dict):
        """Restores the state and group options saved by `state_dict` (deep-copied; tensors cast
        to their parameter's floating dtype, except 'step')."""
        state_dict = _deepcopy(state_dict)
        groups = self.param_groups
        saved_groups = state_dict["param_groups"]
        if len(groups) != len(saved_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        if any(len(g["params"]) != len(s["params"]) for g, s in zip(groups, saved_groups)):
            raise ValueError("loaded state dict contains a parameter group that doesn't match the size of "
                             "optimizer's group")
        id_map = {old_id: p for old_id, p in zip(chain.from_iterable(g["params"] for g in saved_groups),
                                                 chain.from_iterable(g["params"] for g in groups))}

        def cast(param, value, key=None):
            if isinstance(value, _C.Tensor):
                if key != "step" and param.is_floating_point():
                    value = value.to(param.dtype)
                return value
            if isinstance(value, dict):
                return {k: cast(param, v, key=k) for k, v in value.items()}
            if isinstance(value, container_abcs.Iterable) and not isinstance(value, str):
                return type(value)(cast(param, v) for v in value)
            return value

        state = defaultdict(dict)
        for k, v in state_dict["state"].items():
            if k in id_map:
                param = id_map[k]
                state[param] = cast(param, v)
            else:
                state[k] = v

        def update_group(group, new_group):
            new_group["params"] = group["params"]
            return new_group

        param_groups = [update_group(g, ng) for g, ng in zip(groups, saved_groups)]
        self.__setstate__({"state": state, "param_groups": param_groups})

    def zero_grad(self, set_to_none=False):
        """Zeroes every parameter's .grad in place (or sets it to None)."""
        for group in self.param_groups:
            _zero_grads(group["params"], set_to_none)

    def step(self, closure):
        raise NotImplementedError

    def add_param_group(self, param_group):
        """Adds a group (a dict with 'params' and options; missing options take the defaults)."""
        assert isinstance(param_group, dict), "param group must be a dict"
        params = param_group["params"]
        if isinstance(params, _C.Tensor):
            param_group["params"] = [params]
        elif isinstance(params, set):
            raise TypeError("optimizer parameters need to be organized in ordered collections, but the ordering "
                            "of tensors in sets will change between runs. Please use a list instead.")
        else:
            param_group["params"] = list(params)
        for param in param_group["params"]:
            if not isinstance(param, _C.Tensor):
                raise TypeError("optimizer can only optimize Tensors, but one of the params is " + _typename(param))
            if not self.defaults.get("differentiable", None) and not (param.is_leaf or param.retains_grad):
                raise ValueError("can't optimize a non-leaf Tensor")
        for name, default in self.defaults.items():
            if default is required and name not in param_group:
                raise ValueError("parameter group didn't specify a value of required optimization parameter " + name)
            param_group.setdefault(name, default)
        params = param_group["params"]
        if len(params) != len(set(params)):
            warnings.warn("optimizer contains a parameter group with duplicate parameters; in future, this will "
                          "cause an error; see github.com/pytorch/pytorch/issues/40967 for more information",
                          stacklevel=3)
        param_set = set()
        for group in self.param_groups:
            param_set.update(set(group["params"]))
        if not param_set.isdisjoint(set(param_group["params"])):
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(param_group)


def _run_step(step):
    """Wraps a subclass's step: runs the update under no_grad, the closure (if any) with grad enabled."""
    def wrapper(self, closure=None):
        loss = None
        if closure is not None:
            with enable_grad():
                loss = closure()
        with no_grad():
            step(self)
        return loss

    wrapper.__name__ = step.__name__
    wrapper.__doc__ = step.__doc__
    return wrapper
