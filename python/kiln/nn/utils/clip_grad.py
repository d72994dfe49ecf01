"""kiln.nn.utils.clip_grad_norm_ and clip_grad_value_, as torch.nn.utils'
(1.13): gradients are scaled or clamped in place."""
import math
import warnings

import kiln
from ... import _C


def _as_list(parameters):
    return [parameters] if isinstance(parameters, _C.Tensor) else parameters


def clip_grad_norm_(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False):
    """Scales the gradients so that their total norm (all of them viewed as one vector) is at
    most max_norm; returns the total norm before clipping. norm_type may be inf."""
    grads = [p.grad for p in _as_list(parameters) if p.grad is not None]
    max_norm = float(max_norm)
    norm_type = float(norm_type)
    if len(grads) == 0:
        return kiln.tensor(0.0)
    with kiln.no_grad():
        if norm_type == math.inf:
            norms = [g.detach().abs().max() for g in grads]
            total_norm = norms[0] if len(norms) == 1 else kiln.max(kiln.stack(norms))
        else:
            total_norm = kiln.norm(kiln.stack([kiln.norm(g.detach(), norm_type) for g in grads]), norm_type)
        if error_if_nonfinite and bool(kiln.logical_or(total_norm.isnan(), total_norm.isinf())):
            raise RuntimeError(f"The total norm of order {norm_type} for gradients from `parameters` is non-finite, "
                               "so it cannot be clipped. To disable this error and scale the gradients by the "
                               "non-finite norm anyway, set `error_if_nonfinite=False`")
        clip_coef = max_norm / (total_norm + 1e-6)
        clip_coef_clamped = kiln.clamp(clip_coef, max=1.0)
        for g in grads:
            g.detach().mul_(clip_coef_clamped)
    return total_norm


def clip_grad_norm(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False):
    """Deprecated name of clip_grad_norm_."""
    warnings.warn("torch.nn.utils.clip_grad_norm is now deprecated in favor of torch.nn.utils.clip_grad_norm_.",
                  stacklevel=2)
    return clip_grad_norm_(parameters, max_norm, norm_type, error_if_nonfinite)


def clip_grad_value_(parameters, clip_value):
    """Clamps every gradient into [-clip_value, clip_value] in place."""
    clip_value = float(clip_value)
    with kiln.no_grad():
        for p in _as_list(parameters):
            if p.grad is not None:
                p.grad.clamp_(min=-clip_value, max=clip_value)
