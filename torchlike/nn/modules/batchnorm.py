"""BatchNorm1d/2d/3d (mirror ``torch.nn``'s): batch statistics in training, running statistics
(buffers ``running_mean``, ``running_var``, ``num_batches_tracked``) in evaluation."""
import jax

from ... import _creation as C
from ... import _dtype as D
from .. import functional as F
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
                factor = (1.0 / n).astype(self.running_mean._value().dtype) \
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
