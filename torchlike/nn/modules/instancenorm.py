"""InstanceNorm1d/2d/3d (mirror ``torch.nn``'s): per-sample, per-channel normalisation."""
import warnings

from .. import functional as F
from .batchnorm import _LazyNormBase, _NormBase


class _InstanceNorm(_NormBase):
    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=False,
                 track_running_stats=False, device=None, dtype=None, *, bias=True):
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device, dtype,
                         bias=bias)

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys,
                              unexpected_keys, error_msgs):
        if local_metadata.get("version") is None and not self.track_running_stats:
            keys = [prefix + n for n in ("running_mean", "running_var") if prefix + n in state_dict]
            if keys:
                klass = type(self).__name__
                error_msgs.append(
                    "Unexpected running stats buffer(s) {} for {} with track_running_stats=False."
                    " If state_dict is a checkpoint saved before 0.4.0, this may be expected "
                    "because {} does not track running stats by default since 0.4.0. Please "
                    "remove these keys from state_dict. If the running stats are actually needed,"
                    " instead set track_running_stats=True in {} to enable them. See the "
                    "documentation of {} for details.".format(
                        " and ".join(f'"{k}"' for k in keys), klass, klass, klass, klass))
                for key in keys:
                    state_dict.pop(key)
        super()._load_from_state_dict(state_dict, prefix, local_metadata, strict, missing_keys,
                                      unexpected_keys, error_msgs)

    def forward(self, input):
        self._check_input_dim(input)
        unbatched = self._input_dims[0]
        feature_dim = input.dim() - unbatched
        if input.shape[feature_dim] != self.num_features:
            if self.affine:
                raise ValueError(f"expected input's size at dim={feature_dim} to match "
                                 f"num_features ({self.num_features}), but got: "
                                 f"{input.shape[feature_dim]}.")
            warnings.warn(f"input's size at dim={feature_dim} does not match num_features. You "
                          "can silence this warning by not passing in num_features, which is "
                          "not used because affine=False", stacklevel=2)
        x = input.unsqueeze(0) if input.dim() == unbatched else input
        out = F.instance_norm(x, self.running_mean, self.running_var, self.weight, self.bias,
                              self.training or not self.track_running_stats,
                              self.momentum if self.momentum is not None else 0.0, self.eps)
        return out.squeeze(0) if input.dim() == unbatched else out


class InstanceNorm1d(_InstanceNorm):
    """Mirrors ``torch.nn.InstanceNorm1d``: (N, C, L) or (C, L) inputs."""
    _input_dims = (2, 3)


class InstanceNorm2d(_InstanceNorm):
    """Mirrors ``torch.nn.InstanceNorm2d``: (N, C, H, W) or (C, H, W) inputs."""
    _input_dims = (3, 4)


class InstanceNorm3d(_InstanceNorm):
    """Mirrors ``torch.nn.InstanceNorm3d``: (N, C, D, H, W) or (C, D, H, W) inputs."""
    _input_dims = (4, 5)


class LazyInstanceNorm1d(_LazyNormBase, _InstanceNorm):
    """Mirrors ``torch.nn.LazyInstanceNorm1d``: an InstanceNorm1d whose ``num_features`` comes
    from the first input; it then becomes an ``InstanceNorm1d``.  As in PyTorch, ``affine`` and
    ``track_running_stats`` default to True here (the lazy norm base's defaults)."""
    cls_to_become = InstanceNorm1d
    _input_dims = InstanceNorm1d._input_dims


class LazyInstanceNorm2d(_LazyNormBase, _InstanceNorm):
    """Mirrors ``torch.nn.LazyInstanceNorm2d`` (becomes an ``InstanceNorm2d``)."""
    cls_to_become = InstanceNorm2d
    _input_dims = InstanceNorm2d._input_dims


class LazyInstanceNorm3d(_LazyNormBase, _InstanceNorm):
    """Mirrors ``torch.nn.LazyInstanceNorm3d`` (becomes an ``InstanceNorm3d``)."""
    cls_to_become = InstanceNorm3d
    _input_dims = InstanceNorm3d._input_dims
