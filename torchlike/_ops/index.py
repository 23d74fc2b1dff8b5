"""Indexing: ``x[index]`` and ``x[index] = value``.

Basic indexing (ints, slices, None, Ellipsis) is a chain of views (select / slice / unsqueeze),
as PyTorch records it.  Anything with a tensor, list or bool mask is advanced indexing: one
gather (IndexBackward0) or one scatter (IndexPutBackward0), with numpy/PyTorch placement rules.
A bool mask has a data-dependent shape, so it needs concrete values (eager mode).  Also the
writes copy_, fill_ and zero_, and nonzero; the gather/scatter family is in scatter.py.
"""
import functools
import warnings

import jax
import jax.numpy as jnp
import numpy as np

from .. import _dtype as D
from .._creation import from_host, put
from .._dispatch import Op, call
from .._host import filled_on_host
from .._inplace import check_output_shape, inplace, shape_broadcast
from .._tensor import Tensor, TracedValueError, check_in_range, values_for_shape
from . import shape


def _decode(structure, arrays):
    out = []
    for p in structure:
        if isinstance(p, tuple):
            out.append(slice(*p[1:]) if p[0] == "s" else arrays[p[1]])
        else:
            out.append(p)
    return tuple(out)


def _merge_masked(x, structure):
    """``x`` with the dims under each multi-dimensional bool mask merged into one: such a mask
    arrives as one flat index (``("m", i, ndim)``; np.flatnonzero is several times cheaper than
    np.nonzero and the gather takes one index array instead of ndim)."""
    if not any(isinstance(p, tuple) and p[0] == "m" for p in structure):
        return x
    shape, d = list(x.shape), 0
    for p in structure:
        if isinstance(p, tuple) and p[0] == "m":
            shape[d:d + p[2]] = [int(np.prod(shape[d:d + p[2]]))]
        if p is not None and not isinstance(p, bool):   # a 0-dim mask takes no dim
            d += 1
    return x.reshape(shape)


def _index(x, *arrays, structure):
    return _merge_masked(x, structure)[_decode(structure, arrays)]


INDEX = Op("index", _index, "IndexBackward0", inputs=1, saves="indices")


def _accumulate(ref, values):
    """``ref.add(values)``; on bool tensors PyTorch's sum is a logical or."""
    return ref.max(values) if values.dtype == jnp.bool_ else ref.add(values)


# NOTE [ writes at repeated indices ]
# Where an index names one position several times, a write keeps one of the values written
# there, but PyTorch's backward of its index writes (scatter, index_put / x[i] = v, index_copy,
# put) still gives every written value the gradient at its position: src's gradient is
# grad.gather(dim, index), not zero for the values that lost.  jax's own derivative of
# `.at[].set` follows the winner, so `set_at` states PyTorch's rule as a custom_jvp: the
# tangent is x's with the written positions zeroed plus the values' tangents scattered by
# addition, whose transpose is exactly PyTorch's gather.  (Forward-mode derivatives at a
# repeated position therefore add up the written values' tangents.)

@functools.partial(jax.custom_jvp, nondiff_argnums=(0,))
def _set_at(where, x, src, *arrays):
    return x.at[where(*arrays)].set(src)


@_set_at.defjvp
def _set_at_jvp(where, primals, tangents):
    x, src, *arrays = primals
    tx, tsrc = tangents[:2]
    pos = where(*arrays)
    hit = jnp.zeros(x.shape, jnp.bool_).at[pos].set(True)
    return (_set_at(where, x, src, *arrays),
            jnp.where(hit, jnp.zeros_like(tx), tx) + jnp.zeros_like(tx).at[pos].add(tsrc))


def set_at(x, where, src, *arrays):
    """``x.at[where(*arrays)].set(src)`` with PyTorch's gradient at repeated positions (NOTE
    [ writes at repeated indices ]); ``where`` builds the index from the index ``arrays``."""
    return _set_at(where, x, src, *arrays)


def _index_put(x, v, *arrays, structure, accumulate):
    merged = _merge_masked(x, structure)
    v = jnp.asarray(v).astype(x.dtype)
    if accumulate:
        out = _accumulate(merged.at[_decode(structure, arrays)], v)
    else:
        out = set_at(merged, functools.partial(_unpack_index, structure), v, *arrays)
    return out.reshape(x.shape)


def _unpack_index(structure, *arrays):
    return _decode(structure, arrays)


INDEX_PUT = Op("index_put", _index_put, "IndexPutBackward0", inputs=2, saves="indices")


def _is_int(i):
    return isinstance(i, (int, np.integer)) and not isinstance(i, (bool, np.bool_))


# NOTE [ uint8 masks ]
# PyTorch still reads a uint8 (byte) index tensor as a mask, as it did before bool tensors
# existed: ``x[u8]`` selects where u8 is non-zero, with its deprecation warning (a 0-dim one
# acts like a Python bool, silently).  Such an index is kept as kind "byte": a mask
# everywhere ("bool" and "byte" are _MASKS), and told apart only where PyTorch tells them apart
# (writing one value through a byte mask is masked_fill_, which refuses it).

_MASKS = ("bool", "byte")
_SEQUENCES = (list, tuple, range, np.ndarray)   # index data PyTorch makes an index tensor of
_U8_WARNING = ("indexing with dtype torch.uint8 is now deprecated, please use a dtype "
               "torch.bool instead.")


def tensor_index(i):
    """The component for an index tensor ``i`` (NOTE [ uint8 masks ])."""
    return ("adv", i._value(), "byte" if i.dtype._name == "uint8" else i.dtype._name)


def _as_index(i):
    """Turn one component into int / slice / None / Ellipsis / ('adv', array, kind)."""
    if isinstance(i, Tensor):
        if i.ndim == 0 and not (i.dtype.is_floating_point or i.dtype._name in ("bool", "uint8")):
            arr = i._value()
            if not isinstance(arr, jax.core.Tracer):
                return int(np.asarray(arr))
        return tensor_index(i)
    if isinstance(i, np.ndarray) and i.ndim == 0 and i.dtype.kind in "iuf" and (
            i.dtype != np.uint8):   # PyTorch reads a 0-dim array of numbers as an int
        return int(i)
    if isinstance(i, _SEQUENCES):   # data for an index tensor: a mask, or else int64
        a = np.asarray(i)
        if a.dtype == np.bool_:
            return ("adv", a, "bool")
        if a.dtype == np.uint8 and isinstance(i, np.ndarray):
            return ("adv", a, "byte")
        return ("adv", a if a.dtype == np.int64 else a.astype(np.int64), "int64")
    if isinstance(i, (bool, np.bool_)):
        return ("adv", bool(i), "pybool")   # see _python_bools
    if _is_int(i) or i is None or i is Ellipsis or isinstance(i, slice):
        return int(i) if _is_int(i) else i
    if isinstance(i, str):   # a sequence to PyTorch, which it cannot make a tensor of
        raise TypeError("new(): invalid data type 'str'")
    raise IndexError("only integers, slices (`:`), ellipsis (`...`), None and long or byte "
                     "Variables are valid indices (got " + type(i).__name__ + ")")


def _as_tuple(index):
    """The index as a tuple of components.  A short list holding a tensor, sequence, slice,
    None or Ellipsis still means a tuple in PyTorch (numpy's old rule), with its warning:
    ``x[[[0, 1], [1, 0]]]`` is ``x[[0, 1], [1, 0]]``."""
    if isinstance(index, tuple):
        return index
    if isinstance(index, list) and len(index) < 32 and any(
            isinstance(i, (Tensor, slice) + _SEQUENCES) or i is None or i is Ellipsis
            for i in index):
        warnings.warn("Using a non-tuple sequence for multidimensional indexing is deprecated "
                      "and will be changed in pytorch 2.9; use x[tuple(seq)] instead of x[seq]. "
                      "In pytorch 2.9 this will be interpreted as tensor index, "
                      "x[torch.tensor(seq)], which will result either in an error or a "
                      "different result", UserWarning, stacklevel=4)
        return tuple(index)
    return (index,)


def _components(x, index):
    items = [_as_index(i) for i in _as_tuple(index)]
    consumed = 0
    for it in items:
        if isinstance(it, tuple):
            consumed += it[1].ndim if it[2] in _MASKS else 0 if it[2] == "pybool" else 1
        elif it is not None and it is not Ellipsis:
            consumed += 1
    if consumed > x.ndim:
        raise IndexError(f"too many indices for tensor of dimension {x.ndim}")
    out, extra = [], consumed - x.ndim
    for it in items:
        if it is Ellipsis:
            out.extend([slice(None)] * (x.ndim - consumed))
            extra += x.ndim - consumed
        else:
            out.append(it)
    # PyTorch lets each ellipsis skip the dims the rest leaves: past the last dim, the full
    # slices a second one adds are no-ops (x[..., ...] is x); an index after them fails
    while extra > 0 and out[-1] == slice(None):
        out.pop()
        extra -= 1
    if extra > 0:
        raise IndexError(f"too many indices for tensor of dimension {x.ndim}")
    return out


def getitem(x, index):
    """``x[index]`` (Tensor.__getitem__)."""
    if (type(index) is slice or type(index) is int) and x.ndim:   # x[a:b], x[i]: the commonest
        items = (index,)
    else:
        items = _components(x, index)
        if any(isinstance(it, tuple) and it[2] == "pybool" for it in items):
            x, items = _python_bools(x, items)
        if any(isinstance(it, tuple) for it in items):
            structure, arrays = _advanced(x, items)
            return call(INDEX, x, *arrays, static=(("structure", structure),))
    t, dim = x, 0
    for it in items:
        if it is None:
            t = shape.unsqueeze(t, dim)
            dim += 1
        elif isinstance(it, int):
            size = t.shape[dim]
            if not -size <= it < size:
                raise IndexError(f"index {it} is out of bounds for dimension {dim} with size "
                                 f"{size}")
            t = shape.select(t, dim, it)
        else:
            if it != slice(None):
                t = shape.slice_dim(t, dim, it.start, it.stop, 1 if it.step is None else it.step)
            dim += 1
    return shape.alias(x) if t is x else t


def _python_bools(x, items):
    """x[True] is x[None][tensor([True])] in PyTorch (and x[False] selects nothing)."""
    out, dim = [], 0
    for it in items:
        if isinstance(it, tuple) and it[2] == "pybool":
            x = shape.unsqueeze(x, dim)
            it = ("adv", np.asarray([it[1]]), "bool")
        out.append(it)
        if it is not None:
            dim += it[1].ndim if isinstance(it, tuple) and it[2] in _MASKS else 1
    return x, out


def _advanced(x, items):
    """(static structure, index arrays): bool masks become integer indices (eager only)."""
    structure, arrays, dim = [], [], 0
    for it in items:
        if isinstance(it, tuple):
            arr, kind = it[1], it[2]
            if kind in _MASKS:
                if isinstance(arr, jax.core.Tracer):
                    raise TracedValueError("indexing with a boolean mask has a data-dependent "
                                           "shape and cannot be traced; use "
                                           "torchlike.where(mask, x, y) instead")
                mask = np.asarray(arr)
                if kind == "byte" and mask.ndim:
                    warnings.warn(_U8_WARNING, UserWarning, stacklevel=4)
                want = tuple(x.shape[dim:dim + mask.ndim])
                if mask.shape != want and mask.ndim:
                    raise IndexError(f"The shape of the mask {list(mask.shape)} at index {dim} "
                                     f"does not match the shape of the indexed tensor "
                                     f"{list(want)} at index {dim}")
                if mask.ndim == 0:   # a 0-dim bool tensor acts like a Python bool
                    structure.append(bool(mask))
                    continue
                structure.append(("m", len(arrays), mask.ndim) if mask.ndim > 1
                                 else ("a", len(arrays)))
                arrays.append(np.flatnonzero(mask))
                dim += mask.ndim
                continue
            if kind not in ("int64", "int32"):
                raise IndexError("tensors used as indices must be long, int, byte or bool "
                                 "tensors")
            _check_bounds(arr, x.shape[dim], dim)
            structure.append(("a", len(arrays)))
            arrays.append(arr)
            dim += 1
        elif isinstance(it, slice):
            structure.append(("s", it.start, it.stop, it.step))
            dim += 1
        else:
            if isinstance(it, int):
                _check_bounds(it, x.shape[dim], dim)
                dim += 1
            structure.append(it)
    if len(arrays) > 1:
        shapes = [tuple(np.shape(a)) for a in arrays]
        try:
            np.broadcast_shapes(*shapes)
        except ValueError:
            raise IndexError("shape mismatch: indexing tensors could not be broadcast together "
                             "with shapes " + ", ".join(str(list(s)) for s in shapes)) from None
    # index values read on the host (masks, lists) go to the jitted op as numpy arrays: jit's
    # argument transfer is ~10x cheaper than a device_put of each; an index tensor on another
    # device is moved to x's, as PyTorch moves a CPU index of a CUDA tensor
    here = x._device()
    return tuple(structure), [_index_on(a, here) if isinstance(a, jax.Array) else a
                              for a in arrays]


def _index_on(arr, jd):
    if not isinstance(arr, jax.core.Tracer) and jd not in arr.devices():
        arr = put(arr, jd)
    return Tensor._wrap(arr)


def check_value(value, dtype):
    """PyTorch's errors for ``x[...] = value``, a Python number written into a tensor of
    ``dtype``: past int64 it cannot be read at all, else it must fit the dtype
    (``_dtype.check_scalar``), or a double for float16 / bfloat16 (a finite value past their
    range becomes inf, as in PyTorch's setitem)."""
    if type(value) is int and not -2 ** 63 <= value < 2 ** 63:
        raise ValueError("Overflow when unpacking long long")
    D.check_scalar(value, D.float64 if dtype is D.float16 or dtype is D.bfloat16 else dtype)


def check_put(x, items, value):
    """PyTorch's checks of ``x[items] = value`` with an advanced index: one value through a lone
    mask is masked_fill_, which takes only bool masks (NOTE [ uint8 masks ]) and casts the
    value; anything else is index_put_, which wants the value in x's dtype."""
    advanced = [it for it in items if isinstance(it, tuple)]
    if (len(advanced) == 1 and advanced[0][2] in _MASKS and np.ndim(advanced[0][1])
            and (not isinstance(value, Tensor) or value.numel() == 1)):
        if advanced[0][2] == "byte":
            raise RuntimeError("masked_fill_ only supports boolean masks, but got mask with "
                               "dtype unsigned char")
    elif isinstance(value, Tensor) and value.dtype is not x.dtype:
        raise RuntimeError("Index put requires the source and destination dtypes match, got "
                           f"{x.dtype._scalar_name} for the destination and "
                           f"{value.dtype._scalar_name} for the source.")


def _check_bounds(idx, size, dim):
    """x[idx]'s check of an index (a number, numpy or jax array; a traced one becomes a check
    of the compiled step: NOTE [ checks in a compiled step ])."""
    check_in_range(np.asarray(idx) if isinstance(idx, int) else idx, -size, size, IndexError,
                   f"index {{1}} is out of bounds for dimension {dim} with size {size}")


def setitem(x, index, value):
    """``x[index] = value`` (Tensor.__setitem__): copy_ into a view, or index_put_."""
    # a Python number goes into the jitted write as a (weakly typed) argument; PyTorch fills
    # with it as a 0-dim tensor (FillBackward3)
    scalar = not isinstance(value, Tensor)
    if scalar:
        check_value(value, x.dtype)
    items = _components(x, index)
    if any(isinstance(it, tuple) for it in items):
        check_put(x, items, value)
        structure, arrays = _advanced(x, items)
        static = (("structure", structure), ("accumulate", False))
        inplace(x, lambda: call(INDEX_PUT, x, value, *arrays, static=static))
    else:   # x[...] = v and x[:] = v need no view
        dst = x if all(it == slice(None) for it in items) else getitem(x, index)
        if scalar:
            inplace(dst, lambda: call(FILL_T, dst, value))
        else:
            copy_(dst, value if value.shape == dst.shape else _expanded(value, dst.shape))


def _expanded(value, shape):
    """A setitem value as PyTorch writes it: its leading size-1 dims dropped, then expanded to
    the shape written (so a misfit raises expand's error, not copy_'s)."""
    sizes = tuple(value.shape)
    lead = next((i for i, n in enumerate(sizes) if n != 1), len(sizes))
    return (value.reshape(sizes[lead:]) if lead else value).expand(shape)


def _copied_as_is(arrays, static):
    """A source that already has the destination's shape, dtype and placement is the copy, as
    clone's operand is (``Op.identity``): an elementwise copy per shape is a program to compile
    (a checkpoint's load_state_dict, a target network's update); None runs the program."""
    dst, src = arrays
    if isinstance(src, jax.Array) and src.aval == dst.aval and src.sharding == dst.sharding:
        return src
    return None


COPY = Op("copy", lambda dst, src: jax.numpy.broadcast_to(src.astype(dst.dtype), dst.shape),
          "CopyBackwards", saves=(), pieces=_copied_as_is)


def copy_(self, src, non_blocking=False):
    """Mirrors ``Tensor.copy_``: write src (broadcast, cast, moved) into self."""
    if isinstance(src, Tensor) and src._device() != self._device():
        src = src.to(self.device)
    if isinstance(src, Tensor) and src.shape != self.shape:
        both = shape_broadcast(src.shape, self.shape)
        if both is None:
            from .._dispatch import _broadcast_message
            raise RuntimeError(_broadcast_message([self._arr, src._arr]))
        check_output_shape(self.shape, both)
    return inplace(self, lambda: call(COPY, self, src))


# (fills of new shapes made on the host: NOTE [ fills on the host ] in _host.py)
ZERO = Op("zero", jax.numpy.zeros_like, "ZeroBackward0", saves=(),
          cold=lambda arrays, static, dt: filled_on_host(ZERO, static, arrays, 0))
FILL = Op("fill", lambda x, value: jax.numpy.full_like(x, value), "FillBackward2", saves=(),
          inputs=1, cold=lambda arrays, static, dt: filled_on_host(FILL, static, arrays,
                                                                   arrays[1]))
FILL_T = Op("fill", lambda x, value: jax.numpy.full_like(x, value), "FillBackward3", saves=())


def zero_(self):
    """Mirrors ``Tensor.zero_``."""
    return inplace(self, lambda: call(ZERO, self), overlap_ok=True)


def fill_(self, value):
    """Mirrors ``Tensor.fill_``: a Python number must fit the tensor's dtype
    (``_dtype.read_scalar``)."""
    if isinstance(value, Tensor):
        if value.ndim:
            raise RuntimeError(f"fill_ only supports 0-dimension value tensor but got tensor "
                               f"with {value.ndim} dimensions.")
        return inplace(self, lambda: call(FILL_T, self, value))
    value = D.read_scalar(value, self.dtype)
    return inplace(self, lambda: call(FILL, self, value), overlap_ok=True)


def nonzero(input, *, as_tuple=False):
    """Mirrors ``torch.nonzero`` (eager only: the result's shape depends on the values)."""
    arr = values_for_shape(input, "nonzero")
    if arr.ndim == 0 and not as_tuple:   # PyTorch: shape (1, 0) or (0, 0)
        return from_host(np.argwhere(arr), input, np.int64)
    nz = np.nonzero(arr.reshape(-1) if arr.ndim == 0 else arr)
    if as_tuple:
        return tuple(from_host(i, input, np.int64) for i in nz)
    return from_host(np.stack(nz, axis=1), input, np.int64)


PUBLIC = ("nonzero",)
TENSOR_METHODS = {"__getitem__": getitem, "__setitem__": setitem, "copy_": copy_,
                  "zero_": zero_, "fill_": fill_, "nonzero": nonzero}
