"""Mirrors ``torch.utils.checkpoint``: activation checkpointing on ``jax.checkpoint``.

NOTE [ checkpoint as one op ]
``checkpoint(function, *args)`` records ONE op in the eager graph (``CheckpointFunctionBackward``)
whose inputs are the Tensors among ``args``/``kwargs`` plus the Tensors requiring grad that
``function`` reaches (the parameters of the modules it calls: ``_compile.find_state``), and whose
function is ``jax.checkpoint`` of ``function`` run as a pure function of them (those Tensors hold
the op's arrays while it runs).  Eagerly the forward is ``function`` run under ``no_grad``, so no
intermediate is kept; backward runs ``jax.vjp`` of the op's function, which recomputes the forward.
Random draws inside are replayed in the recomputation (the generators are rewound to their
state before the forward; ``preserve_rng_state=False`` rewinds them to their state after it,
so the recomputation draws other numbers, as PyTorch's does).  Inside a traced program
(``torchlike.compile``, ``to_jax`` under ``jax.grad``) the forward itself is ``jax.checkpoint`` of
the pure function, so JAX's autodiff rematerializes it too.
Writes the function makes into Tensors it reaches (a BatchNorm's running statistics) happen once,
in the forward (eagerly, or as outputs of the traced program written back); the recomputation's
are dropped (PyTorch's recomputation repeats them).

``use_reentrant=True`` (torch's default, with a warning when not given) keeps PyTorch's
restriction: only Tensor positional arguments count, and when none requires grad the output has
no graph (parameters get no gradient).  PyTorch's reentrant variant also refuses
``torch.autograd.grad``; this one does not, since it has no reentrant backward.
"""
import contextlib
import warnings

import jax

from .. import _dispatch
from ..func import _lift as lift
from .._tensor import Tensor
from ..autograd.grad_mode import _state as _grad_state, no_grad

__all__ = ["checkpoint", "checkpoint_sequential", "CheckpointError", "noop_context_fn"]

_DETERMINISM_CHECKS = ["default", "none"]


class CheckpointError(RuntimeError):
    """Mirrors ``torch.utils.checkpoint.CheckpointError``: the recomputation differs from the
    forward."""


def noop_context_fn():
    """Mirrors ``torch.utils.checkpoint.noop_context_fn``: two do-nothing context managers."""
    return contextlib.nullcontext(), contextlib.nullcontext()


def _warn_reentrant(name):
    warnings.warn(
        f"torch.utils.checkpoint{name}: the use_reentrant parameter should be passed explicitly. "
        + ("Starting in PyTorch 2.9, calling checkpoint without use_reentrant will raise an "
           "exception. " if not name else
           "In version 2.9 we will raise an exception if use_reentrant is not passed. ")
        + "use_reentrant=False is recommended, but if you need to preserve the current default "
        "behavior, you can pass use_reentrant=True. Refer to docs for more details on the "
        "differences between the two variants.", UserWarning, stacklevel=3)


def checkpoint(function, *args, use_reentrant=None, context_fn=noop_context_fn,
               determinism_check="default", debug=False, early_stop=True, **kwargs):
    """Mirrors ``torch.utils.checkpoint.checkpoint``: ``function(*args, **kwargs)`` without
    keeping its intermediate values for backward; they are recomputed when backward needs them
    (one op built on ``jax.checkpoint``: NOTE [ checkpoint as one op ]).

    Args:
        function: the checkpointed computation (a Module or function of Tensors).
        *args: its positional arguments.
        use_reentrant: must be passed (a warning otherwise, and True is used).  True: only
            Tensor positional arguments count for autograd and keyword arguments are refused
            (PyTorch's reentrant variant); False: keyword arguments and parameters-only
            gradients work.
        context_fn: (use_reentrant=False) returns two context managers, entered around the
            forward and around the recomputation.
        determinism_check: ``"default"`` compares the shapes and dtypes of the recomputed
            outputs with the forward's (``CheckpointError`` if they differ); ``"none"``.
        debug, early_stop: accepted for compatibility (debug output and early stopping of
            PyTorch's recomputation have no counterpart: the recomputation is one JAX trace).
        preserve_rng_state (keyword, default True): random draws in the recomputation repeat
            the forward's.
        **kwargs: keyword arguments of ``function`` (use_reentrant=False).

    Returns:
        What ``function`` returns; its Tensors share one ``CheckpointFunctionBackward`` node.

    Example::

        >>> out = checkpoint(block, x, use_reentrant=False)
        >>> out.sum().backward()   # block's activations are recomputed here
    """
    if use_reentrant is None:
        _warn_reentrant("")
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs and use_reentrant:
        raise ValueError("Unexpected keyword arguments: " + ",".join(kwargs))
    if use_reentrant:
        if context_fn is not noop_context_fn or debug is not False:
            raise ValueError("Passing `context_fn` or `debug` is only supported when "
                             "use_reentrant=False.")
    elif determinism_check not in _DETERMINISM_CHECKS:
        raise ValueError(f"determinism_check should be one of {_DETERMINISM_CHECKS}, but got "
                         f"{determinism_check}")
    return _Checkpoint(function, args, kwargs, preserve, use_reentrant, context_fn,
                       determinism_check == "default").run()


@contextlib.contextmanager
def _generators_holding(generators, states):
    """Let traced generators draw from (and advance) ``states`` for the duration."""
    saved = [(g, g._words, g._stale, g._tensor._arr) for g in generators]
    try:
        for g, s in zip(generators, states):
            g._words, g._stale = None, False
            g._tensor._arr = s
        yield
    finally:
        for g, words, stale, arr in saved:
            g._words, g._stale = words, stale
            g._tensor._arr = arr


class _Checkpoint:
    """One checkpointed call."""

    def __init__(self, function, args, kwargs, preserve, reentrant, context_fn, check):
        self.function, self.args, self.kwargs = function, args, kwargs
        self.preserve, self.reentrant, self.check = preserve, reentrant, check
        self.forward_ctx, self.recompute_ctx = (noop_context_fn() if reentrant
                                                else context_fn())
        self.bound = lift.Bound(args, kwargs)
        self.state = lift.Captured(function, args, kwargs, self.bound.tensors)
        self.out_tree = self.out_statics = self.out_meta = None
        self.written, self.export = [], False

    def run(self):
        bound, state = self.bound, self.state
        grad_inputs = any(isinstance(a, Tensor) and a.requires_grad for a in self.args)
        self.captured = state.tensors
        self.traced_gens = [g for g in state.generators if g._words is None]
        arrays = bound.arrays() + [t._value() for t in self.captured]
        gen_states = [g._tensor._arr for g in self.traced_gens]
        traced = _dispatch.is_traced(arrays) or state.traced or bool(self.traced_gens)
        if self.reentrant and not grad_inputs:
            warnings.warn("None of the inputs have requires_grad=True. Gradients will be None",
                          UserWarning, stacklevel=3)
            if not traced:
                with no_grad():
                    return self.function(*self.args)
        recording = _grad_state.grad_enabled and (grad_inputs or not self.reentrant) and any(
            t.requires_grad for t in bound.tensors + self.captured)
        if not traced and not recording:
            with self.forward_ctx:
                return self.function(*self.args, **self.kwargs)
        remat = jax.checkpoint(self._pure)
        self.export = traced
        if traced:
            with self.forward_ctx:
                out = remat(*arrays, *gen_states)
            extra = out[len(self.out_meta):]
            out = out[:len(self.out_meta)]
            for g, s in zip(self.traced_gens, extra):
                g._tensor._write(s)
            for t, a in zip(self.written, extra[len(gen_states):]):
                t._write(a)
        else:
            with self.forward_ctx, no_grad():
                out = self._flatten_out(self.function(*self.args, **self.kwargs))
            if not self.preserve:
                state.take_snapshot()
        if recording and self.captured:
            # only the captured Tensors the function reads become inputs (lifted_call's rule)
            with state.replaying():
                used = _dispatch.used_inputs(self._pure, arrays + gen_states)
            n_in = len(bound.tensors)
            self.captured = [t for t, u in zip(self.captured, used[n_in:]) if u]
            arrays = arrays[:n_in] + [t._value() for t in self.captured]
        tensors = bound.tensors + self.captured
        if not (recording and any(t.requires_grad for t in tensors)):
            return self._unflatten(tuple(Tensor._wrap(o) for o in out))

        def op_fn(*xs):
            with state.replaying():
                return remat(*xs)
        edges = [t._edge() if t.requires_grad else None for t in tensors]
        outs = lift.record("CheckpointFunction", op_fn, arrays + gen_states,
                           edges + [None] * len(gen_states), args=tuple(tensors),
                           out=tuple(out) + tuple(extra if traced else ()))
        return self._unflatten(outs)

    def _flatten_out(self, result):
        leaves, tree = lift.flatten(result)
        arrays = [x._value() for x in leaves if isinstance(x, Tensor)]
        if self.out_tree is None:
            self.out_tree = tree
            self.out_statics = [None if isinstance(x, Tensor) else x for x in leaves]
            self.out_meta = [(a.shape, a.dtype) for a in arrays]
        elif self.check:
            meta = [(a.shape, a.dtype) for a in arrays]
            if tree != self.out_tree or meta != self.out_meta:
                raise CheckpointError(
                    "torch.utils.checkpoint: Recomputed values for the following tensors have "
                    "different metadata than during the forward pass.\n"
                    f"saved metadata: {self.out_meta} ({self.out_tree})\n"
                    f"recomputed metadata: {meta} ({tree})")
        return arrays

    def _pure(self, *xs):
        """``function`` as a pure function of (its Tensors' arrays, the captured Tensors'
        arrays, the traced generators' states) -> (output arrays, final generator states, and
        in a traced program what it wrote into other Tensors it reaches: a BatchNorm's running
        statistics).  Those writes are undone here; the traced forward writes them back."""
        n_in, n_cap = len(self.bound.tensors), len(self.captured)
        gens = self.traced_gens
        captured = {id(t) for t in self.captured}
        saved = [(t, t._arr) for t in self.state.reachable if id(t) not in captured]
        with lift.swapped(self.captured, xs[n_in:n_in + n_cap]), \
                _generators_holding(gens, xs[n_in + n_cap:]):
            try:
                args, kwargs = self.bound.rebuild(xs[:n_in])
                first = self.out_tree is None
                with (contextlib.nullcontext() if first else self.recompute_ctx), no_grad():
                    out = self._flatten_out(self.function(*args, **kwargs))
                if first:
                    self.written = [t for t, arr in saved if t._arr is not arr]
                exported = [t._arr for t in self.written] if self.export else []
                return tuple(out) + tuple(g._tensor._arr for g in gens) + tuple(exported)
            finally:
                for t, arr in saved:
                    if t._arr is not arr:
                        t._arr, t._gen = arr, lift.fresh_gen()

    def _unflatten(self, outs):
        it = iter(outs)
        leaves = [next(it) if s is None else s for s in self.out_statics]
        return jax.tree_util.tree_unflatten(self.out_tree, leaves)


def _segment(functions, start, end):
    def forward(x):
        for j in range(start, end + 1):
            x = functions[j](x)
        return x
    return forward


def checkpoint_sequential(functions, segments, input, use_reentrant=None, **kwargs):
    """Mirrors ``torch.utils.checkpoint.checkpoint_sequential``: run a sequence of modules (an
    ``nn.Sequential`` or a list) as ``segments`` chunks, each but the last checkpointed.

    Args:
        functions: an ``nn.Sequential`` or a list of modules/functions run in order.
        segments: the number of chunks (``len(functions) // segments`` functions each; the
            last chunk takes the rest and is not checkpointed).
        input: the input of the first function.
        use_reentrant: as for ``checkpoint`` (must be passed; True otherwise, with a warning).
        preserve_rng_state (keyword): as for ``checkpoint``.

    Example::

        >>> out = checkpoint_sequential(model, 2, x, use_reentrant=False)
    """
    from ..nn.modules.container import Sequential
    if use_reentrant is None:
        _warn_reentrant(".checkpoint_sequential")
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs:
        raise ValueError("Unexpected keyword arguments: " + ",".join(kwargs))
    if isinstance(functions, Sequential):
        functions = list(functions.children())
    size = len(functions) // segments
    end = -1
    for start in range(0, size * (segments - 1), size):
        end = start + size - 1
        input = checkpoint(_segment(functions, start, end), input, use_reentrant=use_reentrant,
                           preserve_rng_state=preserve)
    return _segment(functions, end + 1, len(functions) - 1)(input)
