"""kiln.optimize_for_inference: torch.jit.optimize_for_inference for kiln's
ScriptModules.

    fast = kiln.optimize_for_inference(kiln.load("resnet18.pt"))

As torch does, the module is put in eval mode and frozen (kiln.freeze);
then its convolutions run on oneDNN with bias, residual add and activation
fused as post-ops, weights reordered once into oneDNN's blocked layout, and
activations kept in that layout from convolution to convolution
(docs/inference.md). Convolutions then expect float32 (N, C, H, W) inputs."""
from . import _C
from .nn._script import ScriptModule, wrap_script_object


def optimize_for_inference(mod, other_methods=None):
    """Freezes `mod` (after `mod.eval()`, as torch does) keeping
    `other_methods`, and optimizes the frozen graphs for inference. Returns
    the new module; the original keeps its parameters and code."""
    if not isinstance(mod, ScriptModule):
        raise RuntimeError("optimize_for_inference expects a ScriptModule as input. "
                           "Please use kiln.script or kiln.trace to script your 'nn.Module'.")
    methods = [] if other_methods is None else list(other_methods)
    for name in methods:
        if not isinstance(name, str):
            raise TypeError(f"optimize_for_inference: other_methods must be a list of str, got {type(name).__name__}")
    mod.eval()
    return wrap_script_object(_C._optimize_for_inference(mod._c, methods))
