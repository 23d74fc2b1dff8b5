"""The bridge between torchlike and pure JAX: ``to_jax`` (torchlike code as a pure function of
jax arrays) and ``from_jax`` (a jax function as a torchlike op).

NOTE [ the bridge and 64-bit types ]
torchlike turns jax's 64-bit types on only while its own code runs (NOTE [ 64-bit types in
torchlike's scope ] in _x64.py); the code on each side of the bridge keeps its own setting.

``to_jax``'s pure function runs the torchlike code inside it with them on, under whatever
transform of the caller's traces it.  When they are off for the caller (jax's default), it reads
its array arguments as that JAX code does: a numpy float64 / complex128 array as float32 /
complex64 (as ``jnp.asarray`` reads it), and an int32 array -- JAX's integer then -- as
PyTorch's int64 (``F.cross_entropy`` takes int64 targets only, as in PyTorch).  A jax float64 /
complex128 array (a float64 module's parameters) raises TypeError naming the line that turns
64-bit types on for the process: the caller's transforms run their own part (jax.grad's backward
pass, its transposes) with the caller's setting, so they would compute a float64 model's
gradient in 32 bits and hand it back as float64 (a small float64 MLP's: 6e-8 from the float64
gradient).  Results are returned as torchlike computed them (an int64 result stays int64).

``from_jax``'s function is the user's JAX code: it runs with the process's setting (not the
thread's: inside torchlike.compile or to_jax the thread's value is torchlike's), so it computes
what it computes in plain JAX.  With 64-bit types off it gets int64 / uint64 inputs as int32 /
uint32, as JAX reads 64-bit integer data then (an index Tensor is int64 in PyTorch; values past
32 bits do not fit, as in ``jnp.asarray``); a float64 or complex128 input turns the 64-bit types on
for the call instead, since its precision is what the caller asked for.
"""
import functools

import jax
import jax.numpy as jnp
import numpy as np

from .. import _dispatch
from .. import _x64
from .._tensor import Tensor
from ..autograd.grad_mode import no_grad
from ..nn.modules.module import Module
from ..nn.utils.stateless import _functional_call
from . import _lift as lift


_NARROW = {np.dtype("float64"): np.float32, np.dtype("complex128"): np.complex64}
_X64_LINE = 'jax.config.update("jax_enable_x64", True)'


def _to_tensors(tree, narrow):
    """Tensors for the arrays of ``tree``, read as the calling JAX code reads them: ``narrow``
    when its 64-bit types are off (NOTE [ the bridge and 64-bit types ])."""
    def conv(x):
        if not isinstance(x, (jax.Array, np.ndarray)):
            return x
        if narrow:
            if x.dtype in _NARROW:
                if not isinstance(x, np.ndarray):
                    raise TypeError(
                        f"a function made by torchlike.func.to_jax got a {x.dtype} array, but "
                        f"JAX's 64-bit types are off, so JAX's transforms of it would compute "
                        f"in 32 bits; turn them on for the process first: {_X64_LINE}")
                x = x.astype(_NARROW[x.dtype])
            elif x.dtype == np.int32:
                x = x.astype(np.int64)
        return Tensor._wrap(jnp.asarray(x))
    return jax.tree_util.tree_map(conv, tree)


def _to_arrays(tree):
    return jax.tree_util.tree_map(lambda x: x._value() if isinstance(x, Tensor) else x, tree,
                                  is_leaf=lift.is_tensor)


def to_jax(fn_or_module, *, with_buffers=False):
    """torchlike code as a pure JAX function (torch has no equivalent): what ``jax.grad``,
    ``jax.vmap`` and ``jax.jit`` accept.

    Arguments and results of the pure function are pytrees whose jax arrays (numpy arrays are
    accepted too) stand for Tensors; other leaves (Python numbers, strings, None) pass through.
    The code runs under ``no_grad`` on Tensors holding the (traced) arrays.

    Args:
        fn_or_module: a function of Tensors, or an ``nn.Module``.
        with_buffers: for a Module, thread its buffers through the function (see Returns).

    Returns:
        - for a function ``fn``: ``pure(*args, **kwargs)``, ``fn`` on arrays.
        - for a Module: ``(pure, params)``.  ``params`` is a dict ``name -> jax array`` of the
          module's parameters (``named_parameters()``, the current values) and
          ``pure(params, *args, **kwargs)`` calls the module with those values in place of
          its parameters (``functional_call``): ``params`` may hold any subset of the
          module's parameter and buffer names; the others are read from the module when
          ``pure`` runs (under ``jax.jit``: when it is traced, so they are baked in).
        - for a Module with ``with_buffers=True``: ``(pure, params, buffers)``, ``buffers``
          the dict of ``named_buffers()``, and ``pure(params, buffers, *args, **kwargs)``
          returns ``(output, new_buffers)``: the buffers after the call (a BatchNorm's
          running statistics in training mode).

    Random draws (dropout) inside come from torchlike's generators; under ``jax.jit`` a draw
    made while tracing is baked into the program, so call the model in eval mode or draw
    outside.

    The torchlike code runs with JAX's 64-bit types on; the caller's JAX code keeps its own
    setting.  With them off (JAX's default), int32 arguments become int64 Tensors (PyTorch's
    integer), numpy float64 arrays float32 ones (as ``jnp.asarray`` reads them), and jax
    float64 arrays (a float64 module's parameters) raise TypeError: differentiate float64
    code after ``jax.config.update("jax_enable_x64", True)`` (NOTE [ the bridge and 64-bit
    types ]).

    Example::

        >>> fn, params = torchlike.func.to_jax(model)
        >>> grads = jax.grad(lambda p: jnp.mean((fn(p, x) - y) ** 2))(params)
        >>> # grads[name] equals model's named_parameters()[name].grad after
        >>> # F.mse_loss(model(X), Y).backward() (x, y: the arrays of X, Y)
    """
    if isinstance(fn_or_module, Module):
        module = fn_or_module
        params = {k: p._value() for k, p in module.named_parameters()}
        if with_buffers:
            buffers = {k: b._value() for k, b in module.named_buffers()}

            def pure_with_buffers(params, buffers, *args, **kwargs):
                narrow = not _x64.enabled()   # the caller's setting, before torchlike's
                with _x64.on(), no_grad():
                    tensors = _to_tensors({**params, **buffers}, narrow)
                    out = _functional_call(module, tensors, _to_tensors(args, narrow),
                                           _to_tensors(kwargs, narrow))
                    return _to_arrays(out), {k: tensors[k]._value() for k in buffers}
            return pure_with_buffers, params, buffers

        def pure(params, *args, **kwargs):
            narrow = not _x64.enabled()
            with _x64.on(), no_grad():
                out = _functional_call(module, _to_tensors(dict(params), narrow),
                                       _to_tensors(args, narrow), _to_tensors(kwargs, narrow))
                return _to_arrays(out)
        return pure, params
    if not callable(fn_or_module):
        raise TypeError(f"to_jax expects a function or an nn.Module, got "
                        f"{type(fn_or_module).__name__}")
    fn = fn_or_module

    @functools.wraps(fn)
    def pure_fn(*args, **kwargs):
        narrow = not _x64.enabled()
        with _x64.on(), no_grad():
            out = fn(*_to_tensors(args, narrow), **_to_tensors(kwargs, narrow))
            return _to_arrays(out)
    return pure_fn


_WIDE = frozenset(map(np.dtype, ("float64", "complex128")))
_NARROW_INT = {np.dtype("int64"): np.int32, np.dtype("uint64"): np.uint32}


def _jax_op(jax_fn, tree, leaves, pos, x64):
    """The Op running ``jax_fn`` on the arrays of the Tensor leaves at ``pos`` (the other leaves
    fixed), with 64-bit types as ``x64`` says unless an input is float64 or complex128 (NOTE
    [ the bridge and 64-bit types ]), and the dict where it notes its output structure."""
    info = {}
    template = [None if i in pos else x for i, x in enumerate(leaves)]

    def fn(*arrays):
        wide = x64 or any(a.dtype in _WIDE for a in arrays)
        if not wide:   # converted while torchlike's 64-bit types are still on
            arrays = [a.astype(_NARROW_INT[a.dtype]) if a.dtype in _NARROW_INT else a
                      for a in arrays]
        full = list(template)
        for i, a in zip(pos, arrays):
            full[i] = a
        args, kwargs = jax.tree_util.tree_unflatten(tree, full)
        prev = _x64.swap(wide)
        try:
            out_leaves, info["tree"] = jax.tree_util.tree_flatten(jax_fn(*args, **kwargs))
            return tuple(jnp.asarray(o) for o in out_leaves)
        finally:
            _x64.restore(prev)
    name = getattr(jax_fn, "__name__", type(jax_fn).__name__)
    return _dispatch.Op(f"from_jax({name})", fn, "FromJaxBackward", ahead=False), info


def from_jax(jax_fn):
    """A jax function as a torchlike function (torch has no equivalent): its forward is
    ``jax_fn`` on the Tensors' arrays (jitted), its backward ``jax.vjp`` of ``jax_fn``.

    It is an op like torchlike's own (one node, ``FromJaxBackward``, in the graph): it
    records when an input requires grad, differentiates again with ``create_graph=True``, and
    traces inside ``torchlike.compile`` and ``to_jax`` (where jax transforms see ``jax_fn``
    itself).

    Args:
        jax_fn: a function of jax arrays (pytrees of them) returning arrays (a pytree), which
            ``jax.jit`` can trace.  Tensor leaves of the call's arguments become its arrays;
            other leaves (Python numbers, strings) are passed as they are and are part of the
            compile cache's key.  It runs with JAX's 64-bit types as the process set them
            (off by default, so ``jnp.arange(3.0)`` inside is float32 and an int64 index
            Tensor arrives as int32, as in plain JAX), and with them on when an input is
            float64 or complex128 (NOTE [ the bridge and 64-bit types ]).

    Returns:
        A function taking Tensors where ``jax_fn`` takes arrays and returning Tensors where
        it returns arrays.

    Example::

        >>> f = torchlike.func.from_jax(lambda x, w: jnp.tanh(x @ w))
        >>> f(x, w).sum().backward()   # w.grad from jax.vjp
    """
    return bridge_op(jax_fn)


def bridge_op(jax_fn, x64=None):
    """``from_jax(jax_fn)``; ``x64=True`` runs ``jax_fn`` with 64-bit types on, for jax
    functions of torchlike's own (torch.cond's), None as ``from_jax`` does (NOTE [ the bridge
    and 64-bit types ])."""
    ops = {}

    @functools.wraps(jax_fn)
    def wrapper(*args, **kwargs):
        leaves, tree = lift.flatten((args, kwargs))
        pos = [i for i, x in enumerate(leaves) if isinstance(x, Tensor)]
        wide = _x64.process_setting() if x64 is None else x64
        key = (tree, wide, tuple((i, type(x), x) for i, x in enumerate(leaves)
                                if not isinstance(x, Tensor)))
        try:
            entry = ops.get(key)
        except TypeError:   # an unhashable argument: an op for this call only
            key, entry = None, None
        if entry is None:
            entry = _jax_op(jax_fn, tree, leaves, pos, wide)
            if key is not None:
                ops[key] = entry
        op, info = entry
        outs = _dispatch.call(op, *[leaves[i] for i in pos])
        return jax.tree_util.tree_unflatten(info["tree"], list(outs))
    return wrapper
