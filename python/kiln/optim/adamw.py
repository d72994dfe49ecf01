"""kiln.optim.AdamW: torch 1.13's AdamW (decoupled weight decay)."""
from .adam import _AdamFamily, _check_adam_args


class AdamW(_AdamFamily):
    """As torch.optim.AdamW: p *= 1 - lr * weight_decay, then Adam's update."""

    _decoupled_weight_decay = True

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2, amsgrad=False, *,
                 maximize=False, foreach=None, capturable=False):
        _check_adam_args(lr, eps, betas, weight_decay)
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, amsgrad=amsgrad, foreach=foreach,
                        maximize=maximize, capturable=capturable)
        super().__init__(params, defaults)

    def __setstate__(self, state):
        super().__setstate__(state)
        for group in self.param_groups:
            for key, default in (("amsgrad", False), ("maximize", False), ("foreach", None), ("capturable", False)):
                group.setdefault(key, default)
