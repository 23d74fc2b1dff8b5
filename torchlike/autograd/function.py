"""autograd.Function: user-defined forward/backward (mirrors torch.autograd.Function).

In eager mode ``apply`` runs ``forward`` without recording, and the outputs get a node (the ctx
itself, as in PyTorch) whose backward calls the user's ``backward`` in Python.  When the inputs
hold jax tracers, the outputs are also routed through ``jax.custom_vjp``, so a JAX transform of
the traced program (``jax.grad`` of ``to_jax(fn)``) uses the same user-written rule.
"""
import functools
import warnings

import jax
import jax.numpy as jnp
import numpy as np

from .. import _x64
from .._tensor import Tensor
from . import anomaly_mode
from .graph import INFERENCE_SAVED_ERROR, Node, RELEASED_ERROR, _seq, node_class, version_error
from .grad_mode import _state, no_grad

__all__ = ["Function", "FunctionCtx", "once_differentiable"]


class FunctionCtx:
    """What ``forward`` receives as ``ctx`` (mirrors torch.autograd.function.FunctionCtx)."""

    materialize_grads = True
    _saved = ()
    _saved_versions = ()
    _released = False
    _dirty = ()
    _non_diff = ()

    def save_for_backward(self, *tensors):
        for t in tensors:
            if t is not None and not isinstance(t, Tensor):
                raise TypeError("save_for_backward can only save variables, but argument "
                                f"{tensors.index(t)} is of type {type(t).__name__}")
        self._saved = tensors
        self._saved_versions = tuple(None if t is None else (t._version_counter(),
                                                             t._version_counter()[0])
                                     for t in tensors)

    @property
    def saved_tensors(self):
        if self._released:
            raise RuntimeError(RELEASED_ERROR)
        for t, v in zip(self._saved, self._saved_versions):
            if v is not None and v[0][0] != v[1]:
                raise version_error(t.dtype, t.shape, v[0][0], v[1])
        return self._saved

    saved_variables = saved_tensors

    def mark_dirty(self, *tensors):
        self._dirty = tensors

    def mark_non_differentiable(self, *tensors):
        self._non_diff = tensors

    def set_materialize_grads(self, value):
        self.materialize_grads = bool(value)


class BackwardCFunction(FunctionCtx, Node):
    """The grad_fn of a custom Function's outputs; it is also the ctx forward saw."""

    _forward_cls = None

    def __init__(self):
        self._seq = next(_seq)
        self._out_meta = ()
        self._tensor_pos = ()

    @property
    def num_outputs(self):
        return len(self._out_meta)

    def apply(self, grads, create_graph):
        gs = []
        for g, (shape, dtype) in zip(grads, self._out_meta):
            if g is None and self.materialize_grads:
                g = jnp.zeros(shape, dtype)
            gs.append(None if g is None else (g if isinstance(g, Tensor) else Tensor._wrap(g)))
        result = self._forward_cls.backward(self, *gs)
        if not isinstance(result, tuple):
            result = (result,)
        n_args = self._n_args
        if len(result) != n_args:
            if len(result) > n_args and all(r is None for r in result[n_args:]):
                result = result[:n_args]
            else:
                raise RuntimeError(f"function {self.name()} returned an incorrect number of "
                                   f"gradients (expected {n_args}, got {len(result)})")
        out = []
        for i in self._tensor_pos:
            g = result[i]
            if g is not None:
                if not isinstance(g, Tensor):
                    raise TypeError(f"function {self.name()} returned a gradient different than "
                                    f"None at position {i + 1}, but the corresponding forward "
                                    "input was not a Variable")
                shape = self._in_shapes[i]
                if tuple(g.shape) != shape:
                    raise RuntimeError(f"Function {self.name()} returned an invalid gradient at "
                                       f"index {i} - got {list(g.shape)} but expected shape "
                                       f"compatible with {list(shape)}")
                if g.dtype is not self._in_dtypes[i]:   # PyTorch's validate_outputs casts it
                    g = g.to(self._in_dtypes[i])
                g = g if create_graph else g._value()
            out.append(g)
        return out

    def release(self):
        self._released = True
        self._saved = self._saved_versions = ()

    def _saved_shapes(self):
        """[(name, shape)] of ``ctx.save_for_backward``'s tensors, while they are kept."""
        return [(f"saved_tensors[{i}]", tuple(t.shape)) for i, t in enumerate(self._saved)
                if isinstance(t, Tensor)]


class Function:
    """Mirrors ``torch.autograd.Function``: subclass with static ``forward(ctx, *args)`` and
    ``backward(ctx, *grad_outputs)`` (or ``forward(*args)`` + ``setup_context``), call
    ``.apply(*args)``."""

    @staticmethod
    def forward(ctx, *args, **kwargs):
        raise NotImplementedError("You must implement the forward function for custom "
                                  "autograd.Function.")

    @staticmethod
    def setup_context(ctx, inputs, output):
        raise NotImplementedError("setup_context is not implemented.")

    @staticmethod
    def backward(ctx, *grad_outputs):
        raise NotImplementedError("You must implement either the backward or vjp method for "
                                  "your custom autograd.Function to use it with backward mode "
                                  "AD.")

    vjp = backward

    def __init__(self, *args, **kwargs):
        warnings.warn(f"{type(self)} should not be instantiated. Methods on autograd functions "
                      "are all static, so you should invoke them on the class itself. "
                      "Instantiating an autograd function will raise an error in a future "
                      "version of PyTorch.", DeprecationWarning, stacklevel=2)

    def __call__(self, *args, **kwargs):
        raise RuntimeError("Legacy autograd function with non-static forward method is "
                           "deprecated. Please use new-style autograd function with static "
                           "forward method. (Example: "
                           "https://pytorch.org/docs/stable/autograd.html#torch.autograd.Function)")

    @classmethod
    def apply(cls, *args, **kwargs):
        ctx = node_class(cls.__name__ + "Backward", BackwardCFunction, _forward_cls=cls)()
        tensor_pos = tuple(i for i, a in enumerate(args) if isinstance(a, Tensor))
        ctx._tensor_pos = tensor_pos
        ctx._n_args = len(args)
        ctx._in_shapes = {i: tuple(args[i].shape) for i in tensor_pos}
        ctx._in_dtypes = {i: args[i].dtype for i in tensor_pos}
        ctx.needs_input_grad = tuple(isinstance(a, Tensor) and a.requires_grad for a in args)
        traced = any(isinstance(args[i]._value(), jax.core.Tracer) for i in tensor_pos)
        gens = _traced_generators() if traced else ()
        outputs = _run_forward(cls, ctx, args, kwargs)
        single = not isinstance(outputs, tuple)
        outs = (outputs,) if single else outputs
        if traced:
            outs = _through_custom_vjp(cls, args, kwargs, tensor_pos, outs, gens)
        record = _state.grad_enabled and any(ctx.needs_input_grad)
        results = []
        for nr, o in enumerate(outs):
            if not isinstance(o, Tensor):
                results.append(o)
                continue
            dirty = any(o is d for d in ctx._dirty)
            if not dirty and (any(o is a for a in args) or o._grad_fn is not None):
                o = Tensor._wrap(o._value())   # an input returned as-is becomes a new output
            results.append(o)
        ctx._out_meta = tuple((tuple(o.shape), o._aval().dtype) if isinstance(o, Tensor)
                              else ((), jnp.float32) for o in results)
        if record:
            if any(t is not None and t._inference for t in ctx._saved):
                raise RuntimeError(INFERENCE_SAVED_ERROR)
            for d in ctx._dirty:
                if d._grad_fn is None and d._requires_grad:
                    raise RuntimeError("a leaf Variable that requires grad has been used in an "
                                       "in-place operation.")
            if anomaly_mode._state.enabled:
                ctx._trace = anomaly_mode.forward_trace()
            ctx.next_functions = tuple(
                args[i]._edge() if args[i].requires_grad else (None, 0) for i in tensor_pos)
            for nr, o in enumerate(results):
                if isinstance(o, Tensor) and not any(o is n for n in ctx._non_diff) and (
                        o.dtype.is_floating_point or o.dtype.is_complex):
                    if any(o is d for d in ctx._dirty):
                        o._version_counter()[0] += 1
                    o._grad_fn, o._output_nr = ctx, nr
        for o in results:
            if isinstance(o, Tensor) and any(o is n for n in ctx._non_diff):
                o._requires_grad = False
        return results[0] if single else tuple(results)


def _uses_setup_context(cls):
    return cls.setup_context is not Function.setup_context


def _run_forward(cls, ctx, args, kwargs):
    with no_grad():
        if _uses_setup_context(cls):
            out = cls.forward(*args, **kwargs)
            cls.setup_context(ctx, args, out)
            return out
        return cls.forward(ctx, *args, **kwargs)


def _traced_generators():
    """(generator, its state) for each default generator whose state is traced: what a forward
    drawing random numbers reads and advances (NOTE [ draws in a traced Function ])."""
    from .._random import default_generators   # (the op layer imports autograd's graph)
    return tuple((g, g._tensor._value()) for g in default_generators()
                 if g._tensor is not None   # (a generator not seeded yet holds no state)
                 and isinstance(g._tensor._value(), jax.core.Tracer))


# NOTE [ draws in a traced Function ]
# While a step is traced, a Function's forward runs once in the step's trace (its ctx is the
# graph's node) and again inside a jax.custom_vjp, whose outputs the step uses.  A forward that
# draws random numbers advances a generator: inside the custom_vjp's own trace that write would
# leave the generator holding a value of that inner trace (jax's UnexpectedTracerError), and the
# second run would draw other numbers than the first, whose ctx saved them.  So the generators'
# states from before the first run are inputs of the custom_vjp and their new states outputs
# (no gradient): the second run draws what the first drew, the states written back are the
# step's, and every run of the rule restores what it found.
def _through_custom_vjp(cls, args, kwargs, tensor_pos, outs, gens=()):
    """Recompute the outputs as a jax.custom_vjp whose rule is the user's backward; ``gens``:
    the traced generators and their states before the forward's first run."""
    out_pos = [k for k, o in enumerate(outs) if isinstance(o, Tensor)]
    n_in, n_out = len(tensor_pos), len(out_pos)
    keep = {}

    def forward(*arrays):
        found = [g._tensor._value() for g, _ in gens]
        for (g, _), state in zip(gens, arrays[n_in:]):
            g._tensor._write(state)
        full = list(args)
        for i, a in zip(tensor_pos, arrays):
            full[i] = Tensor._wrap(a)
        ctx = FunctionCtx()
        ctx.needs_input_grad = tuple(isinstance(a, Tensor) for a in full)
        res = _run_forward(cls, ctx, full, kwargs)
        res = res if isinstance(res, tuple) else (res,)
        states = tuple(g._tensor._value() for g, _ in gens)
        for (g, _), state in zip(gens, found):
            g._tensor._write(state)
        return ctx, tuple(res[k]._value() for k in out_pos) + states

    @jax.custom_vjp
    def f(*arrays):
        return forward(*arrays)[1]

    def fwd(*arrays):
        ctx, out = forward(*arrays)
        keep["ctx"] = ctx
        return out, (tuple(t._value() for t in ctx._saved), arrays)

    @_x64.scoped   # NOTE [ custom_vjp rules and 64-bit types ] in _x64.py
    def bwd(res, gs):
        saved, arrays = res
        ctx = keep["ctx"]
        ctx._saved = tuple(Tensor._wrap(s) for s in saved)
        ctx._saved_versions = (None,) * len(saved)
        grads = cls.backward(ctx, *[Tensor._wrap(g) for g in gs[:n_out]])
        grads = grads if isinstance(grads, tuple) else (grads,)
        return tuple(jnp.zeros_like(a) if grads[i] is None else grads[i]._value()
                     for i, a in zip(tensor_pos, arrays)) + tuple(
            np.zeros(a.shape, jax.dtypes.float0) for a in arrays[n_in:])   # the states'

    f.defvjp(fwd, bwd)
    values = f(*[args[i]._value() for i in tensor_pos], *[state for _, state in gens])
    for (g, _), state in zip(gens, values[n_out:]):
        g._tensor._write(state)
    outs = list(outs)
    for k, v in zip(out_pos, values):
        outs[k] = Tensor._wrap(v)
    return tuple(outs)


class DelayedError(Node):
    """The grad_fn of a once_differentiable backward's outputs: differentiating it raises."""

    def __init__(self, inputs):
        self._seq = next(_seq)
        self.next_functions = tuple(t._edge() if t.requires_grad else (None, 0) for t in inputs)

    def apply(self, grads, create_graph):
        raise RuntimeError("trying to differentiate twice a function that was marked with "
                           "@once_differentiable")


def once_differentiable(fn):
    """Mirrors ``torch.autograd.function.once_differentiable``: backward runs without
    recording, and differentiating its result again raises."""
    @functools.wraps(fn)
    def wrapper(ctx, *args):
        with no_grad():
            outputs = fn(ctx, *args)
        if not _state.grad_enabled:
            return outputs
        inputs = [a for a in args if isinstance(a, Tensor) and a.requires_grad]
        if not inputs:
            return outputs
        node = DelayedError(inputs)
        single = not isinstance(outputs, tuple)
        outs = (outputs,) if single else outputs
        for o in outs:
            if isinstance(o, Tensor) and (o.dtype.is_floating_point or o.dtype.is_complex):
                o._grad_fn, o._output_nr = node, 0
        return outputs
    return wrapper
