"""Pooling: max/avg pooling (1-d, 2-d, 3-d), adaptive avg/max pooling, power-average (lp) pooling
and max unpooling.

Each 2-d and 3-d pool is ONE op named as PyTorch's backward node (``MaxPool2DWithIndicesBackward0``,
``AvgPool3DBackward0``, ...); the 1-d versions are, as in PyTorch, the 2-d op between an
``unsqueeze`` and a ``squeeze`` (grad_fn ``SqueezeBackward1``).  lp_pool is PyTorch's composite
(pow, avg_pool, sign/relu/abs, mul, pow).

NOTE [ pooling windows ]
Window ``i`` along a dim starts at ``i * stride - padding`` and covers ``kernel`` elements
``dilation`` apart.  With ``ceil_mode`` the output gets one more window when it starts inside the
input or the left padding (PyTorch's rule); the right side is padded as far as that window needs.
Max pooling stacks the windows' elements (strided slices, one per kernel offset) and picks the
first maximum in row-major kernel order, so the gradient goes to that element alone and the
returned indices are flat positions in each input plane, as in PyTorch.  Avg pooling is one
``lax.reduce_window`` sum divided by PyTorch's divisor.  Adaptive pooling gathers PyTorch's windows
``[floor(i * in / out), ceil((i + 1) * in / out))``, each padded to the longest by repeating its
last element (masked out of the average), then reduces them.
"""
import math
from functools import partial

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from .. import _amp_hook
from .. import _dtype as D
from .._dispatch import Op, call
from . import pointwise as _pw, reduce as _reduce, shape as _shape, unary as _unary
from .conv import windows
from .padded import pooled_rows

_NUM = {1: "one", 2: "two", 3: "three"}
_AXES = {2: ("H", "W"), 3: ("T", "H", "W")}


# --- window geometry ----------------------------------------------------------------------------

def _out_size(size, k, s, p, d, ceil_mode):
    """Number of windows along one dim (NOTE [ pooling windows ])."""
    out = (size + 2 * p - d * (k - 1) - 1 + (s - 1 if ceil_mode else 0)) // s + 1
    if ceil_mode and (out - 1) * s >= size + p:
        out -= 1
    return out


def _geometry(spatial, kernel, stride, padding, dilation, ceil_mode):
    """(output sizes, (low, high) pads) of a pooling."""
    out = [_out_size(*a, ceil_mode) for a in zip(spatial, kernel, stride, padding, dilation)]
    pads = [(p, max(p, (o - 1) * s + d * (k - 1) + 1 - size - p))
            for size, k, s, p, d, o in zip(spatial, kernel, stride, padding, dilation, out)]
    return out, pads


def _lowest(dt):
    return -jnp.inf if jnp.issubdtype(dt, jnp.inexact) else jnp.iinfo(dt).min


def _flat_index(offset, n, kernel, stride, padding, dilation, spatial):
    """Flat positions in each input plane of the window elements picked by ``offset`` (the
    row-major index within each window)."""
    flat = 0
    for i in range(n - 1, -1, -1):
        k = offset % kernel[i]
        offset = offset // kernel[i]
        o = lax.broadcasted_iota(jnp.int64, k.shape, k.ndim - n + i)
        pos = o * stride[i] - padding[i] + k * dilation[i]
        flat = flat + pos * math.prod(spatial[i + 1:])
    return flat


def _upcast(x):
    """Half-precision pools accumulate in float32, as PyTorch's CPU kernels do."""
    return x.astype(jnp.float32) if x.dtype in (jnp.float16, jnp.bfloat16) else x


# --- the ops ------------------------------------------------------------------------------------

def _max_pool(x, kernel, stride, padding, dilation, ceil_mode):
    n = len(kernel)
    spatial = x.shape[-n:]
    out, pads = _geometry(spatial, kernel, stride, padding, dilation, ceil_mode)
    stack = windows(x, kernel, stride, dilation, pads, out, _lowest(x.dtype))
    axis = x.ndim - n
    arg = _reduce._argmax(stack, axis=axis, keepdims=True)
    values = jnp.squeeze(jnp.take_along_axis(stack, arg, axis=axis), axis)
    index = _flat_index(jnp.squeeze(arg, axis), n, kernel, stride, padding, dilation, spatial)
    return values, index


def _avg_pool(x, kernel, stride, padding, ceil_mode, count_include_pad, divisor_override):
    n = len(kernel)
    spatial, lead = x.shape[-n:], x.ndim - n
    out, pads = _geometry(spatial, kernel, stride, padding, (1,) * n, ceil_mode)
    acc = _upcast(x)
    total = lax.reduce_window(acc, np.zeros((), acc.dtype), lax.add, (1,) * lead + kernel,
                              (1,) * lead + stride, [(0, 0)] * lead + pads)
    if divisor_override:
        divisor = np.asarray(divisor_override)
    else:
        divisor = np.ones((), np.int64)
        for size, k, s, p, o in zip(spatial, kernel, stride, padding, out):
            start = np.arange(o) * s - p
            end = np.minimum(start + k, size + p)
            if not count_include_pad:
                start, end = np.maximum(start, 0), np.minimum(end, size)
            divisor = np.multiply.outer(divisor, end - start)
    if jnp.issubdtype(x.dtype, jnp.integer):   # C++ integer division truncates
        return lax.div(total, jnp.asarray(np.broadcast_to(divisor, total.shape), total.dtype))
    return (total / divisor.astype(acc.dtype)).astype(x.dtype)


def _adaptive_bounds(size, out):
    i = np.arange(out)
    return (i * size) // out, -((-(i + 1) * size) // out)


def _adaptive_gather(x, output_size):
    """The adaptive windows of x's last dims gathered as (..., *out, K1 * ... * Kn), each window
    padded to the longest (Ki) by repeating its last element; and per dim (start, end, Ki)."""
    n = len(output_size)
    lead = x.ndim - n
    g, dims = x, []
    for i, (size, o) in enumerate(zip(x.shape[lead:], output_size)):
        start, end = _adaptive_bounds(size, o)
        k = int(np.max(end - start))
        table = np.minimum(start[:, None] + np.arange(k), end[:, None] - 1)   # (out, k)
        g = jnp.take(g, table.reshape(-1), axis=lead + 2 * i)
        g = g.reshape(g.shape[:lead + 2 * i] + (o, k) + g.shape[lead + 2 * i + 1:])
        dims.append((start, end, k))
    # (..., o1, k1, o2, k2, ...) -> (..., o1, o2, ..., k1 * k2 * ...)
    perm = tuple(range(lead)) + tuple(lead + 2 * i for i in range(n)) + tuple(
        lead + 2 * i + 1 for i in range(n))
    k = math.prod(d[2] for d in dims)
    return jnp.transpose(g, perm).reshape(x.shape[:lead] + tuple(output_size) + (k,)), dims


def _adaptive_avg_pool(x, output_size):
    n = len(output_size)
    if 0 in output_size:
        return jnp.zeros(x.shape[:x.ndim - n] + tuple(output_size), x.dtype)
    g, dims = _adaptive_gather(_upcast(x), output_size)
    valid, count = np.ones((), bool), np.ones((), np.int64)
    for start, end, k in dims:
        valid = np.logical_and.outer(valid, np.arange(k) < (end - start)[:, None])   # (o, k)
        count = np.multiply.outer(count, end - start)
    # valid is (o1, k1, o2, k2, ...): put the window axes last, as in g
    valid = np.transpose(valid, tuple(range(0, 2 * n, 2)) + tuple(range(1, 2 * n, 2)))
    total = jnp.sum(jnp.where(valid.reshape(g.shape[x.ndim - n:]), g, 0), axis=-1)
    return (total / count.astype(g.dtype)).astype(x.dtype)


def _adaptive_max_pool(x, output_size):
    n = len(output_size)
    lead = x.ndim - n
    spatial = x.shape[lead:]
    if 0 in output_size:
        shape = x.shape[:lead] + tuple(output_size)
        return jnp.zeros(shape, x.dtype), jnp.zeros(shape, jnp.int64)
    g, dims = _adaptive_gather(x, output_size)
    arg = _reduce._argmax(g, axis=g.ndim - 1, keepdims=True)
    values = jnp.squeeze(jnp.take_along_axis(g, arg, axis=-1), -1)
    offset, flat = jnp.squeeze(arg, -1), 0
    for i in range(n - 1, -1, -1):
        start, end, k_i = dims[i]
        k = offset % k_i
        offset = offset // k_i
        o = lax.broadcasted_iota(jnp.int64, k.shape, k.ndim - n + i)
        pos = jnp.minimum(jnp.asarray(start)[o] + k, jnp.asarray(end)[o] - 1)
        flat = flat + pos * math.prod(spatial[i + 1:])
    return values, flat


def _scatter_planes(x, indices, output_size, add):
    n = len(output_size)
    lead = x.shape[:x.ndim - n]
    rows = math.prod(lead)
    xf, idx = x.reshape(rows, -1), indices.reshape(rows, -1)
    out = jnp.zeros((rows, math.prod(output_size)), x.dtype)
    at = out.at[jnp.arange(rows)[:, None], idx]
    out = at.add(xf, mode="drop") if add else at.set(xf, mode="drop")
    return out.reshape(lead + tuple(output_size))


@partial(jax.custom_jvp, nondiff_argnums=(2,))
def _max_unpool(x, indices, output_size):
    return _scatter_planes(x, indices, output_size, add=False)


@_max_unpool.defjvp
def _max_unpool_jvp(output_size, primals, tangents):
    # NOTE: PyTorch's gradient gathers the output gradient at every index, also where two
    # elements share an index; jax's scatter-set VJP would credit only the write that won.
    x, indices = primals
    return (_max_unpool(x, indices, output_size),
            _scatter_planes(tangents[0], indices, output_size, add=True))


# (a short batch runs a longer one's program: NOTE [ a short call in a longer one's program ])
MAX_POOL = {n: Op(f"max_pool{n}d_with_indices", _max_pool, f"MaxPool{n}DWithIndicesBackward0",
                  saves=(0,), bucket=pooled_rows) for n in (2, 3)}
AVG_POOL = {n: Op(f"avg_pool{n}d", _avg_pool, f"AvgPool{n}DBackward0", saves=(0,),
                  bucket=pooled_rows) for n in (2, 3)}
ADAPTIVE_AVG_POOL = {n: Op(f"adaptive_avg_pool{n}d", _adaptive_avg_pool,
                           f"AdaptiveAvgPool{n}DBackward0", saves=(0,), bucket=pooled_rows)
                     for n in (2, 3)}
ADAPTIVE_MAX_POOL = {n: Op(f"adaptive_max_pool{n}d", _adaptive_max_pool,
                           f"AdaptiveMaxPool{n}DBackward0", saves=(0,), bucket=pooled_rows)
                     for n in (2, 3)}
MAX_UNPOOL = {n: Op(f"max_unpool{n}d", _max_unpool, f"MaxUnpool{n}DBackward0", inputs=1,
                    saves=(1,)) for n in (2, 3)}


# --- argument checks (PyTorch's wording) --------------------------------------------------------

def _ints(value, n, message, default=None):
    """An int or a sequence of 1 or n ints as n ints; ``default`` for None or an empty one."""
    if default is not None and (value is None or (isinstance(value, (tuple, list))
                                                  and not value)):
        return default
    if isinstance(value, int):
        return (value,) * n
    value = tuple(value)
    if len(value) not in (1, n):
        raise RuntimeError(message(len(value)))
    return value * n if len(value) == 1 else value


def _one_int(fn, name):
    return lambda got: f"{fn}() argument '{name}' should contain one int (got {got})"


def _nd_message(fn, name, n):
    """PyTorch's message for a 2-d/3-d pooling argument of the wrong length."""
    if fn == "avg_pool3d":
        return lambda got: (f"avg_pool3d: {name} must be " + ("omitted, " if name == "stride"
                            else "") + "a single int, or a tuple of three ints")
    lead = "be either" if name == "dilation" else "either be"
    omitted = "omitted, " if name == "stride" else ""
    return lambda got: f"{fn}: {name} must {lead} {omitted}a single int, or a tuple of " \
                       f"{_NUM[n]} ints"


def _axes(prefix, values, n):
    """'kH: 2 kW: 3' (PyTorch's per-axis wording, depth axis first)."""
    return " ".join(f"{prefix}{a}: {v}" for a, v in zip(_AXES[n], values))


def _check_rank(x, n, kind):
    shape = list(x.shape)
    if kind == "max" or (kind == "avg" and n == 3):
        if x.ndim not in (n + 1, n + 2):
            raise RuntimeError(f"non-empty {n + 1}D or {n + 2}D (batch mode) tensor expected "
                               "for input")
    elif x.ndim < n + 1:
        d = max(x.ndim, 1)
        raise IndexError(f"Dimension out of range (expected to be in range of [{-d}, {d - 1}], "
                         f"but got {-n - 1})")
    elif x.ndim > n + 2:
        raise RuntimeError(f"Expected {n + 1}D or {n + 2}D (batch mode) tensor with optional 0 "
                           f"dim batch size for input, but got:{shape}")


def _check_pool(x, n, kind, kernel, stride, padding, dilation, ceil_mode):
    """PyTorch's checks of a 2-d/3-d pooling (after the rank check), in PyTorch's order.
    Returns the output spatial sizes."""
    shape = list(x.shape)
    spatial = shape[-n:]
    for k, s, p, d in zip(kernel, stride, padding, dilation):
        if s == 0:
            raise RuntimeError("stride should not be zero")
        if p < 0:
            raise RuntimeError(f"pad must be non-negative, but got pad: {p}")
        if p > ((k - 1) * d + 1) // 2:
            raise RuntimeError(f"pad should be at most half of effective kernel size, but got "
                               f"pad={p}, kernel_size={k} and dilation={d}")
    if any(k <= 0 for k in kernel):
        raise RuntimeError("kernel size should be greater than zero, but got "
                           + _axes("k", kernel, n))
    if any(s <= 0 for s in stride):
        raise RuntimeError("stride should be greater than zero, but got " + _axes("d", stride, n))
    if any(d <= 0 for d in dilation):
        raise RuntimeError("dilation should be greater than zero, but got "
                           + _axes("dilation", dilation, n))
    if 0 in shape[-(n + 1):]:
        if n == 2:
            raise RuntimeError("Expected 3D or 4D (batch mode) tensor with optional 0 dim batch "
                               f"size for input, but got:{shape}")
        where = "max_pool3d_with_indices_out_cpu_template" if kind == "max" else "avg_pool3d"
        # NOTE: PyTorch's message shows the empty dimension's size (0) where its index belongs
        raise RuntimeError(f"{where}(): Expected input's non-batch dimensions to have positive "
                           f"length, but input has a shape of {shape} and non-batch dimension 0 "
                           "has length zero!")
    if any(k // 2 < p for k, p in zip(kernel, padding)):
        if n == 2:
            raise RuntimeError(f"pad should be smaller than or equal to half of kernel size, but "
                               f"got padW = {padding[1]}, padH = {padding[0]}, kW = {kernel[1]}, "
                               f"kH = {kernel[0]}")
        raise RuntimeError(f"pad should be smaller than or equal to half of kernel size, but got "
                           f"kT: {kernel[0]} kW: {kernel[2]} kH: {kernel[1]} padT: {padding[0]} "
                           f"padW: {padding[2]} padH: {padding[1]}")
    if kind == "avg" and n == 3 and any(s < k for s, k in zip(spatial, kernel)):
        raise RuntimeError(f"input image (T: {spatial[0]} H: {spatial[1]} W: {spatial[2]}) "
                           f"smaller than kernel size (kT: {kernel[0]} kH: {kernel[1]} kW: "
                           f"{kernel[2]})")
    out = [_out_size(*a, ceil_mode) for a in zip(spatial, kernel, stride, padding, dilation)]
    if any(o < 1 for o in out):
        c = shape[-(n + 1)]
        raise RuntimeError(f"Given input size: ({'x'.join(map(str, [c] + spatial))}). Calculated "
                           f"output size: ({'x'.join(map(str, [c] + out))}). Output size is too "
                           "small")
    return out


def _check_dtype(kernel_name, x):
    dt = x.dtype
    if dt is D.bool_ or dt.is_complex:
        raise NotImplementedError(f"\"{kernel_name}\" not implemented for '{dt._scalar_name}'")


def _check_1d_rank(fn, x):
    if x.ndim not in (2, 3):
        raise RuntimeError(f"Expected 2 to 3 dimensions, but got {x.ndim}-dimensional tensor for "
                           f"argument #1 'self' (while checking arguments for {fn})")


# --- max pooling --------------------------------------------------------------------------------

def _max_pool_nd(n, input, kernel_size, stride, padding, dilation, ceil_mode):
    fn = f"max_pool{n}d"
    kernel = _ints(kernel_size, n, _nd_message(fn, "kernel_size", n))
    stride = _ints(stride, n, _nd_message(fn, "stride", n), default=kernel)
    padding = _ints(padding, n, _nd_message(fn, "padding", n))
    dilation = _ints(dilation, n, _nd_message(fn, "dilation", n))
    _check_rank(input, n, "max")
    _check_pool(input, n, "max", kernel, stride, padding, dilation, ceil_mode)
    _check_dtype(fn, input)
    static = (("kernel", kernel), ("stride", stride), ("padding", padding),
              ("dilation", dilation), ("ceil_mode", bool(ceil_mode)))
    return call(MAX_POOL[n], input, static=static)


def _max_pool1d_checks(input, kernel_size, stride, padding, dilation, ceil_mode):
    """PyTorch's checks of max_pool1d without indices (its own kernel's wording)."""
    def msg(name, extra=""):
        return lambda got: (f"max_pool1d() {name} must be {extra}an int, list of ints"
                            + ("," if name in ("stride", "padding") else "")
                            + f" or tuple of ints of size 1 but got size {got}")
    k, = _ints(kernel_size, 1, msg("kernel_size"))
    s, = _ints(stride, 1, msg("stride", "None, "), default=(k,))
    p, = _ints(padding, 1, msg("padding"))
    d, = _ints(dilation, 1, msg("dilation"))
    if input.ndim not in (2, 3) or 0 in input.shape[-2:]:
        raise RuntimeError("max_pool1d: Expected 2D or 3D (batch mode) tensor with optional 0 "
                           f"dim batch size for input, but got:{list(input.shape)}")
    for name, v in (("kernel_size", k), ("stride", s)):
        if v <= 0:
            raise RuntimeError(f"max_pool1d() {name} must be greater than zero, but got {v}")
    if p < 0:
        raise RuntimeError(f"max_pool1d() padding must be non-negative, but got {p}")
    if p > k // 2:
        raise RuntimeError(f"max_pool1d() padding should be at most half of kernel size, but got "
                           f"padding={p} and kernel_size={k}")
    if d <= 0:
        raise RuntimeError(f"max_pool1d() dilation must be greater than zero, but got {d}")
    out = _out_size(input.shape[-1], k, s, p, d, ceil_mode)
    if out < 1:
        raise RuntimeError(f"max_pool1d() Invalid computed output size: {out}")
    if not input.dtype.is_floating_point:
        raise NotImplementedError(f"\"max_pool1d_impl\" not implemented for "
                                  f"'{input.dtype._scalar_name}'")
    return k, s, p, d


def max_pool1d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1,
                            ceil_mode=False, return_indices=False):
    """Mirrors ``torch.nn.functional.max_pool1d_with_indices``: (values, indices) of a 1-d max
    pooling, computed as a 2-d one on ``input.unsqueeze(-2)``."""
    fn = "max_pool1d"
    kernel = _ints(kernel_size, 1, _one_int(fn, "kernel_size"))
    stride = _ints(stride, 1, _one_int(fn, "stride"), default=kernel)
    padding = _ints(padding, 1, _one_int(fn, "padding"))
    dilation = _ints(dilation, 1, _one_int(fn, "dilation"))
    _check_1d_rank(fn, input)
    values, indices = _max_pool_nd(2, _shape.unsqueeze(input, -2), (1,) + kernel, (1,) + stride,
                                   (0,) + padding, (1,) + dilation, ceil_mode)
    return _shape.squeeze(values, -2), _shape.squeeze(indices, -2)


def max_pool1d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    """Mirrors ``torch.nn.functional.max_pool1d``: the maximum of each window of ``kernel_size``
    elements of a (N, C, L) or (C, L) input; with ``return_indices`` also their positions.

    Example::

        >>> F.max_pool1d(torch.tensor([[[1., 3., 2., 5.]]]), 2)
        tensor([[[3., 5.]]])
    """
    if return_indices:
        return max_pool1d_with_indices(input, kernel_size, stride, padding, dilation, ceil_mode)
    k, s, p, d = _max_pool1d_checks(input, kernel_size, stride, padding, dilation, ceil_mode)
    values, _ = _max_pool_nd(2, _shape.unsqueeze(input, -2), (1, k), (1, s), (0, p), (1, d),
                             ceil_mode)
    return _shape.squeeze(values, -2)


def max_pool2d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1,
                            ceil_mode=False, return_indices=False):
    """Mirrors ``torch.nn.functional.max_pool2d_with_indices``: (values, indices)."""
    return _max_pool_nd(2, input, kernel_size, stride, padding, dilation, ceil_mode)


def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    """Mirrors ``torch.nn.functional.max_pool2d``: the maximum of each ``kernel_size`` window of
    a (N, C, H, W) or (C, H, W) input.  ``stride`` defaults to ``kernel_size``; ``padding``
    (at most half the effective kernel) counts as -inf; ``ceil_mode`` keeps a last partial
    window.  With ``return_indices`` also returns each maximum's flat position in its input
    plane (for ``max_unpool2d``).  The gradient goes to the first maximum of each window.

    Example::

        >>> y, idx = F.max_pool2d(torch.randn(1, 3, 8, 8), 2, return_indices=True)
        >>> y.shape
        torch.Size([1, 3, 4, 4])
    """
    values, indices = _max_pool_nd(2, input, kernel_size, stride, padding, dilation, ceil_mode)
    return (values, indices) if return_indices else values


def max_pool3d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1,
                            ceil_mode=False, return_indices=False):
    """Mirrors ``torch.nn.functional.max_pool3d_with_indices``: (values, indices)."""
    return _max_pool_nd(3, input, kernel_size, stride, padding, dilation, ceil_mode)


@_amp_hook.entry("max_pool3d")
def max_pool3d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    """Mirrors ``torch.nn.functional.max_pool3d``: max pooling of a (N, C, D, H, W) or
    (C, D, H, W) input (see ``max_pool2d``)."""
    values, indices = _max_pool_nd(3, input, kernel_size, stride, padding, dilation, ceil_mode)
    return (values, indices) if return_indices else values


# --- average pooling ----------------------------------------------------------------------------

def _avg_pool_nd(n, input, kernel, stride, padding, ceil_mode, count_include_pad,
                 divisor_override, fn=None):
    fn = fn or f"avg_pool{n}d"
    if fn != "avg_pool1d":
        kernel = _ints(kernel, n, _nd_message(fn, "kernel_size", n))
        stride = _ints(stride, n, _nd_message(fn, "stride", n), default=kernel)
        padding = _ints(padding, n, _nd_message(fn, "padding", n))
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    _check_rank(input, n, "avg")
    _check_pool(input, n, "avg", kernel, stride, padding, (1,) * n, ceil_mode)
    _check_dtype("avg_pool3d_out_frame" if n == 3 else "avg_pool2d", input)
    static = (("kernel", kernel), ("stride", stride), ("padding", padding),
              ("ceil_mode", bool(ceil_mode)), ("count_include_pad", bool(count_include_pad)),
              ("divisor_override", divisor_override))
    return call(AVG_POOL[n], input, static=static)


def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True):
    """Mirrors ``torch.nn.functional.avg_pool1d``: the mean of each ``kernel_size`` window of a
    (N, C, L) or (C, L) input (zero ``padding`` counts in the mean unless
    ``count_include_pad=False``)."""
    fn = "avg_pool1d"
    kernel = _ints(kernel_size, 1, _one_int(fn, "kernel_size"))
    stride = _ints(stride, 1, _one_int(fn, "stride"), default=kernel)
    padding = _ints(padding, 1, _one_int(fn, "padding"))
    _check_1d_rank(fn, input)
    out = _avg_pool_nd(2, _shape.unsqueeze(input, -2), (1,) + kernel, (1,) + stride,
                       (0,) + padding, ceil_mode, count_include_pad, None, fn=fn)
    return _shape.squeeze(out, -2)


def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True, divisor_override=None):
    """Mirrors ``torch.nn.functional.avg_pool2d``: the mean of each ``kernel_size`` window of a
    (N, C, H, W) or (C, H, W) input; the divisor is the window size (padding included unless
    ``count_include_pad=False``; a ``ceil_mode`` window is cut at the padding) or
    ``divisor_override``.  Integer inputs divide with truncation, as in PyTorch.

    Example::

        >>> F.avg_pool2d(torch.ones(1, 1, 4, 4), 2, padding=1, count_include_pad=False)
    """
    return _avg_pool_nd(2, input, kernel_size, stride, padding, ceil_mode, count_include_pad,
                        divisor_override)


@_amp_hook.entry("avg_pool3d")
def avg_pool3d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True, divisor_override=None):
    """Mirrors ``torch.nn.functional.avg_pool3d`` (see ``avg_pool2d``)."""
    return _avg_pool_nd(3, input, kernel_size, stride, padding, ceil_mode, count_include_pad,
                        divisor_override)


# --- adaptive pooling ---------------------------------------------------------------------------

def _adaptive_size(fn, n, output_size, one_int):
    if one_int:
        size = _ints(output_size, 1, _one_int(fn, "output_size"))
    elif isinstance(output_size, int):
        size = (output_size,) * n
    else:
        size = tuple(output_size)
    return size


def _adaptive_checks(kind, n, input, size, name):
    """PyTorch's checks of a 2-d/3-d adaptive pool (``name`` for the messages)."""
    shape = list(input.shape)
    if input.ndim not in (n + 1, n + 2):
        colon = ":" if kind == "max" else ""
        raise RuntimeError(f"{name}(): Expected {n + 1}D or {n + 2}D tensor, but got{colon} "
                           f"{shape}")
    if len(size) != n:
        if kind == "max":
            raise RuntimeError(f"{name}(): internal error: output_size.size() must be {n}")
        raise RuntimeError(f"{name}: output_size must be {n}")
    size = tuple(s if s is not None else shape[-n + i] for i, s in enumerate(size))
    if any(s < 0 for s in size):
        if kind == "max":
            raise RuntimeError(f"Trying to create tensor with negative dimension "
                               f"{min(size)}: {shape[:-n] + list(size)}")
        shown = ", ".join(map(str, size)) if n == 2 else f"{size[0]}, {size[1]},{size[2]}"
        raise RuntimeError(f"{name}: elements of output_size must be greater than or equal to 0 "
                           f"but received {{{shown}}}")
    first = 1 if input.ndim == n + 2 else 0
    dims = range(first if kind == "max" else input.ndim - n, input.ndim)
    for d in dims:
        if shape[d] == 0:
            raise RuntimeError(f"{name}(): Expected input to have non-zero size for non-batch "
                               f"dimensions, but input has sizes {shape} with dimension {d} "
                               "being empty")
    dt = input.dtype
    if not dt.is_floating_point:
        kernel = name if n == 2 else f"{name}_cpu"
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{dt._scalar_name}'")
    return size


def _adaptive_avg(n, input, output_size, fn):
    size = _adaptive_checks("avg", n, input, output_size, fn)
    if all(s == 1 for s in size):   # PyTorch takes the mean here (grad_fn MeanBackward1)
        return _reduce.mean(input, tuple(range(-n, 0)), keepdim=True)
    return call(ADAPTIVE_AVG_POOL[n], input, static=(("output_size", size),))


def adaptive_avg_pool1d(input, output_size):
    """Mirrors ``torch.nn.functional.adaptive_avg_pool1d``: averages over ``output_size``
    windows ``[floor(i * L / out), ceil((i + 1) * L / out))`` of a (N, C, L) or (C, L) input."""
    fn = "adaptive_avg_pool1d"
    size = _adaptive_size(fn, 1, output_size, one_int=True)
    _check_1d_rank(fn, input)
    if size[0] < 0:
        raise RuntimeError("adaptive_avg_pool2d: elements of output_size must be greater than or "
                           f"equal to 0 but received {{1, {size[0]}}}")
    out = _adaptive_avg(2, _shape.unsqueeze(input, -2), (1,) + size, "adaptive_avg_pool2d")
    return _shape.squeeze(out, -2)


def adaptive_avg_pool2d(input, output_size):
    """Mirrors ``torch.nn.functional.adaptive_avg_pool2d``: average pooling to a fixed
    ``output_size`` (an int, or a pair whose None entries keep the input size); output 1 is a
    plain mean, as in PyTorch.

    Example::

        >>> F.adaptive_avg_pool2d(torch.randn(2, 8, 7, 7), (3, None)).shape
        torch.Size([2, 8, 3, 7])
    """
    return _adaptive_avg(2, input, _adaptive_size("", 2, output_size, False),
                         "adaptive_avg_pool2d")


@_amp_hook.entry("adaptive_avg_pool3d")
def adaptive_avg_pool3d(input, output_size):
    """Mirrors ``torch.nn.functional.adaptive_avg_pool3d`` (see ``adaptive_avg_pool2d``)."""
    return _adaptive_avg(3, input, _adaptive_size("", 3, output_size, False),
                         "adaptive_avg_pool3d")


def _adaptive_max(n, input, output_size, fn):
    size = _adaptive_checks("max", n, input, output_size, fn)
    return call(ADAPTIVE_MAX_POOL[n], input, static=(("output_size", size),))


def adaptive_max_pool1d_with_indices(input, output_size, return_indices=False):
    """Mirrors ``torch.nn.functional.adaptive_max_pool1d_with_indices``: (values, indices)."""
    fn = "adaptive_max_pool1d"
    size = _adaptive_size(fn, 1, output_size, one_int=True)
    _check_1d_rank(fn, input)
    shape = list(input.shape)
    for d in range(1 if input.ndim == 3 else 0, input.ndim):
        if shape[d] == 0:
            raise RuntimeError(f"{fn}(): Expected input to have non-zero size for non-batch "
                               f"dimensions, but input has sizes {shape} with dimension {d} "
                               "being empty")
    values, indices = _adaptive_max(2, _shape.unsqueeze(input, -2), (1,) + size,
                                    "adaptive_max_pool2d")
    return _shape.squeeze(values, -2), _shape.squeeze(indices, -2)


def adaptive_max_pool1d(input, output_size, return_indices=False):
    """Mirrors ``torch.nn.functional.adaptive_max_pool1d``: the maximum over ``output_size``
    windows ``[floor(i * L / out), ceil((i + 1) * L / out))``; with ``return_indices`` also
    their positions."""
    out = adaptive_max_pool1d_with_indices(input, output_size)
    return out if return_indices else out[0]


def adaptive_max_pool2d_with_indices(input, output_size, return_indices=False):
    """Mirrors ``torch.nn.functional.adaptive_max_pool2d_with_indices``: (values, indices)."""
    return _adaptive_max(2, input, _adaptive_size("", 2, output_size, False),
                         "adaptive_max_pool2d")


def adaptive_max_pool2d(input, output_size, return_indices=False):
    """Mirrors ``torch.nn.functional.adaptive_max_pool2d``: max pooling to a fixed
    ``output_size`` (None entries keep the input size); with ``return_indices`` also each
    maximum's flat position in its input plane."""
    out = adaptive_max_pool2d_with_indices(input, output_size)
    return out if return_indices else out[0]


def adaptive_max_pool3d_with_indices(input, output_size, return_indices=False):
    """Mirrors ``torch.nn.functional.adaptive_max_pool3d_with_indices``: (values, indices)."""
    return _adaptive_max(3, input, _adaptive_size("", 3, output_size, False),
                         "adaptive_max_pool3d")


@_amp_hook.entry("adaptive_max_pool3d")
def adaptive_max_pool3d(input, output_size, return_indices=False):
    """Mirrors ``torch.nn.functional.adaptive_max_pool3d`` (see ``adaptive_max_pool2d``)."""
    out = adaptive_max_pool3d_with_indices(input, output_size)
    return out if return_indices else out[0]


# --- power-average pooling (PyTorch's composite) ------------------------------------------------

def _lp_pool(n, input, norm_type, kernel_size, stride, ceil_mode):
    kernel = kernel_size if n == 1 else _ints(kernel_size, n, lambda got: (
        f"lp_pool{n}d: kernel_size must be an int or a tuple of {_NUM[n]} ints"))
    pool = {1: avg_pool1d, 2: avg_pool2d, 3: avg_pool3d}[n]
    if stride is not None:
        out = pool(input.pow(norm_type), kernel, stride, 0, ceil_mode)
    else:
        out = pool(input.pow(norm_type), kernel, padding=0, ceil_mode=ceil_mode)
    k = kernel if n == 1 else math.prod(kernel)
    return _pw.mul(_unary.sign(out), _pw.relu(_pw.abs(out))).mul(k).pow(1.0 / norm_type)


def lp_pool1d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """Mirrors ``torch.nn.functional.lp_pool1d``: ``(sum over each window of x ** p) ** (1/p)``
    (p = ``norm_type``), PyTorch's composite of pow, avg_pool1d, sign/relu/abs, mul and pow."""
    return _lp_pool(1, input, norm_type, kernel_size, stride, ceil_mode)


def lp_pool2d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """Mirrors ``torch.nn.functional.lp_pool2d``: power-average pooling (see ``lp_pool1d``)."""
    return _lp_pool(2, input, norm_type, kernel_size, stride, ceil_mode)


def lp_pool3d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """Mirrors ``torch.nn.functional.lp_pool3d``: power-average pooling (see ``lp_pool1d``)."""
    return _lp_pool(3, input, norm_type, kernel_size, stride, ceil_mode)


# --- max unpooling ------------------------------------------------------------------------------

def _unpool_size(input, n, kernel, stride, padding, output_size):
    """The output spatial size: the default one, or ``output_size`` checked against it."""
    spatial = list(input.shape[-n:])
    default = [(i - 1) * s - 2 * p + k for i, s, p, k in zip(spatial, stride, padding, kernel)]
    if output_size is None:
        return tuple(default)
    size = list(output_size)
    if len(size) == n + 2:
        size = size[2:]
    if len(size) != n:
        raise ValueError(f"output_size should be a sequence containing {n} or {n + 2} elements, "
                         f"but it has a length of '{len(output_size)}'")
    for d in range(n):
        lo, hi = default[d] - stride[d], default[d] + stride[d]
        if not lo < size[d] < hi:
            raise ValueError(f'invalid output_size "{output_size}" (dim {d} must be between {lo} '
                             f'and {hi})')
    return tuple(size)


def _max_unpool_nd(n, input, indices, size, label):
    shape, ishape = list(input.shape), list(indices.shape)
    if input.ndim not in (n + 1, n + 2):
        raise RuntimeError(f"Input to max_unpooling{n}d should be a {n + 1}d or {n + 2}d Tensor, "
                           f"but got a tensor with {input.ndim} dimensions.")
    if indices.dtype is not D.int64:
        raise RuntimeError("elements in indices should be type int64 but got: "
                           f"{indices.dtype._scalar_name}")
    if ishape != shape:
        raise RuntimeError(f"Expected shape of indices to be same as that of the input tensor "
                           f"({shape}) but got indices tensor with shape: {ishape}")
    for d in range(1 if input.ndim == n + 2 else 0, input.ndim):
        if shape[d] == 0:
            raise RuntimeError(f"max_unpooling{n}d_forward_out_cpu(): Expected input to have "
                               f"non-zero size for non-batch dimensions, but got {shape} with "
                               f"dimension {d} being empty.")
    if not input.dtype.is_floating_point:
        raise NotImplementedError(f"\"max_unpool{n}d\" not implemented for "
                                  f"'{input.dtype._scalar_name}'")
    arr = indices._value()
    if not isinstance(arr, jax.core.Tracer) and arr.size:   # eager-only value check
        bad = np.asarray(arr)
        bad = bad[(bad < 0) | (bad >= math.prod(label))]
        if bad.size:   # PyTorch's loop keeps the last one it finds
            raise RuntimeError(f"Found an invalid max index: {bad[-1]} (output volumes are of "
                               f"size {'x'.join(map(str, label))})")
    return call(MAX_UNPOOL[n], input, indices, static=(("output_size", tuple(size)),))


def _unpool_args(n, kernel_size, stride, padding):
    kernel = _ints(kernel_size, n, lambda got: f"kernel_size must have {n} elements")
    stride = _ints(stride, n, lambda got: f"stride must have {n} elements", default=kernel)
    padding = _ints(padding, n, lambda got: f"padding must have {n} elements")
    return kernel, stride, padding


def max_unpool1d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """Mirrors ``torch.nn.functional.max_unpool1d``: the partial inverse of max_pool1d: zeros
    with each value of ``input`` put back at its index (as a 2-d unpool of
    ``input.unsqueeze(-1)``)."""
    kernel, stride, padding = _unpool_args(1, kernel_size, stride, padding)
    size = _unpool_size(input, 1, kernel, stride, padding, output_size)
    if input.ndim not in (2, 3):
        raise RuntimeError(f"Input to max_unpooling2d should be a 3d or 4d Tensor, but got a "
                           f"tensor with {input.ndim + 1} dimensions.")
    out = _max_unpool_nd(2, _shape.unsqueeze(input, -1), _shape.unsqueeze(indices, -1),
                         size + (1,), size + (1,))
    return _shape.squeeze(out, -1)


@_amp_hook.entry("max_unpool2d")
def max_unpool2d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """Mirrors ``torch.nn.functional.max_unpool2d``: the partial inverse of max_pool2d: an
    output of ``output_size`` (by default ``(in - 1) * stride - 2 * padding + kernel_size``)
    that is zero except at ``indices``, which receive the values of ``input``.

    Example::

        >>> y, idx = F.max_pool2d(x, 2, return_indices=True)
        >>> F.max_unpool2d(y, idx, 2).shape == x.shape
        True
    """
    kernel, stride, padding = _unpool_args(2, kernel_size, stride, padding)
    size = _unpool_size(input, 2, kernel, stride, padding, output_size)
    return _max_unpool_nd(2, input, indices, size, size)


@_amp_hook.entry("max_unpool3d")
def max_unpool3d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """Mirrors ``torch.nn.functional.max_unpool3d`` (see ``max_unpool2d``)."""
    kernel, stride, padding = _unpool_args(3, kernel_size, stride, padding)
    size = _unpool_size(input, 3, kernel, stride, padding, output_size)
    return _max_unpool_nd(3, input, indices, size, size)


# NOTE: torch.adaptive_max_pool1d (top level) always returns (values, indices): it is
# adaptive_max_pool1d_with_indices here, so it is left out of PUBLIC.
PUBLIC = ("max_pool1d", "max_pool2d", "max_pool3d", "max_pool1d_with_indices", "avg_pool1d",
          "adaptive_avg_pool1d")
TENSOR_METHODS = {}
