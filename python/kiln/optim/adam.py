"""kiln.optim.Adam: torch 1.13's Adam (amsgrad, weight decay, maximize)."""
import math

import kiln
from .optimizer import Optimizer, _run_step


def _check_adam_args(lr, eps, betas, weight_decay):
    if not 0.0 <= lr:
        raise ValueError("Invalid learning rate: {}".format(lr))
    if not 0.0 <= eps:
        raise ValueError("Invalid epsilon value: {}".format(eps))
    if not 0.0 <= betas[0] < 1.0:
        raise ValueError("Invalid beta parameter at index 0: {}".format(betas[0]))
    if not 0.0 <= betas[1] < 1.0:
        raise ValueError("Invalid beta parameter at index 1: {}".format(betas[1]))
    if not 0.0 <= weight_decay:
        raise ValueError("Invalid weight_decay value: {}".format(weight_decay))


def _adam_state(state, p, amsgrad):
    """The per-parameter state, made on first use as torch makes it ('step' a float32 0-dim tensor)."""
    if len(state) == 0:
        state["step"] = kiln.tensor(0.0)
        state["exp_avg"] = kiln.zeros_like(p)
        state["exp_avg_sq"] = kiln.zeros_like(p)
        if amsgrad:
            state["max_exp_avg_sq"] = kiln.zeros_like(p)
    return state


def _adam_update(p, grad, state, lr, beta1, beta2, eps, amsgrad):
    """The moment updates and the parameter step, in torch 1.13's _single_tensor_adam's order."""
    step_t = state["step"]
    step_t.add_(1)
    exp_avg = state["exp_avg"]
    exp_avg_sq = state["exp_avg_sq"]
    exp_avg.mul_(beta1).add_(grad, alpha=1 - beta1)
    exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
    step = step_t.item()
    bias_correction1 = 1 - beta1 ** step
    bias_correction2 = 1 - beta2 ** step
    step_size = lr / bias_correction1
    bias_correction2_sqrt = math.sqrt(bias_correction2)
    if amsgrad:
        max_exp_avg_sq = state["max_exp_avg_sq"]
        kiln.maximum(max_exp_avg_sq, exp_avg_sq, out=max_exp_avg_sq)
        denom = (max_exp_avg_sq.sqrt() / bias_correction2_sqrt).add_(eps)
    else:
        denom = (exp_avg_sq.sqrt() / bias_correction2_sqrt).add_(eps)
    p.addcdiv_(exp_avg, denom, value=-step_size)


class _AdamFamily(Optimizer):
    """Adam's step, shared by Adam and AdamW, which differ only in how weight
    decay applies: added to the gradient (Adam's L2 penalty) or, decoupled,
    shrinking the weights before the update (AdamW)."""

    _decoupled_weight_decay = False

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
                if self._decoupled_weight_decay:
                    p.mul_(1 - lr * weight_decay)
                elif weight_decay != 0:
                    grad = grad.add(p, alpha=weight_decay)
                _adam_update(p, grad, state, lr, beta1, beta2, eps, amsgrad)


class Adam(_AdamFamily):
    """As torch.optim.Adam (weight decay added to the gradient; AdamW decays the weights)."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, amsgrad=False, *,
                 foreach=None, maximize=False, capturable=False, differentiable=False, fused=False):
        _check_adam_args(lr, eps, betas, weight_decay)
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, amsgrad=amsgrad, maximize=maximize,
                        foreach=foreach, capturable=capturable, differentiable=differentiable, fused=fused)
        if fused:
            raise RuntimeError("FusedAdam requires all the params to be CUDA, floating point")
        super().__init__(params, defaults)

    def __setstate__(self, state):
        super().__setstate__(state)
        for group in self.param_groups:
            for key, default in (("amsgrad", False), ("maximize", False), ("foreach", None), ("capturable", False),
                                 ("differentiable", False), ("fused", False)):
                group.setdefault(key, default)
