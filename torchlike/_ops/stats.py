"""Statistics of samples and numerical calculus: cov, corrcoef, histogram, histogramdd,
trapezoid / trapz / cumulative_trapezoid and gradient; and the reductions hash_tensor and
Tensor.sum_to_size.

All but the histograms are composites in PyTorch (ATen's Correlation.cpp, Integration.cpp,
ReduceOps.cpp), written here from the same ops in the same order, so the values, dtypes and the
graph (``cov``'s SqueezeBackward0, ``corrcoef``'s ClampBackward1) are PyTorch's.  Their Tensor
methods join the reduce family (reduce.py).
"""
import math
import warnings

import jax
import jax.numpy as jnp
import numpy as np

from .. import _dtype as D
from .. import return_types
from .._creation import from_host, scalar_tensor, zeros
from .._dispatch import Op, call
from .._tensor import Tensor, _wrap_dim
from .pointwise import DIV_SCALAR, MUL_SCALAR


def _mul(x, s):
    return call(MUL_SCALAR, x, s)


def _div(x, s):
    return call(DIV_SCALAR, x, s)


def _check_weights(w, name, n, kind_ok, kind):
    if w.ndim > 1:
        raise RuntimeError(f"cov(): expected {name} to have one or fewer dimensions but got "
                           f"{name} with {w.ndim} dimensions")
    if not kind_ok(w.dtype):
        raise RuntimeError(f"cov(): expected {name} to have {kind} dtype but got {name} with "
                           f"{w.dtype._scalar_name} dtype")
    if w.numel() != n:
        raise RuntimeError(f"cov(): expected {name} to have the same numel as there are "
                           f"observations in the input but got {w.numel()} != {n}")
    if n and not bool(w.min().ge(0)):
        raise RuntimeError(f"cov(): {name} cannot be negative")


def cov(input, *, correction=1, fweights=None, aweights=None):
    """Mirrors ``torch.cov``: the covariance matrix of the variables in ``input``'s rows (a 1-D
    input is one variable), observations in its columns, weighted by integer frequencies
    ``fweights`` and/or floating-point ``aweights``, normalised by the weights' sum less
    ``correction`` (1: Bessel's correction).  A 0-dim result for a single variable."""
    if input.ndim > 2:
        raise RuntimeError(f"cov(): expected input to have two or fewer dimensions but got an "
                           f"input with {input.ndim} dimensions")
    if input.dtype is D.bool_:
        raise RuntimeError("cov(): bool dtype is not supported for input")
    x = input.view(1, -1) if input.ndim < 2 else input
    n = x.shape[1]
    w = None
    if fweights is not None:
        _check_weights(fweights, "fweights", n,
                       lambda dt: not (dt.is_floating_point or dt.is_complex or dt is D.bool_),
                       "integral")
        w = fweights
    if aweights is not None:
        _check_weights(aweights, "aweights", n, lambda dt: dt.is_floating_point,
                       "floating point")
        w = aweights if w is None else w * aweights
    w_sum = scalar_tensor(n, dtype=D.int64, device=input.device) if w is None else w.sum()
    if w is not None and not bool(w_sum.ne(0)):
        raise RuntimeError("cov(): weights sum to zero, can't be normalized")
    avg = (x if w is None else x * w).sum(1) / w_sum
    if w is None:
        norm = scalar_tensor(n - correction, dtype=D.int64, device=input.device)
    elif correction == 0:
        norm = w_sum
    elif aweights is None:
        norm = w_sum - correction
    elif fweights is None and n == 1 and correction == 1:
        norm = scalar_tensor(0, dtype=D.int64, device=input.device)
    else:
        norm = w_sum - correction * (w * aweights).sum() / w_sum
    if bool(norm.le(0)):
        warnings.warn("cov(): degrees of freedom is <= 0. Correction should be strictly less "
                      "than the number of observations.", UserWarning, stacklevel=2)
        norm = norm.zero_()
    if n == 1 and (fweights is None) != (aweights is None):
        # NOTE: PyTorch's corner case for one observation with one kind of weights: the centred
        # input is 0, and it zeroes the input itself (in place, through the view) to get it.
        x = x.zero_()
        if not (x.dtype.is_floating_point or x.dtype.is_complex):
            x = x.to(D.float32)
    else:
        x = x - avg.unsqueeze(1)
    c = x.mm((x if w is None else x * w).t().conj())
    return c.div(norm).squeeze()


def corrcoef(input):
    """Mirrors ``torch.corrcoef``: Pearson's correlation coefficients of the variables in
    ``input``'s rows (``cov`` normalised by the standard deviations, clipped to [-1, 1])."""
    if input.ndim > 2:
        raise RuntimeError(f"corrcoef(): expected input to have two or fewer dimensions but got "
                           f"an input with {input.ndim} dimensions")
    c = cov(input)
    if c.ndim == 0:   # one variable: nan where the covariance is nan, inf or 0, else 1
        return c / c
    d = c.diagonal()
    stddev = (d.real if d.is_complex() else d).sqrt()
    c = c / stddev.view(-1, 1)
    c = c / stddev.view(1, -1)
    if c.is_complex():
        from .complex import complex as make_complex
        return make_complex(c.real.clip(-1, 1), c.imag.clip(-1, 1))
    return c.clip(-1, 1)


# --- histograms ---------------------------------------------------------------------------------

def _bin_counts(x, w, *edges, density):
    """The (weighted) counts of the rows of x (N, D) in the bins between ``edges`` (one sorted
    1-D array per dim; the last bin includes its right edge), and the edges themselves."""
    inside = jnp.ones(x.shape[0], bool)
    flat = jnp.zeros(x.shape[0], jnp.int64)
    for d, e in enumerate(edges):
        v, n = x[:, d], e.shape[0] - 1
        inside &= (v >= e[0]) & (v <= e[-1])
        flat = flat * n + jnp.clip(jnp.searchsorted(e, v, side="right") - 1, 0, n - 1)
    sizes = tuple(e.shape[0] - 1 for e in edges)
    weights = jnp.where(inside, jnp.ones(x.shape[0], x.dtype) if w is None else w, 0)
    hist = jnp.zeros(math.prod(sizes), x.dtype).at[flat].add(weights).reshape(sizes)
    if density:
        hist = hist / hist.sum()
        for d, e in enumerate(edges):
            hist = hist / jnp.diff(e).reshape([-1 if i == d else 1 for i in range(len(edges))])
    return (hist,) + edges


_HISTOGRAM_NO_GRAD = "derivative for aten::histogram is not implemented"
HISTOGRAMDD = {weighted: Op("histogramdd", (lambda x, w, *e, density: _bin_counts(
    x, w, *e, density=density)) if weighted else (lambda x, *e, density: _bin_counts(
        x, None, *e, density=density)), "NotImplemented", saves=(),
    no_grad_reason=_HISTOGRAM_NO_GRAD)
    for weighted in (False, True)}


def _linspace_edges(lo, hi, bins, dt):
    """ATen's linspace: forward from ``lo`` for the first half, back from ``hi`` after."""
    step = (hi - lo) / bins
    i = np.arange(bins + 1, dtype=np.float64)
    return np.where(i < (bins + 1) // 2, lo + step * i, hi - step * (bins - i)).astype(dt._np)


def _histogramdd(name, input, bins, range, weight, density):
    """hist and the list of bin-edge tensors of ``input``'s rows (its last dim: coordinates)."""
    if not input.dtype.is_floating_point:
        raise NotImplementedError(f'"histogramdd" not implemented for '
                                  f"'{input.dtype._scalar_name}'")
    if input.ndim < 2:
        raise RuntimeError("torch.histogramdd: input tensor should have at least 2 dimensions")
    n_dims = input.shape[-1]
    x = input.reshape(-1, n_dims)
    if weight is not None and tuple(weight.shape) != tuple(input.shape[:-1]):
        raise RuntimeError(f"torch.histogramdd: if weight tensor is provided it should have the "
                           f"same shape as the input tensor excluding its innermost dimension, but "
                           f"got input with shape {list(input.shape)} and weight with shape "
                           f"{list(weight.shape)}")
    if isinstance(bins, Tensor) or isinstance(bins, int):
        bins = [bins] * n_dims
    edges = []
    for d, b in enumerate(bins):
        if isinstance(b, Tensor):
            if b.dtype is not input.dtype:
                raise RuntimeError(f"torch.histogramdd: input tensor and bins tensors should have "
                                   f"the same dtype, but got input with dtype "
                                   f"{_c10(input.dtype)} and bins for dimension {d} with dtype "
                                   f"{_c10(b.dtype)}")
            edges.append(b)
            continue
        if b <= 0:
            raise RuntimeError(f"{name}(): bins must be > 0, but got {b} for dimension {d}")
        if range is not None:
            lo, hi = float(range[2 * d]), float(range[2 * d + 1])
        elif x.shape[0]:
            col = x[:, d]
            lo, hi = col.min().item(), col.max().item()
        else:
            lo, hi = 0.0, 1.0
        if not (math.isfinite(lo) and math.isfinite(hi)):
            raise RuntimeError(f"torch.histogramdd: dimension {d}'s range [{lo:g}, {hi:g}] is not "
                               f"finite")
        if lo > hi:
            raise RuntimeError(f"torch.histogramdd: min should not exceed max, but got min {lo:g} "
                               f"max {hi:g} for dimension {d}")
        if lo == hi:   # an empty range is widened, as NumPy does
            lo, hi = lo - 0.5, hi + 0.5
        edges.append(from_host(_linspace_edges(lo, hi, b, input.dtype), input))
    static = (("density", bool(density)),)
    if weight is None:
        out = call(HISTOGRAMDD[False], x, *edges, static=static)
    else:
        out = call(HISTOGRAMDD[True], x, weight.reshape(-1), *edges, static=static)
    return out[0], list(out[1:])


def _c10(dt):
    from .signal import _C10
    return _C10[dt._name]


def histogram(input, bins, *, range=None, weight=None, density=False, out=None):
    """Mirrors ``torch.histogram``: ``return_types.histogram(hist, bin_edges)``, the (weighted)
    counts of ``input``'s elements in ``bins`` equal bins over ``range`` (its min and max by
    default), or between the edges of a 1-D ``bins`` tensor; ``density`` normalises to a
    probability density.  Not differentiable, as in PyTorch."""
    hist, edges = _histogramdd("torch.histogram", input.reshape(-1, 1), [bins],
                               None if range is None else list(range),
                               None if weight is None else weight.reshape(-1), density)
    return return_types.histogram(hist, edges[0])


def histogramdd(input, bins=10, *, range=None, weight=None, density=False):
    """Mirrors ``torch.histogramdd``: ``return_types.histogramdd(hist, bin_edges)`` of the points
    in ``input``'s last dim; ``bins`` an int, one int per dim, or one edges tensor per dim;
    ``range`` the flat (min, max) pairs of every dim."""
    hist, edges = _histogramdd("torch.histogramdd", input, bins, range, weight, density)
    return return_types.histogramdd(hist, tuple(edges))


# --- trapezoid rule ---------------------------------------------------------------------------

def _sample_spacing(name, y, x, dim):
    """x's differences along dim, shaped to broadcast against y's (as ATen's trapezoid)."""
    if y.dtype is D.bool_ or x.dtype is D.bool_:
        raise RuntimeError(f"{name}: received a bool input for `x` or `y`, but bool is not "
                           f"supported")
    if x.ndim == 1:
        if x.shape[0] != y.shape[dim]:
            raise RuntimeError(f"{name}: There must be one `x` value for each sample point")
        shape = [1] * y.ndim
        shape[dim] = x.shape[0]
        x = x.view(shape)
    elif x.ndim < y.ndim:
        x = x.view([1] * (y.ndim - x.ndim) + list(x.shape))
    return x.narrow(dim, 1, x.shape[dim] - 1) - x.narrow(dim, 0, x.shape[dim] - 1)


def _scalar_dx(name, y, dx):
    if y.dtype is D.bool_:
        raise RuntimeError(f"{name}: received a bool input for `y`, but bool is not supported")
    if isinstance(dx, (bool, complex)):
        raise RuntimeError(f"{name}: Currently, we only support dx as a real number.")
    return float(dx)


def _pieces(y, dim):
    n = y.shape[dim]
    return y.narrow(dim, 0, max(n - 1, 0)), y.narrow(dim, 1, max(n - 1, 0))


def trapezoid(y, x=None, *, dx=None, dim=-1):
    """Mirrors ``torch.trapezoid``: the trapezoid rule along ``dim``, with sample points ``x``
    or a constant spacing ``dx`` (1 by default)."""
    dim = _wrap_dim(dim, y.ndim)
    if y.shape[dim] == 0:   # NumPy's 0 for no samples
        return zeros([s for i, s in enumerate(y.shape) if i != dim], dtype=y.dtype,
                     device=y.device)
    if x is not None:
        spacing = _sample_spacing("trapezoid", y, x, dim)
        left, right = _pieces(y, dim)
        return _div(((left + right) * spacing).sum(dim), 2.0)
    dx = _scalar_dx("trapezoid", y, 1 if dx is None else dx)
    return _mul(y.sum(dim) - _mul(y.select(dim, 0) + y.select(dim, -1), 0.5), dx)


def trapz(y, x=None, *, dx=None, dim=-1):
    """Mirrors ``torch.trapz`` (``trapezoid``)."""
    return trapezoid(y, x, dx=dx, dim=dim)


def cumulative_trapezoid(y, x=None, *, dx=None, dim=-1):
    """Mirrors ``torch.cumulative_trapezoid``: the running trapezoid-rule integral along
    ``dim`` (one element fewer than ``y`` there)."""
    dim = _wrap_dim(dim, y.ndim)
    left, right = _pieces(y, dim)
    if x is not None:
        spacing = _sample_spacing("cumulative_trapezoid", y, x, dim)
        return _div(((left + right) * spacing).cumsum(dim), 2.0)
    dx = _scalar_dx("cumulative_trapezoid", y, 1 if dx is None else dx)
    return _mul(left + right, dx / 2.0).cumsum(dim)


# --- gradient -----------------------------------------------------------------------------------

def _gradient_dims(input, spacing_size, dim, edge_order):
    """PyTorch's checks of gradient's arguments; the wrapped dims."""
    if input.dtype is D.uint8:
        raise RuntimeError("torch.gradient does not support uint8 input.")
    if spacing_size is not None and dim is None and spacing_size != input.ndim:
        raise RuntimeError(f"torch.gradient expected spacing to be unspecified, a scalar, or a "
                           f"list of length equal to 'self.dim() = {input.ndim}', since dim "
                           f"argument was not given, but got a list of length {spacing_size}")
    dims = list(range(input.ndim)) if dim is None else \
        [dim] if isinstance(dim, int) else list(dim)
    if spacing_size is not None and dim is not None and spacing_size != len(dims):
        raise RuntimeError(f"torch.gradient expected spacing to be unspecified, a scalar or it's "
                           f"spacing and dim arguments to have the same length, but got a spacing "
                           f"argument of length {spacing_size} and a dim argument of length "
                           f"{len(dims)}.")
    if edge_order not in (1, 2):
        raise RuntimeError("torch.gradient only supports edge_order=1 and edge_order=2.")
    dims = [_wrap_dim(d, input.ndim) for d in dims]
    if len(set(dims)) != len(dims):
        raise RuntimeError(f"dim {dims[0]} appears multiple times in the list of dims")
    for d in dims:
        if input.shape[d] < edge_order + 1:
            raise RuntimeError("torch.gradient expected each dimension size to be at least "
                               "edge_order+1")
    return dims


def _slice(x, dim, start, stop=None):
    n = x.shape[dim]
    start = start % n if start < 0 else start
    stop = n if stop is None else stop % n if stop < 0 else stop
    return x.narrow(dim, start, stop - start)


def _uniform_gradient(x, d, h, edge_order):
    center = _div(_slice(x, d, 2) - _slice(x, d, 0, -2), h)
    if edge_order == 1:
        first = _div(_slice(x, d, 1, 2) - _slice(x, d, 0, 1), h)
        last = _div(_slice(x, d, -1) - _slice(x, d, -2, -1), h)
    else:
        first = _div(_mul(_slice(x, d, 0, 1), -1.5) + _mul(_slice(x, d, 1, 2), 2)
                     - _mul(_slice(x, d, 2, 3), 0.5), h)
        last = _div(_mul(_slice(x, d, -3, -2), 0.5) - _mul(_slice(x, d, -2, -1), 2)
                    + _mul(_slice(x, d, -1), 1.5), h)
    return _div(center, 2), first, last


def _coordinate_gradient(x, d, coords, edge_order):
    if coords.ndim != 1:
        raise RuntimeError(f"torch.gradient expected each element of spacing to have one "
                           f"dimension, but got an element with {coords.ndim} dimensions!")
    shape = [1] * x.ndim
    shape[d] = -1
    h = coords.diff(1, 0)
    h1, h2 = _slice(h, 0, 0, -1), _slice(h, 0, 1)
    a = (-h2 / (h1 * (h1 + h2))).reshape(shape)
    b = ((h2 - h1) / (h1 * h2)).reshape(shape)
    c = (h1 / (h2 * (h1 + h2))).reshape(shape)
    center = a * _slice(x, d, 0, -2) + b * _slice(x, d, 1, -1) + c * _slice(x, d, 2)
    if edge_order == 1:
        first = (_slice(x, d, 1, 2) - _slice(x, d, 0, 1)) / h[0]
        last = (_slice(x, d, -1) - _slice(x, d, -2, -1)) / h[-1]
    else:
        a = -(2.0 * h[0] + h[1]) / (h[0] * (h[0] + h[1]))
        b = (h[0] + h[1]) / (h[0] * h[1])
        c = -h[0] / (h[1] * (h[0] + h[1]))
        first = a * _slice(x, d, 0, 1) + b * _slice(x, d, 1, 2) + c * _slice(x, d, 2, 3)
        a = h[-1] / (h[-2] * (h[-1] + h[-2]))
        b = -(h[-1] + h[-2]) / (h[-1] * h[-2])
        c = (2 * h[-1] + h[-2]) / (h[-1] * (h[-1] + h[-2]))
        last = a * _slice(x, d, -3, -2) + b * _slice(x, d, -2, -1) + c * _slice(x, d, -1)
    return center, first, last


def gradient(input, *, spacing=1, dim=None, edge_order=1):
    """Mirrors ``torch.gradient``: a tuple of the derivative estimates along each of ``dim``
    (every dim by default), by second-order central differences inside and one-sided
    differences of order ``edge_order`` at the ends; ``spacing`` is a number, one per dim, or
    one tensor of coordinates per dim."""
    from .shape import cat
    many = isinstance(spacing, (list, tuple))
    dims = _gradient_dims(input, len(spacing) if many else None, dim, edge_order)
    steps = list(spacing) if many else [spacing] * len(dims)
    result = []
    for d, h in zip(dims, steps):
        if isinstance(h, Tensor) and h.ndim != 0:
            parts = _coordinate_gradient(input, d, h, edge_order)
        else:
            parts = _uniform_gradient(input, d, h.item() if isinstance(h, Tensor) else h,
                                      edge_order)
        center, first, last = parts
        result.append(cat([first, center, last], d))
    return tuple(result)


# --- hash_tensor, sum_to_size -------------------------------------------------------------------

def _xor_hash(x, dims, keepdim):
    wide = jnp.float64 if jnp.issubdtype(x.dtype, jnp.inexact) else jnp.int64
    bits = jax.lax.bitcast_convert_type(x.astype(wide), jnp.uint64)
    return jax.lax.reduce(bits, np.uint64(0), jax.lax.bitwise_xor,
                          dims if dims is not None else tuple(range(x.ndim))) if not keepdim \
        else jnp.expand_dims(_xor_hash(x, dims, False), dims if dims is not None else
                             tuple(range(x.ndim)))


HASH_TENSOR = Op("hash_tensor", _xor_hash, None, saves=())


def hash_tensor(input, dim=None, *, keepdim=False, mode=0):
    """Mirrors ``torch.hash_tensor``: the xor of the bits of the elements, each widened to
    float64 / int64 and read as a uint64, over ``dim`` (all dims by default)."""
    if mode != 0:
        raise RuntimeError(f"Unknown hash_tensor mode: {mode}")
    if input.dtype.is_complex:
        raise NotImplementedError(f"\"xor_sum_cpu\" not implemented for "
                                  f"'{input.dtype._scalar_name}'")
    if dim is None or dim == ():
        if input.numel() == 0:
            raise RuntimeError("hash_tensor: Expected reduction dim to be specified for "
                               "input.numel() == 0. Specify the reduction dim with the 'dim' "
                               "argument.")
        dims = None
    else:
        dims = tuple(sorted(_wrap_dim(d, input.ndim) for d in (
            (dim,) if isinstance(dim, int) else dim)))
    return call(HASH_TENSOR, input, static=(("dims", dims), ("keepdim", bool(keepdim))))


def sum_to_size(self, *size):
    """Mirrors ``Tensor.sum_to_size``: this tensor summed to ``size``, which it must expand
    to (PyTorch's at::sum_to: the leading dims it lacks, then its dims of size 1)."""
    from .._size import parse_size
    size = tuple(parse_size("sum_to_size", size, "size", 1))
    shape = tuple(self.shape)
    lead = len(shape) - len(size)
    if lead < 0 or any(s != 1 and s != shape[lead + i] for i, s in enumerate(size)):
        raise RuntimeError(f"size {{{list(size)}}} is not expandable to size {{{list(shape)}}}.")
    if size == shape:
        return self
    dims = tuple(range(lead)) + tuple(lead + i for i, s in enumerate(size)
                                      if s == 1 and shape[lead + i] != 1)
    out = self.sum(dims, keepdim=True) if dims else self
    return out.view(size) if lead else out


PUBLIC = ("cov", "corrcoef", "histogram", "histogramdd", "trapezoid", "trapz",
          "cumulative_trapezoid", "gradient", "hash_tensor")
TENSOR_METHODS = {"cov": cov, "corrcoef": corrcoef, "histogram": histogram,
                  "sum_to_size": sum_to_size}
