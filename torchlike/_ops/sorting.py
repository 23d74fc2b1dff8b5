"""Sorting and searching: sort, argsort, topk, unique, searchsorted, histograms, ...

Every sort is jax's stable sort, so ties keep their input order (PyTorch's CPU results) and NaN
sorts as the largest value.  Sort-like ops return ``take_along_axis(x, indices)``: jax.vjp of
that gather scatters the gradient back through the permutation, as PyTorch's SortBackward does.

``unique``, ``unique_consecutive`` and ``bincount`` have output shapes that depend on the
values, so they run in eager mode only (numpy finds the groups; one gather keeps the graph).
"""
import math

import jax
import jax.numpy as jnp
import numpy as np

from .. import _dtype as D
from .. import return_types
from .._creation import from_host
from .._dispatch import Op, call, with_out
from .._size import int_arg
from .._tensor import Tensor, _wrap_dim, host_min_max, values_for_shape

_I64 = jnp.int64


# --- sort, argsort, msort, topk, kthvalue ------------------------------------------------------

def _order_key(x):
    """int64 numbers ordered as PyTorch orders x (NaN largest, -0.0 equal to 0.0)."""
    if jnp.issubdtype(x.dtype, jnp.floating):
        x = jnp.where(jnp.isnan(x), jnp.nan, jnp.where(x == 0, 0, x)).astype(x.dtype)
        x = _flip_negatives(jax.lax.bitcast_convert_type(x, _SAME_WIDTH_INT[x.dtype.itemsize]))
    return x.astype(_I64)


def _positions_by(key, dim, bits):
    """Stable argsort of a key of up to 32 bits along dim: one sort of (key << bits | position)."""
    position = jax.lax.broadcasted_iota(_I64, key.shape, dim)
    return jnp.sort((key << bits) | position, axis=dim) & ((1 << bits) - 1)


def _argsort(x, dim, descending):
    """Stable argsort along dim, in PyTorch's order.

    NOTE: XLA's CPU sort of one integer operand is ~6x faster than its float sort or a sort of
    (key, index) pairs, so keys are packed with their positions into int64 numbers: one sort for
    dtypes of up to 32 bits, two (low half, then high half: a stable radix) for 64-bit ones."""
    if x.ndim == 0:
        return jnp.zeros((), _I64)
    n = x.shape[dim]
    if n > 2 ** 31:
        return jnp.argsort(x, axis=dim, descending=descending, stable=True).astype(_I64)
    key = _order_key(x)
    key = ~key if descending else key
    bits = max(1, (n - 1).bit_length())
    if x.dtype.itemsize <= 4:
        return _positions_by(key, dim, bits)
    by_low = _positions_by(key & 0xFFFFFFFF, dim, bits)
    high = jnp.take_along_axis(key >> 32, by_low, axis=dim)
    return jnp.take_along_axis(by_low, _positions_by(high, dim, bits), axis=dim)


def _sort(x, dim, descending):
    if x.ndim == 0:
        return x, jnp.zeros((), _I64)
    idx = _argsort(x, dim, descending)
    return jnp.take_along_axis(x, idx, axis=dim), idx


_SAME_WIDTH_INT = {2: jnp.int16, 4: jnp.int32, 8: jnp.int64}


def _flip_negatives(bits):
    """Float bits <-> integers ordered as the floats (flips the magnitude bits of negatives;
    its own inverse)."""
    return jnp.where(bits < 0, bits ^ jnp.iinfo(bits.dtype).max, bits)


def _topk_key(x, largest):
    """A float32 key whose descending order is PyTorch's topk order: NaN counts as the largest
    value; for ``largest=False`` the order of the int-ordered bits is reversed and turned back
    into floats (NaN becomes -nan, which top_k puts last)."""
    x = jnp.where(jnp.isnan(x), jnp.nan, jnp.where(x == 0, 0, x)).astype(x.dtype)
    if largest:
        return x
    order = _flip_negatives(jax.lax.bitcast_convert_type(x, jnp.int32))
    return jax.lax.bitcast_convert_type(_flip_negatives(~order), jnp.float32)


def _topk(x, k, dim, largest):
    if x.ndim == 0:
        return x, jnp.zeros((), _I64)
    if x.dtype == jnp.float32:
        # NOTE: lax.top_k has a fast CPU kernel for float32 only (~15x faster than XLA's sort);
        # ties come lowest index first, as in the stable sort used otherwise.
        _, idx = jax.lax.top_k(jnp.moveaxis(_topk_key(x, largest), dim, -1), k)
        idx = jnp.moveaxis(idx, -1, dim).astype(_I64)
    else:
        idx = jax.lax.slice_in_dim(_argsort(x, dim, largest), 0, k, axis=dim)
    return jnp.take_along_axis(x, idx, axis=dim), idx


def _kthvalue(x, k, dim, keepdim):
    if x.ndim == 0:
        return x, jnp.zeros((), _I64)
    idx = jax.lax.slice_in_dim(_argsort(x, dim, False), k - 1, k, axis=dim)
    vals = jnp.take_along_axis(x, idx, axis=dim)
    if keepdim:
        return vals, idx
    return jnp.squeeze(vals, dim), jnp.squeeze(idx, dim)


# PyTorch saves only the indices (an output); the primal is kept for the VJP but not
# version-checked, hence {0: ()}.  sort(stable=...) is aten's sort.stable: SortBackward1.
SORT = Op("sort", _sort, "SortBackward0", saves={0: ()})
SORT_STABLE = Op("sort", _sort, "SortBackward1", saves={0: ()})
ARGSORT = Op("argsort", _argsort, None)
TOPK = Op("topk", _topk, "TopkBackward0", saves={0: ()})
KTHVALUE = Op("kthvalue", _kthvalue, "KthvalueBackward0", saves={0: ()})


def _check_sortable(input):
    if input.dtype.is_complex:
        raise RuntimeError(" Sort does not support complex dtypes on CPU")


def sort(input, dim=-1, descending=False, stable=None, *, out=None):
    """Mirrors ``torch.sort``: (values, indices) along ``dim``, NaN sorting as the largest.

    The sort is always stable (equal elements keep their order), which is what PyTorch's CPU
    kernels return for ``stable=False`` too.

    Example:
        >>> values, indices = torchlike.sort(torchlike.tensor([3., 1., 2.]))
        >>> values, indices
        (tensor([1., 2., 3.]), tensor([1, 2, 0]))
    """
    _check_sortable(input)
    op = SORT if stable is None else SORT_STABLE
    dim = _wrap_dim(dim, input.ndim)
    values, indices = call(op, input, static=(("dim", dim), ("descending", bool(descending))))
    return with_out(return_types.sort(values, indices), out)


def argsort(input, dim=-1, descending=False, stable=False):
    """Mirrors ``torch.argsort``: the indices that sort ``input`` along ``dim`` (stable)."""
    _check_sortable(input)
    if input.ndim == 0:
        _wrap_dim(dim, 0)
        from .._creation import zeros
        return zeros((), dtype=D.int64)
    dim = _wrap_dim(dim, input.ndim)
    return call(ARGSORT, input, static=(("dim", dim), ("descending", bool(descending))))


def msort(input, *, out=None):
    """Mirrors ``torch.msort``: ``sort(input, dim=0).values``."""
    return with_out(sort(input, 0).values, out)


def topk(input, k, dim=-1, largest=True, sorted=True, *, out=None):
    """Mirrors ``torch.topk``: the ``k`` largest (or smallest) elements along ``dim``.

    The result is always sorted (``sorted=False`` lets PyTorch return any order).
    """
    k = int_arg("topk", "k", 1, k)
    _check_sortable(input)
    if input.dtype == D.bool_:
        raise RuntimeError("topk does not support bool dtypes on CPU")
    dim = _wrap_dim(dim, input.ndim)
    size = input.shape[dim] if input.ndim else 1
    if not 0 <= k <= size:
        raise RuntimeError("selected index k out of range")
    values, indices = call(TOPK, input, static=(("k", int(k)), ("dim", dim),
                                                 ("largest", bool(largest))))
    return with_out(return_types.topk(values, indices), out)


def kthvalue(input, k, dim=-1, keepdim=False, *, out=None):
    """Mirrors ``torch.kthvalue``: the ``k``-th smallest element along ``dim`` and its index.

    Among equal values the first in sorted (stable) order is returned; PyTorch's choice among
    ties is unspecified.
    """
    k = int_arg("kthvalue", "k", 1, k)
    _check_sortable(input)
    if input.dtype == D.bool_:
        raise NotImplementedError("\"kthvalue_cpu\" not implemented for 'Bool'")
    dim = _wrap_dim(dim, input.ndim)
    size = input.shape[dim] if input.ndim else 1
    if size == 0:
        raise IndexError(f"kthvalue(): Expected reduction dim {dim} to have non-zero size.")
    if not 1 <= k <= size:
        raise RuntimeError(f"kthvalue(): selected number k out of range for dimension {dim}")
    values, indices = call(KTHVALUE, input, static=(("k", int(k)), ("dim", dim),
                                                     ("keepdim", bool(keepdim))))
    return with_out(return_types.kthvalue(values, indices), out)


# --- unique, unique_consecutive (eager only) ---------------------------------------------------

def _groups(a, dim, consecutive):
    """(representative index per group, inverse, counts) of the rows of ``a`` along ``dim``
    (every element when ``dim`` is None).  NaN != NaN, so each NaN is a group of its own, as in
    PyTorch."""
    if dim is None:
        rows = a.reshape(-1, 1)
    else:
        moved = np.moveaxis(a, dim, 0)
        rows = moved.reshape(moved.shape[0], int(np.prod(moved.shape[1:])))
    n = rows.shape[0]
    if consecutive or n == 0:
        order = np.arange(n)
    else:   # lexicographic and stable; np.lexsort's last key is the primary one
        order = np.lexsort(rows.T[::-1]) if rows.shape[1] else np.arange(n)
    s = rows[order]
    new = np.ones(n, bool)
    if n:
        new[1:] = np.any(s[1:] != s[:-1], axis=1)
    inverse = np.empty(n, np.int64)
    inverse[order] = np.cumsum(new) - 1
    starts = np.flatnonzero(new)
    counts = np.diff(np.append(starts, n)).astype(np.int64)
    return order[starts].astype(np.int64), inverse, counts


def _gather_rows(x, idx, dim):
    return x.reshape(-1)[idx] if dim is None else jnp.take(x, idx, axis=dim)


# PyTorch records these ops but has no derivative for them.
_UNIQUE_VALUES = {
    name: Op(name, _gather_rows, node, inputs=1, saves=(),
             no_grad_reason=(NotImplementedError,
                             f"the derivative for '{name}' is not implemented."))
    for name, node in (("_unique2", "Unique2Backward0"), ("unique_dim", "UniqueDimBackward0"),
                       ("unique_consecutive", "UniqueConsecutiveBackward0"))}


def _unique(input, name, op, consecutive, return_inverse, return_counts, dim):
    a = values_for_shape(input, name)
    if dim is not None:
        dim = _wrap_dim(dim, input.ndim)
        if a.size == 0:
            zero_dims = sum(s == 0 for s in a.shape)
            if zero_dims != 1:
                raise RuntimeError("Number of zero sized dimensions is more than one, so unique "
                                   "cannot be applied ")
            if a.shape[dim] != 0:
                raise RuntimeError("There are 0 sized dimensions, and they aren't selected, so "
                                   "unique cannot be applied")
    if dim is not None and input.ndim == 0:
        dim = None
    first, inverse, counts = _groups(a, dim, consecutive)
    values = call(op, input, from_host(first, input), static=(("dim", dim),))
    result = (values,)
    if return_inverse:
        shape = a.shape if dim is None else (a.shape[dim],)
        result += (from_host(inverse.reshape(shape), input),)
    if return_counts:
        result += (from_host(counts, input),)
    return result[0] if len(result) == 1 else result


def unique(input, sorted=True, return_inverse=False, return_counts=False, dim=None):
    """Mirrors ``torch.unique`` (eager only: the result's length depends on the values).

    Returns the sorted distinct elements (or slices along ``dim``), then, as asked, the inverse
    indices (where each input element went) and the count of each distinct element.  The result
    is always sorted, as on PyTorch's CPU.

    Example:
        >>> torchlike.unique(torchlike.tensor([3, 1, 3]), return_counts=True)
        (tensor([1, 3]), tensor([1, 2]))
    """
    op = _UNIQUE_VALUES["_unique2" if dim is None else "unique_dim"]
    return _unique(input, "unique", op, False, return_inverse, return_counts, dim)


def unique_consecutive(input, return_inverse=False, return_counts=False, dim=None):
    """Mirrors ``torch.unique_consecutive``: collapse runs of equal consecutive elements (or
    slices along ``dim``).  Eager only: the result's length depends on the values."""
    op = _UNIQUE_VALUES["unique_consecutive"]
    return _unique(input, "unique_consecutive", op, True, return_inverse, return_counts, dim)


# --- searchsorted, bucketize -------------------------------------------------------------------

def _searchsorted(seq, vals, *sorter, right, out_dtype):
    """PyTorch's binary search (aten's cus_lower_bound / cus_upper_bound), one lane per value:
    move right while ``!(seq[mid] >= v)`` (``> v`` for right), so NaNs land where PyTorch puts
    them."""
    if sorter:
        seq = jnp.take_along_axis(seq, sorter[0], axis=-1)
    n = seq.shape[-1]
    if seq.ndim == 1:
        def gather(i):
            return seq[i]
    else:
        def gather(i):
            return jnp.take_along_axis(seq, i, axis=-1)
    start = jnp.zeros(jnp.shape(vals), _I64)
    end = jnp.full(jnp.shape(vals), n, _I64)
    for _ in range(n.bit_length()):   # enough halvings for any lane to converge
        mid = start + (end - start) // 2
        mid_val = gather(jnp.minimum(mid, n - 1))
        go_right = ~(mid_val > vals) if right else ~(mid_val >= vals)
        active = start < end
        start = jnp.where(active & go_right, mid + 1, start)
        end = jnp.where(active & ~go_right, mid, end)
    return start.astype(out_dtype)


SEARCHSORTED = Op("searchsorted", _searchsorted, None, promote="common", promote_args=2)


def _check_sorter(sorted_sequence, sorter):
    if list(sorter.shape) != list(sorted_sequence.shape):
        raise RuntimeError(f"torch.searchsorted(): boundary and sorter must have the same size, "
                           f"but got boundary tensor {list(sorted_sequence.shape)}and got sorter "
                           f"tensor {list(sorter.shape)}")
    if sorter.dtype != D.int64:
        raise RuntimeError(f"torch.searchsorted(): sorter must be a tensor of long dtype but got "
                           f"dtype {sorter.dtype._scalar_name}")
    arr = sorter._value()
    if not isinstance(arr, jax.core.Tracer) and arr.size:
        smallest, largest = host_min_max(np.asarray(arr))
        if smallest < 0 or largest >= sorter.shape[-1]:
            raise RuntimeError("torch.searchsorted(): sorter index out of range")


def searchsorted(sorted_sequence, input, *, out_int32=False, right=False, side=None,
                 sorter=None, out=None):
    """Mirrors ``torch.searchsorted``: for each value of ``input`` (a Tensor or a number), the
    index where it would be inserted into the innermost dimension of ``sorted_sequence`` to keep
    it sorted (``side='right'`` / ``right=True``: after equal elements).

    ``sorted_sequence`` is 1-D, or has ``input``'s leading dimensions; ``sorter`` holds the
    indices that sort an unsorted ``sorted_sequence``.  Returns int64 (int32 if ``out_int32``).

    Example:
        >>> torchlike.searchsorted(torchlike.tensor([1, 3, 5]), torchlike.tensor([3, 6]))
        tensor([1, 3])
    """
    if side is not None:
        if side not in ("left", "right"):
            raise RuntimeError(f"torch.searchsorted(): side can only be 'left' or 'right' but "
                               f"got {side}")
        if right and side != "right":
            raise RuntimeError(f"torch.searchsorted(): side and right can't be set to opposites, "
                               f"got side of {side} while right was True")
        right = side == "right"
    if not isinstance(input, (Tensor, bool, int, float)):
        raise TypeError(f"searchsorted(): argument 'input' must be Tensor or Number, not "
                        f"{type(input).__name__}")
    if out is not None and out.dtype != (D.int32 if out_int32 else D.int64):
        raise RuntimeError(f"torch.searchsorted(): output tensor's dtype is wrong, it can only "
                           f"be Int(int32) or Long(int64) depending on whether out_int32 flag is "
                           f"True, but we got output tensor's dtype "
                           f"{out.dtype._scalar_name} and out_int32 flag is "
                           f"{'True' if out_int32 else 'False'}")
    if sorter is not None:
        _check_sorter(sorted_sequence, sorter)
    seq_dim = sorted_sequence.ndim
    in_dim = input.ndim if isinstance(input, Tensor) else 0
    if in_dim == 0 and seq_dim != 1:
        raise RuntimeError(f"torch.searchsorted(): input value can be a scalar only when "
                           f"boundaries tensor dimension is 1, but we got boundaries tensor "
                           f"dim({seq_dim}) and input value's dim({in_dim}) numel(1)")
    if seq_dim == 0:
        raise RuntimeError("torch.searchsorted(): boundaries tensor should have positive "
                           "dimension, but got 0 dimension")
    if seq_dim != 1 and (in_dim != seq_dim or
                         tuple(input.shape[:-1]) != tuple(sorted_sequence.shape[:-1])):
        raise RuntimeError(f"torch.searchsorted(): boundaries tensor should be 1 dimension or "
                           f"the first N-1 dimensions of boundaries tensor and input value "
                           f"tensor must match, but we got boundaries tensor "
                           f"{list(sorted_sequence.shape)} and input value tensor "
                           f"{list(input.shape)}")
    if sorted_sequence.dtype == D.bool_ or (isinstance(input, Tensor) and
                                             input.dtype == D.bool_):
        raise NotImplementedError("\"searchsorted_out_cpu\" not implemented for 'Bool'")
    static = (("right", bool(right)), ("out_dtype", np.int32 if out_int32 else np.int64))
    extra = () if sorter is None else (sorter,)
    return with_out(call(SEARCHSORTED, sorted_sequence, input, *extra, static=static), out)


def bucketize(input, boundaries, *, out_int32=False, right=False, out=None):
    """Mirrors ``torch.bucketize``: the bucket of each value of ``input`` for the 1-D sorted
    ``boundaries`` (``right=False``: ``boundaries[i-1] < x <= boundaries[i]``)."""
    if boundaries.ndim != 1:
        raise RuntimeError(f"boundaries tensor must be 1 dimension, but got dim("
                           f"{boundaries.ndim})")
    return searchsorted(boundaries, input, out_int32=out_int32, right=right, out=out)


# --- histc, bincount ---------------------------------------------------------------------------

def _histc(x, bins, lo, hi):
    """aten's linear-interpolation histogram: bin = trunc((x - left) * bins / (right - left))
    in x's dtype; the last bin includes its right edge; values outside (and NaN) are dropped.
    ``lo is None``: the range is the data's, widened by 1 on each side when it is one point."""
    dt = x.dtype
    x = x.reshape(-1)
    if lo is None:
        lo, hi = jnp.min(x).astype(jnp.float64), jnp.max(x).astype(jnp.float64)
        same = lo == hi
        lo, hi = jnp.where(same, lo - 1, lo), jnp.where(same, hi + 1, hi)
    left, right = jnp.asarray(lo).astype(dt), jnp.asarray(hi).astype(dt)
    keep = (x >= left) & (x <= right)
    pos = (x - left) * jnp.asarray(bins, dt) / (right - left)
    pos = jnp.minimum(jnp.where(keep, pos, 0).astype(_I64), bins - 1)
    return jnp.zeros(bins, dt).at[pos].add(keep.astype(dt))


HISTC = Op("histc", _histc, None)


def _fmt(v):
    return f"{v:g}"


def histc(input, bins=100, min=0, max=0, *, out=None):
    """Mirrors ``torch.histc``: counts of ``input``'s elements in ``bins`` equal-width bins over
    [min, max] (the data's own range when min == max).  Elements outside are ignored; the result
    has ``input``'s float dtype and no gradient.

    Example:
        >>> torchlike.histc(torchlike.tensor([1., 2., 1.]), bins=4, min=0, max=3)
        tensor([0., 2., 1., 0.])
    """
    if not input.dtype.is_floating_point:
        kernel = "linspace_cpu" if input.dtype == D.bool_ else "histogram_cpu"
        raise NotImplementedError(f"\"{kernel}\" not implemented for "
                                  f"'{input.dtype._scalar_name}'")
    if bins <= 0:
        raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {bins} for dimension 0")
    lo, hi = float(min), float(max)
    auto = lo == hi and input.numel() > 0
    if auto:
        arr = input._value()
        if isinstance(arr, jax.core.Tracer):
            lo = hi = None   # the range comes from the data inside the traced function
        else:
            a = np.asarray(arr)
            lo, hi = float(a.min()), float(a.max())
    if lo is not None:
        if lo == hi:
            lo, hi = lo - 1, hi + 1
        if not (math.isfinite(lo) and math.isfinite(hi)):
            raise RuntimeError(f"torch.histc: range of [{_fmt(lo)}, {_fmt(hi)}] is not finite")
        if not lo < hi:
            raise RuntimeError("torch.histc: max must be larger than min")
    static = (("bins", int(bins)), ("lo", lo), ("hi", hi))
    return with_out(call(HISTC, input, static=static), out)


def _bincount(x, *weights, length, dtype):
    w = weights[0].astype(dtype) if weights else None
    return jnp.bincount(x, weights=w, length=length).astype(dtype)


BINCOUNT = Op("bincount", _bincount, None)
# With weights requiring grad PyTorch records a node whose backward raises; its only input is
# the weights (they are cast to float64 inside the op, not by a recorded cast).
BINCOUNT_WEIGHTS = Op("bincount", lambda w, x, length, dtype: _bincount(x, w, length=length,
                                                                         dtype=dtype),
                      "NotImplemented", inputs=1, saves=(),
                      no_grad_reason="derivative for aten::bincount is not implemented")

_INTEGRAL = ("uint8", "int8", "int16", "int32", "int64")


def bincount(input, weights=None, minlength=0):
    """Mirrors ``torch.bincount``: how often each value 0, 1, ... occurs in the 1-D non-negative
    integer ``input`` (summing ``weights`` instead of counting, when given).

    Eager only: the length, ``max(input) + 1`` (at least ``minlength``), depends on the values.
    Returns int64 counts; float32 weights give float32 sums, other weights float64.
    """
    if input.dtype._name not in _INTEGRAL:
        raise NotImplementedError(f"\"bincount_cpu\" not implemented for "
                                  f"'{input.dtype._scalar_name}'")
    if minlength < 0:
        raise RuntimeError("minlength should be >= 0")
    a = values_for_shape(input, "bincount")
    if a.ndim == 1 and a.size == 0:
        from .._creation import zeros
        return zeros(minlength, dtype=D.int64)
    if a.ndim != 1 or a.min() < 0:
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    if weights is not None and (weights.ndim != 1 or weights.shape[0] != a.shape[0]):
        raise RuntimeError("weights should be 1-d and have the same length as input")
    length = max(int(a.max()) + 1, int(minlength))
    if weights is None:
        return call(BINCOUNT, input, static=(("length", length), ("dtype", np.int64)))
    dtype = np.float32 if weights.dtype == D.float32 else np.float64
    return call(BINCOUNT_WEIGHTS, weights, input, static=(("length", length), ("dtype", dtype)))


# --- membership ---------------------------------------------------------------------------------

ISIN = Op("isin", lambda e, t, invert: jnp.isin(e, t, invert=invert), None, saves=(),
          promote="common")


def isin(elements, test_elements, *, assume_unique=False, invert=False):
    """Mirrors ``torch.isin``: whether each of ``elements`` is among ``test_elements`` (either
    may be a number), as a bool tensor of ``elements``' shape; compared in their promoted dtype.
    ``assume_unique`` is a speed hint PyTorch gives its sort-based algorithm: the result is the
    same."""
    numbers = (bool, int, float)
    if not (isinstance(elements, Tensor) and isinstance(test_elements, (Tensor,) + numbers)
            or isinstance(elements, numbers) and isinstance(test_elements, Tensor)):
        raise TypeError(
            f"isin() received an invalid combination of arguments - got "
            f"({type(elements).__name__}, {type(test_elements).__name__}), but expected one "
            f"of:\n * (Tensor elements, Tensor test_elements, *, bool assume_unique = False, "
            f"bool invert = False, Tensor out = None)\n * (Number element, Tensor test_elements, "
            f"*, bool assume_unique = False, bool invert = False, Tensor out = None)\n * (Tensor "
            f"elements, Number test_element, *, bool assume_unique = False, bool invert = False, "
            f"Tensor out = None)\n")
    for t in (elements, test_elements):
        if isinstance(t, Tensor) and (t.dtype.is_complex or t.dtype is D.bool_):
            raise RuntimeError(f"Unsupported input type encountered for isin(): "
                               f"{t.dtype._scalar_name}")
    return call(ISIN, elements, test_elements, static=(("invert", bool(invert)),))

# Public names this family adds to the torchlike namespace, and the Tensor methods it binds.
PUBLIC = ("sort", "argsort", "msort", "topk", "kthvalue", "unique", "unique_consecutive",
          "searchsorted", "bucketize", "histc", "bincount", "isin")
TENSOR_METHODS = {"sort": sort, "argsort": argsort, "msort": msort, "topk": topk,
                  "kthvalue": kthvalue, "unique": unique, "unique_consecutive": unique_consecutive,
                  "histc": histc, "bincount": bincount}
