"""Fractional max pooling (Graham, 2014): ``fractional_max_pool2d`` / ``3d`` of
``torchlike.nn.functional``.

NOTE [ fractional max pooling ]
Each output cell takes the maximum of a ``kernel_size`` window whose start along a dim of input
size n, output size m and kernel k is PyTorch's pseudo-random sequence, computed in the input's
dtype from one sample u in [0, 1) per (batch, channel, dim):
``alpha = (n - k) / (m - 1)``, ``start_i = int((i + u) * alpha) - int(u * alpha)`` for
i < m - 1 and ``start_{m-1} = n - k``.  The samples are ``_random_samples`` (N, C, dims) with
the last dim ordered as PyTorch reads it (2-d: width, height; 3-d: time, height, width), drawn
uniformly when not given.  The index of a window's maximum is its flat position in the input
plane; a NaN wins (the last one in the window), as in PyTorch's kernel.  The gradient goes to
that index only.
"""
import math

import jax.numpy as jnp

from .. import _amp_hook
from .. import _x64
from .._dispatch import Op, call


def _starts(u, n, m, k, dtype):
    """Window starts (..., m) along one dim from samples u (...)."""
    if m == 1:
        return jnp.full(u.shape + (1,), n - k, jnp.int64)
    alpha = jnp.asarray(n - k, dtype) / jnp.asarray(m - 1, dtype)
    i = jnp.arange(m - 1, dtype=dtype)
    head = (jnp.trunc((i + u[..., None]) * alpha).astype(jnp.int64)
            - jnp.trunc(u * alpha).astype(jnp.int64)[..., None])
    return jnp.concatenate([head, jnp.full(u.shape + (1,), n - k, jnp.int64)], -1)


def _fractional_max_pool(x, samples, kernel, output_size, order):
    """(values, indices) of x (N, C, *spatial); ``order[d]`` is the samples' column of dim d."""
    n = len(kernel)
    spatial = x.shape[-n:]
    lead = x.shape[:-n]                      # (N, C), or (C,) unbatched
    samples = samples.reshape(lead + (n,))
    flat = x.reshape(lead + (-1,))
    strides = [math.prod(spatial[d + 1:]) for d in range(n)]
    # the flat index of every window element: (N, C, *out, *kernel), by broadcasting per dim
    index = jnp.zeros(lead + (1,) * (2 * n), jnp.int64)
    for d in range(n):
        starts = _starts(samples[..., order[d]], spatial[d], output_size[d], kernel[d], x.dtype)
        pos = starts[..., :, None] + jnp.arange(kernel[d])            # (N, C, out_d, k_d)
        shape = [1] * (2 * n)
        shape[d], shape[n + d] = output_size[d], kernel[d]
        index = index + (pos * strides[d]).reshape(lead + tuple(shape))
    index = index.reshape(lead + tuple(output_size) + (-1,))          # window in scan order
    window = jnp.take_along_axis(flat, index.reshape(lead + (-1,)), -1).reshape(index.shape)
    nan = jnp.isnan(window)
    last_nan = window.shape[-1] - 1 - _x64.argmax(nan[..., ::-1], -1)
    pick = jnp.where(nan.any(-1), last_nan, _x64.argmax(window, -1))
    indices = jnp.take_along_axis(index, pick[..., None], -1)[..., 0]
    values = jnp.take_along_axis(flat, indices.reshape(lead + (-1,)), -1).reshape(indices.shape)
    return values, indices


FRACTIONAL_MAX_POOL = {
    n: Op(f"fractional_max_pool{n}d", _fractional_max_pool, f"FractionalMaxPool{n}DBackward0",
          inputs=1)
    for n in (2, 3)}
_ORDER = {2: (1, 0), 3: (0, 1, 2)}      # the samples' column for each spatial dim
_DIM_NAMES = {2: ("height", "width"), 3: ("time", "height", "width")}


def _tuple(value, n):
    return tuple(value) if isinstance(value, (tuple, list)) else (value,) * n


def _fractional(n, input, kernel_size, output_size, output_ratio, samples):
    name = f"fractional_max_pool{n}d"
    if output_size is None and output_ratio is None:
        raise ValueError(f"{name} requires specifying either an output_size or an output_ratio")
    if output_size is None:
        if n == 2 and len(output_ratio) > 2:
            raise ValueError(f"{name} requires output_ratio to either be a single Int or tuple "
                             "of Ints.")
        ratio = _tuple(output_ratio, n)
        output_size = [int(input.shape[d - n] * ratio[d]) for d in range(n)]
    if samples is None:
        from .._random import rand
        batch = 1 if input.dim() == n + 1 else input.shape[0]
        samples = rand(batch, input.shape[-n - 1], n, dtype=input.dtype, device=input.device)
    kernel = tuple(int(k) for k in _tuple(kernel_size, n))
    output_size = tuple(int(m) for m in _tuple(output_size, n))
    if input.dim() not in (n + 1, n + 2):
        raise RuntimeError(f"{name}(): Expected {n + 1}D or {n + 2}D tensor, but got: "
                           f"{list(input.shape)}")
    if samples.dtype is not input.dtype:
        raise RuntimeError("Expect _random_samples to have the same dtype as input")
    if samples.shape[1] != input.shape[-n - 1]:
        raise RuntimeError("Expect _random_samples.size(1) equals to input channel size.")
    if samples.shape[2] != n:
        raise RuntimeError(f"Expect _random_samples.size(2) equals to {n}; got "
                           f"{samples.shape[2]}.")
    spatial = input.shape[-n:]
    for d in range(n):
        if output_size[d] + kernel[d] - 1 > spatial[d]:
            dim = _DIM_NAMES[n][d]
            raise RuntimeError(f"{name}(): pool {dim} {kernel[d]} too large relative to input "
                               f"{dim} {spatial[d]}")
    return call(FRACTIONAL_MAX_POOL[n], input, samples, static=(
        ("kernel", kernel), ("output_size", output_size), ("order", _ORDER[n])))


def fractional_max_pool2d_with_indices(input, kernel_size, output_size=None, output_ratio=None,
                                       return_indices=False, _random_samples=None):
    """Mirrors ``torch.nn.functional.fractional_max_pool2d_with_indices``: (values, indices)
    (NOTE [ fractional max pooling ])."""
    return _fractional(2, input, kernel_size, output_size, output_ratio, _random_samples)


@_amp_hook.entry("fractional_max_pool2d")
def fractional_max_pool2d(input, kernel_size, output_size=None, output_ratio=None,
                          return_indices=False, _random_samples=None):
    """Mirrors ``torch.nn.functional.fractional_max_pool2d``: max pooling of a (N, C, H, W) or
    (C, H, W) input over pseudo-random windows of ``kernel_size`` that give ``output_size`` (or
    ``output_ratio`` of the input size); with ``return_indices`` also each maximum's flat
    position in its plane (NOTE [ fractional max pooling ])."""
    values, indices = _fractional(2, input, kernel_size, output_size, output_ratio,
                                  _random_samples)
    return (values, indices) if return_indices else values


def fractional_max_pool3d_with_indices(input, kernel_size, output_size=None, output_ratio=None,
                                       return_indices=False, _random_samples=None):
    """Mirrors ``torch.nn.functional.fractional_max_pool3d_with_indices``: (values, indices)."""
    return _fractional(3, input, kernel_size, output_size, output_ratio, _random_samples)


@_amp_hook.entry("fractional_max_pool3d")
def fractional_max_pool3d(input, kernel_size, output_size=None, output_ratio=None,
                          return_indices=False, _random_samples=None):
    """Mirrors ``torch.nn.functional.fractional_max_pool3d``: the 3-d form of
    ``fractional_max_pool2d`` on (N, C, T, H, W) or (C, T, H, W) inputs."""
    values, indices = _fractional(3, input, kernel_size, output_size, output_ratio,
                                  _random_samples)
    return (values, indices) if return_indices else values

