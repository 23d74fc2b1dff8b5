"""Padding layers (mirror ``torch.nn``'s): constant/zero, reflection, replication, circular,
in 1, 2 and 3 dims, all thin over ``F.pad``."""
from .. import functional as F
from .module import Module
from .utils import _ntuple


class _PadNd(Module):
    mode = None
    _dims = None

    def __init__(self, padding):
        super().__init__()
        self.padding = _ntuple(2 * self._dims)(padding)

    def forward(self, input):
        return F.pad(input, self.padding, type(self).mode)

    def extra_repr(self):
        return f"{self.padding}"


class _ConstantPadNd(_PadNd):
    mode = "constant"

    def __init__(self, padding, value):
        super().__init__(padding)
        self.value = value

    def forward(self, input):
        return F.pad(input, self.padding, "constant", self.value)

    def extra_repr(self):
        return f"padding={self.padding}, value={self.value}"


class _ZeroPadNd(_ConstantPadNd):
    def __init__(self, padding):
        super().__init__(padding, 0.0)

    def extra_repr(self):
        return f"{self.padding}"


class _ReflectionPadNd(_PadNd):
    mode = "reflect"


class _ReplicationPadNd(_PadNd):
    mode = "replicate"


class _CircularPadNd(_PadNd):
    mode = "circular"

    def forward(self, input):
        dims = (self._dims + 1, self._dims + 2)
        if input.dim() not in dims:
            raise ValueError(f"expected {dims[0]}D or {dims[1]}D input (got {input.dim()}D "
                             "input)")
        return super().forward(input)


class ConstantPad1d(_ConstantPadNd):
    """Mirrors ``torch.nn.ConstantPad1d``: pad with a constant ``value``."""
    _dims = 1


class ConstantPad2d(_ConstantPadNd):
    """Mirrors ``torch.nn.ConstantPad2d``: pad with a constant ``value``."""
    _dims = 2


class ConstantPad3d(_ConstantPadNd):
    """Mirrors ``torch.nn.ConstantPad3d``: pad with a constant ``value``."""
    _dims = 3


class ZeroPad1d(_ZeroPadNd):
    """Mirrors ``torch.nn.ZeroPad1d``: pad with zeros."""
    _dims = 1


class ZeroPad2d(_ZeroPadNd):
    """Mirrors ``torch.nn.ZeroPad2d``: pad with zeros."""
    _dims = 2


class ZeroPad3d(_ZeroPadNd):
    """Mirrors ``torch.nn.ZeroPad3d``: pad with zeros."""
    _dims = 3


class ReflectionPad1d(_ReflectionPadNd):
    """Mirrors ``torch.nn.ReflectionPad1d``: reflect the input at its edges."""
    _dims = 1


class ReflectionPad2d(_ReflectionPadNd):
    """Mirrors ``torch.nn.ReflectionPad2d``: reflect the input at its edges."""
    _dims = 2


class ReflectionPad3d(_ReflectionPadNd):
    """Mirrors ``torch.nn.ReflectionPad3d``: reflect the input at its edges."""
    _dims = 3


class ReplicationPad1d(_ReplicationPadNd):
    """Mirrors ``torch.nn.ReplicationPad1d``: pad by repeating the edge values."""
    _dims = 1


class ReplicationPad2d(_ReplicationPadNd):
    """Mirrors ``torch.nn.ReplicationPad2d``: pad by repeating the edge values."""
    _dims = 2


class ReplicationPad3d(_ReplicationPadNd):
    """Mirrors ``torch.nn.ReplicationPad3d``: pad by repeating the edge values."""
    _dims = 3


class CircularPad1d(_CircularPadNd):
    """Mirrors ``torch.nn.CircularPad1d``: pad by wrapping the input around."""
    _dims = 1


class CircularPad2d(_CircularPadNd):
    """Mirrors ``torch.nn.CircularPad2d``: pad by wrapping the input around."""
    _dims = 2


class CircularPad3d(_CircularPadNd):
    """Mirrors ``torch.nn.CircularPad3d``: pad by wrapping the input around."""
    _dims = 3
