"""kiln.freeze: torch.jit.freeze for kiln's ScriptModules.

    frozen = kiln.freeze(kiln.script(model.eval()))
    frozen = kiln.freeze(kiln.load("model.pt").eval(), preserved_attrs=["version"])

The frozen module is a new ScriptModule: parameters, buffers and attributes
its methods only read became constants of forward's graph (so named_parameters()
is empty), calls are inlined, dropout is gone, and with optimize_numerics
batch norms following convolutions or linears are folded into their weights
(kiln/api/freeze.h, docs/freeze.md). The original module stays usable."""
from . import _C
from .nn._script import ScriptModule, wrap_script_object


def freeze(mod, preserved_attrs=None, optimize_numerics=True):
    """Freezes a ScriptModule in eval mode (torch.jit.freeze). `forward` and
    the methods and attributes named in `preserved_attrs` (`"version"`,
    `"sub.version"`) are kept, as are attributes a kept method writes.
    `optimize_numerics` allows the folds that change results by rounding
    (convolution/linear + batch norm, convolution + add/sub/mul/div)."""
    if not isinstance(mod, ScriptModule):
        raise RuntimeError("Freezing expects a ScriptModule as input. "
                           "Please use kiln.script or kiln.trace to script your 'nn.Module'.")
    if mod.training:
        raise RuntimeError("Freezing is currently only implemented for modules in eval mode. "
                           "Please call .eval() on your module before freezing.")
    preserved = [] if preserved_attrs is None else list(preserved_attrs)
    for name in preserved:
        if not isinstance(name, str):
            raise TypeError(f"freeze: preserved_attrs must be a list of str, got {type(name).__name__}")
    return wrap_script_object(_C._freeze_module(mod._c, preserved, bool(optimize_numerics)))


def run_frozen_optimizations(mod, optimize_numerics=True, preserved_methods=None):
    """The frozen-graph optimizations on a frozen module's forward and
    `preserved_methods`, in place (torch.jit.run_frozen_optimizations):
    for a module frozen with optimize_numerics=False, before it runs."""
    if mod._c.has_method("forward"):
        _C._optimize_frozen_graph(mod.forward.graph, bool(optimize_numerics))
    for name in preserved_methods or []:
        _C._optimize_frozen_graph(getattr(mod, name).graph, bool(optimize_numerics))
