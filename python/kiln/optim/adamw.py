"""kiln.optim.AdamW: torch 1.13's AdamW (decoupled weight decay)."""
from .adam import _adam_state, _adam_update, _check_adam_args
from .optimizer import Optimizer, _run_step


class AdamW(Optimizer):
    """As torch.optim.AdamW: p *= 1 - lr * weight_decay, then Adam's update."""

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

    @_run_step
    def step(self):
        """One update of every parameter that has a gradient."""
        for group in self.param_groups:
            beta1, beta2 = group["betas"]
            lr, eps, weight_decay = group["lr"], group["eps"], group["weight_decay"]
            amsgrad, maximize = group["amsgrad"], group["maximize"]
            for p in group["params"]:
                grad = p.grad
                if grad is None:
                    continue
                state = _adam_state(self.state[p], p, amsgrad)
                if maximize:
                    grad = -grad
                p.mul_(1 - lr * weight_decay)
                _adam_update(p, grad, state, lr, beta1, beta2, eps, amsgrad)
