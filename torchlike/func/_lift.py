"""Shared machinery of torchlike.func and torchlike.utils.checkpoint: running torchlike code as a
pure function of jax arrays, and recording such a function as one op of the eager graph.

NOTE [ lifted transforms ]
A torch.func transform (``grad(f)(x)``) and a checkpointed block are each computed by JAX from a
pure function of arrays: ``f`` runs on Tensors wrapping the arrays, under ``no_grad`` so the eager
engine does not record a graph of tracers.  So that eager autograd still sees through them (as it
does in PyTorch: ``grad(f)(x)`` is differentiable w.r.t. ``x`` and w.r.t. the parameters ``f``
reads), the whole transformed function is recorded as one op whose inputs are the call's Tensors
plus the Tensors requiring grad that ``f`` reaches (its closure, globals, modules: found by
``_compile.find_state``).  While the op's function runs, those captured Tensors hold the op's
input arrays (swapped in and restored), so the function is pure in all of its inputs and
``jax.vjp`` of it is the op's backward.

What a function reaches is often more than it reads (``functional_call`` swaps a module's
parameters out for the call), and PyTorch links only what is read: a parameter the function never
uses must keep ``.grad`` None.  So when Tensors requiring grad are reached, one abstract trace of
the op's function (``jax.make_jaxpr`` and jax's dead-code elimination) tells which of them it
reads, and only those become inputs.  That trace costs about as much Python as the forward; it is
skipped under ``no_grad`` and when nothing requiring grad is reached.

Such ops are made per call (``Op.per_call``): the function closes over Python state nobody
guards, so a cached jit of it could silently go stale.  Their forward is the computation itself,
run once, and their backward (an ``OpNode``, as for any op) runs ``jax.vjp`` without jit, so
nothing is compiled per call; inside a traced program (torchlike.compile, to_jax) everything is
traced anyway.
"""
import contextlib
import itertools

import jax

from .. import _dispatch
from .._tensor import Tensor
from ..autograd.grad_mode import _state as _grad_state

_Tracer = jax.core.Tracer


def is_tensor(x):
    return isinstance(x, Tensor)


def flatten(tree):
    """(leaves, treedef) of a pytree whose Tensors are leaves."""
    return jax.tree_util.tree_flatten(tree, is_leaf=is_tensor)


class Bound:
    """A call's ``(args, kwargs)`` as Tensor leaves (which become arrays) and everything else
    (kept as it is)."""

    def __init__(self, args, kwargs):
        self.leaves, self.tree = flatten((tuple(args), dict(kwargs)))
        self.pos = [i for i, x in enumerate(self.leaves) if isinstance(x, Tensor)]
        self.tensors = [self.leaves[i] for i in self.pos]

    def arrays(self):
        return [t._value() for t in self.tensors]

    def rebuild(self, arrays):
        """(args, kwargs) with fresh Tensors holding ``arrays`` in place of the Tensors."""
        leaves = list(self.leaves)
        for i, a in zip(self.pos, arrays):
            leaves[i] = Tensor._wrap(a)
        return jax.tree_util.tree_unflatten(self.tree, leaves)


class Captured:
    """What a call of ``fn`` reaches besides its arguments: the Tensors (storage roots) in its
    closure, globals and modules -- those requiring grad become inputs of the recorded op --
    and the generators it may draw from (replayed when the op's function runs again)."""

    def __init__(self, fn, args, kwargs, explicit):
        from .._compile import find_state
        state = find_state(fn, args, kwargs)
        ids = {id(t) for t in explicit}
        self.reachable = [t for t in state.tensors if id(t) not in ids]
        self.tensors = [t for t in self.reachable if t.requires_grad]
        # whether anything it reads holds a tracer (it runs inside a traced program)
        self.traced = any(isinstance(t._arr, _Tracer) for t in state.tensors)
        self.generators = state.generators
        self.replay = False
        self.take_snapshot()

    def take_snapshot(self):
        """Remember the generators' states: ``replaying`` starts from them."""
        self.snapshot = [(g, None if g._words is None else list(g._words),
                          g._state._value() if g._words is None else None)
                         for g in self.generators]

    @contextlib.contextmanager
    def replaying(self):
        """Run the function again: draws made inside repeat those made since construction,
        and the generators' states and every write to a reachable Tensor are put back
        afterwards."""
        now = [(g, g._words, g._stale, g._tensor, _arr(g._tensor)) for g in self.generators]
        replay, self.replay = self.replay, True
        try:
            for g, words, arr in self.snapshot:
                if words is not None:
                    g._words, g._stale = list(words), True
                else:
                    g._words, g._stale = None, False
                    g._tensor._arr = arr
            yield
        finally:
            self.replay = replay
            for g, words, stale, tensor, arr in now:
                g._words, g._stale, g._tensor = words, stale, tensor
                if tensor is not None:
                    tensor._arr = arr

    @contextlib.contextmanager
    def guarding(self, message, any_write=False):
        """Around the function inside a JAX transform: a write to a reachable Tensor that
        would leave one of the transform's tracers in it (with ``any_write``: any write) is
        undone and raises RuntimeError(message(tensor)), as PyTorch refuses such writes; while
        replaying, every write is undone."""
        saved = [(t, t._arr) for t in self.reachable]
        bad = None
        try:
            yield
        finally:
            for t, arr in saved:
                new = t._arr
                if new is not arr and (self.replay or any_write or _leaks(new, arr)):
                    t._arr, t._gen = arr, fresh_gen()
                    if bad is None and not self.replay:
                        bad = t
        if bad is not None:
            raise RuntimeError(message(bad))


def _leaks(new, old):
    """Whether ``new`` is a tracer of another trace than ``old`` (a concrete array, or a tracer
    of an enclosing program)."""
    if not isinstance(new, _Tracer):
        return False
    return not isinstance(old, _Tracer) or getattr(new, "_trace", new) is not getattr(
        old, "_trace", old)


def _arr(t):
    return None if t is None else t._arr


def capture(fn, args, kwargs, explicit):
    """``Captured`` for a call of ``fn`` with the Tensors ``explicit`` as its arguments."""
    return Captured(fn, args, kwargs, explicit)


_generations = itertools.count(1)


def fresh_gen():
    """A storage generation no view has seen, for a root whose array is swapped or put back:
    its views re-derive their arrays (restoring the old generation could let a later write
    make a view that looked during the swap seem up to date)."""
    return (1 << 62) + (next(_generations) << 20)


@contextlib.contextmanager
def swapped(tensors, arrays):
    """Let ``tensors`` (storage roots) hold ``arrays`` for the duration (views re-derive)."""
    saved = [(t, t._arr) for t in tensors]
    try:
        for t, a in zip(tensors, arrays):
            t._arr, t._gen = a, fresh_gen()
        yield
    finally:
        for t, arr in saved:
            t._arr, t._gen = arr, fresh_gen()


# --- ops made per call ----------------------------------------------------------------------------

def record(name, fn, arrays, edges, args=(), out=None):
    """Tensors for the outputs of ``fn(*arrays)`` (a tuple of arrays; ``out`` when already
    computed).  Where an entry of ``edges`` is not None the outputs get a node named
    ``name + "Backward"`` whose backward is jax.vjp of ``fn``; ``args`` are the Tensors whose
    versions the node checks (as PyTorch checks saved tensors)."""
    if out is None:
        out = fn(*arrays)
    out = tuple(out)
    if not any(e is not None for e in edges):
        return tuple(Tensor._wrap(o) for o in out)
    # saves=(): wrap_outputs leaves version saving to us (its cache would keep every such op)
    op = _dispatch.Op(name, fn, name + "Backward", saves=(), per_call=True)
    outs = _dispatch.wrap_outputs(op, (), None, out, (), tuple(arrays), list(edges))
    for o in outs:
        if o._grad_fn is not None:
            o._grad_fn._saved = tuple((t._version_counter(), t._version, t, None, i)
                                      for i, t in enumerate(args))
            break
    return outs


def lifted_call(name, fn, inputs, state, extra=(), out=None):
    """The outputs of ``fn(*input arrays, *extra)`` (a tuple of arrays) as Tensors, recorded as
    one op when autograd needs it (``state``: from ``capture``).

    ``inputs`` are the Tensors whose arrays ``fn`` takes; the Tensors of ``state`` that ``fn``
    actually reads become inputs as well and hold the op's arrays whenever ``fn`` runs again
    for backward, with the random draws it made replayed.  ``extra`` arrays are never
    differentiated.  ``out``: the outputs, when the caller computed them already."""
    arrays = [t._value() for t in inputs]
    if out is None:
        out = fn(*arrays, *extra)
    if not _grad_state.grad_enabled:
        return tuple(Tensor._wrap(o) for o in out)
    n_in, cap = len(inputs), state.tensors
    if cap:
        # what the function reaches is more than what it reads (functional_call swaps a
        # module's parameters out): only what it reads becomes an input, as in PyTorch
        with state.replaying():
            used = _dispatch.used_inputs(_with_captured(fn, n_in, cap),
                               arrays + [t._value() for t in cap] + list(extra))
        cap = [t for t, u in zip(cap, used[n_in:]) if u]
    if not cap and not any(t.requires_grad for t in inputs):
        return tuple(Tensor._wrap(o) for o in out)
    swap_fn = _with_captured(fn, n_in, cap)

    def op_fn(*xs):
        with state.replaying():
            return swap_fn(*xs)
    tensors = list(inputs) + cap
    edges = [t._edge() if t.requires_grad else None for t in tensors] + [None] * len(extra)
    return record(name, op_fn, arrays + [t._value() for t in cap] + list(extra), edges,
                  args=tuple(tensors), out=out)


def _with_captured(fn, n_in, cap):
    """``fn`` taking the arrays of ``cap`` after its inputs, held by those Tensors while it
    runs."""
    n_cap = len(cap)

    def run(*xs):
        with swapped(cap, xs[n_in:n_in + n_cap]):
            return fn(*xs[:n_in], *xs[n_in + n_cap:])
    return run
