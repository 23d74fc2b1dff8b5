"""``CrossMapLRN2d``'s function (mirrors ``torch.nn.modules._functions.CrossMapLRN2d``): the
legacy local response normalisation across channels of a 4-d input.

NOTE [ cross-map LRN ]
PyTorch computes ``scale[c] = k + alpha / size * S[c]`` by a running sum over channels:
``S[0]`` is the sum of squares of channels ``0 .. pre_pad - 1`` (``pre_pad = (size - 1) // 2 +
1``), then ``S[c] = S[c-1] + x[c + pre_pad - 1]^2`` while that channel exists, minus
``x[c - pre_pad]^2`` once ``c > pre_pad`` -- so channel 0 never leaves the sum; the output is
``x * scale^-beta``.  Its backward is a hand-written formula over a window of ``size`` channels
(``grad * scale^-beta - 2 alpha beta / size * x * sum(grad * output / scale)`` over channels
``c - p .. c - p + size - 1``, ``p = size - (size - 1) // 2``), not the derivative of that
forward; both are kept here as PyTorch has them (a custom VJP).
"""
import functools

import jax
import jax.numpy as jnp

from .. import _x64
from .._dispatch import Op, call


def _scale(x, size, alpha, k):
    channels = x.shape[1]
    sq = x * x
    pre_pad = int((size - 1) / 2 + 1)
    sums = [jnp.sum(sq[:, :min(pre_pad, channels)], axis=1)]
    for c in range(1, channels):
        s = sums[-1]
        if c < channels - pre_pad + 1:
            s = s + sq[:, c + pre_pad - 1]
        if c > pre_pad:
            s = s - sq[:, c - pre_pad]
        sums.append(s)
    return jnp.stack(sums, 1) * (alpha / size) + k


@functools.partial(jax.custom_vjp, nondiff_argnums=(1, 2, 3, 4))
def _cross_map_lrn(x, size, alpha, beta, k):
    return x * _scale(x, size, alpha, k) ** -beta


def _fwd(x, size, alpha, beta, k):
    scale = _scale(x, size, alpha, k)
    out = x * scale ** -beta
    return out, (x, out, scale)


@_x64.scoped   # NOTE [ custom_vjp rules and 64-bit types ] in _x64.py
def _bwd(size, alpha, beta, k, res, g):
    x, out, scale = res
    channels = x.shape[1]
    ratio = g * out / scale
    start = int(size - (size - 1) / 2)
    padded = jnp.pad(ratio, ((0, 0), (start, size - 1 - start)) + ((0, 0),) * (x.ndim - 2))
    window = sum(padded[:, i:i + channels] for i in range(size))
    return (scale ** -beta * g - (2 * alpha * beta / size) * x * window,)


_cross_map_lrn.defvjp(_fwd, _bwd)
CROSS_MAP_LRN2D = Op("cross_map_lrn2d", _cross_map_lrn, "CrossMapLRN2dBackward")


def cross_map_lrn2d(input, size, alpha=1e-4, beta=0.75, k=1):
    """Local response normalisation across the channels of a (N, C, H, W) input, as PyTorch's
    legacy ``CrossMapLRN2d`` computes it (NOTE [ cross-map LRN ])."""
    if input.dim() != 4:
        raise ValueError(f"CrossMapLRN2d: Expected input to be 4D, got {input.dim()}D instead.")
    return call(CROSS_MAP_LRN2D, input, static=(("size", size), ("alpha", alpha),
                                                ("beta", beta), ("k", k)))
