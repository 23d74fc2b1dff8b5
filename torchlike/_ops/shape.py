"""Shape and view ops: view/reshape/transpose/permute/(un)squeeze/expand/flatten, select/slice,
narrow, movedim, unflatten, diagonal, unfold, cat/stack, clone/contiguous; and the triangle and
diagonal copies tril/triu/diag/diag_embed/diagflat/trace.
A view op's ``view`` rule gives the output's strides (as PyTorch would report them) and marks it
as a view of its input (NOTE [ views and in-place writes ])."""
import contextlib
import math
import weakref

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import SingleDeviceSharding

from .. import _dispatch, _dtype as D, _layout
from .._dispatch import Op, call, defop, eager_forward, remember, with_out as _out
from .._host import moved_on_host, top_level as _top_level
from .._inplace import inplace_method, inplace_view
from .._size import int_arg, parse_size
from .._lazy import Pending
from .._tensor import ArrayImpl, Tensor, _contiguous_strides, _wrap_dim, on_host
from .._x64 import restore as _x64_restore, swap as _x64_swap
from .._views import apply_chain, stored_strides, strides_of


# --- strides ------------------------------------------------------------------------------------

def view_strides(old_shape, old_strides, new_shape):
    """Strides of ``new_shape`` viewing memory laid out as (old_shape, old_strides), or None
    when no such view exists (PyTorch's computeStride)."""
    old_shape, new_shape = tuple(old_shape), tuple(new_shape)   # (Size indexes in Python)
    if len(old_shape) == 0 or math.prod(old_shape) == 0:
        return _contiguous_strides(new_shape)
    new_strides = [0] * len(new_shape)
    view_d = len(new_shape) - 1
    chunk_base = old_strides[-1]
    tensor_numel = view_numel = 1
    for d in range(len(old_shape) - 1, -1, -1):
        tensor_numel *= old_shape[d]
        if d == 0 or (old_shape[d - 1] != 1 and old_strides[d - 1] != tensor_numel * chunk_base):
            while view_d >= 0 and (view_numel < tensor_numel or new_shape[view_d] == 1):
                new_strides[view_d] = view_numel * chunk_base
                view_numel *= new_shape[view_d]
                view_d -= 1
            if view_numel != tensor_numel:
                return None
            if d > 0:
                chunk_base = old_strides[d - 1]
                tensor_numel = view_numel = 1
    return tuple(new_strides) if view_d == -1 else None


def _viewed(parent, out, kw):
    if parent._strides is None:   # a view of a contiguous tensor is contiguous
        return None
    return stored_strides(view_strides(parent.shape, parent._strides, out.shape), out.shape)


def _transposed(parent, out, kw):
    s = list(strides_of(parent))
    if s:
        d0, d1 = kw.get("dim0", 0), kw.get("dim1", len(s) - 1)
        s[d0], s[d1] = s[d1], s[d0]
    return stored_strides(s, out.shape)


def _permuted(parent, out, kw):
    s = strides_of(parent)
    return stored_strides([s[d] for d in kw["dims"]], out.shape)


def _unsqueezed(parent, out, kw):
    s, shape, d = list(strides_of(parent)), parent.shape, kw["dim"]
    s.insert(d, 1 if d >= len(shape) else shape[d] * s[d])
    return stored_strides(s, out.shape)


def _squeezed(parent, out, kw):
    s, dims = strides_of(parent), kw["dims"]
    return stored_strides([st for i, st in enumerate(s) if i not in dims], out.shape)


def _expanded(parent, out, kw):
    s, shape, new = strides_of(parent), parent.shape, out.shape
    lead = len(new) - len(shape)
    st = [0] * lead + [0 if (shape[i] == 1 and new[lead + i] != 1) else s[i]
                       for i in range(len(shape))]
    return tuple(st)


def _selected(parent, out, kw):
    if parent._strides is None and kw["dim"] == 0:   # rows of a contiguous tensor: contiguous
        return None
    s = list(strides_of(parent))
    del s[kw["dim"]]
    return stored_strides(s, out.shape)


def _sliced(parent, out, kw):
    if parent._strides is None and kw["dim"] == 0 and kw["step"] == 1:   # (as _selected)
        return None
    s = list(strides_of(parent))
    s[kw["dim"]] *= kw["step"]
    return stored_strides(s, out.shape)


def _same(parent, out, kw):
    return parent._strides


def _diagonal_strides(parent, out, kw):
    s, d1, d2 = strides_of(parent), kw["dim1"], kw["dim2"]
    rest = [st for i, st in enumerate(s) if i not in (d1, d2)]
    return stored_strides(rest + [s[d1] + s[d2]], out.shape)


def _unfolded(parent, out, kw):
    s, d = list(strides_of(parent)), kw["dim"]
    if s:
        s.append(s[d])
        s[d] *= kw["step"]
    return stored_strides(s, out.shape)


def _unfold(x, dim, size, step):
    """Windows of ``size`` every ``step`` along dim, as a new last dim; with numpy where ``x``
    is numpy's."""
    xp = np if type(x) is np.ndarray else jnp
    if x.ndim == 0:
        return xp.broadcast_to(x, (size,))
    n = (x.shape[dim] - size) // step + 1
    windows = xp.arange(n)[:, None] * step + xp.arange(size)
    return xp.moveaxis(xp.take(x, windows, axis=dim), dim + 1, -1)


# --- the view ops -------------------------------------------------------------------------------

# NOTE [ a view undone ]
# nn.MultiheadAttention turns a batch_first input into (tokens, batch) order with a transpose,
# and its packed self-attention (NOTE in _ops/attention.py) projects the input in its own
# (batch, tokens) order, transposing it back: a view of a view whose values are the input's.
# Each transpose was a program and a copy (two of the 41 calls of bench_train's Transformer
# forward).  So a transpose, t or permute that undoes the one step that made its operand from
# its storage root takes the root's array (a jax array is immutable; a write rebinds a root's
# and re-derives its views), with the view, its node and its strides made as for any view.
def _undoes_swap(step, static):
    return step[0] is TRANSPOSE and {v for _, v in step[1]} == {v for _, v in static}


def _undoes_permutation(step, static):
    if step[0] is not PERMUTE:
        return False
    first, then = step[1][0][1], static[0][1]
    return all(first[d] == i for i, d in enumerate(then))


VIEW = Op("view", lambda x, shape: x.reshape(shape), "ViewBackward0", saves=(), view=_viewed)
_swap = lambda x, dim0, dim1: jnp.swapaxes(x, dim0, dim1) if x.ndim else x  # noqa: E731
TRANSPOSE = Op("transpose", _swap, "TransposeBackward0", saves=(), view=_transposed,
               undoes=_undoes_swap)
TRANSPOSE_ = Op("transpose_", _swap, "TransposeBackward1", saves=(), view=_transposed)
T = Op("t", lambda x: x.T, "TBackward0", saves=(), view=_transposed,
       undoes=lambda step, static: step[0] is T)
PERMUTE = Op("permute", lambda x, dims: jnp.transpose(x, dims), "PermuteBackward0", saves=(),
             view=_permuted, undoes=_undoes_permutation)
UNSQUEEZE = Op("unsqueeze", lambda x, dim: jnp.expand_dims(x, dim), "UnsqueezeBackward0",
               saves=(), view=_unsqueezed)
_squeeze = lambda x, dims: jnp.squeeze(x, dims)  # noqa: E731
SQUEEZE = {kind: Op("squeeze", _squeeze, f"SqueezeBackward{kind}", saves=(), view=_squeezed)
           for kind in (0, 1, 2)}
EXPAND = Op("expand", lambda x, shape: jnp.broadcast_to(x, shape), "ExpandBackward0", saves=(),
            view=_expanded)
def _slice(x, dim, start, step, size):
    """x[..., start:start + size * step:step, ...] along dim (start may be traced)."""
    if size == 0:
        return jax.lax.slice_in_dim(x, 0, 0, axis=dim)
    span = jax.lax.dynamic_slice_in_dim(x, start, (size - 1) * step + 1, axis=dim)
    return span if step == 1 else jax.lax.slice_in_dim(span, 0, None, step, axis=dim)


def slice_static(dim, start, stop, step):
    """SLICE's static arguments for a normalised slice (0 <= start <= stop <= size)."""
    return (("dim", dim), ("start", start), ("step", step),
            ("size", len(range(start, stop, step))))


def _unprogrammed(arrays, static):
    """A slice that keeps all of its dim: the array itself, with no program (still a view with
    SliceBackward0, as in PyTorch).  A context window cut from a sequence shorter than it,
    ``x[:, -n:]``, is one, and would compile a program for each new length."""
    x = arrays[0]
    (_, dim), (_, start), _, (_, size) = static
    return x if start == 0 and size == x.shape[dim] else None


SELECT = Op("select", lambda x, dim, index: jax.lax.dynamic_index_in_dim(x, index, dim, False),
            "SelectBackward0", saves=(), view=_selected, dynamic=("index",))
SLICE = Op("slice", _slice, "SliceBackward0", saves=(), view=_sliced, dynamic=("start",),
           pieces=_unprogrammed)   # (a cut of a new shape: cold below)

# NOTE [ many outputs ]
# XLA on the CPU compiles a kernel per output of a program, about 15-20 ms each on the 2-core
# machine: a split into 100 pieces took 1.5-2 s to compile, and so did the backward of a cat of
# 100 tensors (100 slices of the gradient).  Outside tracing, such ops therefore make their
# pieces with one slicing program per piece size, its start a traced operand (the view-chain
# program of _views.py), called once per piece: for 100 pieces about 1 ms of calls where the
# one program cost seconds to compile.  A few pieces still run as one program (one call).
_FEW_PIECES = 4


def pieces_of(x, dim, bounds, squeeze=False):
    """The pieces [a, b) of the array ``x`` along dim (``squeeze``: each of size 1, the dim
    dropped), or None to run the op's own program (NOTE [ many outputs ])."""
    if len(bounds) <= _FEW_PIECES or len({b - a for a, b in bounds}) > _FEW_PIECES:
        return None   # few pieces, or so many sizes that each would compile its own program
    return _slice_pieces(x, dim, bounds, squeeze)


def _slice_pieces(x, dim, bounds, squeeze):
    if squeeze:
        return tuple(apply_chain(x, ((SELECT, (("dim", dim), ("index", a))),)) for a, _ in bounds)
    return tuple(apply_chain(x, ((SLICE, slice_static(dim, a, b, 1)),)) for a, b in bounds)


def _gradient_pieces(squeeze):
    """The backward of cat (``squeeze=False``) or stack as pieces of the gradient."""
    def grad_pieces(static, mask):
        if len(mask) <= _FEW_PIECES:
            return None
        dim = static[0][1]

        def grads(g, *primals):
            bounds, start = [], 0
            for p in primals:
                n = 1 if squeeze else p.shape[dim]
                bounds.append((start, start + n))
                start += n
            out = _slice_pieces(g, dim, [bounds[i] for i in mask], squeeze)
            return tuple(o if o.dtype == primals[i].dtype else o.astype(primals[i].dtype)
                         for o, i in zip(out, mask))
        return grads
    return grad_pieces


ALIAS = Op("alias", lambda x: x, "AliasBackward0", saves=(), view=_same)
DIAGONAL = Op("diagonal", lambda x, offset, dim1, dim2: jnp.diagonal(x, offset, dim1, dim2),
              "DiagonalBackward0", saves=(), view=_diagonal_strides)
UNFOLD = Op("unfold", _unfold, "UnfoldBackward0", saves=(), view=_unfolded)
DIAGONAL.host = lambda x, offset, dim1, dim2: np.diagonal(x, offset, dim1, dim2)
UNFOLD.host = _unfold   # (NOTE [ views read on the host ] in _views.py)


# --- public functions ---------------------------------------------------------------------------

def _sizes(args, fname="view", name="size"):
    """view(2, 3), view((2, 3)) and view(torch.Size([2, 3])) all mean (2, 3); a float or bool
    size raises PyTorch's TypeError (NOTE [ size arguments ])."""
    if len(args) == 1 and type(args[0]) is tuple and all(type(a) is int for a in args[0]):
        return args[0]   # the common case, checked in one pass
    return parse_size(fname, args, name)


def infer_size(shape, numel):
    """Resolve one -1 in ``shape`` (PyTorch's infer_size)."""
    if all(s >= 0 for s in shape) and math.prod(shape) == numel:
        return tuple(shape)   # nothing to infer: the common case, in one pass
    shape = list(shape)
    infer = None
    for i, s in enumerate(shape):
        if s == -1:
            if infer is not None:
                raise RuntimeError("only one dimension can be inferred")
            infer = i
        elif s < 0:
            raise RuntimeError(f"invalid shape dimension {s} at index {i} of shape {shape}")
    known = math.prod(s for s in shape if s != -1)
    if infer is not None:
        if known == 0 or numel % known:
            raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
        shape[infer] = numel // known
    elif known != numel:
        raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
    return tuple(shape)


# NOTE [ dtype views ]
# ``x.view(dtype)`` reads x's bytes as another dtype.  PyTorch's result shares x's storage (a write
# through either shows in the other) and its version counter, has no autograd history and is no
# view for autograd (``_base`` is None, even for x's own dtype), and where the element sizes differ
# its last dimension is scaled by their ratio (x's last stride must be 1; growing elements need
# sizes, offset and strides that the ratio divides).  Its step in a view's chain (``VIEW_DTYPE``)
# goes through an array of the bytes (``_as_dtype``), as jax bitcasts neither bool nor complex
# values.  A write through it (_views.scatter_chain) runs the chain backwards: the value written
# into the view's array, that array read back as the dtype before the step, and written through
# the steps before it.  A bool view is written as bytes, so the bytes it leaves keep their values;
# a bool tensor's bytes read as other dtypes are 0 or 1, and written back as bools (PyTorch keeps
# any byte in a bool, which then reads as true).

def _to_bytes(x):
    """``x``'s bytes: an array of uint8 of shape ``x.shape + (itemsize,)``."""
    if x.dtype == jnp.bool_:
        return x.astype(jnp.uint8)[..., None]
    if jnp.iscomplexobj(x):
        parts = jax.lax.bitcast_convert_type(jnp.stack([jnp.real(x), jnp.imag(x)], -1), jnp.uint8)
        return parts.reshape(x.shape + (x.dtype.itemsize,))
    b = jax.lax.bitcast_convert_type(x, jnp.uint8)
    return b if x.dtype.itemsize > 1 else b[..., None]


def _from_bytes(b, dtype):
    """The values that bytes ``b`` (uint8, its last dimension ``dtype``'s size) hold."""
    if dtype == jnp.bool_:
        return b[..., 0] != 0
    if dtype.kind == "c":
        half = dtype.itemsize // 2
        parts = jax.lax.bitcast_convert_type(b.reshape(b.shape[:-1] + (2, half)),
                                             jnp.dtype(f"float{8 * half}"))
        return jax.lax.complex(parts[..., 0], parts[..., 1])
    return jax.lax.bitcast_convert_type(b if dtype.itemsize > 1 else b[..., 0], dtype)


def _as_dtype(x, dtype):
    """``x``'s bytes read as ``dtype`` (a name), its last dimension scaled by the sizes' ratio."""
    dtype = jnp.dtype(dtype)
    b = _to_bytes(x)
    if x.ndim:
        n = x.shape[-1] * x.dtype.itemsize // dtype.itemsize
        b = b.reshape(x.shape[:-1] + (n, dtype.itemsize))
    return _from_bytes(b, dtype)


def _dtype_viewed(parent, out, kw):
    s = strides_of(parent)
    a, b = parent.dtype.itemsize, out.dtype.itemsize
    return stored_strides(s if a == b else [st * a // b for st in s[:-1]] + [1], out.shape)


VIEW_DTYPE = Op("view_dtype", _as_dtype, None, saves=(), view=_dtype_viewed)


def _view_dtype(x, dtype):
    """``x.view(dtype)`` (NOTE [ dtype views ])."""
    if not isinstance(dtype, D.dtype):
        raise TypeError(f"view(): argument 'dtype' must be torch.dtype, not {type(dtype).__name__}")
    alias = x.detach()
    if dtype is x.dtype:
        return alias
    a, b = x.dtype.itemsize, dtype.itemsize
    if a != b:
        views = f"to view {x.dtype._scalar_name} as {dtype._scalar_name} (different element sizes)"
        if not x.dim():
            raise RuntimeError(f"self.dim() cannot be 0 {views}")
        ratio, strides = b // a, x.stride()
        if a < b:
            if x.shape[-1] % ratio:
                raise RuntimeError(f"self.size(-1) must be divisible by {ratio} {views}, but got "
                                   f"{x.shape[-1]}")
            if x.storage_offset() % ratio:
                raise RuntimeError(f"self.storage_offset() must be divisible by {ratio} {views}, "
                                   f"but got {x.storage_offset()}")
        if strides[-1] != 1:
            raise RuntimeError(f"self.stride(-1) must be 1 {views}, but got {strides[-1]}")
        for i, st in enumerate(strides[:-1] if a < b else ()):
            if st % ratio:
                raise RuntimeError(f"self.stride({i}) must be divisible by {ratio} {views}, but "
                                   f"got {st}")
    out = call(VIEW_DTYPE, alias, static=(("dtype", dtype._name),))
    out._vbase = None   # no view for autograd
    return out


def view(x, *shape, dtype=None):
    """Mirrors ``Tensor.view``: same storage, new shape; an error if the strides forbid it.  Or,
    given a dtype, the same bytes read as that dtype (NOTE [ dtype views ])."""
    if len(shape) == 1 and isinstance(shape[0], D.dtype) and dtype is None:
        dtype, shape = shape[0], ()
    if dtype is not None:
        if shape:
            raise TypeError("view() received an invalid combination of arguments: a shape and "
                            "a dtype")
        return _view_dtype(x, dtype)
    shape = infer_size(_sizes(shape), x.numel())
    if x._strides is not None and view_strides(x.shape, x._strides, shape) is None:
        raise RuntimeError("view size is not compatible with input tensor's size and stride (at "
                           "least one dimension spans across two contiguous subspaces). Use "
                           ".reshape(...) instead.")
    return call(VIEW, x, static=(("shape", shape),))


def view_as(x, other):
    return view(x, other.shape)


UNSAFE_VIEW = Op("_unsafe_view", lambda x, shape: x.reshape(shape), "UnsafeViewBackward0",
                 saves=())


def moved_by(op, fn):
    """``op.cold``: its array made by ``fn(x, **static)`` on the host where ``op`` keeps meeting
    new small shapes (NOTE [ new shapes moved on the host ] in _host.py)."""
    def move(static, x):
        return fn(x, **dict(static))
    return lambda arrays, static, dt: moved_on_host(op, static, arrays, move)


for _op, _fn in ((SLICE, lambda x, dim, start, step, size: x[
                     (slice(None),) * dim + (slice(start, start + size * step, step),)]),
                 (VIEW, lambda x, shape: x.reshape(shape)),
                 (UNSAFE_VIEW, lambda x, shape: x.reshape(shape)),
                 (TRANSPOSE, lambda x, dim0, dim1: np.swapaxes(x, dim0, dim1) if x.ndim else x),
                 (T, lambda x: x.T),
                 (PERMUTE, lambda x, dims: np.transpose(x, dims)),
                 (UNSQUEEZE, lambda x, dim: np.expand_dims(x, dim)),
                 *((_sq, lambda x, dims: np.squeeze(x, dims)) for _sq in SQUEEZE.values()),
                 (EXPAND, lambda x, shape: np.broadcast_to(x, shape)),
                 (SELECT, lambda x, dim, index: np.take(x, index, axis=dim))):
    _op.host = _fn
    _op.cold = moved_by(_op, _fn)


def reshape(x, *shape):
    """Mirrors ``torch.reshape``: a view when the strides allow one, else a copy."""
    shape = infer_size(_sizes(shape, "reshape", "shape"), x.numel())
    if x._strides is None or view_strides(x.shape, x._strides, shape) is not None:
        return call(VIEW, x, static=(("shape", shape),))
    return call(UNSAFE_VIEW, clone(x), static=(("shape", shape),))


def reshape_as(x, other):
    return reshape(x, other.shape)


def transpose(x, dim0, dim1):
    """Mirrors ``torch.transpose``."""
    n = x.ndim
    dim0 = _wrap_dim(int_arg("transpose", "dim0", 1, dim0), n)
    dim1 = _wrap_dim(int_arg("transpose", "dim1", 2, dim1), n)
    return call(TRANSPOSE, x, static=(("dim0", dim0), ("dim1", dim1)))


def t(x):
    """Mirrors ``torch.t``."""
    if x.ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {x.ndim}D")
    return call(T, x)


def permute(x, *dims):
    """Mirrors ``torch.permute``."""
    dims = _sizes(dims, "permute", "dims")
    if len(dims) != x.ndim:
        raise RuntimeError(f"permute(sparse_coo): number of dimensions in the tensor input does "
                           f"not match the length of the desired ordering of dimensions i.e. "
                           f"input.dim() = {x.ndim} is not equal to len(dims) = {len(dims)}")
    dims = tuple(_wrap_dim(d, x.ndim) for d in dims)
    if len(set(dims)) != len(dims):
        raise RuntimeError("permute(): duplicate dims are not allowed.")
    return call(PERMUTE, x, static=(("dims", dims),))


def unsqueeze(x, dim):
    """Mirrors ``torch.unsqueeze``."""
    return call(UNSQUEEZE, x, static=(("dim", _wrap_dim(dim, x.ndim + 1)),))


def _squeeze_dims(shape, dim):
    """(kind, dims): squeeze's overload (0: no dim, 1: a dim, 2: a tuple) and the dims it
    drops."""
    if dim is None:
        kind, dims = 0, tuple(i for i, s in enumerate(shape) if s == 1)
    elif isinstance(dim, (tuple, list)):
        kind = 2
        dims = tuple(sorted({_wrap_dim(d, len(shape)) for d in dim}))
    else:
        kind, dims = 1, (_wrap_dim(dim, len(shape)),)
    return kind, tuple(d for d in dims if len(shape) and shape[d] == 1)


def squeeze(x, dim=None):
    """Mirrors ``torch.squeeze`` (all size-1 dims, one dim, or a tuple of dims)."""
    kind, dims = _squeeze_dims(x.shape, dim)
    return call(SQUEEZE[kind], x, static=(("dims", dims),))


def expand(x, *sizes):
    """Mirrors ``Tensor.expand``: broadcast to ``sizes`` without copying (-1 keeps a size)."""
    sizes = _sizes(sizes, "expand")
    shape = x.shape
    if len(sizes) < len(shape):
        raise RuntimeError(f"expand({x.type()}{{{list(shape)}}}, size={list(sizes)}): "
                           "the number of sizes provided "
                           f"({len(sizes)}) must be greater or equal to the number of dimensions "
                           f"in the tensor ({len(shape)})")
    lead = len(sizes) - len(shape)
    out = list(sizes)
    for i, s in enumerate(shape):
        want = sizes[lead + i]
        if want == -1:
            out[lead + i] = s
        elif s != want and s != 1:
            raise RuntimeError(f"The expanded size of the tensor ({want}) must match the existing "
                               f"size ({s}) at non-singleton dimension {lead + i}.  Target sizes: "
                               f"{list(sizes)}.  Tensor sizes: {list(shape)}")
    for i in range(lead):
        if out[i] < 0:
            raise RuntimeError(f"The expanded size of the tensor ({out[i]}) isn't allowed in a "
                               "leading, non-existing dimension 0")
    return call(EXPAND, x, static=(("shape", tuple(out)),))


def expand_as(x, other):
    return expand(x, other.shape)


def flatten(x, start_dim=0, end_dim=-1):
    """Mirrors ``torch.flatten`` (a view when possible, like reshape)."""
    n = x.ndim
    if n == 0:
        return reshape(x, 1)
    start, end = _wrap_dim(start_dim, n), _wrap_dim(end_dim, n)
    if start > end:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    if start == end:
        return x
    shape = x.shape
    return reshape(x, shape[:start] + (math.prod(shape[start:end + 1]),) + shape[end + 1:])


def select(x, dim, index):
    """Mirrors ``torch.select``."""
    n = x.ndim
    if n == 0:
        raise IndexError("select() cannot be applied to a 0-dim tensor.")
    dim = _wrap_dim(dim, n)
    size = x.shape[dim]
    if not -size <= index < size:
        raise IndexError(f"select(): index {index} out of range for tensor of size "
                         f"{list(x.shape)} at dimension {dim}")
    static = (("dim", dim), ("index", index % size))
    cut = _deferred_cut(SELECT, x, static)
    return call(SELECT, x, static=static) if cut is None else cut


def slice_dim(x, dim, start, stop, step):
    """``x[..., start:stop:step, ...]`` on one dim, as a view (PyTorch's aten::slice)."""
    if step <= 0:
        raise ValueError("step must be greater than zero")
    start, stop, _ = slice(start, stop, step).indices(x.shape[dim])
    stop = max(stop, start)
    static = slice_static(dim, start, stop, step)
    cut = _deferred_cut(SLICE, x, static)
    return call(SLICE, x, static=static) if cut is None else cut


def alias(x):
    return call(ALIAS, x)


def _unbind(x, dim):
    # split, whose reverse mode is one concatenate (index_in_dim's would pad every slice's
    # gradient to the full shape and add them up)
    return tuple(jnp.squeeze(s, dim) for s in jnp.split(x, x.shape[dim], axis=dim))


UNBIND = Op("unbind", _unbind, "UnbindBackward0", saves=(),
             pieces=lambda arrays, static: pieces_of(
                 arrays[0], static[0][1], [(i, i + 1) for i in range(arrays[0].shape[
                     static[0][1]])], squeeze=True))


def unbind(input, dim=0):
    """Mirrors ``torch.unbind``: views of each slice along ``dim`` (writing to one in place
    while autograd records is an error, as in PyTorch)."""
    if input.ndim == 0:
        raise IndexError("Dimension specified as 0 but tensor has no dimensions")
    dim = _wrap_dim(dim, input.ndim)
    outs = call(UNBIND, input, static=(("dim", dim),))
    for i, o in enumerate(outs):
        o._become_view(input, SELECT, (("dim", dim), ("index", i)), o._grad_fn is not None)
        o._multi_view_of = "Unbind"
    return outs


CLONE = Op("clone", lambda x: jnp.array(x, copy=True), "CloneBackward0", saves=(), identity=True)


def clone(x, *, memory_format=None):
    """Mirrors ``torch.clone``: by default (``preserve_format``) a dense tensor's copy keeps its
    strides."""
    out = call(CLONE, x)
    out._strides = _layout.copy_strides(tuple(x.shape), x._strides, memory_format)
    return out


def contiguous(x, memory_format=None):
    """Mirrors ``Tensor.contiguous``: the tensor itself when already contiguous (in
    ``memory_format``, default ``contiguous_format``), else a copy laid out that way."""
    memory_format = memory_format or _layout.contiguous_format
    if x.is_contiguous(memory_format=memory_format):
        return x
    if memory_format is _layout.preserve_format:
        raise RuntimeError("preserve memory format is unsupported by the contiguous operator")
    return clone(x, memory_format=memory_format)


def _joined(arrays, static, dt):
    """A cat of one dtype and new small shapes, on the host (NOTE [ new shapes moved on the
    host ])."""
    return moved_on_host(_cat, static, arrays, _cat_on_host, _one_dtype)


def _cat_on_host(static, *xs):
    return np.concatenate(xs, axis=static[0][1])


def _one_dtype(static, arrays):
    return all(a.dtype == arrays[0].dtype for a in arrays[1:])


@defop("cat", "CatBackward0", saves=(), promote="common",
       grad_pieces=_gradient_pieces(False), cold=_joined)
def _cat(*xs, dim):
    return jnp.concatenate(xs, axis=dim)


@defop("stack", "StackBackward0", saves=(), promote="common",
       grad_pieces=_gradient_pieces(True))
def _stack(*xs, dim):
    return jnp.stack(xs, axis=dim)


# NOTE [ cuts gathered by stack ]
# A batch made by hand cuts a piece out of a tensor per example and stacks the pieces:
# ``torch.stack([data[i:i + n] for i in starts])`` (a language model's windows, as nanoGPT and
# examples/pytorch/char_lstm.py make them), ``torch.stack([x[i] for i in idx])``.  Each cut is a
# view op, a program call of its own (a slice of a 1-D tensor: 28 us on the 2-core CPU, 8 of them
# jax's call), and the stack one more program over all of them.  So a slice or select along dim 0
# that autograd does not record, of a tensor whose values are one device's array, outside lazy mode
# and the profiler, is *deferred*: a view like any other (storage root, chain, strides, version
# counter) whose value is a ``Pending`` (``Tensor._lazy``, as in lazy mode: NOTE [ lazy segments ]
# in _lazy.py) whose segment is the cut itself (``_Cut``: the parent's array, the op and its
# arguments).  Shape, dtype and device read the pending value's; the first read of the value (an
# op, ``_arr``, a write) makes it from that array, which is what the view held when it was made
# eagerly (a read inside a jax trace too: the value is concrete, not the trace's), and the view
# re-derives from its root after a write to the root as every view does.  The parent's array is
# held until then (a view made eagerly held only its own).  ``stack`` of deferred cuts of one array
# by one op and size, none read and none of whose roots written since, is one program gathering
# them, their starts (or indices) an operand: one program for each batch size.  Any other stack
# reads each cut as it would have; the same elements either way.  Cuts along other dims are mostly
# read at once by the op they feed (``x[:, t]``), and a cut read at once costs what it did (a slice
# and an add, a row and an add: 50-58 us either way).
class _Cut:
    """The segment of one deferred cut (NOTE [ cuts gathered by stack ]): ``op`` (SLICE or
    SELECT) with ``static`` of ``source``, the parent's array; ``at``: its start or index,
    ``fixed``: its other arguments."""

    __slots__ = ("source", "op", "static", "at", "fixed", "pending")

    @property
    def devices(self):   # (Pending.devices)
        return self.source.devices()

    def flush(self):
        prev = _x64_swap(True)   # as call() runs one (NOTE [ 64-bit types in torchlike's scope ])
        try:
            # (0.2 us; entering eval_context costs 1.9)
            with contextlib.nullcontext() if _top_level() else jax.core.eval_context():
                self.pending.value = eager_forward(self.op, self.static, None, [self.source])
        finally:
            _x64_restore(prev)


_CUT_AVALS = {}   # (shape, dtype) -> aval


def _deferred_cut(op, x, static):
    """``op`` (SLICE or SELECT) of ``x`` with ``static`` as a deferred cut (NOTE [ cuts gathered by
    stack ]), or None where it runs now: a cut along another dim, autograd would record it, lazy
    mode or the profiler is on, or ``x``'s values are not one device's concrete array (or not
    made yet)."""
    if static[0][1] or _dispatch._record is not None or _dispatch._profiler is not None or \
            x._requires_grad or x._grad_fn is not None or x._lazy is not None:
        return None
    arr = x._arr if x._root is None else x._sync()
    if type(arr) is not ArrayImpl or type(arr.sharding) is not SingleDeviceSharding:
        return None
    aval = arr.aval
    key = ((static[3][1],) if op is SLICE else ()) + aval.shape[1:], aval.dtype
    out_aval = _CUT_AVALS.get(key)
    if out_aval is None:
        out_aval = remember(_CUT_AVALS, key, jax.core.ShapedArray(*key), 1024)
    cut = _Cut()
    cut.source, cut.op, cut.static = arr, op, static
    cut.at, cut.fixed = static[1][1], static[2:]
    t = object.__new__(Tensor)
    t._lazy = cut.pending = Pending(cut, 0, out_aval)
    t._become_view(x, op, static, False)
    return t


def _gathered_cuts(tensors, dim):
    """``stack(tensors, dim)`` as one gather where they are deferred cuts of one array by one op
    and size, none read yet (NOTE [ cuts gathered by stack ]); else None."""
    first = tensors[0]._lazy
    if type(first) is not Pending or type(first.seg) is not _Cut or len(tensors) < 2:
        return None
    source, op, fixed = first.seg.source, first.seg.op, first.seg.fixed
    at = []
    for t in tensors:
        pending = t._lazy
        if type(pending) is not Pending or pending.value is not None or t._requires_grad or \
                t._root._gen != t._seen:   # (a write since: the view re-derives)
            return None
        cut = pending.seg
        if type(cut) is not _Cut or cut.source is not source or cut.op is not op or \
                cut.fixed != fixed:
            return None
        at.append(cut.at)
    at = np.asarray(at, np.int64)
    static = fixed + (("dim", dim),)
    out = call(_GATHER, source, at, static=static)
    if out._lazy is None and _top_level() and on_host(source):   # (one device's: _deferred_cut)
        out._host_recipe = out._gen, _gathered_on_host(source, at, static)
    return out


def _gathered_on_host(source, at, static):
    """How numpy makes a gather's values from what it reads (NOTE [ views read on the host ] in
    _views.py): the array is held weakly, for the queued gather holds it until it runs, and
    after that the recipe has no use (it then gives None)."""
    source = weakref.ref(source)

    def made():
        x = source()
        return None if x is None else _gather(np.asarray(x), at, **dict(static))
    return made


def _gather(x, at, dim, step=1, size=None):
    """``stack([cut(x, a) for a in at], dim)``: slices of ``size`` rows by ``step`` from each
    start in ``at``, or (size None) the rows at ``at``, in one gather; with numpy where ``x`` is
    numpy's."""
    xp = np if type(x) is np.ndarray else jnp
    rows = at if size is None else at[:, None] + xp.arange(size, dtype=at.dtype) * step
    return xp.moveaxis(xp.take(x, rows, axis=0, mode="clip"), 0, dim)


_GATHER = Op("stack", _gather, "StackBackward0", saves=(), inputs=1)


def tensor_sequence(tensors, name):
    """``tensors`` as a list where PyTorch takes a tuple or list of Tensors, and its TypeError
    for anything else (a Tensor or a generator, which Python would iterate)."""
    if not isinstance(tensors, (list, tuple)):
        raise TypeError(f"{name}(): argument 'tensors' (position 1) must be tuple of Tensors, "
                        f"not {type(tensors).__name__}")
    return list(tensors)


def _tensor_list(tensors, name):
    tensors = tensor_sequence(tensors, name)
    for i, t_ in enumerate(tensors):
        if not isinstance(t_, Tensor):
            raise TypeError(f"expected Tensor as element {i} in argument 0, but got "
                            f"{type(t_).__name__}")
    return tensors


def cat(tensors, dim=0, *, out=None):
    """Mirrors ``torch.cat`` (legacy 1-D empty tensors are skipped, as in PyTorch)."""
    tensors = _tensor_list(tensors, "cat")
    if not tensors:
        raise ValueError("torch.cat(): expected a non-empty list of Tensors")
    ref = next((t_ for t_ in tensors if t_.shape != (0,)), tensors[0])
    n = ref.ndim
    if n == 0:
        raise RuntimeError("zero-dimensional tensor (at position 0) cannot be concatenated")
    dim = _wrap_dim(dim, n)
    for i, t_ in enumerate(tensors):
        if t_.shape == (0,) and n != 1:
            continue
        if t_.ndim != n:
            raise RuntimeError(f"Tensors must have same number of dimensions: got {n} and "
                               f"{t_.ndim}")
        for d in range(n):
            if d != dim and t_.shape[d] != ref.shape[d]:
                raise RuntimeError(f"Sizes of tensors must match except in dimension {dim}. "
                                   f"Expected size {ref.shape[d]} but got size {t_.shape[d]} "
                                   f"for tensor number {i} in the list.")
    parts = [t_ for t_ in tensors if not (t_.shape == (0,) and n != 1)]
    return _out(call(_cat, *parts, static=(("dim", dim),)), out)


def stack(tensors, dim=0, *, out=None):
    """Mirrors ``torch.stack``."""
    tensors = _tensor_list(tensors, "stack")
    if not tensors:
        raise RuntimeError("stack expects a non-empty TensorList")
    shape = tensors[0].shape
    for i, t_ in enumerate(tensors):
        if t_.shape != shape:
            raise RuntimeError(f"stack expects each tensor to be equal size, but got "
                               f"{list(shape)} at entry 0 and {list(t_.shape)} at entry {i}")
    dim = _wrap_dim(dim, len(shape) + 1)
    gathered = _gathered_cuts(tensors, dim)
    if gathered is None:
        gathered = call(_stack, *tensors, static=(("dim", dim),))
    return _out(gathered, out)


# --- more views ---------------------------------------------------------------------------------

def _dims(dims, fname="movedim", name="dims", position=1):
    """An int or a sequence of ints as a tuple (NOTE [ size arguments ])."""
    return parse_size(fname, (dims,), name, position)


def unflatten(input, dim, sizes):
    """Mirrors ``torch.unflatten``: dim split into ``sizes`` (one may be -1), as a view."""
    sizes = parse_size("unflatten", (sizes,), "sizes", 2, varargs=False)
    if input.ndim == 0:
        raise RuntimeError(f"unflatten got an unexpected error:\nDimension specified as {dim} but "
                           "tensor has no dimensions")
    dim = _wrap_dim(dim, input.ndim)
    if not sizes:
        raise RuntimeError("unflatten: sizes must be non-empty")
    size = input.shape[dim]
    known = math.prod(s for s in sizes if s != -1)
    fits = (known and size % known == 0) if -1 in sizes else known == size
    if not fits:
        raise RuntimeError(f"unflatten: Provided sizes {list(sizes)} don't multiply up to the "
                           f"size of dim {dim} ({size}) in the input tensor")
    try:
        sizes = infer_size(sizes, size)
    except RuntimeError as e:
        raise RuntimeError(f"unflatten got an unexpected error:\n{e}") from None
    shape = input.shape
    return call(VIEW, input, static=(("shape", shape[:dim] + sizes + shape[dim + 1:]),))


def movedim(input, source, destination):
    """Mirrors ``torch.movedim``: dims ``source`` moved to positions ``destination`` (a view)."""
    src = _dims(source, "movedim", "source", 2)
    dst = _dims(destination, "movedim", "destination", 3)
    n = input.ndim
    if len(src) != len(dst):
        raise RuntimeError(f"movedim: Invalid source or destination dims: source ({list(src)} "
                           f"dims) should contain the same number of dims as destination "
                           f"({list(dst)} dims)")
    for name, ds in (("source", src), ("destination", dst)):
        if len({_wrap_dim(d, n) for d in ds}) != len(ds):
            raise RuntimeError(f"movedim: repeated dim in `{name}` ({list(ds)})")
    src, dst = [_wrap_dim(d, n) for d in src], [_wrap_dim(d, n) for d in dst]
    if n == 0:
        return alias(input)
    order = [None] * n
    for s_, d in zip(src, dst):
        order[d] = s_
    rest = iter(d for d in range(n) if d not in src)
    dims = tuple(o if o is not None else next(rest) for o in order)
    return call(PERMUTE, input, static=(("dims", dims),))


def swapaxes(input, axis0, axis1):
    """Mirrors ``torch.swapaxes`` (``transpose``)."""
    return transpose(input, axis0, axis1)


def swapdims(input, dim0, dim1):
    """Mirrors ``torch.swapdims`` (``transpose``)."""
    return transpose(input, dim0, dim1)


def transpose_(self, dim0, dim1):
    """Mirrors ``Tensor.transpose_`` / ``swapaxes_`` / ``swapdims_``: this tensor's own shape
    and strides are swapped (the storage is not touched)."""
    n = self.ndim
    return inplace_view(self, TRANSPOSE_, (("dim0", _wrap_dim(dim0, n)),
                                           ("dim1", _wrap_dim(dim1, n))))


T_ = Op("t_", lambda x: x.T, "TBackward1", saves=(), view=_transposed)
UNSQUEEZE_ = Op("unsqueeze_", lambda x, dim: jnp.expand_dims(x, dim), "UnsqueezeBackward1",
                saves=(), view=_unsqueezed)
SQUEEZE_ = {kind: Op("squeeze_", _squeeze, f"SqueezeBackward{kind + 3}", saves=(),
                     view=_squeezed) for kind in (0, 1, 2)}


def t_(self):
    """Mirrors ``Tensor.t_``: ``t()`` in place (TBackward1)."""
    if self.ndim > 2:
        raise RuntimeError(f"t_() expects a tensor with <= 2 dimensions, but self is "
                           f"{self.ndim}D")
    return inplace_view(self, T_)


def unsqueeze_(self, dim):
    """Mirrors ``Tensor.unsqueeze_``: ``unsqueeze(dim)`` in place (UnsqueezeBackward1)."""
    return inplace_view(self, UNSQUEEZE_, (("dim", _wrap_dim(dim, self.ndim + 1)),))


def squeeze_(self, dim=None):
    """Mirrors ``Tensor.squeeze_``: ``squeeze(dim)`` in place (SqueezeBackward3/4/5 for no dim,
    a dim, a tuple of dims)."""
    kind, dims = _squeeze_dims(self.shape, dim)
    return inplace_view(self, SQUEEZE_[kind], (("dims", dims),))


def broadcast_to(input, size):
    """Mirrors ``torch.broadcast_to`` (``expand``)."""
    return expand(input, parse_size("broadcast_to", (size,), position=2, varargs=False))


def _broadcast_to_method(self, *sizes, size=None):
    """Mirrors ``Tensor.broadcast_to``: as a method, sizes may be spread over the arguments."""
    if size is not None:
        return expand(self, parse_size("broadcast_to", (size,), varargs=False, keyword=True))
    return expand(self, parse_size("broadcast_to", sizes))


def _check_start(start):
    """narrow's tensor start: a 0-dim integral tensor (None when traced: read on the device)."""
    dt = start.dtype
    if start.ndim != 0 or dt.is_floating_point or dt.is_complex or dt._name == "bool":
        raise RuntimeError("start must be an 0-dim integral Tensor.")
    arr = start._value()
    return None if isinstance(arr, jax.core.Tracer) else int(arr)


NARROW_AT = Op("narrow", lambda x, start, dim, length: jax.lax.dynamic_slice_in_dim(
    x, jnp.where(start < 0, start + x.shape[dim], start), length, axis=dim),
    "SliceBackward0", saves=(), inputs=1)


def narrow(input, dim, start, length):
    """Mirrors ``torch.narrow``: ``length`` entries of dim from ``start`` (an int or a 0-dim
    integral tensor), as a view.  A traced tensor start gives a copy (its offset is unknown)."""
    if input.ndim == 0:
        raise RuntimeError("narrow() cannot be applied to a 0-dim tensor.")
    dim = _wrap_dim(dim, input.ndim)
    at = start
    if isinstance(start, Tensor):
        start = _check_start(start)
    if length < 0:
        raise RuntimeError("narrow(): length must be non-negative.")
    if start is None:
        return call(NARROW_AT, input, at, static=(("dim", dim), ("length", length)))
    size = input.shape[dim]
    if not -size <= start <= size:
        raise IndexError(f"start out of range (expected to be in range of [{-size}, {size}], "
                         f"but got {start})")
    start %= max(size, 1)
    if start + length > size:
        raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size "
                           f"({size}).")
    return call(SLICE, input, static=slice_static(dim, start, start + length, 1))


def _diag_dims(n, dim1, dim2):
    d1, d2 = _wrap_dim(dim1, n), _wrap_dim(dim2, n)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    return d1, d2


def diagonal(input, offset=0, dim1=0, dim2=1):
    """Mirrors ``torch.diagonal``: the diagonal of the (dim1, dim2) planes as a view, its entries
    in a new last dim."""
    d1, d2 = _diag_dims(input.ndim, dim1, dim2)
    return call(DIAGONAL, input, static=(("offset", offset), ("dim1", d1), ("dim2", d2)))


def unfold(self, dimension, size, step):
    """Mirrors ``Tensor.unfold``: windows of ``size`` every ``step`` along ``dimension``, in a
    new last dim, as a view."""
    n = self.ndim
    dim = _wrap_dim(int_arg("unfold", "dimension", 1, dimension), n)
    size, step = int_arg("unfold", "size", 2, size), int_arg("unfold", "step", 3, step)
    length = self.shape[dim] if n else 1
    if size > length:
        raise RuntimeError(f"maximum size for tensor at dimension {dim} is {length} but size is "
                           f"{size}")
    if size < 0:
        raise RuntimeError(f"size is {size} but must be >= 0")
    if step <= 0:
        raise RuntimeError(f"step is {step} but must be > 0")
    return call(UNFOLD, self, static=(("dim", dim), ("size", size), ("step", step)))


# --- triangles and diagonals -------------------------------------------------------------------

TRIL = Op("tril", lambda x, diagonal: jnp.tril(x, diagonal), "TrilBackward0", saves=())
TRIU = Op("triu", lambda x, diagonal: jnp.triu(x, diagonal), "TriuBackward0", saves=())
DIAG_COPY = Op("diag", lambda x, offset: jnp.diagonal(x, offset), "DiagonalBackward0_copy",
               saves=())
TRACE = Op("trace", lambda x, dtype: jnp.trace(x, dtype=dtype), "TraceBackward0", saves=())


def _diag_embed(x, offset, dim1, dim2):
    n = x.shape[-1]
    rows, cols = jnp.arange(n) + max(-offset, 0), jnp.arange(n) + max(offset, 0)
    out = jnp.zeros(x.shape[:-1] + (n + abs(offset),) * 2, x.dtype).at[..., rows, cols].set(x)
    return jnp.moveaxis(out, (-2, -1), (dim1, dim2))


DIAG_EMBED = Op("diag_embed", _diag_embed, "DiagEmbedBackward0", saves=())


def _triangle(op, name):
    def fn(input, diagonal=0, *, out=None):
        if input.ndim < 2:
            raise RuntimeError(f"{name}: input tensor must have at least 2 dimensions")
        return _out(call(op, input, static=(("diagonal", diagonal),)), out)
    fn.__name__ = name
    fn.__doc__ = f"""Mirrors ``torch.{name}``: zero the entries {'above' if name == 'tril' else
                     'below'} the ``diagonal``-th diagonal of the last two dims."""
    return fn


tril = _triangle(TRIL, "tril")
triu = _triangle(TRIU, "triu")


def diag_embed(input, offset=0, dim1=-2, dim2=-1):
    """Mirrors ``torch.diag_embed``: the last dim of input placed on the ``offset`` diagonal of
    new (dim1, dim2) planes, zeros elsewhere."""
    d1, d2 = _diag_dims(input.ndim + 1, dim1, dim2)
    return call(DIAG_EMBED, input, static=(("offset", offset), ("dim1", d1), ("dim2", d2)))


def diag(input, diagonal=0, *, out=None):
    """Mirrors ``torch.diag``: a vector becomes a square matrix with it on the ``diagonal``-th
    diagonal; a matrix gives a copy of that diagonal."""
    if input.ndim == 1:
        res = call(DIAG_EMBED, input, static=(("offset", diagonal), ("dim1", 0), ("dim2", 1)))
    elif input.ndim == 2:
        res = call(DIAG_COPY, input, static=(("offset", diagonal),))
    else:
        raise RuntimeError(f"diag(): Supports 1D or 2D tensors. Got {input.ndim}D")
    return _out(res, out)


def diagflat(input, offset=0):
    """Mirrors ``torch.diagflat``: the flattened input on the ``offset`` diagonal of a square
    matrix."""
    flat = view(contiguous(input), -1)
    return call(DIAG_EMBED, flat, static=(("offset", offset), ("dim1", 0), ("dim2", 1)))


def trace(input):
    """Mirrors ``torch.trace``: the sum of a matrix's main diagonal (integers sum as int64)."""
    if input.ndim != 2:
        raise RuntimeError(f"trace: expected a matrix, but got tensor with dim {input.ndim}")
    dt = input.dtype
    if dt._name == "bool":
        raise NotImplementedError("\"trace\" not implemented for 'Bool'")
    acc = None if dt.is_floating_point or dt.is_complex else jnp.int64
    return call(TRACE, input, static=(("dtype", acc),))


# Public names and Tensor methods of this family.
PUBLIC = ("reshape", "transpose", "t", "permute", "unsqueeze", "squeeze", "flatten", "select",
          "unbind", "clone", "cat", "stack", "unflatten", "movedim", "moveaxis", "swapaxes",
          "swapdims", "broadcast_to", "narrow", "diagonal", "tril", "triu", "diag", "diag_embed",
          "diagflat", "trace")
moveaxis = movedim
TENSOR_METHODS = {
    "view": view, "view_as": view_as, "reshape": reshape, "reshape_as": reshape_as,
    "transpose": transpose, "t": t, "permute": permute, "unsqueeze": unsqueeze,
    "squeeze": squeeze, "expand": expand, "expand_as": expand_as, "flatten": flatten,
    "select": select, "unbind": unbind, "clone": clone, "contiguous": contiguous,
    "T": property(lambda self: permute(self, tuple(range(self.ndim - 1, -1, -1)))),
    "mT": property(lambda self: transpose(self, -2, -1)),
    "unflatten": unflatten, "movedim": movedim, "moveaxis": movedim, "swapaxes": swapaxes,
    "swapdims": swapdims, "transpose_": transpose_, "swapaxes_": transpose_,
    "swapdims_": transpose_, "t_": t_, "squeeze_": squeeze_, "unsqueeze_": unsqueeze_,
    "broadcast_to": _broadcast_to_method, "narrow": narrow,
    "diagonal": diagonal, "unfold": unfold, "tril": tril, "triu": triu,
    "tril_": inplace_method(tril), "triu_": inplace_method(triu), "diag": diag,
    "diag_embed": diag_embed, "diagflat": diagflat, "trace": trace,
}


# --- adjoints and ravel -------------------------------------------------------------------------

def _matrices(x, what):
    if x.ndim < 2:
        raise RuntimeError(f"tensor.{what} is only supported on matrices or batches of matrices. "
                           f"Got {x.ndim}-D tensor.")


def _conj_transpose(x, dim0, dim1):
    from .complex import conj
    t = transpose(x, dim0, dim1)
    return conj(t) if t.dtype.is_complex else t


def adjoint(input):
    """Mirrors ``torch.adjoint``: the conjugate transpose of the last two dims, a view."""
    _matrices(input, "adjoint()")
    return _conj_transpose(input, -2, -1)


def _mH(self):
    _matrices(self, "mH")
    return _conj_transpose(self, -2, -1)


def _H(self):
    if self.ndim == 0:
        import warnings
        warnings.warn("Tensor.H is deprecated on 0-D tensors. Consider using x.conj().",
                      UserWarning, stacklevel=2)
        from .complex import conj
        return conj(self)
    if self.ndim != 2:
        raise RuntimeError(f"tensor.H is only supported on matrices (2-D tensors). Got "
                           f"{self.ndim}-D tensor."
                           + (" For batches of matrices, consider using tensor.mH"
                              if self.ndim > 2 else ""))
    return _conj_transpose(self, 0, 1)


def ravel(input):
    """Mirrors ``torch.ravel``: ``input.contiguous().view(-1)``, a view of a contiguous
    input."""
    return view(contiguous(input), -1)


PUBLIC += ("adjoint", "ravel")
TENSOR_METHODS.update({"adjoint": adjoint, "ravel": ravel, "H": property(_H, doc="Mirrors "
                       "``Tensor.H``: the conjugate transpose of a matrix."),
                       "mH": property(_mH, doc="Mirrors ``Tensor.mH``: the conjugate "
                       "transpose of the last two dims.")})
