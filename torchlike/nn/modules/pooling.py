"""Pooling layers (mirror ``torch.nn``'s): max, average, adaptive, power-average, unpooling."""
from .. import functional as F
from .module import Module
from .utils import _ntuple


class _MaxPoolNd(Module):
    fn = None

    def __init__(self, kernel_size, stride=None, padding=0, dilation=1, return_indices=False,
                 ceil_mode=False):
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding, self.dilation = padding, dilation
        self.return_indices, self.ceil_mode = return_indices, ceil_mode

    def forward(self, input):
        return type(self).fn(input, self.kernel_size, self.stride, self.padding, self.dilation,
                             ceil_mode=self.ceil_mode, return_indices=self.return_indices)

    def extra_repr(self):
        return (f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"
                f", dilation={self.dilation}, ceil_mode={self.ceil_mode}")


class MaxPool1d(_MaxPoolNd):
    """Mirrors ``torch.nn.MaxPool1d``."""
    fn = F.max_pool1d


class MaxPool2d(_MaxPoolNd):
    """Mirrors ``torch.nn.MaxPool2d``."""
    fn = F.max_pool2d


class MaxPool3d(_MaxPoolNd):
    """Mirrors ``torch.nn.MaxPool3d``."""
    fn = F.max_pool3d


class _AvgPoolNd(Module):
    fn = None

    def extra_repr(self):
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AvgPool1d(_AvgPoolNd):
    """Mirrors ``torch.nn.AvgPool1d``."""

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False,
                 count_include_pad=True):
        super().__init__()
        one = _ntuple(1)
        self.kernel_size = one(kernel_size)
        self.stride = one(stride if stride is not None else kernel_size)
        self.padding = one(padding)
        self.ceil_mode, self.count_include_pad = ceil_mode, count_include_pad

    def forward(self, input):
        return F.avg_pool1d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad)


class _AvgPool(_AvgPoolNd):
    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False,
                 count_include_pad=True, divisor_override=None):
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding, self.ceil_mode = padding, ceil_mode
        self.count_include_pad, self.divisor_override = count_include_pad, divisor_override

    def forward(self, input):
        return type(self).fn(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                             self.count_include_pad, self.divisor_override)


class AvgPool2d(_AvgPool):
    """Mirrors ``torch.nn.AvgPool2d``."""
    fn = F.avg_pool2d


class AvgPool3d(_AvgPool):
    """Mirrors ``torch.nn.AvgPool3d``."""
    fn = F.avg_pool3d


class _AdaptivePool(Module):
    fn = None

    def __init__(self, output_size):
        super().__init__()
        self.output_size = output_size

    def forward(self, input):
        return type(self).fn(input, self.output_size)

    def extra_repr(self):
        return f"output_size={self.output_size}"


class AdaptiveAvgPool1d(_AdaptivePool):
    """Mirrors ``torch.nn.AdaptiveAvgPool1d``."""
    fn = F.adaptive_avg_pool1d


class AdaptiveAvgPool2d(_AdaptivePool):
    """Mirrors ``torch.nn.AdaptiveAvgPool2d`` (None in ``output_size`` keeps that size)."""
    fn = F.adaptive_avg_pool2d


class AdaptiveAvgPool3d(_AdaptivePool):
    """Mirrors ``torch.nn.AdaptiveAvgPool3d``."""
    fn = F.adaptive_avg_pool3d


class _AdaptiveMaxPool(_AdaptivePool):
    def __init__(self, output_size, return_indices=False):
        super().__init__(output_size)
        self.return_indices = return_indices

    def forward(self, input):
        return type(self).fn(input, self.output_size, self.return_indices)


class AdaptiveMaxPool1d(_AdaptiveMaxPool):
    """Mirrors ``torch.nn.AdaptiveMaxPool1d``."""
    fn = F.adaptive_max_pool1d


class AdaptiveMaxPool2d(_AdaptiveMaxPool):
    """Mirrors ``torch.nn.AdaptiveMaxPool2d``."""
    fn = F.adaptive_max_pool2d


class AdaptiveMaxPool3d(_AdaptiveMaxPool):
    """Mirrors ``torch.nn.AdaptiveMaxPool3d``."""
    fn = F.adaptive_max_pool3d


class _LPPool(Module):
    fn = None

    def __init__(self, norm_type, kernel_size, stride=None, ceil_mode=False):
        super().__init__()
        self.norm_type, self.kernel_size = norm_type, kernel_size
        self.stride, self.ceil_mode = stride, ceil_mode

    def forward(self, input):
        return type(self).fn(input, float(self.norm_type), self.kernel_size, self.stride,
                             self.ceil_mode)

    def extra_repr(self):
        return (f"norm_type={self.norm_type}, kernel_size={self.kernel_size}, "
                f"stride={self.stride}, ceil_mode={self.ceil_mode}")


class LPPool1d(_LPPool):
    """Mirrors ``torch.nn.LPPool1d``: (sum of x^p over each window)^(1/p)."""
    fn = F.lp_pool1d


class LPPool2d(_LPPool):
    """Mirrors ``torch.nn.LPPool2d``."""
    fn = F.lp_pool2d


class _MaxUnpool(Module):
    fn = None
    _dims = None

    def __init__(self, kernel_size, stride=None, padding=0):
        super().__init__()
        tup = _ntuple(self._dims)
        self.kernel_size = tup(kernel_size)
        self.stride = tup(stride if stride is not None else kernel_size)
        self.padding = tup(padding)

    def forward(self, input, indices, output_size=None):
        return type(self).fn(input, indices, self.kernel_size, self.stride, self.padding,
                             output_size)

    def extra_repr(self):
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class MaxUnpool1d(_MaxUnpool):
    """Mirrors ``torch.nn.MaxUnpool1d``: the partial inverse of MaxPool1d."""
    fn = F.max_unpool1d
    _dims = 1


class MaxUnpool2d(_MaxUnpool):
    """Mirrors ``torch.nn.MaxUnpool2d``."""
    fn = F.max_unpool2d
    _dims = 2


class MaxUnpool3d(_MaxUnpool):
    """Mirrors ``torch.nn.MaxUnpool3d``."""
    fn = F.max_unpool3d
    _dims = 3


class LPPool3d(_LPPool):
    """Mirrors ``torch.nn.LPPool3d``."""
    fn = F.lp_pool3d


class _FractionalMaxPool(Module):
    fn = None
    _dims = None

    def __init__(self, kernel_size, output_size=None, output_ratio=None, return_indices=False,
                 _random_samples=None):
        super().__init__()
        tup = _ntuple(self._dims)
        self.kernel_size = tup(kernel_size)
        self.return_indices = return_indices
        self.register_buffer("_random_samples", _random_samples)
        self.output_size = tup(output_size) if output_size is not None else None
        self.output_ratio = tup(output_ratio) if output_ratio is not None else None
        if output_size is None and output_ratio is None:
            raise ValueError(f"{type(self).__name__} requires specifying either an output size, "
                             "or a pooling ratio")
        if output_size is not None and output_ratio is not None:
            raise ValueError("only one of output_size and output_ratio may be specified")
        if self.output_ratio is not None and not all(0 < r < 1 for r in self.output_ratio):
            raise ValueError(f"output_ratio must be between 0 and 1 (got {output_ratio})")

    def forward(self, input):
        return type(self).fn(input, self.kernel_size, self.output_size, self.output_ratio,
                             self.return_indices, _random_samples=self._random_samples)


class FractionalMaxPool2d(_FractionalMaxPool):
    """Mirrors ``torch.nn.FractionalMaxPool2d``: max pooling over pseudo-random windows
    (Graham, 2014; ``F.fractional_max_pool2d``), drawn anew each call unless
    ``_random_samples`` fixes them."""
    fn = F.fractional_max_pool2d
    _dims = 2


class FractionalMaxPool3d(_FractionalMaxPool):
    """Mirrors ``torch.nn.FractionalMaxPool3d``: the 3-d ``FractionalMaxPool2d``."""
    fn = F.fractional_max_pool3d
    _dims = 3
