"""PyTorch's native kernels that ``torch.nn.functional`` exposes by name: ``conv_tbc`` and
``native_channel_shuffle``."""
import jax.numpy as jnp

from .. import _precision
from .._dispatch import Op, call
from .._tensor import Tensor


def _conv_tbc(x, weight, bias, pad, precision):
    """out[t] = bias + sum_k x_padded[t + k] @ weight[k], as PyTorch's kernel accumulates."""
    k = weight.shape[0]
    x = jnp.pad(x, ((pad, pad), (0, 0), (0, 0)))
    steps = x.shape[0] - k + 1
    out = jnp.broadcast_to(bias, (steps, x.shape[1], weight.shape[2]))
    for i in range(k):
        out = out + jnp.einsum("tbc,co->tbo", x[i:i + steps], weight[i],
                               precision=precision)
    return out


CONV_TBC = Op("conv_tbc", _conv_tbc, "ConvTbcBackward0")


def conv_tbc(input, weight, bias, pad=0):
    """Mirrors ``torch.nn.functional.conv_tbc``: a 1-d convolution of a (time, batch, channels)
    input with a (kernel width, in channels, out channels) weight, ``pad`` steps of zeros on
    both ends of time."""
    if not isinstance(pad, int) or isinstance(pad, bool):
        raise TypeError(f"conv_tbc(): argument 'pad' (position 4) must be int, not "
                        f"{type(pad).__name__}")
    if input.ndim != 3:
        raise RuntimeError("Input must have 3 dims: time, batch, in_channel")
    if weight.ndim != 3:
        raise RuntimeError("Weight tensor must have 3 dims: kernel_width, in_channels, "
                           "out_channels.")
    if bias.ndim != 1:
        raise RuntimeError("Bias must be 1-D")
    if input.shape[2] != weight.shape[1]:
        raise RuntimeError("Input dim 2 (input channels) is not == dim 1 in the weight tensor")
    if weight.shape[2] != bias.shape[0]:
        raise RuntimeError("Bias size must equal dim 2 in the weight tensor (output channels).")
    steps = input.shape[0] + 2 * pad - weight.shape[0] + 1
    if steps < 0:
        raise RuntimeError(f"Trying to create tensor with negative dimension {steps}: "
                           f"[{steps}, {input.shape[1]}, {weight.shape[2]}]")
    if input.dtype is not weight.dtype:
        raise RuntimeError(f"self and mat2 must have the same dtype, but got "
                           f"{input.dtype._scalar_name} and {weight.dtype._scalar_name}")
    return call(CONV_TBC, input, weight, bias, static=(("pad", pad),) + _precision.static())


def _channel_shuffle(x, groups):
    n, c = x.shape[:2]
    rest = x.shape[2:]
    return x.reshape((n, groups, c // groups) + rest).swapaxes(1, 2).reshape(x.shape)


NATIVE_CHANNEL_SHUFFLE = Op("native_channel_shuffle", _channel_shuffle, "NotImplemented",
                            saves=(), no_grad_reason=(
                                "derivative for aten::native_channel_shuffle is not implemented"))


def native_channel_shuffle(input, groups):
    """Mirrors ``torch.nn.functional.native_channel_shuffle``: ``channel_shuffle`` as PyTorch's
    native kernel, which has no derivative (its backward raises)."""
    if not isinstance(input, Tensor):
        raise TypeError(f"native_channel_shuffle(): argument 'input' (position 1) must be "
                        f"Tensor, not {type(input).__name__}")
    if input.ndim <= 2:
        raise RuntimeError(f"channel_shuffle expects input with > 2 dims, but got input with "
                           f"sizes {list(input.shape)}")
    if groups <= 0:
        raise RuntimeError(f"Number of groups to divide channels in must be positive. Value of "
                           f"groups:{groups}")
    if input.shape[1] % groups:
        raise RuntimeError(f"Number of channels must be divisible by groups. Got "
                           f"{input.shape[1]} channels and {groups} groups.")
    return call(NATIVE_CHANNEL_SHUFFLE, input, static=(("groups", int(groups)),))
