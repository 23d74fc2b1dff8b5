"""Joining, splitting and tiling ops: split/chunk/tensor_split/hsplit/vsplit/dsplit,
hstack/vstack/dstack/column_stack and the cat aliases, atleast_1d/2d/3d, broadcast_tensors,
broadcast_shapes, meshgrid, repeat/tile/repeat_interleave, and the reordering copies
flip/roll/rot90.  split and chunk return views of one multi-output node (SplitBackward0), which
PyTorch forbids to write in place while autograd records; tensor_split's pieces are plain slices.
"""
import warnings

import jax
import jax.numpy as jnp
import numpy as np

from .._dispatch import Op, call
from .._size import Size, _int_like, int_arg, parse_size, type_name
from .._tensor import Tensor, _contiguous_strides, _wrap_dim
from .._views import stored_strides
from . import shape as S
from .scatter import index_select, masked_select


# --- split, chunk, tensor_split -----------------------------------------------------------------

def _slices(x, dim, bounds):
    # one lax.split (bounds are consecutive), whose reverse mode is one concatenate; separate
    # slices would pad each piece's gradient to the full shape and add them up, which XLA took
    # over twice as long to compile for 100 pieces
    return tuple(jax.lax.split(x, [b - a for a, b in bounds], axis=dim))


SPLIT = {kind: Op("split", _slices, f"{kind}Backward0", saves=(),
                  pieces=lambda arrays, static: S.pieces_of(arrays[0], static[0][1],
                                                             static[1][1]))
         for kind in ("Split", "SplitWithSizes", "UnsafeSplit")}
for _op in SPLIT.values():   # (NOTE [ new shapes moved on the host ] in _host.py)
    _op.cold = S.moved_by(_op, lambda x, dim, bounds: tuple(
        np.split(x, [b for _, b in bounds[:-1]], axis=dim)))


def _split_views(input, kind, dim, sizes):
    """Pieces of ``sizes`` along dim: outputs of one node, each a view of input's storage
    (``UnsafeSplit``: new tensors, which may be written in place)."""
    bounds, start = [], 0
    for n in sizes:
        bounds.append((start, start + n))
        start += n
    outs = call(SPLIT[kind], input, static=(("dim", dim), ("bounds", tuple(bounds))))
    if kind == "UnsafeSplit":
        return outs
    for (a, b), o in zip(bounds, outs):
        o._become_view(input, S.SLICE, S.slice_static(dim, a, b, 1), o._grad_fn is not None)
        o._multi_view_of = kind
    return outs


def _split_dim(input, dim):
    if input.ndim == 0:
        raise RuntimeError("split expects at least a 1-dimensional tensor")
    return _wrap_dim(dim, input.ndim)


def split(tensor, split_size_or_sections, dim=0):
    """Mirrors ``torch.split``: pieces of ``split_size`` along dim (the last may be smaller), or
    of each size in a list; views of ``tensor``."""
    if isinstance(split_size_or_sections, (list, tuple)):
        return _split_with_sizes(tensor, split_size_or_sections, dim)
    return _split(tensor, split_size_or_sections, dim, "Split")


def unsafe_split(tensor, split_size, dim=0):
    """Mirrors ``torch.unsafe_split``: ``split``'s pieces as new tensors, not views
    (UnsafeSplitBackward0), so they may be modified in place."""
    return _split(tensor, split_size, dim, "UnsafeSplit")


def _split(tensor, split_size_or_sections, dim, kind):
    if not (type(split_size_or_sections) is int or _int_like(split_size_or_sections)):
        raise TypeError("split_with_sizes(): argument 'split_sizes' (position 2) must be tuple "
                        f"of ints, not {type_name(split_size_or_sections)}")
    size = int(split_size_or_sections)
    dim = _split_dim(tensor, dim)
    length = tensor.shape[dim]
    if size < 0:
        raise RuntimeError(f"split expects split_size be non-negative, but got split_size={size}")
    if size == 0 and length != 0:
        raise RuntimeError(f"split_size can only be 0 if dimension size is 0, but got dimension "
                           f"size of {length}")
    n = max(-(-length // size), 1) if size else 1
    return _split_views(tensor, kind, dim, [size] * (n - 1) + [length - size * (n - 1)])


def _split_with_sizes(tensor, sizes, dim):
    sizes = list(parse_size("split_with_sizes", (sizes,), name="split_sizes", position=2,
                            varargs=False))
    dim = _split_dim(tensor, dim)
    length = tensor.shape[dim]
    if any(s < 0 for s in sizes):
        raise RuntimeError(f"split_with_sizes expects split_sizes have only non-negative entries, "
                           f"but got split_sizes={sizes}")
    if sum(sizes) != length:
        raise RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to {length} "
                           f"(input tensor's size at dimension {dim}), but got "
                           f"split_sizes={sizes}")
    return _split_views(tensor, "SplitWithSizes", dim, sizes)


def _split_method(self, split_size, dim=0):
    return split(self, split_size, dim)


def chunk(input, chunks, dim=0):
    """Mirrors ``torch.chunk``: ``split`` into pieces of ceil(size / chunks)."""
    return _chunk(input, chunks, dim, False)


def unsafe_chunk(input, chunks, dim=0):
    """Mirrors ``torch.unsafe_chunk``: ``chunk``'s pieces as new tensors, not views."""
    return _chunk(input, chunks, dim, True)


def _chunk(input, chunks, dim, unsafe):
    if input.ndim == 0:
        raise RuntimeError("chunk expects at least a 1-dimensional tensor")
    chunks = int_arg("chunk", "chunks", 1, chunks)
    if chunks <= 0:
        raise RuntimeError(f"chunk expects `chunks` to be greater than 0, got: {chunks}")
    dim = _wrap_dim(dim, input.ndim)
    length = input.shape[dim]
    if length == 0:   # PyTorch gives ``chunks`` empty pieces here
        return _split_views(input, "UnsafeSplit" if unsafe else "SplitWithSizes", dim,
                            [0] * chunks)
    return _split(input, -(-length // chunks), dim, "UnsafeSplit" if unsafe else "Split")


def tensor_split(input, indices_or_sections=None, dim=0, *, sections=None, indices=None,
                 tensor_indices_or_sections=None):
    """Mirrors ``torch.tensor_split``: ``sections`` nearly equal pieces (the first ones one
    longer), or the pieces between ``indices``; each a slice view (SliceBackward0)."""
    spec = next((a for a in (indices_or_sections, sections, indices, tensor_indices_or_sections)
                 if a is not None), None)
    if spec is None:
        raise TypeError("tensor_split() missing required argument 'indices_or_sections'")
    if input.ndim == 0:
        raise RuntimeError("tensor_split expected at least a 1-dimensional tensor, but got a "
                           "tensor with 0 dims")
    if isinstance(spec, Tensor):
        spec = _split_spec(spec)
    dim = _wrap_dim(dim, input.ndim)
    length = input.shape[dim]
    if isinstance(spec, int):
        if spec <= 0:
            raise RuntimeError(f"number of sections must be larger than 0, got {spec}")
        q, r = divmod(length, spec)
        cuts = np.cumsum([q + 1] * r + [q] * (spec - r))[:-1].tolist()
    else:
        cuts = [int(i) for i in spec]
    starts, stops = [0] + cuts, cuts + [None]
    return tuple(S.slice_dim(input, dim, a, b, 1) for a, b in zip(starts, stops))


def _split_spec(t):
    """tensor_split's tensor argument: a 0-dim section count or a 1-dim list of indices (host
    values: the pieces' shapes depend on them)."""
    if t.ndim > 1:
        raise RuntimeError(f"tensor_split expected tensor_indices_or_sections to be a "
                           f"zero-dimensional or one-dimensional tensor, but got a tensor with "
                           f"{t.ndim} dims")
    if t.dtype._name != "int64":
        raise RuntimeError(f"tensor_split expected tensor_indices_or_sections to have dtype of "
                           f"long, but got {t.dtype._scalar_name}")
    values = np.asarray(t._scalar_for_python("tensor_split()"))
    return int(values) if t.ndim == 0 else values.tolist()


def _split_along(name, min_dim, pick_dim):
    def fn(input, indices_or_sections):
        n = input.ndim
        if n < min_dim:
            raise RuntimeError(f"torch.{name} requires a tensor with at least {min_dim} "
                               f"dimension, but got a tensor with {n} dimensions!")
        dim = pick_dim(n)
        spec = indices_or_sections
        if isinstance(spec, int) and (spec == 0 or input.shape[dim] % spec):
            raise RuntimeError(f"torch.{name} attempted to split along dimension {dim}, but the "
                               f"size of the dimension {input.shape[dim]} is not divisible by "
                               f"the split_size {spec}!")
        return tensor_split(input, spec, dim)
    fn.__name__ = name
    fn.__doc__ = f"Mirrors ``torch.{name}``: ``tensor_split`` along dim {pick_dim(3)}."
    return fn


hsplit = _split_along("hsplit", 1, lambda n: 1 if n > 1 else 0)
vsplit = _split_along("vsplit", 2, lambda n: 0)
dsplit = _split_along("dsplit", 3, lambda n: 2)


# --- stacking -----------------------------------------------------------------------------------

def concat(tensors, dim=0, *, axis=None, out=None):
    """Mirrors ``torch.concat`` (an alias of ``cat``; ``axis`` is ``dim``)."""
    return S.cat(S.tensor_sequence(tensors, "concat"), dim if axis is None else axis, out=out)


def concatenate(tensors, dim=0, *, axis=None, out=None):
    """Mirrors ``torch.concatenate`` (an alias of ``cat``; ``axis`` is ``dim``)."""
    return S.cat(S.tensor_sequence(tensors, "concatenate"), dim if axis is None else axis,
                 out=out)


def _atleast(n):
    def one(t):
        if not isinstance(t, Tensor):
            raise TypeError(f"atleast_{n}d() received an invalid combination of arguments - got "
                            f"({type(t).__name__}), but expected one of:\n * (Tensor input)\n"
                            " * (tuple of Tensors tensors)")
        d = t.ndim
        if d >= n:
            return t
        if d == 0:
            return S.reshape(t, (1,) * n)
        if d == 1 and n == 3:
            return S.unsqueeze(S.unsqueeze(t, 0), -1)
        return S.unsqueeze(t, 0 if n == 2 else -1)

    def fn(*tensors):
        if len(tensors) == 1 and isinstance(tensors[0], Tensor):
            return one(tensors[0])
        if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
            tensors = tensors[0]
        return tuple(one(t) for t in tensors)
    fn.__name__ = f"atleast_{n}d"
    fn.__doc__ = (f"Mirrors ``torch.atleast_{n}d``: each tensor viewed with at least {n} dims "
                  "(one tensor in, one out; several or a sequence in, a tuple out).")
    return fn


atleast_1d, atleast_2d, atleast_3d = _atleast(1), _atleast(2), _atleast(3)


def _nonempty(tensors, name):
    tensors = S.tensor_sequence(tensors, name)
    if not tensors:
        raise RuntimeError(f"{name} expects a non-empty TensorList")
    return tensors


def hstack(tensors, *, out=None):
    """Mirrors ``torch.hstack``: cat along dim 1 (dim 0 for vectors)."""
    tensors = atleast_1d(_nonempty(tensors, "hstack"))
    return S.cat(tensors, 0 if tensors[0].ndim == 1 else 1, out=out)


def vstack(tensors, *, out=None):
    """Mirrors ``torch.vstack``: cat of ``atleast_2d`` views along dim 0."""
    return S.cat(atleast_2d(_nonempty(tensors, "vstack")), 0, out=out)


def row_stack(tensors, *, out=None):
    """Mirrors ``torch.row_stack`` (an alias of ``vstack``)."""
    return vstack(S.tensor_sequence(tensors, "row_stack"), out=out)


def dstack(tensors, *, out=None):
    """Mirrors ``torch.dstack``: cat of ``atleast_3d`` views along dim 2."""
    return S.cat(atleast_3d(_nonempty(tensors, "dstack")), 2, out=out)


def column_stack(tensors, *, out=None):
    """Mirrors ``torch.column_stack``: vectors and scalars become columns, then ``hstack``."""
    tensors = [S.reshape(t, (t.numel(), 1)) if t.ndim <= 1 else t
               for t in _nonempty(tensors, "column_stack")]
    return hstack(tensors, out=out)


# --- broadcasting and grids ---------------------------------------------------------------------

def broadcast_shapes(*shapes):
    """Mirrors ``torch.broadcast_shapes``: the broadcast of shapes (ints or sequences)."""
    dims = []
    for s in shapes:
        if isinstance(s, int):
            dims.append((s,))
        elif isinstance(s, (tuple, list)):
            dims.append(tuple(s))
        else:
            raise RuntimeError(f"Input shapes should be of type ints, a tuple of ints, or a list "
                               f"of ints, got {s}")
    result = [1] * max((len(d) for d in dims), default=0)
    for i, (s, d) in enumerate(zip(shapes, dims)):
        for j in range(-1, -len(d) - 1, -1):
            if d[j] < 0:
                raise ValueError("Attempting to broadcast a dimension with negative length!")
            if d[j] == 1 or d[j] == result[j]:
                continue
            if result[j] != 1:
                shown = (s,) if isinstance(s, int) else s
                raise RuntimeError(f"Attempting to broadcast a dimension of length {d[j]} at {j}! "
                                   f"Mismatching argument at index {i} had {shown!r}; but "
                                   f"expected shape should be broadcastable to {result}")
            result[j] = d[j]
    return Size(result)


def _broadcast_pair(a, b):
    n = max(len(a), len(b))
    a, b = (1,) * (n - len(a)) + tuple(a), (1,) * (n - len(b)) + tuple(b)
    for d in range(n - 1, -1, -1):
        if a[d] != b[d] and a[d] != 1 and b[d] != 1:
            raise RuntimeError(f"The size of tensor a ({a[d]}) must match the size of tensor b "
                               f"({b[d]}) at non-singleton dimension {d}")
    return tuple(y if x == 1 else x for x, y in zip(a, b))


def _check_tensors(tensors):
    for i, t in enumerate(tensors):
        if not isinstance(t, Tensor):
            raise TypeError(f"expected Tensor as element {i} in argument 0, but got "
                            f"{type(t).__name__}")


def broadcast_tensors(*tensors):
    """Mirrors ``torch.broadcast_tensors``: each tensor expanded to the common shape (a tensor
    already of that shape is returned as it is)."""
    _check_tensors(tensors)
    shape = ()
    for t in tensors:
        shape = _broadcast_pair(shape, t.shape)
    return tuple(t if t.shape == shape else S.expand(t, shape) for t in tensors)


def meshgrid(*tensors, indexing=None):
    """Mirrors ``torch.meshgrid``: expanded views of 0-/1-dim tensors over their grid;
    ``indexing='ij'`` orders the grid's dims as the inputs, ``'xy'`` swaps the first two."""
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    if indexing is None:
        warnings.warn("torch.meshgrid: in an upcoming release, it will be required to pass the "
                      "indexing argument.", UserWarning, stacklevel=2)
        indexing = "ij"
    if not tensors:
        raise RuntimeError("meshgrid expects a non-empty TensorList")
    _check_tensors(tensors)
    for t in tensors:
        if t.ndim > 1:
            raise RuntimeError(f"torch.meshgrid: Expected 0D or 1D tensor in the tensor list but "
                               f"got: {t}")
    for what in ("dtype", "device"):
        if any(getattr(t, what) != getattr(tensors[0], what) for t in tensors):
            raise RuntimeError(f"meshgrid expects all tensors to have the same {what}")
    if indexing not in ("ij", "xy"):
        raise RuntimeError(f'torch.meshgrid: indexing must be one of "xy" or "ij", but received: '
                           f'{indexing}')
    order = list(range(len(tensors)))
    if indexing == "xy" and len(order) > 1:
        order[0], order[1] = 1, 0
    grid = tuple(tensors[i].numel() for i in order)
    outs = []
    for i, t in enumerate(tensors):
        shape = [1] * len(order)
        shape[order.index(i)] = -1
        outs.append(S.expand(S.view(t, shape), grid))
    return tuple(outs)


# --- repeating ----------------------------------------------------------------------------------

def _repeat(x, reps):
    return jnp.tile(x.reshape((1,) * (len(reps) - x.ndim) + x.shape), reps)


REPEAT = Op("repeat", _repeat, "RepeatBackward0", saves=())
REPEAT_INDEX = Op("repeat_interleave", lambda r, total: jnp.repeat(
    jnp.arange(r.shape[0], dtype=r.dtype), r, total_repeat_length=total), None)


def repeat(self, *sizes):
    """Mirrors ``Tensor.repeat``: the tensor tiled ``sizes`` times along each dim (leading
    sizes add dims)."""
    reps = S._sizes(sizes, "repeat", "repeats")
    if len(reps) < self.ndim:
        raise RuntimeError("Number of dimensions of repeat dims can not be smaller than number "
                           "of dimensions of tensor")
    shape = [a * b for a, b in zip((1,) * (len(reps) - self.ndim) + self.shape, reps)]
    for d in shape:
        if d < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {d}: {shape}")
    return call(REPEAT, self, static=(("reps", reps),))


def tile(input, dims):
    """Mirrors ``torch.tile``: ``repeat`` with ``dims`` padded by leading 1s to input's rank."""
    if isinstance(dims, int):
        raise TypeError("tile(): argument 'dims' (position 2) must be tuple of ints, not int")
    dims = tuple(dims)
    return repeat(input, (1,) * (input.ndim - len(dims)) + dims)


def _tile_method(self, *dims):
    return tile(self, S._sizes(dims, "tile", "dims"))


def _repeat_index(repeats, output_size=None):
    """``torch.repeat_interleave(repeats)``: i repeated repeats[i] times.  Its length is the sum
    of repeats, read from the host unless ``output_size`` gives it."""
    if repeats.ndim != 1:
        raise RuntimeError("repeat_interleave only accept 1D vector as repeat")
    if repeats.dtype._name not in ("int32", "int64"):
        raise NotImplementedError(f"\"repeat_interleave_cpu\" not implemented for "
                                  f"'{repeats.dtype._scalar_name}'")
    arr = repeats._value()
    if isinstance(arr, jax.core.Tracer):
        if output_size is None:
            repeats._scalar_for_python("repeat_interleave() without output_size")
        total = output_size
    else:
        values = np.asarray(arr)
        if (values < 0).any():
            raise RuntimeError("repeats can not be negative")
        total = int(values.sum())
        if output_size is not None and output_size != total:
            raise RuntimeError("allocated size does not match required size")
    return call(REPEAT_INDEX, repeats, static=(("total", total),))


def repeat_interleave(input, repeats=None, dim=None, *, output_size=None):
    """Mirrors ``torch.repeat_interleave``: each entry along ``dim`` (of the flattened input when
    dim is None) repeated ``repeats`` times (an int, or a tensor with one count per entry).
    With a single tensor argument: its indices, each repeated by its value."""
    if repeats is None:
        return _repeat_index(input, output_size)
    x = S.flatten(input) if dim is None else input
    dim = 0 if dim is None else _wrap_dim(dim, input.ndim)
    if isinstance(repeats, Tensor):
        if repeats.ndim > 1:
            raise RuntimeError("repeats must be 0-dim or 1-dim tensor")
        size = x.shape[dim]
        if repeats.numel() == 1:
            repeats = S.expand(S.reshape(repeats, (1,)), (size,))
        elif repeats.shape[0] != size:
            raise RuntimeError(f"repeats must have the same size as input along dim, but got "
                               f"repeats.size(0) = {repeats.shape[0]} and input.size({dim}) = "
                               f"{size}")
        return index_select(x, dim, _repeat_index(repeats, output_size))
    if repeats < 0:
        raise RuntimeError("Repeats must be non-negative")
    shape = list(S.unsqueeze(x, dim + 1).shape)
    shape[dim + 1] = repeats
    if output_size is not None and output_size != x.shape[dim] * repeats:
        raise RuntimeError(f"repeat_interleave: Invalid output_size, expected "
                           f"{x.shape[dim] * repeats} but got {output_size}")
    expanded = S.expand(S.unsqueeze(x, dim + 1), shape)
    return S.flatten(S.clone(expanded), dim, dim + 1)


# --- reordering copies: flip, roll, rot90 -------------------------------------------------------

FLIP = Op("flip", lambda x, dims: jnp.flip(x, dims) if x.ndim else x, "FlipBackward0", saves=())
ROLL = Op("roll", lambda x, shifts, dims: jnp.roll(x, shifts, dims) if dims else
          jnp.roll(x.ravel(), shifts).reshape(x.shape), "RollBackward0", saves=())
ROT90 = Op("rot90", lambda x, k, dims: jnp.rot90(x, k, dims), "Rot90Backward0", saves=())


def _distinct_dims(dims, n):
    dims = tuple(_wrap_dim(d, n) for d in dims)
    for i, d in enumerate(dims):
        if d in dims[:i]:
            raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
    return dims


def flip(input, dims):
    """Mirrors ``torch.flip``: the entries of each dim in ``dims`` reversed (a copy)."""
    if isinstance(dims, int):
        raise TypeError("flip(): argument 'dims' (position 2) must be tuple of ints, not int")
    return call(FLIP, input, static=(("dims", _distinct_dims(dims, input.ndim)),))


def _flip_method(self, *dims):
    return flip(self, S._sizes(dims, "flip", "dims"))


def fliplr(input):
    """Mirrors ``torch.fliplr``: flip dim 1."""
    if input.ndim < 2:
        raise RuntimeError("Input must be >= 2-d.")
    return flip(input, (1,))


def flipud(input):
    """Mirrors ``torch.flipud``: flip dim 0."""
    if input.ndim < 1:
        raise RuntimeError("Input must be >= 1-d.")
    return flip(input, (0,))


def roll(input, shifts, dims=None):
    """Mirrors ``torch.roll``: entries shifted cyclically along ``dims`` (without dims, along
    the flattened tensor, reshaped back)."""
    shifts = S._dims(shifts, "roll", "shifts", 2)
    dims = () if dims is None else S._dims(dims, "roll", "dims", 3)
    if not shifts:
        raise RuntimeError("`shifts` required")
    if len(shifts) != len(dims) and not (len(shifts) == 1 and not dims):
        raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, dims:"
                           f"{len(dims)}")
    if input.ndim == 0 and dims:
        raise IndexError(f"Dimension specified as {dims[0]} but tensor has no dimensions")
    dims = tuple(_wrap_dim(d, input.ndim) for d in dims)
    return call(ROLL, input, static=(("shifts", shifts if dims else shifts[0]), ("dims", dims)))


def rot90(input, k=1, dims=(0, 1)):
    """Mirrors ``torch.rot90``: rotate by k * 90 degrees in the plane of ``dims``, from the first
    towards the second.  Odd k gives PyTorch's transposed (non-contiguous) strides."""
    dims = tuple(dims)
    if len(dims) != 2:
        raise RuntimeError(f"expected total rotation dims == 2, but got dims = {len(dims)}")
    n = input.ndim
    if n < 2:
        raise RuntimeError(f"expected total dims >= 2, but got total dims = {n}")
    d0, d1 = _wrap_dim(dims[0], n), _wrap_dim(dims[1], n)
    if d0 == d1:
        raise RuntimeError(f"expected rotation dims to be different, but got dim0 = {dims[0]} "
                           f"and dim1 = {dims[1]}")
    out = call(ROT90, input, static=(("k", k % 4), ("dims", (d0, d1))))
    if k % 2:
        s = list(_contiguous_strides(input.shape))
        s[d0], s[d1] = s[d1], s[d0]
        out._strides = stored_strides(s, out.shape)
    return out


# --- products of 1-D tensors and block diagonals ------------------------------------------------

def _vectors(tensors):
    for t in tensors:
        if t.ndim != 1:
            raise RuntimeError(f"Expect a 1D vector, but got shape {list(t.shape)}")


def cartesian_prod(*tensors):
    """Mirrors ``torch.cartesian_prod``: every tuple of elements, one from each 1-D tensor, as
    the rows of an (N, k) tensor (one tensor is returned as it is), like itertools.product."""
    _vectors(tensors)
    if len(tensors) == 1:
        return tensors[0]
    grids = meshgrid(*tensors, indexing="ij")
    return S.stack([S.flatten(g) for g in grids], 1)


def combinations(input, r=2, with_replacement=False):
    """Mirrors ``torch.combinations``: the length-``r`` combinations of a 1-D tensor's elements
    as rows, in lexicographic order, like itertools.combinations (or
    combinations_with_replacement)."""
    _vectors((input,))
    if r < 0:
        raise RuntimeError(f"Expect a non-negative number, but got {r}")
    if r == 0:
        from .._creation import empty
        return empty(0, dtype=input.dtype, device=input.device)
    n = input.numel()
    grids = meshgrid(*([input] * r), indexing="ij")
    # PyTorch's mask over the r-dim grid: indices increasing (non-decreasing with replacement)
    idx = np.indices((n,) * r)
    keep = np.ones((n,) * r, bool)
    for a, b in zip(idx[:-1], idx[1:]):
        keep &= (a <= b) if with_replacement else (a < b)
    from .._creation import tensor
    mask = tensor(keep, device=input.device)
    return S.stack([masked_select(g, mask) for g in grids], 1)


def _block_diag(*xs):
    rows = sum(x.shape[0] for x in xs)
    cols = sum(x.shape[1] for x in xs)
    dt = xs[0].dtype if xs else jnp.float32
    out = jnp.zeros((rows if xs else 1, cols), dt)
    r = c = 0
    for x in xs:
        out = jax.lax.dynamic_update_slice(out, x, (r, c))
        r, c = r + x.shape[0], c + x.shape[1]
    return out


BLOCK_DIAG = Op("block_diag", lambda *xs: _block_diag(*[x.reshape(
    (1,) * (2 - x.ndim) + x.shape) for x in xs]), "BlockDiagBackward0", saves=(),
    promote="common")


def block_diag(*tensors):
    """Mirrors ``torch.block_diag``: the tensors (0-, 1- or 2-dim: a 1-D one is a row) on the
    diagonal of one matrix, zeros elsewhere, in their promoted dtype."""
    _check_tensors(tensors)
    for i, t in enumerate(tensors):
        if t.ndim > 2:
            raise RuntimeError(f"torch.block_diag: Input tensors must have 2 or fewer dimensions. "
                               f"Input {i} has {t.ndim} dimensions")
    if not tensors:
        from .._creation import empty
        return empty(1, 0)
    return call(BLOCK_DIAG, *tensors)


def vander(x, N=None, increasing=False):
    """Mirrors ``torch.vander``: the Vandermonde matrix of a 1-D tensor, columns the powers
    ``x**(N-1) ... x**0`` (``increasing``: ``x**0 ... x**(N-1)``), as ATen builds it (fill,
    copy, cumprod, flip; integers become int64)."""
    from .. import _dtype as D
    from .._creation import empty
    from .reduce import cumprod
    if x.ndim != 1:
        raise RuntimeError("x must be a one-dimensional tensor.")
    n = x.shape[0] if N is None else N
    if n < 0:
        raise RuntimeError("N must be non-negative.")
    result = empty(x.shape[0], n, dtype=D.promote_types(x.dtype, D.int64), device=x.device)
    if n > 0:
        result.fill_(1)
        if n > 1:
            result[:, 1:] = x.unsqueeze(1)
            result[:, 1:] = cumprod(result[:, 1:], 1)
    return result if increasing else flip(result, (1,))


PUBLIC = ("split", "tensor_split", "chunk", "hsplit", "vsplit", "dsplit", "concat", "concatenate",
          "hstack", "vstack", "row_stack", "dstack", "column_stack", "atleast_1d", "atleast_2d",
          "atleast_3d", "broadcast_shapes", "broadcast_tensors", "meshgrid", "tile",
          "repeat_interleave", "flip", "fliplr", "flipud", "roll", "rot90", "cartesian_prod",
          "combinations", "block_diag", "unsafe_split", "unsafe_chunk", "vander")
TENSOR_METHODS = {
    "split": _split_method, "tensor_split": tensor_split, "chunk": chunk, "hsplit": hsplit,
    "unsafe_split": unsafe_split, "unsafe_chunk": unsafe_chunk,
    "vsplit": vsplit, "dsplit": dsplit, "repeat": repeat, "tile": _tile_method,
    "repeat_interleave": repeat_interleave, "flip": _flip_method, "fliplr": fliplr,
    "flipud": flipud, "roll": roll, "rot90": rot90,
}
