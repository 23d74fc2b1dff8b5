"""The indexing op family: gather / scatter / index_* / masked_* / take / put.

Each op is one jnp function of (graph inputs..., index operands...).  Index values are checked
eagerly (PyTorch's exception types and wording) and the checks are skipped while tracing.
"""
import functools
import warnings

import jax
import jax.numpy as jnp
import numpy as np

from .. import _amp_hook
from .. import _dtype as D, _x64
from .._creation import from_host
from .._dispatch import Op, call, elementwise_cold, with_out
from .._tensor import Tensor, _wrap_dim, check_index_range, host_values, values_for_shape
from . import shape
from .index import (_MASKS, INDEX_PUT, _accumulate, _advanced, _index, check_put, set_at,
                    tensor_index)
from .pointwise import family, warn_once

_INT_NAMES = ("int64", "int32")
_SCALAR = (bool, int, float, complex)



def _dim(dim, ndim):
    return _wrap_dim(dim, max(ndim, 1))




def _positions(idx, dim):
    """Full advanced-index tuple for scatter/gather along ``dim``: idx there, iotas elsewhere."""
    return tuple(idx if d == dim else jax.lax.broadcasted_iota(idx.dtype, idx.shape, d)
                 for d in range(idx.ndim))


def _fit(src, shape):
    """The leading ``shape`` block of src (PyTorch reads only that part of src)."""
    return src[tuple(slice(0, s) for s in shape)]


def _scalar_1d(fn):
    """Run fn on 1-element views of 0-dim operands (PyTorch treats a 0-dim tensor as size 1)."""
    def wrapped(x, *rest, **kw):
        if x.ndim:
            return fn(x, *rest, **kw)
        rest = [r.reshape(1) if hasattr(r, "ndim") and r.ndim == 0 else r for r in rest]
        return fn(x.reshape(1), *rest, **kw).reshape(())
    return wrapped


@_scalar_1d
def _gather(x, idx, dim):
    idx = jnp.where(idx < 0, idx + x.shape[dim], idx)
    xs = x[tuple(slice(None) if d == dim else slice(0, s) for d, s in enumerate(idx.shape))]
    return jnp.take_along_axis(xs, idx, axis=dim)


@_scalar_1d
def _scatter(x, src, idx, dim, reduce):
    if not hasattr(src, "ndim") or src.ndim == 0:   # a scalar value
        src = jnp.broadcast_to(jnp.asarray(src).astype(x.dtype), idx.shape)
    else:
        src = _fit(src, idx.shape)
    if reduce is None:   # NOTE [ writes at repeated indices ]
        return set_at(x, lambda i: _positions(i, dim), src, idx)
    ref = x.at[_positions(idx, dim)]
    return _accumulate(ref, src) if reduce == "add" else ref.multiply(src)


@_scalar_1d
def _scatter_reduce(x, src, idx, dim, reduce, include_self):
    src, pos = _fit(src, idx.shape), _positions(idx, dim)
    if reduce == "prod":
        return _scatter_prod(x, src, idx, dim, include_self)
    if reduce == "mean":
        base = x if include_self else x.at[pos].set(0)
        total = base.at[pos].add(src)
        count = jnp.ones(x.shape, x.dtype)
        count = (count if include_self else count.at[pos].set(0)).at[pos].add(1)
        count = jnp.maximum(count, 1)
        if jnp.issubdtype(x.dtype, jnp.integer):
            return jnp.floor_divide(total, count)
        return total / count
    if reduce == "sum":
        return _accumulate((x if include_self else x.at[pos].set(0)).at[pos], src)
    if include_self:
        base = x
    elif x.dtype == jnp.bool_:
        base = x.at[pos].set(reduce == "amin")
    else:
        info = jnp.finfo if jnp.issubdtype(x.dtype, jnp.floating) else jnp.iinfo
        lowest = -jnp.inf if info is jnp.finfo else info(x.dtype).min
        highest = jnp.inf if info is jnp.finfo else info(x.dtype).max
        base = x.at[pos].set(lowest if reduce == "amax" else highest)
    return base.at[pos].max(src) if reduce == "amax" else base.at[pos].min(src)


def _scatter_prod(x, src, idx, dim, include_self):
    # NOTE: a one-hot product, not .at[].multiply: jax has no gradient for a multiplying scatter
    # with repeated indices, and jnp.prod's gradient handles zeros as PyTorch's does.
    size = x.shape[dim]
    k = jnp.arange(size, dtype=idx.dtype).reshape((size,) + (1,) * idx.ndim)
    hot = idx[None] == k
    prod = jnp.moveaxis(jnp.prod(jnp.where(hot, src[None], 1), axis=dim + 1), 0, dim)
    hit = jnp.moveaxis(jnp.any(hot, axis=dim + 1), 0, dim)
    region = tuple(slice(None) if d == dim else slice(0, s) for d, s in enumerate(idx.shape))
    old = x[region]
    new = jnp.where(hit, (old if include_self else 1) * prod, old).astype(x.dtype)
    return x.at[region].set(new)


def _along(dim, ndim, idx):
    return (slice(None),) * dim + (idx,) + (slice(None),) * (ndim - dim - 1)


@_scalar_1d
def _index_select(x, idx, dim):
    return jnp.take(x, jnp.where(idx < 0, idx + x.shape[dim], idx).reshape(-1), axis=dim)


@_scalar_1d
def _index_add(x, src, idx, alpha, dim):
    src = src.reshape(x.shape[:dim] + (-1,) + x.shape[dim + 1:]) if src.ndim != x.ndim else src
    return _accumulate(x.at[_along(dim, x.ndim, idx.reshape(-1))], (alpha * src).astype(x.dtype))


@_scalar_1d
def _index_copy(x, src, idx, dim):
    src = src.reshape(x.shape[:dim] + (-1,) + x.shape[dim + 1:]) if src.ndim != x.ndim else src
    return set_at(x, lambda i: _along(dim, x.ndim, i.reshape(-1)), src, idx)


@_scalar_1d
def _index_fill(x, value, idx, dim):
    # NOTE: a mask, not .at[].set(value): with repeated indices the value's gradient must count
    # each filled element once (PyTorch sums the gradient over unique indices).
    idx = idx.reshape(-1)
    hit = jnp.zeros(x.shape[dim], bool).at[jnp.where(idx < 0, idx + x.shape[dim], idx)].set(True)
    hit = hit.reshape((1,) * dim + (-1,) + (1,) * (x.ndim - dim - 1))
    return jnp.where(hit, jnp.asarray(value).astype(x.dtype), x)


def _masked_scatter(x, src, mask):
    shape = jnp.broadcast_shapes(x.shape, mask.shape)
    mask = jnp.broadcast_to(mask, shape)
    pos = jnp.clip(jnp.cumsum(mask.ravel()) - 1, 0, max(src.size - 1, 0)).reshape(shape)
    return jnp.where(mask, src.ravel()[pos] if src.size else 0, x)


def _put(x, src, idx, accumulate):
    def where(i):
        return jnp.where(i < 0, i + x.size, i)
    flat, idx, src = x.ravel(), idx.ravel(), src.ravel()
    out = _accumulate(flat.at[where(idx)], src) if accumulate else set_at(flat, where, src, idx)
    return out.reshape(x.shape)


GATHER = Op("gather", _gather, "GatherBackward0", inputs=1)
SCATTER = Op("scatter", _scatter, "ScatterBackward0", inputs=2, saves="indices")
SCATTER_VALUE = Op("scatter", _scatter, "ScatterBackward1", inputs=1, saves="indices")
_NO_SCATTER_GRAD = "derivative for aten::scatter is not implemented"
SCATTER_LEGACY = Op("scatter", _scatter, "NotImplemented", inputs=2, saves="indices",
                    no_grad_reason=_NO_SCATTER_GRAD)
SCATTER_VALUE_LEGACY = Op("scatter", _scatter, "NotImplemented", inputs=1, saves="indices",
                          no_grad_reason=_NO_SCATTER_GRAD)
SCATTER_ADD = Op("scatter_add", lambda x, src, idx, dim: _scatter(x, src, idx, dim, "add"),
                 "ScatterAddBackward0", inputs=2, saves="indices")
SCATTER_REDUCE = Op("scatter_reduce", _scatter_reduce, "ScatterReduceBackward0", inputs=2)
INDEX_SELECT = Op("index_select", _index_select, "IndexSelectBackward0", inputs=1,
                  saves="indices")
INDEX_ADD = Op("index_add", _index_add, "IndexAddBackward0", inputs=2, saves="indices")
INDEX_COPY = Op("index_copy", _index_copy, "IndexCopyBackward0", inputs=2, saves="indices")
INDEX_FILL = Op("index_fill", _index_fill, "IndexFillBackward0", inputs=1, saves="indices")
INDEX_FILL_T = Op("index_fill", _index_fill, "IndexFillBackward1", inputs=2, saves="indices")
_masked_fill = lambda x, value, mask: jnp.where(mask, jnp.asarray(value).astype(x.dtype), x)  # noqa
MASKED_FILL = Op("masked_fill", _masked_fill, "MaskedFillBackward0", inputs=1, saves="indices")
MASKED_FILL_T = Op("masked_fill", _masked_fill, "MaskedFillBackward1", inputs=2, saves="indices")
for _op in (MASKED_FILL, MASKED_FILL_T):   # (NOTE [ rows in buckets ] in _host.py)
    _op.cold = elementwise_cold(_op)
MASKED_SCATTER = Op("masked_scatter", _masked_scatter, "MaskedScatterBackward0", inputs=2,
                    saves="indices")
MASKED_SELECT = Op("masked_select", lambda x, flat, shape: jnp.broadcast_to(x, shape).ravel()[flat],
                   "MaskedSelectBackward0", inputs=1)
TAKE = Op("take", lambda x, idx: x.ravel()[jnp.where(idx < 0, idx + x.size, idx)],
          "TakeBackward0", inputs=1)
PUT = Op("put", _put, "PutBackward0", inputs=2, saves="indices")


# --- argument checks (PyTorch's wording) ----------------------------------------------------------

def _index_dtype(index, allowed, message, exc=RuntimeError):
    if not isinstance(index, Tensor):
        raise TypeError(f"expected Tensor as index argument, but got {type(index).__name__}")
    if index.dtype._name not in allowed:
        raise exc(message.format(name=index.dtype._scalar_name))


def _bounds(index, size, dim, fmt, exc=RuntimeError, negative=False):
    check_index_range(index, -size if negative else 0, size, exc,
                      fmt.format(bad="{1}", size=size, dim=dim))


_OOB = "index {bad} is out of bounds for dimension {dim} with size {size}"


def _same_dtype(input, src, message):
    if src.dtype is not input.dtype:
        raise RuntimeError(message.format(self=input.dtype._scalar_name,
                                          src=src.dtype._scalar_name))


def _gather_checks(name, input, dim, index, src=None):
    _index_dtype(index, _INT_NAMES, f"{name}(): Expected dtype int32/int64 for index")
    if index.ndim != input.ndim and not (max(index.ndim, 1) == max(input.ndim, 1)):
        what = "input" if name == "gather" else "self"
        raise RuntimeError(f"Index tensor must have the same number of dimensions as {what} "
                           "tensor")
    ishape, sshape = list(index.shape), list(input.shape)
    for d in range(index.ndim):
        if d == dim:
            continue
        too_big = ishape[d] > sshape[d] or (src is not None and ishape[d] > src.shape[d])
        if too_big and name == "gather":
            raise RuntimeError(f"Size does not match at dimension {d} expected index {ishape} to "
                               f"be no larger than self {sshape} apart from dimension {dim}")
        if too_big:
            raise RuntimeError(f"Expected index {ishape} to be no larger than self {sshape} "
                               f"apart from dimension {dim} and to be no larger size than src "
                               f"{list(src.shape)}")
    if src is not None and index.ndim and ishape[dim] > (src.shape[dim] if src.ndim else 1):
        raise RuntimeError(f"Expected index {ishape} to be no larger than self {sshape} apart "
                           f"from dimension {dim} and to be no larger size than src "
                           f"{list(src.shape)}")
    _bounds(index, input.shape[dim] if input.ndim else 1, dim, _OOB)


# --- gather / scatter ---------------------------------------------------------------------------

def gather(input, dim, index, *, sparse_grad=False, out=None):
    """Mirrors ``torch.gather``: ``out[i][j] = input[index[i][j]][j]`` (for dim 0).

    ``sparse_grad`` is accepted and ignored (gradients are dense)."""
    dim = _dim(dim, input.ndim)
    _gather_checks("gather", input, dim, index)
    return with_out(call(GATHER, input, index, static=(("dim", dim),)), out)


def scatter(input, dim, index, src=None, *, value=None, reduce=None, out=None):
    """Mirrors ``torch.scatter``: write ``src`` (a Tensor) or ``value`` (a scalar) into a copy of
    input at ``index`` along ``dim``; legacy ``reduce='add'|'multiply'`` combines instead (no
    gradient, as in PyTorch)."""
    if src is None and value is None:
        raise TypeError("scatter() missing required argument 'src' or 'value'")
    if src is not None and not isinstance(src, Tensor):
        src, value = None, src
    if reduce not in (None, "add", "multiply"):
        raise RuntimeError("reduce argument must be either add or multiply.")
    if src is not None and reduce is not None:   # before the other checks, as in PyTorch
        warn_once("The reduce argument of torch.scatter with Tensor src is deprecated and will "
                  "be removed in a future PyTorch release. Use torch.scatter_reduce instead for "
                  "more reduction options.")
    dim = _dim(dim, input.ndim)
    static = (("dim", dim), ("reduce", reduce))
    if src is not None:
        _same_dtype(input, src, "scatter(): Expected self.dtype to be equal to src.dtype")
        _gather_checks("scatter", input, dim, index, src)
        op = SCATTER if reduce is None else SCATTER_LEGACY
        return with_out(call(op, input, src, index, static=static), out)
    if isinstance(value, Tensor):
        value = value.item()
    D.check_scalar(value, input.dtype)
    _gather_checks("scatter", input, dim, index)
    op = SCATTER_VALUE if reduce is None else SCATTER_VALUE_LEGACY
    return with_out(call(op, input, value, index, static=static), out)


def scatter_add(input, dim, index, src, *, out=None):
    """Mirrors ``torch.scatter_add``: repeated indices add up."""
    dim = _dim(dim, input.ndim)
    _same_dtype(input, src, "scatter(): Expected self.dtype to be equal to src.dtype")
    _gather_checks("scatter", input, dim, index, src)
    return with_out(call(SCATTER_ADD, input, src, index, static=(("dim", dim),)), out)


_REDUCTIONS = ("sum", "prod", "mean", "amax", "amin")
_ALIASES = {"max": "amax", "min": "amin"}   # PyTorch takes these too


def scatter_reduce(input, dim, index, src, reduce, *, include_self=True, out=None):
    """Mirrors ``torch.scatter_reduce``: combine the src values sent to each position with
    ``reduce`` ('sum', 'prod', 'mean', 'amax', 'amin'), with or without input's own value.
    Ties of amax/amin share the gradient evenly, as in PyTorch."""
    reduce = _ALIASES.get(reduce, reduce)
    if reduce not in _REDUCTIONS:
        raise RuntimeError("reduce argument must be either sum, prod, mean, amax or amin, got "
                           f"{reduce}")
    dim = _dim(dim, input.ndim)
    _same_dtype(input, src, "scatter(): Expected self.dtype to be equal to src.dtype")
    _gather_checks("scatter", input, dim, index, src)
    if reduce == "mean" and input.dtype._name == "bool":
        raise NotImplementedError("\"scatter_gather_tensor_cpu_reduce_mean\" not implemented "
                                  "for 'Bool'")
    static = (("dim", dim), ("reduce", reduce), ("include_self", bool(include_self)))
    return with_out(call(SCATTER_REDUCE, input, src, index, static=static), out)


# --- index_select / index_add / index_copy / index_fill -----------------------------------------

def _vector_index(name, index, message=None):
    if index.ndim > 1:
        raise IndexError(message or f"{name}(): Index is supposed to be a vector, but got dim: "
                         f"{index.ndim} with type: {index.dtype._scalar_name} and size: "
                         f"{list(index.shape)}")


def index_select(input, dim, index, *, out=None):
    """Mirrors ``torch.index_select``: the slices of input at ``index`` (a vector) along dim."""
    dim = _dim(dim, input.ndim)
    _index_dtype(index, _INT_NAMES, "index_select(): Expected dtype int32 or int64 for index")
    _vector_index("index_select", index, "index_select(): Index is supposed to be a vector")
    _bounds(index, input.shape[dim] if input.ndim else 1, dim, "index out of range in self",
            IndexError)
    return with_out(call(INDEX_SELECT, input, index, static=(("dim", dim),)), out)


def _slice_shapes(name, input, dim, index, source):
    n = index.numel()
    src_n = source.shape[dim] if source.ndim else 1
    if n != src_n:
        if name == "index_copy":
            raise IndexError(f"index_copy_(): Number of indices ({n}) should be equal to "
                             f"source.size(dim) ({src_n})")
        raise RuntimeError(f"index_add_(): Number of indices ({n}) should be equal to "
                           f"source.size(dim): ({src_n}), for dim: {dim}")
    ishape, sshape = list(input.shape), list(source.shape)
    if max(len(ishape), 1) != max(len(sshape), 1) or any(
            a != b for d, (a, b) in enumerate(zip(ishape, sshape)) if d != dim):
        if name == "index_copy":
            d = next((d for d, (a, b) in enumerate(zip(ishape, sshape)) if d != dim and a != b),
                     0)
            raise RuntimeError(
                "index_copy_(): Source/destination tensor must have same slice shapes. "
                f"Destination slice shape: {_slice_str(ishape, dim)} at dimension {dim} and "
                f"source slice shape: {_slice_str(sshape, dim)} at dimension {d}.")
        raise RuntimeError("source tensor shape must match self tensor shape, excluding the "
                           f"specified dimension. Got self.shape = {ishape} source.shape = "
                           f"{sshape}")


def _slice_str(shape, dim):
    return ", ".join(str(s) for d, s in enumerate(shape) if d != dim)


def index_add(input, dim, index, source, *, alpha=1, out=None):
    """Mirrors ``torch.index_add``: ``input[..., index[i], ...] += alpha * source[..., i, ...]``
    (repeated indices add up)."""
    dim = _dim(dim, input.ndim)
    _index_dtype(index, _INT_NAMES, "index_add_(): Expected dtype int32/int64 for index but got: "
                 "{name}")
    _vector_index("index_add_", index)
    if source.dtype is not input.dtype:
        raise RuntimeError(f"index_add_(): self ({input.dtype._scalar_name}) and source "
                           f"({source.dtype._scalar_name}) must have the same scalar type")
    _slice_shapes("index_add", input, dim, index, source)
    # PyTorch's CPU kernel: a multi-dim self with int64 indices goes through index_put's
    # check (RuntimeError); the other paths check each index themselves (IndexError)
    if input.ndim > 1 and index.dtype._name == "int64":
        _bounds(index, input.shape[dim], dim, _OOB)
    else:
        _bounds(index, input.shape[dim] if input.ndim else 1, dim, "index out of range in self",
                IndexError)
    return with_out(call(INDEX_ADD, input, source, index, alpha, static=(("dim", dim),)), out)


@_amp_hook.entry("index_copy")
def index_copy(input, dim, index, source, *, out=None):
    """Mirrors ``torch.index_copy``: ``input[..., index[i], ...] = source[..., i, ...]``."""
    dim = _dim(dim, input.ndim)
    _index_dtype(index, ("int64",), "index_copy_(): Expected a long tensor for index, but got "
                 "{name}")
    _vector_index("index_copy_", index)
    if source.dtype is not input.dtype:
        raise RuntimeError("index_copy_(): self and source expected to have the same dtype, but "
                           f"got (self) {input.dtype._scalar_name} and (source) "
                           f"{source.dtype._scalar_name}")
    _slice_shapes("index_copy", input, dim, index, source)
    _bounds(index, input.shape[dim] if input.ndim else 1, dim, "index_copy_(): " + _OOB,
            IndexError)
    return with_out(call(INDEX_COPY, input, source, index, static=(("dim", dim),)), out)


def index_fill(input, dim, index, value):
    """Mirrors ``torch.index_fill``: the slices at ``index`` along dim set to ``value`` (a
    scalar or a 0-dim tensor, which then gets a gradient)."""
    dim = _dim(dim, input.ndim)
    _index_dtype(index, ("int64",), "index_fill_(): Expected dtype int64 for index.", IndexError)
    if index.ndim > 1:
        raise RuntimeError("Index has to be a vector/scalar")
    _bounds(index, input.shape[dim] if input.ndim else 1, dim, _OOB, IndexError, negative=True)
    static = (("dim", dim),)
    if isinstance(value, Tensor):
        if value.ndim:
            raise RuntimeError("index_fill_ only supports a 0-dimensional value tensor, but got "
                               f"tensor with {value.ndim} dimension(s).")
        return call(INDEX_FILL_T, input, value, index, static=static)
    if isinstance(value, complex) and not input.dtype.is_complex:
        raise RuntimeError("index_fill_(): Converting complex Scalar to non-complex type is not "
                           "supported")
    value = D.read_scalar(value, input.dtype)
    return call(INDEX_FILL, input, value, index, static=static)


# --- index_put / masked_* / take / put ----------------------------------------------------------

def index_put(input, indices, values, accumulate=False):
    """Mirrors ``torch.index_put``: ``input[indices] = values`` (``+=`` with accumulate, where
    repeated indices add up) on a copy; ``indices`` is a tuple of index tensors (None: all)."""
    if not isinstance(values, Tensor):
        raise TypeError("index_put(): argument 'values' (position 3) must be Tensor, not "
                        f"{type(values).__name__}")
    if values.dtype is not input.dtype:
        raise RuntimeError("Index put requires the source and destination dtypes match, got "
                           f"{input.dtype._scalar_name} for the destination and "
                           f"{values.dtype._scalar_name} for the source.")
    for n, i in enumerate(indices):
        if not isinstance(i, Tensor):
            raise TypeError(f"expected Tensor as element {n} in argument 1, but got "
                            f"{type(i).__name__}")
    items = [tensor_index(i) for i in indices]
    if not accumulate:
        check_put(input, items, values)
    structure, arrays = _advanced(input, _components_of(input, items))
    static = (("structure", structure), ("accumulate", bool(accumulate)))
    _check_values_shape(input, structure, arrays, values)
    return call(INDEX_PUT, input, values, *arrays, static=static)


def _components_of(x, items):
    consumed = sum(it[1].ndim if isinstance(it, tuple) and it[2] in _MASKS else 1
                   for it in items)
    if consumed > x.ndim:
        raise IndexError(f"too many indices for tensor of dimension {x.ndim}")
    return items


@_x64.scoped
def _check_values_shape(x, structure, arrays, values):
    shape = jax.eval_shape(functools.partial(_index, structure=structure),
                           jax.ShapeDtypeStruct(x.shape, x._aval().dtype),
                           *[a._value() if isinstance(a, Tensor) else a for a in arrays]).shape
    try:
        ok = np.broadcast_shapes(tuple(values.shape), shape) == tuple(shape)
    except ValueError:
        ok = False
    if not ok:
        raise RuntimeError(f"shape mismatch: value tensor of shape {list(values.shape)} cannot be "
                           f"broadcast to indexing result of shape {list(shape)}")


_MASK_DTYPE_NAMES = {"int64": "long int", "int32": "int", "int16": "short int",
                     "int8": "signed char", "uint8": "unsigned char", "float32": "float",
                     "float64": "double", "float16": "c10::Half", "bfloat16": "c10::BFloat16"}


def masked_fill(input, mask, value):
    """Mirrors ``torch.masked_fill``: value where mask (broadcast) is True; ``value`` is a scalar
    or a 0-dim tensor (which then gets a gradient)."""
    if mask.dtype._name != "bool":
        raise RuntimeError("masked_fill_ only supports boolean masks, but got mask with dtype "
                           f"{_MASK_DTYPE_NAMES.get(mask.dtype._name, mask.dtype._name)}")
    if isinstance(value, Tensor):
        if value.ndim:
            raise RuntimeError("masked_fill_ only supports a 0-dimensional value tensor, but got "
                               f"tensor with {value.ndim} dimension(s).")
        return call(MASKED_FILL_T, input, value, mask)
    D.check_scalar(value, input.dtype)
    return call(MASKED_FILL, input, value, mask)


def masked_scatter(input, mask, source):
    """Mirrors ``torch.masked_scatter``: the positions where mask is True take source's values
    in row-major order."""
    if mask.dtype._name != "bool":
        if mask.dtype._name == "uint8":
            warnings.warn("masked_scatter_ received a mask with dtype torch.uint8, this behavior "
                          "is now deprecated,please use a mask with dtype torch.bool instead.",
                          UserWarning, stacklevel=2)
        raise RuntimeError("masked_scatter_ only supports boolean masks, but got mask with dtype "
                           f"{mask.dtype._scalar_name}")
    if source.dtype is not input.dtype:
        raise RuntimeError("masked_scatter: expected self and source to have same dtypes but got"
                           f"{input.dtype._scalar_name} and {source.dtype._scalar_name}")
    m = host_values(mask)
    if m is not None and int(np.broadcast_to(m, np.broadcast_shapes(m.shape, tuple(
            input.shape))).sum()) > source.numel():
        raise RuntimeError("Number of elements of source < number of ones in mask")
    return call(MASKED_SCATTER, input, source, mask)


def masked_select(input, mask, *, out=None):
    """Mirrors ``torch.masked_select`` (eager only: the result's size depends on the mask)."""
    if mask.dtype._name != "bool":
        raise RuntimeError("masked_select: expected BoolTensor for mask")
    shape = np.broadcast_shapes(tuple(input.shape), tuple(mask.shape))
    flat = np.flatnonzero(np.broadcast_to(values_for_shape(mask, "masked_select"), shape))
    idx = from_host(flat, input, np.int64)
    return with_out(call(MASKED_SELECT, input, idx, static=(("shape", shape),)), out)


def _flat_bounds(index, n):
    check_index_range(index, -n, n, IndexError, "out of range: tried to access index {1} on a "
                      f"tensor of {n} elements.")


def take(input, index, *, out=None):
    """Mirrors ``torch.take``: input read as a flat vector at ``index`` (negative counts from
    the end)."""
    _index_dtype(index, ("int64",), "take(): Expected a long tensor for index, but got {name}")
    _flat_bounds(index, input.numel())
    return with_out(call(TAKE, input, index), out)


def take_along_dim(input, indices, dim=None, *, out=None):
    """Mirrors ``torch.take_along_dim``: gather along ``dim`` after broadcasting input and
    indices against each other; ``dim=None`` reads input flattened."""
    _index_dtype(indices, ("int64",), "torch.take_along_dim(): dtype of indices should be Long "
                 "but got {name}")
    if dim is None:
        flat = shape.reshape(input, -1)
        idx = shape.reshape(indices, -1)
        _bounds(idx, flat.shape[0], 0, _OOB, negative=True)
        return with_out(call(GATHER, flat, idx, static=(("dim", 0),)), out)
    if input.ndim != indices.ndim:
        raise RuntimeError("torch.take_along_dim(): input and indices should have the same "
                           f"number of dimensions, but got {input.ndim} dimensions for input, "
                           f"and {indices.ndim} dimensions for indices")
    dim = _dim(dim, input.ndim)
    sizes = list(input.shape)
    sizes[dim] = indices.shape[dim]
    idx = shape.expand(indices, _broadcast(sizes, indices.shape))
    sizes = list(indices.shape)
    sizes[dim] = input.shape[dim]
    x = shape.expand(input, _broadcast(sizes, input.shape))
    _bounds(idx, x.shape[dim], dim, _OOB, negative=True)
    return with_out(call(GATHER, x, idx, static=(("dim", dim),)), out)


def _broadcast(a, b):
    try:
        return tuple(np.broadcast_shapes(tuple(a), tuple(b)))
    except ValueError:
        from .._dispatch import _broadcast_message
        raise RuntimeError(_broadcast_message([np.empty(a), np.empty(b)])) from None


def put(input, index, source, accumulate=False):
    """Mirrors ``torch.put``: a copy of input, read as a flat vector, with ``source`` written at
    ``index`` (added with accumulate, where repeated indices add up)."""
    _index_dtype(index, ("int64",), "put_(): Expected a long tensor for index, but got {name}")
    if source.dtype is not input.dtype:
        raise RuntimeError("put_(): self and source expected to have the same dtype, but got "
                           f"self.dtype = {input.dtype._scalar_name} and source.dtype = "
                           f"{source.dtype._scalar_name}")
    if source.numel() != index.numel():
        raise IndexError("put_(): Expected source and index to have the same number of elements, "
                         f"but got source.numel() = {source.numel()}, index.numel() = "
                         f"{index.numel()}")
    _flat_bounds(index, input.numel())
    return call(PUT, input, source, index, static=(("accumulate", bool(accumulate)),))


def argwhere(input):
    """Mirrors ``torch.argwhere`` (eager only): the indices of the non-zero elements, one row
    each."""
    arr = values_for_shape(input, "argwhere")
    return from_host(np.argwhere(arr), input, np.int64)


# --- the scatter forms of the views: select / slice / diagonal_scatter --------------------------

def _check_src(src, shape):
    if tuple(src.shape) != tuple(shape):
        raise RuntimeError(f"expected src to have a size equal to the slice of self. src size = "
                           f"{list(src.shape)}, slice size = {list(shape)}")


def _embed(x, src, where):
    return x.at[where].set(src.astype(x.dtype))


SELECT_SCATTER = Op("select_scatter", lambda x, src, dim, index: _embed(
    x, src, (slice(None),) * dim + (index,)), "SelectScatterBackward0", saves=())
SLICE_SCATTER = Op("slice_scatter", lambda x, src, dim, start, stop, step: _embed(
    x, src, (slice(None),) * dim + (slice(start, stop, step),)), "SliceScatterBackward0", saves=())


def _diagonal_embed(x, src, offset, dim1, dim2):
    n = src.shape[-1]
    rows = np.arange(n) + max(-offset, 0)
    cols = np.arange(n) + max(offset, 0)
    moved = jnp.moveaxis(x, (dim1, dim2), (-2, -1))
    moved = moved.at[..., rows, cols].set(src.astype(x.dtype))
    return jnp.moveaxis(moved, (-2, -1), (dim1, dim2))


DIAGONAL_SCATTER = Op("diagonal_scatter", _diagonal_embed, "DiagonalScatterBackward0", saves=())


def select_scatter(input, src, dim, index):
    """Mirrors ``torch.select_scatter``: a copy of ``input`` with ``input.select(dim, index)``
    replaced by ``src`` (cast to input's dtype)."""
    n = input.ndim
    if n == 0:
        raise IndexError("select() cannot be applied to a 0-dim tensor.")
    dim = _wrap_dim(dim, n)
    size = input.shape[dim]
    if not -size <= index < size:
        raise IndexError(f"select(): index {index} out of range for tensor of size "
                         f"{list(input.shape)} at dimension {dim}")
    _check_src(src, input.shape[:dim] + input.shape[dim + 1:])
    return call(SELECT_SCATTER, input, src, static=(("dim", dim), ("index", index % size)))


def slice_scatter(input, src, dim=0, start=None, end=None, step=1):
    """Mirrors ``torch.slice_scatter``: a copy of ``input`` with the slice
    ``start:end:step`` of ``dim`` replaced by ``src`` (cast to input's dtype)."""
    dim = _wrap_dim(dim, input.ndim)
    if step <= 0:
        raise RuntimeError("slice step must be positive")
    start, stop, step = slice(start, end, step).indices(input.shape[dim])
    stop = max(stop, start)
    sliced = list(input.shape)
    sliced[dim] = len(range(start, stop, step))
    _check_src(src, sliced)
    static = (("dim", dim), ("start", start), ("stop", stop), ("step", step))
    return call(SLICE_SCATTER, input, src, static=static)


def diagonal_scatter(input, src, offset=0, dim1=0, dim2=1):
    """Mirrors ``torch.diagonal_scatter``: a copy of ``input`` with its diagonal (``offset``,
    between ``dim1`` and ``dim2``, as ``torch.diagonal``) replaced by ``src``."""
    n = input.ndim
    d1, d2 = _wrap_dim(dim1, n), _wrap_dim(dim2, n)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    a, b = input.shape[d1], input.shape[d2]
    length = max(min(a, b - offset) if offset >= 0 else min(a + offset, b), 0)
    _check_src(src, [s for i, s in enumerate(input.shape) if i not in (d1, d2)] + [length])
    static = (("offset", offset), ("dim1", d1), ("dim2", d2))
    return call(DIAGONAL_SCATTER, input, src, static=static)


# --- nonzero_static, unravel_index --------------------------------------------------------------

NONZERO_STATIC = Op("nonzero_static", lambda x, size, fill_value: jnp.stack(
    jnp.nonzero(x, size=size, fill_value=fill_value), -1).astype(jnp.int64).reshape(
        size, x.ndim), None, saves=())


def nonzero_static(input, *, size, fill_value=-1):
    """Mirrors ``torch.nonzero_static``: ``nonzero``'s (size, input.ndim) index rows, cut to
    ``size`` rows or padded with ``fill_value`` to them: a shape known before the values
    (so it also traces)."""
    if size < 0:
        raise RuntimeError("nonzero_static: 'size' must be an non-negative integer")
    if input.ndim == 0:
        from .._creation import empty
        return empty(size, 0, dtype=D.int64, device=input.device)
    return call(NONZERO_STATIC, input, static=(("size", size), ("fill_value", fill_value)))


def unravel_index(indices, shape):
    """Mirrors ``torch.unravel_index``: flat ``indices`` into an array of ``shape`` as a tuple of
    coordinate tensors, one per dim (``indices // strides % shape``, as PyTorch's)."""
    from .._creation import tensor
    from .._size import Size
    from .pointwise import floor_divide, remainder
    if not isinstance(indices, Tensor):
        raise AttributeError(f"'{type(indices).__name__}' object has no attribute 'is_complex'")
    if indices.dtype.is_complex or indices.dtype.is_floating_point or indices.dtype is D.bool_:
        raise TypeError(f"expected 'indices' to be integer dtype, but got {indices.dtype}")
    if isinstance(shape, int):
        shape = Size([shape])
    elif isinstance(shape, (list, tuple)):
        for d in shape:
            if not isinstance(d, int):
                raise TypeError(f"expected 'shape' sequence to only contain ints, but got "
                                f"{type(d)}")
        shape = Size(shape)
    else:
        raise TypeError(f"expected 'shape' to be int or sequence of ints, but got {type(shape)}")
    if any(d < 0 for d in shape):
        raise ValueError(f"'shape' cannot have negative values, but got {tuple(shape)}")
    coefs = [1] * len(shape)
    for i in range(len(shape) - 2, -1, -1):
        coefs[i] = coefs[i + 1] * shape[i + 1]
    coords = remainder(floor_divide(indices.unsqueeze(-1), tensor(
        coefs, dtype=D.int64, device=indices.device)), tensor(list(shape), dtype=D.int64,
                                                              device=indices.device))
    return coords.unbind(-1)

# --- public names and methods (the in-place forms are PyTorch's primary forms here) -----------

PUBLIC, TENSOR_METHODS = family(
    {"scatter": scatter, "scatter_add": scatter_add, "scatter_reduce": scatter_reduce,
     "index_add": index_add, "index_copy": index_copy, "index_fill": index_fill,
     "index_put": index_put, "masked_fill": masked_fill, "masked_scatter": masked_scatter,
     "put": put},
    {"gather": gather, "index_select": index_select, "masked_select": masked_select,
     "take": take, "take_along_dim": take_along_dim, "argwhere": argwhere,
     "select_scatter": select_scatter, "slice_scatter": slice_scatter,
     "diagonal_scatter": diagonal_scatter, "nonzero_static": nonzero_static})
PUBLIC += ("unravel_index",)
