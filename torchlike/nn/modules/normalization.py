"""LayerNorm, GroupNorm, RMSNorm, LocalResponseNorm (mirror ``torch.nn``'s)."""
import numbers

from ... import _creation as C
from .. import functional as F, init
from ..parameter import Parameter
from .module import Module


def _affine_parameters(module, shape, affine, bias, device, dtype):
    """Register ``weight`` and ``bias`` of ``shape`` (bias only when ``bias``), or both as None
    when not ``affine``; they are filled by ``_reset_affine``."""
    module.register_parameter(
        "weight", Parameter(C.empty(shape, device=device, dtype=dtype)) if affine else None)
    module.register_parameter(
        "bias", Parameter(C.empty(shape, device=device, dtype=dtype)) if affine and bias
        else None)


def _reset_affine(module):
    """PyTorch's default affine normalisation parameters: weight ones, bias zeros."""
    if module.weight is not None:
        init.ones_(module.weight)
    if module.bias is not None:
        init.zeros_(module.bias)


def _shape_tuple(normalized_shape):
    if isinstance(normalized_shape, numbers.Integral):
        return (int(normalized_shape),)
    return tuple(normalized_shape)


class LayerNorm(Module):
    """Mirrors ``torch.nn.LayerNorm``: normalise over the trailing ``normalized_shape`` dims,
    then scale by ``weight`` (ones) and shift by ``bias`` (zeros)."""

    def __init__(self, normalized_shape, eps=1e-5, elementwise_affine=True, bias=True,
                 device=None, dtype=None):
        super().__init__()
        self.normalized_shape = _shape_tuple(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        _affine_parameters(self, self.normalized_shape, elementwise_affine, bias, device, dtype)
        self.reset_parameters()

    def reset_parameters(self):
        _reset_affine(self)

    def forward(self, input):
        return F.layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self):
        return (f"{self.normalized_shape}, eps={self.eps}, "
                f"elementwise_affine={self.elementwise_affine}, bias={self.bias is not None}")


class GroupNorm(Module):
    """Mirrors ``torch.nn.GroupNorm``: normalise each of ``num_groups`` channel groups."""

    def __init__(self, num_groups, num_channels, eps=1e-5, affine=True, device=None,
                 dtype=None, *, bias=True):
        super().__init__()
        if num_channels % num_groups != 0:
            raise ValueError(f"num_channels ({num_channels}) must be divisible by num_groups "
                             f"({num_groups})")
        self.num_groups, self.num_channels = num_groups, num_channels
        self.eps, self.affine = eps, affine
        _affine_parameters(self, num_channels, affine, bias, device, dtype)
        self.reset_parameters()

    def reset_parameters(self):
        _reset_affine(self)

    def forward(self, input):
        return F.group_norm(input, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self):
        return (f"{self.num_groups}, {self.num_channels}, eps={self.eps}, "
                f"affine={self.affine}, bias={self.bias is not None}")


class RMSNorm(Module):
    """Mirrors ``torch.nn.RMSNorm``: x / sqrt(mean(x^2) + eps) * weight over the trailing
    ``normalized_shape`` dims (eps=None: the dtype's machine epsilon)."""

    def __init__(self, normalized_shape, eps=None, elementwise_affine=True, device=None,
                 dtype=None):
        super().__init__()
        self.normalized_shape = _shape_tuple(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        if elementwise_affine:
            self.weight = Parameter(C.empty(self.normalized_shape, device=device, dtype=dtype))
        else:
            self.register_parameter("weight", None)
        self.reset_parameters()

    def reset_parameters(self):
        if self.elementwise_affine:
            init.ones_(self.weight)

    def forward(self, x):
        return F.rms_norm(x, self.normalized_shape, self.weight, self.eps)

    def extra_repr(self):
        return (f"{self.normalized_shape}, eps={self.eps}, "
                f"elementwise_affine={self.elementwise_affine}")


class LocalResponseNorm(Module):
    """Mirrors ``torch.nn.LocalResponseNorm``: normalise each channel by its neighbours."""

    def __init__(self, size, alpha=1e-4, beta=0.75, k=1.0):
        super().__init__()
        self.size, self.alpha, self.beta, self.k = size, alpha, beta, k

    def forward(self, input):
        return F.local_response_norm(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self):
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"


class CrossMapLRN2d(Module):
    """Mirrors ``torch.nn.CrossMapLRN2d``: PyTorch's legacy local response normalisation across
    the channels of a 4-d input, with its own backward formula (NOTE [ cross-map LRN ])."""

    def __init__(self, size, alpha=1e-4, beta=0.75, k=1):
        super().__init__()
        self.size, self.alpha, self.beta, self.k = size, alpha, beta, k

    def forward(self, input):
        from ..._ops.cross_map_lrn import cross_map_lrn2d
        return cross_map_lrn2d(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self):
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"
