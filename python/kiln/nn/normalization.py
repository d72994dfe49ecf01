"""Batch, instance and group normalization layers, as torch.nn 1.13's:
the same constructor arguments, parameters (weight, bias), buffers
(running_mean, running_var, num_batches_tracked), state_dict keys and
train()/eval() behaviour; forwards are TorchScript over
kiln.nn.functional."""
import kiln
from kiln import Tensor
from . import functional as F
from .module import Module
from .parameter import Parameter


class _NormBase(Module):
    """Common base of _InstanceNorm and _BatchNorm."""

    _version = 2
    __constants__ = ["track_running_stats", "momentum", "eps", "num_features", "affine"]
    num_features: int
    eps: float
    momentum: float
    affine: bool
    track_running_stats: bool

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True, device=None,
                 dtype=None):
        super().__init__()
        dtype = dtype if dtype is not None else kiln.float32
        self.num_features = num_features
        self.eps = eps
        self.momentum = momentum
        self.affine = affine
        self.track_running_stats = track_running_stats
        if self.affine:
            self.weight = Parameter(kiln.ones([num_features], dtype=dtype))
            self.bias = Parameter(kiln.zeros([num_features], dtype=dtype))
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        if self.track_running_stats:
            self.register_buffer("running_mean", kiln.zeros([num_features], dtype=dtype))
            self.register_buffer("running_var", kiln.ones([num_features], dtype=dtype))
            self.register_buffer("num_batches_tracked", kiln.tensor(0, dtype=kiln.long))
        else:
            self.register_buffer("running_mean", None)
            self.register_buffer("running_var", None)
            self.register_buffer("num_batches_tracked", None)

    def reset_running_stats(self):
        if self.track_running_stats:
            with kiln.no_grad():
                self.running_mean.zero_()
                self.running_var.fill_(1)
                self.num_batches_tracked.zero_()

    def reset_parameters(self):
        self.reset_running_stats()
        if self.affine:
            with kiln.no_grad():  # initializing leaves that require grad, as torch.nn.init does
                self.weight.fill_(1)
                self.bias.zero_()

    def _check_input_dim(self, input):
        raise NotImplementedError

    def extra_repr(self):
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, affine={self.affine}, "
                f"track_running_stats={self.track_running_stats}")

    def _load_from_state_dict(self, state_dict, prefix, missing_keys, unexpected_keys, error_msgs):
        # Checkpoints from before num_batches_tracked existed (torch's version 1) lack it.
        key = prefix + "num_batches_tracked"
        if self.track_running_stats and key not in state_dict:
            state_dict = dict(state_dict)
            state_dict[key] = kiln.tensor(0, dtype=kiln.long)
        super()._load_from_state_dict(state_dict, prefix, missing_keys, unexpected_keys, error_msgs)


class _BatchNorm(_NormBase):
    def forward(self, input: Tensor) -> Tensor:
        self._check_input_dim(input)
        # exponential_average_factor is set to self.momentum (when it is
        # available) only so that it gets updated in the ONNX graph when this
        # node is exported to ONNX, as torch does.
        if self.momentum is None:
            exponential_average_factor = 0.0
        else:
            exponential_average_factor = self.momentum

        if self.training and self.track_running_stats:
            if self.num_batches_tracked is not None:
                self.num_batches_tracked.add_(1)
                if self.momentum is None:  # a cumulative moving average
                    exponential_average_factor = 1.0 / float(self.num_batches_tracked)
                else:  # an exponential moving average
                    exponential_average_factor = self.momentum

        # Batch statistics in training; in eval too when there are no running statistics.
        if self.training:
            bn_training = True
        else:
            bn_training = (self.running_mean is None) and (self.running_var is None)

        # Untracked buffers are not passed, so they are never updated.
        return F.batch_norm(
            input,
            self.running_mean if not self.training or self.track_running_stats else None,
            self.running_var if not self.training or self.track_running_stats else None,
            self.weight,
            self.bias,
            bn_training,
            exponential_average_factor,
            self.eps,
        )


class BatchNorm1d(_BatchNorm):
    _jit_override_qualname = "__torch__.torch.nn.modules.batchnorm.BatchNorm1d"

    def _check_input_dim(self, input):
        if input.dim() != 2 and input.dim() != 3:
            raise ValueError("expected 2D or 3D input (got {}D input)".format(input.dim()))


class BatchNorm2d(_BatchNorm):
    _jit_override_qualname = "__torch__.torch.nn.modules.batchnorm.BatchNorm2d"

    def _check_input_dim(self, input):
        if input.dim() != 4:
            raise ValueError("expected 4D input (got {}D input)".format(input.dim()))


class BatchNorm3d(_BatchNorm):
    _jit_override_qualname = "__torch__.torch.nn.modules.batchnorm.BatchNorm3d"

    def _check_input_dim(self, input):
        if input.dim() != 5:
            raise ValueError("expected 5D input (got {}D input)".format(input.dim()))


class _InstanceNorm(_NormBase):
    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=False, track_running_stats=False, device=None,
                 dtype=None):
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device, dtype)

    def _check_input_dim(self, input):
        raise NotImplementedError

    def _get_no_batch_dim(self):
        raise NotImplementedError

    def _handle_no_batch_input(self, input):
        return self._apply_instance_norm(input.unsqueeze(0)).squeeze(0)

    def _apply_instance_norm(self, input):
        return F.instance_norm(input, self.running_mean, self.running_var, self.weight, self.bias,
                               self.training or not self.track_running_stats, self.momentum, self.eps)

    def forward(self, input: Tensor) -> Tensor:
        self._check_input_dim(input)
        if input.dim() == self._get_no_batch_dim():
            return self._handle_no_batch_input(input)
        return self._apply_instance_norm(input)


class InstanceNorm1d(_InstanceNorm):
    _jit_override_qualname = "__torch__.torch.nn.modules.instancenorm.InstanceNorm1d"

    def _get_no_batch_dim(self):
        return 2

    def _check_input_dim(self, input):
        if input.dim() not in (2, 3):
            raise ValueError("expected 2D or 3D input (got {}D input)".format(input.dim()))


class InstanceNorm2d(_InstanceNorm):
    _jit_override_qualname = "__torch__.torch.nn.modules.instancenorm.InstanceNorm2d"

    def _get_no_batch_dim(self):
        return 3

    def _check_input_dim(self, input):
        if input.dim() not in (3, 4):
            raise ValueError("expected 3D or 4D input (got {}D input)".format(input.dim()))


class InstanceNorm3d(_InstanceNorm):
    _jit_override_qualname = "__torch__.torch.nn.modules.instancenorm.InstanceNorm3d"

    def _get_no_batch_dim(self):
        return 4

    def _check_input_dim(self, input):
        if input.dim() not in (4, 5):
            raise ValueError("expected 4D or 5D input (got {}D input)".format(input.dim()))


class GroupNorm(Module):
    _jit_override_qualname = "__torch__.torch.nn.modules.normalization.GroupNorm"
    __constants__ = ["num_groups", "num_channels", "eps", "affine"]
    num_groups: int
    num_channels: int
    eps: float
    affine: bool

    def __init__(self, num_groups, num_channels, eps=1e-5, affine=True, device=None, dtype=None):
        super().__init__()
        if num_channels % num_groups != 0:
            raise ValueError("num_channels must be divisible by num_groups")
        dtype = dtype if dtype is not None else kiln.float32
        self.num_groups = num_groups
        self.num_channels = num_channels
        self.eps = eps
        self.affine = affine
        if self.affine:
            self.weight = Parameter(kiln.ones([num_channels], dtype=dtype))
            self.bias = Parameter(kiln.zeros([num_channels], dtype=dtype))
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)

    def reset_parameters(self):
        if self.affine:
            with kiln.no_grad():  # initializing leaves that require grad, as torch.nn.init does
                self.weight.fill_(1)
                self.bias.zero_()

    def forward(self, input: Tensor) -> Tensor:
        return F.group_norm(input, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self):
        return f"{self.num_groups}, {self.num_channels}, eps={self.eps}, affine={self.affine}"



class LocalResponseNorm(Module):
    """Each element divided by (k + alpha * mean of the squares over `size`
    neighbouring channels) ** beta."""

    _jit_override_qualname = "__torch__.torch.nn.modules.normalization.LocalResponseNorm"
    __constants__ = ["size", "alpha", "beta", "k"]
    size: int
    alpha: float
    beta: float
    k: float

    def __init__(self, size, alpha=1e-4, beta=0.75, k=1.):
        super().__init__()
        self.size = size
        self.alpha = alpha
        self.beta = beta
        self.k = k

    def forward(self, input: Tensor) -> Tensor:
        return F.local_response_norm(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self):
        return "{}, alpha={}, beta={}, k={}".format(self.size, self.alpha, self.beta, self.k)


class _CrossMapLRN2dFunction(kiln.autograd.Function):
    """torch's legacy cross-channel LRN (torch.nn._functions.CrossMapLRN2d),
    forward and hand-written backward step for step as torch runs them, so
    the results agree to the bit. Its window is not LocalResponseNorm's: a
    running sum over channels that adds the channel pre_pad - 1 ahead and
    drops the one pre_pad behind only past channel pre_pad."""

    @staticmethod
    def forward(ctx, input, size, alpha, beta, k):
        assert input.dim() == 4
        channels = input.size(1)
        square = input.pow(2)
        pre_pad = int((size - 1) / 2 + 1)
        running = kiln.zeros_like(square.select(1, 0))
        for c in range(min(pre_pad, channels)):
            running = running + square.select(1, c)
        scales = [running]
        for c in range(1, channels):
            if c < channels - pre_pad + 1:
                running = running + square.select(1, c + pre_pad - 1)
            if c > pre_pad:
                running = running - square.select(1, c - pre_pad)
            scales.append(running)
        scale = kiln.stack(scales, 1).mul(alpha / size).add(k)
        output = scale.pow(-beta).mul(input)
        ctx.save_for_backward(input, output)
        ctx.scale, ctx.size, ctx.alpha, ctx.beta = scale, size, alpha, beta
        return output

    @staticmethod
    def backward(ctx, grad_output):
        input, output = ctx.saved_tensors
        scale, size = ctx.scale, ctx.size
        batch, channels = input.size(0), input.size(1)
        cache_ratio = 2 * ctx.alpha * ctx.beta / size
        inverse_pre_pad = int(size - (size - 1) / 2)
        grad_input = scale.pow(-ctx.beta).mul(grad_output)
        rows = []
        for n in range(batch):
            ratio = grad_output[n].mul(output[n]).div(scale[n])
            padded = kiln.constant_pad_nd(ratio, [0, 0, 0, 0, inverse_pre_pad, size - 1 - inverse_pre_pad], 0.0)
            accum = padded.narrow(0, 0, size - 1).sum(0)
            channels_out = []
            for c in range(channels):
                accum = accum + padded[c + size - 1]
                channels_out.append(kiln.addcmul(grad_input[n][c], input[n][c], accum, value=-cache_ratio))
                accum = accum - padded[c]
            rows.append(kiln.stack(channels_out, 0))
        return kiln.stack(rows, 0), None, None, None, None


class CrossMapLRN2d(Module):
    """torch's legacy cross-channel local response norm for (N, C, H, W)
    inputs. Eager only, as torch's (an autograd.Function)."""

    def __init__(self, size, alpha=1e-4, beta=0.75, k=1):
        super().__init__()
        self.size = size
        self.alpha = alpha
        self.beta = beta
        self.k = k

    def forward(self, input: Tensor) -> Tensor:
        return _CrossMapLRN2dFunction.apply(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self):
        return "{}, alpha={}, beta={}, k={}".format(self.size, self.alpha, self.beta, self.k)
