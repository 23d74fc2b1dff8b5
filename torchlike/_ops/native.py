"""PyTorch's native kernel that ``torch`` and ``torch.nn.functional`` expose by name:
``conv_tbc`` (``native_channel_shuffle`` is in spatial.py, with ``channel_shuffle``)."""
import jax.numpy as jnp

from .. import _amp_hook
from .. import _precision
from .._dispatch import Op, call


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


@_amp_hook.entry("conv_tbc")
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
