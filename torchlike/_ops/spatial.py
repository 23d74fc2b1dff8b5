"""Padding, resampling and spatial rearrangement: ``pad``, ``interpolate`` (and the deprecated
``upsample*``), ``grid_sample``, ``affine_grid``, ``pixel_shuffle``, ``pixel_unshuffle`` and
``channel_shuffle``.

Each PyTorch kernel is one Op whose backward node carries PyTorch's name (``ReflectionPad2D``,
``UpsampleBicubic2D``, ``GridSampler2D``, ...); the gradients are jax.vjp of the forward.

NOTE [ resampling tables ]
``interpolate`` is separable: along each spatial axis, output ``i`` is a weighted sum of a few
input elements.  The indices and weights depend only on static sizes and scales, so they are
computed with numpy while tracing, in the precision PyTorch's CPU kernels use (float32 for
float32 and narrower inputs, float64 for float64), following PyTorch's formulas for the source
index: ``scale * (i + 0.5) - 0.5`` (``scale * i`` with ``align_corners``), where ``scale`` is
``1 / scale_factor`` when a scale factor is used directly, else ``in / out``.  The Op then
gathers (``jnp.take`` with constant indices) and sums, one axis after another.
"""
import functools
import math
import numbers
import operator
import warnings

import jax
import jax.numpy as jnp
import numpy as np

from .. import _amp_hook
from .. import _dtype as D, _precision
from .._dispatch import Op, call
from .._host import moved_on_host
from .._size import int_arg
from .._tensor import Tensor

# --- pad ----------------------------------------------------------------------------------------


def _constant_pad(x, pads, value=0):
    # lax.pad takes negative widths as cropping, as PyTorch's constant_pad_nd does
    return jax.lax.pad(x, jnp.asarray(value, x.dtype), [(lo, hi, 0) for lo, hi in pads])


def _crop_then(fn):
    """A padding mode applied after negative widths crop the input (PyTorch's circular pad)."""
    def padded(x, pads):
        x = jax.lax.pad(x, jnp.zeros((), x.dtype),
                        [(min(lo, 0), min(hi, 0), 0) for lo, hi in pads])
        return fn(x, [(max(lo, 0), max(hi, 0)) for lo, hi in pads])
    return padded


def _then_crop(fn):
    """A padding mode whose negative widths crop its result (PyTorch's reflection and
    replication pads index the padded input this way)."""
    def padded(x, pads):
        y = fn(x, [(max(lo, 0), max(hi, 0)) for lo, hi in pads])
        return jax.lax.pad(y, jnp.zeros((), x.dtype),
                           [(min(lo, 0), min(hi, 0), 0) for lo, hi in pads])
    return padded


def _padded(arrays, static, dt):
    """A pad with zeros (no cropping) of a new small shape, on the host (NOTE [ new shapes moved
    on the host ])."""
    return moved_on_host(CONSTANT_PAD, static, arrays, _pad_on_host, _zeros_around)


def _zeros_around(static, arrays):
    kw = dict(static)
    value = kw.get("value", 0)
    return type(value) in (int, float) and not value and all(
        lo >= 0 and hi >= 0 for lo, hi in kw["pads"])


def _pad_on_host(static, x):   # (-0.0 stays -0.0, as lax.pad's)
    kw = dict(static)
    pads, value = kw["pads"], kw.get("value", 0)
    out = np.full([n + lo + hi for n, (lo, hi) in zip(x.shape, pads)], value, x.dtype)
    out[tuple([slice(lo, lo + n) for n, (lo, _) in zip(x.shape, pads)])] = x
    return out


CONSTANT_PAD = Op("constant_pad_nd", _constant_pad, "ConstantPadNdBackward0", saves=(),
                  cold=_padded)
REFLECTION_PAD = {k: Op(f"reflection_pad{k}d", _then_crop(lambda x, p: jnp.pad(x, p, "reflect")),
                        f"ReflectionPad{k}DBackward0", saves=()) for k in (1, 2, 3)}
REPLICATION_PAD = {k: Op(f"replication_pad{k}d", _then_crop(lambda x, p: jnp.pad(x, p, "edge")),
                         f"ReplicationPad{k}DBackward0", saves=()) for k in (1, 2, 3)}
# NOTE: PyTorch pads circularly with a chain of slice copies (its grad_fn is CopySlices, whose
# next_functions are CopySlices and SliceBackward0); here it is one Op with that node name.
CIRCULAR_PAD = Op("_pad_circular", _crop_then(lambda x, p: jnp.pad(x, p, "wrap")), "CopySlices",
                  saves=())


def _pad_pairs(ndim, pad):
    """PyTorch's flat pad (last dim first) -> one (before, after) pair per dim."""
    pairs = [(0, 0)] * ndim
    for i in range(len(pad) // 2):
        pairs[ndim - 1 - i] = (pad[2 * i], pad[2 * i + 1])
    return tuple(pairs)


def _int_tuple(fname, pad):
    pad = tuple(pad)
    for i, p in enumerate(pad):
        if isinstance(p, Tensor) and p.ndim == 0 and not p.is_floating_point():
            p = int(p)
        if isinstance(p, bool) or not isinstance(p, numbers.Integral):
            raise TypeError(f"{fname}(): argument 'pad' (position 2) must be tuple of ints, but "
                            f"found element of type {type(p).__name__} at pos {i}")
    return tuple(int(p) for p in pad)


def constant_pad_nd(input, pad, value=0):
    """Mirrors ``torch.constant_pad_nd``: pad with ``value`` (``pad`` pairs from the last dim
    backwards; negative widths crop)."""
    pad = _int_tuple("constant_pad_nd", pad)
    if len(pad) % 2:
        raise RuntimeError(f"Length of pad must be even but instead it equals {len(pad)}")
    if len(pad) // 2 > input.ndim:
        raise RuntimeError(
            "Length of pad should be no more than twice the number of dimensions of the input. "
            f"Pad length is {len(pad)}while the input has {input.ndim}dimensions.")
    return _constant(input, pad, value)


def _constant(input, pad, value):
    pairs = _pad_pairs(input.ndim, pad)
    if any(s + lo + hi < 0 for s, (lo, hi) in zip(input.shape, pairs)):
        raise RuntimeError("narrow(): length must be non-negative.")
    return call(CONSTANT_PAD, input, static=(("pads", pairs), ("value", value)))


_NON_CONSTANT_HELP = (
    "\nSupported combinations for non-constant padding:\n"
    "  - 2D or 3D input: padding size = 2 (pads last dimension)\n"
    "  - 3D or 4D input: padding size = 4 (pads last 2 dimensions)\n"
    "  - 4D or 5D input: padding size = 6 (pads last 3 dimensions)")


def _pad_rows(input, pad, mode="constant", value=None):
    """The autocast row F.pad reaches: PyTorch's reflection / replication pad of that rank."""
    kind = {"reflect": "reflection", "replicate": "replication"}.get(mode)
    if kind is None or not isinstance(pad, (tuple, list)):
        return ()
    return (f"{kind}_pad{len(pad) // 2}d",)


@_amp_hook.entry(_pad_rows)
def pad(input, pad, mode="constant", value=None):
    """Mirrors ``torch.nn.functional.pad``: ``pad`` lists (before, after) widths from the last
    dim backwards; ``mode`` is 'constant' (``value``; negative widths crop), 'reflect',
    'replicate' or 'circular' (these pad the last 1, 2 or 3 dims of a batched or unbatched
    input).

    Example:
        >>> F.pad(torchlike.arange(3.), (1, 2), value=-1.)
        tensor([-1.,  0.,  1.,  2., -1., -1.])
    """
    pad = _int_tuple("pad", pad)
    if mode not in ("constant", "reflect", "replicate", "circular"):
        raise NotImplementedError(f"Unrecognised padding mode {mode}")
    if mode == "constant":
        if len(pad) % 2:
            raise RuntimeError("Padding length must be divisible by 2")
        if len(pad) // 2 > input.ndim:
            raise RuntimeError(
                "Padding length should be less than or equal to two times the input dimension "
                f"but got padding length {len(pad)} and input of dimension {input.ndim}")
        return _constant(input, pad, 0.0 if value is None else value)
    if value is not None and value != 0:
        raise RuntimeError(f'Padding mode "{mode}" doesn\'t take in value argument')
    k = len(pad) // 2
    if len(pad) not in (2, 4, 6) or input.ndim not in (k + 1, k + 2):
        raise NotImplementedError(f"Padding size {len(pad)} is not supported for {input.ndim}D "
                                  f"input tensor.{_NON_CONSTANT_HELP}")
    pairs = _pad_pairs(input.ndim, pad)
    sizes = input.shape[-k:]
    out = [s + lo + hi for s, (lo, hi) in zip(sizes, pairs[-k:])]
    if mode == "circular":
        if any(max(lo, hi) > s for s, (lo, hi) in zip(sizes, pairs[-k:])):
            raise RuntimeError("Padding value causes wrapping around more than once.")
        if any(o < 0 for o in out):
            raise RuntimeError("Negative padding value is resulting in an empty dimension")
        return call(CIRCULAR_PAD, input, static=(("pads", pairs),))
    if any(s == 0 for s in input.shape[input.ndim - k - 1:]):
        raise RuntimeError(f"Expected {k + 1}D or {k + 2}D (batch mode) tensor with possibly 0 "
                           "batch size and other non-zero dimensions for input, but got: "
                           f"{list(input.shape)}")
    if input.dtype is D.bool_:
        kernel = "reflection" if mode == "reflect" else "replication"
        raise NotImplementedError(f'"{kernel}_pad{k}d" not implemented for \'Bool\'')
    if mode == "reflect":
        for i in range(k):
            d = input.ndim - 1 - i
            lo, hi = pairs[d]
            if lo >= input.shape[d] or hi >= input.shape[d]:
                raise RuntimeError(
                    f"Argument #{4 + 2 * i}: Padding size should be less than the corresponding "
                    f"input dimension, but got: padding ({lo}, {hi}) at dimension {d} of input "
                    f"{list(input.shape)}")
    if any(o < 1 for o in out):
        names = "DHW"[3 - k:]
        raise RuntimeError(
            f"input ({', '.join(f'{n}: {s}' for n, s in zip(names, sizes))}) is too small. "
            f"Calculated output {' '.join(f'{n}: {o}' for n, o in zip(names, out))}")
    op = (REFLECTION_PAD if mode == "reflect" else REPLICATION_PAD)[k]
    return call(op, input, static=(("pads", pairs),))


# --- interpolate --------------------------------------------------------------------------------

def _linear_filter(x):
    return np.maximum(1 - np.abs(x), 0)


def _cubic_filter(a):
    """Keys' cubic convolution kernel with parameter ``a`` (PyTorch: -0.75, antialiased -0.5)."""
    def f(x):
        x = np.abs(x)
        near = ((a + 2) * x - (a + 3)) * x * x + 1
        far = ((a * x - 5 * a) * x + 8 * a) * x - 4 * a
        return np.where(x < 1, near, np.where(x < 2, far, 0))
    return f


def _lanczos_filter(x):
    return np.where(np.abs(x) < 3, np.sinc(x) * np.sinc(x / 3), 0)


_AA_FILTERS = {"bilinear": (2, _linear_filter), "bicubic": (4, _cubic_filter(-0.5)),
               "lanczos": (6, _lanczos_filter)}


def _area_scale(ct, n_in, n_out, align, scale):
    """PyTorch's area_pixel_compute_scale, in the compute type ``ct``."""
    if align:
        return ct(n_in - 1) / ct(n_out - 1) if n_out > 1 else ct(0)
    return ct(1.0 / scale) if scale else ct(n_in) / ct(n_out)


def _axis_table(kind, n_in, n_out, align, scale, ct, shortcut=False):
    """(indices (n_out, K), weights (n_out, K) or None): one axis of NOTE [ resampling tables ].
    ``shortcut``: PyTorch's 2-D nearest kernel copies an axis whose size stays and halves the
    index of one whose size doubles, whatever the scale factor (its 1-D and 3-D kernels don't).
    """
    i = np.arange(n_out)
    if kind in ("nearest", "nearest-exact"):
        s = np.float32(1.0 / scale) if scale else np.float32(n_in) / np.float32(n_out)
        if kind == "nearest-exact":
            src = np.floor(((i + 0.5) * np.float64(s)).astype(np.float32))
        elif shortcut and n_out == n_in:
            src = i
        elif shortcut and n_out == 2 * n_in:
            src = i >> 1
        else:
            src = np.floor(i.astype(np.float32) * s)
        return np.minimum(src.astype(np.int64), n_in - 1)[:, None], None
    if n_in == n_out and kind != "cubic":
        return i[:, None], None     # PyTorch skips an axis whose size stays (even if scaled)
    s = _area_scale(ct, n_in, n_out, align, scale)
    if kind in _AA_FILTERS:
        size, filt = _AA_FILTERS[kind]
        support = size * ct(0.5) * s if s >= 1 else ct(size * 0.5)
        invscale = ct(1) / s if s >= 1 else ct(1)
        center = (np.float64(s) * (i + 0.5)).astype(ct)
        lo = np.maximum((center - np.float64(support) + 0.5).astype(np.int64), 0)
        count = np.minimum((center + np.float64(support) + 0.5).astype(np.int64), n_in) - lo
        taps = np.arange(max(int(count.max()), 1))
        w = filt(((taps + lo[:, None]).astype(ct) - center[:, None] + ct(0.5)) * invscale)
        w = np.where(taps < count[:, None], w, 0).astype(ct)
        total = w.sum(1, keepdims=True)
        w = np.where(total != 0, w / np.where(total != 0, total, 1), w)
        return np.minimum(taps + lo[:, None], n_in - 1), w
    src = (s * i.astype(ct) if align else s * (i.astype(ct) + ct(0.5)) - ct(0.5)).astype(ct)
    if kind == "linear":
        src = np.maximum(src, ct(0))
    idx = np.minimum(np.floor(src).astype(np.int64), n_in - 1)
    t = np.clip(src - idx.astype(ct), 0, 1).astype(ct)
    if kind == "linear":
        return np.stack([idx, np.minimum(idx + 1, n_in - 1)], 1), np.stack([1 - t, t], 1)
    taps = np.clip(idx[:, None] + np.arange(-1, 3), 0, n_in - 1)
    return taps, np.stack([_cubic_filter(-0.75)(t + d) for d in (1, 0, -1, -2)], 1).astype(ct)


def _resample(x, kind, out_size, align, scales):
    narrow = jnp.issubdtype(x.dtype, jnp.floating) and x.dtype.itemsize < 4
    ct = np.float64 if x.dtype == jnp.float64 else np.float32
    y = x.astype(jnp.float32) if narrow else x
    for d in range(len(out_size)):
        axis = 2 + d
        idx, w = _axis_table(kind, x.shape[axis], out_size[d], align, scales[d], ct,
                             shortcut=kind == "nearest" and len(out_size) == 2)
        if w is None:
            y = jnp.take(y, jnp.asarray(idx[:, 0]), axis=axis)
            continue
        bshape = (-1,) + (1,) * (y.ndim - axis - 1)
        y = sum(jnp.take(y, jnp.asarray(idx[:, k]), axis=axis)
                * jnp.asarray(w[:, k], y.dtype).reshape(bshape) for k in range(idx.shape[1]))
    return y.astype(x.dtype) if narrow else y


_UPSAMPLE_NODES = {
    ("nearest", 1): "UpsampleNearest1D", ("nearest", 2): "UpsampleNearest2D",
    ("nearest", 3): "UpsampleNearest3D", ("nearest-exact", 1): "UpsampleNearestExact1D",
    ("nearest-exact", 2): "UpsampleNearestExact2D", ("nearest-exact", 3): "UpsampleNearestExact3D",
    ("linear", 1): "UpsampleLinear1D", ("linear", 2): "UpsampleBilinear2D",
    ("linear", 3): "UpsampleTrilinear3D", ("cubic", 2): "UpsampleBicubic2D",
    ("bilinear", 2): "UpsampleBilinear2DAa", ("bicubic", 2): "UpsampleBicubic2DAa",
    ("lanczos", 2): "UpsampleLanczos2DAa"}
UPSAMPLE = {key: Op("upsample", _resample, node + "Backward0", saves=())
            for key, node in _UPSAMPLE_NODES.items()}

_MODE_DIMS = {"linear": 3, "bilinear": 4, "trilinear": 5}


def _is_int(v):
    return isinstance(v, numbers.Integral) and not isinstance(v, bool) or (
        isinstance(v, Tensor) and v.ndim == 0 and not v.is_floating_point())


def _size_list(dim, input, size, scale_factor):
    """(output sizes, scale factors or None) as F.interpolate's Python prologue settles them."""
    spatial = list(input.shape[2:])
    if size is not None and scale_factor is not None:
        raise ValueError("only one of size or scale_factor should be defined")
    if size is not None:
        if isinstance(size, (list, tuple)):
            if len(size) != dim:
                raise ValueError(
                    "Input and output must have the same number of spatial dimensions, but got "
                    f"input with spatial dimensions of {spatial} and output size of {size}. "
                    "Please provide input tensor in (N, C, d1, d2, ...,dK) format and output size "
                    "in (o1, o2, ...,oK) format.")
            if not all(_is_int(s) for s in size):
                raise TypeError("expected size to be one of int or Tuple[int] or Tuple[int, int] "
                                "or Tuple[int, int, int], but got size with types "
                                f"{[type(s) for s in size]}")
            return [int(s) for s in size], None
        if not _is_int(size):   # PyTorch's upsample kernel refuses it (a TypeError)
            raise TypeError("expected size to be one of int or Tuple[int] or Tuple[int, int] or "
                            f"Tuple[int, int, int], but got size of type {type(size)}")
        return [int(size)] * dim, None
    if scale_factor is None:
        raise ValueError("either size or scale_factor should be defined")
    if isinstance(scale_factor, (list, tuple)):
        if len(scale_factor) != dim:
            raise ValueError(
                "Input and scale_factor must have the same number of spatial dimensions, but got "
                f"input with spatial dimensions of {spatial} and scale_factor of shape "
                f"{scale_factor}. Please provide input tensor in (N, C, d1, d2, ...,dK) format "
                "and scale_factor in (s1, s2, ...,sK) format.")
        return None, [float(s) for s in scale_factor]
    return None, [float(scale_factor)] * dim


@_amp_hook.entry("interpolate")
def interpolate(input, size=None, scale_factor=None, mode="nearest", align_corners=None,
                recompute_scale_factor=None, antialias=False):
    """Mirrors ``torch.nn.functional.interpolate``: resize the spatial dims of an (N, C, ...)
    input to ``size`` or by ``scale_factor``.

    ``mode``: 'nearest', 'nearest-exact', 'linear' (3-D), 'bilinear' / 'bicubic' (4-D),
    'trilinear' (5-D), 'area' (adaptive average pooling) or 'lanczos' (4-D, antialiased).
    A ``scale_factor`` is used as given for the coordinate mapping unless
    ``recompute_scale_factor=True``, as in PyTorch; bicubic uses a = -0.75 and clamps at the
    border; ``antialias`` widens the bilinear/bicubic filter when downsampling (PIL's filters).

    Example:
        >>> F.interpolate(torchlike.ones(1, 1, 2, 2), scale_factor=2).shape
        torchlike.Size([1, 1, 4, 4])
    """
    if mode in ("nearest", "area", "nearest-exact"):
        if align_corners is not None:
            raise ValueError("align_corners option can only be set with the interpolating modes: "
                             "linear | bilinear | bicubic | trilinear")
    elif align_corners is None:
        align_corners = False
    dim = input.ndim - 2
    out_size, scales = _size_list(dim, input, size, scale_factor)
    if recompute_scale_factor and size is not None:
        raise ValueError("recompute_scale_factor is not meaningful with an explicit size.")
    if mode == "area" and out_size is None:
        recompute_scale_factor = True
    if recompute_scale_factor:
        out_size = [math.floor(float(input.shape[2 + i] * scales[i])) for i in range(dim)]
        scales = None
    if antialias and not (mode in ("bilinear", "bicubic", "lanczos") and input.ndim == 4):
        raise ValueError("Anti-alias option is restricted to bilinear, bicubic, and lanczos modes "
                         "and requires a 4-D tensor as input")
    known = ("nearest", "nearest-exact", "area", "linear", "bilinear", "trilinear", "bicubic",
             "lanczos")
    if mode in known and 3 <= input.ndim <= 5:
        need = _MODE_DIMS.get(mode, 4 if mode in ("bicubic", "lanczos") else input.ndim)
        if need != input.ndim and mode in _MODE_DIMS:
            raise NotImplementedError(f"Got {input.ndim}D input, but {mode} mode needs "
                                      f"{need}D input")
        if input.ndim == need:
            if mode == "area":
                from . import pool   # pool imports conv, which imports this module
                return getattr(pool, f"adaptive_avg_pool{dim}d")(input, out_size)
            if mode == "lanczos":
                if align_corners:
                    raise ValueError("Lanczos mode does not support align_corners=True")
                if not antialias:
                    raise ValueError("Lanczos mode requires antialias=True")
            return _upsample(input, mode, out_size, scales, align_corners, antialias)
    raise NotImplementedError(
        f"Input Error: Only 3D, 4D and 5D input Tensors supported (got {input.ndim}D) for the "
        "modes: nearest | linear | bilinear | bicubic | trilinear | lanczos | area | "
        f"nearest-exact (got {mode})")


def _upsample(input, mode, out_size, scales, align, antialias):
    dim = input.ndim - 2
    if out_size is None:
        out_size = [int(math.floor(s * f)) for s, f in zip(input.shape[2:], scales)]
    sizes = list(input.shape[2:])
    if min(sizes + out_size) <= 0:
        names = "DHW"[3 - dim:]
        raise RuntimeError(
            "Input and output sizes should be greater than 0, but got input ("
            + ", ".join(f"{n}: {s}" for n, s in zip(names, sizes)) + ")"
            + (" and" if dim == 1 else "") + " output ("
            + ", ".join(f"{n}: {s}" for n, s in zip(names, out_size)) + ")")
    if input.shape[1] == 0:
        raise RuntimeError(f"Non-empty {input.ndim}D data tensor expected but got a tensor with "
                           f"sizes {list(input.shape)}")
    nearest = mode.startswith("nearest")
    dt = input.dtype
    if not dt.is_floating_point and not (nearest and dt is D.uint8):
        kernel = {"nearest": f"upsample_nearest{dim}d", "nearest-exact":
                  f"_upsample_nearest_exact{dim}d"}.get(mode, f"upsample_{mode}{dim}d")
        raise NotImplementedError(f'"{kernel}" not implemented for \'{dt._scalar_name}\'')
    kind = mode if nearest or antialias else ("cubic" if mode == "bicubic" else "linear")
    static = (("kind", kind), ("out_size", tuple(out_size)),
              ("align", bool(align) if not nearest else False),
              ("scales", tuple(scales) if scales is not None else (None,) * dim))
    return call(UPSAMPLE[(kind, dim)], input, static=static)


def upsample(input, size=None, scale_factor=None, mode="nearest", align_corners=None):
    """Mirrors ``torch.nn.functional.upsample`` (deprecated): ``interpolate`` with a warning."""
    warnings.warn("`nn.functional.upsample` is deprecated. Use `nn.functional.interpolate` "
                  "instead.", stacklevel=2)
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input, size=None, scale_factor=None):
    """Mirrors ``torch.nn.functional.upsample_nearest`` (deprecated): nearest ``interpolate``."""
    warnings.warn("`nn.functional.upsample_nearest` is deprecated. Use "
                  "`nn.functional.interpolate` instead.", stacklevel=2)
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input, size=None, scale_factor=None):
    """Mirrors ``torch.nn.functional.upsample_bilinear`` (deprecated): bilinear ``interpolate``
    with ``align_corners=True``."""
    warnings.warn("`nn.functional.upsample_bilinear` is deprecated. Use "
                  "`nn.functional.interpolate` instead.", stacklevel=2)
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)


# --- grid_sample, affine_grid -------------------------------------------------------------------

def _clip(c, size):
    # NOTE: a select, not jnp.clip: PyTorch's gradient is 0 at the clip limits themselves
    return jnp.where(c <= 0, jnp.zeros_like(c), jnp.where(c >= size - 1, size - 1.0, c))


def _reflect(c, twice_low, twice_high):
    if twice_low == twice_high:
        return jnp.zeros_like(c)
    low, span = twice_low / 2, (twice_high - twice_low) / 2
    c = jnp.abs(c - low)
    extra, flips = jnp.fmod(c, span), jnp.floor(c / span)
    return jnp.where(flips % 2 == 0, extra + low, span - extra + low)


def _padded(c, size, padding, align):
    """PyTorch's compute_coordinates: apply the padding mode to a pixel coordinate."""
    if padding == "border":
        c = _clip(c, size)
    elif padding == "reflection":
        c = _reflect(c, 0, 2 * (size - 1)) if align else _reflect(c, -1, 2 * size - 1)
        c = _clip(c, size)
    # coordinates that are not finite or do not fit an int fall outside, as in PyTorch
    return jnp.where(jnp.isfinite(c) & (jnp.abs(c) < 2.0 ** 31), c, -100.0)


def _unnormalize(g, size, align):
    return (g + 1) / 2 * (size - 1) if align else ((g + 1) * size - 1) / 2


def _grid_sample(x, grid, mode, padding, align):
    n, c, sizes = x.shape[0], x.shape[1], x.shape[2:]
    nd, out = len(sizes), grid.shape[1:-1]
    coords = [_unnormalize(grid[..., nd - 1 - d], sizes[d], align) for d in range(nd)]
    if mode != "bicubic":
        coords = [_padded(g, s, padding, align) for g, s in zip(coords, sizes)]
    # per spatial dim: the taps' integer coordinates and weights along a trailing axis
    taps, weights = [], []
    for g, s in zip(coords, sizes):
        if mode == "nearest":
            taps.append(jnp.round(g)[..., None])   # half to even, as PyTorch's nearbyint
            continue
        lo = jnp.floor(g)
        t = g - lo
        if mode == "bilinear":
            taps.append(lo[..., None] + jnp.asarray([0, 1], g.dtype))
            weights.append(jnp.stack([1 - t, t], -1))
        else:   # bicubic: the padding mode applies to each of the 4 taps
            taps.append(_padded(lo[..., None] + jnp.asarray([-1, 0, 1, 2], g.dtype), s,
                                padding, align))
            weights.append(jnp.stack([_cubic_w(t, k) for k in range(4)], -1))

    def spread(a, d):   # (..., K) -> (..., 1, .., K at tap axis d, .., 1)
        return a.reshape(a.shape[:-1] + tuple(a.shape[-1] if i == d else 1 for i in range(nd)))

    inside, lin = True, 0
    for d, (i, s) in enumerate(zip(taps, sizes)):
        i = spread(i, d)
        inside = inside & (i >= 0) & (i < s)
        lin = lin + jnp.clip(i, 0, s - 1).astype(jnp.int32) * int(np.prod(sizes[d + 1:]))
    lin = jnp.broadcast_to(lin, jnp.broadcast_shapes(lin.shape, jnp.shape(inside)))
    flat = x.reshape(n, c, int(np.prod(sizes)))
    vals = jax.vmap(lambda f, j: f[:, j])(flat, lin.reshape(n, int(np.prod(lin.shape[1:]))))
    vals = jnp.where(inside[:, None], vals.reshape((n, c) + lin.shape[1:]),
                     jnp.zeros((), x.dtype))
    if not weights:
        return vals.reshape((n, c) + out)
    w = _product(spread(wd, d) for d, wd in enumerate(weights))
    return jnp.sum(vals * w[:, None], axis=tuple(range(2 + len(out), vals.ndim)))


def _product(factors):
    return functools.reduce(operator.mul, factors)


def _cubic_w(t, k):
    """The k-th of PyTorch's four cubic convolution coefficients (a = -0.75) at offset t."""
    a = -0.75
    x = (t + 1, t, 1 - t, 2 - t)[k]
    if k in (1, 2):
        return ((a + 2) * x - (a + 3)) * x * x + 1
    return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a


GRID_SAMPLER = {2: Op("grid_sampler_2d", _grid_sample, "GridSampler2DBackward0"),
                3: Op("grid_sampler_3d", _grid_sample, "GridSampler3DBackward0")}

_ALIGN_WARNING = ("Default grid_sample and affine_grid behavior has changed to align_corners=False "
                  "since 1.3.0. Please specify align_corners=True if the old behavior is desired. "
                  "See the documentation of grid_sample for details.")


@_amp_hook.entry("grid_sample")
def grid_sample(input, grid, mode="bilinear", padding_mode="zeros", align_corners=None):
    """Mirrors ``torch.nn.functional.grid_sample``: sample ``input`` (N, C, H, W) or
    (N, C, D, H, W) at the normalised (x, y[, z]) locations of ``grid`` (N, H', W', 2) or
    (N, D', H', W', 3); ``mode`` 'bilinear', 'nearest' or 'bicubic' (4-D only), ``padding_mode``
    'zeros', 'border' or 'reflection'."""
    if mode not in ("bilinear", "nearest", "bicubic"):
        raise ValueError("nn.functional.grid_sample(): expected mode to be 'bilinear', 'nearest' "
                         f"or 'bicubic', but got: '{mode}'")
    if padding_mode not in ("zeros", "border", "reflection"):
        raise ValueError("nn.functional.grid_sample(): expected padding_mode to be 'zeros', "
                         f"'border', or 'reflection', but got: '{padding_mode}'")
    if align_corners is None:
        warnings.warn(_ALIGN_WARNING, stacklevel=_amp_hook.stacklevel(2))
        align_corners = False
    if input.dtype is not grid.dtype:
        raise RuntimeError(f"expected scalar type {input.dtype._scalar_name} but found "
                           f"{grid.dtype._scalar_name}")
    shapes = f"input with sizes {list(input.shape)} and grid with sizes {list(grid.shape)}"
    if input.ndim not in (4, 5) or grid.ndim != input.ndim:
        if grid.shape[-1] != input.ndim - 2:
            raise RuntimeError(f"grid_sampler(): expected grid to have size {input.ndim - 2} in "
                               f"last dimension, but got grid with sizes {list(grid.shape)}")
        raise RuntimeError("grid_sampler(): expected 4D or 5D input and grid with same number of "
                           f"dimensions, but got {shapes}")
    if input.shape[0] != grid.shape[0]:
        raise RuntimeError(f"grid_sampler(): expected grid and input to have same batch size, "
                           f"but got {shapes}")
    if grid.shape[-1] != input.ndim - 2:
        raise RuntimeError(f"grid_sampler(): expected grid to have size {input.ndim - 2} in last "
                           f"dimension, but got grid with sizes {list(grid.shape)}")
    for d in range(2, input.ndim):
        if input.shape[d] == 0:
            raise RuntimeError("grid_sampler(): expected input to have non-empty spatial "
                               f"dimensions, but input has sizes {list(input.shape)} with "
                               f"dimension {d} being empty")
    if mode == "bicubic" and input.ndim == 5:
        raise RuntimeError("grid_sampler(): bicubic interpolation only supports 4D input")
    if not input.dtype.is_floating_point:
        raise NotImplementedError(f'"grid_sampler_{input.ndim - 2}d_cpu_kernel_impl" not '
                                  f"implemented for '{input.dtype._scalar_name}'")
    static = (("mode", mode), ("padding", padding_mode), ("align", bool(align_corners)))
    return call(GRID_SAMPLER[input.ndim - 2], input, grid, static=static)


def _linspace_neg_one(n, align, dtype):
    """PyTorch's base-grid coordinates: linspace(-1, 1, n), shrunk by (n-1)/n unless aligned."""
    if n <= 1:
        return np.zeros(max(n, 1), dtype)
    step = dtype(2) / dtype(n - 1)
    i = np.arange(n)
    r = np.where(i < n // 2, dtype(-1) + step * i, dtype(1) - step * (n - 1 - i)).astype(dtype)
    return r if align else (r * dtype(n - 1) / dtype(n)).astype(dtype)


def _affine_grid(theta, size, align, precision):
    dtype = np.dtype(theta.dtype).type
    axes = [_linspace_neg_one(s, align, dtype) for s in size[2:]]   # (D,) H, W
    mesh = np.meshgrid(*axes, indexing="ij")
    base = np.stack(list(mesh)[::-1] + [np.ones_like(mesh[0])], -1)      # x, y[, z], 1
    return jnp.einsum("...k,nck->n...c", jnp.asarray(base), theta, precision=precision)


AFFINE_GRID = Op("affine_grid_generator", _affine_grid, "AffineGridGeneratorBackward0", saves=())


def affine_grid(theta, size, align_corners=None):
    """Mirrors ``torch.nn.functional.affine_grid``: the sampling grid (N, H, W, 2) or
    (N, D, H, W, 3) of the affine maps ``theta`` (N, 2, 3) or (N, 3, 4), for ``grid_sample``."""
    if align_corners is None:
        warnings.warn(_ALIGN_WARNING, stacklevel=2)
        align_corners = False
    if not theta.dtype.is_floating_point:
        raise ValueError(f"Expected theta to have floating point type, but got {theta.dtype}")
    size = tuple(size)
    if len(size) == 4:
        if theta.ndim != 3 or tuple(theta.shape[-2:]) != (2, 3):
            raise ValueError("Expected a batch of 2D affine matrices of shape Nx2x3 for size "
                             f"{size}. Got {theta.shape}.")
    elif len(size) == 5:
        if theta.ndim != 3 or tuple(theta.shape[-2:]) != (3, 4):
            raise ValueError("Expected a batch of 3D affine matrices of shape Nx3x4 for size "
                             f"{size}. Got {theta.shape}.")
    else:
        raise NotImplementedError("affine_grid only supports 4D and 5D sizes, for 2D and 3D "
                                  f"affine transforms, respectively. Got size {size}.")
    if align_corners and min(size[2:]) == 1:
        warnings.warn("Since version 1.3.0, affine_grid behavior has changed for unit-size grids "
                      "when align_corners=True. This is not an intended use case of affine_grid. "
                      "See the documentation of affine_grid for details.", stacklevel=2)
    if min(size) <= 0:
        raise ValueError(f"Expected non-zero, positive output size. Got {size}")
    if theta.shape[0] != size[0]:
        k = len(size) - 2
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                           f"[{size[0]}, {k + 1}] but got: [{theta.shape[0]}, {k + 1}].")
    return call(AFFINE_GRID, theta, static=(("size", tuple(int(s) for s in size)),
                                            ("align", bool(align_corners)))
                + _precision.static())


# --- pixel_shuffle, pixel_unshuffle, channel_shuffle --------------------------------------------

def _pixel_shuffle(x, r):
    *b, c, h, w = x.shape
    nb = len(b)
    y = x.reshape(*b, c // (r * r), r, r, h, w)
    y = jnp.transpose(y, tuple(range(nb)) + tuple(nb + i for i in (0, 3, 1, 4, 2)))
    return y.reshape(*b, c // (r * r), h * r, w * r)


def _pixel_unshuffle(x, r):
    *b, c, h, w = x.shape
    nb = len(b)
    y = x.reshape(*b, c, h // r, r, w // r, r)
    y = jnp.transpose(y, tuple(range(nb)) + tuple(nb + i for i in (0, 2, 4, 1, 3)))
    return y.reshape(*b, c * r * r, h // r, w // r)


def _channel_shuffle(x, groups):
    n, c, *rest = x.shape
    y = x.reshape(n, groups, c // groups, *rest)
    return jnp.swapaxes(y, 1, 2).reshape(x.shape)


PIXEL_SHUFFLE = Op("pixel_shuffle", _pixel_shuffle, "PixelShuffleBackward0", saves=())
PIXEL_UNSHUFFLE = Op("pixel_unshuffle", _pixel_unshuffle, "PixelUnshuffleBackward0", saves=())
CHANNEL_SHUFFLE = Op("channel_shuffle", _channel_shuffle, "ChannelShuffleBackward0", saves=())


def _check_factor(name, what, factor, input):
    if input.ndim < 3:
        raise RuntimeError(f"{name} expects input to have at least 3 dimensions, but got input "
                           f"with {input.ndim} dimension(s)")
    if factor <= 0:
        raise RuntimeError(f"{name} expects a positive {what}, but got {factor}")


def pixel_shuffle(input, upscale_factor):
    """Mirrors ``torch.nn.functional.pixel_shuffle``: (*, C r^2, H, W) -> (*, C, H r, W r)."""
    r = int_arg("pixel_shuffle", "upscale_factor", 2, upscale_factor)
    _check_factor("pixel_shuffle", "upscale_factor", r, input)
    if input.shape[-3] % (r * r):
        raise RuntimeError("pixel_shuffle expects its input's 'channel' dimension to be divisible "
                           f"by the square of upscale_factor, but input.size(-3)="
                           f"{input.shape[-3]} is not divisible by {r * r}")
    return call(PIXEL_SHUFFLE, input, static=(("r", r),))


def pixel_unshuffle(input, downscale_factor):
    """Mirrors ``torch.nn.functional.pixel_unshuffle``: (*, C, H r, W r) -> (*, C r^2, H, W)."""
    r = int_arg("pixel_unshuffle", "downscale_factor", 2, downscale_factor)
    _check_factor("pixel_unshuffle", "downscale_factor", r, input)
    for d, name in ((-2, "height"), (-1, "width")):
        if input.shape[d] % r:
            raise RuntimeError(f"pixel_unshuffle expects {name} to be divisible by "
                               f"downscale_factor, but input.size({d})={input.shape[d]} is not "
                               f"divisible by {r}")
    return call(PIXEL_UNSHUFFLE, input, static=(("r", r),))


def channel_shuffle(input, groups):
    """Mirrors ``torch.nn.functional.channel_shuffle``: split the C channels of (N, C, *) into
    ``groups`` and interleave them."""
    groups = _check_channel_shuffle(input, groups)
    return call(CHANNEL_SHUFFLE, input, static=(("groups", groups),))


NATIVE_CHANNEL_SHUFFLE = Op(
    "native_channel_shuffle", _channel_shuffle, "NotImplemented", saves=(),
    no_grad_reason="derivative for aten::native_channel_shuffle is not implemented")


def native_channel_shuffle(input, groups):
    """Mirrors ``torch.native_channel_shuffle``: ``channel_shuffle``'s kernel, which PyTorch
    records without a derivative (its backward raises)."""
    groups = _check_channel_shuffle(input, groups)
    return call(NATIVE_CHANNEL_SHUFFLE, input, static=(("groups", groups),))


def _check_channel_shuffle(input, groups):
    groups = int_arg("channel_shuffle", "groups", 2, groups)
    if input.ndim <= 2:
        raise RuntimeError("channel_shuffle expects input with > 2 dims, but got input with "
                           f"sizes {list(input.shape)}")
    if groups <= 0:
        raise RuntimeError("Number of groups to divide channels in must be positive. Value of "
                           f"groups:{groups}")
    if input.shape[1] % groups:
        raise RuntimeError(f"Number of channels must be divisible by groups. Got "
                           f"{input.shape[1]} channels and {groups} groups.")
    return groups


PUBLIC = ("constant_pad_nd", "pixel_shuffle", "pixel_unshuffle", "channel_shuffle",
          "native_channel_shuffle")
TENSOR_METHODS = {}
