"""Convolution layers: Conv1d/2d/3d and ConvTranspose1d/2d/3d (mirror ``torch.nn``'s)."""
import math

from ... import _creation as C
from .. import functional as F, init
from ..parameter import Parameter, UninitializedParameter
from .lazy import LazyModuleMixin
from .module import Module
from .utils import _ntuple, _reverse_repeat_tuple

# sets, printed as PyTorch prints them (same order within a process)
_PADDING_MODES = {"zeros", "reflect", "replicate", "circular"}
_PADDING_STRINGS = {"same", "valid"}


class _ConvNd(Module):
    """Shared state of the convolution layers: PyTorch's weight layout
    ((out, in / groups, *kernel), transposed: (in, out / groups, *kernel)), bias and default
    initialisation (kaiming_uniform_ with a=sqrt(5); bias from U(-1/sqrt(fan_in), ...))."""

    _dims = None
    _transposed = False

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1,
                 groups=1, bias=True, padding_mode="zeros", output_padding=0, device=None,
                 dtype=None):
        super().__init__()
        tup = _ntuple(self._dims)
        if groups <= 0:
            raise ValueError("groups must be a positive integer")
        if in_channels % groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups != 0:
            raise ValueError("out_channels must be divisible by groups")
        stride, dilation, kernel_size = tup(stride), tup(dilation), tup(kernel_size)
        if isinstance(padding, str):
            if padding not in _PADDING_STRINGS:
                raise ValueError(f"Invalid padding string {padding!r}, should be one of "
                                 f"{_PADDING_STRINGS}")
            if padding == "same" and any(s != 1 for s in stride):
                raise ValueError("padding='same' is not supported for strided convolutions")
        else:
            padding = tup(padding)
        if padding_mode not in _PADDING_MODES:
            raise ValueError(f"padding_mode must be one of {_PADDING_MODES}, but got "
                             f"padding_mode='{padding_mode}'")
        self.in_channels, self.out_channels = in_channels, out_channels
        self.kernel_size, self.stride, self.padding = kernel_size, stride, padding
        self.dilation, self.transposed = dilation, self._transposed
        self.output_padding, self.groups = tup(output_padding), groups
        self.padding_mode = padding_mode
        if padding == "same":   # F.pad's order: last dim first, (left, right) each
            pads = []
            for d, k in zip(reversed(dilation), reversed(kernel_size)):
                total = d * (k - 1)
                pads += [total // 2, total - total // 2]
            self._reversed_padding_repeated_twice = pads
        elif padding == "valid":
            self._reversed_padding_repeated_twice = [0, 0] * self._dims
        else:
            self._reversed_padding_repeated_twice = _reverse_repeat_tuple(padding, 2)
        shape = ((in_channels, out_channels // groups) if self._transposed
                 else (out_channels, in_channels // groups)) + kernel_size
        self.weight = Parameter(C.empty(shape, device=device, dtype=dtype))
        if bias:
            self.bias = Parameter(C.empty(out_channels, device=device, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            if fan_in != 0:
                bound = 1 / math.sqrt(fan_in)
                init.uniform_(self.bias, -bound, bound)

    def extra_repr(self):
        n = self._dims
        s = (f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, "
             f"stride={self.stride}")
        if self.padding != (0,) * n:
            s += f", padding={self.padding}"
        if self.dilation != (1,) * n:
            s += f", dilation={self.dilation}"
        if self.output_padding != (0,) * n:
            s += f", output_padding={self.output_padding}"
        if self.groups != 1:
            s += f", groups={self.groups}"
        if self.bias is None:
            s += ", bias=False"
        if self.padding_mode != "zeros":
            s += f", padding_mode={self.padding_mode}"
        return s


class _Conv(_ConvNd):
    fn = None

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1,
                 groups=1, bias=True, padding_mode="zeros", device=None, dtype=None):
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation,
                         groups, bias, padding_mode, device=device, dtype=dtype)

    def _conv_forward(self, input, weight, bias):
        conv = type(self).fn
        if self.padding_mode != "zeros":
            return conv(F.pad(input, self._reversed_padding_repeated_twice,
                              mode=self.padding_mode),
                        weight, bias, self.stride, 0, self.dilation, self.groups)
        return conv(input, weight, bias, self.stride, self.padding, self.dilation, self.groups)

    def forward(self, input):
        return self._conv_forward(input, self.weight, self.bias)


class Conv1d(_Conv):
    """Mirrors ``torch.nn.Conv1d``: (N, C_in, L) -> (N, C_out, L_out)."""
    _dims = 1
    fn = F.conv1d


class Conv2d(_Conv):
    """Mirrors ``torch.nn.Conv2d``: (N, C_in, H, W) -> (N, C_out, H_out, W_out)."""
    _dims = 2
    fn = F.conv2d


class Conv3d(_Conv):
    """Mirrors ``torch.nn.Conv3d``: (N, C_in, D, H, W) -> (N, C_out, D_out, H_out, W_out)."""
    _dims = 3
    fn = F.conv3d


class _ConvTransposeNd(_ConvNd):
    fn = None
    _transposed = True

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0,
                 output_padding=0, groups=1, bias=True, dilation=1, padding_mode="zeros",
                 device=None, dtype=None):
        if padding_mode != "zeros":
            raise ValueError(f'Only "zeros" padding mode is supported for {type(self).__name__}')
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation,
                         groups, bias, padding_mode, output_padding, device=device, dtype=dtype)

    def _output_padding(self, input, output_size):
        """The output_padding that makes the result ``output_size`` (PyTorch's rule)."""
        if output_size is None:
            return self.output_padding
        n = self._dims
        non_spatial = 2 if input.dim() == n + 2 else 1
        if len(output_size) == non_spatial + n:
            output_size = output_size[non_spatial:]
        if len(output_size) != n:
            raise ValueError(f"ConvTranspose{n}D: for {input.dim()}D input, output_size must "
                             f"have {n} or {non_spatial + n} elements (got {len(output_size)})")
        min_sizes = [(input.shape[d + non_spatial] - 1) * self.stride[d] - 2 * self.padding[d]
                     + self.dilation[d] * (self.kernel_size[d] - 1) + 1 for d in range(n)]
        max_sizes = [m + s - 1 for m, s in zip(min_sizes, self.stride)]
        for size, lo, hi in zip(output_size, min_sizes, max_sizes):
            if not lo <= size <= hi:
                raise ValueError(f"requested an output size of {output_size}, but valid sizes "
                                 f"range from {min_sizes} to {max_sizes} (for an input of "
                                 f"{input.shape[non_spatial:]})")
        return tuple(size - lo for size, lo in zip(output_size, min_sizes))

    def forward(self, input, output_size=None):
        return type(self).fn(input, self.weight, self.bias, self.stride, self.padding,
                             self._output_padding(input, output_size), self.groups,
                             self.dilation)


class ConvTranspose1d(_ConvTransposeNd):
    """Mirrors ``torch.nn.ConvTranspose1d`` (the gradient of Conv1d with respect to its
    input)."""
    _dims = 1
    fn = F.conv_transpose1d


class ConvTranspose2d(_ConvTransposeNd):
    """Mirrors ``torch.nn.ConvTranspose2d``."""
    _dims = 2
    fn = F.conv_transpose2d


class ConvTranspose3d(_ConvTransposeNd):
    """Mirrors ``torch.nn.ConvTranspose3d``."""
    _dims = 3
    fn = F.conv_transpose3d


# --- lazy convolutions: in_channels from the first input ----------------------------------------

class _LazyConvXdMixin(LazyModuleMixin):
    """Mirrors ``torch.nn.modules.conv._LazyConvXdMixin``: ``in_channels`` (0 until then) from
    the channel dim of the first input; the weight and bias take their shapes from it."""

    def reset_parameters(self):
        if not self.has_uninitialized_params() and self.in_channels != 0:
            super().reset_parameters()

    def initialize_parameters(self, input, *args, **kwargs):
        if self.has_uninitialized_params():
            self.in_channels = self._get_in_channels(input)
            if self.in_channels % self.groups != 0:
                raise ValueError("in_channels must be divisible by groups")
            if self.transposed:
                shape = (self.in_channels, self.out_channels // self.groups)
            else:
                shape = (self.out_channels, self.in_channels // self.groups)
            self.weight.materialize(shape + tuple(self.kernel_size))
            if self.bias is not None:
                self.bias.materialize((self.out_channels,))
            self.reset_parameters()

    def _get_in_channels(self, input):
        unbatched = self._dims + 1
        if input.dim() not in (unbatched, unbatched + 1):
            raise RuntimeError(f"Expected {unbatched}D (unbatched) or {unbatched + 1}D (batched) "
                               f"input to {type(self).__name__}, but got input of size: "
                               f"{input.shape}")
        return input.shape[1] if input.dim() == unbatched + 1 else input.shape[0]


class _LazyConv(_LazyConvXdMixin):
    def __init__(self, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1,
                 bias=True, padding_mode="zeros", device=None, dtype=None):
        # in and out channels 0 and no bias: no parameters are allocated before the first input
        super().__init__(0, 0, kernel_size, stride, padding, dilation, groups, False,
                         padding_mode, device=device, dtype=dtype)
        self.weight = UninitializedParameter(device=device, dtype=dtype)
        self.out_channels = out_channels
        if bias:
            self.bias = UninitializedParameter(device=device, dtype=dtype)
        self._register_lazy_hook()


class _LazyConvTranspose(_LazyConvXdMixin):
    def __init__(self, out_channels, kernel_size, stride=1, padding=0, output_padding=0,
                 groups=1, bias=True, dilation=1, padding_mode="zeros", device=None, dtype=None):
        super().__init__(0, 0, kernel_size, stride, padding, output_padding, groups, False,
                         dilation, padding_mode, device=device, dtype=dtype)
        self.weight = UninitializedParameter(device=device, dtype=dtype)
        self.out_channels = out_channels
        if bias:
            self.bias = UninitializedParameter(device=device, dtype=dtype)
        self._register_lazy_hook()


class LazyConv1d(_LazyConv, Conv1d):
    """Mirrors ``torch.nn.LazyConv1d``: a Conv1d whose ``in_channels`` comes from the first
    input; it then becomes a ``Conv1d``."""
    cls_to_become = Conv1d


class LazyConv2d(_LazyConv, Conv2d):
    """Mirrors ``torch.nn.LazyConv2d`` (becomes a ``Conv2d``)."""
    cls_to_become = Conv2d


class LazyConv3d(_LazyConv, Conv3d):
    """Mirrors ``torch.nn.LazyConv3d`` (becomes a ``Conv3d``)."""
    cls_to_become = Conv3d


class LazyConvTranspose1d(_LazyConvTranspose, ConvTranspose1d):
    """Mirrors ``torch.nn.LazyConvTranspose1d`` (becomes a ``ConvTranspose1d``)."""
    cls_to_become = ConvTranspose1d


class LazyConvTranspose2d(_LazyConvTranspose, ConvTranspose2d):
    """Mirrors ``torch.nn.LazyConvTranspose2d`` (becomes a ``ConvTranspose2d``)."""
    cls_to_become = ConvTranspose2d


class LazyConvTranspose3d(_LazyConvTranspose, ConvTranspose3d):
    """Mirrors ``torch.nn.LazyConvTranspose3d`` (becomes a ``ConvTranspose3d``)."""
    cls_to_become = ConvTranspose3d
