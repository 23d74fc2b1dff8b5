"""BatchNorm1d/2d/3d (mirror ``torch.nn``'s): batch statistics in training, running statistics
(buffers ``running_mean``, ``running_var``, ``num_batches_tracked``) in evaluation."""
import jax

from ... import _creation as C, distributed as dist
from ... import _dtype as D
from ..._ops.shape import cat
from ...autograd.function import Function
from ...autograd.grad_mode import no_grad
from .. import functional as F
from ..parameter import UninitializedBuffer, UninitializedParameter
from .lazy import LazyModuleMixin
from .module import Module
from .normalization import _affine_parameters, _reset_affine


class _NormBase(Module):
    """Parameters, buffers and state-dict versioning shared by batch and instance norm."""

    _version = 2

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True,
                 track_running_stats=True, device=None, dtype=None, *, bias=True):
        super().__init__()
        self.num_features, self.eps, self.momentum = num_features, eps, momentum
        self.affine, self.track_running_stats = affine, track_running_stats
        _affine_parameters(self, num_features, affine, bias, device, dtype)
        if track_running_stats:
            self.register_buffer("running_mean", C.zeros(num_features, device=device,
                                                         dtype=dtype))
            self.register_buffer("running_var", C.ones(num_features, device=device,
                                                       dtype=dtype))
            self.register_buffer("num_batches_tracked",
                                 C.tensor(0, dtype=D.int64, device=device))
        else:
            for name in ("running_mean", "running_var", "num_batches_tracked"):
                self.register_buffer(name, None)
        self.reset_parameters()

    def reset_running_stats(self):
        if self.track_running_stats:
            self.running_mean.zero_()
            self.running_var.fill_(1)
            self.num_batches_tracked.zero_()

    def reset_parameters(self):
        self.reset_running_stats()
        _reset_affine(self)

    def _check_input_dim(self, input):
        dims = self._input_dims
        if input.dim() not in dims:
            shown = " or ".join(f"{d}D" for d in dims)
            raise ValueError(f"expected {shown} input (got {input.dim()}D input)")

    def extra_repr(self):
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, "
                f"affine={self.affine}, bias={self.bias is not None}, "
                f"track_running_stats={self.track_running_stats}")

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys,
                              unexpected_keys, error_msgs):
        # checkpoints older than version 2 have no num_batches_tracked
        version = local_metadata.get("version")
        key = prefix + "num_batches_tracked"
        if (version is None or version < 2) and self.track_running_stats and \
                key not in state_dict:
            state_dict[key] = (self.num_batches_tracked if self.num_batches_tracked is not None
                               else C.tensor(0, dtype=D.int64))
        super()._load_from_state_dict(state_dict, prefix, local_metadata, strict, missing_keys,
                                      unexpected_keys, error_msgs)


class _BatchNorm(_NormBase):
    def forward(self, input):
        self._check_input_dim(input)
        factor = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats and self.num_batches_tracked is not None:
            self.num_batches_tracked.add_(1)
            if self.momentum is None:   # cumulative moving average
                n = self.num_batches_tracked._value()
                # traced (torchlike.compile): the factor stays an array operand of the update
                factor = (1.0 / n).astype(self.running_mean._aval().dtype) \
                    if isinstance(n, jax.core.Tracer) else 1.0 / float(n)
        use_batch_stats = self.training or (self.running_mean is None
                                            and self.running_var is None)
        keep_running = not self.training or self.track_running_stats
        return F.batch_norm(input, self.running_mean if keep_running else None,
                            self.running_var if keep_running else None, self.weight, self.bias,
                            use_batch_stats, factor, self.eps)


class BatchNorm1d(_BatchNorm):
    """Mirrors ``torch.nn.BatchNorm1d``: (N, C) or (N, C, L) inputs (Ioffe & Szegedy, 2015)."""
    _input_dims = (2, 3)


class BatchNorm2d(_BatchNorm):
    """Mirrors ``torch.nn.BatchNorm2d``: (N, C, H, W) inputs."""
    _input_dims = (4,)


class BatchNorm3d(_BatchNorm):
    """Mirrors ``torch.nn.BatchNorm3d``: (N, C, D, H, W) inputs."""
    _input_dims = (5,)



class SyncBatchNorm(_BatchNorm):
    """Mirrors ``torch.nn.SyncBatchNorm``: batch norm over (N, C, ...) inputs whose batch
    statistics, in training, are those of the batches of every process of ``process_group``
    (the default group when None) together.

    Each process sums its batch and its squares per channel and counts its elements; one
    all-reduce of the three makes the group's mean and (biased) variance, which normalise the
    local batch and update the running statistics (unbiased variance, as PyTorch).  The
    all-reduce is differentiable -- its backward all-reduces the gradient -- so each process's
    input gradient takes in what the statistics did on every other process, as PyTorch's
    SyncBatchNorm backward does.  In evaluation, or without an initialized process group of
    more than one process, it is ``BatchNorm`` for inputs of any rank >= 2.
    ``convert_sync_batchnorm`` swaps it in for every batch norm of a model.
    """

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True,
                 track_running_stats=True, process_group=None, device=None, dtype=None, *,
                 bias=True):
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device, dtype,
                         bias=bias)
        self.process_group = process_group

    def _check_input_dim(self, input):
        if input.dim() < 2:
            raise ValueError(f"expected at least 2D input (got {input.dim()}D input)")

    def forward(self, input):
        self._check_input_dim(input)
        if input.size(1) == 0:
            raise ValueError("SyncBatchNorm number of input channels should be non-zero")
        if not (self.training and dist.is_initialized()
                and dist.get_world_size(self.process_group) > 1):
            return super().forward(input)
        return self._synced(input)

    def _synced(self, input):
        dims = [0] + list(range(2, input.dim()))
        count = input.numel() // input.size(1)
        local = cat([input.sum(dims), (input * input).sum(dims),
                       C.full((1,), float(count), dtype=input.dtype, device=input.device)])
        total = _AllReduceSum.apply(local, self.process_group)
        c = self.num_features
        n = total[2 * c]
        mean = total[:c] / n
        var = total[c:2 * c] / n - mean * mean
        shape = [1, c] + [1] * (input.dim() - 2)
        out = (input - mean.view(shape)) * (var.view(shape) + self.eps).rsqrt()
        if self.weight is not None:
            out = out * self.weight.view(shape)
        if self.bias is not None:
            out = out + self.bias.view(shape)
        if self.track_running_stats and self.running_mean is not None:
            self.num_batches_tracked.add_(1)
            factor = (1.0 / float(self.num_batches_tracked.item()) if self.momentum is None
                      else self.momentum)
            with no_grad():
                unbiased = var * (n / (n - 1))
                self.running_mean.mul_(1 - factor).add_(mean.detach() * factor)
                self.running_var.mul_(1 - factor).add_(unbiased.detach() * factor)
        return out

    @classmethod
    def convert_sync_batchnorm(cls, module, process_group=None):
        """Mirrors ``SyncBatchNorm.convert_sync_batchnorm``: ``module`` with every batch norm
        layer replaced by a SyncBatchNorm holding the same parameters and running statistics."""
        out = module
        if isinstance(module, _BatchNorm):
            out = cls(module.num_features, module.eps, module.momentum, module.affine,
                      module.track_running_stats, process_group, bias=module.bias is not None)
            if module.affine:
                with no_grad():
                    out.weight, out.bias = module.weight, module.bias
            out.running_mean, out.running_var = module.running_mean, module.running_var
            out.num_batches_tracked = module.num_batches_tracked
            out.training = module.training
            if hasattr(module, "qconfig"):
                out.qconfig = module.qconfig
        for name, child in module.named_children():
            out.add_module(name, cls.convert_sync_batchnorm(child, process_group))
        return out

class _AllReduceSum(Function):
    """A differentiable all-reduce (SUM) over a process group: the backward all-reduces the
    gradient, the adjoint of a sum over processes."""

    @staticmethod
    def forward(ctx, x, group):
        ctx.group = group
        out = x.clone()
        dist.all_reduce(out, group=group)
        return out

    @staticmethod
    def backward(ctx, grad):
        grad = grad.clone()
        dist.all_reduce(grad, group=ctx.group)
        return grad, None


# --- lazy batch norm: num_features from the first input -----------------------------------------

class _LazyNormBase(LazyModuleMixin):
    """Mirrors ``torch.nn.modules.batchnorm._LazyNormBase``: ``num_features`` (0 until then)
    from ``input.shape[1]`` of the first input (as PyTorch reads it, also for unbatched
    instance norm); the affine parameters and running statistics take their shapes from it."""

    def __init__(self, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True,
                 device=None, dtype=None, *, bias=True):
        # no affine parameters or statistics of size 0: they are set lazily below
        super().__init__(0, eps, momentum, False, False, device, dtype, bias=False)
        self.affine, self.track_running_stats = affine, track_running_stats
        if affine:
            self.weight = UninitializedParameter(device=device, dtype=dtype)
            if bias:
                self.bias = UninitializedParameter(device=device, dtype=dtype)
        if track_running_stats:
            self.running_mean = UninitializedBuffer(device=device, dtype=dtype)
            self.running_var = UninitializedBuffer(device=device, dtype=dtype)
            self.num_batches_tracked = C.tensor(0, dtype=D.int64, device=device)
        self._register_lazy_hook()

    def reset_parameters(self):
        if not self.has_uninitialized_params() and self.num_features != 0:
            super().reset_parameters()

    def initialize_parameters(self, input):
        if self.has_uninitialized_params():
            self.num_features = input.shape[1]
            if self.affine:
                self.weight.materialize((self.num_features,))
                if self.bias is not None:
                    self.bias.materialize((self.num_features,))
            if self.track_running_stats:
                self.running_mean.materialize((self.num_features,))
                self.running_var.materialize((self.num_features,))
            self.reset_parameters()


class LazyBatchNorm1d(_LazyNormBase, _BatchNorm):
    """Mirrors ``torch.nn.LazyBatchNorm1d``: a BatchNorm1d whose ``num_features`` comes from the
    first input; it then becomes a ``BatchNorm1d``."""
    cls_to_become = BatchNorm1d
    _input_dims = BatchNorm1d._input_dims


class LazyBatchNorm2d(_LazyNormBase, _BatchNorm):
    """Mirrors ``torch.nn.LazyBatchNorm2d`` (becomes a ``BatchNorm2d``)."""
    cls_to_become = BatchNorm2d
    _input_dims = BatchNorm2d._input_dims


class LazyBatchNorm3d(_LazyNormBase, _BatchNorm):
    """Mirrors ``torch.nn.LazyBatchNorm3d`` (becomes a ``BatchNorm3d``)."""
    cls_to_become = BatchNorm3d
    _input_dims = BatchNorm3d._input_dims
