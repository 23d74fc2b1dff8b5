"""Shape and view ops: view/reshape/transpose/permute/(un)squeeze/expand/flatten, select/slice,
cat/stack, clone/contiguous.  A view op's ``view`` rule gives the output's strides (as PyTorch
would report them) and marks it as a view of its input (NOTE [ views and in-place writes ])."""
import math

import jax
import jax.numpy as jnp

from .._dispatch import Op, call, defop, with_out as _out
from .._tensor import Tensor, _contiguous_strides, _wrap_dim


# --- strides ------------------------------------------------------------------------------------

def strides_of(t):
    return t._strides if t._strides is not None else _contiguous_strides(t._arr.shape)


def _norm(strides, shape):
    """None when ``strides`` are the contiguous ones (the common case stores nothing)."""
    strides = tuple(strides)
    return None if strides == _contiguous_strides(shape) else strides


def view_strides(old_shape, old_strides, new_shape):
    """Strides of ``new_shape`` viewing memory laid out as (old_shape, old_strides), or None
    when no such view exists (PyTorch's computeStride)."""
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
    return _norm(view_strides(parent._arr.shape, strides_of(parent), out._arr.shape),
                 out._arr.shape)


def _transposed(parent, out, kw):
    s = list(strides_of(parent))
    if s:
        d0, d1 = kw.get("dim0", 0), kw.get("dim1", len(s) - 1)
        s[d0], s[d1] = s[d1], s[d0]
    return _norm(s, out._arr.shape)


def _permuted(parent, out, kw):
    s = strides_of(parent)
    return _norm([s[d] for d in kw["dims"]], out._arr.shape)


def _unsqueezed(parent, out, kw):
    s, shape, d = list(strides_of(parent)), parent._arr.shape, kw["dim"]
    s.insert(d, 1 if d >= len(shape) else shape[d] * s[d])
    return _norm(s, out._arr.shape)


def _squeezed(parent, out, kw):
    s, dims = strides_of(parent), kw["dims"]
    return _norm([st for i, st in enumerate(s) if i not in dims], out._arr.shape)


def _expanded(parent, out, kw):
    s, shape, new = strides_of(parent), parent._arr.shape, out._arr.shape
    lead = len(new) - len(shape)
    st = [0] * lead + [0 if (shape[i] == 1 and new[lead + i] != 1) else s[i]
                       for i in range(len(shape))]
    return tuple(st)


def _selected(parent, out, kw):
    s = list(strides_of(parent))
    del s[kw["dim"]]
    return _norm(s, out._arr.shape)


def _sliced(parent, out, kw):
    s = list(strides_of(parent))
    s[kw["dim"]] *= kw["step"]
    return _norm(s, out._arr.shape)


def _same(parent, out, kw):
    return parent._strides


# --- the view ops -------------------------------------------------------------------------------

VIEW = Op("view", lambda x, shape: x.reshape(shape), "ViewBackward0", saves=(), view=_viewed)
TRANSPOSE = Op("transpose", lambda x, dim0, dim1: jnp.swapaxes(x, dim0, dim1),
               "TransposeBackward0", saves=(), view=_transposed)
T = Op("t", lambda x: x.T, "TBackward0", saves=(), view=_transposed)
PERMUTE = Op("permute", lambda x, dims: jnp.transpose(x, dims), "PermuteBackward0", saves=(),
             view=_permuted)
UNSQUEEZE = Op("unsqueeze", lambda x, dim: jnp.expand_dims(x, dim), "UnsqueezeBackward0",
               saves=(), view=_unsqueezed)
_squeeze = lambda x, dims: jnp.squeeze(x, dims)  # noqa: E731
SQUEEZE = {kind: Op("squeeze", _squeeze, f"SqueezeBackward{kind}", saves=(), view=_squeezed)
           for kind in (0, 1, 2)}
EXPAND = Op("expand", lambda x, shape: jnp.broadcast_to(x, shape), "ExpandBackward0", saves=(),
            view=_expanded)
SELECT = Op("select", lambda x, dim, index: jnp.take(x, index, axis=dim), "SelectBackward0",
            saves=(), view=_selected)
SLICE = Op("slice", lambda x, dim, start, stop, step: jax.lax.slice_in_dim(x, start, stop, step,
                                                                             axis=dim),
           "SliceBackward0", saves=(), view=_sliced)
ALIAS = Op("alias", lambda x: x, "AliasBackward0", saves=(), view=_same)
# writes to these would land on one memory location from several places
OVERLAPPING = (EXPAND,)


def apply_chain_fn(chain):
    def f(x):
        for op, static in chain:
            x = op.fn(x, **dict(static))
        return x
    return f


_CHAINS = {}
_SCATTERS = {}


def _cached(cache, key, make):
    f = cache.get(key)
    if f is None:
        f = cache[key] = jax.jit(make(key))
    return f


def apply_chain(root_arr, chain):
    """The array a view with this chain of steps reads from its root's array."""
    if isinstance(root_arr, jax.core.Tracer):
        return apply_chain_fn(chain)(root_arr)
    return _cached(_CHAINS, chain, apply_chain_fn)(root_arr)


def _scatter_fn(chain):
    view = apply_chain_fn(chain)

    def scatter(root, value):
        if not chain:
            return jnp.broadcast_to(value, root.shape).astype(root.dtype)
        flat_index = view(jnp.arange(root.size).reshape(root.shape))
        value = jnp.broadcast_to(value, flat_index.shape).astype(root.dtype)
        return root.ravel().at[flat_index.ravel()].set(value.ravel()).reshape(root.shape)
    return scatter


def scatter_chain(root_arr, chain, value):
    """The root's array with the view positions given by ``chain`` replaced by ``value``."""
    if isinstance(root_arr, jax.core.Tracer) or isinstance(value, jax.core.Tracer):
        return _scatter_fn(chain)(root_arr, value)
    return _cached(_SCATTERS, chain, _scatter_fn)(root_arr, value)


AS_STRIDED = Op("as_strided", lambda x, chain: apply_chain_fn(chain)(x), "AsStridedBackward0",
                saves=())
COPY_SLICES = Op("copy_slices", lambda root, value, chain: _scatter_fn(chain)(root, value),
                 "CopySlices", saves=())


def as_strided_node(root, chain, view):
    """The grad_fn a view gets after its storage was written: its chain, from the root."""
    static = (("chain", chain),)
    return AS_STRIDED._node_cls(AS_STRIDED, static, None, (root._value(),), (root._edge(),), (0,),
                                (view,))


def check_writable(t):
    if t._root is not None and any(op in OVERLAPPING for op, _ in t._chain):
        raise RuntimeError("unsupported operation: more than one element of the written-to "
                           "tensor refers to a single memory location. Please clone() the "
                           "tensor before performing the operation.")


# --- public functions ---------------------------------------------------------------------------

def _sizes(args):
    """view(2, 3), view((2, 3)) and view(torch.Size([2, 3])) all mean (2, 3)."""
    if len(args) == 1 and isinstance(args[0], (tuple, list)):
        args = args[0]
    return tuple(int(a) for a in args)


def infer_size(shape, numel):
    """Resolve one -1 in ``shape`` (PyTorch's infer_size)."""
    shape = list(shape)
    if shape.count(-1) > 1:
        raise RuntimeError("only one dimension can be inferred")
    known = math.prod(s for s in shape if s != -1)
    if -1 in shape:
        if known == 0 or numel % known:
            raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
        shape[shape.index(-1)] = numel // known
    elif known != numel:
        raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
    for s in shape:
        if s < 0:
            raise RuntimeError(f"invalid shape dimension {s}")
    return tuple(shape)


def view(x, *shape):
    """Mirrors ``Tensor.view``: same storage, new shape; an error if the strides forbid it."""
    shape = infer_size(_sizes(shape), x.numel())
    if view_strides(x._arr.shape, strides_of(x), shape) is None:
        raise RuntimeError("view size is not compatible with input tensor's size and stride (at "
                           "least one dimension spans across two contiguous subspaces). Use "
                           ".reshape(...) instead.")
    return call(VIEW, x, static=(("shape", shape),))


def view_as(x, other):
    return view(x, other.shape)


UNSAFE_VIEW = Op("_unsafe_view", lambda x, shape: x.reshape(shape), "UnsafeViewBackward0",
                 saves=())


def reshape(x, *shape):
    """Mirrors ``torch.reshape``: a view when the strides allow one, else a copy."""
    shape = infer_size(_sizes(shape), x.numel())
    if view_strides(x._arr.shape, strides_of(x), shape) is not None:
        return call(VIEW, x, static=(("shape", shape),))
    return call(UNSAFE_VIEW, clone(x), static=(("shape", shape),))


def reshape_as(x, other):
    return reshape(x, other.shape)


def transpose(x, dim0, dim1):
    """Mirrors ``torch.transpose``."""
    n = x.ndim
    dim0, dim1 = _wrap_dim(dim0, n), _wrap_dim(dim1, n)
    if n == 0:
        return alias(x)
    return call(TRANSPOSE, x, static=(("dim0", dim0), ("dim1", dim1)))


def t(x):
    """Mirrors ``torch.t``."""
    if x.ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {x.ndim}D")
    return call(T, x)


def permute(x, *dims):
    """Mirrors ``torch.permute``."""
    dims = _sizes(dims)
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


def squeeze(x, dim=None):
    """Mirrors ``torch.squeeze`` (all size-1 dims, one dim, or a tuple of dims)."""
    shape = x._arr.shape
    if dim is None:
        kind, dims = 0, tuple(i for i, s in enumerate(shape) if s == 1)
    elif isinstance(dim, (tuple, list)):
        kind = 2
        dims = tuple(sorted({_wrap_dim(d, len(shape)) for d in dim}))
    else:
        kind, dims = 1, (_wrap_dim(dim, len(shape)),)
    dims = tuple(d for d in dims if len(shape) and shape[d] == 1)
    return call(SQUEEZE[kind], x, static=(("dims", dims),))


def expand(x, *sizes):
    """Mirrors ``Tensor.expand``: broadcast to ``sizes`` without copying (-1 keeps a size)."""
    sizes = _sizes(sizes)
    shape = x._arr.shape
    if len(sizes) < len(shape):
        raise RuntimeError(f"expand(torch.FloatTensor{{{list(shape)}}}, size={list(sizes)}): "
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
    shape = x._arr.shape
    return reshape(x, shape[:start] + (math.prod(shape[start:end + 1]),) + shape[end + 1:])


def select(x, dim, index):
    """Mirrors ``torch.select``."""
    n = x.ndim
    if n == 0:
        raise IndexError("select() cannot be applied to a 0-dim tensor.")
    dim = _wrap_dim(dim, n)
    size = x._arr.shape[dim]
    if not -size <= index < size:
        raise IndexError(f"select(): index {index} out of range for tensor of size "
                         f"{list(x._arr.shape)} at dimension {dim}")
    return call(SELECT, x, static=(("dim", dim), ("index", index % size)))


def slice_dim(x, dim, start, stop, step):
    """``x[..., start:stop:step, ...]`` on one dim, as a view (PyTorch's aten::slice)."""
    if step <= 0:
        raise ValueError("step must be greater than zero")
    start, stop, _ = slice(start, stop, step).indices(x._arr.shape[dim])
    stop = max(stop, start)
    return call(SLICE, x, static=(("dim", dim), ("start", start), ("stop", stop),
                                  ("step", step)))


def alias(x):
    return call(ALIAS, x)


UNBIND = Op("unbind", lambda x, dim: tuple(jax.lax.index_in_dim(x, i, dim, keepdims=False)
                                           for i in range(x.shape[dim])),
            "UnbindBackward0", saves=())


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


CLONE = Op("clone", lambda x: jnp.array(x, copy=True), "CloneBackward0", saves=())


def clone(x, *, memory_format=None):
    """Mirrors ``torch.clone``."""
    return call(CLONE, x)


def contiguous(x, memory_format=None):
    """Mirrors ``Tensor.contiguous``: the tensor itself when already contiguous, else a copy."""
    return x if x.is_contiguous() else clone(x)


@defop("cat", "CatBackward0", saves=(), promote="common")
def _cat(*xs, dim):
    return jnp.concatenate(xs, axis=dim)


@defop("stack", "StackBackward0", saves=(), promote="common")
def _stack(*xs, dim):
    return jnp.stack(xs, axis=dim)


def _tensor_list(tensors, name):
    tensors = list(tensors)
    if not tensors:
        raise ValueError(f"{name}(): expected a non-empty list of Tensors")
    for i, t_ in enumerate(tensors):
        if not isinstance(t_, Tensor):
            raise TypeError(f"expected Tensor as element {i} in argument 0, but got "
                            f"{type(t_).__name__}")
    return tensors


def cat(tensors, dim=0, *, out=None):
    """Mirrors ``torch.cat`` (legacy 1-D empty tensors are skipped, as in PyTorch)."""
    tensors = _tensor_list(tensors, "torch.cat")
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
    shape = tensors[0].shape
    for i, t_ in enumerate(tensors):
        if t_.shape != shape:
            raise RuntimeError(f"stack expects each tensor to be equal size, but got "
                               f"{list(shape)} at entry 0 and {list(t_.shape)} at entry {i}")
    dim = _wrap_dim(dim, len(shape) + 1)
    return _out(call(_stack, *tensors, static=(("dim", dim),)), out)


# Public names and Tensor methods added by this family beyond the core ones bound in _methods.
PUBLIC = ()
TENSOR_METHODS = {}
