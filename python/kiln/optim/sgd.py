"""kiln.optim.SGD: torch 1.13's stochastic gradient descent (momentum,
dampening, Nesterov, weight decay, maximize)."""
from .optimizer import Optimizer, required, _run_step


class SGD(Optimizer):
    """As torch.optim.SGD: per parameter, with g its gradient (negated when maximize),
    g += weight_decay * p; buf = g the first time, else buf = momentum * buf + (1 - dampening) * g;
    g = g + momentum * buf (Nesterov) or buf; p -= lr * g."""

    def __init__(self, params, lr=required, momentum=0, dampening=0, weight_decay=0, nesterov=False, *,
                 maximize=False, foreach=None, differentiable=False):
        if lr is not required and lr < 0.0:
            raise ValueError("Invalid learning rate: {}".format(lr))
        if momentum < 0.0:
            raise ValueError("Invalid momentum value: {}".format(momentum))
        if weight_decay < 0.0:
            raise ValueError("Invalid weight_decay value: {}".format(weight_decay))
        defaults = dict(lr=lr, momentum=momentum, dampening=dampening, weight_decay=weight_decay,
                        nesterov=nesterov, maximize=maximize, foreach=foreach, differentiable=differentiable)
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        super().__init__(params, defaults)

    def __setstate__(self, state):
        super().__setstate__(state)
        for group in self.param_groups:
            group.setdefault("nesterov", False)
            group.setdefault("maximize", False)
            group.setdefault("foreach", None)
            group.setdefault("differentiable", False)

    @_run_step
    def step(self):
        """One update of every parameter that has a gradient."""
        state = self.state
        for group in self.param_groups:
            weight_decay = group["weight_decay"]
            momentum = group["momentum"]
            dampening = group["dampening"]
            nesterov = group["nesterov"]
            maximize = group["maximize"]
            neg_lr = -group["lr"]
            for p in group["params"]:
                d_p = p.grad
                if d_p is None:
                    continue
                if maximize:
                    d_p = -d_p
                if weight_decay != 0:
                    d_p = d_p.add(p, alpha=weight_decay)
                if momentum != 0:
                    param_state = state[p]
                    buf = param_state.get("momentum_buffer")
                    if buf is None:
                        buf = d_p.clone().detach()
                        param_state["momentum_buffer"] = buf
                    else:
                        buf.mul_(momentum).add_(d_p, alpha=1 - dampening)
                    d_p = d_p.add(buf, alpha=momentum) if nesterov else buf
                else:
                    state[p]["momentum_buffer"] = None
                p.add_(d_p, alpha=neg_lr)
