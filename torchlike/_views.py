"""The view machinery the Tensor runs on (NOTE [ views and in-place writes ] in _tensor.py):
PyTorch's strides of a view, reading a view's array from its root through its chain of view
steps, scattering a write through a view back into the root, the ``AsStridedBackward0`` node a
view gets once its storage was written and the root's ``CopySlices`` node for such a write.

It sits below the op table: the view *ops* (view, transpose, select, ...) are rows of
_ops/shape.py, _ops/complex.py and _ops/strided.py, whose ``view`` rules give each step's strides.
"""
import math

import jax
import jax.numpy as jnp
import numpy as np

from . import _meta, _x64
from ._dispatch import Op, remember, split_dynamic, with_dynamic
from ._layout import contiguous_strides
from ._meta import is_meta
from ._quick import inlined, quick_jit


# --- strides ------------------------------------------------------------------------------------

def strides_of(t):
    return t._strides if t._strides is not None else contiguous_strides(t.shape)


def stored_strides(strides, shape):
    """What a Tensor stores as ``_strides``: None when ``strides`` are the contiguous ones (the
    common case stores nothing)."""
    strides = tuple(strides)
    return None if strides == contiguous_strides(shape) else strides


def check_writable(t):
    """PyTorch refuses writes where a stride of 0 makes several elements share one location
    (partially overlapping windows, as from unfold, it lets through)."""
    if t._root is not None and any(st == 0 and n > 1
                                   for st, n in zip(strides_of(t), t.shape)):
        raise RuntimeError("unsupported operation: more than one element of the written-to "
                           "tensor refers to a single memory location. Please clone() the "
                           "tensor before performing the operation.")


# --- reading a view: its chain of steps from the root's array -----------------------------------

def apply_chain_fn(chain):
    def f(x):
        for op, static in chain:
            x = op.fn(x, **dict(static))
        return x
    return f


_MAX_CHAINS = 512   # entries of _CHAINS and of _SCATTERS (NOTE [ bounded program caches ] in
#                     _dispatch.py)
_CHAINS = {}
_SCATTERS = {}


def _chain_parts(chain):
    """(the chain without its ops' dynamic arguments, their values): the key of the compiled
    chain and its operands (see Op.dynamic)."""
    key, values = [], []
    for op, static in chain:
        if op.dynamic:
            static, vs = split_dynamic(op.dynamic, static)
            values.extend(vs)
        key.append((op, static))
    return tuple(key), values


def _rejoin(key, values):
    chain, it = [], iter(values)
    for op, static in key:
        if op.dynamic:
            static = with_dynamic(op.dynamic, static, [next(it) for _ in op.dynamic])
        chain.append((op, static))
    return tuple(chain)


def _cached_chain(cache, chain, make):
    """make(chain) jitted once per chain shape; dynamic arguments are traced operands."""
    key, values = _chain_parts(chain)
    f = cache.get(key)
    if f is None:
        n = len(values)
        f = remember(cache, key, quick_jit(lambda *xs: make(_rejoin(key, xs[len(xs) - n:]))(
            *xs[:len(xs) - n])), _MAX_CHAINS)
    return f, values


@_x64.scoped
def apply_chain(root_arr, chain):
    """The array a view with this chain of steps reads from its root's array."""
    if isinstance(root_arr, jax.core.Tracer):
        return apply_chain_fn(chain)(root_arr)
    if is_meta(root_arr):
        return _meta.evaluate(apply_chain_fn(chain), chain[-1][0].name, root_arr)
    f, values = _cached_chain(_CHAINS, chain, apply_chain_fn)
    try:
        return f(root_arr, *values)
    except ValueError as e:   # inside another trace (NOTE [ quick compiles ] in _quick.py)
        return inlined(e, f, root_arr, *values)


# NOTE [ views read on the host ]
# XLA's CPU client runs a device's programs in the order they were queued, so reading an array
# on the host waits for every program queued before the one that made it.  A view's array is
# made by a program queued when the view was made (or re-derived after a write), often behind
# the model's forward: examples/pytorch/char_lstm.py's ``F.cross_entropy(logits.view(-1, V),
# y.view(-1))`` checks its targets on the host (NOTE [ checks on an accelerator ] in _tensor.py
# says why on the CPU), and reading ``y.view(-1)`` waited 2.6-2.7 ms for the LSTM's forward and
# the head queued before its reshape, where ``y``, made before them, was ready (19 µs).  So a
# read on the host (``item``, ``tolist``, ``numpy``, an op's check of index values) of a view
# whose storage root is one array on one CPU device takes the root's values and applies the
# chain's steps with numpy (``Op.host``: reshapes, slices, transposes, permutes, squeezes,
# expands, selects, as the cold rules of NOTE [ new shapes moved on the host ] in _host.py move
# them, and diagonals and unfolds), which moves data without arithmetic: the same values, no
# program queued or compiled, and the read waits only for the root's.  A chain with any other
# step (a dtype view, a complex view, as_strided) reads the view's array as before; so does a view on another device (the root would
# cross to the host whole) or one whose root is not computed yet (lazy mode).  Alternated in one
# process (windows of 10 steps, two runs; 2-core CPU, 2026-12-07): char_lstm's training step 9.57,
# 9.70 -> 8.89, 9.16 ms (torch: 5.6-5.9); transformer_lm's 16.97 -> 16.78 ms, within noise (the
# wait there ended as its forward did, and the backward it then queued is one program).
# A root may also carry a ``_host_recipe``: its values made with numpy from what its program
# reads, used while that program has not run (``_tensor._made_on_host``; a write since, which
# changes the root's storage generation, retires it).  A stack of cuts (a batch of windows,
# NOTE [ cuts gathered by stack ] in _ops/shape.py) has one: its gather of the cut tensor's
# array, whose rows numpy takes as XLA does, so an embedding's check of the batch does not wait
# for the last step queued before the gather (char_lstm's step, alternated so again: 8.36, 7.84
# -> 7.95, 7.69 ms).  Once no read waits, dispatch does: XLA's CPU client holds about 32
# programs in flight, and the 33rd call waits for the first to finish.

def on_host_chain(chain):
    """Whether every step of a view's chain has an ``Op.host`` (NOTE [ views read on the
    host ])."""
    return all(op.host is not None for op, _ in chain)


def chain_on_host(values, chain):
    """The numpy values a view with this chain of steps (``on_host_chain``) reads from its
    root's ``values`` (a jax array, read on the host only here, or numpy's)."""
    values = np.asarray(values)
    for op, static in chain:
        values = op.host(values, **dict(static))
    return np.asarray(values)   # (a select of one element gives a numpy scalar)


# --- writing through a view: the root with the view's positions replaced ------------------------

def _scatter_fn(chain):
    steps = [k for k, (op, _) in enumerate(chain) if op.name == "view_dtype"]
    if steps:
        return _scatter_through_bytes(chain, steps[-1])
    view = apply_chain_fn(chain)

    def scatter(root, value):
        if not chain:
            return jnp.broadcast_to(value, root.shape).astype(root.dtype)
        if jnp.iscomplexobj(root) or any(op.name in ("view_as_complex", "_neg_view")
                                         for op, _ in chain):
            return scatter_parts(view, root, value)
        flat_index = view(jnp.arange(root.size).reshape(root.shape))
        value = jnp.broadcast_to(value, flat_index.shape).astype(root.dtype)
        return root.ravel().at[flat_index.ravel()].set(value.ravel()).reshape(root.shape)
    return scatter


def _scatter_through_bytes(chain, k):
    """The scatter of a chain whose step ``k`` (its last such) reads the bytes as another dtype
    (NOTE [ dtype views ] in _ops/shape.py): the value written into the array after that step,
    read back as the dtype before it and written through the steps before it."""
    before, (op, static), after = chain[:k], chain[k], chain[k + 1:]
    read_before, into_before, into_after = apply_chain_fn(before), _scatter_fn(before), \
        _scatter_fn(after)
    dtype = dict(static)["dtype"]

    def scatter(root, value):
        old = read_before(root)
        if dtype == "bool":   # as bytes: those the write leaves keep their values
            mid, value = op.fn(old, dtype="uint8"), jnp.asarray(value).astype(jnp.uint8)
        else:
            mid = op.fn(old, dtype=dtype)
        return into_before(root, op.fn(into_after(mid, value), dtype=old.dtype.name))
    return scatter


# NOTE [ writes through an alias ]
# A view with no steps (``.data``, ``detach()``) covers its root exactly, so a write of a value
# of the root's shape and dtype through it makes that value the root's array: jax arrays are
# immutable, and every torchlike write rebinds a Tensor's array, so the two may share it (as
# clone's result shares its operand's).  Running the scatter program instead compiled one
# program per parameter shape for ``p.data.add_(...)`` or ``w.data.uniform_(...)`` and then ran
# it, a copy of the parameter, on every write.


@_x64.scoped
def scatter_chain(root_arr, chain, value):
    """The root's array with the view positions given by ``chain`` replaced by ``value``."""
    if isinstance(root_arr, jax.core.Tracer) or isinstance(value, jax.core.Tracer):
        return _scatter_fn(chain)(root_arr, value)
    if is_meta(root_arr):   # a write of no values through a view changes no shape
        return root_arr
    if not chain and type(value) is type(root_arr) and value.aval == root_arr.aval:
        return value   # NOTE [ writes through an alias ]
    f, values = _cached_chain(_SCATTERS, chain, _scatter_fn)
    try:
        return f(root_arr, value, *values)
    except ValueError as e:   # inside another trace (NOTE [ quick compiles ] in _quick.py)
        return inlined(e, f, root_arr, value, *values)


def part_numbers(shape, is_complex):
    """1, 2, 3, ... numbering the parts of a root of this shape (complex numbers for a complex
    root: element k is 2k+1 + (2k+2)j), as scatter_parts uses them."""
    n = math.prod(shape)
    if is_complex:
        k = jnp.arange(1, 2 * n + 1, dtype=jnp.float64).reshape(tuple(shape) + (2,))
        return jax.lax.complex(k[..., 0], k[..., 1])
    return jnp.arange(1, n + 1, dtype=jnp.float64).reshape(shape)


def _split_parts(a):
    return jnp.stack([jnp.real(a), jnp.imag(a)], axis=-1) if jnp.iscomplexobj(a) else a


def scatter_parts(view, root, value):
    """``root`` with the parts that ``view`` (a chain of view steps) reads replaced by ``value``.

    A write through a complex view (NOTE [ complex views ] in _ops/complex.py) needs more than the
    element positions an integer iota gives, since a view element may be one *part* (real or
    imaginary) of a root element, or its negation.  So the chain runs on numbers 1, 2, 3, ...
    given to the root's parts (part_numbers): view_as_real / select pick single parts and CONJ /
    NEG_VIEW flip signs; each part of the written value then lands at |number| - 1, negated where
    its number is negative."""
    cplx = jnp.iscomplexobj(root)
    numbers = view(part_numbers(root.shape, cplx))
    value = jnp.broadcast_to(value, numbers.shape)
    if jnp.iscomplexobj(numbers):
        numbers, value = _split_parts(numbers), _split_parts(value)
    parts = _split_parts(root).ravel()
    value = jnp.where(numbers < 0, -value, value).astype(parts.dtype)
    parts = parts.at[(jnp.abs(numbers) - 1).astype(jnp.int64).ravel()].set(value.ravel())
    if cplx:
        parts = parts.reshape(tuple(root.shape) + (2,))
        return jax.lax.complex(parts[..., 0], parts[..., 1])
    return parts.reshape(root.shape)


# --- autograd through views ---------------------------------------------------------------------

AS_STRIDED = Op("as_strided", lambda x, chain: apply_chain_fn(chain)(x), "AsStridedBackward0",
                saves=())
COPY_SLICES = Op("copy_slices", lambda root, value, chain: _scatter_fn(chain)(root, value),
                 "CopySlices", saves=())


def stale_view_error(view):
    """PyTorch's error for using an output of a multi-view op (unbind, split) in the graph after
    its storage was written in place."""
    return RuntimeError(
        f"Output {view._output_nr} of {view._multi_view_of} is a view and its base or another "
        "view of its base has been modified inplace. This view is the output of a function "
        "that returns multiple views. Such functions do not allow the output views to be "
        "modified inplace. You should replace the inplace operation by an out-of-place one.")


def as_strided_node(root, chain, view):
    """The grad_fn a view gets after its storage was written: its chain, from the root.  An
    output of a multi-view op (unbind, split) gets none: it is marked stale, and using it in
    the graph while grad mode is on raises stale_view_error (its values stay readable)."""
    if view._multi_view_of is not None:
        view._stale = True
        return view._grad_fn
    static = (("chain", chain),)
    return AS_STRIDED._node_cls(AS_STRIDED, static, None, (root._value(),), (root._edge(),), (0,),
                                (view,))
